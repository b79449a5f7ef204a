#include "model_workspace.h"

#include "item_rows.h"

#include "archive_view.h"
#include "capability.h"
#include "code_view.h"
#include "details_view.h"
#include "error_banner.h"
#include "graph_diagram.h"
#include "memory_view.h"
#include "module_tree_model.h"
#include "worker_client.h"

#include <file_formats.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTextBlock>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <string>
#include <utility>

namespace scriptscope {
using inspector::flatTable;
using inspector::q;
using inspector::readOnlyRow;

ModelWorkspace::ModelWorkspace(WorkerClient* worker, QWidget* parent)
    : QStackedWidget(parent)
    , worker_(worker) {
    // Start page: shown until a model is open.
    auto* start = new QWidget(this);
    auto* startLayout = new QVBoxLayout(start);
    auto* title = new QLabel(start);
    title->setObjectName(QStringLiteral("startTitle"));
    // What can be opened: the formats' own list, one a line, again when the worker names the
    // formats its format libraries add.
    const auto listFormats = [title]() {
        QStringList formats;
        for (const FileFormatPatterns& format : modelFileFormats()) {
            formats << QString::fromStdString(describe(format)).toHtmlEscaped();
        }
        title->setText(
            tr("<h2>ScriptScope</h2><p>Open an exported PyTorch model to see its modules, code "
               "and graphs,<br>run it and find where its numbers go wrong:</p><p>%1</p>")
                .arg(formats.join(QStringLiteral("<br>"))));
    };
    listFormats();
    connect(worker_, &WorkerClient::formatsKnown, title, listFormats);
    auto* open = new QPushButton(tr("Open…"), start);
    startRecent_ = new QListWidget(start);
    startLayout->addStretch();
    startLayout->addWidget(title, 0, Qt::AlignHCenter);
    startLayout->addWidget(open, 0, Qt::AlignHCenter);
    startLayout->addWidget(new QLabel(tr("Recent files"), start), 0, Qt::AlignHCenter);
    startLayout->addWidget(startRecent_, 0, Qt::AlignHCenter);
    startLayout->addStretch();
    connect(open, &QPushButton::clicked, this, [this]() { Q_EMIT openRequested(QString()); });
    connect(startRecent_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        Q_EMIT openRequested(item->data(Qt::UserRole).toString());
    });

    // Inspector page.
    auto* inspector = new QWidget(this);
    auto* inspectorLayout = new QVBoxLayout(inspector);
    inspectorLayout->setContentsMargins(0, 0, 0, 0);
    auto* bannerBox = new QWidget(inspector);
    auto* bannerLayout = new QHBoxLayout(bannerBox);
    banner_ = new QLabel(bannerBox);
    banner_->setObjectName(QStringLiteral("errorBanner"));
    banner_->setWordWrap(true);
    banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bannerAction_ = new QPushButton(tr("Load operator library…"), bannerBox);
    bannerAction_->setObjectName(QStringLiteral("bannerAction"));
    bannerAction_->hide();
    bannerPreview_ = new QPushButton(tr("Preview without running"), bannerBox);
    bannerPreview_->setToolTip(tr("Read what the archive holds without loading or running it"));
    bannerPreview_->hide();
    connect(bannerPreview_, &QPushButton::clicked, this, &ModelWorkspace::previewRequested);
    auto* bannerClose = new QPushButton(tr("Dismiss"), bannerBox);
    bannerLayout->addWidget(banner_, 1);
    bannerLayout->addWidget(bannerAction_);
    bannerLayout->addWidget(bannerPreview_);
    bannerLayout->addWidget(bannerClose);
    paintAsErrorBanner(bannerBox, banner_);
    bannerBox->hide();
    connect(bannerClose, &QPushButton::clicked, this, [this]() { clearError(); });
    connect(bannerAction_, &QPushButton::clicked, this,
            [this]() { Q_EMIT libraryRequested(suggestedLibrary_); });

