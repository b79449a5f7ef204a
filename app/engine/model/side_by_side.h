// Two models run on the same inputs, compared by their outputs: what `diff` of a model and its
// twin in another format reports, and what a comparison falls back to where the values inside
// cannot be matched (an AOTInductor package saved without its program): the CLI's `compare` and
// the GUI's Compare tab.
#pragma once

#include "model.h"

#include <optional>

namespace scriptscope {

// Both runs (empty when nothing ran: no inputs, or a side cannot run; outputs.note says why).
struct SideBySide {
    std::optional<RunResult> runA, runB;
    OutputComparison outputs;
};

// Both run `request` (its inputs, or with none the example inputs one of them keeps), their
// outputs compared by `criterion` (b's as the reference).
Expected<SideBySide> runSideBySide(const RunRequest& request, Model& a, Model& b,
                                   const Criterion& criterion);

// The reason a model's values cannot be seen where it still runs; empty otherwise.
std::string valuesUnseen(const Model& model);

// `model`'s activations as `request` asks. Compared with another model (referenceModel) whose
// values, or this one's, cannot be seen though both run: the outputs and p50s of both on the same
// inputs instead (ActivationReport::outputsOnly).
Expected<ActivationReport> activationsOrOutputs(Model& model, const ActivationRequest& request);

} // namespace scriptscope
