#include "graph_diagram.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QPainterPath>
#include <QSaveFile>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <deque>

namespace scriptscope {

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// "1 item", "3 items": the count and the word, singular or plural.
QString counted(qsizetype n, const QString& one, const QString& many) {
    return n == 1 ? QString(QStringLiteral("1 ") + one)
                  : QString(QString::number(n) + QLatin1Char(' ') + many);
}

LayoutRect bounds(const std::vector<LayoutPoint>& points) {
    double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
    for (const LayoutPoint& p : points) {
        x0 = std::min(x0, p.x);
        y0 = std::min(y0, p.y);
        x1 = std::max(x1, p.x);
        y1 = std::max(y1, p.y);
    }
    return points.empty() ? LayoutRect{} : LayoutRect{x0, y0, x1 - x0, y1 - y0};
}

QRectF qrect(const LayoutRect& r) {
    return {r.x, r.y, r.width, r.height};
}

// Below this scale text is not drawn (it would be a few pixels high); below the next, items are
// plain rectangles and edges straight lines.
constexpr double kTextScale = 0.4;
constexpr double kDetailScale = 0.15;

} // namespace

// ---------------------------------------------------------------------------------------------
// The index

void DiagramIndex::build(const DiagramLayout& layout, const std::vector<DiagramStub>& stubs) {
    columns = std::max(1, static_cast<int>(std::ceil(layout.width / cell)));
    rows = std::max(1, static_cast<int>(std::ceil(layout.height / cell)));
    cells.assign(static_cast<size_t>(columns) * static_cast<size_t>(rows), {});
    entries = 0;
    auto add = [&](const LayoutRect& r, int kind, int index) {
        const int c0 = std::clamp(static_cast<int>(r.x / cell), 0, columns - 1);
        const int c1 = std::clamp(static_cast<int>((r.x + r.width) / cell), 0, columns - 1);
        const int r0 = std::clamp(static_cast<int>(r.y / cell), 0, rows - 1);
        const int r1 = std::clamp(static_cast<int>((r.y + r.height) / cell), 0, rows - 1);
        for (int row = r0; row <= r1; ++row) {
            for (int col = c0; col <= c1; ++col) {
                cells[static_cast<size_t>(row) * static_cast<size_t>(columns) +
                      static_cast<size_t>(col)]
                    .push_back({kind, index});
                ++entries;
            }
        }
    };
    for (size_t i = 0; i < layout.clusters.size(); ++i) {
        const LayoutRect& r = layout.clusters[i].rect;
        // An open group's frame: its four sides, so that a big group is not in every cell.
        add({r.x, r.y, r.width, diagram::kGroupTitle}, Cluster, static_cast<int>(i));
        add({r.x, r.y, 1, r.height}, Cluster, static_cast<int>(i));
        add({r.x + r.width - 1, r.y, 1, r.height}, Cluster, static_cast<int>(i));
        add({r.x, r.y + r.height - 1, r.width, 1}, Cluster, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.edges.size(); ++i) {
        add(bounds(layout.edges[i].points), Edge, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.ports.size(); ++i) {
        add(layout.ports[i].rect, Port, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.items.size(); ++i) {
        add(layout.items[i], Item, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.inputs.size(); ++i) {
        add(layout.inputs[i], Input, static_cast<int>(i));
    }
    add(layout.output, Output, 0);
    for (size_t i = 0; i < stubs.size(); ++i) {
        add({stubs[i].at.x, stubs[i].at.y - 9, 120, 10}, Stub, static_cast<int>(i));
    }
}

std::vector<DiagramIndex::Entry> DiagramIndex::query(const LayoutRect& rect) const {
    std::vector<Entry> found;
    if (cells.empty()) {
        return found;
    }
    const int c0 = std::clamp(static_cast<int>(rect.x / cell), 0, columns - 1);
    const int c1 = std::clamp(static_cast<int>((rect.x + rect.width) / cell), 0, columns - 1);
    const int r0 = std::clamp(static_cast<int>(rect.y / cell), 0, rows - 1);
    const int r1 = std::clamp(static_cast<int>((rect.y + rect.height) / cell), 0, rows - 1);
    std::set<std::pair<int, int>> seen;
    for (int row = r0; row <= r1; ++row) {
        for (int col = c0; col <= c1; ++col) {
            for (const Entry& e : cells[static_cast<size_t>(row) * static_cast<size_t>(columns) +
                                        static_cast<size_t>(col)]) {
                if (seen.insert({e.kind, e.index}).second) {
                    found.push_back(e);
                }
            }
        }
    }
    std::sort(found.begin(), found.end(), [](const Entry& a, const Entry& b) {
        return a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
    });
    return found;
}

// ---------------------------------------------------------------------------------------------
// The diagram

GraphDiagram::GraphDiagram(QWidget* parent)
    : QWidget(parent)
    , cache_(std::make_shared<LayoutCache>())
    , cancel_(std::make_shared<std::atomic<bool>>(false)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* bar = new QHBoxLayout;
    bar->setSpacing(2);
    search_ = new QLineEdit(this);
    search_->setObjectName(QStringLiteral("diagramSearch"));
    search_->setPlaceholderText(tr("Search nodes: kind, module, value"));
    search_->setClearButtonEnabled(true);
    searchCount_ = new QLabel(this);
    searchCount_->setObjectName(QStringLiteral("diagramSearchCount"));
    auto button = [&](const QString& text, const QString& tip, auto slot) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        connect(b, &QToolButton::clicked, this, slot);
        bar->addWidget(b);
        return b;
    };
    bar->addWidget(search_, 1);
    bar->addWidget(searchCount_);
    button(QStringLiteral("\u2191"), tr("Previous match (Shift+Enter)"),
           [this] { previousMatch(); });
    button(QStringLiteral("\u2193"), tr("Next match (Enter)"), [this] { nextMatch(); });
    button(tr("Expand all"), tr("Open every group (large graphs take a moment)"),
           [this] { expandAll(); });
    button(tr("Collapse"), tr("Back to the root's children"), [this] { collapseAll(); });
    button(tr("Fit"), tr("Fit the diagram in the view (0)"), [this] { canvas_->fit(); });
    QToolButton* exportButton = button(tr("Export"), tr("Save the diagram as SVG or PNG"), [] {});
    auto* exportMenu = new QMenu(exportButton);
    exportButton->setMenu(exportMenu);
    exportButton->setPopupMode(QToolButton::InstantPopup);
    exportMenu->addAction(tr("SVG…"), this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export the diagram as SVG"),
                                         QStringLiteral("graph.svg"), tr("SVG images (*.svg)"));
        QString error;
        if (!path.isEmpty() && !exportSvg(path, &error)) {
            status_->setText(error);
        }
    });
    exportMenu->addAction(tr("PNG…"), this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export the diagram as PNG"),
                                         QStringLiteral("graph.png"), tr("PNG images (*.png)"));
        QString error;
        if (path.isEmpty()) {
            return;
        }
        const QStringList files = exportPng(path, &error);
        status_->setText(files.isEmpty() ? error
                         : files.size() == 1
                             ? tr("Saved %1").arg(QDir::toNativeSeparators(files.front()))
                             : tr("Saved %1 tiles next to %2")
                                   .arg(files.size())
                                   .arg(QDir::toNativeSeparators(path)));
    });
    layout->addLayout(bar);
    canvas_ = new DiagramCanvas(this);
    canvas_->setObjectName(QStringLiteral("diagramCanvas"));
    layout->addWidget(canvas_, 1);
    info_ = new QLabel(this);
    info_->setObjectName(QStringLiteral("diagramInfo"));
    info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    info_->setWordWrap(true);
    info_->setTextFormat(Qt::RichText);
    info_->setMinimumHeight(info_->fontMetrics().height() * 2);
    layout->addWidget(info_);
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("diagramStatus"));
    status_->setWordWrap(true);
    layout->addWidget(status_);

    connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) { search(text); });
    connect(search_, &QLineEdit::returnPressed, this, [this] {
        if (QApplication::keyboardModifiers() & Qt::ShiftModifier) {
            previousMatch();
        } else {
            nextMatch();
        }
    });
    watcher_ = new QFutureWatcher<std::shared_ptr<DiagramPicture>>(this);
    connect(watcher_, &QFutureWatcherBase::finished, this, [this] { jobFinished(); });
    showMessage(tr("No graph"));
}

