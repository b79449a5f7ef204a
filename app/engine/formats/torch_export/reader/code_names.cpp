#include "code_names.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <set>

namespace scriptscope {

// sorted(set(keyword.kwlist) | set(builtins.__dict__)) in Python 3.11.
bool shadowsBuiltin(const std::string& name) {
    // clang-format off
    static const std::set<std::string> names = {
        "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
        "BaseExceptionGroup", "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning",
        "ChildProcessError", "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError",
        "ConnectionResetError", "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning",
        "EnvironmentError", "Exception", "ExceptionGroup", "False", "FileExistsError",
        "FileNotFoundError", "FloatingPointError", "FutureWarning", "GeneratorExit", "IOError",
        "ImportError", "ImportWarning", "IndentationError", "IndexError", "InterruptedError",
        "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
        "ModuleNotFoundError", "NameError", "None", "NotADirectoryError", "NotImplemented",
        "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning",
        "PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError",
        "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration",
        "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError",
        "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
        "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError",
        "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__",
        "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "and", "anext",
        "any", "as", "ascii", "assert", "async", "await", "bin", "bool", "break", "breakpoint",
        "bytearray", "bytes", "callable", "chr", "class", "classmethod", "compile", "complex",
        "continue", "copyright", "credits", "def", "del", "delattr", "dict", "dir", "divmod",
        "elif", "else", "enumerate", "eval", "except", "exec", "exit", "filter", "finally",
        "float", "for", "format", "from", "frozenset", "getattr", "global", "globals", "hasattr",
        "hash", "help", "hex", "id", "if", "import", "in", "input", "int", "is", "isinstance",
        "issubclass", "iter", "lambda", "len", "license", "list", "locals", "map", "max",
        "memoryview", "min", "next", "nonlocal", "not", "object", "oct", "open", "or", "ord",
        "pass", "pow", "print", "property", "quit", "raise", "range", "repr", "return", "reversed",
        "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "try",
        "tuple", "type", "vars", "while", "with", "yield", "zip"
    };
    // clang-format on
    return names.count(name) > 0;
}

namespace {

// The globals FX's code generation registers first (torch.fx.graph._custom_builtins).
const char* const kCustomBuiltins[] = {"inf",    "nan",       "NoneType", "torch",
                                       "device", "fx_pytree", "pytree"};

bool identifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// What generated code may not call a node: a keyword, a builtin, or one of FX's own globals.
bool shadowsIllegal(const std::string& name) {
    if (shadowsBuiltin(name)) {
        return true;
    }
    return std::any_of(std::begin(kCustomBuiltins), std::end(kCustomBuiltins),
                       [&](const char* builtin) { return name == builtin; });
}

} // namespace

CodeNamespace::CodeNamespace() {
    for (const char* builtin : kCustomBuiltins) {
        create(builtin, /*isThatBuiltin=*/true);
    }
}

std::string CodeNamespace::nameOf(const std::string& name) {
    const auto found = names_.find(name);
    if (found != names_.end()) {
        return found->second;
    }
    return names_[name] = create(name, false);
}

std::string CodeNamespace::create(std::string candidate, bool isThatBuiltin) {
    // _illegal_char_regex.sub("_", ...): each run of other characters is one underscore.
    std::string cleaned;
    for (size_t i = 0; i < candidate.size(); ++i) {
        if (identifierChar(candidate[i])) {
            cleaned += candidate[i];
        } else if (cleaned.empty() || !(i > 0 && !identifierChar(candidate[i - 1]))) {
            cleaned += '_';
        }
    }
    candidate = cleaned.empty() ? "_unnamed" : cleaned;
    if (std::isdigit(static_cast<unsigned char>(candidate[0]))) {
        candidate = "_" + candidate;
    }
    // _name_regex: ^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$ -- the base and a number after
    // the last underscore, when digits follow it to the end.
    std::string base = candidate;
    std::optional<int64_t> number;
    const size_t underscore = candidate.rfind('_');
    if (underscore != std::string::npos && underscore > 0 && underscore + 1 < candidate.size() &&
        std::all_of(candidate.begin() + static_cast<std::ptrdiff_t>(underscore) + 1,
                    candidate.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        base = candidate.substr(0, underscore);
        const std::string digits = candidate.substr(underscore + 1);
        // A hostile archive's 40-digit suffix saturates (Python's int would not).
        number = digits.size() > 15 ? int64_t{999999999999999} : std::stoll(digits);
    }
    int64_t num = 0;
    if (!number || used_.count(candidate)) {
        num = counts_[base];
        if (!isThatBuiltin && shadowsIllegal(candidate)) {
            ++num;
            candidate = base + "_" + std::to_string(num);
        }
    } else {
        num = *number;
    }
    while (used_.count(candidate)) {
        ++num;
        candidate = base + "_" + std::to_string(num);
    }
    used_.insert(candidate);
    counts_[base] = num;
    return candidate;
}

std::string withCodeNames(const std::string& text,
                          const std::map<std::string, std::string>& names) {
    std::string out;
    char quote = 0;
    for (size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (quote) {
            out += c;
            if (c == '\\' && i + 1 < text.size()) {
                out += text[++i];
            } else if (c == quote) {
                quote = 0;
            }
            ++i;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            out += c;
            ++i;
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t end = i;
            while (end < text.size() &&
                   (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
                ++end;
            }
            const std::string word = text.substr(i, end - i);
            const auto found = names.find(word);
            const bool attribute = i > 0 && text[i - 1] == '.';
            const bool call = end < text.size() && text[end] == '(';
            out += found != names.end() && !attribute && !call ? found->second : word;
            i = end;
            continue;
        }
        out += c;
        ++i;
    }
    return out;
}

} // namespace scriptscope
