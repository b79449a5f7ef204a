// What readPickle gives (the one interpreter, pickle_interpreter.cpp, run strictly) and how a
// person reads it.
#include "pickle_value.h"

#include "pickle_interpreter.h"

namespace scriptscope {
namespace {

constexpr int kMaxDepth = 64;

std::string plural(size_t count, const std::string& word) {
    return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

std::string kindWord(const PickleValue& v) {
    switch (v.kind) {
    case PickleValue::Kind::None:
        return "None";
    case PickleValue::Kind::Bool:
        return "bool";
    case PickleValue::Kind::Int:
        return "int";
    case PickleValue::Kind::Float:
        return "float";
    case PickleValue::Kind::String:
        return "str";
    case PickleValue::Kind::Bytes:
        return "bytes";
    case PickleValue::Kind::List:
        return "list";
    case PickleValue::Kind::Tuple:
        return "tuple";
    case PickleValue::Kind::Dict:
        return "dict";
    case PickleValue::Kind::Tensor:
        return "tensor";
    case PickleValue::Kind::Object:
        return v.text + " object";
    }
    return "value";
}

std::string describe(const PickleValue& v, int depth) {
    if (depth > kMaxDepth) {
        return "...";
    }
    switch (v.kind) {
    case PickleValue::Kind::Tensor: {
        std::string shape;
        for (size_t i = 0; i < v.tensor.shape.size(); ++i) {
            shape += (i ? ", " : "") + std::to_string(v.tensor.shape[i]);
        }
        return "tensor " + (v.storage.dtype.empty() ? v.storage.type : v.storage.dtype) + "[" +
               shape + "]";
    }
    case PickleValue::Kind::Int:
        return "int " + std::to_string(v.integer);
    case PickleValue::Kind::Bool:
        return v.boolean ? "True" : "False";
    case PickleValue::Kind::String:
        return "str '" + (v.text.size() > 40 ? v.text.substr(0, 37) + "..." : v.text) + "'";
    case PickleValue::Kind::List:
    case PickleValue::Kind::Tuple: {
        const std::string head = kindWord(v) + " of ";
        if (v.items.empty()) {
            return "empty " + kindWord(v);
        }
        // "list of 2 tensors" when the elements are alike, else each one.
        bool alike = true;
        for (const auto& item : v.items) {
            alike = alike && item && item->kind == v.items.front()->kind &&
                    item->kind != PickleValue::Kind::Object;
        }
        if (alike && v.items.front()->kind == PickleValue::Kind::Tensor) {
            return head + plural(v.items.size(), "tensor");
        }
        if (alike && v.items.size() > 3) {
            return head + std::to_string(v.items.size()) + " " + kindWord(*v.items.front()) +
                   " values";
        }
        std::string text = head + "(";
        for (size_t i = 0; i < v.items.size() && i < 4; ++i) {
            text += (i ? ", " : "") + describe(*v.items[i], depth + 1);
        }
        return text + (v.items.size() > 4 ? ", ...)" : ")");
    }
    case PickleValue::Kind::Dict: {
        const size_t count = v.items.size() / 2;
        if (count == 0) {
            return "empty dict";
        }
        std::string text = "dict of " + std::to_string(count) + " (";
        for (size_t i = 0; i < v.items.size() && i < 8; i += 2) {
            const auto& key = *v.items[i];
            text += (i ? ", " : "") +
                    (key.kind == PickleValue::Kind::String ? "'" + key.text + "'"
                                                           : describe(key, depth + 1)) +
                    ": " + describe(*v.items[i + 1], depth + 1);
        }
        return text + (count > 4 ? ", ...)" : ")");
    }
    default:
        return kindWord(v);
    }
}

} // namespace

PickleReadResult readPickle(std::string_view data) {
    PickleInterpretation run = interpretPickle(data, PicklePolicy::Strict);
    PickleReadResult result;
    result.value = std::move(run.value);
    result.error = std::move(run.error);
    return result;
}

std::string describePickleValue(const PickleValue& value) {
    return describe(value, 0);
}

} // namespace scriptscope
