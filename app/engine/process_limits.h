// The memory limit of the processes that load and run models (the CLI's child, the GUI's worker).
#pragma once

#include <cstdint>

namespace scriptscope {

// Three quarters of physical memory, in bytes; 0 when it cannot be read.
uint64_t defaultMemoryLimit();

// Limits the calling process's address space (RLIMIT_AS) to `bytes`; 0 leaves it unlimited.
void applyMemoryLimit(uint64_t bytes);

} // namespace scriptscope
