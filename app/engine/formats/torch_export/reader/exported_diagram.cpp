// A torch.export program as the diagram draws it: its nodes grouped by their nn_module_stack, the
// weights folded into their users, and the graphs that control flow calls (torch.cond's branches,
// while_loop's cond and body, map's body, the bodies of set_grad and autocast blocks) as blocks
// inside the node that calls them, as a TorchScript prim::If's blocks are drawn.
#include "exported_program.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace scriptscope {

namespace {

std::string lastPart(const std::string& path) {
    const size_t dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
}

bool within(const std::string& path, const std::string& module) {
    return module.empty() || path == module ||
           (path.size() > module.size() && path.compare(0, module.size(), module) == 0 &&
            path[module.size()] == '.');
}

// What each graph a control flow operator calls is to it: the label of its block.
std::string blockRole(const std::string& kind, size_t index) {
    if (kind == "higher_order::cond") {
        return index == 0 ? "true" : "false";
    }
    if (kind == "higher_order::while_loop") {
        return index == 0 ? "cond" : "body";
    }
    return "body";
}

// The values a node reads, in argument order, one per element (a list's elements each), not the
// graphs it calls: what a called graph's placeholders are bound to, from the end.
std::vector<std::string> operandNames(const Pt2Node& node) {
    std::vector<std::string> names;
    for (const Pt2Argument& argument : node.inputs) {
        if (argument.value.kind == Pt2Value::Kind::Graph) {
            continue;
        }
        for (const std::string& name : argument.value.names) {
            names.push_back(name);
        }
    }
    return names;
}

class ProgramDiagram {
public:
    ProgramDiagram(const Pt2Model& model, const ModelInfo& info)
        : model_(model)
        , info_(info) {}

    GraphModel build() {
        g_.method = "forward";
        g_.inlined = true;
        GraphGroup root;
        root.label = "(root)";
        root.type = lastPart(info_.modules.front().type);
        root.parameters = static_cast<int64_t>(info_.modules.front().totalParameterCount);
        g_.groups.push_back(root);
        Scope scope;
        // Parameters, buffers and constants are drawn as their users' attributes, as a
        // TorchScript graph's GetAttr values are: "4x3x3x3 float32 (conv.weight)".
        for (const Pt2SignatureEntry& entry : model_.inputs) {
            if (entry.kind == "USER_INPUT" || entry.target.empty()) {
                scope.values[entry.name] = Producer{-1, static_cast<int>(g_.inputs.size())};
                g_.inputs.push_back({entry.name, annotation(model_, entry.name)});
                continue;
            }
            std::string shape;
            if (const auto t = model_.tensors.find(entry.name); t != model_.tensors.end()) {
                for (size_t i = 0; i < t->second.sizes.size(); ++i) {
                    shape += (i ? "x" : "") + t->second.sizes[i];
                }
                shape = (shape.empty() ? std::string("scalar") : shape) + " " + t->second.dtype;
            }
            scope.folded[entry.name] =
                (shape.empty() ? std::string() : shape + " ") + "(" + entry.target + ")";
        }
        addGraph(model_, 0, scope, 0);
        for (size_t i = 0; i < model_.graphOutputs.size(); ++i) {
            const std::string& value = model_.graphOutputs[i];
            g_.outputs.push_back({value, annotation(model_, value)});
            connect(scope, model_, value, -1, static_cast<int>(i), false);
        }
        markRepeatedGroups(g_);
        return std::move(g_);
    }

private:
    // Where a value a graph reads comes from: a node's output, or one of the graph's inputs.
    struct Producer {
        int node = -1;
        int input = -1;
    };
    struct Scope {
        std::map<std::string, Producer> values;
        std::map<std::string, std::string> folded; // value -> the attribute text it is drawn as
        std::set<std::string> outer;               // values bound from outside this graph
    };

    static std::string annotation(const Pt2Model& graph, const std::string& value) {
        if (const auto t = graph.tensors.find(value); t != graph.tensors.end()) {
            return t->second.text();
        }
        if (const auto s = graph.symbols.find(value); s != graph.symbols.end()) {
            return "Sym(" + s->second + ")";
        }
        return {};
    }

