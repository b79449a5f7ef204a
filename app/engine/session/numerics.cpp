// Where numbers go wrong: every value one run computes (a probe operator after every node of a copy
// of the inlined graph), optimisation passes on a copy of the model, and two archives compared.
#include "engine.h"
#include "graph_builder.h"
#include "session_internal.h"
#include "stats.h"
#include "text_diff.h"
#include "torch_values.h"
#include "zip_reader.h"

#include <ATen/Parallel.h>
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
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>

namespace scriptscope {

namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Python names classes of the same name in one process __torch__.___torch_mangle_N.Name; two
// archives of the same model may differ only there.
std::string demangled(const std::string& name) {
    static const std::regex mangle(R"(___torch_mangle_\d+\.)");
    return std::regex_replace(name, mangle, "");
}

// ---- Statistics of one tensor ----

struct Chunk {
    float min = std::numeric_limits<float>::infinity();
    float max = -std::numeric_limits<float>::infinity();
    double sum = 0;
    int64_t finite = 0, nan = 0, inf = 0;
};

// min/max/mean/std/NaN/Inf and a histogram of a contiguous float32 CPU tensor in two passes, in
// parallel over chunks (the probe runs after every node: this is most of its cost).
void floatStatistics(const float* data, int64_t n, int bins, ActivationRecord& r) {
    constexpr int64_t kGrain = int64_t{1} << 15;
    const int64_t chunks = (n + kGrain - 1) / kGrain;
    std::vector<Chunk> partial(static_cast<size_t>(chunks));
    at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            Chunk chunk;
            const int64_t from = c * kGrain;
            const int64_t to = std::min(n, from + kGrain);
            float sum = 0; // per chunk in float, summed in double
            float mn = chunk.min, mx = chunk.max;
            int64_t bad = 0;
            for (int64_t i = from; i < to; ++i) {
                const float v = data[i];
                if (std::isfinite(v)) {
                    mn = std::min(mn, v);
                    mx = std::max(mx, v);
                    sum += v;
                } else {
                    ++bad;
                    if (std::isnan(v)) {
                        ++chunk.nan;
                    }
                }
            }
            chunk.min = mn;
            chunk.max = mx;
            chunk.sum = sum;
            chunk.inf = bad - chunk.nan;
            chunk.finite = (to - from) - bad;
            partial[static_cast<size_t>(c)] = chunk;
        }
    });
    Chunk all;
    for (const auto& c : partial) {
        all.min = std::min(all.min, c.min);
        all.max = std::max(all.max, c.max);
        all.sum += c.sum;
        all.finite += c.finite;
        all.nan += c.nan;
        all.inf += c.inf;
    }
    r.nanCount = all.nan;
    r.infCount = all.inf;
    if (all.finite == 0) {
        r.histogram.assign(static_cast<size_t>(bins), 0);
        return;
    }
    const double mean = all.sum / static_cast<double>(all.finite);
    r.min = all.min;
    r.max = all.max;
    r.mean = mean;
    r.histogramMin = all.min;
    r.histogramMax = all.max;
    const float lo = all.min;
    const float range = all.max - all.min;
    const float scale = range > 0 ? static_cast<float>(bins) / range : 0.0F;
    std::vector<std::vector<int64_t>> counts(static_cast<size_t>(chunks));
    std::vector<double> squares(static_cast<size_t>(chunks), 0.0);
    const auto fmean = static_cast<float>(mean);
    at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            std::vector<int64_t> hist(static_cast<size_t>(bins), 0);
            float sq = 0;
            const int64_t from = c * kGrain;
            const int64_t to = std::min(n, from + kGrain);
            for (int64_t i = from; i < to; ++i) {
                const float v = data[i];
                if (!std::isfinite(v)) {
                    continue;
                }
                const float d = v - fmean;
                sq += d * d;
                auto bin = static_cast<int>((v - lo) * scale);
                bin = std::min(std::max(bin, 0), bins - 1);
                ++hist[static_cast<size_t>(bin)];
            }
            counts[static_cast<size_t>(c)] = std::move(hist);
            squares[static_cast<size_t>(c)] = sq;
        }
    });
    r.histogram.assign(static_cast<size_t>(bins), 0);
    double sq = 0;
    for (size_t c = 0; c < counts.size(); ++c) {
        sq += squares[c];
        for (size_t b = 0; b < counts[c].size(); ++b) {
            r.histogram[b] += counts[c][b];
        }
    }
    // torch.std()'s definition: unbiased (Bessel's correction), over the finite values.
    r.stddev = all.finite > 1 ? std::sqrt(sq / static_cast<double>(all.finite - 1)) : 0.0;
}

// Any other dtype or device: with LibTorch's own operators, where the tensor is.
void genericStatistics(const at::Tensor& tensor, int bins, ActivationRecord& r) {
    at::Tensor x = tensor;
    if (x.scalar_type() != at::kDouble && x.scalar_type() != at::kFloat) {
        x = x.to(at::kDouble);
    }
    r.nanCount = x.isnan().sum().item<int64_t>();
    r.infCount = x.isinf().sum().item<int64_t>();
    const at::Tensor finite =
        r.nanCount + r.infCount > 0 ? x.masked_select(x.isfinite()) : x.reshape({-1});
    r.histogram.assign(static_cast<size_t>(bins), 0);
    if (finite.numel() == 0) {
        return;
    }
    r.min = finite.min().item<double>();
    r.max = finite.max().item<double>();
    r.mean = finite.mean().item<double>();
    r.stddev = finite.numel() > 1 ? finite.std(/*unbiased=*/true).item<double>() : 0.0;
    r.histogramMin = r.min;
    r.histogramMax = r.max;
    if (r.max > r.min) {
        const at::Tensor hist =
            at::histc(finite.to(at::kFloat), bins, r.min, r.max).to(at::kCPU).to(at::kLong);
        const auto* counts = hist.data_ptr<int64_t>();
        for (int b = 0; b < bins; ++b) {
            r.histogram[static_cast<size_t>(b)] = counts[b];
        }
    } else {
        r.histogram[0] = finite.numel();
    }
}

