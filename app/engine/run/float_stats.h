// The statistics of a span of float32 values in two passes, written so that the compiler
// vectorizes them (float_stats.cpp is built with -O3): the value tap takes them after every node
// a recorded run computes, over every element, so they are most of what observing a run costs.
// The engine runs them over chunks in parallel.
#pragma once

#include <cstdint>
#include <limits>

namespace scriptscope {

struct FloatSummary {
    float min = std::numeric_limits<float>::infinity(); // of the finite values
    float max = -std::numeric_limits<float>::infinity();
    double sum = 0;
    int64_t finite = 0, nan = 0, inf = 0;
};

// Pass 1: min, max and sum of the finite values, and how many are finite, NaN or infinite.
FloatSummary summarizeFloats(const float* data, int64_t n);

// Pass 2: adds each finite value to counts[bin] (bins equal bins from lo, `scale` bins per unit,
// the last one closed) and returns the sum of the finite values' squared deviations from mean.
// allFinite: pass 1 found no NaN or Inf, so none is looked for.
double histogramFloats(const float* data, int64_t n, float lo, float scale, int bins, float mean,
                       bool allFinite, int64_t* counts);

} // namespace scriptscope
