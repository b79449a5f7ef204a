#include "stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace scriptscope {

double percentile(std::vector<double> samples, double q) {
    if (samples.empty()) {
        return 0.0;
    }
    std::sort(samples.begin(), samples.end());
    const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(samples.size() - 1);
    const auto below = static_cast<size_t>(std::floor(rank));
    const auto above = std::min(below + 1, samples.size() - 1);
    const double fraction = rank - static_cast<double>(below);
    return samples[below] + (samples[above] - samples[below]) * fraction;
}

TimingStats computeStats(const std::vector<double>& samples) {
    TimingStats stats;
    stats.count = samples.size();
    if (samples.empty()) {
        return stats;
    }
    const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
    stats.min = *lo;
    stats.max = *hi;
    stats.p50 = percentile(samples, 50);
    stats.p90 = percentile(samples, 90);
    stats.p99 = percentile(samples, 99);
    stats.mean =
        std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
    double squares = 0;
    for (const double s : samples) {
        squares += (s - stats.mean) * (s - stats.mean);
    }
    stats.stddev = std::sqrt(squares / static_cast<double>(samples.size()));
    return stats;
}

Histogram histogram(const std::vector<double>& samples, size_t bins) {
    Histogram h;
    if (samples.empty() || bins == 0) {
        return h;
    }
    const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
    h.lower = *lo;
    const double range = *hi - *lo;
    h.binWidth = range > 0 ? range / static_cast<double>(bins) : 1.0;
    h.counts.assign(bins, 0);
    for (const double s : samples) {
        auto bin = static_cast<size_t>((s - h.lower) / h.binWidth);
        h.counts[std::min(bin, bins - 1)]++;
    }
    return h;
}

} // namespace scriptscope
