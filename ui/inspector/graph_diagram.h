// The graph drawn: a method's graph as a diagram beside its IR text. Module instances and the
// blocks of if and loop are nested groups; the diagram opens with the root's children collapsed
// and a double-click expands or collapses a group. Each open group is laid out on its own
// (graph_layout.h) in a thread, with Graphviz in its own killable process and the simple layered
// layout as the fallback, and cached, so expanding a group lays out only that group and its
// ancestors; the GUI thread only swaps the finished picture in.
//
// The canvas paints the layout itself from a grid index of what is where (no item per node), with
// level of detail (text goes when it would be too small to read), a minimap, zoom and pan. Search
// counts and highlights every match (kind, module path, value name) and steps through them,
// revealing matches inside collapsed groups. Selecting a node shows its schema, values, module and
// source, highlights its neighbours and tells the IR text and the code which line it came from.
// After a profiled run, boxes and nodes are painted by time, with a legend. SVG and PNG export
// (tiled when the picture is too large for one image).
#pragma once

#include <graph_layout.h>
#include <graph_model.h>
#include <run_types.h>

#include <QFutureWatcher>
#include <QImage>
#include <QWidget>

#include <atomic>
#include <map>
#include <memory>
#include <set>

class QLabel;
class QMenu;
class QLineEdit;
class QToolButton;

namespace scriptscope {

// Where things are in a laid-out diagram: a grid of cells listing what crosses them.
struct DiagramIndex {
    enum Kind : int { Item, Edge, Cluster, Stub, Input, Output, Port };
    struct Entry {
        int kind;
        int index;
    };
    double cell = 256;
    int columns = 0;
    int rows = 0;
    std::vector<std::vector<Entry>> cells;
    size_t entries = 0;
    void build(const DiagramLayout& layout, const std::vector<DiagramStub>& stubs);
    // Everything whose bounds meet `rect`, each once, in the order it was added per kind.
    std::vector<Entry> query(const LayoutRect& rect) const;
};

// Level of detail, worked out once per picture: below kDetailScale nodes are plain shapes, and an
// open group that would then be under kSummaryHeight or kSummaryWidth pixels on screen is drawn
// as one summary box, named where it has room; nothing inside it is drawn. Each value is the
// scale below which that happens (0: never).
struct DiagramDetail {
    static constexpr double kSummaryHeight = 48;
    static constexpr double kSummaryWidth = 24;
    std::vector<double> clusterSummary; // per cluster: a summary box below this scale
    std::vector<double> clusterHidden;  // per cluster: inside a summary box below this scale
    std::vector<double> itemHidden;     // per visible item
    std::vector<double> edgeHidden;     // per layout edge (both ends inside one summary box)
    std::vector<double> portHidden;     // per port
    void build(const GraphModel& graph, const VisibleGraph& visible, const DiagramLayout& layout);
};

// What is drawn of a picture in one view at one scale, in paint order (indices into the layout).
struct DiagramDrawList {
    std::vector<int> clusters;  // drawn open, with what they hold
    std::vector<int> summaries; // drawn as summary boxes
    std::vector<int> edges, ports, items, inputs, stubs;
    bool output = false;
    size_t labels = 0; // summary boxes large enough to carry their name
};

// What a layout job gives back: the picture at one expansion, ready to paint.
struct DiagramPicture {
    quint64 generation = 0;
    VisibleGraph visible;
    DiagramLayout layout;
    DiagramIndex index;
    DiagramDetail detail;
    std::vector<std::vector<int>> itemEdges; // per visible item: the layout edges touching it
    double layoutMs = 0;
};

class DiagramCanvas;

class GraphDiagram : public QWidget {
    Q_OBJECT

public:
    explicit GraphDiagram(QWidget* parent = nullptr);
    ~GraphDiagram() override;

    // A graph to draw, collapsed to the root's children. Selection, search and times of the
    // previous graph go.
    void setGraph(const GraphModel& graph);
    void setGraph(std::shared_ptr<const GraphModel> graph);
    // No graph: a message in its place ("Building the diagram…", an error).
    void showMessage(const QString& message);
    bool hasGraph() const { return hasGraph_; }
    const GraphModel& graph() const { return *graph_; }

    void setExpanded(int group, bool expanded);
    bool isExpanded(int group) const;
    void expandAll();
    void collapseAll();
    // Expands the groups around a node so that it is drawn.
    void reveal(int node);

    // Search: every node whose kind, module path or output names contain `text` (any case).
    int search(const QString& text);
    // Ctrl+F: the search box takes the keyboard (with `typed` appended: typing over the picture).
    void focusSearch(const QString& typed = {});
    void nextMatch();
    void previousMatch();
    int matchCount() const { return static_cast<int>(matches_.size()); }
    int currentMatch() const { return currentMatch_; }
    QString searchStatus() const;

