// What differs between the LibTorch versions ScriptScope builds on (Debian's 1.13 to PyPI's newest
// 2.x) is kept here, not spread through the engine.
#pragma once

#include <torch/version.h>

#include <string>
#include <utility>

// True when the LibTorch being compiled against is at least MAJOR.MINOR.
#define SCRIPTSCOPE_TORCH_AT_LEAST(major, minor)                                                   \
    (TORCH_VERSION_MAJOR > (major) ||                                                              \
     (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

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

} // namespace scriptscope::compat
