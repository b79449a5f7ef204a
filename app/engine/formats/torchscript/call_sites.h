// Where a node of a method's (inlined) graph came from, for the graph model (graph_builder.cpp):
// the module instance its call stack names, the free functions it was called through, and, where
// PyTorch 1.13 left it no call stack or cut it short, what the serialized code says (the class or
// free function its source line is in) and the modules it could belong to.
#pragma once

#include <torch/script.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace scriptscope::detail {

std::string joinPath(const std::string& a, const std::string& b);

// A free function (no module's method) that nodes were inlined from: "batched_nms" of
// "torchvision.ops.boxes".
struct FunctionFrame {
    std::string name;
    std::string where; // the Python module that defines it
    bool operator==(const FunctionFrame& other) const {
        return name == other.name && where == other.where;
    }
};

// Where a node was inlined from: the module path of its call stack (the instance names of its
// frames, without the frames that have none and without SELF, a module calling its own method),
// and the free functions called after the innermost module frame, outermost first.
struct CallSite {
    bool known = false; // the node has a call stack
    std::string path;
    std::vector<FunctionFrame> functions;
};

// What the serialized code says of the function that made a node: the Python module of its
// code file, and the class (the nearest "class X(Module):" above the line) or, for a free
// function, the `def` at the left margin above it. Empty when the source is unknown.
struct CodeFacts {
    std::string file;      // the code file, dotted ("__torch__.torchvision.ops.boxes")
    std::string where;     // the Python module ("torchvision.ops.boxes")
    std::string className; // "TransformerEncoder"; "" for a free function
    std::string function;  // the free function's name
};

// The modules of the model under a graph's module, by dotted path from the model's root, and what
// the call stacks and code files of that graph's nodes say about where each node belongs.
class CallSites {
public:
    CallSites(const torch::jit::Module& owner, const std::string& ownerPath);

    // The module at a path from the model's root; nullptr when there is none.
    const torch::jit::Module* module(const std::string& path) const;
    // Kept per call stack: the nodes inlined from one call share theirs (a transformer's 56,000
    // nodes have a few thousand).
    const CallSite& callSite(const torch::jit::Node* node);
    CodeFacts codeFacts(const torch::jit::Node* node);
    // The module a node without a module in its call stack is drawn in: the only instance of the
    // class whose code made it, else the instance (or, for a free function, the module) whose
    // attributes it reads (`reads`, "" for none); nullopt where neither tells.
    std::optional<std::string> placeWithoutStack(const CodeFacts& code, const std::string& reads);
    // For a node of a free function that nothing else places: the module of the next nodes of the
    // same function that have a call stack (the rest of that call), within a few nodes.
    std::optional<std::string> calledFrom(torch::jit::Node* node, const CodeFacts& code);

private:
    const std::string& stepPath(const std::string& path, const std::string& name,
                                const c10::ClassType* type);
    const std::vector<std::string>& instancesOf(const std::string& qualified);
    // The Python module of a dotted name, kept per name: asked for by every node's code facts.
    const std::string& pythonModule(const std::string& dotted);

    const std::string& ownerPath_;
    std::map<std::string, torch::jit::Module> modules_; // by dotted path from the model's root
    std::map<std::tuple<std::string, std::string, const c10::ClassType*>, std::string>
        steps_;                                                 // stepPath's answers
    std::map<std::string, std::vector<std::string>> instances_; // module paths by qualified type
    std::map<const torch::jit::Source*, std::vector<std::pair<size_t, std::string>>> definitions_;
    std::unordered_map<const torch::jit::InlinedCallStack*, CallSite> sites_;
    CallSite noStack_;
    std::unordered_map<std::string, std::string> pythonModules_; // pythonModule's answers
};

} // namespace scriptscope::detail
