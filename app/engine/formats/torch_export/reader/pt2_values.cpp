#include "pt2_values.h"

#include "format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace scriptscope::pt2 {
// A member of an object, or null.
const json& member(const json& object, const char* key) {
    static const json none;
    if (!object.is_object()) {
        return none;
    }
    const auto found = object.find(key);
    return found == object.end() ? none : *found;
}

std::string stringOf(const json& value) {
    return value.is_string() ? value.get<std::string>() : std::string();
}

// The one member of a serialized union ({"as_tensor": {...}}): its name and value.
std::pair<std::string, const json*> unionOf(const json& value) {
    if (value.is_object() && value.size() == 1) {
        return {value.begin().key(), &value.begin().value()};
    }
    return {std::string(), nullptr};
}

std::string pythonString(const std::string& text) {
    const bool single = text.find('\'') == std::string::npos || text.find('"') != std::string::npos;
    const char quote = single ? '\'' : '"';
    std::string out(1, quote);
    for (const char c : text) {
        if (c == '\\' || c == quote) {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else {
            out += c;
        }
    }
    return out + quote;
}

std::string numberText(const json& value) {
    if (value.is_number_integer()) {
        return std::to_string(value.get<int64_t>());
    }
    if (value.is_number_float()) {
        return formatPythonFloat(value.get<double>());
    }
    if (value.is_string()) { // NaN and infinities are written as strings
        return stringOf(value) == "NaN"         ? "nan"
               : stringOf(value) == "Infinity"  ? "inf"
               : stringOf(value) == "-Infinity" ? "-inf"
                                                : stringOf(value);
    }
    return "?";
}

template <typename Item>
static std::string listText(const json& list, Item item) {
    std::string out = "[";
    if (list.is_array()) {
        for (size_t i = 0; i < list.size(); ++i) {
            out += (i ? ", " : "") + item(list[i]);
        }
    }
    return out + "]";
}

// torch.float32 ... as the serializer's ScalarType numbers them; {python name, annotation}.
std::pair<std::string, std::string> dtypeNames(int code) {
    switch (code) {
    case 1:
        return {"uint8", "u8"};
    case 2:
        return {"int8", "i8"};
    case 3:
        return {"int16", "i16"};
    case 4:
        return {"int32", "i32"};
    case 5:
        return {"int64", "i64"};
    case 6:
        return {"float16", "f16"};
    case 7:
        return {"float32", "f32"};
    case 8:
        return {"float64", "f64"};
    case 9:
        return {"complex32", "c32"};
    case 10:
        return {"complex64", "c64"};
    case 11:
        return {"complex128", "c128"};
    case 12:
        return {"bool", "b8"};
    case 13:
        return {"bfloat16", "bf16"};
    case 28:
        return {"uint16", "u16"};
    case 29:
        return {"float8_e4m3fn", "f8e4m3fn"};
    case 30:
        return {"float8_e5m2", "f8e5m2"};
    case 31:
        return {"float8_e4m3fnuz", "f8e4m3fnuz"};
    case 32:
        return {"float8_e5m2fnuz", "f8e5m2fnuz"};
    case 33:
        return {"float8_e8m0fnu", "f8e8m0fnu"};
    case 34:
        return {"uint32", "u32"};
    case 35:
        return {"uint64", "u64"};
    default:
        return {"unknown", "?"};
    }
}

std::string deviceText(const json& device) {
    std::string text = stringOf(member(device, "type"));
    const json& index = member(device, "index");
    if (index.is_number_integer()) {
        text += ":" + std::to_string(index.get<int64_t>());
    }
    return text;
}

namespace {

// A symbolic size as Python prints it: the serializer writes sympy's srepr
// ("Symbol('s77', positive=True, integer=True)", "Mul(Integer(2), Symbol('s0'))"), print() shows
// str() ("s77", "2*s0"). Symbols, integers, sums, products and floor divisions are rewritten; other
// functions keep their name and arguments.
class SympyText {
public:
    explicit SympyText(const std::string& text)
        : text_(text) {}

    std::string read() {
        const std::string out = expression(0);
        return pos_ == text_.size() && !failed_ ? out : text_;
    }

private:
    void spaces() {
        while (pos_ < text_.size() && text_[pos_] == ' ') {
            ++pos_;
        }
    }

    // A quoted name, a number, or Name(arguments).
    std::string expression(int depth) {
        spaces();
        if (depth > 32 || pos_ >= text_.size()) {
            failed_ = true;
            return {};
        }
        const char c = text_[pos_];
        if (c == '\'' || c == '"') {
            const size_t end = text_.find(c, pos_ + 1);
            if (end == std::string::npos) {
                failed_ = true;
                return {};
            }
            std::string name = text_.substr(pos_ + 1, end - pos_ - 1);
            pos_ = end + 1;
            return name;
        }
        size_t start = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                text_[pos_] == '-' || text_[pos_] == '.')) {
            ++pos_;
        }
        const std::string name = text_.substr(start, pos_ - start);
        if (name.empty()) {
            failed_ = true;
            return {};
        }
        if (pos_ >= text_.size() || text_[pos_] != '(') {
            return name; // a number, True, False
        }
        ++pos_;
        std::vector<std::string> arguments;
        for (;;) {
            spaces();
            if (pos_ < text_.size() && text_[pos_] == ')') {
                ++pos_;
                break;
            }
            // key=value arguments (a symbol's assumptions) are not printed
            const size_t equals = text_.find('=', pos_);
            const size_t next = text_.find_first_of(",()'\"", pos_);
            const bool keyword = equals != std::string::npos && equals < next;
            if (keyword) {
                pos_ = equals + 1;
            }
            std::string argument = expression(depth + 1);
            if (failed_) {
                return {};
            }
            if (!keyword) {
                arguments.push_back(std::move(argument));
            }
            spaces();
            if (pos_ < text_.size() && text_[pos_] == ',') {
                ++pos_;
            } else if (pos_ >= text_.size() || text_[pos_] != ')') {
                failed_ = true;
                return {};
            }
        }
        return apply(name, arguments);
    }

    static bool isNumber(const std::string& text) {
        return !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
    }

    static std::string apply(const std::string& name, const std::vector<std::string>& args) {
        if ((name == "Symbol" || name == "Integer") && args.size() == 1) {
            return args[0];
        }
        std::string out;
        if (name == "Add") {
            std::vector<std::string> terms, constants;
            for (const auto& a : args) {
                (isNumber(a) ? constants : terms).push_back(a);
            }
            terms.insert(terms.end(), constants.begin(), constants.end());
            for (const auto& t : terms) {
                out += out.empty() ? t : (t.rfind('-', 0) == 0 ? " - " + t.substr(1) : " + " + t);
            }
            return out;
        }
        if (name == "Mul") {
            for (const auto& a : args) {
                const bool sum =
                    a.find(" + ") != std::string::npos || a.find(" - ") != std::string::npos;
                out += (out.empty() ? "" : "*") + (sum ? "(" + a + ")" : a);
            }
            return out == "-1" ? out : (out.rfind("-1*", 0) == 0 ? "-" + out.substr(3) : out);
        }
        if (name == "FloorDiv" && args.size() == 2) {
            return "((" + args[0] + ")//" + args[1] + ")";
        }
        for (const auto& a : args) {
            out += (out.empty() ? "" : ", ") + a;
        }
        return name + "(" + out + ")";
    }

    const std::string& text_;
    size_t pos_ = 0;
    bool failed_ = false;
};

} // namespace

