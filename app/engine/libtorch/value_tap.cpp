// The value tap: an operator after every node of a copy of a method's inlined graph that takes the
// statistics of each value the run computes (and keeps, compares or pins it), for the activation
// inspector, the pass explorer and the archive comparison.
#include "value_tap.h"
#include "engine_internal.h"
#include "float_stats.h"
#include "stats.h"
#include "torch_values.h"
#include "verdict.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>

namespace scriptscope::detail {
namespace {

// ---- Statistics of one tensor ----

// min/max/mean/std/NaN/Inf and a histogram of a contiguous float32 CPU tensor in two passes
// (float_stats.h, vectorized), in parallel over chunks (the tap runs after every node: this is
// most of its cost).
void floatStatistics(const float* data, int64_t n, int bins, ActivationRecord& r) {
    constexpr int64_t kGrain = int64_t{1} << 15;
    const int64_t chunks = (n + kGrain - 1) / kGrain;
    std::vector<FloatSummary> partial(static_cast<size_t>(chunks));
    at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            const int64_t from = c * kGrain;
            partial[static_cast<size_t>(c)] =
                summarizeFloats(data + from, std::min(n, from + kGrain) - from);
        }
    });
    FloatSummary all;
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
            const auto i = static_cast<size_t>(c);
            std::vector<int64_t> hist(static_cast<size_t>(bins), 0);
            const int64_t from = c * kGrain;
            const FloatSummary& mine = partial[i];
            squares[i] = histogramFloats(data + from, std::min(n, from + kGrain) - from, lo, scale,
                                         bins, fmean, mine.nan + mine.inf == 0, hist.data());
            counts[i] = std::move(hist);
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
        // A permuted view (a transpose in attention) covers one dense span of memory once: its
        // statistics are that span's, read where it is instead of from a contiguous copy.
        const bool dense = t.is_contiguous() || t.is_non_overlapping_and_dense();
        const at::Tensor c = dense ? t : t.contiguous();
        floatStatistics(c.data_ptr<float>(), c.numel(), bins, r);
    } else {
        genericStatistics(t, bins, r);
    }
}

// What tensorStatistics found for a value, taken by another with the same elements.
void copyStatistics(const ActivationRecord& from, ActivationRecord& to) {
    to.shape = from.shape;
    to.dtype = from.dtype;
    to.device = from.device;
    to.numel = from.numel;
    to.min = from.min;
    to.max = from.max;
    to.mean = from.mean;
    to.stddev = from.stddev;
    to.nanCount = from.nanCount;
    to.infCount = from.infCount;
    to.histogramMin = from.histogramMin;
    to.histogramMax = from.histogramMax;
    to.histogram = from.histogram;
    to.note = from.note;
}

} // namespace

at::Tensor floatCopy(const at::Tensor& t) {
    at::Tensor x = t.is_quantized() ? t.dequantize() : t.detach();
    return x.to(at::kCPU, at::kFloat, /*non_blocking=*/false, /*copy=*/true).contiguous();
}

void recordValue(TapRun& tapRun, int siteIndex, const at::Tensor& tensor,
                 const ActivationRecord* sameElements) {
    TapRun* run = &tapRun;
    if (siteIndex < 0 || static_cast<size_t>(siteIndex) >= run->sites.size()) {
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
    if (sameElements) {
        copyStatistics(*sameElements, r);
        r.shape = tensor.sizes().vec(); // the one thing a view of the same elements changes
    } else {
        tensorStatistics(tensor, run->bins, r);
    }
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
    // Every value counts as its modules' next call, on both sides alike (keepModuleOutputs keeps a
    // place for a value without data too).
    const bool byCall = compareWithModuleCall(*run, s, tensor, dense, r);
    if (dense && !byCall && site.reference.defined()) {
        r.comparedWith = site.referenceName;
        r.referenceNode = site.referenceNode;
        compareInto(r, tensor, site.reference);
        run->siteCompared.insert(run->records.size());
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
            ActivationRecord& difference = run->differences[key];
            compareInto(difference, tensor, found->second);
        }
    }
    if (run->keepModuleOutputs && s < run->siteModules.size() && !run->siteModules[s].empty()) {
        // Every call's output, one copy for the modules that share it; a value without data (not
        // dense) keeps its place in the calls' order.
        at::Tensor copy;
        const uint64_t bytes =
            dense ? static_cast<uint64_t>(tensor.numel()) * sizeof(float) : uint64_t{0};
        if (dense && run->moduleBytes + bytes <= run->moduleBudget) {
            copy = floatCopy(tensor);
            run->moduleBytes += bytes;
        } else if (dense) {
            run->moduleOverflow = true;
        }
        for (const auto& path : run->siteModules[s]) {
            run->moduleOutputs[path].push_back(ModuleCall{copy, site.node});
        }
    }
    if (dense && run->keepOperatorOutputs && (!site.operators.empty() || !site.op.empty())) {
        // One copy, under its name and in its module's sequence; a later occurrence replaces it.
        auto& placed = run->moduleOperators[site.module];
        const auto previous = placed.find(siteIndex);
        if (previous != placed.end()) {
            run->operatorBytes -=
                static_cast<uint64_t>(previous->second.value.numel()) * sizeof(float);
            placed.erase(previous);
        }
        const uint64_t bytes = static_cast<uint64_t>(tensor.numel()) * sizeof(float);
        if (run->operatorBytes + bytes <= run->operatorBudget) {
            const at::Tensor copy = floatCopy(tensor);
            run->operatorBytes += bytes;
            // Under every name the value has, so that either model's names find it (a .pte's
            // call is its edge node and the export node it was lowered from); a later value of
            // the same name (the last node a call was lowered from) replaces an earlier one.
            for (const std::string& name : site.operators) {
                run->operatorOutputs[name] = copy;
                run->operatorNodes[name] = site.node;
            }
            if (!site.op.empty()) {
                placed[siteIndex] = PlacedValue{site.op, copy, site.node};
            }
        } else {
            for (const std::string& name : site.operators) {
                run->operatorOutputs.erase(name);
            }
            run->operatorOverflow = true;
        }
    }
    run->index[key] = run->records.size();
    run->records.push_back(std::move(r));
    if (run->memory) {
        run->memory->made(run->records, tensor);
    }
}

