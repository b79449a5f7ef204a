// Plain value structs for "where do the numbers go wrong": every value a run computed (the
// activation inspector), optimisation passes applied to a copy of the model (the pass explorer)
// and two archives compared. No LibTorch, no Qt: the engine fills them, the CLI, the protocol and
// the GUI read them.
#pragma once

#include "run_types.h"
#include "text_diff.h"
#include "verdict.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

// ---- Activations ----

// The last value each module returned in one run of a model (what a forward hook keeps), held in
// the engine for another model's run to be compared with, module output by module output. Opaque
// here: its tensors are LibTorch's (engine_internal.h defines it).
struct ModuleValues;

struct ActivationRequest {
    RunRequest run; // method, inputs (or inputsFile) and device; warm-up and iterations unused
    int bins = 32;  // histogram bins over each value's finite range
    // Values kept whole (float32, every occurrence), by the GraphModel node id that computed them
    // (-1: the method's inputs), up to pinBytes in all.
    std::vector<int> pinNodes;
    uint64_t pinBytes = uint64_t{256} << 20;
    // Compare, node by node, with a second run of the same model and inputs on this device.
    std::string compareDevice;
    // Or with a second run of other inputs (and device): before and after a warp or an input
    // change. Its method is the run's.
    std::optional<RunRequest> compareRun;
    // Compare with values saved from Python: torch.save of a dict from module paths to tensors,
    // each matched to the output of the module with that path.
    std::string referenceFile;
    // Compare with another archive run on the same inputs, module output by module output.
    std::string referenceModel;
    std::vector<std::string> referenceOperatorLibraries; // loaded before the reference model
    // The reference model's module outputs once it ran (any format): what referenceModel gives,
    // filled in by the model layer (resolveReference), never sent over the protocol.
    std::shared_ptr<const ModuleValues> referenceValues;
    Criterion criterion; // when two values agree (verdict.h)
    // A second run on the same device keeps every value (the first run's values held) in at most
    // this many bytes; beyond it, later values are not compared (a note says so).
    uint64_t compareBytes = uint64_t{4} << 30;
};

// One tensor value computed by one node (or a method input), at one occurrence: a node in a loop
// computes a value per iteration, a module called twice computes its values twice.
struct ActivationRecord {
    int node = -1;      // GraphModel node id of the method's inlined graph; -1: an input
    int occurrence = 0; // 0 for the first time this node ran, 1 for the second, ...
    int output = 0;     // which output of the node
    std::string value;  // the value's debug name, as the inlined graph's IR prints it
    std::string kind;   // "aten::conv2d"; "input" for a method input
    std::string module; // module path of the node (its call stack, or where it is drawn)
    // The modules whose output this value is (a Sequential and its last child share one).
    std::vector<std::string> moduleOutputs;
    std::string source;     // "file:line" of the code that made the node, where known
    std::string sourceText; // that line's first text
    int irLine = 0;         // the node's line in the inlined graph's IR text
    // The tensor
    std::vector<int64_t> shape;
    std::string dtype;
    std::string device;
    int64_t numel = 0;
    double min = 0, max = 0, mean = 0, stddev = 0; // over the finite values
    int64_t nanCount = 0, infCount = 0;
    double histogramMin = 0, histogramMax = 0;
    std::vector<int64_t> histogram; // counts of finite values in equal bins from min to max
    std::string note;               // why there are no statistics (sparse, undefined, ...)
    // Comparison (ActivationRequest::compareDevice / referenceFile / referenceModel)
    bool compared = false;
    double maxAbsDiff = 0;
    double maxRelDiff = 0;    // maxAbsDiff over the reference's largest |value| (finite values)
    double cosine = 1;        // cosine similarity of the two, flattened
    double snrDb = 0;         // 10 log10(|reference|^2 / |difference|^2); infinite when equal
    std::string comparedWith; // "cuda:0", "features.3 in FILE", ...
    // Against another model: the node of that model's records' graph (its forward as the
    // diagram draws it inlined) that made the value compared with; -1 where none is known.
    int referenceNode = -1;
    std::string compareNote;   // why it could not be compared (shape differs, ...)
    std::vector<float> values; // ActivationRequest::pinNodes only
    // Memory, where the run can say it (an exported program's interpreted run, a TorchScript
    // run): the value's own bytes; the bytes of the storage it made first (0 for a view of an
    // earlier value's storage, an in-place result or a weight); the step that made it and the
    // last step that reads its storage (the run's step count: it is an output). A TorchScript
    // run's steps are its values in the order they are made.
    uint64_t bytes = 0;
    uint64_t storageBytes = 0;
    int madeAt = -1;
    int lastUseAt = -1;

    bool nonFinite() const { return nanCount > 0 || infCount > 0; }
};

// The bytes a run holds, step by step: every storage a value made, alive from the step that made
// it to the last step that reads it (or any view of it). Inputs and weights, held by the caller,
// are not counted.
struct MemoryTimeline {
    bool known = false; // false: this format's run cannot say (the note says why)
    std::string note;   // known: how the values were followed, where not by their last readers
    std::vector<uint64_t> liveBytes; // per step of the run
    int peakStep = -1;
    uint64_t peakBytes = 0;
    std::vector<int> peakRecords; // the records whose storages are alive at the peak
};

// A comparison with another model whose values could not be matched (an AOTInductor package
// saved without its program shows none): both ran on the same inputs, their outputs and p50s.
struct OutputsOnly {
    std::string why; // why the values were not matched; empty: this is not such a report
    OutputComparison outputs;
    double p50Ms = 0;      // the shown model's
    double otherP50Ms = 0; // the other's
    int runs = 0;          // timed runs of each
};

