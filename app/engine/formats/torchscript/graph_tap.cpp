// The value tap in a TorchScript method: an operator (scriptscope::tap) after every node of a copy
// of the method's inlined graph, which hands each value the run computes to the tap's records
// (value_tap.h) for the activation inspector, the pass explorer and the archive comparison.
#include "graph_tap.h"
#include "graph_builder.h"
#include "session_internal.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace scriptscope::detail {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

thread_local TapRun* activeRun = nullptr;

void onTap(const at::Tensor& tensor, int siteIndex) {
    if (activeRun) {
        recordValue(*activeRun, siteIndex, tensor);
    }
}

const c10::Symbol& tapSymbol() {
    static const c10::Symbol symbol = c10::Symbol::fromQualString("scriptscope::tap");
    return symbol;
}

void registerTap() {
    // Side effects and CONSERVATIVE aliasing: nothing may remove or move it.
    static const torch::jit::RegisterOperators registered({torch::jit::Operator(
        "scriptscope::tap(Tensor x, int site) -> ()",
        [](torch::jit::Stack& stack) {
            const int64_t site = torch::jit::pop(stack).toInt();
            const c10::IValue x = torch::jit::pop(stack);
            if (x.isTensor()) {
                onTap(x.toTensor(), static_cast<int>(site));
            }
        },
        c10::AliasAnalysisKind::CONSERVATIVE)});
}

bool isTensorType(const Value* v) {
    return v->type()->kind() == c10::TypeKind::TensorType;
}

// Values of these nodes are the same values as others' (a block's results, a tuple's parts).
bool tapsOutputs(const Node* node) {
    const auto kind = node->kind();
    return node->blocks().empty() && kind != c10::prim::TupleUnpack &&
           kind != c10::prim::TupleIndex && kind != c10::aten::__getitem__;
}

} // namespace
Instrumented instrument(const torch::jit::Module& module, const torch::jit::Method& method) {
    registerTap();
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
    auto addTap = [&](Value* v, Node* after, int node, int output) {
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
        placeSite(site, out.model);
        const int index = static_cast<int>(out.sites.size());
        out.sites.push_back(std::move(site));
        out.siteModules.push_back(std::move(modules));
        Node* insertBefore = after ? after->next() : graph.block()->nodes().front();
        torch::jit::WithInsertPoint guard(insertBefore);
        Value* id = graph.insertConstant(static_cast<int64_t>(index));
        graph.insertNode(graph.create(tapSymbol(), {v, id}, 0));
    };
    // The method's tensor inputs (self excluded), tapped first.
    const auto inputs = graph.inputs();
    for (size_t i = 1; i < inputs.size(); ++i) {
        if (isTensorType(inputs[i])) {
            addTap(inputs[i], nullptr, -1, static_cast<int>(i - 1));
        }
    }
    out.inputSites = static_cast<int>(out.sites.size());
    for (size_t id = 0; id < nodes.size(); ++id) {
        Node* node = nodes[id];
        if (!tapsOutputs(node)) {
            continue;
        }
        const auto outputs = node->outputs();
        for (size_t o = 0; o < outputs.size(); ++o) {
            if (isTensorType(outputs[o])) {
                addTap(outputs[o], node, static_cast<int>(id), static_cast<int>(o));
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
// moves or removes anything), the taps reporting to `run`.
c10::IValue runInstrumented(const Instrumented& instrumented, const torch::jit::Module& module,
                            const std::vector<c10::IValue>& inputs, TapRun& run,
                            const torch::Device& device) {
    run.sites = instrumented.sites;
    run.siteModules = instrumented.siteModules;
    run.occurrences.assign(run.sites.size(), 0);
    torch::jit::Code code(instrumented.graph, "tapped");
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

} // namespace scriptscope::detail