std::string symIntText(const json& value) {
    const auto [kind, inner] = unionOf(value);
    if (kind == "as_int" && inner) {
        return numberText(*inner);
    }
    if (kind == "as_expr" && inner) {
        return SympyText(stringOf(member(*inner, "expr_str"))).read();
    }
    if (kind == "as_name" && inner) {
        return stringOf(*inner);
    }
    return "?";
}

Pt2TensorMeta tensorMeta(const json& meta) {
    Pt2TensorMeta out;
    const json& dtype = member(meta, "dtype");
    const auto names = dtypeNames(dtype.is_number_integer() ? dtype.get<int>() : 0);
    out.dtype = names.first;
    out.shortDtype = names.second;
    const json& sizes = member(meta, "sizes");
    if (sizes.is_array()) {
        for (const json& size : sizes) {
            out.sizes.push_back(symIntText(size));
        }
    }
    out.device = deviceText(member(meta, "device"));
    out.requiresGrad =
        member(meta, "requires_grad").is_boolean() && member(meta, "requires_grad").get<bool>();
    return out;
}

static const char* memoryFormatName(int code) {
    switch (code) {
    case 1:
        return "torch.contiguous_format";
    case 2:
        return "torch.channels_last";
    case 3:
        return "torch.channels_last_3d";
    case 4:
        return "torch.preserve_format";
    default:
        return "None";
    }
}

