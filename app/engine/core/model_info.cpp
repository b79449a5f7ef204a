#include "model_info.h"

namespace scriptscope {

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
