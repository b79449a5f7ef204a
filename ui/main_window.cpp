#include "main_window.h"

#include "code_view.h"
#include "module_tree_model.h"
#include "run_panel.h"
#include "safe_preview.h"
#include "warp_editor.h"

#include "worker_client.h"
#include <QUndoStack>

#include <format.h>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImageReader>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include <map>

namespace scriptscope {

namespace {

constexpr int kMaxRecent = 10;

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QList<QStandardItem*> row(const QStringList& texts) {
    QList<QStandardItem*> items;
    for (const auto& text : texts) {
        auto* item = new QStandardItem(text);
        item->setEditable(false);
        item->setToolTip(text);
        items << item;
    }
    return items;
}

QTreeView* makeTable(QStandardItemModel* model, QWidget* parent) {
    auto* view = new QTreeView(parent);
    view->setModel(model);
    view->setRootIsDecorated(false);
    view->setUniformRowHeights(true);
    view->setAlternatingRowColors(true);
    view->setSortingEnabled(true);
    view->header()->setStretchLastSection(true);
    return view;
}

} // namespace

MainWindow::MainWindow(WorkerClient* worker, QWidget* parent)
    : QMainWindow(parent)
    , worker_(worker) {
    setWindowTitle(QStringLiteral("ScriptScope"));
    setAcceptDrops(true);
    buildUi();
    buildMenus();

    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    splitter_->restoreState(settings.value(QStringLiteral("window/splitter")).toByteArray());
    applyTheme(settings.value(QStringLiteral("theme"), QStringLiteral("system")).toString());
    operatorLibraries_ = settings.value(QStringLiteral("operatorLibraries")).toStringList();
    applyLimits();
    updateRecentMenu();

    watcher_ = new QFileSystemWatcher(this);
    reloadTimer_ = new QTimer(this);
    reloadTimer_->setSingleShot(true);
    reloadTimer_->setInterval(400); // torch.jit.save writes in steps: wait for it to finish
    connect(watcher_, &QFileSystemWatcher::fileChanged, reloadTimer_, qOverload<>(&QTimer::start));
    connect(reloadTimer_, &QTimer::timeout, this, [this]() {
        if (!currentFile_.isEmpty() && QFileInfo::exists(currentFile_)) {
            reload();
        }
    });

    connect(worker_, &WorkerClient::loaded, this, [this](quint64 id, const ModelInfo& info) {
        if (id == loadRequest_) {
            showModel(info);
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
    connect(worker_, &WorkerClient::probed, this, [this](quint64 id, const ProbeResult& probe) {
        if (id != previewRequest_ || !safePreview_) {
            return;
        }
        previewRequest_ = 0;
        setBusy(false);
        safePreview_->showProbe(probe);
        safePreview_->show();
        safePreview_->raise();
        Q_EMIT previewShown(QString::fromStdString(probe.path));
    });
    connect(worker_, &WorkerClient::failed, this, [this](quint64 id, const Error& error) {
        if (id == previewRequest_) {
            previewRequest_ = 0;
            showError(error);
            return;
        }
        if (id == loadRequest_ || id == graphRequest_ || id == statisticsRequest_) {
            if (id == graphRequest_) {
                graphRequest_ = 0; // asking again may work (the next worker loads the model first)
            }
            showError(error);
        }
    });
    connect(worker_, &WorkerClient::statisticsReady, this,
            [this](quint64 id, const std::vector<OutputValue>& values) {
                if (id == statisticsRequest_) {
                    showStatistics(values);
                }
            });
    connect(
        worker_, &WorkerClient::devicesKnown, this,
        [this](const std::vector<DeviceInfo>& devices, const QString& libtorch) {
            QStringList names, reasons;
            for (const auto& d : devices) {
                QString name = d.id == "cpu" ? tr("CPU") : q(d.name.empty() ? d.id : d.name);
                if (d.memoryBytes) {
                    name += QStringLiteral(" (%1)").arg(q(formatBytes(d.memoryBytes)));
                }
                if (!d.available) {
                    name = tr("%1 unavailable").arg(q(d.id == "cuda" ? std::string("CUDA") : d.id));
                    reasons << q(d.reason);
                }
                names << name;
            }
            statusRuntime_->setText(
                tr("LibTorch %1 · %2").arg(libtorch, names.join(QStringLiteral(" · "))));
            statusRuntime_->setToolTip(reasons.join(QLatin1Char('\n')));
        });
    connect(worker_, &WorkerClient::progress, this,
            [this](quint64, const QString& stage, const QString& detail) {
                progress_->setFormat(stage + QStringLiteral(" ") + QFileInfo(detail).fileName());
            });
    connect(worker_, &WorkerClient::busyChanged, this, [this](bool busy) { setBusy(busy); });
}

MainWindow::~MainWindow() = default;

void MainWindow::placeOnScreen(const QSize& preferred) {
    // Never larger than the screen (QT_SCALE_FACTOR=2 on a 1920x1080 screen leaves 960x540).
    const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
    if (!screen) {
        resize(preferred);
        return;
    }
    const QRect available = screen->availableGeometry();
    const bool saved =
        !QSettings().value(QStringLiteral("window/geometry")).toByteArray().isEmpty();
    QSize size = saved ? this->size() : preferred;
    size = size.boundedTo(QSize(available.width() * 95 / 100, available.height() * 95 / 100));
    resize(size);
    if (!saved || !available.contains(frameGeometry())) {
        move(available.center() - QPoint(size.width() / 2, size.height() / 2));
    }
}

void MainWindow::buildUi() {
    pages_ = new QStackedWidget(this);

    // Start page: shown until a model is open.
    auto* start = new QWidget(pages_);
    auto* startLayout = new QVBoxLayout(start);
    auto* title = new QLabel(
        tr("<h2>ScriptScope</h2><p>Open a TorchScript archive (<code>torch.jit.save</code>) "
           "to see its modules, code and graphs.</p>"),
        start);
    auto* open = new QPushButton(tr("Open…"), start);
    startRecent_ = new QListWidget(start);
    startLayout->addStretch();
    startLayout->addWidget(title, 0, Qt::AlignHCenter);
    startLayout->addWidget(open, 0, Qt::AlignHCenter);
    startLayout->addWidget(new QLabel(tr("Recent files"), start), 0, Qt::AlignHCenter);
    startLayout->addWidget(startRecent_, 0, Qt::AlignHCenter);
    startLayout->addStretch();
    connect(open, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open TorchScript archive"), {},
            tr("TorchScript archives (*.pt *.pth *.ptl *.zip);;All files (*)"));
        if (!path.isEmpty()) {
            openFile(path);
        }
    });
    connect(startRecent_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { openFile(item->data(Qt::UserRole).toString()); });

    // Inspector page.
    auto* inspector = new QWidget(pages_);
    auto* inspectorLayout = new QVBoxLayout(inspector);
    inspectorLayout->setContentsMargins(0, 0, 0, 0);
    auto* bannerBox = new QWidget(inspector);
    auto* bannerLayout = new QHBoxLayout(bannerBox);
    banner_ = new QLabel(bannerBox);
    banner_->setWordWrap(true);
    banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bannerAction_ = new QPushButton(tr("Load operator library…"), bannerBox);
    bannerAction_->hide();
    bannerPreview_ = new QPushButton(tr("Preview without running"), bannerBox);
    bannerPreview_->setToolTip(tr("Read what the archive holds without loading or running it"));
    bannerPreview_->hide();
    connect(bannerPreview_, &QPushButton::clicked, this,
            [this]() { previewWithoutRunning(pendingFile_); });
    auto* bannerClose = new QPushButton(tr("Dismiss"), bannerBox);
    bannerLayout->addWidget(banner_, 1);
    bannerLayout->addWidget(bannerAction_);
    bannerLayout->addWidget(bannerPreview_);
    bannerLayout->addWidget(bannerClose);
    bannerBox->setAutoFillBackground(true);
    QPalette bannerPalette = bannerBox->palette();
    bannerPalette.setColor(QPalette::Window, QColor(0xf8, 0xd7, 0xda));
    bannerPalette.setColor(QPalette::WindowText, QColor(0x58, 0x15, 0x1c));
    bannerBox->setPalette(bannerPalette);
    banner_->setPalette(bannerPalette);
    bannerBox->hide();
    connect(bannerClose, &QPushButton::clicked, this, [this]() { clearError(); });
    connect(bannerAction_, &QPushButton::clicked, this, [this]() {
        if (suggestedLibrary_.isEmpty()) {
            chooseOperatorLibrary();
        } else {
            addOperatorLibrary(suggestedLibrary_);
        }
    });

    auto* splitter = new QSplitter(Qt::Horizontal, inspector);
    splitter_ = splitter;
    splitter->setObjectName(QStringLiteral("mainSplitter"));
    auto* left = new QWidget(splitter);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(4, 4, 0, 4);
    filter_ = new QLineEdit(left);
    filter_->setPlaceholderText(tr("Filter modules by name, path (features.0) or type"));
    filter_->setClearButtonEnabled(true);
    tree_ = new QTreeView(left);
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
    connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this]() {
        showModuleDetails();
        showCode();
        showGraph();
    });