void tensorStatistics(const at::Tensor& input, int bins, ActivationRecord& r) {
    if (!input.defined()) {
        r.note = "undefined tensor";
        return;
    }
    r.shape = input.sizes().vec();
    r.dtype = detail::dtypeName(input.scalar_type());
    r.device = input.device().str();
    r.numel = input.numel();
    if (input.layout() != at::kStrided && !input.is_quantized()) {
        r.note = "not a dense tensor: no statistics";
        return;
    }
    if (r.numel == 0) {
        r.histogram.assign(static_cast<size_t>(bins), 0);
        return;
    }
    at::Tensor t = input.is_quantized() ? input.dequantize() : input;
    if (t.is_complex()) {
        r.note = "complex: statistics of |x|";
        t = t.abs();
    }
    if (t.device().is_cpu() && t.scalar_type() == at::kFloat) {
        const at::Tensor c = t.contiguous();
        floatStatistics(c.data_ptr<float>(), c.numel(), bins, r);
    } else {
        genericStatistics(t, bins, r);
    }
}

at::Tensor floatCopy(const at::Tensor& t) {
    at::Tensor x = t.is_quantized() ? t.dequantize() : t.detach();
    return x.to(at::kCPU, at::kFloat, /*non_blocking=*/false, /*copy=*/true).contiguous();
}

// max |a - b|, NaN against NaN and equal infinities counting as equal, NaN against a number as
// infinitely far. Nullopt when the shapes differ.
std::optional<double> maxAbsDifference(const at::Tensor& a, const at::Tensor& b) {
    if (a.sizes() != b.sizes()) {
        return std::nullopt;
    }
    if (a.numel() == 0) {
        return 0.0;
    }
    const at::Tensor x = a.to(at::kDouble);
    const at::Tensor y = b.to(x.device()).to(at::kDouble);
    at::Tensor d = (x - y).abs();
    d = at::where(x == y, at::zeros_like(d), d);
    d = at::where(x.isnan() & y.isnan(), at::zeros_like(d), d);
    d = at::nan_to_num(d, std::numeric_limits<double>::infinity());
    return d.max().item<double>();
}

std::string shapeText(c10::IntArrayRef shape) {
    std::string text;
    for (const int64_t size : shape) {
        text += (text.empty() ? "" : "x") + std::to_string(size);
    }
    return text.empty() ? "scalar" : text;
}

// ---- The probe ----

// One place a probe watches: a tensor output of one node.
struct Site {
    int node = -1; // GraphModel node id; -1: a method input
    int output = 0;
    std::string value;
    bool pinned = false;
    // Reference to compare with (a module output's value saved elsewhere), or undefined.
    at::Tensor reference;
    std::string referenceName;
};

using OccurrenceKey = std::pair<int, int>; // site, occurrence

struct ProbeRun {
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
    std::map<OccurrenceKey, std::pair<double, std::string>> differences;
    // Keeping module outputs (for another model to be compared with): path -> last value
    std::vector<std::vector<std::string>> siteModules;
    bool keepModuleOutputs = false;
    std::map<std::string, at::Tensor> moduleOutputs;
};

thread_local ProbeRun* activeRun = nullptr;

void onProbe(const at::Tensor& tensor, int siteIndex) {
    ProbeRun* run = activeRun;
    if (!run || siteIndex < 0 || static_cast<size_t>(siteIndex) >= run->sites.size()) {
        return;
    }
    const auto s = static_cast<size_t>(siteIndex);
    Site& site = run->sites[s];
    const int occurrence = run->occurrences[s]++;
    ActivationRecord r;
    r.node = site.node;
    r.occurrence = occurrence;
    r.output = site.output;
    r.value = site.value;
    tensorStatistics(tensor, run->bins, r);
    const bool dense =
        tensor.defined() && (tensor.layout() == at::kStrided || tensor.is_quantized());
    if (dense && site.pinned) {
        const uint64_t bytes = static_cast<uint64_t>(tensor.numel()) * sizeof(float);
        if (run->pinnedBytes + bytes <= run->pinBudget) {
            const at::Tensor copy = floatCopy(tensor);
            r.values.assign(copy.data_ptr<float>(), copy.data_ptr<float>() + copy.numel());
            run->pinnedBytes += bytes;
        } else {
            run->pinOverflow = true;
        }
    }
    if (dense && site.reference.defined()) {
        r.comparedWith = site.referenceName;
        if (const auto d = maxAbsDifference(tensor, site.reference)) {
            r.compared = true;
            r.maxAbsDiff = *d;
        } else {
            r.compareNote = "shape " + shapeText(tensor.sizes()) + ", the reference's " +
                            shapeText(site.reference.sizes());
        }
    }
    const OccurrenceKey key{siteIndex, occurrence};
    if (dense && run->keepAll) {
        const uint64_t bytes = static_cast<uint64_t>(tensor.numel()) * sizeof(float);
        if (run->keptBytes + bytes <= run->keepBudget) {
            run->kept.emplace(key, floatCopy(tensor));
            run->keptBytes += bytes;
        } else {
            run->keepOverflow = true;
        }
    }
    if (dense && run->against) {
        const auto found = run->against->find(key);
        if (found != run->against->end()) {
            if (const auto d = maxAbsDifference(tensor, found->second)) {
                run->differences[key] = {*d, ""};
            } else {
                run->differences[key] = {0, "shape " + shapeText(tensor.sizes()) + " against " +
                                                shapeText(found->second.sizes())};
            }
        }
    }
    if (dense && run->keepModuleOutputs && s < run->siteModules.size()) {
        for (const auto& path : run->siteModules[s]) {
            run->moduleOutputs[path] = floatCopy(tensor);
        }
    }
    run->index[key] = run->records.size();
    run->records.push_back(std::move(r));
}