static const char* layoutName(int code) {
    switch (code) {
    case 1:
        return "torch.sparse_coo";
    case 2:
        return "torch.sparse_csr";
    case 3:
        return "torch.sparse_csc";
    case 4:
        return "torch.sparse_bsr";
    case 5:
        return "torch.sparse_bsc";
    case 6:
        return "torch._mkldnn";
    case 7:
        return "torch.strided";
    default:
        return "None";
    }
}

std::string tensorName(const json& value) {
    return stringOf(member(value, "name"));
}

static std::string optionalTensorText(const json& value, bool node) {
    const auto [kind, inner] = unionOf(value);
    return kind == "as_tensor" && inner ? (node ? "%" : "") + tensorName(*inner)
                                        : std::string("None");
}

std::string symText(const json& value) {
    const auto [kind, inner] = unionOf(value);
    if (!inner) {
        return "?";
    }
    if (kind == "as_name") {
        return stringOf(*inner);
    }
    if (kind == "as_bool") {
        return inner->is_boolean() && inner->get<bool>() ? "True" : "False";
    }
    return numberText(*inner);
}

std::string argumentText(const json& argument, int depth, ArgumentStyle style) {
    const auto [kind, inner] = unionOf(argument);
    if (!inner || depth > 64) {
        return "?";
    }
    const json& v = *inner;
    const auto boolText = [](const json& b) {
        return b.is_boolean() && b.get<bool>() ? std::string("True") : std::string("False");
    };
    const bool repr = style == ArgumentStyle::Repr;
    // str(graph) writes the values that are nodes as %name.
    const std::string node = repr ? "" : "%";
    const auto tensor = [&node](const json& t) { return node + tensorName(t); };
    const auto sym = [&node](const json& value) {
        const auto [symKind, symInner] = unionOf(value);
        return (symKind == "as_name" && symInner ? node : std::string()) + symText(value);
    };
    if (kind == "as_none") {
        return "None";
    }
    if (kind == "as_tensor") {
        return tensor(v);
    }
    if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
        return sym(v);
    }
    if (kind == "as_tensors") {
        return listText(v, tensor);
    }
    if (kind == "as_int" || kind == "as_float") {
        return numberText(v);
    }
    if (kind == "as_ints" || kind == "as_floats") {
        return listText(v, numberText);
    }
    if (kind == "as_bool") {
        return boolText(v);
    }
    if (kind == "as_bools") {
        return listText(v, boolText);
    }
    if (kind == "as_string") {
        return repr ? pythonString(stringOf(v)) : stringOf(v);
    }
    if (kind == "as_strings") {
        return listText(
            v, [repr](const json& s) { return repr ? pythonString(stringOf(s)) : stringOf(s); });
    }
    if (kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") {
        return listText(v, sym);
    }
    if (kind == "as_scalar_type") {
        return "torch." + dtypeNames(v.is_number_integer() ? v.get<int>() : 0).first;
    }
    if (kind == "as_memory_format") {
        return memoryFormatName(v.is_number_integer() ? v.get<int>() : 0);
    }
    if (kind == "as_layout") {
        return layoutName(v.is_number_integer() ? v.get<int>() : 0);
    }
    if (kind == "as_device" && !repr) {
        return deviceText(v);
    }
    if (kind == "as_device") {
        const json& index = member(v, "index");
        return "device(type=" + pythonString(stringOf(member(v, "type"))) +
               (index.is_number_integer() ? ", index=" + std::to_string(index.get<int64_t>())
                                          : std::string()) +
               ")";
    }
    if (kind == "as_optional_tensors") {
        return listText(v, [repr](const json& t) { return optionalTensorText(t, !repr); });
    }
    if (kind == "as_optional_tensor") {
        return optionalTensorText(v, !repr);
    }
    if (kind == "as_graph") {
        return node + stringOf(member(v, "name")); // a get_attr node in Python's graph
    }
    if (kind == "as_custom_obj") {
        return stringOf(member(v, "name"));
    }
    if (kind == "as_operator") {
        // The code names it in full; str() of an OpOverload drops the torch.ops.
        const std::string name = stringOf(v);
        return !repr && name.rfind("torch.ops.", 0) == 0 ? name.substr(10) : name;
    }
    if (kind == "as_int_lists" || kind == "as_float_lists") {
        return listText(v, [](const json& l) { return listText(l, numberText); });
    }
    if (kind == "as_nested_tensors") {
        return listText(v, [&tensor](const json& l) { return listText(l, tensor); });
    }
    if (kind == "as_complex") {
        return "(" + numberText(member(v, "real")) + "+" + numberText(member(v, "imag")) + "j)";
    }
    if (kind == "as_string_to_argument" && v.is_object()) {
        std::string out = "{";
        for (auto it = v.begin(); it != v.end(); ++it) {
            out += (out.size() > 1 ? ", " : "") + pythonString(it.key()) + ": " +
                   argumentText(it.value(), depth + 1, style);
        }
        return out + "}";
    }
    return "<" + kind + ">";
}

