// What differs between the LibTorch versions ScriptScope builds on (Debian's 1.13 to PyPI's newest
// 2.x) is kept here, not spread through the engine.
#pragma once

#include <string>
#include <utility>

namespace scriptscope::compat {

// The PyTorch release that brought an operator which archives saved by newer PyTorch commonly
// call, so that an older build can say what opens the archive; empty when it is not known.
inline std::string operatorIntroducedIn(const std::string& op) {
    static const std::pair<const char*, const char*> known[] = {
        {"aten::scaled_dot_product_attention", "2.0"}, // nn.MultiheadAttention, F.sdpa
        {"aten::_scaled_dot_product_attention_math", "2.0"},
        {"aten::rms_norm", "2.4"}, // nn.RMSNorm
    };
    for (const auto& [name, version] : known) {
        if (op == name) {
            return version;
        }
    }
    return {};
}

// "2.10" after "2.4": releases compared by their numbers, not as text.
inline bool releaseBefore(const std::string& a, const std::string& b) {
    auto parts = [](const std::string& v) {
        const size_t dot = v.find('.');
        return std::pair<int, int>(std::stoi(v.substr(0, dot)),
                                   dot == std::string::npos ? 0 : std::stoi(v.substr(dot + 1)));
    };
    return parts(a) < parts(b);
}

} // namespace scriptscope::compat
