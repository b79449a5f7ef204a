// GraphModel from a TorchScript graph (see graph_model.h): module paths from the inlined call
// stack, blocks as groups, constants and prim::GetAttr folded into the nodes that use them.
#include "graph_builder.h"
#include "call_sites.h"
#include "torch_values.h"

#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace scriptscope::detail {

namespace {

using torch::jit::Node;
using torch::jit::Value;

std::string shapeText(const at::Tensor& t) {
    if (!t.defined()) {
        return "undefined tensor";
    }
    std::string text;
    for (int64_t i = 0; i < t.dim(); ++i) {
        text += (i ? "x" : "") + std::to_string(t.size(i));
    }
    return (text.empty() ? std::string("scalar") : text) + " " + dtypeName(t.scalar_type());
}

// A value's text for an attribute, kept short: tensors by shape and dtype, others as Python
// prints them.
std::string ivalueText(const c10::IValue& value) {
    if (value.isTensor()) {
        return shapeText(value.toTensor());
    }
    if (value.isObject()) {
        return value.type()->str();
    }
    return previewValue(value, 48);
}

// What prim::GetAttr chains from `self` resolve to: a module (for further GetAttr) or a value.
struct Resolved {
    bool known = false;
    std::string path;   // dotted, from the method's module
    c10::IValue object; // the attribute's value
};

struct ModuleFacts {
    std::string type; // "BasicBlock"
    int64_t parameters = 0;
};

class Builder {
public:
    Builder(const torch::jit::Module& owner, const std::string& ownerPath, GraphModel& model,
            std::vector<Node*>* order = nullptr)
        : owner_(owner)
        , ownerPath_(ownerPath)
        , model_(model)
        , order_(order)
        , sites_(owner, ownerPath) {}

    void build(torch::jit::Graph& graph, const std::string* irText = nullptr) {
        const std::string printed = irText ? std::string() : graph.toString();
        const std::string& text = irText ? *irText : printed;
        // Its lines, as std::getline gives them.
        for (size_t from = 0; from < text.size();) {
            const size_t end = std::min(text.find('\n', from), text.size());
            irLines_.emplace_back(text, from, end - from);
            from = end + 1;
        }
        GraphGroup root;
        root.id = 0;
        root.module = ownerPath_;
        root.label = ownerPath_.empty() ? std::string("(root)") : ownerPath_;
        root.type = facts(ownerPath_).type;
        root.parameters = facts(ownerPath_).parameters;
        model_.groups.push_back(root);
        const auto inputs = graph.inputs();
        for (size_t i = 0; i < inputs.size(); ++i) {
            Value* v = inputs[i];
            if (i == 0 && v->type()->cast<c10::ClassType>() &&
                v->type()->cast<c10::ClassType>()->is_module()) {
                resolved_[v] = {true, "", owner_._ivalue()};
                continue; // self: folded into the GetAttr it feeds
            }
            graphInputs_[v] = static_cast<int>(model_.inputs.size());
            model_.inputs.push_back({v->debugName(), v->type()->str()});
        }
        walk(graph.block(), 0);
        for (Value* v : graph.outputs()) {
            const int output = static_cast<int>(model_.outputs.size());
            model_.outputs.push_back({v->debugName(), v->type()->str()});
            connect(v, -1, output, false);
        }
    }

private:
    // A schema as PyTorch prints it, once per operator: printing it for each of a transformer's
    // 56,000 nodes through a stream was a tenth of the diagram's time.
    const std::string& schemaText(const c10::FunctionSchema& schema) {
        auto [it, added] = schemaTexts_.try_emplace(&schema);
        if (added) {
            std::ostringstream text;
            text << schema;
            it->second = text.str();
        }
        return it->second;
    }

