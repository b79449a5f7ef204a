// The memory limit of the processes that load and run models (the CLI's child, the GUI's worker).
#pragma once

#include <cstdint>
#include <string>

namespace scriptscope {

// Three quarters of physical memory, in bytes; 0 when it cannot be read.
uint64_t defaultMemoryLimit();

// Limits the calling process's address space (RLIMIT_AS) to `bytes`; 0 leaves it unlimited.
// In an AddressSanitizer build (the asan preset) this does nothing: see sanitizerMemoryOptions.
void applyMemoryLimit(uint64_t bytes);

// False in sanitizer builds, whose shadow memory needs terabytes of address space.
bool addressSpaceLimitSupported();
// In sanitizer builds, the ASAN_OPTIONS that give a child process the memory limit instead (an
// RSS limit past which allocations fail); empty otherwise.
std::string sanitizerMemoryOptions(uint64_t bytes);

} // namespace scriptscope