GraphDiagram::~GraphDiagram() {
    cancel_->store(true); // a running job kills its Graphviz process and ends; its result is lost
}

void GraphDiagram::setGraph(const GraphModel& graph) {
    graph_ = graph;
    shared_ = std::make_shared<const GraphModel>(graph);
    hasGraph_ = true;
    expanded_.clear();
    // A root that holds just one group (a wrapper module) opens it, and so on down.
    for (int open = 0;;) {
        std::vector<int> children;
        bool nodes = false;
        for (const GraphGroup& g : graph_.groups) {
            if (g.parent == open) {
                children.push_back(g.id);
            }
        }
        for (const GraphNode& n : graph_.nodes) {
            nodes = nodes || n.group == open;
        }
        if (children.size() != 1 || nodes) {
            break;
        }
        open = children.front();
        expanded_.insert(open);
    }
    cache_ = std::make_shared<LayoutCache>();
    picture_.reset();
    selectedNode_ = selectedItem_ = -1;
    markAround(-1);
    notes_.clear();
    fitAfterLayout_ = true;
    centreNodeAfterLayout_ = -1;
    {
        const QSignalBlocker block(search_);
        search_->clear();
    }
    search(QString());
    setProfile(RunProfile{});
    updateInfo();
    requestLayout();
}

void GraphDiagram::showMessage(const QString& message) {
    hasGraph_ = false;
    graph_ = GraphModel{};
    shared_.reset();
    picture_.reset();
    expanded_.clear();
    selectedNode_ = selectedItem_ = -1;
    markAround(-1);
    matches_.clear();
    matchSet_.clear();
    matchGroups_.clear();
    currentMatch_ = -1;
    generation_++; // a job still running for the previous graph is ignored when it ends
    cancel_->store(true);
    dirty_ = false;
    status_->setText(message);
    info_->clear();
    searchCount_->clear();
    canvas_->pictureChanged();
}

void GraphDiagram::setExpanded(int group, bool expanded) {
    if (!hasGraph_ || group <= 0 || group >= static_cast<int>(graph_.groups.size())) {
        return;
    }
    if (expanded ? expanded_.insert(group).second : expanded_.erase(group) > 0) {
        requestLayout();
    }
}

bool GraphDiagram::isExpanded(int group) const {
    return group == 0 || expanded_.count(group);
}

void GraphDiagram::expandAll() {
    if (!hasGraph_) {
        return;
    }
    for (const GraphGroup& g : graph_.groups) {
        if (g.id > 0) {
            expanded_.insert(g.id);
        }
    }
    fitAfterLayout_ = true;
    requestLayout();
}

void GraphDiagram::collapseAll() {
    if (!hasGraph_) {
        return;
    }
    expanded_.clear();
    fitAfterLayout_ = true;
    requestLayout();
}

void GraphDiagram::reveal(int node) {
    if (!hasGraph_ || node < 0 || node >= static_cast<int>(graph_.nodes.size())) {
        return;
    }
    bool changed = false;
    for (int g = graph_.nodes[static_cast<size_t>(node)].group; g > 0;
         g = graph_.groups[static_cast<size_t>(g)].parent) {
        changed = expanded_.insert(g).second || changed;
    }
    if (changed) {
        requestLayout();
    }
}

// ---------------------------------------------------------------------------------------------
// Layout jobs: one at a time; a request while one runs cancels it and runs again after.

void GraphDiagram::requestLayout() {
    if (!hasGraph_) {
        return;
    }
    ++generation_;
    dirty_ = true;
    if (running_) {
        cancel_->store(true);
        return;
    }
    startJob();
}

void GraphDiagram::startJob() {
    dirty_ = false;
    running_ = true;
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    jobNotes_ = std::make_shared<std::vector<std::string>>();
    const std::shared_ptr<const GraphModel> graph = shared_;
    const std::set<int> expanded = expanded_;
    const quint64 generation = generation_;
    const std::shared_ptr<LayoutCache> cache = cache_;
    const std::shared_ptr<std::atomic<bool>> cancel = cancel_;
    const std::shared_ptr<std::vector<std::string>> notes = jobNotes_;
    GraphvizOptions options;
    options.program = useGraphviz_ ? findLayoutProgram() : std::string();
    options.timeoutSeconds = layoutTimeout_;
    options.memoryLimitMb = 4096;
    options.cancel = cancel.get();
    const bool graphviz = useGraphviz_;
    watcher_->setFuture(QtConcurrent::run([=]() {
        QElapsedTimer timer;
        timer.start();
        auto picture = std::make_shared<DiagramPicture>();
        picture->generation = generation;
        picture->visible = visibleGraph(
            *graph, [&expanded](const GraphGroup& g) { return expanded.count(g.id) > 0; });
        const LayoutEngine engine =
            graphviz ? graphvizEngine(options, notes.get()) : layeredEngine();
        picture->layout = layoutDiagram(*graph, picture->visible, *cache, engine);
        if (cancel->load()) {
            return std::shared_ptr<DiagramPicture>();
        }
        picture->index.build(picture->layout, picture->layout.stubs);
        picture->itemEdges.resize(picture->visible.items.size());
        for (size_t e = 0; e < picture->layout.edges.size(); ++e) {
            for (const int v : picture->layout.edges[e].edges) {
                const VisibleEdge& edge = picture->visible.edges[static_cast<size_t>(v)];
                for (const int item : {edge.from, edge.to}) {
                    if (item >= 0) {
                        auto& list = picture->itemEdges[static_cast<size_t>(item)];
                        if (list.empty() || list.back() != static_cast<int>(e)) {
                            list.push_back(static_cast<int>(e));
                        }
                    }
                }
            }
        }
        picture->layoutMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        return picture;
    }));
}

