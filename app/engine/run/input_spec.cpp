#include "input_spec.h"

#include <algorithm>

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace scriptscope {
namespace {

Error inputError(const std::string& message) {
    return Error{ErrorKind::Input, message};
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream stream(text);
    while (std::getline(stream, part, separator)) {
        parts.push_back(part);
    }
    if (!text.empty() && text.back() == separator) {
        parts.emplace_back();
    }
    return parts;
}

bool parseInt(const std::string& text, int64_t& value) {
    if (text.empty()) {
        return false;
    }
    char* end = nullptr;
    errno = 0;
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    value = parsed;
    return true;
}

bool parseDouble(const std::string& text, double& value) {
    if (text.empty()) {
        return false;
    }
    // "1/255" is how people write pixel scales.
    const auto slash = text.find('/');
    if (slash != std::string::npos) {
        double num = 0, den = 0;
        if (!parseDouble(text.substr(0, slash), num) || !parseDouble(text.substr(slash + 1), den) ||
            den == 0) {
            return false;
        }
        value = num / den;
        return true;
    }
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(text.c_str(), &end);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    value = parsed;
    return true;
}

bool parseDoubles(const std::string& text, char separator, std::vector<double>& values) {
    values.clear();
    for (const auto& part : split(text, separator)) {
        double v = 0;
        if (!parseDouble(part, v)) {
            return false;
        }
        values.push_back(v);
    }
    return !values.empty();
}

Expected<InputSpec> parseImage(const std::string& rest) {
    InputSpec spec;
    spec.kind = InputSpec::Kind::Image;
    auto parts = split(rest, ',');
    if (parts.empty() || parts.front().empty()) {
        return inputError("image: needs a path, e.g. image:photo.png,size=224x224");
    }
    spec.path = parts.front();
    ImagePreprocess& p = spec.image;
    bool sizeGiven = false, presetGiven = false;
    for (size_t i = 1; i < parts.size(); ++i) {
        const auto eq = parts[i].find('=');
        const std::string key = parts[i].substr(0, eq);
        const std::string value = eq == std::string::npos ? std::string() : parts[i].substr(eq + 1);
        auto bad = [&]() {
            return inputError("image option '" + parts[i] +
                              "' is not valid (options: size=WxH, "
                              "order=rgb|bgr, layout=chw|hwc, batch=0|1, dtype=..., scale=1/255, "
                              "mean=a/b/c, std=a/b/c, gray=0|1, preset=imagenet)");
        };
        if (key == "size") {
            const auto shape = parseShape(value);
            if (!shape || shape->size() != 2) {
                return bad();
            }
            p.width = static_cast<int>((*shape)[0]);
            p.height = static_cast<int>((*shape)[1]);
            sizeGiven = true;
        } else if (key == "order" && (value == "rgb" || value == "bgr")) {
            p.rgb = value == "rgb";
        } else if (key == "layout" && (value == "chw" || value == "hwc")) {
            p.channelsFirst = value == "chw";
        } else if (key == "batch" && (value == "0" || value == "1")) {
            p.batch = value == "1";
        } else if (key == "gray" && (value == "0" || value == "1")) {
            p.grayscale = value == "1";
        } else if (key == "dtype" && isKnownDtype(value)) {
            p.dtype = value;
        } else if (key == "scale") {
            if (!parseDouble(value, p.scale)) {
                return bad();
            }
        } else if (key == "mean") {
            if (!parseDoubles(value, '/', p.mean)) {
                return bad();
            }
        } else if (key == "std") {
            if (!parseDoubles(value, '/', p.stddev)) {
                return bad();
            }
        } else if (key == "preset" && value == "imagenet") {
            p.rgb = true;
            p.scale = 1.0 / 255.0;
            p.mean = {0.485, 0.456, 0.406};
            p.stddev = {0.229, 0.224, 0.225};
            presetGiven = true;
        } else {
            return bad();
        }
    }
    // The ImageNet preset is the whole of torchvision's classification preprocessing at its
    // usual size, as in the GUI; an explicit size= (before or after it) wins.
    if (presetGiven && !sizeGiven) {
        p.width = kImageNetSize;
        p.height = kImageNetSize;
    }
    return spec;
}

// "[...]" whose first bracket closes at the end ("[a];[b]" is not).
bool wrappedInBrackets(const std::string& text) {
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
        return false;
    }
    int depth = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        depth += text[i] == '[' ? 1 : text[i] == ']' ? -1 : 0;
        if (depth == 0) {
            return i + 1 == text.size();
        }
    }
    return false;
}