void argumentValues(const json& argument, std::vector<std::string>& out, int depth) {
    const auto [kind, inner] = unionOf(argument);
    if (!inner || depth > 64) {
        return;
    }
    const auto add = [&out](const std::string& name) {
        if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) {
            out.push_back(name);
        }
    };
    const auto symName = [](const json& value) {
        const auto [symKind, symInner] = unionOf(value);
        return symKind == "as_name" && symInner ? stringOf(*symInner) : std::string();
    };
    const json& v = *inner;
    if (kind == "as_tensor" || kind == "as_graph") {
        add(tensorName(v));
    } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
        add(symName(v));
    } else if (kind == "as_tensors" && v.is_array()) {
        for (const json& t : v) {
            add(tensorName(t));
        }
    } else if ((kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") &&
               v.is_array()) {
        for (const json& s : v) {
            add(symName(s));
        }
    } else if (kind == "as_optional_tensors" && v.is_array()) {
        for (const json& t : v) {
            argumentValues(t, out, depth + 1);
        }
    } else if (kind == "as_optional_tensor") {
        argumentValues(v, out, depth + 1);
    } else if (kind == "as_nested_tensors" && v.is_array()) {
        for (const json& list : v) {
            for (const json& t : list.is_array() ? list : json::array()) {
                add(tensorName(t));
            }
        }
    } else if (kind == "as_string_to_argument" && v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            argumentValues(it.value(), out, depth + 1);
        }
    }
}

namespace {

// A SymInt, SymFloat or SymBool argument ({"as_name": "s0"} or a constant) added to `out`.
void addSym(const json& value, Pt2Value& out) {
    const auto [kind, inner] = unionOf(value);
    out.names.push_back(kind == "as_name" && inner ? stringOf(*inner) : std::string());
    const bool constant = kind != "as_name" && inner;
    out.ints.push_back(constant && inner->is_boolean()          ? int64_t(inner->get<bool>())
                       : constant && inner->is_number_integer() ? inner->get<int64_t>()
                                                                : 0);
    out.floats.push_back(constant && inner->is_number() ? inner->get<double>() : 0.0);
}

int64_t integerOf(const json& value) {
    return value.is_number_integer() ? value.get<int64_t>()
           : value.is_boolean()      ? int64_t(value.get<bool>())
                                     : 0;
}

} // namespace