    // Where a node's code is: "file:line", the line, its first line of text. The nodes of a
    // repeated layer share their source ranges: each range is read once (its text is built
    // through a stream).
    struct SourceFacts {
        int line = 0;
        std::string source;
        std::string text;
    };
    const SourceFacts* sourceFacts(const torch::jit::SourceRange& range) {
        if (!range.source()) {
            return nullptr;
        }
        const auto key = std::make_tuple(range.source().get(), range.start(), range.end());
        auto [it, added] = sourceFacts_.try_emplace(key);
        if (added) {
            if (const auto where = range.file_line_col()) {
                SourceFacts& f = it->second.emplace();
                f.line = static_cast<int>(std::get<1>(*where));
                f.source = std::get<0>(*where) + ":" + std::to_string(f.line);
                std::string text = range.text().str();
                text = text.substr(0, std::min(text.find('\n'), size_t{240}));
                const size_t first = text.find_first_not_of(" \t");
                const size_t last = text.find_last_not_of(" \t\r");
                f.text = first == std::string::npos ? "" : text.substr(first, last - first + 1);
            }
        }
        return it->second ? &*it->second : nullptr;
    }

    // A value's type as the IR prints it, once per type (tuples print through a stream).
    const std::string& typeText(const Value& v) {
        auto [it, added] = typeTexts_.try_emplace(v.type().get());
        if (added) {
            it->second = v.type()->str();
        }
        return it->second;
    }

    // The type and parameter count (its submodules' included) of the module at a dotted path, as
    // named_modules() names it; computed once per path.
    const ModuleFacts& facts(const std::string& path) {
        auto it = facts_.find(path);
        if (it != facts_.end()) {
            return it->second;
        }
        ModuleFacts f;
        if (const torch::jit::Module* module = sites_.module(path)) {
            const auto& name = module->type()->name();
            f.type = name ? name->name() : module->type()->str();
            for (const auto& p : module->parameters(/*recurse=*/true)) {
                f.parameters += p.numel();
            }
        }
        return facts_.emplace(path, std::move(f)).first->second;
    }

    // The group for a module path inside `blockGroup` (a block, or the root): nested module
    // groups from the block's own module down to the path, made on first use.
    int moduleGroup(int blockGroup, const std::string& path) {
        const GraphGroup& base = model_.groups[static_cast<size_t>(blockGroup)];
        std::string start = base.module;
        if (path == start) {
            return blockGroup;
        }
        std::string rest;
        if (start.empty()) {
            rest = path;
        } else if (path.compare(0, start.size() + 1, start + ".") == 0) {
            rest = path.substr(start.size() + 1);
        } else {
            rest = path; // outside the block's module (rare): under the block, full path
            start.clear();
        }
        int group = blockGroup;
        std::string current = start;
        // The path's parts, as std::getline(stream, part, '.') gives them (no stream: this runs
        // for every node).
        for (size_t from = 0; from < rest.size();) {
            const size_t dot = std::min(rest.find('.', from), rest.size());
            const std::string part = rest.substr(from, dot - from);
            from = dot + 1;
            current = joinPath(current, part);
            const auto key = std::make_pair(group, current);
            auto it = moduleGroups_.find(key);
            if (it == moduleGroups_.end()) {
                GraphGroup g;
                g.id = static_cast<int>(model_.groups.size());
                g.parent = group;
                g.kind = GraphGroup::Kind::Module;
                g.module = current;
                g.type = facts(current).type;
                g.label = part;
                g.parameters = facts(current).parameters;
                g.depth = model_.groups[static_cast<size_t>(group)].depth + 1;
                model_.groups.push_back(g);
                it = moduleGroups_.emplace(key, g.id).first;
            }
            group = it->second;
        }
        return group;
    }

    static bool isFunction(const GraphGroup& g, const FunctionFrame& frame) {
        return g.kind == GraphGroup::Kind::Function && g.type == frame.where &&
               g.label.size() == frame.name.size() + 2 &&
               g.label.compare(0, frame.name.size(), frame.name) == 0;
    }

    // The free functions a block is already inside, outermost first: an `if` in batched_nms()
    // holds more of batched_nms.
    std::vector<FunctionFrame> functionsAround(int blockGroup) const {
        std::vector<FunctionFrame> around;
        for (int g = blockGroup; g >= 0;) {
            const GraphGroup& group = model_.groups[static_cast<size_t>(g)];
            if (group.kind == GraphGroup::Kind::Module) {
                break;
            }
            if (group.kind == GraphGroup::Kind::Function) {
                around.insert(around.begin(),
                              {group.label.substr(0, group.label.size() - 2), group.type});
            }
            g = group.parent;
        }
        return around;
    }