    tabs_ = new QTabWidget(splitter);
    // Details
    auto* detailsPage = new QWidget(tabs_);
    auto* detailsLayout = new QVBoxLayout(detailsPage);
    detailsHeader_ = new QLabel(detailsPage);
    detailsHeader_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    detailsModel_ = new QStandardItemModel(this);
    details_ = new QTreeView(detailsPage);
    details_->setModel(detailsModel_);
    details_->setUniformRowHeights(true);
    details_->setAlternatingRowColors(true);
    statisticsButton_ = new QPushButton(tr("Compute &statistics"), detailsPage);
    statisticsButton_->setToolTip(
        tr("min, max, mean, std and NaN/Inf counts of this module's parameters and "
           "buffers (reads every value)"));
    auto* detailsBar = new QHBoxLayout;
    detailsBar->addWidget(detailsHeader_, 1);
    detailsBar->addWidget(statisticsButton_);
    detailsLayout->addLayout(detailsBar);
    connect(statisticsButton_, &QPushButton::clicked, this, [this]() { requestStatistics(); });
    detailsLayout->addWidget(details_);
    tabs_->addTab(detailsPage, tr("&Details"));
    // Code
    auto* codePage = new QWidget(tabs_);
    auto* codeLayout = new QVBoxLayout(codePage);
    codeMethod_ = new QComboBox(codePage);
    code_ = new CodeView(CodeHighlighter::Language::TorchScript, codePage);
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
    inlined_ = new QCheckBox(tr("Inlined graph of forward (whole model)"), graphPage);
    graph_ = new CodeView(CodeHighlighter::Language::GraphIr, graphPage);
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
    graphLayout->addWidget(graph_);
    tabs_->addTab(graphPage, tr("&Graph"));
    connect(graphMethod_, &QComboBox::currentIndexChanged, this, [this]() { showGraph(); });
    connect(inlined_, &QCheckBox::toggled, this, [this]() { showGraph(); });
    // Archive
    auto* archivePage = new QSplitter(Qt::Vertical, tabs_);
    archiveSummary_ = new QLabel(archivePage);
    archiveSummary_->setWordWrap(true);
    archiveSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    archiveSummary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    recordsModel_ = new QStandardItemModel(this);
    records_ = makeTable(recordsModel_, archivePage);
    operatorsModel_ = new QStandardItemModel(this);
    operators_ = makeTable(operatorsModel_, archivePage);
    auto* extraBox = new QSplitter(Qt::Horizontal, archivePage);
    extraFiles_ = new QListWidget(extraBox);
    extraContent_ = new QPlainTextEdit(extraBox);
    extraContent_->setReadOnly(true);
    extraContent_->setFont(code_->editor()->font());
    archivePage->addWidget(archiveSummary_);
    archivePage->addWidget(records_);
    archivePage->addWidget(operators_);
    archivePage->addWidget(extraBox);
    tabs_->addTab(archivePage, tr("&Archive"));
    connect(extraFiles_, &QListWidget::currentTextChanged, this, [this](const QString& name) {
        const auto found = model_.probe.extraFiles.find(name.toStdString());
        if (found == model_.probe.extraFiles.end()) {
            extraContent_->clear();
            return;
        }
        const QByteArray content = QByteArray::fromStdString(found->second);
        QJsonParseError error{};
        const QJsonDocument json = QJsonDocument::fromJson(content, &error);
        extraContent_->setPlainText(error.error == QJsonParseError::NoError
                                        ? QString::fromUtf8(json.toJson(QJsonDocument::Indented))
                                        : QString::fromUtf8(content));
    });