Pt2Value argumentValue(const json& argument) {
    using Kind = Pt2Value::Kind;
    Pt2Value out;
    const auto [kind, inner] = unionOf(argument);
    if (!inner) {
        out.kind = Kind::Other;
        out.text = "an argument that is not one value";
        return out;
    }
    const json& v = *inner;
    const json& list = v.is_array() ? v : json::array();
    const auto is = [&kind = kind](const char* name) { return kind == name; };
    if (is("as_none")) {
        out.kind = Kind::None;
    } else if (is("as_tensor")) {
        out.kind = Kind::Tensor;
        out.names.push_back(tensorName(v));
    } else if (is("as_tensors")) {
        out.kind = Kind::Tensors;
        for (const json& t : list) {
            out.names.push_back(tensorName(t));
        }
    } else if (is("as_optional_tensors") || is("as_optional_tensor")) {
        const bool one = is("as_optional_tensor");
        out.kind = one ? Kind::Tensor : Kind::OptionalTensors;
        for (const json& t : one ? json::array({v}) : list) {
            const auto [tKind, tInner] = unionOf(t);
            out.names.push_back(tKind == "as_tensor" && tInner ? tensorName(*tInner)
                                                               : std::string());
        }
        if (one && out.names.front().empty()) {
            out = Pt2Value{};
        }
    } else if (is("as_int") || is("as_bool") || is("as_scalar_type") || is("as_memory_format") ||
               is("as_layout")) {
        out.kind = is("as_int")           ? Kind::Int
                   : is("as_bool")        ? Kind::Bool
                   : is("as_scalar_type") ? Kind::ScalarType
                   : is("as_layout")      ? Kind::Layout
                                          : Kind::MemoryFormat;
        out.ints.push_back(integerOf(v));
    } else if (is("as_ints") || is("as_bools")) {
        out.kind = is("as_ints") ? Kind::Ints : Kind::Bools;
        for (const json& x : list) {
            out.ints.push_back(integerOf(x));
        }
    } else if (is("as_float")) {
        out.kind = Kind::Float;
        out.floats.push_back(v.is_number() ? v.get<double>() : 0.0);
    } else if (is("as_floats")) {
        out.kind = Kind::Floats;
        for (const json& x : list) {
            out.floats.push_back(x.is_number() ? x.get<double>() : 0.0);
        }
    } else if (is("as_string")) {
        out.kind = Kind::String;
        out.text = stringOf(v);
    } else if (is("as_strings")) {
        out.kind = Kind::Strings;
        for (const json& x : list) {
            out.strings.push_back(stringOf(x));
        }
    } else if (is("as_sym_int") || is("as_sym_float") || is("as_sym_bool")) {
        out.kind = is("as_sym_int")     ? Kind::SymInt
                   : is("as_sym_float") ? Kind::SymFloat
                                        : Kind::SymBool;
        addSym(v, out);
    } else if (is("as_sym_ints") || is("as_sym_floats") || is("as_sym_bools")) {
        out.kind = is("as_sym_ints")     ? Kind::SymInts
                   : is("as_sym_floats") ? Kind::SymFloats
                                         : Kind::SymBools;
        for (const json& x : list) {
            addSym(x, out);
        }
    } else if (is("as_device")) {
        out.kind = Kind::Device;
        out.text = stringOf(member(v, "type"));
        const json& index = member(v, "index");
        out.ints.push_back(index.is_number_integer() ? index.get<int64_t>() : -1);
    } else if (is("as_graph")) {
        out.kind = Kind::Graph;
        out.text = stringOf(member(v, "name"));
    } else if (is("as_operator")) {
        out.kind = Kind::Operator;
        out.text = stringOf(v);
    } else {
        out.kind = Kind::Other;
        out.text = kind;
    }
    return out;
}

} // namespace scriptscope::pt2