void GraphDiagram::jobFinished() {
    running_ = false;
    std::shared_ptr<DiagramPicture> picture = watcher_->result();
    const bool current = picture && picture->generation == generation_;
    if (current) {
        picture_ = std::move(picture);
        notes_ = *jobNotes_;
        // The selection and the marks are items of the old picture: carry them over by node.
        selectedItem_ = selectedNode_ >= 0 ? itemOfNode(selectedNode_) : -1;
        markAround(selectedItem_);
        canvas_->pictureChanged();
        if (fitAfterLayout_) {
            fitAfterLayout_ = false;
            canvas_->fit();
        }
        if (centreNodeAfterLayout_ >= 0) {
            const int item = itemOfNode(centreNodeAfterLayout_);
            centreNodeAfterLayout_ = -1;
            if (item >= 0) {
                canvas_->centreOn(picture_->layout.items[static_cast<size_t>(item)]);
            }
        }
        updateStatus();
        updateInfo();
    }
    if (dirty_ && hasGraph_) {
        startJob();
        return;
    }
    if (current) {
        Q_EMIT layoutFinished();
    }
}

QString GraphDiagram::statusText() const {
    return status_->text();
}

void GraphDiagram::updateStatus() {
    if (!picture_) {
        return;
    }
    const DiagramLayout& l = picture_->layout;
    QString text = counted(static_cast<qsizetype>(picture_->visible.items.size()), tr("item drawn"),
                           tr("items drawn")) +
                   QStringLiteral(" · ") +
                   counted(static_cast<qsizetype>(l.scenes), tr("open group"), tr("open groups")) +
                   QStringLiteral(" · ") +
                   tr("laid out in %1 ms (%2 of %3 groups new)")
                       .arg(picture_->layoutMs, 0, 'f', 0)
                       .arg(l.laidOut)
                       .arg(l.scenes);
    // What the picture means goes into the tooltip; what went wrong stays in view.
    QString details = text;
    if (showsRunShapes()) {
        text += QStringLiteral(" · ") + tr("shapes of the last profiled run");
        details += QStringLiteral("\n") + tr("Edges show the shapes of the last profiled run.");
    }
    if (!l.stubs.empty()) {
        details += QStringLiteral("\n") +
                   tr("Values used by many items are shown as \u25B8 labels on them, not edges.");
    }
    for (const std::string& note : notes_) {
        text += QStringLiteral("\n") + q(note);
        details += QStringLiteral("\n") + q(note);
    }
    status_->setToolTip(details);
    status_->setText(text);
}

int GraphDiagram::itemOfNode(int node) const {
    if (!picture_) {
        return -1;
    }
    const auto& items = picture_->visible.items;
    for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].isGroup && items[i].id == node) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int GraphDiagram::itemOfGroup(int group) const {
    if (!picture_) {
        return -1;
    }
    const auto& items = picture_->visible.items;
    for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].isGroup && items[i].id == group) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

// ---------------------------------------------------------------------------------------------
// Search

