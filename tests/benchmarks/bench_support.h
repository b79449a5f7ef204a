// What the benchmarks share: a clock in milliseconds and the median of samples.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace scriptscope::bench {

using Clock = std::chrono::steady_clock;

inline double milliseconds(Clock::time_point since) {
    return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty()      ? 0
           : v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

} // namespace scriptscope::bench