    // The group of a call of `frame` in `parent`: the one the previous node there went into
    // when it is the same function (the nodes of one call are one run), else a new one.
    int functionGroup(int parent, const FunctionFrame& frame) {
        int& last = lastFunction_[parent];
        if (last >= 0 && isFunction(model_.groups[static_cast<size_t>(last)], frame)) {
            return last;
        }
        GraphGroup g;
        g.id = static_cast<int>(model_.groups.size());
        g.parent = parent;
        g.kind = GraphGroup::Kind::Function;
        g.module = model_.groups[static_cast<size_t>(parent)].module;
        g.type = frame.where;
        g.label = frame.name + "()";
        g.depth = model_.groups[static_cast<size_t>(parent)].depth + 1;
        model_.groups.push_back(g);
        last = g.id;
        return g.id;
    }

    // The group a node goes in: its module's group inside the block, then one group per free
    // function it was called through inside that module. `exact`: the functions come from a
    // call stack; without one, only the innermost is known, and the node joins the group of that
    // function the previous node in this block went into, however deep.
    int place(int blockGroup, const std::string& module,
              const std::vector<FunctionFrame>& functions, bool exact) {
        int group = moduleGroup(blockGroup, module);
        size_t first = 0;
        if (group == blockGroup) {
            const auto around = functionsAround(blockGroup);
            while (first < around.size() && first < functions.size() &&
                   around[first] == functions[first]) {
                ++first;
            }
        }
        int& previous = lastPlaced_[blockGroup];
        if (!exact && first < functions.size() && previous > 0) {
            int found = -1;
            int at = previous;
            while (at >= 0 && at != group) {
                const GraphGroup& g = model_.groups[static_cast<size_t>(at)];
                if (found < 0 && isFunction(g, functions.back())) {
                    found = at;
                }
                at = g.parent;
            }
            if (at == group && found >= 0) {
                first = functions.size();
                group = found;
            }
        }
        for (size_t i = first; i < functions.size(); ++i) {
            group = functionGroup(group, functions[i]);
        }
        lastFunction_[group] = -1; // a node of its own ends the run of the last call in it
        previous = group;
        return group;
    }

    int irLine(const Node* node) {
        // The IR prints the nodes in this walk's order, one line each: the node's line is the
        // next one that names its kind.
        const std::string kind = node->kind().toQualString();
        for (size_t i = irCursor_; i < irLines_.size(); ++i) {
            const std::string& line = irLines_[i];
            const auto at = line.find(kind);
            if (at != std::string::npos && at + kind.size() <= line.size() &&
                (at + kind.size() == line.size() || line[at + kind.size()] == '(' ||
                 line[at + kind.size()] == '[')) {
                irCursor_ = i + 1;
                return static_cast<int>(i) + 1;
            }
        }
        return 0;
    }

    // A folded value's text (a constant or a GetAttr result), or nullopt when it is drawn.
    std::optional<std::string> folded(Value* v) {
        const Node* producer = v->node();
        if (producer->kind() == c10::prim::Constant) {
            if (auto value = torch::jit::toIValue(v)) {
                return ivalueText(*value);
            }
            return v->type()->str();
        }
        if (producer->kind() == c10::prim::GetAttr) {
            const auto it = resolved_.find(v);
            if (it != resolved_.end() && it->second.known) {
                const auto& object = it->second.object;
                if (object.isObject() && object.toObject()->type()->is_module()) {
                    return "module " + joinPath(ownerPath_, it->second.path);
                }
                return ivalueText(object) + " (" + joinPath(ownerPath_, it->second.path) + ")";
            }
            return producer->s(c10::attr::name) + ": " + v->type()->str();
        }
        return std::nullopt;
    }

    // The module whose (non-module) attribute a node reads through a folded GetAttr, as a path
    // from the root ("" when it reads none, or only its own method module's).
    std::string readsModule(Node* node) const {
        for (Value* v : node->inputs()) {
            if (v->node()->kind() != c10::prim::GetAttr) {
                continue;
            }
            const auto it = resolved_.find(v);
            if (it == resolved_.end() || !it->second.known || it->second.object.isObject()) {
                continue;
            }
            const std::string& path = it->second.path;
            const size_t dot = path.rfind('.');
            return joinPath(ownerPath_, dot == std::string::npos ? "" : path.substr(0, dot));
        }
        return "";
    }

