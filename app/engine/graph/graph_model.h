// A method's graph as a diagram sees it: operator nodes and the values between them, grouped by the
// module instance each node came from (recovered from the inlined call stack) and by the blocks of
// prim::If and prim::Loop. Constants and prim::GetAttr are not nodes: they are folded into the node
// that uses them as its attributes ("weight 64x3x7x7"), since one `self` feeding every GetAttr
// would make a layered layout explode. Plain values: no LibTorch, no Qt (the engine builds them,
// the CLI and the GUI use them).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace scriptscope {

struct GraphAttribute {
    std::string name;  // the schema's argument name ("weight", "stride"), or "input N"
    std::string value; // "64x3x7x7 float32 (conv1.weight)", "[2, 2]", "None"
};

struct GraphPort {
    std::string name; // the value's debug name, as the IR text prints it without the %
    std::string type; // "Tensor", "int[]", "(Tensor, Tensor)"
};

struct GraphNode {
    int id = 0;
    std::string kind;   // "aten::conv2d", "prim::If"
    std::string module; // the module instance's dotted path, as named_modules() gives it; "" root
    int group = 0;      // the innermost group (GraphModel::groups index)
    std::string schema; // the operator's schema, where it has one
    std::string source; // "file:line" of the code that made the node, where known
    int sourceLine = 0; // that line, in the file the source names (0: unknown)
    std::string sourceText; // the first line of that source, trimmed (to find it in .code)
    int irLine = 0;         // the node's line in the graph's IR text, counted from 1
    std::vector<GraphAttribute> attributes;
    std::vector<GraphPort> inputs; // the values that are drawn (not the folded ones)
    std::vector<GraphPort> outputs;
};

// A value from one node (or a graph input) to another (or to the graph's outputs).
struct GraphEdge {
    int from = -1;          // node id; -1: the graph's input fromInput
    int fromInput = -1;     // index into GraphModel::inputs when from is -1
    int to = -1;            // node id; -1: the graph's output toOutput
    int toOutput = -1;      // index into GraphModel::outputs when to is -1
    std::string value;      // the value's debug name
    std::string type;       // its type, as the IR prints it
    bool intoBlock = false; // the edge enters a block from outside it (or leaves it as a result)
};

struct GraphGroup {
    // A module instance; a block of a prim::If or prim::Loop; a call of a free function (one
    // that is no module's method: F.multi_head_attention_forward, torchvision's batched_nms)
    // inside a module, labelled "batched_nms()", its type the Python module that defines it.
    enum class Kind { Module, Block, Function };
    int id = 0;
    int parent = -1; // -1 for the root group
    Kind kind = Kind::Module;
    std::string module; // the module path of the group (for a block: of its owner node)
    // module groups: the module's type ("BasicBlock"); blocks: the owner's kind; functions: where
    // they are defined ("torchvision.ops.boxes")
    std::string type;
    std::string label;      // "layer1.0" (the last path part for nested groups), "if: then", "loop"
    int64_t parameters = 0; // module groups: the module's parameter count, its submodules' included
    int owner = -1;         // block groups: the prim::If / prim::Loop node
    int depth = 0; // the root is 0; a module group and a block are one deeper than their parent
    // Module groups with identical contents (the same operators wired the same way, in the same
    // nested groups; a transformer's layers): how many there are, and the first of them in the
    // graph's order. 1 and -1 for a group like no other.
    int repeats = 1;
    int sameAs = -1;
};

struct GraphModel {
    std::string modulePath; // the method's module
    std::string method;
    bool inlined = false;
    std::vector<GraphPort> inputs; // the method's arguments, self excluded
    std::vector<GraphPort> outputs;
    std::vector<GraphGroup> groups; // groups[0] is the root (the method's module)
    std::vector<GraphNode> nodes;   // in the IR's order, depth first through blocks
    std::vector<GraphEdge> edges;
};

// The graph drawn at some expansion: a collapsed group is one box standing for every node inside
// it, and the edges between boxes are merged (one per pair of items and value).
struct VisibleItem {
    bool isGroup = false;
    int id = 0; // node id, or group id when isGroup
};
struct VisibleEdge {
    int from = -1; // index into VisibleGraph::items; -1: a graph input
    int to = -1;   // index into VisibleGraph::items; -1: the graph's output
    int fromInput = -1;
    int toOutput = -1;
    std::string value;
    std::string type;
};
struct VisibleGraph {
    std::vector<VisibleItem> items;
    std::vector<VisibleEdge> edges;
    std::vector<int> openGroups; // the expanded groups that have something visible in them
};

// Folds away function groups of under three nodes, and those that are all their module holds
// (F.relu, a Dropout that only calls F.dropout): what they held goes to their parent.
void foldSmallFunctions(GraphModel& model);

// Fills GraphGroup::repeats and sameAs: module groups of the same type whose contents have the
// same structure (operator kinds and attributes' names, how the values flow between them and in
// from outside, nested groups alike), counted per class.
void markRepeatedGroups(GraphModel& model);

// `expanded(group)` says whether a group shows its contents; the root always does.
VisibleGraph visibleGraph(const GraphModel& model,
                          const std::function<bool(const GraphGroup&)>& expanded);
// Expanded down to `depth` (groups of depth <= depth show their contents; -1: all).
VisibleGraph visibleGraph(const GraphModel& model, int depth);

// Graphviz's DOT language for the visible graph, top to bottom, each open group a cluster.
std::string toDot(const GraphModel& model, const VisibleGraph& visible);

} // namespace scriptscope