    // Selects a node (revealing and centring it); -1 clears. Emits nodeSelected unless `quiet`.
    void selectNode(int node, bool quiet = false);
    int selectedNode() const { return selectedNode_; }
    // The selection grown to everything upstream (or downstream) of the selected item.
    void selectUpstream();
    void selectDownstream();
    // Groups marked identical (graph_model.h's repeats) compared: both opened with everything in
    // them and shown together; selecting a node marks its counterpart, the node in the same place
    // of the other. False (and nothing changes) unless `a` and `b` are identical.
    bool compareGroups(int a, int b);
    void stopComparing();
    // The groups identical to `group`, in the graph's order, itself excluded.
    std::vector<int> identicalGroups(int group) const;
    // The counterpart of a node inside the compared groups; -1 for any other.
    int counterpart(int node) const;
    // Visible items marked (the selection and what upstream/downstream added).
    std::set<int> markedItems() const { return marked_; }

    // Times of a profiled run: boxes by their module's total time, nodes by the average time per
    // call of their operator; an empty profile removes them.
    void setProfile(const RunProfile& profile);
    bool hasProfile() const { return !moduleMs_.empty() || !nodeValues_.empty(); }
    // Instead of times: a value per node (by id) and per module (by path), painted the same way,
    // e.g. a statistic of the values a run computed. Empty maps go back to the profile's times.
    struct ValueOverlay {
        std::map<int, double> nodes;
        std::map<std::string, double> modules;
        QString name;   // "NaN + Inf count", for the legend and the details
        QString method; // the method whose inlined graph the node ids are of
    };
    void setValueOverlay(const ValueOverlay& overlay);
    const ValueOverlay& valueOverlay() const { return overlay_; }
    // The overlay's name while it is what the diagram paints; empty for times.
    QString overlayName() const { return nodeValues_.empty() ? QString() : overlay_.name; }
    // What a run's control flow did (RunResult::controlFlow, node ids of the forward's graph),
    // marked on the blocks of each node: a torch.cond's branch that ran, the other "not taken"
    // (dimmed); a while_loop's or map's body with its count. Empty clears; a new graph too.
    void setControlFlow(const std::vector<ControlFlowRun>& flow);
    // The mark on a block group ("ran", "not taken", "×4"); empty for none.
    QString blockNote(int group) const;
    bool blockNotTaken(int group) const { return blocksNotTaken_.count(group) > 0; }
    // An edge's label: the shape that flowed along its value in the profiled run, where the
    // diagram shows that run's method inlined; else the value's type.
    QString edgeLabel(int layoutEdge) const;
    bool showsRunShapes() const;

    bool exportSvg(const QString& path, QString* error) const;
    // One PNG, or tiles PATH-rROW-cCOL.png when larger than `maxSide` pixels; returns the files.
    QStringList exportPng(const QString& path, QString* error, int maxSide = 16384) const;

    // The Graphviz time limit per nesting level (seconds), and whether to use Graphviz at all.
    void setLayoutTimeout(double seconds) { layoutTimeout_ = seconds; }
    void setUseGraphviz(bool on) { useGraphviz_ = on; }
    bool layoutPending() const { return running_ || dirty_; }
    const DiagramPicture* picture() const { return picture_.get(); }
    QString statusText() const;
    DiagramCanvas* canvas() const { return canvas_; }
    // The visible item of a node (-1: inside a collapsed group, or not drawn yet).
    int itemOfNode(int node) const;
    int itemOfGroup(int group) const;
    // Paints the picture's region `scene` at `scale` into `painter` (the canvas, exports and the
    // benchmark use this).
    void paint(QPainter& painter, const LayoutRect& scene, double scale) const;
    // What paint() draws of `scene` at `scale`: the level of detail, without painting.
    DiagramDrawList drawList(const LayoutRect& scene, double scale) const;

Q_SIGNALS:
    void nodeSelected(int node); // -1: none
    void layoutFinished();

private:
    friend class DiagramCanvas;
    void requestLayout();
    void startJob();
    void jobFinished();
    void updateStatus();
    void updateInfo();
    void itemActivated(int item); // double-click on an item
    void clusterActivated(int group);
    void clickedItem(int item);
    // Marks the item, its edges and its neighbours (none for -1).
    void markAround(int item);
    void contextMenuAt(const QPoint& global, int item);
    void addCompareActions(QMenu& menu, int group);
    std::set<int> reach(int item, bool upstream) const;
    void markReach(bool upstream);
    bool isMatchItem(int item) const;
    QColor heatColour(double fraction) const;
    double itemMs(int item, QString* what) const;
    void showCompared();
    QString comparisonText() const;