    void resolveGetAttr(const Node* node) {
        const auto it = resolved_.find(node->input(0));
        Resolved r;
        if (it != resolved_.end() && it->second.known && it->second.object.isObject()) {
            const auto& object = it->second.object.toObject();
            const std::string name = node->s(c10::attr::name);
            if (const auto slot = object->type()->findAttributeSlot(name)) {
                r.known = true;
                r.path = joinPath(it->second.path, name);
                r.object = object->getSlot(*slot);
            }
        }
        resolved_[node->output()] = r;
    }

    // An edge for a use of `v` by node `to` (or the graph output / a block's result).
    void connect(Value* v, int to, int toOutput, bool intoBlock) {
        GraphEdge edge;
        edge.to = to;
        edge.toOutput = toOutput;
        edge.value = v->debugName();
        edge.type = typeText(*v);
        edge.intoBlock = intoBlock;
        const auto input = graphInputs_.find(v);
        if (input != graphInputs_.end()) {
            edge.fromInput = input->second;
        } else {
            const auto producer = producers_.find(v);
            if (producer == producers_.end()) {
                return; // folded, or a block's parameter (a loop's counter): no edge
            }
            edge.from = producer->second;
            if (edge.from == to) {
                return;
            }
        }
        model_.edges.push_back(std::move(edge));
    }

    void walk(torch::jit::Block* block, int blockGroup) {
        for (Node* node : block->nodes()) {
            const auto kind = node->kind();
            if (kind == c10::prim::Constant) {
                irLine(node);
                continue;
            }
            if (kind == c10::prim::GetAttr) {
                irLine(node);
                resolveGetAttr(node);
                continue;
            }
            GraphNode n;
            n.id = static_cast<int>(model_.nodes.size());
            n.kind = kind.toQualString();
            // Without inlining there is no call stack: every node is the method's module's.
            const CallSite& site = sites_.callSite(node);
            n.module = joinPath(ownerPath_, site.path);
            // PyTorch 1.13 gives no call stack to prim::If / prim::Loop (and the nodes in their
            // blocks) inside inlined calls, and cuts others short: BatchNorm's
            // `if self.training` would sit at the root. A node without a module in its call
            // stack is drawn in the only instance of the class whose code made it, else in the
            // instance (or, for a free function, the module) whose attributes it reads;
            // `module` stays what the call stack says.
            std::string placed = n.module;
            std::vector<FunctionFrame> functions = site.functions;
            bool exact = site.known;
            const CodeFacts code = sites_.codeFacts(node);
            if (site.path.empty()) {
                if (const auto module = sites_.placeWithoutStack(code, readsModule(node))) {
                    placed = *module;
                } else if (const auto later = sites_.calledFrom(node, code)) {
                    placed = *later;
                }
            } else if (site.functions.empty() && code.className.empty() && !code.function.empty()) {
                // A free function's node whose stack was cut short below its module (1.13): the
                // module of the rest of the call, if it is inside this one.
                const auto later = sites_.calledFrom(node, code);
                if (later && later->rfind(placed.empty() ? "" : placed + ".", 0) == 0) {
                    placed = *later;
                }
            }
            // A node whose code is a free function its call stack does not end in (none, or
            // cut short): in that function, nested as the nodes before it say.
            if (code.className.empty() && !code.function.empty() &&
                (functions.empty() ||
                 !(functions.back() == FunctionFrame{code.function, code.where}))) {
                functions.push_back({code.function, code.where});
                exact = false;
            }
            n.group = place(blockGroup, placed, functions, exact);
            n.irLine = irLine(node);
            const auto* schema = node->maybeSchema();
            if (schema) {
                n.schema = schemaText(*schema);
            }
            if (const SourceFacts* where = sourceFacts(node->sourceRange())) {
                n.sourceLine = where->line;
                n.source = where->source;
                n.sourceText = where->text;
            }
            for (size_t i = 0; i < node->inputs().size(); ++i) {
                Value* v = node->inputs()[i];
                const std::string name = schema && i < schema->arguments().size()
                                             ? schema->arguments()[i].name()
                                             : "input " + std::to_string(i);
                if (auto text = folded(v)) {
                    n.attributes.push_back({name, *text});
                } else {
                    n.inputs.push_back({v->debugName(), typeText(*v)});
                }
            }
            for (Value* v : node->outputs()) {
                n.outputs.push_back({v->debugName(), typeText(*v)});
            }
            const int id = n.id;
            model_.nodes.push_back(std::move(n));
            if (order_) {
                order_->push_back(node);
            }
            for (Value* v : node->inputs()) {
                connect(v, id, -1, false);
            }
            for (Value* v : node->outputs()) {
                producers_[v] = id;
            }
            // Blocks: one group each, under the node's group; their results flow into the node.
            const auto blocks = node->blocks();
            for (size_t b = 0; b < blocks.size(); ++b) {
                GraphGroup g;
                g.id = static_cast<int>(model_.groups.size());
                g.parent = model_.nodes[static_cast<size_t>(id)].group;
                g.kind = GraphGroup::Kind::Block;
                g.module =
                    model_.groups[static_cast<size_t>(g.parent)].kind != GraphGroup::Kind::Block
                        ? model_.groups[static_cast<size_t>(g.parent)].module
                        : model_.nodes[static_cast<size_t>(id)].module;
                g.type = kind.toQualString();
                g.owner = id;
                // A block is one deeper than its owner's group: a diagram opened collapsed shows
                // an if or a loop as boxes, not their contents.
                g.depth = model_.groups[static_cast<size_t>(g.parent)].depth + 1;
                if (kind == c10::prim::If) {
                    g.label = b == 0 ? "if: then" : "if: else";
                } else if (kind == c10::prim::Loop) {
                    g.label = "loop body";
                } else {
                    g.label = "block " + std::to_string(b);
                }
                model_.groups.push_back(g);
                walk(blocks[b], g.id);
                for (Value* result : blocks[b]->outputs()) {
                    connect(result, id, -1, true);
                }
            }
        }
    }