int GraphDiagram::search(const QString& text) {
    searchText_ = text.trimmed();
    matches_.clear();
    matchSet_.clear();
    matchGroups_.clear();
    currentMatch_ = -1;
    if (hasGraph_ && !searchText_.isEmpty()) {
        const std::string needle = searchText_.toLower().toStdString();
        auto has = [&needle](std::string hay) {
            std::transform(hay.begin(), hay.end(), hay.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            return hay.find(needle) != std::string::npos;
        };
        for (const GraphNode& n : graph_.nodes) {
            bool match = has(n.kind) || has(n.module);
            for (const GraphPort& out : n.outputs) {
                match = match || has(out.name);
            }
            if (match) {
                matches_.push_back(n.id);
                matchSet_.insert(n.id);
                for (int g = n.group; g >= 0 && matchGroups_.insert(g).second;
                     g = graph_.groups[static_cast<size_t>(g)].parent) {
                }
            }
        }
    }
    searchCount_->setText(searchStatus());
    canvas_->update();
    return matchCount();
}

QString GraphDiagram::searchStatus() const {
    if (searchText_.isEmpty()) {
        return {};
    }
    if (matches_.empty()) {
        return tr("No match");
    }
    return currentMatch_ < 0 ? counted(matchCount(), tr("match"), tr("matches"))
                             : tr("%1 of %2").arg(currentMatch_ + 1).arg(matchCount());
}

void GraphDiagram::nextMatch() {
    if (matches_.empty()) {
        return;
    }
    currentMatch_ = (currentMatch_ + 1) % matchCount();
    selectNode(matches_[static_cast<size_t>(currentMatch_)]);
    searchCount_->setText(searchStatus());
}

void GraphDiagram::previousMatch() {
    if (matches_.empty()) {
        return;
    }
    currentMatch_ = currentMatch_ <= 0 ? matchCount() - 1 : currentMatch_ - 1;
    selectNode(matches_[static_cast<size_t>(currentMatch_)]);
    searchCount_->setText(searchStatus());
}

bool GraphDiagram::isMatchItem(int item) const {
    if (matchSet_.empty() || !picture_) {
        return false;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    // A node that matches, or a collapsed group holding one.
    return v.isGroup ? matchGroups_.count(v.id) > 0 : matchSet_.count(v.id) > 0;
}

// ---------------------------------------------------------------------------------------------
// Selection

void GraphDiagram::selectNode(int node, bool quiet) {
    if (!hasGraph_ || node >= static_cast<int>(graph_.nodes.size())) {
        return;
    }
    selectedNode_ = node;
    markAround(-1);
    selectedItem_ = -1;
    if (node >= 0) {
        const int item = itemOfNode(node);
        if (item < 0) {
            centreNodeAfterLayout_ = node;
            reveal(node);
        } else {
            clickedItem(item);
            canvas_->centreOn(picture_->layout.items[static_cast<size_t>(item)]);
        }
    }
    updateInfo();
    canvas_->update();
    if (!quiet) {
        Q_EMIT nodeSelected(node);
    }
}

void GraphDiagram::markAround(int item) {
    marked_.clear();
    neighbours_.clear();
    markedEdges_.clear();
    if (item < 0 || !picture_) {
        return;
    }
    marked_.insert(item);
    for (const int e : picture_->itemEdges[static_cast<size_t>(item)]) {
        markedEdges_.insert(e);
        for (const int k : picture_->layout.edges[static_cast<size_t>(e)].edges) {
            const VisibleEdge& edge = picture_->visible.edges[static_cast<size_t>(k)];
            for (const int i : {edge.from, edge.to}) {
                if (i >= 0 && i != item) {
                    neighbours_.insert(i);
                }
            }
        }
    }
}

void GraphDiagram::clickedItem(int item) {
    selectedItem_ = item;
    markAround(item);
    if (item < 0 || !picture_) {
        selectedNode_ = -1;
        updateInfo();
        canvas_->update();
        return;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    selectedNode_ = v.isGroup ? -1 : v.id;
    updateInfo();
    canvas_->update();
}

std::set<int> GraphDiagram::reach(int item, bool upstream) const {
    std::set<int> seen{item};
    if (!picture_) {
        return seen;
    }
    std::vector<std::vector<int>> next(picture_->visible.items.size());
    for (const VisibleEdge& e : picture_->visible.edges) {
        if (e.from >= 0 && e.to >= 0) {
            next[static_cast<size_t>(upstream ? e.to : e.from)].push_back(upstream ? e.from : e.to);
        }
    }
    std::deque<int> todo{item};
    while (!todo.empty()) {
        const int at = todo.front();
        todo.pop_front();
        for (const int n : next[static_cast<size_t>(at)]) {
            if (seen.insert(n).second) {
                todo.push_back(n);
            }
        }
    }
    return seen;
}

void GraphDiagram::selectUpstream() {
    markReach(true);
}

void GraphDiagram::selectDownstream() {
    markReach(false);
}

void GraphDiagram::markReach(bool upstream) {
    if (selectedItem_ < 0) {
        return;
    }
    marked_ = reach(selectedItem_, upstream);
    markedEdges_.clear();
    for (const int i : marked_) {
        for (const int e : picture_->itemEdges[static_cast<size_t>(i)]) {
            markedEdges_.insert(e);
        }
    }
    status_->setText(counted(static_cast<qsizetype>(marked_.size()), tr("item"), tr("items")) +
                     (upstream ? tr(" upstream of the selection, itself included")
                               : tr(" downstream of the selection, itself included")));
    canvas_->update();
}

void GraphDiagram::itemActivated(int item) {
    if (!picture_ || item < 0) {
        return;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    if (v.isGroup) {
        setExpanded(v.id, true);
    }
}

void GraphDiagram::clusterActivated(int group) {
    if (group > 0) {
        setExpanded(group, false);
    }
}

void GraphDiagram::contextMenuAt(const QPoint& global, int item) {
    QMenu menu(this);
    if (item >= 0) {
        clickedItem(item);
        if (selectedNode_ >= 0) {
            Q_EMIT nodeSelected(selectedNode_);
        }
        const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
        if (v.isGroup) {
            menu.addAction(tr("Expand"), this, [this, item] { itemActivated(item); });
        }
        menu.addAction(tr("Select upstream"), this, [this] { selectUpstream(); });
        menu.addAction(tr("Select downstream"), this, [this] { selectDownstream(); });
        menu.addSeparator();
    }
    menu.addAction(tr("Expand all"), this, [this] { expandAll(); });
    menu.addAction(tr("Collapse all"), this, [this] { collapseAll(); });
    menu.addAction(tr("Fit"), canvas_, [this] { canvas_->fit(); });
    menu.exec(global);
}

void GraphDiagram::updateInfo() {
    if (!hasGraph_) {
        info_->clear();
        return;
    }
    auto esc = [](const std::string& s) { return q(s).toHtmlEscaped(); };
    if (selectedNode_ >= 0) {
        const GraphNode& n = graph_.nodes[static_cast<size_t>(selectedNode_)];
        QStringList parts;
        parts << QStringLiteral("<b>%1</b>").arg(esc(n.kind));
        parts << tr("module <code>%1</code>").arg(n.module.empty() ? tr("(root)") : esc(n.module));
        QStringList ins, outs;
        const bool runShapes = showsRunShapes();
        auto port = [&](const GraphPort& p) -> QString {
            const auto shape = runShapes ? shapes_.find(p.name) : shapes_.end();
            return QStringLiteral("%%1: %2").arg(esc(p.name), esc(p.type)) +
                   (shape != shapes_.end() ? QStringLiteral(" ") + esc(shape->second) : QString());
        };
        for (const GraphPort& p : n.inputs) {
            ins << port(p);
        }
        for (const GraphPort& p : n.outputs) {
            outs << port(p);
        }
        if (!ins.isEmpty()) {
            parts << tr("in %1").arg(ins.join(QStringLiteral(", ")));
        }
        if (!outs.isEmpty()) {
            parts << tr("out %1").arg(outs.join(QStringLiteral(", ")));
        }
        if (!n.source.empty()) {
            parts << tr("source %1").arg(esc(n.source));
        }
        if (n.irLine > 0) {
            parts << tr("IR line %1").arg(n.irLine);
        }
        QString ms;
        const double t = picture_ && selectedItem_ >= 0 ? itemMs(selectedItem_, &ms) : 0;
        if (t > 0) {
            parts << ms;
        }
        QString text = parts.join(QStringLiteral(" · "));
        if (!n.schema.empty()) {
            text += QStringLiteral("<br><code>%1</code>").arg(esc(n.schema));
        }
        info_->setText(text);
        return;
    }
    if (selectedItem_ >= 0 && picture_) {
        const VisibleItem& v = picture_->visible.items[static_cast<size_t>(selectedItem_)];
        const GraphGroup& g = graph_.groups[static_cast<size_t>(v.id)];
        QString text = QStringLiteral("<b>%1</b> · %2 · ")
                           .arg(esc(g.module.empty() ? g.label : g.module), esc(g.type)) +
                       tr("double-click to expand");
        QString ms;
        if (itemMs(selectedItem_, &ms) > 0) {
            text += QStringLiteral(" · ") + ms;
        }
        info_->setText(text);
        return;
    }
    info_->setText(tr("Double-click a group to open it, an open group's title to close it. "
                      "Click a node for its details and its IR line."));
}

// ---------------------------------------------------------------------------------------------
// Times

bool GraphDiagram::showsRunShapes() const {
    return hasGraph_ && !shapes_.empty() && graph_.inlined && graph_.modulePath.empty() &&
           graph_.method == shapesMethod_;
}

QString GraphDiagram::edgeLabel(int layoutEdge) const {
    if (!picture_ || layoutEdge < 0 ||
        layoutEdge >= static_cast<int>(picture_->layout.edges.size())) {
        return {};
    }
    const DiagramEdge& edge = picture_->layout.edges[static_cast<size_t>(layoutEdge)];
    if (showsRunShapes()) {
        const auto it = shapes_.find(edge.value);
        if (it != shapes_.end()) {
            return q(it->second);
        }
    }
    return q(edge.type);
}

void GraphDiagram::setValueOverlay(const ValueOverlay& overlay) {
    overlay_ = overlay;
    setProfile(profile_);
}

void GraphDiagram::setProfile(const RunProfile& profile) {
    profile_ = profile;
    shapes_ = profile.valueShapes;
    shapesMethod_ = profile.shapesMethod;
    moduleMs_.clear();
    operatorMs_.clear();
    nodeValues_.clear();
    maxModuleMs_ = maxOperatorMs_ = 0;
    const bool overlay = (!overlay_.nodes.empty() || !overlay_.modules.empty()) && hasGraph_ &&
                         graph_.inlined && graph_.modulePath.empty() &&
                         graph_.method == overlay_.method.toStdString();
    if (overlay) {
        for (const auto& [path, value] : overlay_.modules) {
            moduleMs_[path] = value;
            if (!path.empty()) {
                maxModuleMs_ = std::max(maxModuleMs_, value);
            }
        }
        for (const auto& [node, value] : overlay_.nodes) {
            nodeValues_[node] = value;
            maxOperatorMs_ = std::max(maxOperatorMs_, value);
        }
        updateInfo();
        updateStatus();
        canvas_->update();
        return;
    }
    for (const ModuleTime& m : profile.modules) {
        moduleMs_[m.path] = m.totalMs;
        if (!m.path.empty()) {
            maxModuleMs_ = std::max(maxModuleMs_, m.totalMs);
        }
    }
    for (const OperatorTime& o : profile.operators) {
        if (o.calls > 0) {
            const double each = o.selfMs / static_cast<double>(o.calls);
            operatorMs_[o.name] = each;
            maxOperatorMs_ = std::max(maxOperatorMs_, each);
        }
    }
    updateInfo();
    updateStatus();
    canvas_->update();
}

double GraphDiagram::itemMs(int item, QString* what) const {
    if (!picture_ || moduleMs_.empty()) {
        return 0;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    if (v.isGroup) {
        const GraphGroup& g = graph_.groups[static_cast<size_t>(v.id)];
        if (g.kind != GraphGroup::Kind::Module) {
            return 0;
        }
        const auto it = moduleMs_.find(g.module);
        if (it == moduleMs_.end()) {
            return 0;
        }
        if (what) {
            *what = nodeValues_.empty() && overlay_.name.isEmpty()
                        ? tr("%1 ms in the profiled run").arg(it->second, 0, 'f', 3)
                        : tr("%1: %2 (largest in the module)").arg(overlay_.name).arg(it->second);
        }
        return it->second;
    }
    const GraphNode& n = graph_.nodes[static_cast<size_t>(v.id)];
    if (!nodeValues_.empty()) {
        const auto value = nodeValues_.find(n.id);
        if (value == nodeValues_.end()) {
            return 0;
        }
        if (what) {
            *what = tr("%1: %2").arg(overlay_.name).arg(value->second);
        }
        return value->second;
    }
    const auto it = operatorMs_.find(n.kind);
    if (it == operatorMs_.end()) {
        return 0;
    }
    if (what) {
        *what = tr("\u2248%1 ms (the average %2 call of the profiled run)")
                    .arg(it->second, 0, 'f', 3)
                    .arg(q(n.kind));
    }
    return it->second;
}

QColor GraphDiagram::heatColour(double fraction) const {
    fraction = std::clamp(fraction, 0.0, 1.0);
    // From pale yellow to deep orange-red.
    auto mix = [fraction](int cold, int hot) {
        return static_cast<int>(std::lround(cold + (hot - cold) * fraction));
    };
    return QColor(mix(255, 230), mix(243, 80), mix(196, 40));
}

// ---------------------------------------------------------------------------------------------
// Painting

void GraphDiagram::paint(QPainter& p, const LayoutRect& scene, double scale) const {
    if (!picture_) {
        return;
    }
    const DiagramPicture& pic = *picture_;
    const DiagramLayout& l = pic.layout;
    const QPalette& pal = palette();
    const bool dark = pal.color(QPalette::Base).lightness() < 128;
    const QColor text = pal.color(QPalette::Text);
    const QColor dim = dark ? QColor(160, 170, 185) : QColor(75, 85, 99);
    const QColor edgeColour = dark ? QColor(140, 150, 165) : QColor(107, 114, 128);
    const QColor highlight = pal.color(QPalette::Highlight);
    const QColor matchColour(245, 158, 11);
    const QColor nodeFill = dark ? QColor(38, 42, 50) : QColor(255, 255, 255);
    const QColor boxFill = dark ? QColor(40, 54, 78) : QColor(232, 238, 247);
    const QColor moduleFill = dark ? QColor(33, 38, 48) : QColor(243, 246, 251);
    const QColor blockFill = dark ? QColor(44, 40, 32) : QColor(251, 247, 238);
    const QColor frame = dark ? QColor(90, 105, 130) : QColor(154, 169, 194);
    const bool showText = scale >= kTextScale;
    const bool detail = scale >= kDetailScale;
    const bool heat = !moduleMs_.empty();
    const bool shapes = showsRunShapes();
    const QColor shapeColour = dark ? QColor(125, 211, 252) : QColor(3, 105, 161);

    QFont titleFont = font();
    titleFont.setPixelSize(static_cast<int>(diagram::kTitleFont));
    titleFont.setBold(true);
    QFont lineFont = font();
    lineFont.setPixelSize(static_cast<int>(diagram::kLineFont));
    QFont smallFont = lineFont;
    smallFont.setPixelSize(8);

    const std::vector<DiagramIndex::Entry> found = pic.index.query(scene);
    p.setRenderHint(QPainter::Antialiasing, detail);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    // Clusters (outer first), then edges, ports, items, stubs: the index sorts by kind.
    for (const auto& e : found) {
        if (e.kind != DiagramIndex::Cluster) {
            continue;
        }
        const DiagramCluster& c = l.clusters[static_cast<size_t>(e.index)];
        if (c.group == 0) {
            continue;
        }
        const GraphGroup& g = graph_.groups[static_cast<size_t>(c.group)];
        const bool block = g.kind == GraphGroup::Kind::Block;
        QColor fill = block ? blockFill : moduleFill;
        double ms = 0;
        if (heat && !block) {
            const auto it = moduleMs_.find(g.module);
            if (it != moduleMs_.end() && maxModuleMs_ > 0) {
                ms = it->second;
                fill = heatColour(ms / maxModuleMs_);
                fill.setAlpha(dark ? 70 : 90);
            }
        }
        QPen pen(frame, 1);
        if (block) {
            pen.setStyle(Qt::DashLine);
        }
        p.setPen(pen);
        p.setBrush(fill);
        p.drawRoundedRect(qrect(c.rect), 6, 6);
        if (showText) {
            p.setFont(lineFont);
            p.setPen(text);
            QString title =
                q(g.label) + (g.type.empty() ? QString() : QStringLiteral(" \u00B7 ") + q(g.type));
            if (ms > 0) {
                title += overlayName().isEmpty()
                             ? QStringLiteral(" \u00B7 %1 ms").arg(ms, 0, 'f', 2)
                             : QStringLiteral(" \u00B7 %1").arg(ms, 0, 'g', 3);
            }
            QFont f = titleFont;
            p.setFont(f);
            p.drawText(
                QRectF(c.rect.x + 8, c.rect.y + 3, c.rect.width - 16, diagram::kGroupTitle - 4),
                Qt::AlignLeft | Qt::AlignVCenter,
                p.fontMetrics().elidedText(title, Qt::ElideRight,
                                           static_cast<int>(c.rect.width - 16)));
        }
    }
    for (const auto& e : found) {
        if (e.kind != DiagramIndex::Edge) {
            continue;
        }
        const DiagramEdge& edge = l.edges[static_cast<size_t>(e.index)];
        if (edge.points.size() < 4) {
            continue;
        }
        const bool marked = markedEdges_.count(e.index) > 0;
        p.setPen(QPen(marked ? highlight : edgeColour, marked ? 2.0 : 1.0));
        p.setBrush(Qt::NoBrush);
        const LayoutPoint& a = edge.points.front();
        const LayoutPoint& b = edge.points.back();
        if (!detail) {
            p.drawLine(QPointF(a.x, a.y), QPointF(b.x, b.y));
            continue;
        }
        QPainterPath path(QPointF(a.x, a.y));
        for (size_t i = 1; i + 2 < edge.points.size(); i += 3) {
            path.cubicTo(QPointF(edge.points[i].x, edge.points[i].y),
                         QPointF(edge.points[i + 1].x, edge.points[i + 1].y),
                         QPointF(edge.points[i + 2].x, edge.points[i + 2].y));
        }
        p.drawPath(path);
        // The arrow head, along the last piece.
        const LayoutPoint& c = edge.points[edge.points.size() - 2];
        double dx = b.x - c.x, dy = b.y - c.y;
        const double len = std::hypot(dx, dy);
        if (len > 0.01) {
            dx /= len;
            dy /= len;
            const QPointF tip(b.x, b.y);
            const QPointF left(b.x - 7 * dx + 3.5 * dy, b.y - 7 * dy - 3.5 * dx);
            const QPointF right(b.x - 7 * dx - 3.5 * dy, b.y - 7 * dy + 3.5 * dx);
            p.setBrush(marked ? highlight : edgeColour);
            p.setPen(Qt::NoPen);
            p.drawPolygon(QPolygonF{tip, left, right});
        }
        if (showText && scale >= 0.8 && !edge.type.empty()) {
            // The value's type (or the shape that flowed) beside the middle of the edge.
            const size_t mid = (edge.points.size() / 2) / 3 * 3;
            const LayoutPoint& m = edge.points[std::min(mid, edge.points.size() - 1)];
            p.setFont(smallFont);
            p.setPen(marked ? highlight : shapes ? shapeColour : dim);
            p.drawText(QPointF(m.x + 4, m.y + 3),
                       p.fontMetrics().elidedText(edgeLabel(e.index), Qt::ElideRight, 140));
        }
    }
    if (detail) {
        p.setPen(Qt::NoPen);
        p.setBrush(edgeColour);
        for (const auto& e : found) {
            if (e.kind == DiagramIndex::Port) {
                const LayoutRect& r = l.ports[static_cast<size_t>(e.index)].rect;
                p.drawEllipse(QPointF(r.x + r.width / 2, r.y + r.height / 2), 3, 3);
            }
        }
    }
    for (const auto& e : found) {
        if (e.kind != DiagramIndex::Item) {
            continue;
        }
        const size_t i = static_cast<size_t>(e.index);
        const VisibleItem& v = pic.visible.items[i];
        const LayoutRect& r = l.items[i];
        QColor fill = v.isGroup ? boxFill : nodeFill;
        double ms = 0;
        QString msText;
        if (heat) {
            ms = itemMs(e.index, nullptr);
            const double max = v.isGroup ? maxModuleMs_ : maxOperatorMs_;
            if (ms > 0 && max > 0) {
                fill = heatColour(ms / max);
                if (dark) {
                    fill = fill.darker(170);
                }
            }
        }
        const bool selected = static_cast<int>(i) == selectedItem_;
        const bool marked = marked_.count(e.index) > 0;
        const bool neighbour = neighbours_.count(e.index) > 0;
        const bool match = isMatchItem(e.index);
        QPen pen(v.isGroup ? (dark ? QColor(110, 140, 200) : QColor(91, 123, 178)) : frame,
                 v.isGroup ? 2 : 1);
        if (match) {
            pen = QPen(matchColour, 2.5);
        }
        if (neighbour) {
            pen = QPen(highlight.lighter(130), 2);
        }
        if (marked || selected) {
            pen = QPen(highlight, 3);
        }
        p.setPen(detail ? pen : Qt::NoPen);
        p.setBrush(detail ? fill : (marked || match ? pen.color() : pen.color()));
        if (detail) {
            p.drawRoundedRect(qrect(r), 4, 4);
        } else {
            p.drawRect(qrect(r));
        }
        if (!showText) {
            continue;
        }
        const ItemText& t = l.texts[i];
        const double textWidth = r.width - 2 * diagram::kPadding + 4;
        double y = r.y + diagram::kPadding - 3;
        double titleWidth = textWidth;
        if (heat && ms > 0) { // the time (or value), right-aligned on the title's line
            p.setFont(smallFont);
            const QString label = overlayName().isEmpty()
                                      ? QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 1 ? 3 : 2)
                                      : QString::number(ms, 'g', 3);
            p.setPen(dark ? QColor(255, 220, 190) : QColor(17, 24, 39));
            p.drawText(QRectF(r.x + diagram::kPadding, y, textWidth, diagram::kTitleHeight),
                       Qt::AlignRight | Qt::AlignVCenter, label);
            titleWidth = std::max(20.0, textWidth - p.fontMetrics().horizontalAdvance(label) - 6);
        }
        p.setPen(heat && ms > 0 && !dark ? QColor(17, 24, 39) : text);
        p.setFont(titleFont);
        p.drawText(
            QRectF(r.x + diagram::kPadding, y, titleWidth, diagram::kTitleHeight),
            Qt::AlignLeft | Qt::AlignVCenter,
            p.fontMetrics().elidedText(q(t.title), Qt::ElideRight, static_cast<int>(titleWidth)));
        y += diagram::kTitleHeight;
        p.setFont(lineFont);
        p.setPen(heat && ms > 0 && !dark ? QColor(55, 65, 81) : dim);
        for (const std::string& line : t.lines) {
            p.drawText(
                QRectF(r.x + diagram::kPadding, y, textWidth, diagram::kLineHeight),
                Qt::AlignLeft | Qt::AlignVCenter,
                p.fontMetrics().elidedText(q(line), Qt::ElideRight, static_cast<int>(textWidth)));
            y += diagram::kLineHeight;
        }
    }
    p.setFont(titleFont);
    for (const auto& e : found) {
        if (e.kind != DiagramIndex::Input && e.kind != DiagramIndex::Output) {
            continue;
        }
        const LayoutRect& r =
            e.kind == DiagramIndex::Input ? l.inputs[static_cast<size_t>(e.index)] : l.output;
        if (r.width <= 0) {
            continue;
        }
        p.setPen(QPen(frame, 1));
        p.setBrush(dark ? QColor(55, 60, 68) : QColor(238, 238, 238));
        p.drawRoundedRect(qrect(r), r.height / 2, r.height / 2);
        if (showText) {
            p.setPen(text);
            const QString name = e.kind == DiagramIndex::Input
                                     ? q(graph_.inputs[static_cast<size_t>(e.index)].name)
                                     : tr("output");
            p.drawText(qrect(r), Qt::AlignCenter, name);
        }
    }
    if (showText) {
        p.setFont(smallFont);
        p.setPen(dark ? QColor(251, 191, 36) : QColor(180, 83, 9));
        for (const auto& e : found) {
            if (e.kind == DiagramIndex::Stub) {
                const DiagramStub& s = l.stubs[static_cast<size_t>(e.index)];
                p.drawText(QPointF(s.at.x, s.at.y), q(s.text));
            }
        }
    }
}

bool GraphDiagram::exportSvg(const QString& path, QString* error) const {
    if (!picture_) {
        if (error) {
            *error = tr("There is no diagram to export yet.");
        }
        return false;
    }
    QSaveFile file(path);
    const std::string svg = toSvg(graph_, picture_->visible, picture_->layout);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(svg.data(), static_cast<qint64>(svg.size())) !=
            static_cast<qint64>(svg.size()) ||
        !file.commit()) {
        if (error) {
            *error =
                tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        }
        return false;
    }
    return true;
}

QStringList GraphDiagram::exportPng(const QString& path, QString* error, int maxSide) const {
    QStringList written;
    if (!picture_) {
        if (error) {
            *error = tr("There is no diagram to export yet.");
        }
        return written;
    }
    const double width = picture_->layout.width, height = picture_->layout.height;
    const int w = std::max(1, static_cast<int>(std::ceil(width)));
    const int h = std::max(1, static_cast<int>(std::ceil(height)));
    const int columns = (w + maxSide - 1) / maxSide;
    const int rows = (h + maxSide - 1) / maxSide;
    const QFileInfo info(path);
    const QString stem = info.path() + QLatin1Char('/') + info.completeBaseName();
    for (int row = 0; row < rows; ++row) {
        for (int col = 0; col < columns; ++col) {
            const int x = col * maxSide, y = row * maxSide;
            const int tw = std::min(maxSide, w - x), th = std::min(maxSide, h - y);
            QImage image(tw, th, QImage::Format_ARGB32_Premultiplied);
            if (image.isNull()) {
                if (error) {
                    *error = tr("Not enough memory for a %1 x %2 image.").arg(tw).arg(th);
                }
                return {};
            }
            image.fill(palette().color(QPalette::Base));
            QPainter painter(&image);
            painter.translate(-x, -y);
            paint(painter, {double(x), double(y), double(tw), double(th)}, 1.0);
            painter.end();
            const QString file =
                rows * columns == 1
                    ? path
                    : QStringLiteral("%1-r%2-c%3.png").arg(stem).arg(row + 1).arg(col + 1);
            if (!image.save(file, "PNG")) {
                if (error) {
                    *error = tr("Cannot write %1.").arg(QDir::toNativeSeparators(file));
                }
                return {};
            }
            written << file;
        }
    }
    return written;
}

// ---------------------------------------------------------------------------------------------
// The canvas

DiagramCanvas::DiagramCanvas(GraphDiagram* diagram)
    : QWidget(diagram)
    , diagram_(diagram) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
    setAutoFillBackground(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QPointF DiagramCanvas::toScene(const QPointF& p) const {
    return origin_ + p / scale_;
}
QPointF DiagramCanvas::toView(const QPointF& p) const {
    return (p - origin_) * scale_;
}

LayoutRect DiagramCanvas::visibleScene() const {
    return {origin_.x(), origin_.y(), width() / scale_, height() / scale_};
}

void DiagramCanvas::setScale(double scale, const QPointF& anchor) {
    scale = std::clamp(scale, 0.01, 4.0);
    const QPointF sceneAnchor = toScene(anchor);
    scale_ = scale;
    origin_ = sceneAnchor - anchor / scale_;
    update();
}

void DiagramCanvas::fit() {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic || pic->layout.width <= 0 || width() <= 0) {
        return;
    }
    const double sx = width() / pic->layout.width, sy = height() / pic->layout.height;
    // Fit, but never so small that nothing can be read when the graph is tall: then the top.
    scale_ = std::clamp(std::min(sx, sy), 0.01, 1.0);
    if (std::min(sx, sy) < 0.25) {
        scale_ = std::clamp(sx, 0.25, 1.0);
        origin_ = {pic->layout.width / 2 - width() / scale_ / 2, 0};
    } else {
        origin_ = {pic->layout.width / 2 - width() / scale_ / 2,
                   pic->layout.height / 2 - height() / scale_ / 2};
    }
    update();
}

void DiagramCanvas::centreOn(const LayoutRect& r) {
    if (scale_ < kTextScale) {
        scale_ = 0.8;
    }
    origin_ =
        QPointF(r.x + r.width / 2, r.y + r.height / 2) - QPointF(width(), height()) / scale_ / 2;
    update();
}

void DiagramCanvas::panBy(double dx, double dy) {
    origin_ += QPointF(dx, dy) / scale_;
    update();
}

void DiagramCanvas::pictureChanged() {
    minimap_ = QImage();
    update();
}

int DiagramCanvas::itemAt(const QPointF& view) const {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic) {
        return -1;
    }
    const QPointF s = toScene(view);
    const LayoutPoint p{s.x(), s.y()};
    for (const auto& e : pic->index.query({p.x, p.y, 0, 0})) {
        if (e.kind == DiagramIndex::Item &&
            pic->layout.items[static_cast<size_t>(e.index)].contains(p)) {
            return e.index;
        }
    }
    return -1;
}

int DiagramCanvas::clusterAt(const QPointF& view) const {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic) {
        return -1;
    }
    const QPointF s = toScene(view);
    const LayoutPoint p{s.x(), s.y()};
    int found = -1;
    for (const DiagramCluster& c : pic->layout.clusters) { // outer first: the last is innermost
        if (c.group > 0 && c.rect.contains(p)) {
            found = c.group;
        }
    }
    return found;
}

QRectF DiagramCanvas::minimapRect() const {
    const DiagramPicture* pic = diagram_->picture();
    if (!pic || pic->layout.width <= 0) {
        return {};
    }
    const double side = std::min(180.0, std::min(width(), height()) / 3.0);
    const double s = side / std::max(pic->layout.width, pic->layout.height);
    const double w = std::max(24.0, pic->layout.width * s),
                 h = std::max(24.0, pic->layout.height * s);
    return {width() - w - 8, height() - h - 8, w, h};
}

void DiagramCanvas::renderMinimap() {
    const DiagramPicture* pic = diagram_->picture();
    const QRectF r = minimapRect();
    if (!pic || r.isEmpty()) {
        return;
    }
    minimap_ = QImage(r.size().toSize() * devicePixelRatioF(), QImage::Format_ARGB32_Premultiplied);
    minimap_.setDevicePixelRatio(devicePixelRatioF());
    minimap_.fill(Qt::transparent);
    QPainter p(&minimap_);
    const double s = r.width() / pic->layout.width;
    p.scale(s, r.height() / pic->layout.height);
    const QColor mark = palette().color(QPalette::Text);
    p.setPen(Qt::NoPen);
    for (const DiagramCluster& c : pic->layout.clusters) {
        if (c.group > 0) {
            QColor fill = palette().color(QPalette::Highlight);
            fill.setAlpha(40);
            p.setBrush(fill);
            p.drawRect(qrect(c.rect));
        }
    }
    QColor item = mark;
    item.setAlpha(150);
    p.setBrush(item);
    for (const LayoutRect& rect : pic->layout.items) {
        p.drawRect(qrect(rect));
    }
}

void DiagramCanvas::paintMinimap(QPainter& p) {
    const DiagramPicture* pic = diagram_->picture();
    const QRectF r = minimapRect();
    if (!pic || r.isEmpty()) {
        return;
    }
    const LayoutRect v = visibleScene();
    if (v.x <= 0 && v.y <= 0 && v.x + v.width >= pic->layout.width &&
        v.y + v.height >= pic->layout.height) {
        return; // everything is in view: no minimap needed
    }
    if (minimap_.isNull() || minimap_.size() != (r.size().toSize() * devicePixelRatioF())) {
        renderMinimap();
    }
    QColor back = palette().color(QPalette::Window);
    back.setAlpha(225);
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.setBrush(back);
    p.drawRect(r);
    p.drawImage(r.topLeft(), minimap_);
    const double sx = r.width() / pic->layout.width, sy = r.height() / pic->layout.height;
    const QRectF view = QRectF(r.x() + v.x * sx, r.y() + v.y * sy, v.width * sx, v.height * sy)
                            .intersected(r.adjusted(-1, -1, 1, 1));
    p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(view);
}

void DiagramCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const DiagramPicture* pic = diagram_->picture();
    if (!pic) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter,
                   diagram_->hasGraph() ? tr("Laying out the diagram\u2026")
                                        : diagram_->statusText());
        return;
    }
    p.save();
    p.scale(scale_, scale_);
    p.translate(-origin_);
    diagram_->paint(p, visibleScene(), scale_);
    p.restore();
    if (diagram_->layoutPending()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, 6, -8, -6), Qt::AlignTop | Qt::AlignRight,
                   tr("Laying out\u2026"));
    }
    if (diagram_->hasProfile()) { // the legend
        const QRectF legend(8, 8, 170, 34);
        QColor back = palette().color(QPalette::Window);
        back.setAlpha(230);
        p.setPen(QPen(palette().color(QPalette::Mid), 1));
        p.setBrush(back);
        p.drawRect(legend);
        QLinearGradient gradient(legend.left() + 8, 0, legend.right() - 8, 0);
        gradient.setColorAt(0, diagram_->heatColour(0));
        gradient.setColorAt(1, diagram_->heatColour(1));
        p.setBrush(gradient);
        p.setPen(Qt::NoPen);
        p.drawRect(QRectF(legend.left() + 8, legend.top() + 6, legend.width() - 16, 8));
        QFont f = font();
        f.setPixelSize(9);
        p.setFont(f);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(legend.left() + 8, legend.top() + 15, legend.width() - 16, 16),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   diagram_->overlayName().isEmpty()
                       ? tr("time of the profiled run: 0 \u2192 most")
                       : tr("%1: 0 \u2192 most").arg(diagram_->overlayName()));
    }
    paintMinimap(p);
}

