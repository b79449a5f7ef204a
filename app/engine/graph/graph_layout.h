// Where the diagram draws things: one open group laid out at a time, then the pieces put together.
//
// Each open group is its own layout problem (a "scene"): its direct items (operator nodes, the
// boxes of collapsed child groups, its open child groups at the size their own layout gave them),
// plus one port per value that enters or leaves it. Expanding a group changes only that group's
// scene and the sizes its ancestors see, so only those are laid out again; the rest come from the
// cache, keyed by the scene's DOT text. A value that feeds many items of one scene (a hub, such as
// one input used everywhere) is not drawn as that many edges: its uses become stubs, short labels
// on the items, since a large fan-out makes layered layout explode.
//
// Layout itself is a function given to layoutDiagram: Graphviz's dot in the scriptscope-layout
// process (killed at a time limit; what it could not lay out falls back to layeredLayout), or
// layeredLayout alone. No Qt and no LibTorch: the GUI, the CLI and the tests share this.
#pragma once

#include "graph_model.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace scriptscope {

struct LayoutPoint {
    double x = 0;
    double y = 0;
};
struct LayoutRect {
    double x = 0; // top left, y growing downwards, in points
    double y = 0;
    double width = 0;
    double height = 0;
    bool contains(const LayoutPoint& p) const {
        return p.x >= x && p.y >= y && p.x <= x + width && p.y <= y + height;
    }
};

// The text an item shows: a title line (bold for boxes) and smaller lines below it.
struct ItemText {
    std::string title;
    std::vector<std::string> lines;
};

namespace diagram {
constexpr double kTitleFont = 11;     // px: operator kinds, group names
constexpr double kLineFont = 9;       // px: attributes, types
constexpr double kTitleAdvance = 6.4; // average advance of a title character
constexpr double kLineAdvance = 5.4;
constexpr double kPadding = 8; // inside items
constexpr double kTitleHeight = 15;
constexpr double kLineHeight = 12;
constexpr size_t kMaxLineChars = 48; // longer lines are cut with an ellipsis
constexpr size_t kMaxAttributeLines = 4;
constexpr double kGroupPadding = 12; // around an open group's contents
constexpr double kGroupTitle = 22;   // its title bar
constexpr double kPortSize = 8;
constexpr size_t kHubFanOut = 16; // a value used by more items of one scene than this is a hub
} // namespace diagram

// `nodesIn[g]`: the nodes inside group g, its descendants' included (see nodesPerGroup).
ItemText itemText(const GraphModel& model, const VisibleItem& item,
                  const std::vector<size_t>& nodesIn);
std::vector<size_t> nodesPerGroup(const GraphModel& model);
// The size an item is drawn at: from its text, by the average advances above.
void itemSize(const ItemText& text, bool box, double& width, double& height);
// A line cut to at most `chars` characters (UTF-8 aware), with "…" when it was cut.
std::string elided(const std::string& text, size_t chars);

struct SceneItem {
    enum class Kind { Node, Box, Group, Input, Output, InPort, OutPort };
    Kind kind = Kind::Node;
    int ref = -1;      // Node, Box: VisibleGraph::items index; Group: group id; Input: input index
    std::string value; // ports: the value that passes
    double width = 0;
    double height = 0;
};
struct SceneEdge {
    int from = 0; // scene item indices
    int to = 0;
    std::string value;
    std::vector<int> edges; // the VisibleGraph::edges it carries
};
// A use of a hub value, drawn as a label on the item instead of an edge.
struct SceneStub {
    int item = 0;      // the scene item that uses the value
    int source = 0;    // the scene item the value comes from
    std::string value; // its name
    std::vector<int> edges;
};
struct LayoutScene {
    int group = 0;
    std::vector<SceneItem> items;
    std::vector<SceneEdge> edges;
    std::vector<SceneStub> stubs;
    std::string dot; // the scene in DOT, fixed-size nodes "s<i>", edges keyed "e<i>"
};

// One scene laid out, in its own coordinates.
struct SceneLayout {
    double width = 0;
    double height = 0;
    std::vector<LayoutRect> items; // per scene item
    std::vector<std::vector<LayoutPoint>>
        edges;           // per scene edge: Bezier points p0 c1 c2 p1 c1 c2 p2 …
    bool simple = false; // by layeredLayout, not Graphviz
};

