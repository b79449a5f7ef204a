#include "model_info.h"

#include <iterator>
#include <limits>

namespace scriptscope {

namespace {

constexpr const char* kCapabilityNames[] = {"code",     "inlined_graph", "run",
                                            "profile",  "statistics",    "activations",
                                            "optimize", "diff",          "recorded_profile"};
static_assert(std::size(kCapabilityNames) == static_cast<size_t>(Capability::Count));

} // namespace

const char* toString(Capability capability) {
    const auto index = static_cast<size_t>(capability);
    return index < std::size(kCapabilityNames) ? kCapabilityNames[index] : "";
}

Capability capabilityFromString(const std::string& name) {
    for (size_t i = 0; i < std::size(kCapabilityNames); ++i) {
        if (name == kCapabilityNames[i]) {
            return static_cast<Capability>(i);
        }
    }
    return Capability::Count;
}

void MethodInfo::setImageInput(const std::vector<int64_t>& sizes) {
    imageWidth = imageHeight = 0;
    if (sizes.size() == 4 && (sizes[1] == 1 || sizes[1] == 3) && sizes[2] > 0 && sizes[3] > 0 &&
        sizes[2] <= std::numeric_limits<int>::max() &&
        sizes[3] <= std::numeric_limits<int>::max()) {
        imageHeight = static_cast<int>(sizes[2]);
        imageWidth = static_cast<int>(sizes[3]);
    }
}

void ModelInfo::sumTotals() {
    // Bottom-up: in pre-order, children follow their parent.
    for (auto it = modules.rbegin(); it != modules.rend(); ++it) {
        it->totalParameterCount += it->parameterCount;
        for (const auto& t : it->parameters) {
            it->totalBytes += t.bytes;
        }
        for (const auto& t : it->buffers) {
            it->totalBytes += t.bytes;
            bufferBytes += t.bytes;
        }
        parameterCount += it->parameterCount;
        parameterBytes += it->parameterBytes;
        methodCount += it->methods.size();
        for (const auto& childPath : it->children) {
            if (const auto* child = findModule(childPath)) {
                it->totalParameterCount += child->totalParameterCount;
                it->totalBytes += child->totalBytes;
            }
        }
    }
}

} // namespace scriptscope