    auto* splitter = new QSplitter(Qt::Horizontal, inspector);
    splitter_ = splitter;
    splitter->setObjectName(QStringLiteral("inspectorSplitter"));
    auto* left = new QWidget(splitter);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(4, 4, 0, 4);
    filter_ = new QLineEdit(left);
    filter_->setObjectName(QStringLiteral("moduleFilter"));
    filter_->setPlaceholderText(tr("Filter modules by name, path (features.0) or type"));
    filter_->setClearButtonEnabled(true);
    tree_ = new QTreeView(left);
    tree_->setObjectName(QStringLiteral("moduleTree"));
    treeModel_ = new ModuleTreeModel(this);
    treeProxy_ = new ModuleFilterModel(this);
    treeProxy_->setSourceModel(treeModel_);
    tree_->setModel(treeProxy_);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->header()->setSectionResizeMode(ModuleTreeModel::NameColumn,
                                          QHeaderView::ResizeToContents);
    tree_->header()->setSectionResizeMode(ModuleTreeModel::TypeColumn, QHeaderView::Stretch);
    tree_->header()->setSectionResizeMode(ModuleTreeModel::ParametersColumn,
                                          QHeaderView::ResizeToContents);
    tree_->header()->setSectionResizeMode(ModuleTreeModel::BytesColumn,
                                          QHeaderView::ResizeToContents);
    tree_->header()->setSectionResizeMode(ModuleTreeModel::TimeColumn,
                                          QHeaderView::ResizeToContents);
    tree_->setItemDelegateForColumn(ModuleTreeModel::TimeColumn, new ShareBarDelegate(tree_));
    tree_->header()->setStretchLastSection(false);
    leftLayout->addWidget(filter_);
    leftLayout->addWidget(tree_);
    connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
        treeProxy_->setFilterText(text);
        tree_->expandAll();
    });
    connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this]() { showSelection(); });

    tabs_ = new QTabWidget(splitter);
    tabs_->setObjectName(QStringLiteral("inspectorTabs"));
    // Details
    details_ = new DetailsView(tabs_);
    tabs_->addTab(details_, tr("&Details"));
    connect(details_, &DetailsView::statisticsRequested, this, [this]() { requestStatistics(); });
    connect(details_, &DetailsView::statisticsShown, this, &ModelWorkspace::statisticsShown);
    // Code
    auto* codePage = new QWidget(tabs_);
    auto* codeLayout = new QVBoxLayout(codePage);
    codeMethod_ = new QComboBox(codePage);
    code_ = new CodeView(CodeHighlighter::Language::TorchScript, codePage);
    code_->setObjectName(QStringLiteral("code"));
    auto* codeBar = new QHBoxLayout;
    codeBar->addWidget(new QLabel(tr("Method:"), codePage));
    codeBar->addWidget(codeMethod_, 1);
    codeLayout->addLayout(codeBar);
    codeLayout->addWidget(code_);
    tabs_->addTab(codePage, tr("&Code"));
    connect(codeMethod_, &QComboBox::currentIndexChanged, this, [this]() { showCode(); });
    // Graph
    auto* graphPage = new QWidget(tabs_);
    auto* graphLayout = new QVBoxLayout(graphPage);
    graphMethod_ = new QComboBox(graphPage);
    graphMethod_->setObjectName(QStringLiteral("graphMethod"));
    inlined_ = new QCheckBox(tr("Inlined graph of forward (whole model)"), graphPage);
    inlined_->setObjectName(QStringLiteral("inlinedGraph"));
    graph_ = new CodeView(CodeHighlighter::Language::GraphIr, graphPage);
    graph_->setObjectName(QStringLiteral("graph"));
    auto* graphBar = new QHBoxLayout;
    graphBar->addWidget(new QLabel(tr("Method:"), graphPage));
    graphBar->addWidget(graphMethod_, 1);
    graphBar->addWidget(inlined_);
    auto* wrap = new QCheckBox(tr("&Wrap lines"), graphPage);
    wrap->setObjectName(QStringLiteral("graphWrap"));
    wrap->setToolTip(tr("Wrap long IR lines (their source comments) at the view's width"));
    graphBar->addWidget(wrap);
    connect(wrap, &QCheckBox::toggled, this, [this](bool on) {
        graph_->setLineWrap(on);
        QSettings().setValue(QStringLiteral("view/wrapGraph"), on);
    });
    wrap->setChecked(QSettings().value(QStringLiteral("view/wrapGraph"), false).toBool());
    graphLayout->addLayout(graphBar);
    // The IR text and, beside it, the same graph drawn; selecting in one shows the place in the
    // other.
    graphSplitter_ = new QSplitter(Qt::Horizontal, graphPage);
    graphSplitter_->setObjectName(QStringLiteral("graphSplitter"));
    graphSplitter_->addWidget(graph_);
    diagram_ = new GraphDiagram(graphSplitter_);
    diagram_->setObjectName(QStringLiteral("diagram"));
    graphSplitter_->addWidget(diagram_);
    graphSplitter_->setStretchFactor(0, 2);
    graphSplitter_->setStretchFactor(1, 3);
    graphSplitter_->setSizes({420, 580});
    graphLayout->addWidget(graphSplitter_, 1);
    tabs_->addTab(graphPage, tr("&Graph"));
    graphPage_ = graphPage;
    connect(tabs_, &QTabWidget::currentChanged, this, [this, graphPage](int) {
        if (tabs_->currentWidget() == graphPage) {
            showGraph();
        }
    });
    connect(diagram_, &GraphDiagram::nodeSelected, this,
            [this](int node) { showNodeInText(node); });
    connect(graph_->editor(), &QPlainTextEdit::cursorPositionChanged, this, [this] {
        if (!syncingText_) {
            selectNodeAtTextLine(graph_->editor()->textCursor().blockNumber() + 1);
        }
    });
    connect(graphMethod_, &QComboBox::currentIndexChanged, this, [this]() { showGraph(); });
    connect(inlined_, &QCheckBox::toggled, this, [this]() { showGraph(); });
    // Archive
    archive_ = new ArchiveView(code_->editor()->font(), tabs_);
    tabs_->addTab(archive_, tr("&Archive"));
    // Memory (after the others, whose places and shortcuts stay): a planned program's memory plan
    // (ExecuTorch's); hidden for models without one.
    memory_ = new MemoryView(tabs_);
    memory_->setObjectName(QStringLiteral("memoryView"));
    tabs_->addTab(memory_, tr("&Memory"));

    splitter->addWidget(left);
    splitter->addWidget(tabs_);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({540, 740});
    inspectorLayout->addWidget(bannerBox);
    inspectorLayout->addWidget(splitter, 1);

    addWidget(start);
    addWidget(inspector);

    connect(graph_, &CodeView::textLoaded, this, [this]() {
        if (const int line = std::exchange(pendingIrLine_, 0); line > 0) {
            showIrLine(line);
        }
    });
    connect(worker_, &WorkerClient::textReady, this, [this](quint64 id, const QString& text) {
        if (id == graphRequest_) {
            graphRequest_ = 0;
            inlinedGraph_ = text;
            if (inlined_->isChecked()) {
                graph_->setText(text);
            }
        }
    });
    connect(worker_, &WorkerClient::diagramReady, this,
            [this](quint64 id, std::shared_ptr<const GraphModel> graph) {
                if (id != diagramRequest_) {
                    return; // for a graph no longer shown
                }
                diagramRequest_ = 0;
                diagrams_[diagramKey_] = std::move(graph);
                showDiagramFor(diagramKey_);
            });
    connect(worker_, &WorkerClient::statisticsReady, this,
            [this](quint64 id, const std::vector<OutputValue>& values) {
                if (id == statisticsRequest_) {
                    details_->showStatistics(values);
                }
            });
    connect(worker_, &WorkerClient::failed, this, [this](quint64 id, const Error& error) {
        if (id != 0 && id == diagramRequest_) {
            diagramRequest_ = 0;
            diagram_->showMessage(tr("The diagram could not be built: %1")
                                      .arg(QString::fromStdString(error.message)));
            return;
        }
        if (id != 0 && (id == graphRequest_ || id == statisticsRequest_)) {
            if (id == graphRequest_) {
                graphRequest_ = 0; // asking again may work (the next worker loads the model first)
            }
            showError(error, QString::fromStdString(error.message), false);
        }
    });
}