    // The group of a node's module stack inside `base` (the root, or a block): its module
    // groups nested from the block's own module down, made on first use.
    int groupOf(const std::vector<Pt2ModuleFrame>& stack, int base) {
        int group = base;
        // A copy: adding a group below may move the vector.
        const std::string baseModule = g_.groups[static_cast<size_t>(base)].module;
        for (const Pt2ModuleFrame& frame : stack) {
            const std::string path = exported::modulePathOf(frame);
            if (path.empty() || within(baseModule, path)) {
                continue; // the block's module itself, or one around it
            }
            auto found = groups_.find({base, path});
            if (found == groups_.end()) {
                GraphGroup added;
                added.id = static_cast<int>(g_.groups.size());
                added.parent = group;
                added.module = path;
                added.type = lastPart(frame.type);
                const std::string& parent = g_.groups[static_cast<size_t>(group)].module;
                added.label = parent.empty() || path.compare(0, parent.size() + 1, parent + ".")
                                  ? path
                                  : path.substr(parent.size() + 1);
                if (const ModuleInfo* module = info_.findModule(path)) {
                    added.parameters = static_cast<int64_t>(module->totalParameterCount);
                }
                added.depth = g_.groups[static_cast<size_t>(group)].depth + 1;
                g_.groups.push_back(added);
                found = groups_.emplace(std::make_pair(base, path), added.id).first;
            }
            group = found->second;
        }
        return group;
    }

    // An edge for `value` into node `to` (or the graph's output `toOutput`), from what made it.
    void connect(const Scope& scope, const Pt2Model& graph, const std::string& value, int to,
                 int toOutput, bool intoBlock) {
        GraphEdge e;
        e.to = to;
        e.toOutput = toOutput;
        e.value = value;
        const auto found = scope.values.find(value);
        if (found == scope.values.end()) {
            return; // folded, or not a value
        }
        e.from = found->second.node;
        e.fromInput = found->second.node >= 0 ? -1 : found->second.input;
        if (e.from < 0 && e.fromInput < 0) {
            return;
        }
        e.type = annotation(graph, value);
        e.intoBlock = intoBlock || scope.outer.count(value) > 0;
        g_.edges.push_back(std::move(e));
    }

    void addGraph(const Pt2Model& graph, int base, Scope& scope, int depth) {
        // The graphs control flow calls are its nodes' attributes ("graph true_graph_0 (3
        // calls)") and blocks, not values.
        for (const Pt2Model& subgraph : graph.subgraphs) {
            scope.folded[subgraph.name] =
                "graph " + subgraph.name + " (" + std::to_string(subgraph.nodes.size()) + " calls)";
        }
        const std::vector<FxNode> fx = fxNodes(graph);
        for (size_t line = 0; line < fx.size(); ++line) {
            const FxNode& node = fx[line];
            if (node.op != "call_function" || node.source < 0 ||
                node.callable == "operator.getitem") {
                continue; // a getitem is a value of the call before it: its output port
            }
            const Pt2Node& source = graph.nodes[static_cast<size_t>(node.source)];
            GraphNode n;
            n.id = static_cast<int>(g_.nodes.size());
            n.kind = exported::kindOf(source.target);
            n.schema = source.target;
            n.module = source.moduleStack.empty()
                           ? g_.groups[static_cast<size_t>(base)].module
                           : exported::modulePathOf(source.moduleStack.back());
            n.group = groupOf(source.moduleStack, base);
            // The top-level graph's line in str(ep.graph), after "graph():"; a called graph is
            // printed apart (print(ep)'s submodules).
            n.irLine = depth == 0 ? static_cast<int>(line) + 2 : 0;
            const std::string summary = stackTraceSummary(source.stackTrace);
            if (!summary.empty()) {
                // "File: FILE:LINE in NAME, code: CODE"
                const size_t in = summary.find(" in ");
                const size_t code = summary.find(", code: ");
                n.source = summary.substr(6, in - 6);
                const size_t colon = n.source.rfind(':');
                n.sourceLine =
                    colon == std::string::npos ? 0 : std::atoi(n.source.c_str() + colon + 1);
                n.sourceText = code == std::string::npos ? "" : summary.substr(code + 8);
            }
            std::map<std::string, const Pt2Model*> called;
            for (const Pt2Model& subgraph : graph.subgraphs) { // a graph's own, by name
                if (std::find(source.subgraphs.begin(), source.subgraphs.end(), subgraph.name) !=
                    source.subgraphs.end()) {
                    called[subgraph.name] = &subgraph;
                }
            }
            for (const Pt2Argument& argument : source.inputs) {
                const bool drawn = std::any_of(
                    argument.values.begin(), argument.values.end(),
                    [&scope](const std::string& value) { return !scope.folded.count(value); });
                if (argument.values.size() == 1 && scope.folded.count(argument.values.front())) {
                    n.attributes.push_back({argument.name, scope.folded[argument.values.front()]});
                } else if (!drawn) {
                    n.attributes.push_back({argument.name, argument.text});
                }
                for (const std::string& value : argument.values) {
                    if (!scope.folded.count(value)) {
                        n.inputs.push_back({value, annotation(graph, value)});
                    }
                }
            }
            for (const std::string& value : source.outputs) {
                if (!value.empty()) {
                    n.outputs.push_back({value, annotation(graph, value)});
                }
            }
            const int id = n.id;
            if (depth == 0) {
                topLevel_[source.name] = id;
            }
            std::set<std::string> seen;
            for (const GraphPort& input : n.inputs) {
                if (seen.insert(input.name).second) {
                    connect(scope, graph, input.name, id, -1, false);
                }
            }
            const std::vector<std::string> operands = operandNames(source);
            g_.nodes.push_back(std::move(n));
            // The graphs it calls, in the order it names them: a block each, inside its node's
            // group, their placeholders bound to its operands (from the end), their results
            // flowing into it.
            for (size_t k = 0; k < source.subgraphs.size() && depth < 16; ++k) {
                const auto found = called.find(source.subgraphs[k]);
                if (found == called.end()) {
                    continue;
                }
                const Pt2Model& subgraph = *found->second;
                const GraphNode& owner = g_.nodes[static_cast<size_t>(id)];
                GraphGroup block;
                block.id = static_cast<int>(g_.groups.size());
                block.parent = owner.group;
                block.kind = GraphGroup::Kind::Block;
                block.module = owner.module;
                // What the graph is to its node ("true", "body": short, a narrow box keeps it),
                // its name as its type.
                block.type = subgraph.name;
                block.label = blockRole(owner.kind, k);
                block.owner = id;
                block.depth = g_.groups[static_cast<size_t>(owner.group)].depth + 1;
                g_.groups.push_back(block);
                Scope inner;
                const size_t placeholders = subgraph.graphInputs.size();
                for (size_t p = 0; p < placeholders; ++p) {
                    if (operands.size() + p < placeholders) {
                        continue; // not bound to a value (a constant operand)
                    }
                    const std::string& outer = operands[operands.size() - placeholders + p];
                    const std::string& placeholder = subgraph.graphInputs[p];
                    if (const auto f = scope.folded.find(outer); f != scope.folded.end()) {
                        inner.folded[placeholder] = f->second;
                    } else if (const auto v = scope.values.find(outer); v != scope.values.end()) {
                        inner.values[placeholder] = v->second;
                        inner.outer.insert(placeholder);
                    }
                }
                addGraph(subgraph, block.id, inner, depth + 1);
                for (const std::string& result : subgraph.graphOutputs) {
                    if (!inner.outer.count(result)) {
                        connect(inner, subgraph, result, id, -1, true);
                    }
                }
            }
            for (const GraphPort& output : g_.nodes[static_cast<size_t>(id)].outputs) {
                scope.values[output.name] = Producer{id, -1};
            }
        }
    }

