// GraphModel from a TorchScript graph (see graph_model.h): module paths from the inlined call
// stack, blocks as groups, constants and prim::GetAttr folded into the nodes that use them.
#include "graph_builder.h"
#include "torch_values.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/runtime/profiling_record.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
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

std::string joinPath(const std::string& a, const std::string& b) {
    return a.empty() ? b : b.empty() ? a : a + "." + b;
}

// The module path a node was inlined from: the instance names of its call stack, without the
// frames that have none and without SELF (a module calling its own method). `step(path, name)`
// gives the path one frame deeper (the Builder resolves a module reached through a container).
std::string
callStackPath(const Node* node,
              const std::function<std::string(const std::string&, const std::string&)>& step) {
    const auto stack = node->callstack();
    if (!stack) {
        return "";
    }
    std::string path;
    for (const auto& entry : (*stack)->vec()) {
        const auto& instance = std::get<torch::jit::kModuleInstanceInfo>(entry);
        if (!instance) {
            continue;
        }
        const std::string& name = instance->instance_name();
        if (name.empty() || name == "SELF") {
            continue;
        }
        path = step(path, name);
    }
    return path;
}

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
        , order_(order) {
        for (const auto& entry : owner_.named_modules()) {
            modules_.emplace(joinPath(ownerPath_, entry.name), entry.value);
        }
    }

    // `name` called from the module at `path` (both relative to the graph's module). A module
    // reached through a container that has no frame of its own (`for layer in self.layers` over a
    // ModuleList names the call "0", not "layers.0") is the one child of `path` that holds it.
    // Every node inside a layer asks the same question: the answers are kept.
    const std::string& stepPath(const std::string& path, const std::string& name) {
        const auto key = std::make_pair(path, name);
        if (const auto known = steps_.find(key); known != steps_.end()) {
            return known->second;
        }
        const auto isModule = [this](const std::string& p) {
            return modules_.count(joinPath(ownerPath_, p)) > 0;
        };
        std::string next = joinPath(path, name);
        const auto module = modules_.find(joinPath(ownerPath_, path));
        if (!isModule(next) && module != modules_.end()) {
            std::vector<std::string> holders;
            for (const auto& child : module->second.named_children()) {
                if (isModule(joinPath(joinPath(path, child.name), name))) {
                    holders.push_back(joinPath(joinPath(path, child.name), name));
                }
            }
            if (holders.size() == 1) {
                next = holders.front();
            }
        }
        return steps_.emplace(key, std::move(next)).first->second;
    }

    void build(torch::jit::Graph& graph) {
        std::istringstream text(graph.toString());
        for (std::string line; std::getline(text, line);) {
            irLines_.push_back(std::move(line));
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
    // The type and parameter count (its submodules' included) of the module at a dotted path, as
    // named_modules() names it; computed once per path.
    const ModuleFacts& facts(const std::string& path) {
        auto it = facts_.find(path);
        if (it != facts_.end()) {
            return it->second;
        }
        ModuleFacts f;
        const auto module = modules_.find(path);
        if (module != modules_.end()) {
            const auto& name = module->second.type()->name();
            f.type = name ? name->name() : module->second.type()->str();
            for (const auto& p : module->second.parameters(/*recurse=*/true)) {
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
        std::istringstream parts(rest);
        for (std::string part; std::getline(parts, part, '.');) {
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

    // The only module instance of the class whose serialized code holds the node's source (the
    // code file names the Python module, the nearest "class X(Module):" above the line the
    // class); "" when the class has no or several instances, or the source is unknown.
    std::string codeModule(Node* node) {
        const auto& range = node->sourceRange();
        const auto source = range.source();
        if (!source || !source->filename()) {
            return "";
        }
        std::string file = *source->filename();
        const std::string prefix = "code/";
        if (file.compare(0, prefix.size(), prefix) != 0 || file.size() < 3 ||
            file.compare(file.size() - 3, 3, ".py") != 0) {
            return "";
        }
        auto cached = sourceTexts_.find(source.get());
        if (cached == sourceTexts_.end()) {
            cached = sourceTexts_.emplace(source.get(), source->text_str().str()).first;
        }
        const std::string& text = cached->second;
        size_t at = std::min(range.start(), text.size());
        std::string className;
        while (at > 0) { // back to the class line above
            const size_t lineStart = text.rfind('\n', at - 1);
            const size_t begin = lineStart == std::string::npos ? 0 : lineStart + 1;
            if (text.substr(begin, 6) == "class ") {
                const size_t end = text.find_first_of("(:", begin + 6);
                className = text.substr(begin + 6, end - begin - 6);
                break;
            }
            if (lineStart == std::string::npos) {
                break;
            }
            at = lineStart;
        }
        if (className.empty()) {
            return "";
        }
        std::string qualified = file.substr(prefix.size(), file.size() - prefix.size() - 3);
        std::replace(qualified.begin(), qualified.end(), '/', '.');
        qualified += "." + className;
        if (instances_.empty()) {
            for (const auto& [path, module] : modules_) {
                instances_[module.type()->str()].push_back(path);
            }
        }
        const auto it = instances_.find(qualified);
        return it != instances_.end() && it->second.size() == 1 ? it->second.front() : "";
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
        edge.type = v->type()->str();
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
            const std::string stackPath =
                callStackPath(node, [this](const std::string& path, const std::string& name) {
                    return stepPath(path, name);
                });
            n.module = joinPath(ownerPath_, stackPath);
            // PyTorch 1.13 gives no call stack to prim::If / prim::Loop (and the nodes in their
            // blocks) inside inlined calls: BatchNorm's `if self.training` would sit at the root.
            // Such a node is drawn in the module whose attributes it reads, else in the only
            // instance of the class whose code made it; `module` stays what the call stack says.
            std::string placed = n.module;
            if (stackPath.empty()) {
                placed = readsModule(node);
                if (placed.empty()) {
                    placed = codeModule(node);
                }
            }
            n.group = moduleGroup(blockGroup, placed.empty() ? n.module : placed);
            n.irLine = irLine(node);
            const auto* schema = node->maybeSchema();
            if (schema) {
                std::ostringstream text;
                text << *schema;
                n.schema = text.str();
            }
            if (const auto where = node->sourceRange().file_line_col()) {
                n.sourceLine = static_cast<int>(std::get<1>(*where));
                n.source = std::get<0>(*where) + ":" + std::to_string(n.sourceLine);
                std::string text = node->sourceRange().text().str();
                text = text.substr(0, std::min(text.find('\n'), size_t{240}));
                const size_t first = text.find_first_not_of(" \t");
                const size_t last = text.find_last_not_of(" \t\r");
                n.sourceText =
                    first == std::string::npos ? "" : text.substr(first, last - first + 1);
            }
            for (size_t i = 0; i < node->inputs().size(); ++i) {
                Value* v = node->inputs()[i];
                const std::string name = schema && i < schema->arguments().size()
                                             ? schema->arguments()[i].name()
                                             : "input " + std::to_string(i);
                if (auto text = folded(v)) {
                    n.attributes.push_back({name, *text});
                } else {
                    n.inputs.push_back({v->debugName(), v->type()->str()});
                }
            }
            for (Value* v : node->outputs()) {
                n.outputs.push_back({v->debugName(), v->type()->str()});
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
                    model_.groups[static_cast<size_t>(g.parent)].kind == GraphGroup::Kind::Module
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
    std::map<std::string, torch::jit::Module> modules_; // by dotted path from the model's root
    std::map<std::pair<std::string, std::string>, std::string> steps_; // stepPath's answers
    std::map<std::string, std::vector<std::string>> instances_; // module paths by qualified type
    std::map<const torch::jit::Source*, std::string> sourceTexts_;
    std::map<std::string, ModuleFacts> facts_;
    std::vector<std::string> irLines_;
    size_t irCursor_ = 0;
};

} // namespace

GraphModel buildGraphModel(const torch::jit::Module& owner, const std::string& ownerPath,
                           const torch::jit::Method& method, bool inlined) {
    auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    if (inlined) {
        torch::jit::Inline(*graph);
    }
    GraphModel model;
    model.modulePath = ownerPath;
    model.method = method.name();
    model.inlined = inlined;
    Builder(owner, ownerPath, model).build(*graph);
    markRepeatedGroups(model);
    return model;
}

GraphModel buildGraphModel(const torch::jit::Module& owner, const std::string& ownerPath,
                           const std::string& method, torch::jit::Graph& graph, bool inlined,
                           std::vector<Node*>& nodes) {
    GraphModel model;
    model.modulePath = ownerPath;
    model.method = method;
    model.inlined = inlined;
    Builder(owner, ownerPath, model, &nodes).build(graph);
    markRepeatedGroups(model);
    return model;
}

std::map<std::string, std::string> recordValueShapes(const torch::jit::Module& owner,
                                                     const torch::jit::Method& method,
                                                     const std::vector<c10::IValue>& inputs) {
    auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
    torch::jit::Inline(*graph); // the same copy and inlining as buildGraphModel: the same names
    auto record = torch::jit::ProfilingRecord::instrumentGraph(graph);
    std::shared_ptr<torch::jit::Graph> profiled = record->profiled_graph_;
    torch::jit::Code code(profiled, method.name());
    torch::jit::Stack stack;
    stack.push_back(owner._ivalue());
    stack.insert(stack.end(), inputs.begin(), inputs.end());
    // The arguments left out take their defaults, as a call of the method would give them.
    method.function().getSchema().checkAndNormalizeInputs(stack, {});
    torch::jit::InterpreterState(code).run(stack);
    std::map<std::string, std::string> shapes;
    auto tensorShape = [](const c10::IValue& v) -> std::string {
        if (!v.isTensor() || !v.toTensor().defined()) {
            return "";
        }
        std::string text;
        for (const int64_t size : v.toTensor().sizes()) {
            text += (text.empty() ? "" : "x") + std::to_string(size);
        }
        return text.empty() ? "scalar" : text;
    };
    // The graph's own inputs and outputs have no profiled use: their values tell.
    const auto graphInputs = profiled->inputs();
    for (size_t i = 0; i < inputs.size() && i + 1 < graphInputs.size(); ++i) {
        if (const std::string shape = tensorShape(inputs[i]); !shape.empty()) {
            shapes.emplace(graphInputs[i + 1]->debugName(), shape);
        }
    }
    // (By the uninstrumented copy's names: the instrumented graph may return profiled copies.)
    const auto graphOutputs = graph->outputs();
    for (size_t i = 0; i < graphOutputs.size() && i < stack.size(); ++i) {
        if (const std::string shape = tensorShape(stack[i]); !shape.empty()) {
            shapes.emplace(graphOutputs[i]->debugName(), shape);
        }
    }
    std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* block) {
        for (Node* node : block->nodes()) {
            for (torch::jit::Block* inner : node->blocks()) {
                walk(inner);
            }
            if (node->kind() != c10::prim::profile ||
                !node->hasAttribute(c10::attr::profiled_type)) {
                continue;
            }
            const auto type = node->ty(c10::attr::profiled_type)->cast<c10::TensorType>();
            const auto sizes = type ? type->symbolic_sizes().sizes() : c10::nullopt;
            if (!sizes) {
                continue;
            }
            std::string text;
            for (const auto& dim : *sizes) {
                text += (text.empty() ? "" : "x") +
                        (dim.is_static() ? std::to_string(dim.static_size()) : std::string("?"));
            }
            if (text.empty()) {
                text = "scalar";
            }
            shapes.emplace(node->input(0)->debugName(), text);
        }
    };
    walk(profiled->block());
    return shapes;
}

} // namespace scriptscope::detail
