#include "schema.h"

namespace scriptscope {
namespace {

std::string trim(const std::string& s) {
    const auto first = s.find_first_not_of(" \t\n");
    if (first == std::string::npos) {
        return {};
    }
    const auto last = s.find_last_not_of(" \t\n");
    return s.substr(first, last - first + 1);
}

// Splits "a, Dict[str, b], (c, d)" at the commas outside brackets.
std::vector<std::string> splitTopLevel(const std::string& text) {
    std::vector<std::string> parts;
    std::string current;
    int depth = 0;
    for (const char c : text) {
        if (c == '(' || c == '[') {
            ++depth;
        } else if (c == ')' || c == ']') {
            --depth;
        }
        if (c == ',' && depth == 0) {
            parts.push_back(trim(current));
            current.clear();
        } else {
            current += c;
        }
    }
    if (!trim(current).empty()) {
        parts.push_back(trim(current));
    }
    return parts;
}

TypeShape parseTypeShapeAt(const std::string& raw, int depth) {
    TypeShape shape;
    shape.text = trim(raw);
    const std::string& t = shape.text;
    if (depth > 32 || t.empty()) {
        return shape;
    }
    auto inner = [&](size_t open) { return t.substr(open + 1, t.size() - open - 2); };
    auto nested = [&](const std::string& text) {
        std::vector<TypeShape> elements;
        for (const auto& part : splitTopLevel(text)) {
            elements.push_back(parseTypeShapeAt(part, depth + 1));
        }
        return elements;
    };
    if (t.back() == '?') {
        shape.kind = TypeShape::Kind::Optional;
        shape.elements.push_back(parseTypeShapeAt(t.substr(0, t.size() - 1), depth + 1));
        return shape;
    }
    // "X[]" and "X[2]" (schema lists), found from the bracket that closes the end.
    if (t.back() == ']') {
        int level = 0;
        size_t open = std::string::npos;
        for (size_t i = t.size(); i-- > 0;) {
            if (t[i] == ']') {
                ++level;
            } else if (t[i] == '[' && --level == 0) {
                open = i;
                break;
            }
        }
        if (open != std::string::npos && open > 0) {
            const std::string head = t.substr(0, open);
            const std::string args = inner(open);
            const bool sized = args.find_first_not_of("0123456789") == std::string::npos;
            if (sized && head != "List" && head != "Optional" && head != "Tuple" &&
                head != "Dict") {
                shape.kind = TypeShape::Kind::List;
                shape.elements.push_back(parseTypeShapeAt(head, depth + 1));
                return shape;
            }
            const auto elements = nested(args);
            if (head == "List" && elements.size() == 1) {
                shape.kind = TypeShape::Kind::List;
            } else if (head == "Optional" && elements.size() == 1) {
                shape.kind = TypeShape::Kind::Optional;
            } else if (head == "Tuple") {
                shape.kind = TypeShape::Kind::Tuple;
            } else if (head == "Dict" && elements.size() == 2) {
                shape.kind = TypeShape::Kind::Dict;
            } else {
                return shape;
            }
            shape.elements = elements;
            return shape;
        }
    }
    if (t.back() == ')') {
        if (t.front() == '(') {
            shape.kind = TypeShape::Kind::Tuple;
            shape.elements = nested(inner(0));
            return shape;
        }
        if (t.rfind("Dict(", 0) == 0) {
            shape.elements = nested(inner(4));
            if (shape.elements.size() == 2) {
                shape.kind = TypeShape::Kind::Dict;
            } else {
                shape.elements.clear();
            }
            return shape;
        }
    }
    if (t == "Tensor") {
        shape.kind = TypeShape::Kind::Tensor;
    } else if (t == "int" || t == "SymInt") {
        shape.kind = TypeShape::Kind::Int;
    } else if (t == "float") {
        shape.kind = TypeShape::Kind::Float;
    } else if (t == "bool") {
        shape.kind = TypeShape::Kind::Bool;
    } else if (t == "str") {
        shape.kind = TypeShape::Kind::String;
    }
    return shape;
}

} // namespace

TypeShape parseTypeShape(const std::string& type) {
    return parseTypeShapeAt(type, 0);
}

std::vector<SchemaArgument> schemaArguments(const std::string& schema) {
    std::vector<SchemaArgument> arguments;
    const auto open = schema.find('(');
    if (open == std::string::npos) {
        return arguments;
    }
    // The argument list ends at the parenthesis that closes the first one.
    int depth = 0;
    size_t close = std::string::npos;
    char inString = 0;
    for (size_t i = open; i < schema.size(); ++i) {
        const char c = schema[i];
        if (inString) {
            inString = c == inString ? 0 : inString;
        } else if (c == '"' || c == '\'') {
            inString = c;
        } else if (c == '(' || c == '[') {
            ++depth;
        } else if (c == ')' || c == ']') {
            if (--depth == 0) {
                close = i;
                break;
            }
        }
    }
    if (close == std::string::npos) {
        return arguments;
    }
    std::vector<std::string> parts;
    std::string current;
    depth = 0;
    char quote = 0;
    for (size_t i = open + 1; i < close; ++i) {
        const char c = schema[i];
        if (quote) {
            quote = c == quote ? 0 : quote; // a default string: commas inside do not split
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '(' || c == '[') {
            ++depth;
        } else if (c == ')' || c == ']') {
            --depth;
        }
        if (c == ',' && depth == 0 && !quote) {
            parts.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (!trim(current).empty()) {
        parts.push_back(current);
    }
    for (const auto& raw : parts) {
        std::string part = trim(raw);
        if (part == "*") {
            continue; // keyword-only marker
        }
        SchemaArgument argument;
        // The default comes after the first '=' outside brackets.
        depth = 0;
        for (size_t i = 0; i < part.size(); ++i) {
            const char c = part[i];
            if (c == '(' || c == '[') {
                ++depth;
            } else if (c == ')' || c == ']') {
                --depth;
            } else if (c == '=' && depth == 0) {
                argument.defaultValue = trim(part.substr(i + 1));
                argument.hasDefault = true;
                part = trim(part.substr(0, i));
                break;
            }
        }
        // "Type name": the name is the last word; the type may contain spaces ("Dict[str, int]").
        const auto space = part.find_last_of(' ');
        if (space == std::string::npos) {
            argument.type = part;
        } else {
            argument.type = trim(part.substr(0, space));
            argument.name = part.substr(space + 1);
        }
        if (arguments.empty() && argument.name == "self" && !argument.hasDefault) {
            continue; // the module itself: not an input
        }
        arguments.push_back(argument);
    }
    return arguments;
}

} // namespace scriptscope
