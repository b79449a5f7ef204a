#include "process_limits.h"

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

void applyMemoryLimit(uint64_t bytes) {
    if (bytes == 0) {
        return;
    }
    rlimit limit{};
    limit.rlim_cur = bytes;
    limit.rlim_max = bytes;
    ::setrlimit(RLIMIT_AS, &limit);
}

} // namespace scriptscope