void DiagramCanvas::wheelEvent(QWheelEvent* event) {
    const QPoint delta = event->angleDelta();
    if (event->modifiers() & Qt::ControlModifier) {
        setScale(scale_ * std::pow(1.0015, delta.y()), event->position());
    } else if (event->modifiers() & Qt::ShiftModifier) {
        panBy(-delta.y(), 0);
    } else {
        panBy(-delta.x(), -delta.y());
    }
    event->accept();
}

void DiagramCanvas::mousePressEvent(QMouseEvent* event) {
    setFocus();
    if (event->button() != Qt::LeftButton) {
        return;
    }
    if (minimapRect().contains(event->position()) && diagram_->picture()) {
        minimapDrag_ = true;
        mouseMoveEvent(event);
        return;
    }
    pressAt_ = event->position().toPoint();
    pressOrigin_ = origin_;
    dragging_ = false;
}

void DiagramCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton)) {
        return;
    }
    if (minimapDrag_) {
        const DiagramPicture* pic = diagram_->picture();
        const QRectF r = minimapRect();
        if (!pic || r.isEmpty()) { // the picture went (another graph) while dragging
            minimapDrag_ = false;
            return;
        }
        const double sx = pic->layout.width / r.width(), sy = pic->layout.height / r.height();
        const QPointF at = (event->position() - r.topLeft());
        origin_ = QPointF(at.x() * sx, at.y() * sy) - QPointF(width(), height()) / scale_ / 2;
        update();
        return;
    }
    const QPoint moved = event->position().toPoint() - pressAt_;
    if (!dragging_ && moved.manhattanLength() < QApplication::startDragDistance()) {
        return;
    }
    dragging_ = true;
    setCursor(Qt::ClosedHandCursor);
    origin_ = pressOrigin_ - QPointF(moved) / scale_;
    update();
}