ModelWorkspace::~ModelWorkspace() = default;

void ModelWorkspace::showModel(const ModelInfo& info, const QString& reselect, bool otherModel) {
    clearError();
    if (otherModel) {
        // Nothing of the previous model may show under this one: its filter, selection, details,
        // code, graph and the profile's times go.
        const QSignalBlocker blocker(filter_);
        filter_->clear();
        treeProxy_->setFilterText(QString());
    }
    model_ = info;
    inlinedGraph_.clear();
    pendingIrLine_ = 0;
    graphRequest_ = 0;
    diagrams_.clear(); // built from the previous load: a reload may have changed the graph
    if (otherModel) {
        profile_ = RunProfile{};
        flow_.clear();
        overlay_ = {};
        pendingNode_ = -1;
        diagram_->setValueOverlay(overlay_);
    }
    diagramRequest_ = 0;
    diagramKey_.clear();
    diagramShown_.clear();
    treeModel_->setModel(info);
    // The time column waits for a profiled run: before one it only took the Type column's room
    // (a narrow window, QT_SCALE_FACTOR=2, showed every type as ...).
    tree_->setColumnHidden(ModuleTreeModel::TimeColumn, profile_.modules.empty());
    tree_->expandToDepth(1);
    archive_->setProbe(info.probe);
    bool planned = false;
    for (const ModuleInfo& module : info.modules) {
        planned = planned || MemoryView::hasPlan(&module);
    }
    tabs_->setTabVisible(tabs_->indexOf(memory_), planned);
    // An inlined graph is TorchScript's; a model without one says why.
    inlined_->setChecked(inlined_->isChecked() && info.lacks(Capability::InlinedGraph).empty());
    offer(inlined_, info, Capability::InlinedGraph);
    setCurrentIndex(1);
    QModelIndex select = treeModel_->indexOfPath(reselect);
    if (!select.isValid()) {
        select = treeModel_->index(0, 0);
    }
    tree_->setCurrentIndex(treeProxy_->mapFromSource(select));
    tree_->scrollTo(tree_->currentIndex());
    // The model reset may leave the current index where it was without a signal: show the
    // selected module of this model in every view.
    showSelection();
}