    splitter->addWidget(left);
    splitter->addWidget(tabs_);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({540, 740});
    inspectorLayout->addWidget(bannerBox);
    inspectorLayout->addWidget(splitter, 1);

    pages_->addWidget(start);
    pages_->addWidget(inspector);

    // Workspaces: the model inspector and the warp editor.
    workspaces_ = new QTabWidget(this);
    workspaces_->setDocumentMode(true);
    workspaces_->addTab(pages_, tr("Model"));
    warpEditor_ = new WarpEditor(workspaces_);
    workspaces_->addTab(warpEditor_, tr("Warp"));
    runPanel_ = new RunPanel(worker_, warpEditor_, workspaces_);
    workspaces_->addTab(runPanel_, tr("Run"));
    connect(runPanel_, &RunPanel::profileReady, this, [this](const RunProfile& profile) {
        treeModel_->setProfile(profile);
        tree_->resizeColumnToContents(ModuleTreeModel::TimeColumn);
    });
    setCentralWidget(workspaces_);
    connect(warpEditor_, &WarpEditor::sessionChanged, this, [this]() {
        // Written (and synced) as it changes, so that a crash loses nothing.
        QSettings settings;
        settings.setValue(
            QStringLiteral("warp/session"),
            QString::fromUtf8(
                QJsonDocument(warpEditor_->session()).toJson(QJsonDocument::Compact)));
        settings.sync();
    });

