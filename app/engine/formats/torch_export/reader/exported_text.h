// A torch.export program (pt2_reader.h) as Python shows it after torch.export.load: the FX graph's
// nodes, print(exported_program) and str(exported_program.graph), byte for byte, without LibTorch.
//
// The archive stores one node per operator call; Python's graph has more: a placeholder per input,
// a getitem per value of a call that returns several, and the output node. fxNodes() rebuilds that
// list as torch/_export/serde/serialize.py's deserializer does, and the printers write it as
// torch/fx/graph.py's code generator and Graph.__str__ do (PyTorch 2.14).
#pragma once

#include <pt2_reader.h>

#include <string>
#include <vector>

namespace scriptscope {

struct FxArgument {
    std::string keyword; // "" for a positional argument
    std::string repr;    // as the generated code writes it ("x", "'a'", "device(type='cpu')")
    std::string str;     // as str(graph) writes it ("%x", "a", "cpu")
};

struct FxNode {
    std::string op;       // "placeholder", "call_function", "output"
    std::string name;     // n.name
    std::string target;   // str(n.target): "aten.conv2d.default", "<built-in function getitem>"
    std::string callable; // as the code calls it: "torch.ops.aten.conv2d.default"
    std::vector<FxArgument> args;   // positional first, then keyword
    std::vector<std::string> reads; // the values it reads, each once, in order (n._input_nodes)
    std::string annotation;         // "f32[1, 3, 8, 8]", "Sym(s77)", "" when none
    int source = -1;                // the Pt2Model node it comes from (-1: placeholder, output)
    std::string stackTrace;
};

std::vector<FxNode> fxNodes(const Pt2Model& model);

// str(exported_program): the graph module's readable code, the graph signature and the range
// constraints.
std::string exportedProgramText(const Pt2Model& model);
// str(exported_program.graph)
std::string exportedGraphText(const Pt2Model& model);

// "# File: conv.py:565 in forward, code: return self._conv_forward(...)": the innermost frame of a
// node's stack trace, as the printout's comments give it; "" when it has none.
std::string stackTraceSummary(const std::string& stackTrace);

} // namespace scriptscope
