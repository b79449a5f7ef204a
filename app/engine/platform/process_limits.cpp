#include "process_limits.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace scriptscope {

namespace {

// The environment variable that carries a Resident limit across exec().
constexpr const char* kInheritedLimit = "SCRIPTSCOPE_RESIDENT_MEMORY_LIMIT";

uint64_t residentBytes() {
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (!statm) {
        return 0;
    }
    unsigned long long size = 0, resident = 0;
    const int read = std::fscanf(statm, "%llu %llu", &size, &resident);
    std::fclose(statm);
    return read == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE)) : 0;
}

void watchResidentMemory(uint64_t bytes) {
    std::thread([bytes]() {
        for (;;) {
            if (residentBytes() > bytes) {
                char message[160];
                const int n = std::snprintf(message, sizeof message,
                                            "scriptscope: the memory limit of %llu MiB was hit\n",
                                            static_cast<unsigned long long>(bytes >> 20));
                (void)!::write(STDERR_FILENO, message, static_cast<size_t>(n));
                ::_exit(kMemoryLimitExitCode);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }).detach();
}

} // namespace

uint64_t defaultMemoryLimit() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0) {
        return 0;
    }
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) / 4 * 3;
}

MemoryLimitKind memoryLimitKind() {
#if defined(__SANITIZE_ADDRESS__)
    return MemoryLimitKind::Sanitizer; // the shadow memory needs terabytes of address space
#elif defined(SCRIPTSCOPE_RESIDENT_MEMORY_LIMIT)
    return MemoryLimitKind::Resident;
#else
    return MemoryLimitKind::AddressSpace;
#endif
}

bool addressSpaceLimitSupported() {
    return memoryLimitKind() == MemoryLimitKind::AddressSpace;
}

std::string sanitizerMemoryOptions(uint64_t bytes) {
    if (memoryLimitKind() != MemoryLimitKind::Sanitizer || bytes == 0) {
        return {};
    }
    // Past the limit, allocations fail (c10 raises "can't allocate memory") as with RLIMIT_AS.
    return "allocator_may_return_null=1:soft_rss_limit_mb=" + std::to_string(bytes >> 20);
}

void applyMemoryLimit(uint64_t bytes) {
    if (bytes == 0) {
        return;
    }
    switch (memoryLimitKind()) {
    case MemoryLimitKind::AddressSpace: {
        rlimit limit{};
        limit.rlim_cur = bytes;
        limit.rlim_max = bytes;
        ::setrlimit(RLIMIT_AS, &limit);
        break;
    }
    case MemoryLimitKind::Resident:
        ::setenv(kInheritedLimit, std::to_string(bytes).c_str(), 1);
        watchResidentMemory(bytes);
        break;
    case MemoryLimitKind::Sanitizer:
        break;
    }
}

void continueMemoryLimit() {
    if (memoryLimitKind() != MemoryLimitKind::Resident) {
        return;
    }
    if (const char* text = std::getenv(kInheritedLimit)) {
        const uint64_t bytes = std::strtoull(text, nullptr, 10);
        if (bytes > 0) {
            watchResidentMemory(bytes);
        }
    }
}

} // namespace scriptscope
