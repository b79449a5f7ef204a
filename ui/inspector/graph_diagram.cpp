// The diagram widget: its graph and state, what is open, the layout jobs, the status and info
// lines.
#include "graph_diagram.h"
#include "diagram_support.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QThreadPool>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cerrno>
#include <sys/resource.h>
#include <unistd.h>

namespace scriptscope {

using namespace diagram_ui;

namespace {

const GraphModel kNoGraph;
constexpr int kLayoutNice = 10; // nice value of the layout thread and its Graphviz process

// Layout is background work: its thread, and the Graphviz process it forks (which inherits the
// thread's nice value), yield to the GUI thread. (Not the threads that free what a picture
// replaces: one preempted while it holds the allocator's lock would hold up the GUI thread.)
void runInBackground() {
    const auto self = static_cast<id_t>(::gettid());
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, self);
    if (errno == 0 && nice < kLayoutNice) {
        ::setpriority(PRIO_PROCESS, self, kLayoutNice);
    }
}

// Drops a reference in a thread: when it is the last one, a big graph, picture or layout cache
// (56,000 nodes: tens of ms, the cache's 11,000 scenes about 100 ms) is freed there, not on the
// GUI thread.
template <typename T>
void releaseInThread(std::shared_ptr<T> last) {
    if (last) {
        QThreadPool::globalInstance()->start([last = std::move(last)]() mutable { last.reset(); });
    }
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The diagram

GraphDiagram::GraphDiagram(QWidget* parent)
    : QWidget(parent)
    , cache_(std::make_shared<LayoutCache>())
    , cancel_(std::make_shared<std::atomic<bool>>(false)) {
    graph_ = &kNoGraph;
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
    // Ctrl+F anywhere in the diagram goes to its search box (the text beside it has its own).
    auto* find = new QAction(this);
    find->setShortcut(QKeySequence::Find);
    find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(find, &QAction::triggered, this, [this] { focusSearch(); });
    addAction(find);
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

void GraphDiagram::focusSearch(const QString& typed) {
    search_->setFocus(Qt::ShortcutFocusReason);
    if (typed.isEmpty()) {
        search_->selectAll();
    } else {
        search_->insert(typed); // a letter typed over the picture starts the search with it
    }
}

void GraphDiagram::setGraph(const GraphModel& graph) {
    setGraph(std::make_shared<const GraphModel>(graph));
}

void GraphDiagram::setGraph(std::shared_ptr<const GraphModel> graph) {
    if (!graph) {
        showMessage(tr("No graph"));
        return;
    }
    releaseInThread(std::move(shared_));
    shared_ = std::move(graph);
    graph_ = shared_.get();
    hasGraph_ = true;
    expanded_.clear();
    // A root that holds just one group (a wrapper module) opens it, and so on down.
    for (int open = 0;;) {
        std::vector<int> children;
        bool nodes = false;
        for (const GraphGroup& g : graph_->groups) {
            if (g.parent == open) {
                children.push_back(g.id);
            }
        }
        for (const GraphNode& n : graph_->nodes) {
            nodes = nodes || n.group == open;
        }
        if (children.size() != 1 || nodes) {
            break;
        }
        open = children.front();
        expanded_.insert(open);
    }
    releaseInThread(std::move(cache_));
    cache_ = std::make_shared<LayoutCache>();
    releaseInThread(std::move(picture_));
    selectedNode_ = selectedItem_ = -1;
    markAround(-1);
    notes_.clear();
    blockNotes_.clear();
    blocksNotTaken_.clear();
    fitAfterLayout_ = true;
    centreNodeAfterLayout_ = -1;
    compare_ = Comparison{};
    showComparedAfterLayout_ = false;
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
    releaseInThread(std::move(shared_));
    graph_ = &kNoGraph;
    releaseInThread(std::move(picture_));
    expanded_.clear();
    compare_ = Comparison{};
    showComparedAfterLayout_ = false;
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
    if (!hasGraph_ || group <= 0 || group >= static_cast<int>(graph_->groups.size())) {
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
    for (const GraphGroup& g : graph_->groups) {
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
    if (!hasGraph_ || node < 0 || node >= static_cast<int>(graph_->nodes.size())) {
        return;
    }
    bool changed = false;
    for (int g = graph_->nodes[static_cast<size_t>(node)].group; g > 0;
         g = graph_->groups[static_cast<size_t>(g)].parent) {
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
        runInBackground();
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
        picture->detail.build(*graph, picture->visible, picture->layout);
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
        releaseInThread(std::move(picture_));
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
        if (showComparedAfterLayout_) {
            showComparedAfterLayout_ = false;
            showCompared();
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
// Menu and info

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
        addCompareActions(menu, v.isGroup ? v.id : graph_->nodes[static_cast<size_t>(v.id)].group);
        menu.addAction(tr("Select upstream"), this, [this] { selectUpstream(); });
        menu.addAction(tr("Select downstream"), this, [this] { selectDownstream(); });
        menu.addSeparator();
    }
    if (compare_.a >= 0) {
        menu.addAction(tr("Stop comparing"), this, [this] { stopComparing(); });
    }
    menu.addAction(tr("Expand all"), this, [this] { expandAll(); });
    menu.addAction(tr("Collapse all"), this, [this] { collapseAll(); });
    menu.addAction(tr("Fit"), canvas_, [this] { canvas_->fit(); });
    menu.exec(global);
}

// For a group marked identical to others (or one inside such a group): compare it with them.
void GraphDiagram::addCompareActions(QMenu& menu, int group) {
    for (int at = group; at > 0; at = graph_->groups[static_cast<size_t>(at)].parent) {
        const std::vector<int> same = identicalGroups(at);
        if (same.empty()) {
            continue;
        }
        const GraphGroup& g = graph_->groups[static_cast<size_t>(at)];
        QMenu* with = menu.addMenu(tr("Compare %1 with").arg(groupName(g)));
        for (const int other : same) {
            const GraphGroup& o = graph_->groups[static_cast<size_t>(other)];
            with->addAction(groupName(o), this, [this, at, other] { compareGroups(at, other); });
        }
        return;
    }
}

void GraphDiagram::updateInfo() {
    if (!hasGraph_) {
        info_->clear();
        return;
    }
    auto esc = [](const std::string& s) { return q(s).toHtmlEscaped(); };
    const QString comparison = comparisonText();
    if (selectedNode_ >= 0) {
        const GraphNode& n = graph_->nodes[static_cast<size_t>(selectedNode_)];
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
        if (!comparison.isEmpty()) {
            text += QStringLiteral("<br>") + comparison;
        }
        info_->setText(text);
        return;
    }
    if (selectedItem_ >= 0 && picture_) {
        const VisibleItem& v = picture_->visible.items[static_cast<size_t>(selectedItem_)];
        const GraphGroup& g = graph_->groups[static_cast<size_t>(v.id)];
        QString text =
            g.kind == GraphGroup::Kind::Function
                ? tr("<b>%1</b> of %2, called in %3 · ")
                      .arg(esc(g.label), esc(g.type),
                           g.module.empty() ? tr("the root")
                                            : QStringLiteral("<code>%1</code>").arg(esc(g.module)))
                : QStringLiteral("<b>%1</b> · %2 · ")
                      .arg(groupName(g).toHtmlEscaped(), esc(g.type));
        text += tr("double-click to expand");
        QString ms;
        if (itemMs(selectedItem_, &ms) > 0) {
            text += QStringLiteral(" · ") + ms;
        }
        info_->setText(text);
        return;
    }
    info_->setText(!comparison.isEmpty()
                       ? comparison
                       : tr("Double-click a group to open it, an open group's title to close it. "
                            "Click a node for its details and its IR line."));
}

} // namespace scriptscope
