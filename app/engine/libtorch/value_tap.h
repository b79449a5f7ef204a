// Internal to the engine's LibTorch files (includes LibTorch): the value tap's records of every
// value one run computes, whatever runs it (a TorchScript graph's taps, graph_tap.h; the .pt2
// interpreter's nodes; a .pte's outputs), shared by the activation inspector, the pass explorer
// and the comparison of two models.
#pragma once

#include "engine_internal.h"
#include "graph_model.h"
#include "run_memory.h"

#include <torch/script.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace scriptscope::detail {

// One place a tap watches: a tensor output of one node.
struct Site {
    int node = -1; // GraphModel node id; -1: a method input
    int output = 0;
    std::string value;
    bool pinned = false;
    // Reference to compare with (a module output's value saved elsewhere), or undefined.
    at::Tensor reference;
    std::string referenceName;
    int referenceNode = -1; // the node of the other model's records' graph that made it
    // The names of the torch.export node whose output this is, newest first (a .pt2's node; the
    // node a .pte's kernel or delegate call was lowered from): another export's operator outputs
    // are matched by these where no module output matches.
    std::vector<std::string> operators;
    // The module the node runs in and its operator without namespace, overload or in-place mark
    // ("relu" for aten::relu_ and aten.relu.default); empty op for what computes nothing
    // (prim::GetAttr, a placeholder). Values no name matches are matched by the order of these
    // operators inside their module, where both models run the same ones there.
    std::string module;
    std::string op;
};

// An operator's kind as two formats of one model name it alike: "aten::relu_",
// "aten::relu.default" -> "relu"; "" for prim:: nodes (attributes, constants, lists).
std::string comparableOperator(const std::string& kind);
// The site's module and comparable operator from its node in `model`.
void placeSite(Site& site, const GraphModel& model);

using OccurrenceKey = std::pair<int, int>; // site, occurrence

struct TapRun {
    std::vector<Site> sites;
    std::vector<int> occurrences; // per site
    int bins = 32;
    std::vector<ActivationRecord> records;
    // (site, occurrence) -> record index
    std::map<OccurrenceKey, size_t> index;
    uint64_t pinBudget = 0;
    uint64_t pinnedBytes = 0;
    bool pinOverflow = false;
    // Keeping every value, for a second run to compare with
    bool keepAll = false;
    uint64_t keepBudget = 0;
    uint64_t keptBytes = 0;
    bool keepOverflow = false;
    std::map<OccurrenceKey, at::Tensor> kept;
    // Comparing with a first run's kept values
    const std::map<OccurrenceKey, at::Tensor>* against = nullptr;
    std::map<OccurrenceKey, ActivationRecord> differences; // the comparison fields only
    // Keeping module outputs (for another model to be compared with): path -> each call's
    // value, up to moduleBudget bytes.
    std::vector<std::vector<std::string>> siteModules;
    bool keepModuleOutputs = false;
    std::map<std::string, std::vector<ModuleCall>> moduleOutputs;
    uint64_t moduleBudget = uint64_t{2} << 30;
    uint64_t moduleBytes = 0;
    bool moduleOverflow = false;
    // Comparing module outputs with another model's (or a file's), call by call: the k-th value
    // that is an output of a module path against the reference's k-th output of that path (a
    // file's one value against the last call's). How many outputs each path has made so far, the
    // reference calls matched, and the records compared through a site's own reference
    // (Site::reference: a node's name, an operator's place in its module).
    const ModuleValues* reference = nullptr;
    std::map<std::string, int> moduleCalls;
    std::set<std::pair<std::string, int>> matchedCalls;
    std::map<std::string, size_t> lastCallRecord; // a file's references: the record compared
    std::set<size_t> siteCompared;
    // And operator outputs (by the first of each site's operators), up to operatorBudget bytes.
    bool keepOperatorOutputs = false;
    uint64_t operatorBudget = uint64_t{1} << 30;
    uint64_t operatorBytes = 0;
    bool operatorOverflow = false;
    std::map<std::string, at::Tensor> operatorOutputs;
    std::map<std::string, int> operatorNodes;
    // And each module's operator outputs in graph order (site -> op, last value and node), in the
    // same budget.
    std::map<std::string, std::map<int, PlacedValue>> moduleOperators;
    // Following each value's storage until the interpreter lets it go (a TorchScript run's
    // memory timeline), or null.
    MemoryWatch* memory = nullptr;
};

// What a reference's recording keeps for another model to be matched with: the module outputs,
// the operator outputs by name and by their order in each module, and the run's final output.
void keepInto(TapRun& run, const c10::IValue& output, ModuleValues& values);