const c10::Symbol& probeSymbol() {
    static const c10::Symbol symbol = c10::Symbol::fromQualString("scriptscope::probe");
    return symbol;
}

void registerProbe() {
    // Side effects and CONSERVATIVE aliasing: nothing may remove or move it.
    static const torch::jit::RegisterOperators registered({torch::jit::Operator(
        "scriptscope::probe(Tensor x, int site) -> ()",
        [](torch::jit::Stack& stack) {
            const int64_t site = torch::jit::pop(stack).toInt();
            const c10::IValue x = torch::jit::pop(stack);
            if (x.isTensor()) {
                onProbe(x.toTensor(), static_cast<int>(site));
            }
        },
        c10::AliasAnalysisKind::CONSERVATIVE)});
}

bool isTensorType(const Value* v) {
    return v->type()->kind() == c10::TypeKind::TensorType;
}

// Values of these nodes are the same values as others' (a block's results, a tuple's parts).
bool probesOutputs(const Node* node) {
    const auto kind = node->kind();
    return node->blocks().empty() && kind != c10::prim::TupleUnpack &&
           kind != c10::prim::TupleIndex && kind != c10::aten::__getitem__;
}

// The module a node is drawn in: its group's, up to the nearest module group.
std::string placedModule(const GraphModel& model, const GraphNode& node) {
    int group = node.group;
    while (group >= 0 && model.groups[static_cast<size_t>(group)].kind == GraphGroup::Kind::Block) {
        group = model.groups[static_cast<size_t>(group)].parent;
    }
    return group >= 0 ? model.groups[static_cast<size_t>(group)].module : node.module;
}

bool within(const std::string& path, const std::string& module) {
    return module.empty() || path == module ||
           (path.size() > module.size() && path.compare(0, module.size(), module) == 0 &&
            path[module.size()] == '.');
}

// The method's inlined graph with a probe after every tensor a node computes, and what each probe
// watches, with the GraphModel the records refer to.
struct Instrumented {
    std::shared_ptr<Graph> graph;
    std::optional<c10::FunctionSchema> schema; // the method's, for its arguments' defaults
    GraphModel model;
    std::vector<Site> sites;
    std::vector<std::vector<std::string>> siteModules; // per site: modules it is the output of
    int inputSites = 0;
};

Instrumented instrument(const torch::jit::Module& module, const torch::jit::Method& method) {
    registerProbe();
    Instrumented out;
    out.schema = method.function().getSchema();
    out.graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    torch::jit::Inline(*out.graph); // as buildGraphModel: the same node ids and value names
    std::vector<Node*> nodes;
    out.model = detail::buildGraphModel(module, "", method.name(), *out.graph, true, nodes);
    std::unordered_map<const Node*, int> ids;
    for (size_t i = 0; i < nodes.size(); ++i) {
        ids.emplace(nodes[i], static_cast<int>(i));
    }
    auto placed = [&](const Node* user) -> std::optional<std::string> {
        // A block's results belong to the node that owns the block.
        while (user && user->kind() == c10::prim::Return && user->owningBlock()->owningNode()) {
            user = user->owningBlock()->owningNode();
        }
        if (!user || user == out.graph->return_node()) {
            return std::nullopt; // the graph's output: outside every module
        }
        const auto found = ids.find(user);
        if (found == ids.end()) {
            return std::string(); // not drawn: counted as the root's
        }
        return placedModule(out.model, out.model.nodes[static_cast<size_t>(found->second)]);
    };
    auto withoutCallStack = [&](const Node* user) {
        while (user && user->kind() == c10::prim::Return && user->owningBlock()->owningNode()) {
            user = user->owningBlock()->owningNode();
        }
        if (!user || user == out.graph->return_node() || !user->owningBlock()->owningNode()) {
            return false; // the graph's own block: the call stack (or the root) is right
        }
        const auto found = ids.find(user);
        return found != ids.end() &&
               out.model.nodes[static_cast<size_t>(found->second)].module.empty();
    };
    Graph& graph = *out.graph;
    auto addProbe = [&](Value* v, Node* after, int node, int output) {
        Site site;
        site.node = node;
        site.output = output;
        site.value = v->debugName();
        std::vector<std::string> modules;
        if (node >= 0) {
            // The modules (this node's and its ancestors) that a use outside of makes this value
            // their output.
            const std::string own =
                placedModule(out.model, out.model.nodes[static_cast<size_t>(node)]);
            std::set<std::string> outputs;
            for (const auto& use : v->uses()) {
                if (!own.empty() && withoutCallStack(use.user)) {
                    // PyTorch 1.13 gives no call stack to the nodes in an if's or a loop's
                    // blocks inside inlined calls (BatchNorm's training check): where they run
                    // is not known, so they do not make a value a module's output.
                    continue;
                }
                const auto where = placed(use.user);
                std::string ancestor = own;
                while (!ancestor.empty()) {
                    if (!where || !within(*where, ancestor)) {
                        outputs.insert(ancestor);
                    }
                    const auto dot = ancestor.rfind('.');
                    ancestor = dot == std::string::npos ? std::string() : ancestor.substr(0, dot);
                }
            }
            modules.assign(outputs.begin(), outputs.end());
        }
        const int index = static_cast<int>(out.sites.size());
        out.sites.push_back(std::move(site));
        out.siteModules.push_back(std::move(modules));
        Node* insertBefore = after ? after->next() : graph.block()->nodes().front();
        torch::jit::WithInsertPoint guard(insertBefore);
        Value* id = graph.insertConstant(static_cast<int64_t>(index));
        graph.insertNode(graph.create(probeSymbol(), {v, id}, 0));
    };
    // The method's tensor inputs (self excluded), probed first.
    const auto inputs = graph.inputs();
    for (size_t i = 1; i < inputs.size(); ++i) {
        if (isTensorType(inputs[i])) {
            addProbe(inputs[i], nullptr, -1, static_cast<int>(i - 1));
        }
    }
    out.inputSites = static_cast<int>(out.sites.size());
    for (size_t id = 0; id < nodes.size(); ++id) {
        Node* node = nodes[id];
        if (!probesOutputs(node)) {
            continue;
        }
        const auto outputs = node->outputs();
        for (size_t o = 0; o < outputs.size(); ++o) {
            if (isTensorType(outputs[o])) {
                addProbe(outputs[o], node, static_cast<int>(id), static_cast<int>(o));
            }
        }
    }
    // A module output changed in place later in the module (ResNet's `out += identity`, the
    // `result += input` of an inverted residual) is the module's output after that change: the
    // modules move to the last in-place op's own output (it aliases the value).
    std::map<std::pair<int, int>, size_t> siteOf; // (node, output) -> site
    for (size_t i = 0; i < out.sites.size(); ++i) {
        siteOf.emplace(std::make_pair(out.sites[i].node, out.sites[i].output), i);
    }
    for (size_t i = 0; i < out.sites.size(); ++i) {
        if (out.siteModules[i].empty() || out.sites[i].node < 0) {
            continue;
        }
        Value* v = nodes[static_cast<size_t>(out.sites[i].node)]
                       ->outputs()[static_cast<size_t>(out.sites[i].output)];
        std::vector<std::string> kept;
        for (const auto& path : out.siteModules[i]) {
            // The last in-place op on the value inside this module (one outside it, like the
            // in-place ReLU after a BatchNorm, changes it after the module returned).
            int latest = -1;
            for (const auto& use : v->uses()) {
                const Node* user = use.user;
                const auto found = ids.find(user);
                const auto* schema = user->maybeSchema();
                if (found == ids.end() || use.offset != 0 || !schema ||
                    schema->arguments().empty() || !schema->arguments()[0].alias_info() ||
                    !schema->arguments()[0].alias_info()->isWrite() || user->outputs().empty()) {
                    continue;
                }
                const auto where = placed(user);
                if (where && within(*where, path)) {
                    latest = std::max(latest, found->second);
                }
            }
            const auto to = siteOf.find({latest, 0});
            if (latest >= 0 && to != siteOf.end()) {
                out.siteModules[to->second].push_back(path);
            } else {
                kept.push_back(path);
            }
        }
        out.siteModules[i] = std::move(kept);
    }
    return out;
}

