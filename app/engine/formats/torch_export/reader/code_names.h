// The names FX's generated code gives a graph's nodes (torch.fx.graph._Namespace), for print(ep):
// unique, and never a Python keyword or builtin. A forward(self, input) is written input_1 = input,
// and the node that was max_1 then max_2. The graph itself and its signature keep the nodes' own
// names.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace scriptscope {

class CodeNamespace {
public:
    // FX's own globals (torch, device, inf, ...) are taken first.
    CodeNamespace();
    // The name of the node called `name` in the graph, made on the first call (in the order the
    // code emits the nodes).
    std::string nameOf(const std::string& name);
    const std::map<std::string, std::string>& names() const { return names_; }

private:
    std::string create(std::string candidate, bool isThatBuiltin);

    std::set<std::string> used_;
    std::map<std::string, int64_t> counts_;
    std::map<std::string, std::string> names_;
};

// Python 3.11's keywords and builtins: FX's _illegal_names besides its own globals.
bool shadowsBuiltin(const std::string& name);

// `text` (an argument as the code writes it) with the nodes' names as the code gives them: every
// identifier outside quotes that names a node, not an attribute (after a dot) nor a call.
std::string withCodeNames(const std::string& text, const std::map<std::string, std::string>& names);

} // namespace scriptscope