// What a tap does with one value: its statistics recorded (and the value pinned, kept or compared,
// as `run` asks) under the site's next occurrence. The TorchScript tap and the exported program's
// interpreter both report here.
// `sameElements`: a record of a value with exactly this one's elements (this is a view, transpose
// or reshape of it, nothing written since), whose statistics it takes instead of reading them.
void recordValue(TapRun& run, int site, const at::Tensor& tensor,
                 const ActivationRecord* sameElements = nullptr);

// The reference's output of the same call of the innermost module whose output the site's value
// is (the k-th value that is an output of its path against the reference's k-th; a file's one
// value against the last call's), compared into `r`; false where the reference has none for it.
// Counts the call either way; a value that is not `dense` (no data to compare) only counts.
bool compareWithModuleCall(TapRun& run, size_t site, const at::Tensor& tensor, bool dense,
                           ActivationRecord& r);
// A float32, contiguous CPU copy of a tensor (a quantized one dequantized).
at::Tensor floatCopy(const at::Tensor& t);

// value_compare.cpp, shared by every model's activations:
// A dict of module paths to tensors (torch.save in Python), for comparing with.
Expected<std::map<std::string, at::Tensor>> referenceTensors(const std::string& path);
// The references each site compares with before the run: where no module output of `reference`
// is the site's (those are matched call by call as the run makes them, recordValue), the operator
// output of its first name that `reference` holds, and then, in each module whose operators
// (Site::op) run in the same order in both models, the other's value in the same place;
// report.operatorsMatched counts both kinds. `reference.model` names where they came from
// ("features.3 in WHERE").
void attachReferences(std::vector<Site>& sites,
                      const std::vector<std::vector<std::string>>& siteModules,
                      const ModuleValues& reference, ActivationReport& report);
// What a recording of one model's values takes from the request before it runs: the pinned
// nodes onto their sites, and the values to compare with (a file's or another model's) in
// `reference`, attached to the sites as attachReferences does. Sets report.comparison and
// report.criterion; `reference` stays null when there is nothing to compare with.
Status prepareRecording(const ActivationRequest& request, std::vector<Site>& sites,
                        const std::vector<std::vector<std::string>>& siteModules,
                        ActivationReport& report, std::shared_ptr<const ModuleValues>& reference);
// The comparison fields of one record into another.
void copyComparison(const ActivationRecord& from, ActivationRecord& to);
// The run's records into the report: a site's own reference compared at its last occurrence
// only, each record attributed to its GraphModel node, the module outputs of the reference that
// no value matched, the first non-finite value (and what its node read) and the first compared
// value the criterion calls apart. With a model's reference, the run's final `output` is compared
// with the reference's (report.outputs); report.output describes it.
void finishReport(TapRun& run, const GraphModel& model,
                  const std::vector<std::vector<std::string>>& siteModules,
                  const ModuleValues* reference, const c10::IValue& output,
                  const ActivationRequest& request, ActivationReport& report);

// Whether the module path `path` is `module` or inside it ("" holds everything).
bool within(const std::string& path, const std::string& module);
// The module a node is drawn in: its group's, up to the nearest module group.
std::string placedModule(const GraphModel& model, const GraphNode& node);
// For each node's outputs (by node id, then output): the modules whose output the value is, as
// the TorchScript tap decides it: the module it was made in (nodeModules, by node id) and each
// ancestor of it that a reader outside it sees, the graph's outputs (graphOutputs, by name)
// being read outside every module. The root "" is nobody's here.
std::vector<std::vector<std::vector<std::string>>>
outputModules(const GraphModel& g, const std::vector<std::string>& nodeModules,
              const std::set<std::string>& graphOutputs);
// max |a - b|, NaN against NaN and equal infinities counting as equal, NaN against a number as
// infinitely far. Nullopt when the shapes differ.
std::optional<double> maxAbsDifference(const at::Tensor& a, const at::Tensor& b);
// `value` compared with `reference` into r's comparison fields (compared, maxAbsDiff, maxRelDiff,
// cosine, snrDb), or why not into compareNote; false when the shapes differ.
bool compareInto(ActivationRecord& r, const at::Tensor& value, const at::Tensor& reference);
// "2x3", or "scalar".
std::string shapeText(c10::IntArrayRef shape);
// Python names classes of the same name in one process __torch__.___torch_mangle_N.Name, and
// numbers the aten::warn calls it scripts (aten::warn[warn_id=N]); two archives of the same model
// may differ only there. Both are left out.
std::string demangled(const std::string& name);

} // namespace scriptscope::detail