// Runs the instrumented graph once through the interpreter (no graph executor, so no optimisation
// moves or removes anything), the probes reporting to `run`.
c10::IValue runInstrumented(const Instrumented& instrumented, const torch::jit::Module& module,
                            const std::vector<c10::IValue>& inputs, ProbeRun& run,
                            const torch::Device& device) {
    run.sites = instrumented.sites;
    run.siteModules = instrumented.siteModules;
    run.occurrences.assign(run.sites.size(), 0);
    torch::jit::Code code(instrumented.graph, "probed");
    torch::jit::Stack stack;
    stack.push_back(module._ivalue());
    stack.insert(stack.end(), inputs.begin(), inputs.end());
    // The arguments left out take their defaults, as a call of the method would give them.
    if (instrumented.schema) {
        instrumented.schema->checkAndNormalizeInputs(stack, {});
    }
    c10::InferenceMode inferenceMode;
    activeRun = &run;
    try {
        torch::jit::InterpreterState(code).run(stack);
        detail::synchronize(device);
    } catch (...) {
        activeRun = nullptr;
        throw;
    }
    activeRun = nullptr;
    return stack.empty() ? c10::IValue() : stack.front();
}

// A dict of module paths to tensors (torch.save in Python), for comparing with.
Expected<std::map<std::string, at::Tensor>> referenceTensors(const std::string& path) {
    auto value = detail::loadValueFile(path);
    if (!value) {
        return value.error();
    }
    if (!value->isGenericDict()) {
        return Error{ErrorKind::Input, "'" + path +
                                           "' does not hold a dict from module paths to tensors "
                                           "(torch.save({name: tensor, ...}))"};
    }
    std::map<std::string, at::Tensor> tensors;
    for (const auto& entry : value->toGenericDict()) {
        if (entry.key().isString() && entry.value().isTensor()) {
            tensors.emplace(entry.key().toStringRef(), entry.value().toTensor());
        }
    }
    if (tensors.empty()) {
        return Error{ErrorKind::Input, "'" + path + "' holds no string -> tensor entries"};
    }
    return tensors;
}

} // namespace

