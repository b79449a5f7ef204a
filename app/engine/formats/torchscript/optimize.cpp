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

} // namespace

Expected<OptimizeResult> Session::optimize(const OptimizeRequest& request) {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    if (request.passes.empty()) {
        return Error{ErrorKind::Input, "name at least one pass"};
    }
    for (const auto& name : request.passes) {
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
    std::string current;
    try {
        torch::jit::Module original = *impl_->module;
        // Freezing needs eval mode; the original is compared in the same mode.
        const bool needsEval =
            std::any_of(request.passes.begin(), request.passes.end(), [](const std::string& p) {
                return isFrozenPass(p) || p == "remove-dropout";
            });
        if (needsEval && original.is_training()) {
            original = original.clone();
            original.eval();
            result.notes.push_back("the model was in training mode: both it and the copy were put "
                                   "in eval mode (freezing and removing dropout need it)");
        }
        auto originalMethod = original.get_method(methodName);
        const auto before = inlinedCopy(originalMethod);
        result.graphBefore = before->toString();
        std::map<std::string, int> countsBefore;
        countKinds(before->block(), countsBefore, result.nodesBefore);

        // The passes on a fresh copy. portable: optimize-for-inference without its MKLDNN
        // conversion, whose constants PyTorch cannot save (see saveVerified).
        // Returns the copy and whether it ended up frozen (its method's graph is then the one
        // that runs; otherwise it calls its submodules).
        auto applyPasses = [&](bool portable, std::vector<std::string>* applied,
                               std::vector<std::string>* notes) {
            torch::jit::Module copy = original.clone();
            bool frozen = false;
            bool inlined = false;
            std::vector<std::string> ignored;
            if (!notes) {
                notes = &ignored;
            }
            for (const auto& pass : request.passes) {
                current = pass;
                auto graphOf = [&]() {
                    return torch::jit::toGraphFunction(copy.get_method(methodName).function())
                        .graph();
                };
                const std::string textBefore = graphOf()->toString();
                if (pass == "freeze") {
                    if (frozen) {
                        notes->push_back("freeze: already frozen, skipped");
                        continue;
                    }
                    copy = torch::jit::freeze(copy);
                    frozen = true;
                } else if (pass == "optimize-for-inference" && portable) {
                    if (!frozen) {
                        copy = torch::jit::freeze(copy);
                        frozen = true;
                    }
                    auto graph = graphOf();
                    torch::jit::OptimizeFrozenGraph(graph, true);
                } else if (pass == "optimize-for-inference") {
                    copy = torch::jit::optimize_for_inference(copy);
                    frozen = true;
                    notes->push_back(at::hasMKLDNN()
                                         ? "optimize-for-inference: this LibTorch has MKLDNN, so "
                                           "convolutions may run as MKLDNN operators"
                                         : "optimize-for-inference: this LibTorch has no MKLDNN");
                } else if (pass == "fold-conv-bn") {
                    if (frozen) {
                        auto graph = graphOf();
                        torch::jit::FoldFrozenConvBatchnorm(graph);
                    } else {
                        copy = torch::jit::FoldConvBatchNorm(copy);
                    }
                } else {
                    auto graph = graphOf();
                    if (!frozen && !inlined) {
                        // Without freezing, the method calls its submodules: the passes would see
                        // only the calls. The copy's method gets them inlined first.
                        torch::jit::Inline(*graph);
                        inlined = true;
                        notes->push_back("the copy's " + methodName +
                                         " had its submodules' calls inlined before " + pass);
                    }
                    if (pass == "constant-propagation") {
                        torch::jit::ConstantPropagation(graph);
                    } else if (pass == "dead-code-elimination") {
                        torch::jit::EliminateDeadCode(graph);
                    } else if (pass == "common-subexpression-elimination") {
                        torch::jit::EliminateCommonSubexpression(graph);
                    } else if (pass == "peephole") {
                        torch::jit::PeepholeOptimize(graph);
                    } else if (pass == "remove-dropout") {
                        if (frozen) {
                            torch::jit::removeDropout(graph);
                        } else {
                            torch::jit::removeDropout(copy);
                        }
                    } else if (pass == "fuse-linear") {
                        torch::jit::FuseLinear(graph);
                    }
                }
                if (applied) {
                    const bool changed = graphOf()->toString() != textBefore;
                    applied->push_back(pass + (changed ? "" : " (no change)"));
                }
            }
            current.clear();
            return std::make_pair(copy, frozen);
        };
        const auto passed = applyPasses(false, &result.applied, &result.notes);
        torch::jit::Module copy = passed.first;
        const bool frozen = passed.second;
        auto copyMethod = copy.get_method(methodName);
        const auto after = frozen ? torch::jit::toGraphFunction(copyMethod.function()).graph()
                                  : inlinedCopy(copyMethod);
        result.graphAfter = after->toString();
        std::map<std::string, int> countsAfter;
        countKinds(after->block(), countsAfter, result.nodesAfter);
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
            result.kinds.push_back(entry);
        }
        std::sort(result.kinds.begin(), result.kinds.end(),
                  [](const KindCount& a, const KindCount& b) {
                      return std::max(a.before, a.after) > std::max(b.before, b.after) ||
                             (std::max(a.before, a.after) == std::max(b.before, b.after) &&
                              a.kind < b.kind);
                  });
        // A copy's classes are renamed (__torch__.___torch_mangle_N.Net): not a difference.
        result.graphDiff = diffLines(demangled(result.graphBefore), demangled(result.graphAfter));

        if (prepared) {
            // Same inputs, interleaved (the machine is shared): after the warm-up, one iteration
            // of each in turn.
            c10::InferenceMode inferenceMode;
            const auto& inputs = prepared->inputs;
            const int warmup = std::max(3, request.run.warmup);
            const int iterations = std::max(1, request.run.iterations);
            c10::IValue outBefore, outAfter;
            for (int i = 0; i < warmup; ++i) {
                outBefore = originalMethod(inputs);
                outAfter = copyMethod(inputs);
            }
            detail::synchronize(prepared->device);
            std::vector<double> samplesBefore, samplesAfter;
            for (int i = 0; i < iterations; ++i) {
                auto start = std::chrono::steady_clock::now();
                outBefore = originalMethod(inputs);
                detail::synchronize(prepared->device);
                samplesBefore.push_back(detail::elapsedMs(start));
                start = std::chrono::steady_clock::now();
                outAfter = copyMethod(inputs);
                detail::synchronize(prepared->device);
                samplesAfter.push_back(detail::elapsedMs(start));
            }
            result.timed = true;
            result.before = computeStats(samplesBefore);
            result.after = computeStats(samplesAfter);
            result.speedup = result.after.p50 > 0 ? result.before.p50 / result.after.p50 : 0;
            std::vector<at::Tensor> a, b;
            flattenTensors(outBefore, a);
            flattenTensors(outAfter, b);
            if (a.size() != b.size()) {
                result.compareNote = "the outputs hold " + std::to_string(a.size()) + " and " +
                                     std::to_string(b.size()) + " tensors";
            } else {
                result.outputsCompared = true;
                for (size_t i = 0; i < a.size(); ++i) {
                    const at::Tensor x = a[i].is_mkldnn() ? a[i].to_dense() : a[i];
                    const at::Tensor y = b[i].is_mkldnn() ? b[i].to_dense() : b[i];
                    if (const auto d = maxAbsDifference(x, y)) {
                        result.maxAbsDiff = std::max(result.maxAbsDiff, *d);
                    } else {
                        result.outputsCompared = false;
                        result.compareNote = "output " + std::to_string(i) + " has shape " +
                                             shapeText(y.sizes()) + " instead of " +
                                             shapeText(x.sizes());
                        break;
                    }
                }
            }
            // Module by module, where the copy's nodes still know their modules (freezing
            // inlines with call stacks; an archive saved and loaded again has none). Both runs
            // keep every module's output (its last occurrence).
            TapRun mine;
            mine.bins = 1;
            mine.keepModuleOutputs = true;
            runInstrumented(instrument(original, originalMethod), original, inputs, mine,
                            prepared->device);
            TapRun theirs;
            theirs.bins = 1;
            theirs.keepModuleOutputs = true;
            const Instrumented copied = instrument(copy, copyMethod);
            runInstrumented(copied, copy, inputs, theirs, prepared->device);
            // The modules in execution order, innermost first where several share a value.
            auto executionOrder = [](const TapRun& run) {
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
            };
            const auto originalOrder = executionOrder(mine);
            const auto copyOrder = executionOrder(theirs);
            const std::set<std::string> inCopy(copyOrder.begin(), copyOrder.end());
            auto parentOf = [](const std::string& path) {
                const auto dot = path.rfind('.');
                return dot == std::string::npos ? std::string() : path.substr(0, dot);
            };
            for (const auto& path : copyOrder) {
                const auto value = theirs.moduleOutputs.find(path);
                const auto reference = mine.moduleOutputs.find(path);
                if (value == theirs.moduleOutputs.end() || reference == mine.moduleOutputs.end()) {
                    continue;
                }
                // Each module's last call, as a forward hook keeps it.
                const at::Tensor& valueLast = value->second.back().value;
                if (!valueLast.defined() || !reference->second.back().value.defined()) {
                    continue;
                }
                double best = maxAbsDifference(valueLast, reference->second.back().value)
                                  .value_or(std::numeric_limits<double>::infinity());
                std::string label = path;
                // A module folded into this one (BatchNorm into the convolution before it) has
                // no nodes left: this module's output now stands for the folded one's.
                auto at = std::find(originalOrder.begin(), originalOrder.end(), path);
                std::string folded;
                for (auto next = at == originalOrder.end() ? at : std::next(at);
                     next != originalOrder.end() && !inCopy.count(*next) &&
                     parentOf(*next) == parentOf(path);
                     ++next) {
                    folded += " + " + *next;
                    const auto other = mine.moduleOutputs.find(*next);
                    if (other == mine.moduleOutputs.end() ||
                        !other->second.back().value.defined()) {
                        continue;
                    }
                    const double d = maxAbsDifference(valueLast, other->second.back().value)
                                         .value_or(std::numeric_limits<double>::infinity());
                    if (d < best) {
                        best = d;
                        label = path + folded + " (folded)";
                    }
                }
                result.modules.push_back({label, best});
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
        } else {
            result.notes.push_back("not timed: give the method's inputs to time both and compare "
                                   "their outputs");
        }
        if (!request.savePath.empty()) {
            torch::jit::Module toSave = copy;
            if (hasMkldnnConstants(copy)) {
                // PyTorch writes MKLDNN constants as `ops.prim.ConstantMKLDNNTensor()` with no
                // value: no LibTorch loads that file ("required keyword attribute 'value' is
                // undefined"). Save the same passes with the portable part of
                // optimize-for-inference.
                toSave = applyPasses(true, nullptr, nullptr).first;
                result.notes.push_back(
                    "optimize-for-inference's MKLDNN conversion cannot be saved (PyTorch writes "
                    "its MKLDNN constants without their values); the saved copy has its other "
                    "rewrites (frozen conv, batch-norm, add and mul folding) and runs on dense "
                    "tensors");
            }
            saveVerified(toSave, methodName, request, prepared ? &*prepared : nullptr, result);
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