    const torch::jit::Module& owner_;
    const std::string& ownerPath_;
    GraphModel& model_;
    std::vector<Node*>* order_;
    std::unordered_map<const Value*, Resolved> resolved_;
    std::unordered_map<const Value*, int> producers_;
    std::unordered_map<const Value*, int> graphInputs_;
    std::map<std::pair<int, std::string>, int> moduleGroups_;
    std::unordered_map<int, int> lastFunction_; // per group: the call its last node was in
    std::unordered_map<int, int> lastPlaced_;   // per block: the group its last node went into
    CallSites sites_;
    std::map<std::string, ModuleFacts> facts_;
    std::unordered_map<const c10::FunctionSchema*, std::string> schemaTexts_;
    std::map<std::tuple<const torch::jit::Source*, size_t, size_t>, std::optional<SourceFacts>>
        sourceFacts_;
    std::unordered_map<const c10::Type*, std::string> typeTexts_;
    std::vector<std::string> irLines_;
    size_t irCursor_ = 0;
};

} // namespace

GraphModel buildGraphModel(const torch::jit::Module& owner, const std::string& ownerPath,
                           const torch::jit::Method& method) {
    auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    GraphModel model;
    model.modulePath = ownerPath;
    model.method = method.name();
    model.inlined = false;
    Builder(owner, ownerPath, model).build(*graph);
    foldSmallFunctions(model);
    markRepeatedGroups(model);
    return model;
}

GraphModel buildGraphModel(const torch::jit::Module& owner, const std::string& ownerPath,
                           const std::string& method, torch::jit::Graph& graph, bool inlined,
                           std::vector<Node*>& nodes, const std::string* irText) {
    GraphModel model;
    model.modulePath = ownerPath;
    model.method = method;
    model.inlined = inlined;
    Builder(owner, ownerPath, model, &nodes).build(graph, irText);
    foldSmallFunctions(model);
    markRepeatedGroups(model);
    return model;
}

} // namespace scriptscope::detail