struct ActivationReport {
    std::string model;
    std::string method;
    std::string device;
    std::vector<ActivationRecord> records; // in execution order
    int firstNonFinite = -1; // index into records: the first value with a NaN or an Inf
    std::vector<int> firstNonFiniteInputs; // indices into records: the values that node read
    // index into records: the first compared value the criterion calls apart
    int firstDifference = -1;
    std::string comparison; // what the run was compared with, in words; empty: nothing
    Criterion criterion;
    int comparedCount = 0;
    // The reference's module outputs, one per call ("layer1.0.relu (call 2 of 2)"), that no
    // value matched (referenceFile / referenceModel), of referenceCount in all.
    std::vector<std::string> unmatched;
    int referenceCount = 0;
    // Compared with another model: both final outputs, at the same places of their structures.
    OutputComparison outputs;
    // Values matched by the name of the export node that made them, on both sides, where no
    // module output matched (two exports, a .pte and its export).
    int operatorsMatched = 0;
    std::vector<std::string> notes;
    double runMs = 0; // the instrumented run, statistics included
    uint64_t pinnedBytes = 0;
    OutputValue output;
    MemoryTimeline memory;
    OutputsOnly outputsOnly; // a comparison by outputs alone (records then empty)
};

// A compared record's measures, as verdict.h's agrees() and failedMeasures() take them.
ValueDifference differenceOf(const ActivationRecord& record);

// What a comparison's report says in one word, and why: with another model, the final outputs
// must have been compared (their structures alike) for "same" or "differ", and "same" needs every
// compared value and output to agree; with values from a file or a second run, at least one value
// compared.
struct ComparisonVerdict {
    Verdict verdict = Verdict::CouldNotCompare;
    std::string why;
};
ComparisonVerdict verdictOf(const ActivationReport& report);

// ---- Passes ----

struct OptimizeRequest {
    // In order: "freeze", "optimize-for-inference", "fold-conv-bn", "constant-propagation",
    // "dead-code-elimination", "common-subexpression-elimination", "peephole", "remove-dropout",
    // "fuse-linear". Applied to a copy: the loaded model is unchanged.
    std::vector<std::string> passes;
    RunRequest run;       // inputs, device, warmup (at least 3), iterations; no inputs: not timed
    std::string savePath; // written, then loaded back and run once on the inputs (if any)
    bool keepUnloadable = false; // keep a saved copy that does not load or run
    double tolerance = 1e-4;     // module outputs differing by more are named
};

struct KindCount {
    std::string kind;
    int before = 0;
    int after = 0;
};

struct OptimizeResult {
    std::string method;
    std::vector<std::string> applied;
    std::string graphBefore; // the original method's inlined graph, as Python prints it
    std::string graphAfter;  // the optimised copy's graph
    std::vector<DiffLine> graphDiff;
    int nodesBefore = 0, nodesAfter = 0;
    std::vector<KindCount> kinds; // by kind, every kind present before or after
    bool timed = false;
    TimingStats before, after;
    double speedup = 0; // before.p50 / after.p50
    bool outputsCompared = false;
    double maxAbsDiff = 0;
    std::string compareNote;
    // Module outputs compared (the copy run through the activation probes, where its nodes still
    // know their modules), in the copy's execution order.
    struct ModuleDelta {
        std::string module;
        double maxAbsDiff = 0;
    };
    std::vector<ModuleDelta> modules;
    std::string firstDifferentModule; // beyond `tolerance`; empty: none
    double tolerance = 1e-4;
    std::string saved;          // the path written, when savePath was given and it could be written
    bool savedVerified = false; // the file was loaded back (and run once when there were inputs)
    std::string saveError;      // why the copy was not saved or is unusable; empty: fine
    std::vector<std::string> notes;
};

// Names and order of the passes OptimizeRequest takes, with a line about each.
struct PassInfo {
    std::string name;
    std::string description;
};
const std::vector<PassInfo>& availablePasses();

// ---- Two archives ----

struct ModuleChange {
    std::string path;
    enum class Kind { Added, Removed, Retyped } kind = Kind::Added;
    std::string typeA, typeB;
};

struct TensorChange {
    std::string name; // "fc.weight"
    enum class Kind { Added, Removed, Values, Shape, Dtype } kind = Kind::Values;
    bool buffer = false;
    std::vector<int64_t> shapeA, shapeB;
    std::string dtypeA, dtypeB;
    double maxAbsDiff = 0;
    int64_t differing = 0; // elements that differ
    int64_t numel = 0;
};

struct TextChange {
    std::string module; // module path
    std::string method;
    std::string what; // "code" or "graph"
    std::vector<DiffLine> lines;
    int added = 0, removed = 0;
};

struct AttributeChange {
    std::string module;
    std::string name;
    std::string valueA, valueB; // "" where absent
};

struct ExtraFileChange {
    std::string name;
    std::string change; // "added", "removed", "changed"
};

struct ArchiveDiff {
    std::string pathA, pathB;
    std::string formatA, formatB; // ModelInfo::format of each side
    // Two formats (a TorchScript archive and its export): only the module trees and the
    // parameters and buffers are compared; code, graphs, attributes and extra files differ by
    // nature.
    bool treeAndTensorsOnly = false;
    bool identical = true;
    std::vector<ModuleChange> modules;
    std::vector<TensorChange> tensors;
    std::vector<AttributeChange> attributes;
    std::vector<TextChange> texts;
    std::vector<ExtraFileChange> extraFiles;
    int tensorsCompared = 0;
    double loadMsA = 0, loadMsB = 0, diffMs = 0;
};

// The same comparison seen from the other side: A and B swap, added is removed.
ArchiveDiff reversed(ArchiveDiff diff);

const char* toString(ModuleChange::Kind kind);
const char* toString(TensorChange::Kind kind);

} // namespace scriptscope
