// Graphs made up for the layout's tests and benchmark (no LibTorch).
#pragma once

#include <graph_model.h>

#include <string>

namespace scriptscope::test {

// x -> relu -> h, and h used by `fanOut` multiplications, each feeding the output: a value with
// a fan-out as large as TorchScript's `self` feeding every GetAttr.
inline GraphModel fanOutGraph(int fanOut) {
    GraphModel g;
    g.method = "forward";
    g.inputs = {{"x", "Tensor"}};
    g.outputs = {{"y", "Tensor"}};
    GraphGroup root;
    root.label = "(root)";
    root.type = "Hub";
    g.groups.push_back(root);
    GraphNode hub;
    hub.kind = "aten::relu";
    hub.outputs = {{"h", "Tensor"}};
    g.nodes.push_back(hub);
    g.edges.push_back({-1, 0, 0, -1, "x", "Tensor", false});
    for (int i = 1; i <= fanOut; ++i) {
        GraphNode n;
        n.id = i;
        n.kind = "aten::mul";
        n.outputs = {{"m" + std::to_string(i), "Tensor"}};
        g.nodes.push_back(n);
        g.edges.push_back({0, -1, i, -1, "h", "Tensor", false});
        g.edges.push_back({i, -1, -1, 0, "m" + std::to_string(i), "Tensor", false});
    }
    return g;
}

} // namespace scriptscope::test
