// The memory limit of the processes that load and run models (the CLI's child, the GUI's worker).
#pragma once

#include <cstdint>
#include <string>

namespace scriptscope {

// Three quarters of physical memory, in bytes; 0 when it cannot be read.
uint64_t defaultMemoryLimit();

// How the limit is kept:
//  - AddressSpace (Debian's CPU LibTorch): RLIMIT_AS; allocations past it fail, and LibTorch says
//    "can't allocate memory", which the engine reports as OutOfMemory.
//  - Resident (a CUDA LibTorch): its libraries alone map gigabytes, and CUDA reserves virtual
//    memory for the GPU, so no address space limit fits. A thread watches the resident memory and
//    ends the process with kMemoryLimitExitCode past the limit.
//  - Sanitizer (the asan preset): an RSS limit in ASAN_OPTIONS (sanitizerMemoryOptions).
enum class MemoryLimitKind { AddressSpace, Resident, Sanitizer };
MemoryLimitKind memoryLimitKind();

// The exit status of a process that the Resident limit ended.
constexpr int kMemoryLimitExitCode = 86;

// Limits the calling process to `bytes` (0: unlimited), as memoryLimitKind() says. A Resident limit
// set before exec() cannot survive it (the watching thread goes): it is passed on in the
// environment, and continueMemoryLimit() in the new program takes it up.
void applyMemoryLimit(uint64_t bytes);
void continueMemoryLimit();

// True where the limit is RLIMIT_AS, and allocations past it fail with a message.
bool addressSpaceLimitSupported();
// In sanitizer builds, the ASAN_OPTIONS that give a child process the memory limit instead (an
// RSS limit past which allocations fail); empty otherwise.
std::string sanitizerMemoryOptions(uint64_t bytes);

} // namespace scriptscope
