// How the values a serialized graph gives fit the operators' schemas: the serializer's codes for
// dtypes, layouts and memory formats as c10's, the kinds of values by name, which kinds a schema
// type takes, and numbers passed where tensors are taken. Shared by the program's builder.
#include "engine_internal.h"
#include "exported_steps.h"

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace scriptscope::detail {

std::optional<c10::ScalarType> scalarTypeOf(int64_t code) {
    static const std::map<int64_t, const char*> names = {{1, "Byte"},
                                                         {2, "Char"},
                                                         {3, "Short"},
                                                         {4, "Int"},
                                                         {5, "Long"},
                                                         {6, "Half"},
                                                         {7, "Float"},
                                                         {8, "Double"},
                                                         {9, "ComplexHalf"},
                                                         {10, "ComplexFloat"},
                                                         {11, "ComplexDouble"},
                                                         {12, "Bool"},
                                                         {13, "BFloat16"},
                                                         {28, "UInt16"},
                                                         {29, "Float8_e4m3fn"},
                                                         {30, "Float8_e5m2"},
                                                         {31, "Float8_e4m3fnuz"},
                                                         {32, "Float8_e5m2fnuz"},
                                                         {33, "Float8_e8m0fnu"},
                                                         {34, "UInt32"},
                                                         {35, "UInt64"}};
    const auto name = names.find(code);
    if (name == names.end()) {
        return std::nullopt;
    }
    for (int i = 0; i < static_cast<int>(c10::ScalarType::NumOptions); ++i) {
        const auto type = static_cast<c10::ScalarType>(i);
        if (std::string(c10::toString(type)) == name->second) {
            return type;
        }
    }
    return std::nullopt;
}

int64_t layoutOf(int64_t code) {
    switch (code) {
    case 1:
        return static_cast<int64_t>(c10::kSparse);
    case 2:
        return static_cast<int64_t>(c10::kSparseCsr);
    case 6:
        return static_cast<int64_t>(c10::kMkldnn);
    default:
        return static_cast<int64_t>(c10::kStrided);
    }
}

int64_t memoryFormatOf(int64_t code) {
    switch (code) {
    case 2:
        return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast);
    case 3:
        return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast3d);
    case 4:
        return static_cast<int64_t>(c10::MemoryFormat::Preserve);
    default:
        return static_cast<int64_t>(c10::MemoryFormat::Contiguous);
    }
}

const char* kindName(Kind kind) {
    switch (kind) {
    case Kind::None:
        return "None";
    case Kind::Tensor:
        return "a tensor";
    case Kind::Tensors:
        return "a list of tensors";
    case Kind::OptionalTensors:
        return "a list of optional tensors";
    case Kind::Int:
    case Kind::SymInt:
        return "an int";
    case Kind::Ints:
    case Kind::SymInts:
        return "a list of ints";
    case Kind::Float:
    case Kind::SymFloat:
        return "a float";
    case Kind::Floats:
    case Kind::SymFloats:
        return "a list of floats";
    case Kind::Bool:
    case Kind::SymBool:
        return "a bool";
    case Kind::Bools:
    case Kind::SymBools:
        return "a list of bools";
    case Kind::String:
        return "a string";
    case Kind::Strings:
        return "a list of strings";
    case Kind::ScalarType:
        return "a dtype";
    case Kind::MemoryFormat:
        return "a memory format";
    case Kind::Layout:
        return "a layout";
    case Kind::Device:
        return "a device";
    case Kind::Graph:
        return "a graph";
    case Kind::Operator:
        return "an operator";
    case Kind::Other:
        return "a value this interpreter does not run";
    }
    return "a value";
}

// Whether a value of `kind` can be given for a schema argument of type `type` (its str(), which
// reads the same in LibTorch 1.13 and 2.x: "Tensor", "Tensor?[]", "SymInt[]", "Scalar", ...).
bool fits(std::string type, Kind kind) {
    if (kind == Kind::None) {
        return type.size() > 1 && type.back() == '?';
    }
    if (!type.empty() && type.back() == '?') {
        type.pop_back();
    }
    const bool list = type.size() > 2 && type.compare(type.size() - 2, 2, "[]") == 0;
    const std::string element = list ? type.substr(0, type.size() - 2) : type;
    if (list) {
        if (element == "Tensor" || element == "Tensor?") {
            return kind == Kind::Tensors || (element == "Tensor?" && kind == Kind::OptionalTensors);
        }
        if (element == "int" || element == "SymInt") {
            return kind == Kind::Ints || kind == Kind::SymInts;
        }
        if (element == "float") {
            return kind == Kind::Floats || kind == Kind::SymFloats;
        }
        if (element == "bool") {
            return kind == Kind::Bools || kind == Kind::SymBools;
        }
        if (element == "str") {
            return kind == Kind::Strings;
        }
        if (element == "Scalar") {
            return kind == Kind::Ints || kind == Kind::Floats;
        }
        return kind != Kind::Other;
    }
    if (type == "Tensor") {
        // Python wraps a number given for a tensor (x.add_(1)) into a 0-dim tensor.
        return kind == Kind::Tensor || kind == Kind::Int || kind == Kind::Float ||
               kind == Kind::Bool;
    }
    if (type == "int" || type == "SymInt") {
        return kind == Kind::Int || kind == Kind::SymInt || kind == Kind::ScalarType ||
               kind == Kind::Layout || kind == Kind::MemoryFormat || kind == Kind::Bool;
    }
    if (type == "ScalarType") {
        return kind == Kind::ScalarType || kind == Kind::Int;
    }
    if (type == "Layout") {
        return kind == Kind::Layout || kind == Kind::Int;
    }
    if (type == "MemoryFormat") {
        return kind == Kind::MemoryFormat || kind == Kind::Int;
    }
    if (type == "float" || type == "SymFloat") {
        return kind == Kind::Float || kind == Kind::SymFloat || kind == Kind::Int ||
               kind == Kind::SymInt;
    }
    if (type == "Scalar" || type == "number") {
        return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool ||
               kind == Kind::SymInt || kind == Kind::SymFloat;
    }
    if (type == "bool" || type == "SymBool") {
        return kind == Kind::Bool || kind == Kind::SymBool;
    }
    if (type == "str") {
        return kind == Kind::String;
    }
    if (type == "Device") {
        return kind == Kind::Device;
    }
    return kind != Kind::Other && kind != Kind::Graph && kind != Kind::Operator;
}

// A number given where a tensor is taken, as Python passes it: a 0-dim tensor marked as a wrapped
// number, so that it does not decide the result's dtype (int + float32 tensor stays float32).
at::Tensor wrappedNumber(at::Tensor tensor) {
    tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
    return tensor;
}

// Whether `version` ("2.14.1+cu130") is a later release than this LibTorch's.
bool newerThanThisLibTorch(const std::string& version) {
    const auto release = [](const std::string& v) {
        int major = 0, minor = 0;
        return std::sscanf(v.c_str(), "%d.%d", &major, &minor) == 2 ? std::pair(major, minor)
                                                                    : std::pair(0, 0);
    };
    return release(libtorchVersion()) < release(version);
}

} // namespace scriptscope::detail
