#include "pickle_scan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

namespace scriptscope {
namespace {

uint64_t littleEndian(std::string_view data, size_t pos, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) {
        value |= static_cast<uint64_t>(static_cast<unsigned char>(data[pos + i])) << (8 * i);
    }
    return value;
}

// What the walk keeps of a value. Shared, so that DUP, GET and nested tuples cost no copies (a
// hostile pickle cannot blow memory up by duplicating).
struct Value {
    enum class Kind { Opaque, Mark, None, Bool, Int, String, Global, Tuple, Storage };
    Kind kind = Kind::Opaque;
    int64_t integer = 0;
    std::string text; // String, Global ("module.name"), Storage (the key)
    std::vector<std::shared_ptr<const Value>> items;
};
using ValuePtr = std::shared_ptr<const Value>;

ValuePtr make(Value::Kind kind) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    return v;
}

ValuePtr makeInt(int64_t i) {
    auto v = std::make_shared<Value>();
    v->kind = Value::Kind::Int;
    v->integer = i;
    return v;
}

ValuePtr makeText(Value::Kind kind, std::string text) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    v->text = std::move(text);
    return v;
}

bool intTuple(const ValuePtr& v, std::vector<int64_t>& out) {
    if (!v || v->kind != Value::Kind::Tuple) {
        return false;
    }
    out.clear();
    for (const auto& item : v->items) {
        if (item->kind != Value::Kind::Int) {
            return false;
        }
        out.push_back(item->integer);
    }
    return true;
}

constexpr size_t kMaxStack = 1u << 20;
constexpr size_t kMaxMemo = 1u << 20;
constexpr size_t kMaxTuple = 1u << 16;

} // namespace

bool storageDtype(const std::string& type, std::string& dtype, int& elementSize) {
    static const std::map<std::string, std::pair<const char*, int>> types{
        {"torch.FloatStorage", {"float32", 4}},
        {"torch.DoubleStorage", {"float64", 8}},
        {"torch.HalfStorage", {"float16", 2}},
        {"torch.BFloat16Storage", {"bfloat16", 2}},
        {"torch.LongStorage", {"int64", 8}},
        {"torch.IntStorage", {"int32", 4}},
        {"torch.ShortStorage", {"int16", 2}},
        {"torch.CharStorage", {"int8", 1}},
        {"torch.ByteStorage", {"uint8", 1}},
        {"torch.BoolStorage", {"bool", 1}},
        {"torch.ComplexFloatStorage", {"complex64", 8}},
        {"torch.ComplexDoubleStorage", {"complex128", 16}},
        {"torch.QInt8Storage", {"qint8", 1}},
        {"torch.QUInt8Storage", {"quint8", 1}},
        {"torch.QInt32Storage", {"qint32", 4}},
    };
    const auto found = types.find(type);
    if (found == types.end()) {
        return false;
    }
    dtype = found->second.first;
    elementSize = found->second.second;
    return true;
}