std::string comparableOperator(const std::string& kind) {
    if (kind.rfind("prim::", 0) == 0 || kind.empty()) {
        return {};
    }
    const size_t colons = kind.rfind("::");
    std::string op = colons == std::string::npos ? kind : kind.substr(colons + 2);
    const size_t dot = op.find('.');
    if (dot != std::string::npos) {
        op.resize(dot); // the overload
    }
    if (op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_') {
        op.pop_back(); // in place
    }
    return op;
}

void placeSite(Site& site, const GraphModel& model) {
    if (site.node < 0 || static_cast<size_t>(site.node) >= model.nodes.size()) {
        return;
    }
    const GraphNode& node = model.nodes[static_cast<size_t>(site.node)];
    site.module = placedModule(model, node);
    site.op = comparableOperator(node.kind);
}

bool within(const std::string& path, const std::string& module) {
    return module.empty() || path == module ||
           (path.size() > module.size() && path.compare(0, module.size(), module) == 0 &&
            path[module.size()] == '.');
}

// Python names classes of the same name in one process __torch__.___torch_mangle_N.Name; two
// archives of the same model may differ only there.
std::string demangled(const std::string& name) {
    static const std::regex mangle(R"(___torch_mangle_\d+\.)");
    // aten::warn's id is a counter of the process that scripted the model, as the mangle is.
    static const std::regex warnId(R"(\[warn_id=\d+\])");
    return std::regex_replace(std::regex_replace(name, mangle, ""), warnId, "");
}

std::string shapeText(c10::IntArrayRef shape) {
    std::string text;
    for (const int64_t size : shape) {
        text += (text.empty() ? "" : "x") + std::to_string(size);
    }
    return text.empty() ? "scalar" : text;
}

std::string placedModule(const GraphModel& model, const GraphNode& node) {
    int group = node.group;
    while (group >= 0 && model.groups[static_cast<size_t>(group)].kind == GraphGroup::Kind::Block) {
        group = model.groups[static_cast<size_t>(group)].parent;
    }
    return group >= 0 ? model.groups[static_cast<size_t>(group)].module : node.module;
}

std::vector<std::vector<std::vector<std::string>>>
outputModules(const GraphModel& g, const std::vector<std::string>& nodeModules,
              const std::set<std::string>& graphOutputs) {
    const auto moduleOf = [&](int node) {
        return node >= 0 && static_cast<size_t>(node) < nodeModules.size()
                   ? nodeModules[static_cast<size_t>(node)]
                   : std::string();
    };
    // Where each value is used: the modules of the nodes that read it.
    std::map<std::string, std::vector<std::string>> users;
    for (const GraphEdge& edge : g.edges) {
        if (edge.to >= 0 && static_cast<size_t>(edge.to) < g.nodes.size()) {
            users[edge.value].push_back(moduleOf(edge.to));
        }
    }
    size_t ids = 0;
    for (const GraphNode& node : g.nodes) {
        ids = std::max(ids, static_cast<size_t>(std::max(node.id, 0)) + 1);
    }
    std::vector<std::vector<std::vector<std::string>>> out(ids);
    for (const GraphNode& node : g.nodes) {
        if (node.id < 0) {
            continue;
        }
        const std::string own = moduleOf(node.id);
        auto& outputs = out[static_cast<size_t>(node.id)];
        for (const GraphPort& port : node.outputs) {
            std::set<std::string> modules;
            const auto found = users.find(port.name);
            const bool leaves = graphOutputs.count(port.name) > 0;
            for (std::string ancestor = own; !ancestor.empty();) {
                bool usedOutside = leaves;
                if (found != users.end()) {
                    for (const std::string& where : found->second) {
                        usedOutside = usedOutside || !within(where, ancestor);
                    }
                }
                if (usedOutside) {
                    modules.insert(ancestor);
                }
                const auto dot = ancestor.rfind('.');
                ancestor = dot == std::string::npos ? std::string() : ancestor.substr(0, dot);
            }
            outputs.emplace_back(modules.begin(), modules.end());
        }
    }
    return out;
}

} // namespace scriptscope::detail