void ModelWorkspace::showError(const Error& error, const QString& message, bool offerPreview) {
    banner_->setText(message);
    banner_->setToolTip(QString::fromStdString(error.details));
    suggestedLibrary_ = QString::fromStdString(error.library);
    bannerAction_->setText(suggestedLibrary_.isEmpty()
                               ? tr("Load operator library…")
                               : tr("Load %1").arg(QFileInfo(suggestedLibrary_).fileName()));
    bannerAction_->setToolTip(suggestedLibrary_);
    bannerAction_->setVisible(error.kind == ErrorKind::MissingOperator);
    bannerPreview_->setVisible(offerPreview);
    banner_->parentWidget()->show();
    setCurrentIndex(1);
    // Keyboard shortcuts (Ctrl+O) need a focused widget in this window: the start page's widget
    // that had it is hidden now.
    if (QWidget* focus = QApplication::focusWidget(); !focus || !focus->isVisible()) {
        tree_->setFocus(Qt::OtherFocusReason);
    }
    Q_EMIT errorShown(message);
}

void ModelWorkspace::clearError() {
    banner_->clear();
    banner_->parentWidget()->hide();
}

QString ModelWorkspace::errorText() const {
    return banner_->parentWidget()->isVisibleTo(this) ? banner_->text() : QString();
}

void ModelWorkspace::setRecentFiles(const QStringList& paths) {
    startRecent_->clear();
    for (const auto& path : paths) {
        auto* item = new QListWidgetItem(
            QFileInfo(path).fileName() + QStringLiteral("  —  ") + path, startRecent_);
        item->setData(Qt::UserRole, path);
    }
}