    const Pt2Model& model_;
    const ModelInfo& info_;
    GraphModel g_;
    std::map<std::pair<int, std::string>, int> groups_; // (base group, module path) -> group

public:
    std::map<std::string, int> topLevel_; // a top-level node's name -> its node id
};

} // namespace

namespace exported {

std::string modulePathOf(const Pt2ModuleFrame& frame) {
    // A module called more than once is "relu@1" on its second call: the same module.
    return frame.path.substr(0, frame.path.find('@'));
}

std::string kindOf(const std::string& target) {
    // "aten::conv2d" for "torch.ops.aten.conv2d.default": the kind TorchScript graphs name it by.
    const std::string ops = "torch.ops.";
    if (target.compare(0, ops.size(), ops) != 0) {
        return target;
    }
    const std::string rest = target.substr(ops.size());
    const size_t dot = rest.find('.');
    if (dot == std::string::npos) {
        return rest;
    }
    const std::string ns = rest.substr(0, dot);
    const std::string name = rest.substr(dot + 1);
    return ns + "::" + name.substr(0, name.find('.'));
}

} // namespace exported

Expected<GraphModel> ExportedProgram::graphModel(const std::string& modulePath,
                                                 const std::string& method) const {
    if (auto error = checkGraph(modulePath, method)) {
        return *error;
    }
    if (!diagram_) {
        ProgramDiagram builder(program(), info_);
        auto built = std::make_shared<Diagram>();
        built->model = builder.build();
        built->topLevel = std::move(builder.topLevel_);
        diagram_ = std::move(built);
    }
    return diagram_->model;
}

int ExportedProgram::graphNodeOf(const std::string& nodeName) const {
    if (!hasProgram() || !graphModel("", "forward")) {
        return -1;
    }
    const auto found = diagram_->topLevel.find(nodeName);
    return found == diagram_->topLevel.end() ? -1 : found->second;
}

} // namespace scriptscope
