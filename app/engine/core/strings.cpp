#include "error.h"
#include "format.h"
#include "model_info.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace scriptscope {

const char* toString(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::File:
        return "file";
    case ErrorKind::Format:
        return "format";
    case ErrorKind::Version:
        return "version";
    case ErrorKind::MissingOperator:
        return "missing-operator";
    case ErrorKind::Input:
        return "input";
    case ErrorKind::Device:
        return "device";
    case ErrorKind::OutOfMemory:
        return "out-of-memory";
    case ErrorKind::Crashed:
        return "crashed";
    case ErrorKind::TimedOut:
        return "timed-out";
    case ErrorKind::Model:
        return "model";
    case ErrorKind::Internal:
        return "internal";
    case ErrorKind::NeedsNewerLibTorch:
        return "needs-newer-libtorch";
    case ErrorKind::OperatorLibrary:
        return "operator-library";
    }
    return "internal";
}

const char* toString(FileKind kind) {
    switch (kind) {
    case FileKind::Missing:
        return "missing";
    case FileKind::Directory:
        return "directory";
    case FileKind::Unreadable:
        return "unreadable";
    case FileKind::Empty:
        return "empty";
    case FileKind::TorchScript:
        return "torchscript";
    case FileKind::TorchSaveZip:
        return "torch-save";
    case FileKind::LegacyTorchSave:
        return "legacy-torch-save";
    case FileKind::MobileFlatbuffer:
        return "mobile-flatbuffer";
    case FileKind::Onnx:
        return "onnx";
    case FileKind::ExportedProgram:
        return "exported-program";
    case FileKind::ExecuTorch:
        return "executorch";
    case FileKind::PreviewTorchScript:
        return "preview-torchscript";
    case FileKind::Zip:
        return "zip";
    case FileKind::TruncatedZip:
        return "truncated-zip";
    case FileKind::Text:
        return "text";
    case FileKind::Added:
        return "added-format";
    case FileKind::Unknown:
        return "unknown";
    }
    return "unknown";
}

std::string formatBytes(uint64_t bytes) {
    const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return text;
}

std::string formatCount(int64_t n) {
    std::string digits = std::to_string(n);
    const int first = digits[0] == '-' ? 1 : 0;
    for (int i = static_cast<int>(digits.size()) - 3; i > first; i -= 3) {
        digits.insert(static_cast<size_t>(i), ",");
    }
    return digits;
}

// Python's repr() of a float: the shortest digits that read back, positional from 1e-4 to 1e16,
// scientific outside, always with a point or an exponent.
std::string formatPythonFloat(double value) {
    if (std::isnan(value)) {
        return "nan";
    }
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    char buffer[64];
    const auto done =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    std::string sci(buffer, done.ptr);
    const auto e = sci.find('e');
    const int exponent = std::stoi(sci.substr(e + 1));
    std::string digits;
    bool negative = false;
    for (const char c : sci.substr(0, e)) {
        if (c == '-') {
            negative = true;
        } else if (c != '.') {
            digits += c;
        }
    }
    std::string out;
    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
        } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
            out =
                digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
        } else {
            out = digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
                  digits.substr(static_cast<size_t>(exponent) + 1);
        }
    } else {
        out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
              (exponent < 0 ? "-" : "+") + (std::abs(exponent) < 10 ? "0" : "") +
              std::to_string(std::abs(exponent));
    }
    return (negative ? "-" : "") + out;
}

std::string formatShape(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return text + "]";
}

std::string formatDims(const std::vector<int64_t>& shape) {
    std::string text;
    for (const int64_t size : shape) {
        text += (text.empty() ? "" : "x") + std::to_string(size);
    }
    return text.empty() ? "scalar" : text;
}

std::string describeSignal(int signal) {
    const char* name = nullptr;
    switch (signal) {
    case SIGSEGV:
        name = "SIGSEGV (segmentation fault)";
        break;
    case SIGBUS:
        name = "SIGBUS (bus error)";
        break;
    case SIGABRT:
        name = "SIGABRT (aborted)";
        break;
    case SIGFPE:
        name = "SIGFPE (arithmetic exception)";
        break;
    case SIGILL:
        name = "SIGILL (illegal instruction)";
        break;
    case SIGKILL:
        name = "SIGKILL (killed, possibly by the system's out-of-memory killer)";
        break;
    case SIGTERM:
        name = "SIGTERM (terminated)";
        break;
    default:
        break;
    }
    if (name) {
        return name;
    }
    const char* text = ::strsignal(signal);
    return "signal " + std::to_string(signal) + (text ? std::string(" (") + text + ")" : "");
}

std::string describeQuantization(const TensorInfo& t) {
    if (t.qscheme.empty()) {
        return {};
    }
    auto number = [](double v) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.6g", v);
        return std::string(buffer);
    };
    std::string text = t.qscheme;
    if (t.axis >= 0) {
        text += ", axis " + std::to_string(t.axis);
        if (!t.scales.empty()) {
            const auto [low, high] = std::minmax_element(t.scales.begin(), t.scales.end());
            text += ", " + std::to_string(t.scales.size()) + " scales " + number(*low) +
                    (*low == *high ? "" : ".." + number(*high));
        }
        if (!t.zeroPoints.empty()) {
            const auto [low, high] = std::minmax_element(t.zeroPoints.begin(), t.zeroPoints.end());
            text += ", zero points " + std::to_string(*low) +
                    (*low == *high ? "" : ".." + std::to_string(*high));
        }
    } else {
        text += ", scale " + number(t.scale) + ", zero point " + std::to_string(t.zeroPoint);
    }
    return text;
}

} // namespace scriptscope