Expected<ActivationReport> Session::activations(const ActivationRequest& request) {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    if (request.bins < 1 || request.bins > 4096) {
        return Error{ErrorKind::Input, "the histogram takes 1 to 4096 bins"};
    }
    auto method = detail::findMethod(*impl_->module, "", request.run.method);
    if (!method) {
        return method.error();
    }
    auto prepared = detail::prepareRun(*impl_->module, impl_->device, *method, request.run);
    if (!prepared) {
        return prepared.error();
    }
    ActivationReport report;
    report.model = impl_->path;
    report.method = request.run.method;
    report.device = prepared->device.str();
    report.tolerance = request.tolerance;
    const int compareModes =
        (request.compareDevice.empty() ? 0 : 1) + (request.compareRun ? 1 : 0) +
        (request.referenceFile.empty() ? 0 : 1) + (request.referenceModel.empty() ? 0 : 1);
    if (compareModes > 1) {
        return Error{ErrorKind::Input,
                     "compare with one thing at a time: a device, other inputs, a file of "
                     "values or a model"};
    }
    try {
        Instrumented instrumented = instrument(*impl_->module, *method);
        const std::set<int> pins(request.pinNodes.begin(), request.pinNodes.end());
        for (auto& site : instrumented.sites) {
            site.pinned = pins.count(site.node) > 0;
        }
        // References by module path: from a file, or from another model's run.
        std::map<std::string, at::Tensor> references;
        std::string referenceWhere;
        if (!request.referenceFile.empty()) {
            auto loaded = referenceTensors(request.referenceFile);
            if (!loaded) {
                return loaded.error();
            }
            references = std::move(loaded).value();
            referenceWhere = request.referenceFile;
            report.comparison = "values saved in " + request.referenceFile;
        }
        if (!request.referenceModel.empty()) {
            Session other;
            for (const auto& library : request.referenceOperatorLibraries) {
                if (auto error = other.loadOperatorLibrary(library)) {
                    return *error;
                }
            }
            LoadOptions options;
            options.includeCode = false;
            auto fromReference = [&](Error error) {
                error.message = request.referenceModel + ": " + error.message;
                return error;
            };
            if (auto loaded = other.load(request.referenceModel, options); !loaded) {
                return fromReference(loaded.error());
            }
            auto otherMethod = detail::findMethod(*other.impl_->module, "", request.run.method);
            if (!otherMethod) {
                return fromReference(otherMethod.error());
            }
            auto otherInputs = detail::prepareRun(*other.impl_->module, other.impl_->device,
                                                  *otherMethod, request.run);
            if (!otherInputs) {
                return fromReference(otherInputs.error());
            }
            const Instrumented theirs = instrument(*other.impl_->module, *otherMethod);
            ProbeRun run;
            run.bins = 1;
            run.keepModuleOutputs = true;
            try {
                runInstrumented(theirs, *other.impl_->module, otherInputs->inputs, run,
                                otherInputs->device);
            } catch (const std::exception& error) {
                Error e = detail::errorFromException(error, ErrorKind::Model);
                e.message = request.run.method + " failed: " + e.message;
                return fromReference(e);
            }
            references = std::move(run.moduleOutputs);
            referenceWhere = request.referenceModel;
            report.comparison = "the module outputs of " + request.referenceModel;
        }
        if (!references.empty()) {
            std::set<std::string> matched;
            for (size_t s = 0; s < instrumented.sites.size(); ++s) {
                // A value that is the output of several modules (a Sequential and its last
                // child) is compared with the innermost one's reference; the others are the same
                // value in Python too.
                for (const auto& path : instrumented.siteModules[s]) {
                    const auto found = references.find(path);
                    if (found == references.end()) {
                        continue;
                    }
                    matched.insert(path);
                    if (!instrumented.sites[s].reference.defined() ||
                        path.size() > instrumented.sites[s].referenceName.find(" in ")) {
                        instrumented.sites[s].reference = found->second.to(prepared->device);
                        instrumented.sites[s].referenceName = path + " in " + referenceWhere;
                    }
                }
            }
            for (const auto& [name, tensor] : references) {
                if (!matched.count(name)) {
                    report.unmatched.push_back(name);
                }
            }
        }
        ProbeRun run;
        run.bins = request.bins;
        run.pinBudget = request.pinBytes;
        // A second run to compare with, node by node: on another device, or with other inputs.
        std::optional<RunRequest> second;
        std::string secondName;
        if (!request.compareDevice.empty()) {
            auto device = detail::parseDevice(request.compareDevice);
            if (!device) {
                return device.error();
            }
            second = request.run;
            second->device = device->str();
            secondName = device->str();
            report.comparison = "the same run on " + device->str();
        } else if (request.compareRun) {
            second = *request.compareRun;
            second->method = request.run.method;
            secondName = "the other inputs";
            report.comparison = "the run with the other inputs";
        }
        if (second) {
            run.keepAll = true;
            run.keepBudget = request.compareBytes;
        }
        const auto start = std::chrono::steady_clock::now();
        const c10::IValue output =
            runInstrumented(instrumented, *impl_->module, prepared->inputs, run, prepared->device);
        report.runMs = detail::elapsedMs(start);
        if (second) {
            auto secondInputs = detail::prepareRun(*impl_->module, impl_->device, *method, *second);
            if (!secondInputs) {
                Error e = secondInputs.error();
                e.message = "the run to compare with: " + e.message;
                return e;
            }
            if (request.compareRun) {
                std::string inputs;
                for (const auto& d : secondInputs->descriptions) {
                    inputs += (inputs.empty() ? "" : ", ") + d;
                }
                secondName =
                    (inputs.empty() ? "no inputs" : inputs) + " on " + secondInputs->device.str();
                report.comparison = "the run with " + secondName;
            }
            ProbeRun other;
            other.bins = 1;
            other.against = &run.kept;
            runInstrumented(instrumented, *impl_->module, secondInputs->inputs, other,
                            secondInputs->device);
            for (const auto& [key, difference] : other.differences) {
                const auto at = run.index.find(key);
                if (at == run.index.end()) {
                    continue;
                }
                auto& record = run.records[at->second];
                record.comparedWith = secondName;
                if (difference.second.empty()) {
                    record.compared = true;
                    record.maxAbsDiff = difference.first;
                } else {
                    record.compareNote = difference.second;
                }
            }
            if (run.keepOverflow) {
                report.notes.push_back("the values of the first run took more than " +
                                       formatBytes(request.compareBytes) +
                                       ": later values were not compared");
            }
        }
        // A module output compared with a saved value: only its last occurrence is what a forward
        // hook would have kept.
        if (!references.empty()) {
            std::map<int, size_t> last;
            for (size_t i = 0; i < run.records.size(); ++i) {
                if (!run.records[i].comparedWith.empty()) {
                    const auto site = std::find_if(run.index.begin(), run.index.end(),
                                                   [&](const auto& e) { return e.second == i; });
                    if (site != run.index.end()) {
                        if (auto previous = last.find(site->first.first); previous != last.end()) {
                            auto& earlier = run.records[previous->second];
                            earlier.compared = false;
                            earlier.maxAbsDiff = 0;
                            earlier.comparedWith.clear();
                            earlier.compareNote.clear();
                        }
                        last[site->first.first] = i;
                    }
                }
            }
        }
        if (run.pinOverflow) {
            report.notes.push_back("pinned values beyond " + formatBytes(request.pinBytes) +
                                   " were not kept");
        }
        report.pinnedBytes = run.pinnedBytes;
        // Attribution: the graph model's node facts on every record.
        std::map<OccurrenceKey, size_t> bySite = run.index;
        for (const auto& [key, index] : bySite) {
            auto& record = run.records[index];
            record.moduleOutputs = instrumented.siteModules[static_cast<size_t>(key.first)];
            if (record.node < 0) {
                record.kind = "input";
                continue;
            }
            const GraphNode& node = instrumented.model.nodes[static_cast<size_t>(record.node)];
            record.kind = node.kind;
            record.module = placedModule(instrumented.model, node);
            record.source = node.source;
            record.sourceText = node.sourceText;
            record.irLine = node.irLine;
        }
        report.records = std::move(run.records);
        for (size_t i = 0; i < report.records.size(); ++i) {
            const auto& record = report.records[i];
            if (report.firstNonFinite < 0 && record.nonFinite()) {
                report.firstNonFinite = static_cast<int>(i);
            }
            if (record.compared) {
                ++report.comparedCount;
                // The first node: an input that differs is the change itself, not its effect.
                if (report.firstDifference < 0 && record.node >= 0 &&
                    record.maxAbsDiff > request.tolerance) {
                    report.firstDifference = static_cast<int>(i);
                }
            }
        }
        // The values the first non-finite node read: the latest record of each input value.
        if (report.firstNonFinite >= 0) {
            const auto& bad = report.records[static_cast<size_t>(report.firstNonFinite)];
            if (bad.node >= 0) {
                for (const auto& port :
                     instrumented.model.nodes[static_cast<size_t>(bad.node)].inputs) {
                    for (int i = report.firstNonFinite - 1; i >= 0; --i) {
                        if (report.records[static_cast<size_t>(i)].value == port.name) {
                            auto& found = report.firstNonFiniteInputs;
                            if (std::find(found.begin(), found.end(), i) == found.end()) {
                                found.push_back(i);
                            }
                            break;
                        }
                    }
                }
            }
        }
        report.output = detail::describeOutput(output, request.run.previewValues);
    } catch (const std::exception& error) {
        Error e = detail::errorFromException(error, ErrorKind::Model);
        e.message = request.run.method + " failed: " + e.message;
        return e;
    }
    return report;
}