void ModelWorkspace::setValueOverlay(const GraphDiagram::ValueOverlay& overlay) {
    overlay_ = overlay;
    diagram_->setValueOverlay(overlay);
}

void ModelWorkspace::showForwardNode(int node) {
    pendingNode_ = node;
    pendingKey_ = QStringLiteral("\nforward");
    if (model_.lacks(Capability::InlinedGraph).empty()) {
        // The box first: the page then shows the inlined graph's text once, where the selected
        // node's IR line is made current.
        if (!inlined_->isChecked()) {
            inlined_->setChecked(true); // shows the graph
        }
        tabs_->setCurrentWidget(graphPage_);
        showDiagramFor(QStringLiteral("\nforward"));
        return;
    }
    tabs_->setCurrentWidget(graphPage_);
    // No inlined graph (an ExecuTorch program's methods are flat already): forward's own graph,
    // by the module row of that method, where selecting one of its nodes leaves the tree.
    const ModuleInfo* owner = nullptr;
    for (const ModuleInfo& m : model_.modules) {
        const bool runs =
            std::any_of(m.methods.begin(), m.methods.end(),
                        [](const MethodInfo& method) { return method.name == "forward"; });
        if (runs && (!owner || m.path == "forward")) {
            owner = &m;
        }
    }
    if (!owner) {
        return;
    }
    pendingKey_ = q(owner->path) + QStringLiteral("/forward");
    if (selectedModule() != owner) {
        selectModule(q(owner->path)); // fills the method boxes and shows the graph
    }
    const int forward = graphMethod_->findText(QStringLiteral("forward"));
    if (forward >= 0 && graphMethod_->currentIndex() != forward) {
        graphMethod_->setCurrentIndex(forward);
    }
    showGraph();
}

void ModelWorkspace::setProfile(const RunProfile& profile) {
    treeModel_->setProfile(profile);
    profile_ = profile;
    diagram_->setProfile(profile);
    tree_->setColumnHidden(ModuleTreeModel::TimeColumn, profile.modules.empty());
    tree_->resizeColumnToContents(ModuleTreeModel::TimeColumn);
}

void ModelWorkspace::setControlFlow(const RunResult& run) {
    if (run.model != model_.path) {
        return;
    }
    flow_ = run.controlFlow;
    if (diagram_->hasGraph() && diagram_->graph().inlined && diagram_->graph().modulePath.empty() &&
        diagram_->graph().method == run.method) {
        diagram_->setControlFlow(flow_);
    }
}

QString ModelWorkspace::selectedModulePath() const {
    return treeProxy_->data(tree_->currentIndex(), ModuleTreeModel::PathRole).toString();
}

const ModuleInfo* ModelWorkspace::selectedModule() const {
    return treeModel_->module(treeProxy_->mapToSource(tree_->currentIndex()));
}

const ModuleInfo* ModelWorkspace::methodOwner(const ModuleInfo* module) const {
    if (!module || !module->methods.empty()) {
        return module;
    }
    for (std::string path = module->path; !path.empty();) {
        const size_t dot = path.rfind('.');
        path = dot == std::string::npos ? std::string() : path.substr(0, dot);
        for (const ModuleInfo& m : model_.modules) {
            if (m.path == path && !m.methods.empty()) {
                return &m;
            }
        }
    }
    return module;
}

void ModelWorkspace::selectModule(const QString& path) {
    tree_->setCurrentIndex(treeProxy_->mapFromSource(treeModel_->indexOfPath(path)));
}

void ModelWorkspace::requestStatistics() {
    if (const ModuleInfo* m = selectedModule()) {
        statisticsRequest_ = worker_->statistics(QString::fromStdString(m->path));
    }
}

void ModelWorkspace::expandAll() {
    tree_->expandAll();
}

void ModelWorkspace::collapseAll() {
    tree_->collapseAll();
}

void ModelWorkspace::focusFilter() {
    filter_->setFocus();
    filter_->selectAll();
}

void ModelWorkspace::showTab(int index) {
    if (!tabs_->isTabVisible(index)) {
        return; // the Memory tab of a model without a plan
    }
    tabs_->setCurrentIndex(index);
}