    statusFile_ = new QLabel(this);
    statusModel_ = new QLabel(this);
    statusRuntime_ = new QLabel(this);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 0);
    progress_->setTextVisible(true);
    progress_->setMaximumWidth(260);
    progress_->hide();
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->hide();
    connect(cancel_, &QPushButton::clicked, worker_, &WorkerClient::cancel);
    statusBar()->addWidget(statusFile_, 1);
    statusBar()->addWidget(statusModel_);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_);
    statusBar()->addPermanentWidget(statusRuntime_);
    // Archives are programs (PyTorch's security guidance): say so, and what the worker may not do.
    statusSandbox_ = new QLabel(tr("Untrusted code"), this);
    statusSandbox_->setObjectName(QStringLiteral("sandboxStatus"));
    statusBar()->addPermanentWidget(statusSandbox_);
    connect(
        worker_, &WorkerClient::sandboxKnown, this,
        [this](bool confined, const QString& summary, const QStringList& notes) {
            statusSandbox_->setText(confined ? tr("Untrusted code · sandboxed")
                                             : tr("Untrusted code · partly sandboxed"));
            statusSandbox_->setStyleSheet(confined ? QString() : QStringLiteral("color: #b26a00;"));
            statusSandbox_->setToolTip(
                tr("<p>A TorchScript archive is a program: loading and running it executes its "
                   "code. Open only archives you trust (PyTorch's own advice).</p><p>Models "
                   "run in a separate worker process with a memory and a time limit. %1</p>%2"
                   "<p>It can still read any file you can read.</p>")
                    .arg(summary.toHtmlEscaped(),
                         notes.isEmpty() ? QString()
                                         : QStringLiteral("<p>Not applied: ") +
                                               notes.join(QStringLiteral("; ")).toHtmlEscaped() +
                                               QStringLiteral("</p>")));
        });
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open TorchScript archive"), QFileInfo(currentFile_).absolutePath(),
            tr("TorchScript archives (*.pt *.pth *.ptl *.zip);;All files (*)"));
        if (!path.isEmpty()) {
            openFile(path);
        }
    });
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Preview Without Running…"), this, [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Preview an archive without running it"), {},
            tr("TorchScript archives (*.pt *.pth *.ptl *.zip);;All files (*)"));
        if (!path.isEmpty()) {
            previewWithoutRunning(path);
        }
    });
    file->addAction(tr("&Reload"), QKeySequence::Refresh, this, [this]() { reload(); });
    file->addAction(tr("Load Operator &Library…"), this, [this]() { chooseOperatorLibrary(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    file->insertAction(file->actions().constLast(),
                       file->addAction(tr("&Limits…"), this, [this]() { editLimits(); }));
    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Expand All"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Plus), tree_,
                    &QTreeView::expandAll);
    view->addAction(tr("&Collapse All"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Minus), tree_,
                    &QTreeView::collapseAll);
    view->addAction(tr("&Filter Modules"), QKeySequence(Qt::CTRL | Qt::Key_L), this, [this]() {
        filter_->setFocus();
        filter_->selectAll();
    });
    for (int i = 0; i < 4; ++i) {
        view->addAction(tabs_->tabText(i).remove(QLatin1Char('&')),
                        QKeySequence(QKeyCombination(Qt::ALT, static_cast<Qt::Key>(Qt::Key_1 + i))),
                        this, [this, i]() { tabs_->setCurrentIndex(i); });
    }

    QMenu* theme = view->addMenu(tr("&Theme"));
    auto* themes = new QActionGroup(this);
    const QString current =
        QSettings().value(QStringLiteral("theme"), QStringLiteral("system")).toString();
    for (const auto& [key, label] : {std::pair{QStringLiteral("system"), tr("&System")},
                                     std::pair{QStringLiteral("light"), tr("&Light")},
                                     std::pair{QStringLiteral("dark"), tr("&Dark")}}) {
        QAction* action = theme->addAction(label, this, [this, key = key]() {
            QSettings().setValue(QStringLiteral("theme"), key);
            applyTheme(key);
        });
        action->setCheckable(true);
        action->setChecked(key == current);
        themes->addAction(action);
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About ScriptScope"), this, [this]() {
        QMessageBox::about(
            this, tr("About ScriptScope"),
            tr("<h3>ScriptScope %1</h3><p>A debugger for exported PyTorch (TorchScript) models.</p>"
               "<p>Archives are code: ScriptScope loads and runs them in a separate worker "
               "process, but like PyTorch itself it cannot make an untrusted archive safe.</p>")
                .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::openFile(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    pendingFile_ = absolute;
    reselectPath_ = absolute == currentFile_ ? selectedModulePath() : QString();
    setBusy(true, tr("Opening %1").arg(QFileInfo(absolute).fileName()));
    loadRequest_ = worker_->load(absolute, operatorLibraries_);
}

void MainWindow::reload() {
    if (!currentFile_.isEmpty()) {
        openFile(currentFile_);
    }
}

void MainWindow::showModel(const ModelInfo& info) {
    clearError();
    const bool otherModel = pendingFile_ != currentFile_;
    if (otherModel) {
        // Nothing of the previous model may show under this one: its filter, selection, details,
        // code, graph and the profile's times go.
        const QSignalBlocker blocker(filter_);
        filter_->clear();
        treeProxy_->setFilterText(QString());
    }
    model_ = info;
    inlinedGraph_.clear();
    graphRequest_ = 0;
    if (!currentFile_.isEmpty() && currentFile_ != pendingFile_) {
        watcher_->removePath(currentFile_);
    }
    currentFile_ = pendingFile_;
    if (!watcher_->files().contains(currentFile_)) {
        watcher_->addPath(currentFile_);
    }
    addRecent(currentFile_);
    runPanel_->setModel(info);
    {
        // The session: after a restart (or a crash of this window) the same model comes back.
        QSettings settings;
        settings.setValue(QStringLiteral("session/model"), currentFile_);
        settings.sync();
    }
    setWindowTitle(QStringLiteral("%1 — ScriptScope").arg(QFileInfo(currentFile_).fileName()));

    treeModel_->setModel(info);
    tree_->expandToDepth(1);
    fillArchive(info.probe);
    pages_->setCurrentIndex(1);
    QModelIndex select = treeModel_->indexOfPath(reselectPath_);
    if (!select.isValid()) {
        select = treeModel_->index(0, 0);
    }
    tree_->setCurrentIndex(treeProxy_->mapFromSource(select));
    tree_->scrollTo(tree_->currentIndex());
    // The model reset may leave the current index where it was without a signal: show the
    // selected module of this model in every view.
    showModuleDetails();
    showCode();
    showGraph();

    statusFile_->setText(
        QStringLiteral("%1 (%2)").arg(currentFile_, q(formatBytes(info.probe.fileSize))));
    statusModel_->setText(tr("%1 modules, %2 parameters (%3), %4 methods")
                              .arg(info.modules.size())
                              .arg(QLocale().toString(static_cast<qulonglong>(info.parameterCount)))
                              .arg(q(formatBytes(info.parameterBytes)))
                              .arg(info.methodCount));
    Q_EMIT modelShown(currentFile_);
}

void MainWindow::showError(const Error& error) {
    QString message = q(error.message);
    if (!model_.modules.empty() && pendingFile_ != currentFile_) {
        message += tr("\nStill showing %1.").arg(QFileInfo(currentFile_).fileName());
    }
    banner_->setText(message);
    banner_->setToolTip(q(error.details));
    suggestedLibrary_ = q(error.library);
    bannerAction_->setText(suggestedLibrary_.isEmpty()
                               ? tr("Load operator library…")
                               : tr("Load %1").arg(QFileInfo(suggestedLibrary_).fileName()));
    bannerAction_->setToolTip(suggestedLibrary_);
    bannerAction_->setVisible(error.kind == ErrorKind::MissingOperator);
    // An archive that would not load (damaged, too new, crashing LibTorch) can still be read.
    const bool archiveProblem =
        error.kind == ErrorKind::Format || error.kind == ErrorKind::Version ||
        error.kind == ErrorKind::MissingOperator || error.kind == ErrorKind::Crashed ||
        error.kind == ErrorKind::TimedOut || error.kind == ErrorKind::OutOfMemory;
    bannerPreview_->setVisible(archiveProblem && QFileInfo(pendingFile_).isFile());
    banner_->parentWidget()->show();
    pages_->setCurrentIndex(1);
    // Keyboard shortcuts (Ctrl+O) need a focused widget in this window: the start page's widget
    // that had it is hidden now.
    if (QWidget* focus = QApplication::focusWidget(); !focus || !focus->isVisible()) {
        tree_->setFocus(Qt::OtherFocusReason);
    }
    Q_EMIT errorShown(message);
}

void MainWindow::clearError() {
    banner_->clear();
    banner_->parentWidget()->hide();
}

QString MainWindow::errorText() const {
    return banner_->parentWidget()->isVisible() ? banner_->text() : QString();
}
QString MainWindow::codeText() const {
    return code_->text();
}
QString MainWindow::graphText() const {
    return graph_->text();
}

QString MainWindow::selectedModulePath() const {
    return treeProxy_->data(tree_->currentIndex(), ModuleTreeModel::PathRole).toString();
}

const ModuleInfo* MainWindow::selectedModule() const {
    return treeModel_->module(treeProxy_->mapToSource(tree_->currentIndex()));
}

void MainWindow::selectModule(const QString& path) {
    tree_->setCurrentIndex(treeProxy_->mapFromSource(treeModel_->indexOfPath(path)));
}

void MainWindow::showModuleDetails() {
    detailsModel_->clear();
    detailsModel_->setHorizontalHeaderLabels(
        {tr("Name"), tr("Shape / type"), tr("Dtype / value"), tr("Size"), tr("Statistics")});
    const ModuleInfo* m = selectedModule();
    if (!m) {
        detailsHeader_->clear();
        return;
    }
    detailsHeader_->setText(QStringLiteral("<b>%1</b> &nbsp; <code>%2</code>")
                                .arg(m->path.empty() ? tr("(root)") : q(m->path).toHtmlEscaped(),
                                     q(m->type).toHtmlEscaped()));
    auto section = [this](const QString& title, int count) {
        auto* item = new QStandardItem(QStringLiteral("%1 (%2)").arg(title).arg(count));
        item->setEditable(false);
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
        detailsModel_->appendRow(item);
        return item;
    };
    auto tensorRow = [this](const TensorInfo& t) {
        // The last column is filled by "Compute statistics".
        QString dtype = q(t.dtype);
        const QString quantization = q(describeQuantization(t));
        if (!t.qscheme.empty()) {
            dtype += t.axis >= 0
                         ? tr(", per channel (axis %1)").arg(t.axis)
                         : tr(", scale %1, zero point %2").arg(t.scale, 0, 'g', 4).arg(t.zeroPoint);
        }
        if (t.packed) {
            dtype += tr(" · packed");
        }
        auto items =
            row({q(t.name), q(formatShape(t.shape)), dtype, q(formatBytes(t.bytes)), QString()});
        if (t.packed || !quantization.isEmpty()) {
            const QString tip =
                (t.packed ? tr("Unpacked from the quantized module's %1 (%2)")
                                .arg(q(t.packedIn), q(t.dtype))
                          : q(t.dtype)) +
                (quantization.isEmpty() ? QString() : QStringLiteral("\n") + quantization);
            for (auto* item : items) {
                item->setToolTip(tip);
            }
        }
        return items;
    };
    auto* parameters = section(tr("Parameters"), static_cast<int>(m->parameters.size()));
    for (const auto& t : m->parameters) {
        parameters->appendRow(tensorRow(t));
    }
    auto* buffers = section(tr("Buffers"), static_cast<int>(m->buffers.size()));
    for (const auto& t : m->buffers) {
        buffers->appendRow(tensorRow(t));
    }
    auto* attributes = section(tr("Attributes"), static_cast<int>(m->attributes.size()));
    for (const auto& a : m->attributes) {
        attributes->appendRow(row({q(a.name), q(a.type), q(a.preview), QString(), QString()}));
    }
    auto* methods = section(tr("Methods"), static_cast<int>(m->methods.size()));
    for (const auto& method : m->methods) {
        methods->appendRow(
            row({q(method.name), q(method.schema), QString(), QString(), QString()}));
    }
    statisticsButton_->setEnabled(!m->parameters.empty() || !m->buffers.empty());
    details_->expandAll();
    // Long method schemas and values would push the other columns out of view; they are in the
    // tooltips.
    for (int column = 0; column < 4; ++column) {
        details_->resizeColumnToContents(column);
    }
    details_->setColumnWidth(1, std::min(details_->columnWidth(1), 240));
    details_->setColumnWidth(2, std::min(details_->columnWidth(2), 300));

    for (QComboBox* combo : {codeMethod_, graphMethod_}) {
        const QString previous = combo->currentText();
        const QSignalBlocker block(combo);
        combo->clear();
        for (const auto& method : m->methods) {
            combo->addItem(q(method.name));
        }
        const int keep = combo->findText(previous);
        combo->setCurrentIndex(keep >= 0 ? keep
                               : combo->findText(QStringLiteral("forward")) >= 0
                                   ? combo->findText(QStringLiteral("forward"))
                                   : 0);
    }
}

void MainWindow::showCode() {
    const ModuleInfo* m = selectedModule();
    const int index = codeMethod_->currentIndex();
    if (!m || index < 0 || index >= static_cast<int>(m->methods.size())) {
        code_->setText({});
        return;
    }
    code_->setText(q(m->methods[static_cast<size_t>(index)].code));
}

void MainWindow::showGraph() {
    graphMethod_->setEnabled(!inlined_->isChecked());
    if (inlined_->isChecked()) {
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
    const ModuleInfo* m = selectedModule();
    const int index = graphMethod_->currentIndex();
    if (!m || index < 0 || index >= static_cast<int>(m->methods.size())) {
        graph_->setText({});
        return;
    }
    graph_->setText(q(m->methods[static_cast<size_t>(index)].graph));
}

void MainWindow::fillArchive(const ProbeResult& p) {
    QStringList lines;
    lines << tr("<b>%1</b>").arg(q(p.summary).toHtmlEscaped());
    lines << tr("Archive folder: <code>%1/</code> &nbsp; Serialization version: %2 (this LibTorch "
                "reads up to %3)")
                 .arg(q(p.archiveName).toHtmlEscaped(), q(p.versionText).toHtmlEscaped())
                 .arg(p.maxSupportedVersion);
    for (const auto& note : p.notes) {
        lines << tr("Note: %1").arg(q(note).toHtmlEscaped());
    }
    archiveSummary_->setText(lines.join(QStringLiteral("<br>")));
    if (!p.notes.empty()) {
        QStringList notes;
        for (const auto& note : p.notes) {
            notes << q(note);
        }
        statusBar()->showMessage(notes.join(QStringLiteral("; ")), 20000);
    }

    recordsModel_->clear();
    recordsModel_->setHorizontalHeaderLabels(
        {tr("Record"), tr("Size"), tr("Stored size"), tr("Compression")});
    for (const auto& r : p.records) {
        auto items =
            row({q(r.name), QString(), QString(), r.stored ? tr("stored") : tr("deflated")});
        items[1]->setData(QVariant::fromValue<qulonglong>(r.size), Qt::DisplayRole);
        items[2]->setData(QVariant::fromValue<qulonglong>(r.compressedSize), Qt::DisplayRole);
        recordsModel_->appendRow(items);
    }
    records_->resizeColumnToContents(0);

    operatorsModel_->clear();
    operatorsModel_->setHorizontalHeaderLabels({tr("Operator used by the code"), tr("Available")});
    for (const auto& op : p.operators) {
        auto items = row({q(op.name), op.registered ? tr("yes") : tr("NOT REGISTERED")});
        if (!op.registered) {
            items[1]->setForeground(QColor(0xc0, 0x20, 0x20));
        }
        operatorsModel_->appendRow(items);
    }
    operators_->resizeColumnToContents(0);

    extraFiles_->clear();
    for (const auto& [name, content] : p.extraFiles) {
        extraFiles_->addItem(q(name));
    }
    if (extraFiles_->count() > 0) {
        extraFiles_->setCurrentRow(0);
    } else {
        extraContent_->setPlainText(tr("(no extra files)"));
    }
}

void MainWindow::addRecent(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) {
        recent.removeLast();
    }
    settings.setValue(QStringLiteral("recentFiles"), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    recentMenu_->clear();
    startRecent_->clear();
    for (const auto& path : recent) {
        recentMenu_->addAction(path, this, [this, path]() { openFile(path); });
        auto* item = new QListWidgetItem(
            QFileInfo(path).fileName() + QStringLiteral("  —  ") + path, startRecent_);
        item->setData(Qt::UserRole, path);
    }
    recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::setBusy(bool busy, const QString& what) {
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    if (!what.isEmpty()) {
        progress_->setFormat(what);
    }
}

void MainWindow::chooseOperatorLibrary() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Load operator library"), {}, tr("Shared libraries (*.so *.so.*);;All files (*)"));
    if (!path.isEmpty()) {
        addOperatorLibrary(path);
    }
}

void MainWindow::addOperatorLibrary(const QString& path) {
    if (!operatorLibraries_.contains(path)) {
        operatorLibraries_ << path;
        QSettings().setValue(QStringLiteral("operatorLibraries"), operatorLibraries_);
    }
    // The worker loads libraries before the archive: reopen what was being opened.
    if (!pendingFile_.isEmpty()) {
        openFile(pendingFile_);
    }
}

void MainWindow::requestStatistics() {
    if (const ModuleInfo* m = selectedModule()) {
        statisticsRequest_ = worker_->statistics(q(m->path));
    }
}

void MainWindow::showStatistics(const std::vector<OutputValue>& values) {
    std::map<QString, const OutputValue*> byName;
    for (const auto& v : values) {
        byName[q(v.key)] = &v;
    }
    // The Parameters and Buffers sections are the first two.
    for (int section = 0; section < 2 && section < detailsModel_->rowCount(); ++section) {
        QStandardItem* parent = detailsModel_->item(section);
        for (int r = 0; r < parent->rowCount(); ++r) {
            const auto found = byName.find(parent->child(r, 0)->text());
            QStandardItem* cell = parent->child(r, 4);
            if (found == byName.end() || !cell) {
                continue;
            }
            const OutputValue& v = *found->second;
            QString text = v.numel == 0 ? tr("empty")
                                        : tr("min %1  max %2  mean %3  std %4")
                                              .arg(v.min, 0, 'g', 4)
                                              .arg(v.max, 0, 'g', 4)
                                              .arg(v.mean, 0, 'g', 4)
                                              .arg(v.stddev, 0, 'g', 4);
            if (v.nanCount || v.infCount) {
                text += tr("  NaN %1  Inf %2").arg(v.nanCount).arg(v.infCount);
                cell->setForeground(QColor(0xc0, 0x20, 0x20));
            }
            cell->setText(text);
            cell->setToolTip(text);
        }
    }
    details_->resizeColumnToContents(4);
    Q_EMIT statisticsShown();
}

QString MainWindow::runtimeText() const {
    return statusRuntime_->text();
}

QString MainWindow::bannerActionText() const {
    return bannerAction_->isVisibleTo(this) ? bannerAction_->text() : QString();
}

void MainWindow::applyTheme(const QString& theme) {
    static const QPalette systemPalette = QApplication::palette();
    if (theme == QStringLiteral("system")) {
        QApplication::setPalette(systemPalette);
        return;
    }
    QPalette p;
    const bool dark = theme == QStringLiteral("dark");
    const QColor window = dark ? QColor(0x2b, 0x2b, 0x2b) : QColor(0xf4, 0xf4, 0xf4);
    const QColor base = dark ? QColor(0x1e, 0x1e, 0x1e) : Qt::white;
    const QColor text = dark ? QColor(0xe0, 0xe0, 0xe0) : QColor(0x20, 0x20, 0x20);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, dark ? QColor(0x26, 0x26, 0x26) : QColor(0xf0, 0xf0, 0xf0));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText,
               dark ? QColor(0x80, 0x80, 0x80) : QColor(0x90, 0x90, 0x90));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x7d, 0xd1));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, dark ? QColor(0x4a, 0x4a, 0x4a) : Qt::white);
    p.setColor(QPalette::Midlight, dark ? QColor(0x3a, 0x3a, 0x3a) : QColor(0xe3, 0xe3, 0xe3));
    p.setColor(QPalette::Mid, dark ? QColor(0x70, 0x70, 0x70) : QColor(0xa0, 0xa0, 0xa0));
    p.setColor(QPalette::Dark, dark ? QColor(0x18, 0x18, 0x18) : QColor(0xa0, 0xa0, 0xa0));
    p.setColor(QPalette::Shadow, dark ? Qt::black : QColor(0x60, 0x60, 0x60));
    // Disabled widgets must look disabled: dimmed text on both themes.
    const QColor disabledText = dark ? QColor(0x6e, 0x6e, 0x6e) : QColor(0xa0, 0xa0, 0xa0);
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText,
                            QPalette::HighlightedText, QPalette::PlaceholderText}) {
        p.setColor(QPalette::Disabled, role, disabledText);
    }
    p.setColor(QPalette::Disabled, QPalette::Button,
               dark ? QColor(0x32, 0x32, 0x32) : QColor(0xec, 0xec, 0xec));
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    p.setColor(QPalette::Disabled, QPalette::Highlight,
               dark ? QColor(0x44, 0x44, 0x44) : QColor(0xc8, 0xc8, 0xc8));
    QApplication::setPalette(p);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/splitter"), splitter_->saveState());
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) {
        const QString path = urls.first().toLocalFile();
        const QString suffix = QFileInfo(path).suffix().toLower();
        const bool image = !QImageReader::imageFormat(path).isEmpty() ||
                           suffix == QLatin1String("tif") || suffix == QLatin1String("tiff");
        if (!image) {
            openFile(path);
        } else {
            // An image goes to the warp editor.
            workspaces_->setCurrentWidget(warpEditor_);
            warpEditor_->openImage(path);
        }
        event->acceptProposedAction();
    }
}