// ---- Passes ----

namespace {

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
        bool frozen = false;
        auto applyPasses = [&](bool portable, std::vector<std::string>* applied,
                               std::vector<std::string>* notes) {
            torch::jit::Module copy = original.clone();
            frozen = false;
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
            return copy;
        };
        torch::jit::Module copy = applyPasses(false, &result.applied, &result.notes);
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
            ProbeRun mine;
            mine.bins = 1;
            mine.keepModuleOutputs = true;
            runInstrumented(instrument(original, originalMethod), original, inputs, mine,
                            prepared->device);
            ProbeRun theirs;
            theirs.bins = 1;
            theirs.keepModuleOutputs = true;
            const Instrumented copied = instrument(copy, copyMethod);
            runInstrumented(copied, copy, inputs, theirs, prepared->device);
            // The modules in execution order, innermost first where several share a value.
            auto executionOrder = [](const ProbeRun& run) {
                std::vector<std::string> order;
                std::vector<std::pair<size_t, int>> bySite; // record index, site
                for (const auto& [key, index] : run.index) {
                    bySite.emplace_back(index, key.first);
                }
                std::sort(bySite.begin(), bySite.end());
                for (const auto& [index, site] : bySite) {
                    std::vector<std::string> paths = run.siteModules[static_cast<size_t>(site)];
                    std::sort(paths.begin(), paths.end(),
                              [](const auto& a, const auto& b) { return a.size() > b.size(); });
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
                double best = maxAbsDifference(value->second, reference->second)
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
                    if (other == mine.moduleOutputs.end()) {
                        continue;
                    }
                    const double d = maxAbsDifference(value->second, other->second)
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
                toSave = applyPasses(true, nullptr, nullptr);
                result.notes.push_back(
                    "optimize-for-inference's MKLDNN conversion cannot be saved (PyTorch writes "
                    "its MKLDNN constants without their values); the saved copy has its other "
                    "rewrites "
                    "(frozen conv, batch-norm, add and mul folding) and runs on dense tensors");
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

// ---- Two archives ----

namespace {

std::string typeName(const torch::jit::Module& module) {
    const auto type = module.type();
    return type->name() ? type->name()->qualifiedName() : type->str();
}

std::map<std::string, torch::jit::Module> modulesByPath(const torch::jit::Module& root) {
    std::map<std::string, torch::jit::Module> modules;
    for (const auto& entry : root.named_modules()) {
        modules.emplace(entry.name, entry.value);
    }
    return modules;
}

struct NamedTensor {
    at::Tensor tensor;
    bool buffer = false;
};

std::map<std::string, NamedTensor> tensorsByName(const torch::jit::Module& root) {
    std::map<std::string, NamedTensor> tensors;
    for (const auto& entry : root.named_parameters(/*recurse=*/true)) {
        tensors[entry.name] = {entry.value, false};
    }
    for (const auto& entry : root.named_buffers(/*recurse=*/true)) {
        tensors[entry.name] = {entry.value, true};
    }
    return tensors;
}

// Attributes that are neither modules nor tensors, as short text.
std::map<std::string, std::string> plainAttributes(const torch::jit::Module& module) {
    std::map<std::string, std::string> attributes;
    const auto type = module.type();
    const auto object = module._ivalue();
    for (size_t i = 0; i < type->numAttributes(); ++i) {
        const auto& attributeType = type->getAttribute(i);
        if (attributeType->cast<c10::ClassType>() &&
            attributeType->castRaw<c10::ClassType>()->is_module()) {
            continue;
        }
        const c10::IValue value = object->getSlot(i);
        if (value.isTensor() || value.isModule()) {
            continue;
        }
        attributes[type->getAttributeName(i)] = detail::previewValue(value, 120);
    }
    return attributes;
}

// (elements that differ, max |difference|) of two contiguous float32 CPU tensors of one shape; NaN
// against NaN is equal, NaN against a number an infinite difference.
std::pair<int64_t, double> floatDifference(const at::Tensor& a, const at::Tensor& b) {
    const float* x = a.data_ptr<float>();
    const float* y = b.data_ptr<float>();
    const int64_t n = a.numel();
    constexpr int64_t kGrain = int64_t{1} << 16;
    const int64_t chunks = (n + kGrain - 1) / kGrain;
    std::vector<std::pair<int64_t, double>> partial(static_cast<size_t>(chunks), {0, 0.0});
    at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            int64_t differing = 0;
            float largest = 0;
            const int64_t to = std::min(n, (c + 1) * kGrain);
            for (int64_t i = c * kGrain; i < to; ++i) {
                if (x[i] != y[i]) {
                    if (std::isnan(x[i]) && std::isnan(y[i])) {
                        continue;
                    }
                    ++differing;
                    const float d = std::abs(x[i] - y[i]);
                    largest = std::isnan(d) ? std::numeric_limits<float>::infinity()
                                            : std::max(largest, d);
                }
            }
            partial[static_cast<size_t>(c)] = {differing, largest};
        }
    });
    std::pair<int64_t, double> total{0, 0.0};
    for (const auto& [differing, largest] : partial) {
        total.first += differing;
        total.second = std::max(total.second, largest);
    }
    return total;
}

// The code files (and the constants they use) of an archive, by their name inside it; empty when
// the zip cannot be read (then the code is compared method by method).
std::map<std::string, std::string> codeRecords(const std::string& path) {
    std::map<std::string, std::string> records;
    ZipReader zip(path);
    if (!zip.ok()) {
        return records;
    }
    for (const auto& record : zip.records()) {
        const auto slash = record.name.find('/');
        const std::string inner =
            slash == std::string::npos ? record.name : record.name.substr(slash);
        if (inner.rfind("/code/", 0) != 0 && inner != "/constants.pkl") {
            continue;
        }
        const auto bytes = zip.read(record, uint64_t{64} << 20);
        if (!bytes) {
            return {};
        }
        records[inner] = *bytes;
    }
    return records;
}

std::map<std::string, std::string> extraFiles(const std::string& path) {
    std::map<std::string, std::string> files;
    ZipReader zip(path);
    if (!zip.ok()) {
        return files;
    }
    for (const auto& record : zip.records()) {
        const auto at = record.name.find("/extra/");
        if (at == std::string::npos) {
            continue;
        }
        auto bytes = zip.read(record, uint64_t{64} << 20);
        files[record.name.substr(at + 7)] = bytes ? *bytes : std::string("<unreadable>");
    }
    return files;
}

} // namespace

