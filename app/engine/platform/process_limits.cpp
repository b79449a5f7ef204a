#include "process_limits.h"

#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace scriptscope {

uint64_t defaultMemoryLimit() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0) {
        return 0;
    }
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) / 4 * 3;
}

bool addressSpaceLimitSupported() {
#if defined(__SANITIZE_ADDRESS__)
    return false; // the sanitizer's shadow memory needs terabytes of address space
#else
    return true;
#endif
}

std::string sanitizerMemoryOptions(uint64_t bytes) {
    if (addressSpaceLimitSupported() || bytes == 0) {
        return {};
    }
    // Past the limit, allocations fail (c10 raises "can't allocate memory") as with RLIMIT_AS.
    return "allocator_may_return_null=1:soft_rss_limit_mb=" + std::to_string(bytes >> 20);
}

void applyMemoryLimit(uint64_t bytes) {
    if (bytes == 0 || !addressSpaceLimitSupported()) {
        return;
    }
    rlimit limit{};
    limit.rlim_cur = bytes;
    limit.rlim_max = bytes;
    ::setrlimit(RLIMIT_AS, &limit);
}

} // namespace scriptscope