QStringList ModelWorkspace::tabNames() const {
    QStringList names;
    for (int i = 0; i < tabs_->count(); ++i) {
        names << tabs_->tabText(i).remove(QLatin1Char('&'));
    }
    return names;
}

QByteArray ModelWorkspace::splitterState() const {
    return splitter_->saveState();
}

void ModelWorkspace::restoreSplitterState(const QByteArray& state) {
    splitter_->restoreState(state);
}

void ModelWorkspace::showSelection() {
    const ModuleInfo* module = selectedModule();
    details_->setModule(module, model_);
    if (const ModuleInfo* owner = methodOwner(module)) {
        for (QComboBox* combo : {codeMethod_, graphMethod_}) {
            const QString previous = combo->currentText();
            const QSignalBlocker block(combo);
            combo->clear();
            for (const auto& method : owner->methods) {
                combo->addItem(q(method.name));
            }
            const int keep = combo->findText(previous);
            combo->setCurrentIndex(keep >= 0 ? keep
                                   : combo->findText(QStringLiteral("forward")) >= 0
                                       ? combo->findText(QStringLiteral("forward"))
                                       : 0);
        }
    }
    // A delegate has no method of its own: the plan shown is its method's, else the program's.
    memory_->setModule(
        MemoryView::hasPlan(module) || model_.modules.empty() ? module : &model_.modules.front());
    showCode();
    showGraph();
}

void ModelWorkspace::showCode() {
    const ModuleInfo* m = methodOwner(selectedModule());
    const int index = codeMethod_->currentIndex();
    if (!m || index < 0 || index >= static_cast<int>(m->methods.size())) {
        code_->setText({});
        return;
    }
    code_->setText(q(m->methods[static_cast<size_t>(index)].code));
}

void ModelWorkspace::showGraph() {
    graphMethod_->setEnabled(!inlined_->isChecked());
    const QScopedValueRollback<bool> syncing(syncingText_, true);
    if (inlined_->isChecked()) {
        // The diagram is asked for first: the worker answers in order, and a transformer's
        // inlined text (100,000 lines) takes longer to make and to show than its diagram.
        showDiagramFor(QStringLiteral("\n") + QStringLiteral("forward"));
        // The whole model's graph does not depend on the selected module: print it once per model.
        if (!inlinedGraph_.isEmpty()) {
            graph_->setText(inlinedGraph_);
        } else {
            graph_->setText(tr("# inlining forward…"));
            if (graphRequest_ == 0) { // not asked yet
                graphRequest_ = worker_->graph(QString(), QStringLiteral("forward"), true);
            }
        }
        return;
    }
    const ModuleInfo* m = methodOwner(selectedModule());
    const int index = graphMethod_->currentIndex();
    if (!m || index < 0 || index >= static_cast<int>(m->methods.size())) {
        graph_->setText({});
        diagram_->showMessage(tr("No method selected"));
        diagramShown_.clear();
        return;
    }
    graph_->setText(q(m->methods[static_cast<size_t>(index)].graph));
    showDiagramFor(q(m->path) + QStringLiteral("/") +
                   q(m->methods[static_cast<size_t>(index)].name));
}

