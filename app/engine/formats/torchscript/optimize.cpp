// Optimisation passes on a copy of the model (freezing, folding, fusing, optimize_for_inference):
// what each changed, the copy timed and compared with the original, output by output and module by
// module, and the copy saved only once it loads and runs.
#include "graph_tap.h"
#include "session.h"
#include "session_internal.h"
#include "stats.h"
#include "torch_values.h"
#include "value_tap.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/fold_conv_bn.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/frozen_conv_folding.h>
#include <torch/csrc/jit/passes/frozen_graph_optimizations.h>
#include <torch/csrc/jit/passes/fuse_linear.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/peephole.h>
#include <torch/csrc/jit/passes/remove_dropout.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace scriptscope {

namespace {

using detail::demangled;
using detail::instrument;
using detail::Instrumented;
using detail::maxAbsDifference;
using detail::runInstrumented;
using detail::shapeText;
using detail::TapRun;
using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

void countKinds(const Block* block, std::map<std::string, int>& counts, int& total) {
    for (const Node* node : block->nodes()) {
        ++counts[node->kind().toQualString()];
        ++total;
        for (const Block* inner : node->blocks()) {
            countKinds(inner, counts, total);
        }
    }
}

std::shared_ptr<Graph> inlinedCopy(const torch::jit::Method& method) {
    auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    torch::jit::Inline(*graph);
    return graph;
}

void flattenTensors(const c10::IValue& value, std::vector<at::Tensor>& out) {
    if (value.isTensor()) {
        out.push_back(value.toTensor());
    } else if (value.isTuple()) {
        for (const auto& element : value.toTupleRef().elements()) {
            flattenTensors(element, out);
        }
    } else if (value.isList()) {
        for (const auto& element : value.toListRef()) {
            flattenTensors(element, out);
        }
    } else if (value.isGenericDict()) {
        for (const auto& entry : value.toGenericDict()) {
            flattenTensors(entry.value(), out);
        }
    }
}

bool isFrozenPass(const std::string& name) {
    return name == "freeze" || name == "optimize-for-inference";
}

bool hasMkldnnConstants(const torch::jit::Block* block) {
    static const auto mkldnnConstant = c10::Symbol::fromQualString("prim::ConstantMKLDNNTensor");
    for (const auto* node : block->nodes()) {
        if (node->kind() == mkldnnConstant) {
            return true;
        }
        if (node->kind() == c10::prim::Constant &&
            node->output()->type()->cast<c10::TensorType>()) {
            const auto value = torch::jit::toIValue(node->output());
            if (value && value->isTensor() && value->toTensor().is_mkldnn()) {
                return true;
            }
        }
        for (const auto* child : node->blocks()) {
            if (hasMkldnnConstants(child)) {
                return true;
            }
        }
    }
    return false;
}

// True when a method of `module` holds MKLDNN tensors as constants, which PyTorch cannot save.
bool hasMkldnnConstants(const torch::jit::Module& module) {
    for (const auto& method : module.get_methods()) {
        if (hasMkldnnConstants(torch::jit::toGraphFunction(method.function()).graph()->block())) {
            return true;
        }
    }
    return false;
}

// Saves the optimised copy, then loads the file back as a user would and runs it once on the
// run's inputs (when there are any): a file that does not load or run is reported in
// result.saveError and removed, unless the request keeps it.
void saveVerified(torch::jit::Module& copy, const std::string& methodName,
                  const OptimizeRequest& request, const detail::PreparedRun* prepared,
                  OptimizeResult& result) {
    try {
        copy.save(request.savePath);
    } catch (const std::exception& error) {
        result.saveError = "cannot save the optimised copy: " +
                           detail::errorFromException(error, ErrorKind::Model).message;
        return;
    }
    std::string failure;
    std::optional<torch::jit::Module> loaded;
    try {
        loaded = prepared ? torch::jit::load(request.savePath, prepared->device)
                          : torch::jit::load(request.savePath);
    } catch (const std::exception& error) {
        failure =
            "it does not load: " + detail::errorFromException(error, ErrorKind::Model).message;
    }
    if (loaded && prepared) {
        try {
            c10::InferenceMode inferenceMode;
            auto inputs = prepared->inputs;
            loaded->get_method(methodName)(inputs);
        } catch (const std::exception& error) {
            failure = "it loads, but running " + methodName +
                      " failed: " + detail::errorFromException(error, ErrorKind::Model).message;
        }
    }
    if (failure.empty()) {
        result.saved = request.savePath;
        result.savedVerified = true;
        return;
    }
    result.saveError = "the saved copy " + request.savePath + " is unusable: " + failure;
    if (request.keepUnloadable) {
        result.saved = request.savePath;
        result.notes.push_back("the unusable copy was kept, as asked");
    } else {
        std::remove(request.savePath.c_str());
    }
}

// The request's own mistakes, caught before anything runs: no pass named, or a name that is not a
// pass (the message then lists the passes).
std::optional<Error> checkPassNames(const std::vector<std::string>& passes) {
    if (passes.empty()) {
        return Error{ErrorKind::Input, "name at least one pass"};
    }
    for (const auto& name : passes) {
        const auto& known = availablePasses();
        if (std::none_of(known.begin(), known.end(),
                         [&](const PassInfo& p) { return p.name == name; })) {
            std::string names;
            for (const auto& p : known) {
                names += (names.empty() ? "" : ", ") + p.name;
            }
            return Error{ErrorKind::Input, "no pass '" + name + "'; the passes: " + names};
        }
    }
    return std::nullopt;
}

// The model the copies are made from and compared with: the loaded one, or an eval-mode clone of
// it when a pass needs eval mode and the model is training (the loaded model stays unchanged).
torch::jit::Module originalForPasses(const torch::jit::Module& loaded,
                                     const OptimizeRequest& request, OptimizeResult& result) {
    torch::jit::Module original = loaded;
    // Freezing needs eval mode; the original is compared in the same mode.
    const bool needsEval =
        std::any_of(request.passes.begin(), request.passes.end(),
                    [](const std::string& p) { return isFrozenPass(p) || p == "remove-dropout"; });
    if (needsEval && original.is_training()) {
        original = original.clone();
        original.eval();
        result.notes.push_back("the model was in training mode: both it and the copy were put "
                               "in eval mode (freezing and removing dropout need it)");
    }
    return original;
}

// Records the original method's inlined graph and its nodes, and returns their counts by kind, for
// the comparison with the copy's.
std::map<std::string, int> describeOriginalGraph(const torch::jit::Method& originalMethod,
                                                 OptimizeResult& result) {
    const auto before = inlinedCopy(originalMethod);
    result.graphBefore = before->toString();
    std::map<std::string, int> countsBefore;
    countKinds(before->block(), countsBefore, result.nodesBefore);
    return countsBefore;
}

// The copy the passes rewrite, with what the passes so far did to it (freezing replaces the
// module, so its method's graph is looked up afresh each time).
struct PassCopy {
    torch::jit::Module module;
    const std::string& methodName;
    std::vector<std::string>& notes;
    bool frozen = false;
    bool inlined = false;

