#include "call_sites.h"

#include <torch/csrc/jit/ir/scope.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <unordered_map>

namespace scriptscope::detail {

using torch::jit::Node;

std::string joinPath(const std::string& a, const std::string& b) {
    return a.empty() ? b : b.empty() ? a : a + "." + b;
}

namespace {

// "torchvision.ops.boxes" from "__torch__.torchvision.ops.boxes" (or from the code file's path
// with dots), without the "___torch_mangle_N" parts PyTorch adds to names it saved twice. Split
// without a stream: a stream per call was a fifth of a transformer's diagram.
std::string pythonModuleOf(const std::string& dotted) {
    std::string out;
    for (size_t from = 0; from < dotted.size();) {
        const size_t dot = std::min(dotted.find('.', from), dotted.size());
        const std::string_view part(dotted.data() + from, dot - from);
        from = dot + 1;
        if (part == "__torch__" || part.rfind("___torch_mangle_", 0) == 0) {
            continue;
        }
        out.append(out.empty() ? "" : ".").append(part);
    }
    return out;
}

} // namespace

const std::string& CallSites::pythonModule(const std::string& dotted) {
    auto [it, added] = pythonModules_.try_emplace(dotted);
    if (added) {
        it->second = pythonModuleOf(dotted);
    }
    return it->second;
}

CallSites::CallSites(const torch::jit::Module& owner, const std::string& ownerPath)
    : ownerPath_(ownerPath) {
    for (const auto& entry : owner.named_modules()) {
        modules_.emplace(joinPath(ownerPath_, entry.name), entry.value);
    }
}

const torch::jit::Module* CallSites::module(const std::string& path) const {
    const auto it = modules_.find(path);
    return it == modules_.end() ? nullptr : &it->second;
}

const CallSite& CallSites::callSite(const Node* node) {
    const auto stack = node->callstack();
    if (!stack) {
        return noStack_;
    }
    auto [known, added] = sites_.try_emplace(stack->get());
    CallSite& site = known->second;
    if (!added) {
        return site;
    }
    site.known = true;
    bool anchored = false; // a module frame came first
    for (const auto& entry : (*stack)->vec()) {
        const auto& instance = std::get<torch::jit::kModuleInstanceInfo>(entry);
        if (!instance) {
            const torch::jit::Function* fn = std::get<0>(entry);
            if (fn) {
                site.functions.push_back({fn->name(), pythonModule(fn->qualname().prefix())});
            }
            continue;
        }
        const std::string& name = instance->instance_name();
        if (name == "SELF" && site.path.empty() && !anchored) {
            // PyTorch 1.13 cuts some stacks short: one that starts with a module calling its
            // own method starts at that module, known by its class.
            site.path = stepPath("", name, instance->class_type().get());
        }
        anchored = true;
        if (name.empty() || name == "SELF") {
            continue;
        }
        site.path = stepPath(site.path, name, instance->class_type().get());
        site.functions.clear();
    }
    return site;
}

// `name` called from the module at `path` (both relative to the graph's module), an instance
// of `type`. A module reached through a container that has no frame of its own
// (`for layer in self.layers` over a ModuleList names the call "0", not "layers.0") is the
// child of `path` that holds it: the one of that type where several hold a `name` (SSDlite's
// backbone has features.0 and extra.0). Every node inside a layer asks the same question:
// the answers are kept. A `name` of SELF from nowhere: the only instance of `type`.
const std::string& CallSites::stepPath(const std::string& path, const std::string& name,
                                       const c10::ClassType* type) {
    const auto key = std::make_tuple(path, name, type);
    if (const auto known = steps_.find(key); known != steps_.end()) {
        return known->second;
    }
    const auto isModule = [this](const std::string& p) {
        return modules_.count(joinPath(ownerPath_, p)) > 0;
    };
    if (name == "SELF") { // the only instance of the type, relative to the graph's module
        std::string only;
        int count = 0;
        for (const auto& [at, module] : modules_) {
            if (module.type().get() == type && count++ == 0) {
                only = ownerPath_.empty() || at == ownerPath_ ? (at == ownerPath_ ? "" : at)
                                                              : at.substr(ownerPath_.size() + 1);
            }
        }
        return steps_.emplace(key, count == 1 ? only : std::string()).first->second;
    }
    std::string next = joinPath(path, name);
    const auto module = modules_.find(joinPath(ownerPath_, path));
    if (!isModule(next) && module != modules_.end()) {
        std::vector<std::string> holders, ofType;
        for (const auto& child : module->second.named_children()) {
            const std::string held = joinPath(joinPath(path, child.name), name);
            const auto found = modules_.find(joinPath(ownerPath_, held));
            if (found != modules_.end()) {
                holders.push_back(held);
                if (found->second.type().get() == type) {
                    ofType.push_back(held);
                }
            }
        }
        if (holders.size() == 1) {
            next = holders.front();
        } else if (ofType.size() == 1) {
            next = ofType.front();
        }
    }
    return steps_.emplace(key, std::move(next)).first->second;
}

CodeFacts CallSites::codeFacts(const Node* node) {
    CodeFacts facts;
    const auto& range = node->sourceRange();
    const auto source = range.source();
    if (!source || !source->filename()) {
        return facts;
    }
    std::string file = *source->filename();
    const std::string prefix = "code/";
    if (file.compare(0, prefix.size(), prefix) != 0 || file.size() < 3 ||
        file.compare(file.size() - 3, 3, ".py") != 0) {
        return facts;
    }
    // The class and free-function lines of each code file, by offset, found once.
    auto cached = definitions_.find(source.get());
    if (cached == definitions_.end()) {
        std::vector<std::pair<size_t, std::string>> lines;
        const std::string text = source->text_str().str();
        for (size_t begin = 0; begin < text.size();) {
            const size_t end = std::min(text.find('\n', begin), text.size());
            if (text.compare(begin, 6, "class ") == 0 || text.compare(begin, 4, "def ") == 0) {
                lines.emplace_back(begin, text.substr(begin, end - begin));
            }
            begin = end + 1;
        }
        cached = definitions_.emplace(source.get(), std::move(lines)).first;
    }
    const auto& lines = cached->second;
    const size_t at = range.start();
    auto above =
        std::upper_bound(lines.begin(), lines.end(), at,
                         [](size_t offset, const auto& line) { return offset < line.first; });
    if (above != lines.begin()) {
        const std::string& line = std::prev(above)->second;
        if (line.compare(0, 6, "class ") == 0) {
            facts.className = line.substr(6, line.find_first_of("(:", 6) - 6);
        } else {
            facts.function = line.substr(4, line.find('(', 4) - 4);
        }
    }
    facts.file = file.substr(prefix.size(), file.size() - prefix.size() - 3);
    std::replace(facts.file.begin(), facts.file.end(), '/', '.');
    facts.where = pythonModule(facts.file);
    return facts;
}

// The instances of a class (by its qualified name as saved, mangling included), as module
// paths from the model's root.
const std::vector<std::string>& CallSites::instancesOf(const std::string& qualified) {
    if (instances_.empty()) {
        for (const auto& [path, module] : modules_) {
            instances_[module.type()->str()].push_back(path);
        }
    }
    static const std::vector<std::string> none;
    const auto it = instances_.find(qualified);
    return it == instances_.end() ? none : it->second;
}

// The module a node without a module in its call stack is drawn in (see walk); nullopt where
// neither its code nor what it reads tells.
std::optional<std::string> CallSites::placeWithoutStack(const CodeFacts& code,
                                                        const std::string& reads) {
    if (code.className.empty()) { // a free function's: in the module it reads from
        return reads.empty() ? std::nullopt : std::optional<std::string>(reads);
    }
    const auto& instances = instancesOf(code.file + "." + code.className);
    if (instances.size() == 1) { // the class's only instance, the graph's module included
        return instances.front();
    }
    // Several instances: the one whose attributes (or whose submodules') it reads.
    for (const std::string& path : instances) {
        if (reads == path || reads.rfind(path + ".", 0) == 0) {
            return path;
        }
    }
    return std::nullopt;
}

// For a node of a free function that neither its code's class nor what it reads places (an
// `if` of F.batch_norm whose module came out of a list): the module of the next nodes of the
// same function that have a call stack (the rest of that call), within a few nodes.
std::optional<std::string> CallSites::calledFrom(Node* node, const CodeFacts& code) {
    if (!code.className.empty() || code.function.empty()) {
        return std::nullopt;
    }
    const FunctionFrame frame{code.function, code.where};
    int looked = 0;
    for (Node* next = node->next(); next->kind() != c10::prim::Return && looked < 64;
         next = next->next(), ++looked) {
        const auto stack = next->callstack();
        if (!stack) {
            continue;
        }
        bool calls = false; // the function among its frames (cheap: no paths yet)
        for (const auto& entry : (*stack)->vec()) {
            const torch::jit::Function* fn = std::get<0>(entry);
            calls = calls || (fn && fn->name() == code.function);
        }
        if (!calls) {
            continue;
        }
        const CallSite& site = callSite(next);
        if (site.known && !site.path.empty() &&
            std::find(site.functions.begin(), site.functions.end(), frame) !=
                site.functions.end()) {
            return joinPath(ownerPath_, site.path);
        }
    }
    return std::nullopt;
}

} // namespace scriptscope::detail
