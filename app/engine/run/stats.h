// Timing statistics. Percentiles interpolate linearly between order statistics, as NumPy's
// default does, so numbers agree with what people compute in Python.
#pragma once

#include "run_types.h"

#include <vector>

namespace scriptscope {

double percentile(std::vector<double> samples, double q); // q in [0, 100]
TimingStats computeStats(const std::vector<double>& samples);

struct Histogram {
    double lower = 0;
    double binWidth = 0;
    std::vector<size_t> counts;
};
// `bins` equal-width bins over [min, max]; the maximum falls into the last bin (like NumPy).
Histogram histogram(const std::vector<double>& samples, size_t bins);

} // namespace scriptscope