// key: "PATH/METHOD" for a module's method, "\nforward" for the inlined forward.
void ModelWorkspace::showDiagramFor(const QString& key) {
    if (tabs_->currentWidget() != graphPage_) {
        return; // built when the Graph tab is shown
    }
    if (key == diagramShown_ && diagram_->hasGraph()) {
        selectPendingNode();
        return;
    }
    const auto it = diagrams_.find(key);
    if (it != diagrams_.end()) {
        diagramShown_ = key;
        diagram_->setGraph(it->second);
        diagram_->setValueOverlay(overlay_);
        diagram_->setProfile(profile_); // this model's last profiled run, if any
        if (it->second->inlined && it->second->modulePath.empty() &&
            it->second->method == "forward") {
            diagram_->setControlFlow(flow_);
        }
        nodeOfIrLine_.clear();
        for (const GraphNode& n : it->second->nodes) {
            if (n.irLine > 0) {
                nodeOfIrLine_.emplace(n.irLine, n.id);
            }
        }
        selectPendingNode();
        return;
    }
    diagramShown_.clear();
    nodeOfIrLine_.clear();
    diagram_->showMessage(tr("Building the diagram…"));
    if (diagramRequest_ != 0 && diagramKey_ == key) {
        return; // asked already
    }
    diagramKey_ = key;
    const bool inlined = key.startsWith(QLatin1Char('\n'));
    const QString path = inlined ? QString() : key.section(QLatin1Char('/'), 0, -2);
    const QString method = inlined ? key.mid(1) : key.section(QLatin1Char('/'), -1);
    diagramRequest_ = worker_->diagram(path, method, inlined);
}

void ModelWorkspace::selectPendingNode() {
    if (pendingNode_ < 0 || diagramShown_ != pendingKey_) {
        return;
    }
    const int node = pendingNode_;
    pendingNode_ = -1;
    if (node < static_cast<int>(diagram_->graph().nodes.size())) {
        diagram_->reveal(node);
        diagram_->selectNode(node);
    }
}

void ModelWorkspace::showNodeInText(int node) {
    if (node < 0 || !diagram_->hasGraph() ||
        node >= static_cast<int>(diagram_->graph().nodes.size())) {
        return;
    }
    const GraphModel& graph = diagram_->graph();
    const GraphNode& n = graph.nodes[static_cast<size_t>(node)];
    const QScopedValueRollback<bool> syncing(syncingText_, true);
    // In the whole model's graph, the node's module is selected in the tree (its details, its
    // code): first, since showing a module shows its graph text anew.
    if (graph.inlined && n.group >= 0 && n.group < static_cast<int>(graph.groups.size())) {
        const QString path =
            QString::fromStdString(graph.groups[static_cast<size_t>(n.group)].module);
        const QModelIndex index = treeProxy_->mapFromSource(treeModel_->indexOfPath(path));
        if (path != selectedModulePath() && index.isValid()) {
            tree_->setCurrentIndex(index);
            tree_->scrollTo(index);
        }
    }
    pendingIrLine_ = 0;
    if (n.irLine > 0) {
        showIrLine(n.irLine);
    }
    // The .code view: the line that made the node, where the code shown has it.
    if (!n.sourceText.empty()) {
        QPlainTextEdit* editor = code_->editor();
        const QString wanted = QString::fromStdString(n.sourceText);
        for (QTextBlock block = editor->document()->begin(); block.isValid();
             block = block.next()) {
            if (block.text().trimmed() == wanted || block.text().contains(wanted)) {
                QTextCursor cursor(block);
                cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
                editor->setTextCursor(cursor);
                editor->centerCursor();
                break;
            }
        }
    }
}

void ModelWorkspace::showIrLine(int line) {
    QPlainTextEdit* editor = graph_->editor();
    const QTextBlock block = editor->document()->findBlockByNumber(line - 1);
    if (!block.isValid()) {
        if (!graph_->loaded()) {
            pendingIrLine_ = line; // a long text whose line has not been shown yet
        }
        return;
    }
    const QScopedValueRollback<bool> syncing(syncingText_, true);
    QTextCursor cursor(block);
    cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    editor->setTextCursor(cursor);
    editor->centerCursor();
    // The line's start in view: a long line would otherwise scroll to its end.
    editor->horizontalScrollBar()->setValue(0);
}

void ModelWorkspace::selectNodeAtTextLine(int line) {
    const auto it = nodeOfIrLine_.find(line);
    if (it != nodeOfIrLine_.end() && it->second != diagram_->selectedNode()) {
        diagram_->selectNode(it->second, true);
    }
}

GraphDiagram* ModelWorkspace::diagram() const {
    return diagram_;
}

CodeView* ModelWorkspace::graphText() const {
    return graph_;
}

CodeView* ModelWorkspace::codeText() const {
    return code_;
}

} // namespace scriptscope