void MainWindow::applyLimits() {
    // Saved limits, else the WorkerClient's defaults (3/4 of RAM; 2 minutes to load, 5 to run).
    QSettings settings;
    worker_->setMemoryLimitMb(
        settings.value(QStringLiteral("limits/memoryMb"), worker_->memoryLimitMb()).toLongLong());
    worker_->setLoadTimeout(
        settings.value(QStringLiteral("limits/loadSeconds"), worker_->loadTimeout() / 1000)
            .toInt() *
        1000);
    worker_->setRunTimeout(
        settings.value(QStringLiteral("limits/runSeconds"), worker_->runTimeout() / 1000).toInt() *
        1000);
}

void MainWindow::editLimits() {
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Limits for models"));
    auto* form = new QFormLayout(&dialog);
    auto* note =
        new QLabel(tr("Models load and run in a separate worker process. When it goes past "
                      "a limit it is ended, the window says which limit, and the next "
                      "request starts a new worker."),
                   &dialog);
    note->setWordWrap(true);
    form->addRow(note);
    auto* memory = new QSpinBox(&dialog);
    memory->setRange(256, 1 << 24);
    memory->setSuffix(tr(" MiB"));
    memory->setValue(static_cast<int>(worker_->memoryLimitMb()));
    auto* load = new QSpinBox(&dialog);
    load->setRange(5, 24 * 3600);
    load->setSuffix(tr(" s"));
    load->setValue(worker_->loadTimeout() / 1000);
    auto* run = new QSpinBox(&dialog);
    run->setRange(5, 24 * 3600);
    run->setSuffix(tr(" s"));
    run->setValue(worker_->runTimeout() / 1000);
    form->addRow(tr("Memory (address space)"), memory);
    form->addRow(tr("Time to load"), load);
    form->addRow(tr("Time to run (all iterations)"), run);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("limits/memoryMb"), memory->value());
    settings.setValue(QStringLiteral("limits/loadSeconds"), load->value());
    settings.setValue(QStringLiteral("limits/runSeconds"), run->value());
    applyLimits();
    statusBar()->showMessage(tr("New limits apply from the next worker (after a Cancel, a crash or "
                                "File > Reload)"),
                             10000);
}