    // The copy's method's graph as it stands now.
    std::shared_ptr<Graph> graph() const {
        return torch::jit::toGraphFunction(module.get_method(methodName).function()).graph();
    }
};

// What applyPasses made: the copy, and whether it ended up frozen (its method's graph is then the
// one that runs; otherwise it calls its submodules).
struct PassedCopy {
    torch::jit::Module module;
    bool frozen = false;
};

// freeze: torch.jit.freeze on the copy; returns false when the copy is already frozen, since the
// pass is then skipped and not listed as applied.
bool freezePass(PassCopy& copy) {
    if (copy.frozen) {
        copy.notes.push_back("freeze: already frozen, skipped");
        return false;
    }
    copy.module = torch::jit::freeze(copy.module);
    copy.frozen = true;
    return true;
}

// optimize-for-inference without its MKLDNN conversion (whose constants PyTorch cannot save):
// the copy frozen if it is not yet, then the frozen graph's optimisations.
void portableOptimizeForInferencePass(PassCopy& copy) {
    if (!copy.frozen) {
        copy.module = torch::jit::freeze(copy.module);
        copy.frozen = true;
    }
    auto graph = copy.graph();
    torch::jit::OptimizeFrozenGraph(graph, true);
}

// optimize-for-inference: torch.jit.optimize_for_inference on the copy, which freezes it, with a
// note on whether this LibTorch can turn convolutions into MKLDNN operators.
void optimizeForInferencePass(PassCopy& copy) {
    copy.module = torch::jit::optimize_for_inference(copy.module);
    copy.frozen = true;
    copy.notes.push_back(at::hasMKLDNN() ? "optimize-for-inference: this LibTorch has MKLDNN, so "
                                           "convolutions may run as MKLDNN operators"
                                         : "optimize-for-inference: this LibTorch has no MKLDNN");
}

// fold-conv-bn: on the frozen graph when the copy is frozen, else on the module, whose
// submodules hold the convolutions and batch norms.
void foldConvBnPass(PassCopy& copy) {
    if (copy.frozen) {
        auto graph = copy.graph();
        torch::jit::FoldFrozenConvBatchnorm(graph);
    } else {
        copy.module = torch::jit::FoldConvBatchNorm(copy.module);
    }
}

// The copy's method's graph for a graph pass, with its submodules' calls inlined first (once) when
// the copy is not frozen, so that the pass sees more than the calls.
std::shared_ptr<Graph> graphForPass(PassCopy& copy, const std::string& pass) {
    auto graph = copy.graph();
    if (!copy.frozen && !copy.inlined) {
        // Without freezing, the method calls its submodules: the passes would see
        // only the calls. The copy's method gets them inlined first.
        torch::jit::Inline(*graph);
        copy.inlined = true;
        copy.notes.push_back("the copy's " + copy.methodName +
                             " had its submodules' calls inlined before " + pass);
    }
    return graph;
}

// remove-dropout: on the frozen graph when the copy is frozen, else on the module (its methods'
// graphs, the inlined one included).
void removeDropoutPass(PassCopy& copy, std::shared_ptr<Graph>& graph) {
    if (copy.frozen) {
        torch::jit::removeDropout(graph);
    } else {
        torch::jit::removeDropout(copy.module);
    }
}

// The passes that rewrite the method's graph in place (constant propagation to fuse-linear), each
// on the graph graphForPass gives.
void graphPass(PassCopy& copy, const std::string& pass) {
    auto graph = graphForPass(copy, pass);
    if (pass == "constant-propagation") {
        torch::jit::ConstantPropagation(graph);
    } else if (pass == "dead-code-elimination") {
        torch::jit::EliminateDeadCode(graph);
    } else if (pass == "common-subexpression-elimination") {
        torch::jit::EliminateCommonSubexpression(graph);
    } else if (pass == "peephole") {
        torch::jit::PeepholeOptimize(graph);
    } else if (pass == "remove-dropout") {
        removeDropoutPass(copy, graph);
    } else if (pass == "fuse-linear") {
        torch::jit::FuseLinear(graph);
    }
}

// Runs the pass named `pass` on the copy (portable: see portableOptimizeForInferencePass);
// returns false when the pass was skipped.
bool applyPass(PassCopy& copy, const std::string& pass, bool portable) {
    if (pass == "freeze") {
        return freezePass(copy);
    }
    if (pass == "optimize-for-inference" && portable) {
        portableOptimizeForInferencePass(copy);
    } else if (pass == "optimize-for-inference") {
        optimizeForInferencePass(copy);
    } else if (pass == "fold-conv-bn") {
        foldConvBnPass(copy);
    } else {
        graphPass(copy, pass);
    }
    return true;
}

// The request's passes, in order, on a fresh clone of `original`: `current` names the pass
// running, for the error message should it throw. portable: optimize-for-inference without its
// MKLDNN conversion, whose constants PyTorch cannot save (see saveVerified). Each pass applied is
// listed in `applied` (when given) with whether it changed the graph; notes go to `notes` (when
// given).
PassedCopy applyPasses(const torch::jit::Module& original, const OptimizeRequest& request,
                       bool portable, std::vector<std::string>* applied,
                       std::vector<std::string>* notes, std::string& current) {
    std::vector<std::string> ignored;
    PassCopy copy{original.clone(), request.run.method, notes ? *notes : ignored};
    for (const auto& pass : request.passes) {
        current = pass;
        const std::string textBefore = copy.graph()->toString();
        if (!applyPass(copy, pass, portable)) {
            continue;
        }
        if (applied) {
            const bool changed = copy.graph()->toString() != textBefore;
            applied->push_back(pass + (changed ? "" : " (no change)"));
        }
    }
    current.clear();
    return {copy.module, copy.frozen};
}

// Every kind of node present before or after with its two counts, the most frequent first, for
// the result's table.
std::vector<KindCount> kindCounts(std::map<std::string, int>& countsBefore,
                                  std::map<std::string, int>& countsAfter) {
    std::vector<KindCount> counts;
    std::set<std::string> kinds;
    for (const auto& [kind, count] : countsBefore) {
        kinds.insert(kind);
    }
    for (const auto& [kind, count] : countsAfter) {
        kinds.insert(kind);
    }
    for (const auto& kind : kinds) {
        KindCount entry{kind, countsBefore.count(kind) ? countsBefore[kind] : 0,
                        countsAfter.count(kind) ? countsAfter[kind] : 0};
        counts.push_back(entry);
    }
    std::sort(counts.begin(), counts.end(), [](const KindCount& a, const KindCount& b) {
        return std::max(a.before, a.after) > std::max(b.before, b.after) ||
               (std::max(a.before, a.after) == std::max(b.before, b.after) && a.kind < b.kind);
    });
    return counts;
}

// Records the copy's graph (a frozen copy's own, else inlined like the original's), its nodes, the
// counts by kind before and after, and the line diff of the two graphs.
void compareGraphs(const torch::jit::Method& copyMethod, bool frozen,
                   std::map<std::string, int>& countsBefore, OptimizeResult& result) {
    const auto after = frozen ? torch::jit::toGraphFunction(copyMethod.function()).graph()
                              : inlinedCopy(copyMethod);
    result.graphAfter = after->toString();
    std::map<std::string, int> countsAfter;
    countKinds(after->block(), countsAfter, result.nodesAfter);
    result.kinds = kindCounts(countsBefore, countsAfter);
    // A copy's classes are renamed (__torch__.___torch_mangle_N.Net): not a difference.
    result.graphDiff = diffLines(demangled(result.graphBefore), demangled(result.graphAfter));
}

// Times the original and the copy on the same inputs, interleaved, into result's timings and
// speedup; returns their last outputs, for compareOutputs.
std::pair<c10::IValue, c10::IValue> timeInterleaved(const torch::jit::Method& originalMethod,
                                                    const torch::jit::Method& copyMethod,
                                                    const detail::PreparedRun& prepared,
                                                    const RunRequest& run, OptimizeResult& result) {
    // Same inputs, interleaved (the machine is shared): after the warm-up, one iteration
    // of each in turn.
    const auto& inputs = prepared.inputs;
    const int warmup = std::max(3, run.warmup);
    const int iterations = std::max(1, run.iterations);
    c10::IValue outBefore, outAfter;
    for (int i = 0; i < warmup; ++i) {
        outBefore = originalMethod(inputs);
        outAfter = copyMethod(inputs);
    }
    detail::synchronize(prepared.device);
    std::vector<double> samplesBefore, samplesAfter;
    for (int i = 0; i < iterations; ++i) {
        auto start = std::chrono::steady_clock::now();
        outBefore = originalMethod(inputs);
        detail::synchronize(prepared.device);
        samplesBefore.push_back(detail::elapsedMs(start));
        start = std::chrono::steady_clock::now();
        outAfter = copyMethod(inputs);
        detail::synchronize(prepared.device);
        samplesAfter.push_back(detail::elapsedMs(start));
    }
    result.timed = true;
    result.before = computeStats(samplesBefore);
    result.after = computeStats(samplesAfter);
    result.speedup = result.after.p50 > 0 ? result.before.p50 / result.after.p50 : 0;
    return {outBefore, outAfter};
}

// Compares the two runs' outputs tensor by tensor (MKLDNN ones made dense) into result's
// maxAbsDiff, or says in compareNote why they could not be compared.
void compareOutputs(const c10::IValue& outBefore, const c10::IValue& outAfter,
                    OptimizeResult& result) {
    std::vector<at::Tensor> a, b;
    flattenTensors(outBefore, a);
    flattenTensors(outAfter, b);
    if (a.size() != b.size()) {
        result.compareNote = "the outputs hold " + std::to_string(a.size()) + " and " +
                             std::to_string(b.size()) + " tensors";
        return;
    }
    result.outputsCompared = true;
    for (size_t i = 0; i < a.size(); ++i) {
        const at::Tensor x = a[i].is_mkldnn() ? a[i].to_dense() : a[i];
        const at::Tensor y = b[i].is_mkldnn() ? b[i].to_dense() : b[i];
        if (const auto d = maxAbsDifference(x, y)) {
            result.maxAbsDiff = std::max(result.maxAbsDiff, *d);
        } else {
            result.outputsCompared = false;
            result.compareNote = "output " + std::to_string(i) + " has shape " +
                                 shapeText(y.sizes()) + " instead of " + shapeText(x.sizes());
            break;
        }
    }
}

// Runs `method` once through the activation probes, keeping every module's output (its last
// occurrence), for compareModules.
TapRun runKeepingModuleOutputs(const torch::jit::Module& module, const torch::jit::Method& method,
                               const std::vector<c10::IValue>& inputs,
                               const torch::Device& device) {
    TapRun run;
    run.bins = 1;
    run.keepModuleOutputs = true;
    const Instrumented instrumented = instrument(module, method);
    runInstrumented(instrumented, module, inputs, run, device);
    return run;
}

// The modules in execution order, innermost first where several share a value.
std::vector<std::string> executionOrder(const TapRun& run) {
    std::vector<std::string> order;
    std::vector<std::pair<size_t, int>> bySite; // record index, site
    for (const auto& [key, index] : run.index) {
        bySite.emplace_back(index, key.first);
    }
    std::sort(bySite.begin(), bySite.end());
    for (const auto& [index, site] : bySite) {
        std::vector<std::string> paths = run.siteModules[static_cast<size_t>(site)];
        std::sort(paths.begin(), paths.end(),
                  [](const auto& x, const auto& y) { return x.size() > y.size(); });
        for (const auto& path : paths) {
            if (std::find(order.begin(), order.end(), path) == order.end()) {
                order.push_back(path);
            }
        }
    }
    return order;
}

// The path of the module that holds `path` ("" for a top-level one), to tell siblings apart.
std::string parentOf(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

// How far the copy's output of module `path` is from the original's, or from a folded module's
// where that is closer (the label then names both); nullopt when either run lacks the output.
std::optional<OptimizeResult::ModuleDelta>
moduleDelta(const std::string& path, const TapRun& mine, const TapRun& theirs,
            const std::vector<std::string>& originalOrder, const std::set<std::string>& inCopy) {
    const auto value = theirs.moduleOutputs.find(path);
    const auto reference = mine.moduleOutputs.find(path);
    if (value == theirs.moduleOutputs.end() || reference == mine.moduleOutputs.end()) {
        return std::nullopt;
    }
    // Each module's last call, as a forward hook keeps it.
    const at::Tensor& valueLast = value->second.back().value;
    if (!valueLast.defined() || !reference->second.back().value.defined()) {
        return std::nullopt;
    }
    double best = maxAbsDifference(valueLast, reference->second.back().value)
                      .value_or(std::numeric_limits<double>::infinity());
    std::string label = path;
    // A module folded into this one (BatchNorm into the convolution before it) has
    // no nodes left: this module's output now stands for the folded one's.
    auto at = std::find(originalOrder.begin(), originalOrder.end(), path);
    std::string folded;
    for (auto next = at == originalOrder.end() ? at : std::next(at);
         next != originalOrder.end() && !inCopy.count(*next) && parentOf(*next) == parentOf(path);
         ++next) {
        folded += " + " + *next;
        const auto other = mine.moduleOutputs.find(*next);
        if (other == mine.moduleOutputs.end() || !other->second.back().value.defined()) {
            continue;
        }
        const double d = maxAbsDifference(valueLast, other->second.back().value)
                             .value_or(std::numeric_limits<double>::infinity());
        if (d < best) {
            best = d;
            label = path + folded + " (folded)";
        }
    }
    return OptimizeResult::ModuleDelta{label, best};
}

// Compares the copy's module outputs with the original's, in the copy's execution order, and
// names the first module beyond the request's tolerance.
void compareModules(const torch::jit::Module& original, const torch::jit::Method& originalMethod,
                    const torch::jit::Module& copy, const torch::jit::Method& copyMethod,
                    const detail::PreparedRun& prepared, const OptimizeRequest& request,
                    OptimizeResult& result) {
    // Module by module, where the copy's nodes still know their modules (freezing
    // inlines with call stacks; an archive saved and loaded again has none). Both runs
    // keep every module's output (its last occurrence).
    const TapRun mine =
        runKeepingModuleOutputs(original, originalMethod, prepared.inputs, prepared.device);
    const TapRun theirs =
        runKeepingModuleOutputs(copy, copyMethod, prepared.inputs, prepared.device);
    const auto originalOrder = executionOrder(mine);
    const auto copyOrder = executionOrder(theirs);
    const std::set<std::string> inCopy(copyOrder.begin(), copyOrder.end());
    for (const auto& path : copyOrder) {
        if (auto delta = moduleDelta(path, mine, theirs, originalOrder, inCopy)) {
            result.modules.push_back(std::move(*delta));
        }
    }
    result.tolerance = request.tolerance;
    for (const auto& delta : result.modules) {
        if (delta.maxAbsDiff > request.tolerance) {
            result.firstDifferentModule = delta.module;
            break;
        }
    }
    if (result.modules.empty()) {
        result.notes.push_back("the copy's nodes no longer say which module they came "
                               "from: only the outputs were compared");
    }
}

// Times the original and the copy, then compares their outputs and their modules' outputs, all in
// inference mode.
void timeAndCompare(const torch::jit::Module& original, const torch::jit::Method& originalMethod,
                    const torch::jit::Module& copy, const torch::jit::Method& copyMethod,
                    const detail::PreparedRun& prepared, const OptimizeRequest& request,
                    OptimizeResult& result) {
    c10::InferenceMode inferenceMode;
    const auto outputs = timeInterleaved(originalMethod, copyMethod, prepared, request.run, result);
    compareOutputs(outputs.first, outputs.second, result);
    compareModules(original, originalMethod, copy, copyMethod, prepared, request, result);
}

// Saves the copy to the request's savePath (see saveVerified), or, where it holds MKLDNN
// constants that no LibTorch could load, the same passes redone with the portable
// optimize-for-inference.
void saveCopy(const torch::jit::Module& original, const torch::jit::Module& copy,
              const OptimizeRequest& request, const detail::PreparedRun* prepared,
              std::string& current, OptimizeResult& result) {
    torch::jit::Module toSave = copy;
    if (hasMkldnnConstants(copy)) {
        // PyTorch writes MKLDNN constants as `ops.prim.ConstantMKLDNNTensor()` with no
        // value: no LibTorch loads that file ("required keyword attribute 'value' is
        // undefined"). Save the same passes with the portable part of
        // optimize-for-inference.
        toSave = applyPasses(original, request, true, nullptr, nullptr, current).module;
        result.notes.push_back(
            "optimize-for-inference's MKLDNN conversion cannot be saved (PyTorch writes "
            "its MKLDNN constants without their values); the saved copy has its other "
            "rewrites (frozen conv, batch-norm, add and mul folding) and runs on dense "
            "tensors");
    }
    saveVerified(toSave, request.run.method, request, prepared, result);
}

} // namespace

Expected<OptimizeResult> Session::optimize(const OptimizeRequest& request) {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    if (auto error = checkPassNames(request.passes)) {
        return *error;
    }
    const std::string& methodName = request.run.method;
    auto method = detail::findMethod(*impl_->module, "", methodName);
    if (!method) {
        return method.error();
    }
    const bool timed = !request.run.inputs.empty() || !request.run.inputsFile.empty() ||
                       method->function().getSchema().arguments().size() <= 1;
    std::optional<detail::PreparedRun> prepared;
    if (timed) {
        auto run = detail::prepareRun(*impl_->module, impl_->device, *method, request.run);
        if (!run) {
            return run.error();
        }
        prepared = std::move(run).value();
    }
    OptimizeResult result;
    result.method = methodName;
    std::string current; // the pass running, for the error message
    try {
        const torch::jit::Module original = originalForPasses(*impl_->module, request, result);
        auto originalMethod = original.get_method(methodName);
        auto countsBefore = describeOriginalGraph(originalMethod, result);
        const PassedCopy passed =
            applyPasses(original, request, false, &result.applied, &result.notes, current);
        const torch::jit::Module copy = passed.module;
        auto copyMethod = copy.get_method(methodName);
        compareGraphs(copyMethod, passed.frozen, countsBefore, result);
        if (prepared) {
            timeAndCompare(original, originalMethod, copy, copyMethod, *prepared, request, result);
        } else {
            result.notes.push_back("not timed: give the method's inputs to time both and compare "
                                   "their outputs");
        }
        if (!request.savePath.empty()) {
            saveCopy(original, copy, request, prepared ? &*prepared : nullptr, current, result);
        }
    } catch (const std::exception& error) {
        Error e = detail::errorFromException(error, ErrorKind::Model);
        e.message =
            (current.empty() ? std::string("optimising") : current) + " failed: " + e.message;
        return e;
    }
    return result;
}

} // namespace scriptscope
