#include "float_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace scriptscope {

namespace {

constexpr int kLanes = 16;      // independent accumulators: one vector register's worth or two
constexpr int64_t kBlock = 512; // a multiple of kLanes; a lane's float sum never runs longer

bool special(float v) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7f800000U) == 0x7f800000U; // NaN or +-Inf
}

// What the vector loops assume away: any value may be NaN or infinite.
FloatSummary summarizeEach(const float* data, int64_t n) {
    FloatSummary s;
    float sum = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float v = data[i];
        if (std::isfinite(v)) {
            s.min = std::min(s.min, v);
            s.max = std::max(s.max, v);
            sum += v;
        } else {
            ++bad;
            s.nan += std::isnan(v) ? 1 : 0;
        }
    }
    s.sum = sum;
    s.inf = bad - s.nan;
    s.finite = n - bad;
    return s;
}

int binOf(float v, float lo, float scale, int bins) {
    // Compared before converting: no float outside int's range, nor NaN (0 times an infinite
    // scale, where the range is a denormal), is converted; NaN counts in bin 0.
    const float x = (v - lo) * scale;
    return x >= static_cast<float>(bins - 1) ? bins - 1 : (x > 0 ? static_cast<int>(x) : 0);
}

} // namespace

FloatSummary summarizeFloats(const float* data, int64_t n) {
    float mn[kLanes], mx[kLanes];
    uint32_t odd[kLanes] = {};
    std::fill(mn, mn + kLanes, std::numeric_limits<float>::infinity());
    std::fill(mx, mx + kLanes, -std::numeric_limits<float>::infinity());
    double total = 0;
    const int64_t whole = n - n % kLanes;
    for (int64_t i = 0; i < whole;) {
        const int64_t end = std::min(whole, i + kBlock);
        float sm[kLanes] = {};
        for (; i < end; i += kLanes) {
            for (int k = 0; k < kLanes; ++k) {
                const float v = data[i + k];
                mn[k] = v < mn[k] ? v : mn[k];
                mx[k] = v > mx[k] ? v : mx[k];
                sm[k] += v;
                odd[k] |= special(v) ? 1U : 0U;
            }
        }
        for (int k = 0; k < kLanes; ++k) {
            total += static_cast<double>(sm[k]);
        }
    }
    bool clean = std::none_of(odd, odd + kLanes, [](uint32_t b) { return b != 0; });
    for (int64_t i = whole; i < n && clean; ++i) {
        clean = !special(data[i]);
    }
    if (!clean) {
        return summarizeEach(data, n);
    }
    FloatSummary s;
    for (int k = 0; k < kLanes; ++k) {
        s.min = std::min(s.min, mn[k]);
        s.max = std::max(s.max, mx[k]);
    }
    for (int64_t i = whole; i < n; ++i) {
        s.min = std::min(s.min, data[i]);
        s.max = std::max(s.max, data[i]);
        total += static_cast<double>(data[i]);
    }
    s.sum = total;
    s.finite = n;
    return s;
}

double histogramFloats(const float* data, int64_t n, float lo, float scale, int bins, float mean,
                       bool allFinite, int64_t* counts) {
    if (!allFinite) {
        float sq = 0;
        for (int64_t i = 0; i < n; ++i) {
            const float v = data[i];
            if (!std::isfinite(v)) {
                continue;
            }
            const float d = v - mean;
            sq += d * d;
            ++counts[binOf(v, lo, scale, bins)];
        }
        return static_cast<double>(sq);
    }
    // Bins worked out a block at a time (vectorized), then counted into four histograms in turn,
    // so that two values in one bin do not wait on each other's increment.
    std::vector<int64_t> parts(static_cast<size_t>(bins) * 4, 0);
    int32_t index[kBlock];
    double total = 0;
    for (int64_t i = 0; i < n; i += kBlock) {
        const int64_t m = std::min(kBlock, n - i);
        const float* block = data + i;
        float sq[kLanes] = {};
        const int64_t whole = m - m % kLanes;
        for (int64_t j = 0; j < whole; j += kLanes) {
            for (int k = 0; k < kLanes; ++k) {
                const float v = block[j + k];
                const float d = v - mean;
                sq[k] += d * d;
                index[j + k] = binOf(v, lo, scale, bins);
            }
        }
        for (int64_t j = whole; j < m; ++j) {
            const float d = block[j] - mean;
            sq[0] += d * d;
            index[j] = binOf(block[j], lo, scale, bins);
        }
        for (int k = 0; k < kLanes; ++k) {
            total += static_cast<double>(sq[k]);
        }
        int64_t j = 0;
        for (; j + 4 <= m; j += 4) {
            ++parts[static_cast<size_t>(index[j])];
            ++parts[static_cast<size_t>(bins + index[j + 1])];
            ++parts[static_cast<size_t>(2 * bins + index[j + 2])];
            ++parts[static_cast<size_t>(3 * bins + index[j + 3])];
        }
        for (; j < m; ++j) {
            ++parts[static_cast<size_t>(index[j])];
        }
    }
    for (int b = 0; b < bins; ++b) {
        counts[b] += parts[static_cast<size_t>(b)] + parts[static_cast<size_t>(bins + b)] +
                     parts[static_cast<size_t>(2 * bins + b)] +
                     parts[static_cast<size_t>(3 * bins + b)];
    }
    return total;
}

} // namespace scriptscope