void MainWindow::previewWithoutRunning(const QString& path) {
    if (!safePreview_) {
        safePreview_ = new SafePreview(this);
    }
    previewRequest_ = worker_->probe(QFileInfo(path).absoluteFilePath());
    setBusy(true, tr("Reading %1 without running it").arg(QFileInfo(path).fileName()));
}

QString MainWindow::lastSessionModel() {
    const QString path = QSettings().value(QStringLiteral("session/model")).toString();
    return !path.isEmpty() && QFileInfo(path).isFile() ? path : QString();
}

QString MainWindow::sandboxText() const {
    return statusSandbox_->text() + QLatin1Char('\n') + statusSandbox_->toolTip();
}

void MainWindow::restoreWarpSession(const QString& demoImage, const QString& demoMatrix,
                                    const QSize& demoOutputSize) {
    const QString saved = QSettings().value(QStringLiteral("warp/session")).toString();
    const QJsonObject session = QJsonDocument::fromJson(saved.toUtf8()).object();
    warpEditor_->restoreSession(session, demoImage);
    if (session.isEmpty() && !demoMatrix.isEmpty() && warpEditor_->loadMatrix(demoMatrix)) {
        // The first start shows the demo ready to run: its photo and the warp that rectifies it.
        if (demoOutputSize.isValid()) {
            WarpState state = warpEditor_->state();
            state.outputSize = OutputSize::Custom;
            state.outputWidth = demoOutputSize.width();
            state.outputHeight = demoOutputSize.height();
            warpEditor_->applyState(state, tr("Demo page size"));
        }
        warpEditor_->undoStack()->clear();
        warpEditor_->fitViews();
    }
}

bool MainWindow::showWorkspace(const QString& name) {
    const QString key = name.toLower();
    QWidget* page = key == QLatin1String("model")  ? static_cast<QWidget*>(pages_)
                    : key == QLatin1String("warp") ? static_cast<QWidget*>(warpEditor_)
                    : key == QLatin1String("run")  ? static_cast<QWidget*>(runPanel_)
                                                   : nullptr;
    if (!page) {
        return false;
    }
    workspaces_->setCurrentWidget(page);
    return true;
}

} // namespace scriptscope