// Splits "a;[b;c];d" at the semicolons outside brackets; one pair of brackets around a whole
// element is removed, so containers nest: list:[list:random:2;random:3];random:4.
Expected<std::vector<std::string>> splitElements(const std::string& text,
                                                 const std::string& whole) {
    std::vector<std::string> parts;
    if (text.empty()) {
        return parts;
    }
    std::string current;
    int depth = 0;
    for (const char c : text) {
        if (c == '[') {
            ++depth;
        } else if (c == ']') {
            if (--depth < 0) {
                return inputError("'" + whole + "': a ']' without its '['");
            }
        }
        if (c == ';' && depth == 0) {
            parts.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (depth != 0) {
        return inputError("'" + whole + "': a '[' without its ']'");
    }
    parts.push_back(current);
    for (auto& part : parts) {
        if (wrappedInBrackets(part)) {
            part = part.substr(1, part.size() - 2);
        }
        if (part.empty()) {
            return inputError("'" + whole + "': an empty element (two ';' in a row?)");
        }
    }
    return parts;
}

constexpr int kMaxNesting = 16;

Expected<InputSpec> parseSpec(const std::string& text, int depth);

Expected<InputSpec> parseContainer(const std::string& head, const std::string& rest,
                                   const std::string& text, int depth) {
    if (depth > kMaxNesting) {
        return inputError("'" + text + "': containers nested too deeply");
    }
    InputSpec spec;
    spec.kind = head == "list"    ? InputSpec::Kind::List
                : head == "tuple" ? InputSpec::Kind::Tuple
                                  : InputSpec::Kind::Dict;
    auto parts = splitElements(rest, text);
    if (!parts) {
        return parts.error();
    }
    for (size_t i = 0; i < parts->size(); ++i) {
        std::string element = (*parts)[i];
        if (spec.kind == InputSpec::Kind::Dict) {
            const auto eq = element.find('=');
            if (eq == std::string::npos || eq == 0) {
                return inputError("'" + text + "': dict entries are KEY=SPEC, got '" + element +
                                  "'");
            }
            spec.keys.push_back(element.substr(0, eq));
            element = element.substr(eq + 1);
            if (wrappedInBrackets(element)) {
                element = element.substr(1, element.size() - 2);
            }
        }
        auto parsed = parseSpec(element, depth + 1);
        if (!parsed) {
            const std::string where = spec.kind == InputSpec::Kind::Dict
                                          ? "entry '" + spec.keys.back() + "'"
                                          : "element " + std::to_string(i);
            return inputError(head + " " + where + ": " + parsed.error().message);
        }
        spec.elements.push_back(std::move(parsed).value());
    }
    return spec;
}

} // namespace

bool isKnownDtype(const std::string& dtype) {
    for (const char* known : {"float32", "float64", "float16", "bfloat16", "int64", "int32",
                              "int16", "int8", "uint8", "bool"}) {
        if (dtype == known) {
            return true;
        }
    }
    return false;
}

Expected<std::vector<int64_t>> parseShape(const std::string& text) {
    std::vector<int64_t> shape;
    if (text.empty()) {
        return inputError("empty shape");
    }
    for (const auto& part : split(text, 'x')) {
        int64_t dim = 0;
        if (!parseInt(part, dim) || dim < 0) {
            return inputError("shape '" + text + "' is not like 1x3x224x224");
        }
        shape.push_back(dim);
    }
    return shape;
}

Expected<InputSpec> parseInputSpec(const std::string& text) {
    return parseSpec(text, 0);
}

namespace {

Expected<InputSpec> parseSpec(const std::string& text, int depth) {
    const auto colon = text.find(':');
    const std::string head = text.substr(0, colon);
    const std::string rest = colon == std::string::npos ? std::string() : text.substr(colon + 1);
    InputSpec spec;

    if (colon != std::string::npos && (head == "random" || head == "zeros" || head == "ones")) {
        spec.kind = head == "random"  ? InputSpec::Kind::Random
                    : head == "zeros" ? InputSpec::Kind::Zeros
                                      : InputSpec::Kind::Ones;
        const auto parts = split(rest, ':');
        if (parts.empty() || parts.size() > 3) {
            return inputError("'" + text + "': expected " + head + ":SHAPE[:DTYPE[:SEED]]");
        }
        auto shape = parseShape(parts[0]);
        if (!shape) {
            return inputError("'" + text + "': " + shape.error().message);
        }
        spec.shape = shape.value();
        if (parts.size() >= 2) {
            if (!isKnownDtype(parts[1])) {
                return inputError("'" + text + "': unknown dtype '" + parts[1] +
                                  "' (float32, float64, float16, bfloat16, int64, int32, int16, "
                                  "int8, uint8, bool)");
            }
            spec.dtype = parts[1];
        }
        if (parts.size() == 3) {
            int64_t seed = 0;
            if (!parseInt(parts[2], seed) || seed < 0) {
                return inputError("'" + text + "': the seed must be a non-negative integer");
            }
            spec.seed = static_cast<uint64_t>(seed);
        }
        return spec;
    }
    if (colon != std::string::npos && (head == "list" || head == "tuple" || head == "dict")) {
        return parseContainer(head, rest, text, depth);
    }
    if (colon != std::string::npos && head == "image") {
        return parseImage(rest);
    }
    if (colon != std::string::npos && head == "file") {
        if (rest.empty()) {
            return inputError("file: needs a path to a file written by torch.save");
        }
        spec.kind = InputSpec::Kind::File;
        spec.path = rest;
        return spec;
    }
    if (colon != std::string::npos && head == "matrix") {
        if (rest.empty()) {
            return inputError("matrix: needs a matrix file (.json, .npy, .xml, .yml)");
        }
        spec.kind = InputSpec::Kind::Matrix;
        const auto hash = rest.rfind('#');
        spec.path = rest.substr(0, hash);
        spec.node = hash == std::string::npos ? std::string() : rest.substr(hash + 1);
        return spec;
    }
    if (colon != std::string::npos && head == "str") {
        spec.kind = InputSpec::Kind::String;
        spec.stringValue = rest;
        return spec;
    }
    if (colon != std::string::npos && (head == "ints" || head == "floats")) {
        if (head == "ints") {
            spec.kind = InputSpec::Kind::IntList;
            for (const auto& part : rest.empty() ? std::vector<std::string>{} : split(rest, ',')) {
                int64_t v = 0;
                if (!parseInt(part, v)) {
                    return inputError("'" + text + "': '" + part + "' is not an integer");
                }
                spec.intList.push_back(v);
            }
        } else {
            spec.kind = InputSpec::Kind::FloatList;
            if (!rest.empty() && !parseDoubles(rest, ',', spec.floatList)) {
                return inputError("'" + text + "': expected numbers separated by commas");
            }
        }
        return spec;
    }
    if (head == "sample") {
        spec.kind = InputSpec::Kind::Sample;
        spec.intValue = -1;
        if (colon != std::string::npos && (!parseInt(rest, spec.intValue) || spec.intValue < 0)) {
            return inputError("'" + text + "': sample takes the argument's index, sample:0");
        }
        return spec;
    }
    if (text == "true" || text == "false") {
        spec.kind = InputSpec::Kind::Bool;
        spec.boolValue = text == "true";
        return spec;
    }
    if (text == "none" || text == "None") {
        spec.kind = InputSpec::Kind::None;
        return spec;
    }
    if (parseInt(text, spec.intValue)) {
        spec.kind = InputSpec::Kind::Int;
        return spec;
    }
    if (parseDouble(text, spec.floatValue)) {
        spec.kind = InputSpec::Kind::Float;
        return spec;
    }
    return inputError(
        "'" + text +
        "' is not an input spec. Use random:SHAPE[:DTYPE], zeros:SHAPE[:DTYPE], "
        "ones:SHAPE[:DTYPE], image:PATH[,options], file:PATH, matrix:PATH, sample[:N], a number, "
        "true, false, none, str:TEXT, ints:1,2, floats:0.5,1, list:SPEC;SPEC, tuple:SPEC;SPEC or "
        "dict:KEY=SPEC;KEY=SPEC");
}

} // namespace

std::string InputSpec::describe() const {
    auto shapeText = [this]() {
        std::string s;
        for (size_t i = 0; i < shape.size(); ++i) {
            s += (i ? "x" : "") + std::to_string(shape[i]);
        }
        return s.empty() ? std::string("scalar") : s;
    };
    switch (kind) {
    case Kind::Random:
        return "random " + shapeText() + " " + dtype;
    case Kind::Zeros:
        return "zeros " + shapeText() + " " + dtype;
    case Kind::Ones:
        return "ones " + shapeText() + " " + dtype;
    case Kind::Image:
        return "image " + path;
    case Kind::File:
        return "file " + path;
    case Kind::Matrix:
        if (path.empty()) {
            return "matrix 3x3 (from the warp editor)";
        }
        return "matrix " + path + (node.empty() ? "" : "#" + node);
    case Kind::Int:
        return "int " + std::to_string(intValue);
    case Kind::Float: {
        std::ostringstream s;
        s << "float " << floatValue;
        return s.str();
    }
    case Kind::Bool:
        return boolValue ? "true" : "false";
    case Kind::String:
        return "str '" + stringValue + "'";
    case Kind::None:
        return "None";
    case Kind::IntList:
        return "int list of " + std::to_string(intList.size());
    case Kind::FloatList:
        return "float list of " + std::to_string(floatList.size());
    case Kind::Sample:
        return intValue < 0 ? std::string("the archive's sample input")
                            : "the archive's sample input " + std::to_string(intValue);
    case Kind::List:
    case Kind::Tuple:
    case Kind::Dict: {
        std::string text = kind == Kind::List ? "[" : kind == Kind::Tuple ? "(" : "{";
        for (size_t i = 0; i < elements.size(); ++i) {
            text += (i ? ", " : "") +
                    (kind == Kind::Dict && i < keys.size() ? keys[i] + ": " : "") +
                    elements[i].describe();
        }
        if (kind == Kind::Tuple && elements.size() == 1) {
            text += ",";
        }
        return text + (kind == Kind::List ? "]" : kind == Kind::Tuple ? ")" : "}");
    }
    }
    return "?";
}

const InputSpec* firstImageInput(const std::vector<InputSpec>& specs) {
    for (const auto& spec : specs) {
        if (spec.kind == InputSpec::Kind::Image) {
            return &spec;
        }
        if (const InputSpec* inner = firstImageInput(spec.elements)) {
            return inner;
        }
    }
    return nullptr;
}

bool onSampleInputs(const RunRequest& request) {
    return request.inputsFile.empty() &&
           std::all_of(request.inputs.begin(), request.inputs.end(),
                       [](const InputSpec& spec) { return spec.kind == InputSpec::Kind::Sample; });
}

} // namespace scriptscope
