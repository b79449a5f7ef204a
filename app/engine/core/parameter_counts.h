// A module's own parameter count and bytes, from the tensors it lists: what the formats whose
// readers list tensors (torch.export, ExecuTorch, format libraries) count with, before
// ModelInfo::sumTotals sums them up the tree.
#pragma once

#include "model_info.h"

#include <algorithm>
#include <cstdint>

namespace scriptscope {

// The elements of a tensor of `t`'s shape; a size below 0 (a symbol's) counts as 0.
inline uint64_t elementCount(const TensorInfo& t) {
    uint64_t count = 1;
    for (const int64_t size : t.shape) {
        count *= static_cast<uint64_t>(std::max<int64_t>(size, 0));
    }
    return count;
}

// Sets `module`'s parameterCount and parameterBytes from its parameters.
inline void countOwnParameters(ModuleInfo& module) {
    module.parameterCount = module.parameterBytes = 0;
    for (const TensorInfo& t : module.parameters) {
        module.parameterCount += elementCount(t);
        module.parameterBytes += t.bytes;
    }
}

} // namespace scriptscope
