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

} // namespace

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

ArgumentClass argumentClass(const std::string& raw) {
    const std::string type = trim(raw);
    if (type.rfind("Optional[", 0) == 0 ||
        (!type.empty() && type.back() == '?' && type != "Tensor?")) {
        return ArgumentClass::Optional;
    }
    if (type == "Tensor" || type == "Tensor?") {
        return ArgumentClass::Tensor;
    }
    if (type == "int" || type == "SymInt") {
        return ArgumentClass::Int;
    }
    if (type == "float") {
        return ArgumentClass::Float;
    }
    if (type == "bool") {
        return ArgumentClass::Bool;
    }
    if (type == "str") {
        return ArgumentClass::String;
    }
    if (type == "List[int]" || type == "int[]") {
        return ArgumentClass::IntList;
    }
    if (type == "List[float]" || type == "float[]") {
        return ArgumentClass::FloatList;
    }
    return ArgumentClass::Other;
}

} // namespace scriptscope