// A simple layered layout (longest-path ranks, barycentre ordering, straight-ish curves): fast on
// any shape, used when Graphviz is unavailable, too slow or fails.
SceneLayout layeredLayout(const LayoutScene& scene);
// Reads scriptscope-layout's output for these scenes (in order). A scene it lacks, or whose nodes
// or edges it does not all give, comes back with no items: the caller lays it out otherwise.
std::vector<SceneLayout> parseLayoutOutput(const std::string& output,
                                           const std::vector<const LayoutScene*>& scenes);

// Lays out a batch of scenes; returns one layout per scene, in order.
using LayoutEngine =
    std::function<std::vector<SceneLayout>(const std::vector<const LayoutScene*>& scenes)>;

struct GraphvizOptions {
    std::string program;        // the scriptscope-layout executable
    double timeoutSeconds = 10; // per batch (one nesting level); then the process is killed
    uint64_t memoryLimitMb = 0; // its address space; 0: unlimited
    const std::atomic<bool>* cancel = nullptr;
};
// Graphviz's dot in the scriptscope-layout process; scenes it does not lay out in time, or at all,
// fall back to layeredLayout. `notes` collects why (a timeout, a crash), once per batch.
LayoutEngine graphvizEngine(const GraphvizOptions& options, std::vector<std::string>* notes);
LayoutEngine layeredEngine();
// Where scriptscope-layout is: next to this executable, else on PATH; empty when not found.
std::string findLayoutProgram();

// Scene layouts by their DOT text, so that re-expanding lays out only what changed.
class LayoutCache {
public:
    explicit LayoutCache(size_t capacity = 1024)
        : capacity_(capacity) {}
    const SceneLayout* find(const std::string& dot) const;
    void insert(const std::string& dot, const SceneLayout& layout);
    size_t size() const { return entries_.size(); }
    void clear() { entries_.clear(); }

private:
    size_t capacity_;
    std::map<std::string, SceneLayout> entries_;
};

// The whole diagram, in one coordinate system.
struct DiagramEdge {
    std::vector<LayoutPoint> points; // Bezier: p0 c1 c2 p1 …
    std::vector<int> edges;          // VisibleGraph::edges
    std::string value;
    std::string type;
};
struct DiagramStub {
    int item = -1;  // VisibleGraph::items index, or -1 for the graph's output
    int group = -1; // or the open group whose port uses it
    LayoutPoint at; // where its label starts (above the item)
    std::string text;
    std::vector<int> edges;
};
struct DiagramPort {
    int group = 0;
    bool in = true;
    std::string value;
    LayoutRect rect;
};
struct DiagramCluster {
    int group = 0;
    LayoutRect rect;
    bool simple = false; // laid out by the simple layout
};
struct DiagramLayout {
    double width = 0;
    double height = 0;
    std::vector<LayoutRect> items;  // per VisibleGraph item
    std::vector<ItemText> texts;    // per VisibleGraph item: what it shows (its size came from it)
    std::vector<LayoutRect> inputs; // per GraphModel input
    LayoutRect output;
    std::vector<DiagramCluster> clusters; // open groups, outer ones first (the root first)
    std::vector<DiagramPort> ports;
    std::vector<DiagramEdge> edges;
    std::vector<DiagramStub> stubs;
    std::vector<std::string> notes;
    size_t scenes = 0;  // open groups
    size_t laidOut = 0; // scenes the engine laid out (the rest came from the cache)
    size_t simpleScenes = 0;
};

// Builds the scenes of every open group of `visible`, lays out what `cache` lacks with `engine`
// (deepest groups first: a group's size is its contents'), and composes the diagram.
DiagramLayout layoutDiagram(const GraphModel& model, const VisibleGraph& visible,
                            LayoutCache& cache, const LayoutEngine& engine);

// The scenes alone (for tests and benchmarks): sizes of open groups are not known yet (0).
std::vector<LayoutScene> buildScenes(const GraphModel& model, const VisibleGraph& visible);

// The diagram as an SVG document (light colours), every item, edge and label in it.
std::string toSvg(const GraphModel& model, const VisibleGraph& visible,
                  const DiagramLayout& layout);

} // namespace scriptscope