PickleScan scanPickle(std::string_view data) {
    PickleScan scan;
    std::vector<ValuePtr> stack;
    std::unordered_map<uint64_t, ValuePtr> memo;
    auto addGlobal = [&](const std::string& name) {
        if (std::find(scan.globals.begin(), scan.globals.end(), name) == scan.globals.end()) {
            scan.globals.push_back(name);
        }
    };
    size_t pos = 0;
    auto fail = [&](const char* why) {
        scan.error = std::string(why) + " at byte " + std::to_string(pos);
        return scan;
    };
    auto line = [&](std::string& out) {
        const size_t end = data.find('\n', pos);
        if (end == std::string_view::npos) {
            return false;
        }
        out.assign(data.substr(pos, end - pos));
        pos = end + 1;
        return true;
    };
    auto counted = [&](size_t lengthBytes, std::string* out) {
        if (data.size() - pos < lengthBytes) {
            return false;
        }
        const uint64_t length = littleEndian(data, pos, lengthBytes);
        pos += lengthBytes;
        if (data.size() - pos < length) {
            return false;
        }
        if (out) {
            out->assign(data.substr(pos, static_cast<size_t>(length)));
        }
        pos += static_cast<size_t>(length);
        return true;
    };
    auto fixed = [&](size_t bytes, uint64_t* value) {
        if (data.size() - pos < bytes) {
            return false;
        }
        if (value) {
            *value = littleEndian(data, pos, bytes);
        }
        pos += bytes;
        return true;
    };
    auto pop = [&]() -> ValuePtr {
        if (stack.empty()) {
            return nullptr;
        }
        ValuePtr v = stack.back();
        stack.pop_back();
        return v;
    };
    // Everything above the topmost MARK, and the MARK itself, off the stack.
    auto popToMark = [&](std::vector<ValuePtr>* items) {
        auto mark = std::find_if(stack.rbegin(), stack.rend(),
                                 [](const ValuePtr& v) { return v->kind == Value::Kind::Mark; });
        if (mark == stack.rend()) {
            return false;
        }
        const auto first = mark.base(); // just above the mark
        if (items) {
            items->assign(first, stack.end());
        }
        stack.erase(first - 1, stack.end());
        return true;
    };
    auto tuple = [&](std::vector<ValuePtr> items) {
        auto v = std::make_shared<Value>();
        v->kind = Value::Kind::Tuple;
        if (items.size() <= kMaxTuple) {
            v->items = std::move(items);
        } else {
            v->kind = Value::Kind::Opaque;
        }
        return ValuePtr(v);
    };
    auto persistentLoad = [&](const ValuePtr& pid) -> ValuePtr {
        // ('storage', <storage class>, key, location, numel)
        if (pid && pid->kind == Value::Kind::Tuple && pid->items.size() >= 5 &&
            pid->items[0]->kind == Value::Kind::String && pid->items[0]->text == "storage" &&
            pid->items[2]->kind == Value::Kind::String) {
            StorageRef ref;
            ref.key = pid->items[2]->text;
            if (pid->items[1]->kind == Value::Kind::Global) {
                ref.type = pid->items[1]->text;
                storageDtype(ref.type, ref.dtype, ref.elementSize);
            }
            if (pid->items[3]->kind == Value::Kind::String) {
                ref.location = pid->items[3]->text;
            }
            if (pid->items[4]->kind == Value::Kind::Int) {
                ref.numel = pid->items[4]->integer;
            }
            const bool known = std::any_of(scan.storages.begin(), scan.storages.end(),
                                           [&](const StorageRef& s) { return s.key == ref.key; });
            if (!known) {
                scan.storages.push_back(ref);
            }
            return makeText(Value::Kind::Storage, ref.key);
        }
        return make(Value::Kind::Opaque);
    };

    while (pos < data.size()) {
        if (stack.size() > kMaxStack || memo.size() > kMaxMemo) {
            return fail("pickle too large to walk");
        }
        const auto op = static_cast<unsigned char>(data[pos++]);
        std::string text;
        uint64_t number = 0;
        bool ok = true;
        switch (op) {
        case '.': // STOP
            scan.complete = true;
            return scan;
        case '(': // MARK
            stack.push_back(make(Value::Kind::Mark));
            break;
        case 'N':
            stack.push_back(make(Value::Kind::None));
            break;
        case 0x88:
        case 0x89: {
            auto v = std::make_shared<Value>();
            v->kind = Value::Kind::Bool;
            v->integer = op == 0x88;
            stack.push_back(v);
            break;
        }
        case 'J': // BININT
            ok = fixed(4, &number);
            stack.push_back(makeInt(static_cast<int32_t>(static_cast<uint32_t>(number))));
            break;
        case 'K': // BININT1
            ok = fixed(1, &number);
            stack.push_back(makeInt(static_cast<int64_t>(number)));
            break;
        case 'M': // BININT2
            ok = fixed(2, &number);
            stack.push_back(makeInt(static_cast<int64_t>(number)));
            break;
        case 0x8a: { // LONG1: little-endian two's complement of n bytes
            ok = counted(1, &text);
            int64_t value = 0;
            if (ok && !text.empty() && text.size() <= 8) {
                uint64_t bits = littleEndian(text, 0, text.size());
                if (text.size() < 8 && (static_cast<unsigned char>(text.back()) & 0x80)) {
                    bits |= ~uint64_t{0} << (8 * text.size());
                }
                value = static_cast<int64_t>(bits);
                stack.push_back(makeInt(value));
            } else {
                stack.push_back(make(Value::Kind::Opaque));
            }
            break;
        }
        case 'I': // INT (text; "01"/"00" are True/False)
        case 'L': // LONG (text)
            ok = line(text);
            if (ok) {
                char* end = nullptr;
                const long long value = std::strtoll(text.c_str(), &end, 10);
                stack.push_back(end && end != text.c_str() ? makeInt(value)
                                                           : make(Value::Kind::Opaque));
            }
            break;
        case 'F': // FLOAT (text)
            ok = line(text);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'G': // BINFLOAT
            ok = fixed(8, nullptr);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'S': // STRING (text, quoted)
        case 'V': // UNICODE (text)
            ok = line(text);
            if (ok && op == 'S' && text.size() >= 2 &&
                (text.front() == '\'' || text.front() == '"')) {
                text = text.substr(1, text.size() - 2);
            }
            stack.push_back(makeText(Value::Kind::String, text));
            break;
        case 'X': // BINUNICODE
        case 'T': // BINSTRING
            ok = counted(4, &text);
            stack.push_back(makeText(Value::Kind::String, text));
            break;
        case 0x8c: // SHORT_BINUNICODE
        case 'U':  // SHORT_BINSTRING
            ok = counted(1, &text);
            stack.push_back(makeText(Value::Kind::String, text));
            break;
        case 0x8d: // BINUNICODE8
            ok = counted(8, &text);
            stack.push_back(makeText(Value::Kind::String, text));
            break;
        case 'C': // SHORT_BINBYTES
            ok = counted(1, nullptr);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'B': // BINBYTES
            ok = counted(4, nullptr);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 0x8e: // BINBYTES8
        case 0x96: // BYTEARRAY8
            ok = counted(8, nullptr);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'c': { // GLOBAL "module\nname\n"
            std::string module;
            ok = line(module) && line(text);
            if (ok) {
                addGlobal(module + "." + text);
                stack.push_back(makeText(Value::Kind::Global, module + "." + text));
            }
            break;
        }
        case 0x93: { // STACK_GLOBAL
            const ValuePtr name = pop();
            const ValuePtr module = pop();
            if (name && module && name->kind == Value::Kind::String &&
                module->kind == Value::Kind::String) {
                addGlobal(module->text + "." + name->text);
                stack.push_back(makeText(Value::Kind::Global, module->text + "." + name->text));
            } else {
                stack.push_back(make(Value::Kind::Opaque));
            }
            break;
        }
        case 'i': { // INST "module\nname\n", arguments from the mark
            std::string module;
            ok = line(module) && line(text) && popToMark(nullptr);
            if (ok) {
                addGlobal(module + "." + text);
                stack.push_back(make(Value::Kind::Opaque));
            }
            break;
        }
        case ')': // EMPTY_TUPLE
            stack.push_back(tuple({}));
            break;
        case 0x85:   // TUPLE1
        case 0x86:   // TUPLE2
        case 0x87: { // TUPLE3
            const size_t n = op - 0x84u;
            if (stack.size() < n) {
                return fail("pickle stack underflow");
            }
            std::vector<ValuePtr> items(stack.end() - static_cast<std::ptrdiff_t>(n), stack.end());
            stack.resize(stack.size() - n);
            stack.push_back(tuple(std::move(items)));
            break;
        }
        case 't': { // TUPLE
            std::vector<ValuePtr> items;
            ok = popToMark(&items);
            if (ok) {
                stack.push_back(tuple(std::move(items)));
            }
            break;
        }
        case ']':  // EMPTY_LIST
        case '}':  // EMPTY_DICT
        case 0x8f: // EMPTY_SET
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'l':  // LIST
        case 'd':  // DICT
        case 0x91: // FROZENSET
        case 'o':  // OBJ
            ok = popToMark(nullptr);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'a': // APPEND
        case 'b': // BUILD
        case '0': // POP
            ok = pop() != nullptr;
            break;
        case 's': // SETITEM
            ok = pop() != nullptr && pop() != nullptr;
            break;
        case 'e':  // APPENDS
        case 'u':  // SETITEMS
        case 0x90: // ADDITEMS
        case '1':  // POP_MARK
            ok = popToMark(nullptr);
            break;
        case '2': // DUP
            ok = !stack.empty();
            if (ok) {
                stack.push_back(stack.back());
            }
            break;
        case 'R': { // REDUCE: callable(*args), never called; a tensor rebuild is read
            const ValuePtr args = pop();
            const ValuePtr callable = pop();
            ok = args && callable;
            if (ok && callable->kind == Value::Kind::Global &&
                (callable->text == "torch._utils._rebuild_tensor_v2" ||
                 callable->text == "torch._utils._rebuild_tensor") &&
                args->kind == Value::Kind::Tuple && args->items.size() >= 4 &&
                args->items[0]->kind == Value::Kind::Storage &&
                args->items[1]->kind == Value::Kind::Int) {
                TensorRef tensor;
                tensor.storageKey = args->items[0]->text;
                tensor.offset = args->items[1]->integer;
                if (intTuple(args->items[2], tensor.shape) &&
                    intTuple(args->items[3], tensor.stride)) {
                    scan.tensors.push_back(std::move(tensor));
                }
            }
            stack.push_back(make(Value::Kind::Opaque));
            break;
        }
        case 0x81: // NEWOBJ
            ok = pop() != nullptr && pop() != nullptr;
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 0x92: // NEWOBJ_EX
            ok = pop() != nullptr && pop() != nullptr && pop() != nullptr;
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'Q': // BINPERSID
            ok = !stack.empty();
            if (ok) {
                stack.push_back(persistentLoad(pop()));
            }
            break;
        case 'P': // PERSID (text)
            ok = line(text);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 'p': // PUT (text index)
            ok = line(text) && !stack.empty();
            if (ok) {
                memo[std::strtoull(text.c_str(), nullptr, 10)] = stack.back();
            }
            break;
        case 'q': // BINPUT
            ok = fixed(1, &number) && !stack.empty();
            if (ok) {
                memo[number] = stack.back();
            }
            break;
        case 'r': // LONG_BINPUT
            ok = fixed(4, &number) && !stack.empty();
            if (ok) {
                memo[number] = stack.back();
            }
            break;
        case 0x94: // MEMOIZE
            ok = !stack.empty();
            if (ok) {
                memo[memo.size()] = stack.back();
            }
            break;
        case 'g':   // GET (text index)
        case 'h':   // BINGET
        case 'j': { // LONG_BINGET
            if (op == 'g') {
                ok = line(text);
                number = std::strtoull(text.c_str(), nullptr, 10);
            } else {
                ok = fixed(op == 'h' ? 1 : 4, &number);
            }
            if (ok) {
                const auto found = memo.find(number);
                stack.push_back(found != memo.end() ? found->second : make(Value::Kind::Opaque));
            }
            break;
        }
        case 0x80: // PROTO
        case 0x82: // EXT1
            ok = fixed(1, nullptr);
            if (op == 0x82) {
                stack.push_back(make(Value::Kind::Opaque));
            }
            break;
        case 0x83: // EXT2
            ok = fixed(2, nullptr);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 0x84: // EXT4
            ok = fixed(4, nullptr);
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 0x95: // FRAME
            ok = fixed(8, nullptr);
            break;
        case 0x97: // NEXT_BUFFER
            stack.push_back(make(Value::Kind::Opaque));
            break;
        case 0x98: // READONLY_BUFFER
            break;
        default:
            --pos;
            return fail("unknown pickle opcode");
        }
        if (!ok) {
            return fail("truncated or malformed pickle");
        }
    }
    return fail("pickle ends without STOP");
}

} // namespace scriptscope