    // What every paint layer shares, worked out once per paint() (diagram_paint.cpp): the
    // picture, the level of detail at this scale, the palette's colours, the fonts and what is
    // drawn.
    struct PaintContext {
        PaintContext(const GraphDiagram& owner, const LayoutRect& scene, double atScale);
        const DiagramPicture& pic;
        const DiagramLayout& layout;
        double scale;
        bool dark = false;
        bool showText = false; // scale >= kTextScale
        bool detail = false;   // scale >= kDetailScale
        bool heat = false;     // boxes and nodes coloured by times (or an overlay's values)
        bool shapes = false;   // edge labels show the shapes of the profiled run
        QColor text, dim, edgeColour, highlight, matchColour, nodeFill, boxFill, moduleFill,
            blockFill, functionFill, frame, shapeColour;
        QFont titleFont, lineFont, smallFont;
        DiagramDrawList list;
        std::vector<DiagramIndex::Entry> found; // the draw list, one entry per thing, by kind
    };
    // Paints the open groups' frames and titles, outer first: the bottom layer.
    void paintClusters(QPainter& p, const PaintContext& ctx) const;
    // Paints the edges (curves with arrow heads, or straight lines) and their labels.
    void paintEdges(QPainter& p, const PaintContext& ctx) const;
    // Paints the ports on the open groups' frames as dots, in detail only.
    void paintPorts(QPainter& p, const PaintContext& ctx) const;
    // Paints the summary boxes of groups too small to open, and their names where they fit.
    void paintSummaries(QPainter& p, const PaintContext& ctx) const;
    // Paints the nodes and collapsed groups with their text and times (diagram_paint_layers.cpp).
    void paintItems(QPainter& p, const PaintContext& ctx) const;
    // Paints the graph's inputs and its output as rounded pills with their names.
    void paintTerminals(QPainter& p, const PaintContext& ctx) const;
    // Paints the stubs' text above their items, the top layer (text scale only).
    void paintStubs(QPainter& p, const PaintContext& ctx) const;

    std::shared_ptr<const GraphModel> shared_; // the graph, shared with the layout jobs
    const GraphModel* graph_ = nullptr;        // *shared_, or an empty graph when there is none
    bool hasGraph_ = false;
    std::set<int> expanded_;
    std::shared_ptr<LayoutCache> cache_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    QFutureWatcher<std::shared_ptr<DiagramPicture>>* watcher_ = nullptr;
    std::shared_ptr<DiagramPicture> picture_;
    std::vector<std::string> notes_;
    std::shared_ptr<std::vector<std::string>> jobNotes_;
    quint64 generation_ = 0;
    bool running_ = false;
    bool dirty_ = false;
    bool fitAfterLayout_ = true;
    double layoutTimeout_ = 8;
    bool useGraphviz_ = true;
    int centreNodeAfterLayout_ = -1;

    struct Comparison {
        int a = -1, b = -1;
        std::map<int, int> counterparts; // node ids, both ways
    };
    Comparison compare_;
    bool showComparedAfterLayout_ = false;

    int selectedNode_ = -1;
    int selectedItem_ = -1;
    std::set<int> marked_;
    std::set<int> neighbours_;
    std::set<int> markedEdges_;
    std::vector<int> matches_; // node ids, in order
    std::set<int> matchSet_;
    std::set<int> matchGroups_; // the groups holding a match (each match's ancestors)
    int currentMatch_ = -1;
    QString searchText_;

    std::map<int, QString> blockNotes_; // block group -> its mark after a run
    std::set<int> blocksNotTaken_;
    std::map<std::string, double> moduleMs_;
    std::map<std::string, double> operatorMs_; // average per call
    std::vector<double> nodeMs_; // each node's own time, where the run timed every call (.pte)
    ValueOverlay overlay_;
    std::map<int, double> nodeValues_; // the overlay's, when it applies to the shown graph
    RunProfile profile_;
    std::map<std::string, std::string> shapes_;
    std::string shapesMethod_;
    double maxModuleMs_ = 0;
    double maxOperatorMs_ = 0;

    QLineEdit* search_ = nullptr;
    QLabel* searchCount_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* info_ = nullptr;
    DiagramCanvas* canvas_ = nullptr;
};

// The painted view: zoom (Ctrl+wheel, +/-), pan (drag, wheel, arrows), fit (0 or F), a minimap.
class DiagramCanvas : public QWidget {
    Q_OBJECT

public:
    explicit DiagramCanvas(GraphDiagram* diagram);
    double scale() const { return scale_; }
    void setScale(double scale, const QPointF& anchor);
    void fit();
    void centreOn(const LayoutRect& rect);
    // Shows the whole of `rect`, at most 1:1.
    void showRect(const LayoutRect& rect);
    QPointF toScene(const QPointF& p) const;
    QPointF toView(const QPointF& p) const;
    LayoutRect visibleScene() const;
    void pictureChanged();
    void panBy(double dx, double dy);
    // What is under a view point: a visible item (or -1) and the innermost open group.
    int itemAt(const QPointF& view) const;
    int clusterAt(const QPointF& view) const;
    QSize sizeHint() const override { return {640, 480}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void paintMinimap(QPainter& painter);
    QRectF minimapRect() const;
    void renderMinimap();

    GraphDiagram* diagram_;
    double scale_ = 1;
    QPointF origin_; // the scene point at the view's top left
    QPoint pressAt_;
    QPointF pressOrigin_;
    bool dragging_ = false;
    bool minimapDrag_ = false;
    QImage minimap_;
};

} // namespace scriptscope