void DiagramCanvas::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        return;
    }
    unsetCursor();
    if (minimapDrag_) {
        minimapDrag_ = false;
        return;
    }
    if (!dragging_) {
        const int item = itemAt(event->position());
        diagram_->clickedItem(item);
        Q_EMIT diagram_->nodeSelected(diagram_->selectedNode());
    }
    dragging_ = false;
}

void DiagramCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
    const int item = itemAt(event->position());
    if (item >= 0) {
        diagram_->itemActivated(item);
        return;
    }
    diagram_->clusterActivated(clusterAt(event->position()));
}

void DiagramCanvas::keyPressEvent(QKeyEvent* event) {
    const double step = 60;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        setScale(scale_ * 1.25, QPointF(width(), height()) / 2);
        break;
    case Qt::Key_Minus:
        setScale(scale_ / 1.25, QPointF(width(), height()) / 2);
        break;
    case Qt::Key_0:
    case Qt::Key_F:
        fit();
        break;
    case Qt::Key_Left:
        panBy(-step, 0);
        break;
    case Qt::Key_Right:
        panBy(step, 0);
        break;
    case Qt::Key_Up:
        panBy(0, -step);
        break;
    case Qt::Key_Down:
        panBy(0, step);
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        diagram_->itemActivated(diagram_->selectedItem_);
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

void DiagramCanvas::contextMenuEvent(QContextMenuEvent* event) {
    diagram_->contextMenuAt(event->globalPos(), itemAt(event->pos()));
}

void DiagramCanvas::resizeEvent(QResizeEvent*) {
    minimap_ = QImage();
}

void DiagramCanvas::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        minimap_ = QImage(); // drawn in the old theme's colours
    }
    QWidget::changeEvent(event);
}

} // namespace scriptscope
