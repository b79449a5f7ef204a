// What "the same" means when two models' values are compared, and the verdict a comparison gives.
// No LibTorch, no Qt: the engine measures, the CLI, the protocol and the GUI read the same numbers
// and apply the same criterion.
//
// A value agrees with its reference when
//   max |diff| <= atol                                       (an absolute floor, 0 unless given)
//   or  max |diff| / max |reference| <= rtol  and  SNR >= minSnrDb  and  cosine >= minCosine.
// The relative measures survive small outputs: an absolute 1e-4 calls two logits of 1e-9 equal
// even when one of them is all zeros (cosine 0, SNR 0 dB). NaN equals NaN and equal infinities
// are equal; NaN against a number is infinitely far.
#pragma once

#include "run_types.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace scriptscope {

struct Criterion {
    double atol = 0;           // max |diff| at most this is equal whatever else (0: no floor)
    double rtol = 1e-3;        // max |diff| over the reference's largest |value|
    double minSnrDb = 40;      // 10 log10(|reference|^2 / |difference|^2)
    double minCosine = 0.9999; // cosine similarity, flattened
};

// "max rel <= 0.001, SNR >= 40 dB, cosine >= 0.9999" (", or max |diff| <= 1e-05" with an atol).
std::string describe(const Criterion& criterion);

// How far a value is from its reference, over its elements.
struct ValueDifference {
    double maxAbsDiff = 0;
    double maxRelDiff = 0; // maxAbsDiff over the reference's largest finite |value|
    double cosine = 1;
    double snrDb = 0;       // infinite when equal
    int64_t largestAt = -1; // flat index of the largest |diff|; -1 when equal
};
// `value` against `reference`, n float32 elements each.
ValueDifference measure(const float* value, const float* reference, size_t n);

// Whether the numbers pass, and the measures that fail when they do not ("SNR 12.3 dB < 40 dB").
bool agrees(double maxAbsDiff, double maxRelDiff, double cosine, double snrDb,
            const Criterion& criterion);
bool agrees(const ValueDifference& d, const Criterion& criterion);
std::string failedMeasures(const ValueDifference& d, const Criterion& criterion);

// The verdict of compare and diff, with its exit status in the CLI (scriptscope-cli(1)).
enum class Verdict {
    Same,           // everything compared agrees: exit 0
    Differ,         // something compared does not: exit 1
    CouldNotCompare // too little could be compared to say (no outputs compared, structures
                    // differ): exit 7
};
const char* toString(Verdict verdict); // "same", "differ", "could not compare"

// One tensor of two models' outputs, at the same place of both structures.
struct OutputLeafComparison {
    std::string where; // "output", "output[1]", "output['out']"
    std::vector<int64_t> shape, referenceShape;
    bool compared = false;
    std::string note; // why not compared; or where the largest difference is
    ValueDifference difference;
    bool agrees = false;
};

// Two models' final outputs on the same inputs: their structures, and each tensor compared.
struct OutputComparison {
    bool compared = false; // the structures matched and every tensor was compared
    std::string note;      // why not compared; empty when compared
    std::string structure, referenceStructure; // "{'out': T}", "(T, T)", "T"
    std::vector<OutputLeafComparison> leaves;
    bool agrees = false;   // compared, and every leaf agrees
    double maxAbsDiff = 0; // over the leaves
    double worstSnrDb = 0; // the lowest leaf SNR
    double worstCosine = 1;
    int firstDisagreeing = -1; // index into leaves
};

// How many elements of one output tensor a comparison keeps (as float32, RunRequest::valuesLimit):
// a larger one is named as not compared.
constexpr size_t kComparedOutputValues = size_t{64} << 20;

// The structure of an output as one line: T for a tensor, (..) a tuple, [..] a list, {'k': ..} a
// dict, a scalar's type, None.
std::string structureText(const OutputValue& value);

// The tensors of `value` and `reference` (both with their values, RunRequest::valuesLimit)
// compared at the same places: the structures must match (tuples and lists alike, dict keys by
// name), else nothing is compared and `note` says where they part.
OutputComparison compareOutputs(const OutputValue& value, const OutputValue& reference,
                                const Criterion& criterion);

} // namespace scriptscope