Expected<ArchiveDiff> Session::diff(const Session& other) const {
    if (!impl_->module || !other.impl_->module) {
        return Error{ErrorKind::Internal, "both models must be loaded"};
    }
    const auto start = std::chrono::steady_clock::now();
    ArchiveDiff out;
    out.pathA = impl_->path;
    out.pathB = other.impl_->path;
    try {
        const auto a = modulesByPath(*impl_->module);
        const auto b = modulesByPath(*other.impl_->module);
        for (const auto& [path, module] : a) {
            const auto found = b.find(path);
            if (found == b.end()) {
                out.modules.push_back(
                    {path, ModuleChange::Kind::Removed, demangled(typeName(module)), ""});
            } else if (demangled(typeName(module)) != demangled(typeName(found->second))) {
                out.modules.push_back({path, ModuleChange::Kind::Retyped,
                                       demangled(typeName(module)),
                                       demangled(typeName(found->second))});
            }
        }
        for (const auto& [path, module] : b) {
            if (!a.count(path)) {
                out.modules.push_back(
                    {path, ModuleChange::Kind::Added, "", demangled(typeName(module))});
            }
        }
        // Tensors
        const auto ta = tensorsByName(*impl_->module);
        const auto tb = tensorsByName(*other.impl_->module);
        for (const auto& [name, entry] : ta) {
            const auto found = tb.find(name);
            TensorChange change;
            change.name = name;
            change.buffer = entry.buffer;
            change.shapeA = entry.tensor.sizes().vec();
            change.dtypeA = detail::dtypeName(entry.tensor.scalar_type());
            change.numel = entry.tensor.numel();
            if (found == tb.end()) {
                change.kind = TensorChange::Kind::Removed;
                out.tensors.push_back(change);
                continue;
            }
            const at::Tensor& x = entry.tensor;
            const at::Tensor y = found->second.tensor.to(x.device());
            change.shapeB = y.sizes().vec();
            change.dtypeB = detail::dtypeName(y.scalar_type());
            ++out.tensorsCompared;
            if (change.shapeA != change.shapeB) {
                change.kind = TensorChange::Kind::Shape;
                out.tensors.push_back(change);
                continue;
            }
            if (change.dtypeA != change.dtypeB) {
                change.kind = TensorChange::Kind::Dtype;
                out.tensors.push_back(change);
                continue;
            }
            const at::Tensor dx = x.is_quantized() ? x.dequantize() : x;
            const at::Tensor dy = y.is_quantized() ? y.dequantize() : y;
            if (dx.device().is_cpu() && dx.scalar_type() == at::kFloat) {
                // Most parameters: one pass over both, no temporaries.
                const auto difference = floatDifference(dx.contiguous(), dy.contiguous());
                if (difference.first == 0) {
                    continue;
                }
                change.differing = difference.first;
                change.maxAbsDiff = difference.second;
                change.kind = TensorChange::Kind::Values;
                out.tensors.push_back(change);
                continue;
            }
            if (at::equal(dx, dy)) {
                continue;
            }
            double largest = 0;
            if (dx.is_floating_point()) {
                largest = (dx - dy).abs().max().item<double>();
            } else {
                largest = (dx.to(at::kDouble) - dy.to(at::kDouble)).abs().max().item<double>();
            }
            change.differing = dx.ne(dy).sum().item<int64_t>();
            if (std::isnan(largest)) {
                // equal() says NaN != NaN: look closer before calling it a change.
                largest = maxAbsDifference(dx, dy).value_or(0);
                const at::Tensor same = (dx == dy) | (dx.isnan() & dy.isnan());
                change.differing = change.numel - same.sum().item<int64_t>();
            }
            if (change.differing == 0) {
                continue;
            }
            change.kind = TensorChange::Kind::Values;
            change.maxAbsDiff = largest;
            out.tensors.push_back(change);
        }
        for (const auto& [name, entry] : tb) {
            if (!ta.count(name)) {
                TensorChange change;
                change.name = name;
                change.kind = TensorChange::Kind::Added;
                change.buffer = entry.buffer;
                change.shapeB = entry.tensor.sizes().vec();
                change.dtypeB = detail::dtypeName(entry.tensor.scalar_type());
                change.numel = entry.tensor.numel();
                out.tensors.push_back(change);
            }
        }
        // Attributes, code and graphs of the modules both have; each pair of types once. When
        // both archives hold the same code files, every method's code and graph are the same
        // (they are compiled from them): nothing to print.
        const auto codeA = codeRecords(impl_->path);
        const bool sameCode = !codeA.empty() && codeA == codeRecords(other.impl_->path);
        std::map<std::pair<std::string, std::string>, std::vector<TextChange>> byTypes;
        for (const auto& [path, module] : a) {
            const auto found = b.find(path);
            if (found == b.end()) {
                continue;
            }
            const auto attributesA = plainAttributes(module);
            const auto attributesB = plainAttributes(found->second);
            for (const auto& [name, value] : attributesA) {
                const auto theirs = attributesB.find(name);
                if (theirs == attributesB.end() || theirs->second != value) {
                    out.attributes.push_back(
                        {path, name, value, theirs == attributesB.end() ? "" : theirs->second});
                }
            }
            for (const auto& [name, value] : attributesB) {
                if (!attributesA.count(name)) {
                    out.attributes.push_back({path, name, "", value});
                }
            }
            if (sameCode) {
                continue;
            }
            const auto types = std::make_pair(typeName(module), typeName(found->second));
            auto cached = byTypes.find(types);
            if (cached == byTypes.end()) {
                std::vector<TextChange> changes;
                std::map<std::string, torch::jit::Method> methodsA, methodsB;
                for (const auto& m : module.get_methods()) {
                    methodsA.emplace(m.name(), m);
                }
                for (const auto& m : found->second.get_methods()) {
                    methodsB.emplace(m.name(), m);
                }
                std::set<std::string> names;
                for (const auto& [name, m] : methodsA) {
                    names.insert(name);
                }
                for (const auto& [name, m] : methodsB) {
                    names.insert(name);
                }
                for (const auto& name : names) {
                    const auto ma = methodsA.find(name);
                    const auto mb = methodsB.find(name);
                    const std::string codeA =
                        ma != methodsA.end() ? detail::methodCode(ma->second) : "";
                    const std::string codeB =
                        mb != methodsB.end() ? detail::methodCode(mb->second) : "";
                    const std::string graphA =
                        ma != methodsA.end() ? ma->second.graph()->toString() : "";
                    const std::string graphB =
                        mb != methodsB.end() ? mb->second.graph()->toString() : "";
                    // Mangled class names differ between two saves of one model: not a change.
                    for (const auto& [what, ta2, tb2] :
                         {std::make_tuple("code", demangled(codeA), demangled(codeB)),
                          std::make_tuple("graph", demangled(graphA), demangled(graphB))}) {
                        if (ta2 == tb2) {
                            continue;
                        }
                        TextChange change;
                        change.method = name;
                        change.what = what;
                        const auto lines = diffLines(ta2, tb2);
                        for (const auto& line : lines) {
                            change.added += line.op == DiffLine::Op::Added ? 1 : 0;
                            change.removed += line.op == DiffLine::Op::Removed ? 1 : 0;
                        }
                        change.lines = withContext(lines, 3);
                        changes.push_back(std::move(change));
                    }
                }
                cached = byTypes.emplace(types, std::move(changes)).first;
            }
            for (TextChange change : cached->second) {
                change.module = path;
                out.texts.push_back(std::move(change));
            }
        }
        const auto extraA = extraFiles(impl_->path);
        const auto extraB = extraFiles(other.impl_->path);
        for (const auto& [name, content] : extraA) {
            const auto found = extraB.find(name);
            if (found == extraB.end()) {
                out.extraFiles.push_back({name, "removed"});
            } else if (found->second != content) {
                out.extraFiles.push_back({name, "changed"});
            }
        }
        for (const auto& [name, content] : extraB) {
            if (!extraA.count(name)) {
                out.extraFiles.push_back({name, "added"});
            }
        }
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Model);
    }
    out.identical = out.modules.empty() && out.tensors.empty() && out.attributes.empty() &&
                    out.texts.empty() && out.extraFiles.empty();
    out.diffMs = detail::elapsedMs(start);
    return out;
}

} // namespace scriptscope
