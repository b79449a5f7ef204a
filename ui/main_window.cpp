#include "main_window.h"

#include "elided_label.h"
#include "error_banner.h"
#include "help_window.h"
#include "model_workspace.h"
#include "numerics_panel.h"
#include "operator_libraries.h"
#include "problem_label.h"
#include "run_panel.h"
#include "safe_preview.h"
#include "warp_editor.h"
#include "wheel_guard.h"
#include "worker_client.h"

#include <format.h>
#include <model_files.h>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFrame>
#include <QHBoxLayout>
#include <QImageReader>
#include <QJsonDocument>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTime>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include <map>
#include <utility>

namespace scriptscope {

namespace {

constexpr int kMaxRecent = 10;

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

MainWindow::MainWindow(WorkerClient* worker, QWidget* parent)
    : QMainWindow(parent)
    , worker_(worker) {
    setWindowTitle(QStringLiteral("ScriptScope"));
    setAcceptDrops(true);
    WheelGuard::install();
    buildUi();
    buildMenus();

    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    modelWorkspace_->restoreSplitterState(
        settings.value(QStringLiteral("window/splitter")).toByteArray());
    applyTheme(settings.value(QStringLiteral("theme"), QStringLiteral("system")).toString());
    applyLimits();
    updateRecentMenu();
    // Format libraries (SCRIPTSCOPE_FORMAT_LIBRARIES) are loaded by the worker, which names their
    // formats when it starts: started now, so that the first File dialog offers them.
    if (qEnvironmentVariableIsSet("SCRIPTSCOPE_FORMAT_LIBRARIES")) {
        QString why;
        (void)worker_->start(why); // a worker that cannot start says so at the first request
    }

    watcher_ = new QFileSystemWatcher(this);
    reloadTimer_ = new QTimer(this);
    reloadTimer_->setSingleShot(true);
    reloadTimer_->setInterval(400); // torch.jit.save writes in steps: wait for it to finish
    connect(watcher_, &QFileSystemWatcher::fileChanged, reloadTimer_, qOverload<>(&QTimer::start));
    connect(reloadTimer_, &QTimer::timeout, this, [this]() {
        if (!currentFile_.isEmpty() && QFileInfo::exists(currentFile_)) {
            reloadingFromDisk_ = true;
            reload();
        }
    });

    connect(worker_, &WorkerClient::loaded, this, [this](quint64 id, const ModelInfo& info) {
        if (id == loadRequest_) {
            showModel(info);
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
        if (id == loadRequest_) {
            showError(error);
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
    connect(worker_, &WorkerClient::buildKnown, this,
            [this](const QStringList& lines) { workerBuild_ = lines; });
    connect(worker_, &WorkerClient::progress, this,
            [this](quint64, const QString& stage, const QString& detail) {
                progress_->setFormat(stage + QStringLiteral(" ") + QFileInfo(detail).fileName());
            });
    connect(worker_, &WorkerClient::busyChanged, this, [this](bool busy) { setBusy(busy); });
}

MainWindow::~MainWindow() = default;

void MainWindow::showStatusMessage(const QString& text, int timeoutMs) {
    // QStatusBar clips a long message mid-word: elide it to the room left of the permanent
    // widgets, and keep the whole text in the tooltip while it shows.
    int room = statusBar()->width() - 24;
    for (QWidget* permanent :
         {static_cast<QWidget*>(progress_), static_cast<QWidget*>(cancel_),
          static_cast<QWidget*>(statusRuntime_), static_cast<QWidget*>(statusSandbox_)}) {
        if (permanent && permanent->isVisible()) {
            room -= permanent->width() + 8;
        }
    }
    const QString shown =
        statusBar()->fontMetrics().elidedText(text, Qt::ElideRight, std::max(room, 80));
    statusBar()->setToolTip(shown == text ? QString() : text);
    statusBar()->showMessage(shown, timeoutMs);
}

QSize MainWindow::openingSize(const QSize& saved, const QSize& preferred, const QSize& available) {
    const QSize largest(available.width() * 95 / 100, available.height() * 95 / 100);
    const QSize usual = preferred.boundedTo(largest);
    if (saved.isEmpty()) {
        return usual;
    }
    // A size saved at another scale (QT_SCALE_FACTOR=2 leaves a 960x540 screen) is no size for
    // this one: a window under two thirds of the usual one opens at the usual size.
    const QSize size = saved.boundedTo(largest);
    if (size.width() < usual.width() * 2 / 3 || size.height() < usual.height() * 2 / 3) {
        return usual;
    }
    return size;
}

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
    const QSize size = openingSize(saved ? this->size() : QSize(), preferred, available.size());
    resize(size);
    if (!saved || !available.contains(frameGeometry())) {
        move(available.center() - QPoint(size.width() / 2, size.height() / 2));
    }
}

void MainWindow::buildUi() {
    modelWorkspace_ = new ModelWorkspace(worker_, this);
    connect(modelWorkspace_, &ModelWorkspace::openRequested, this, [this](const QString& path) {
        if (!path.isEmpty()) {
            openFile(path);
        } else {
            chooseFile();
        }
    });
    connect(modelWorkspace_, &ModelWorkspace::libraryRequested, this,
            [this](const QString& suggested) {
                if (suggested.isEmpty()) {
                    chooseOperatorLibrary();
                } else {
                    addOperatorLibrary(suggested);
                }
            });
    connect(modelWorkspace_, &ModelWorkspace::previewRequested, this,
            [this]() { previewWithoutRunning(pendingFile_); });
    connect(modelWorkspace_, &ModelWorkspace::statisticsShown, this, &MainWindow::statisticsShown);
    connect(modelWorkspace_, &ModelWorkspace::errorShown, this, &MainWindow::errorShown);

    // Workspaces: the model inspector and the warp editor.
    workspaces_ = new QTabWidget(this);
    workspaces_->setDocumentMode(true);
    workspaces_->addTab(modelWorkspace_, tr("Model"));
    warpEditor_ = new WarpEditor(workspaces_);
    workspaces_->addTab(warpEditor_, tr("Warp"));
    runPanel_ = new RunPanel(worker_, warpEditor_, workspaces_);
    workspaces_->addTab(runPanel_, tr("Run"));
    connect(runPanel_, &RunPanel::profileReady, modelWorkspace_, &ModelWorkspace::setProfile);
    connect(runPanel_, &RunPanel::runShown, modelWorkspace_, &ModelWorkspace::setControlFlow);
    connect(runPanel_, &RunPanel::modelCornersUsed, this,
            [this]() { workspaces_->setCurrentWidget(warpEditor_); });
    numericsPanel_ = new NumericsPanel(worker_, runPanel_, modelWorkspace_, workspaces_);
    numericsPanel_->setObjectName(QStringLiteral("numericsPanel"));
    workspaces_->addTab(numericsPanel_, tr("Numerics"));
    connect(runPanel_, &RunPanel::firstNonFiniteRequested, this, [this]() {
        workspaces_->setCurrentWidget(numericsPanel_);
        numericsPanel_->findFirstNonFinite();
    });
    connect(numericsPanel_, &NumericsPanel::showModelWorkspace, this,
            [this]() { workspaces_->setCurrentWidget(modelWorkspace_); });

    // A file that would not open is said wherever the person is: the Model workspace has its own
    // banner; over the other workspaces this one says it, with the way to the details.
    openBanner_ = new QFrame(this);
    openBanner_->setObjectName(QStringLiteral("openErrorBanner"));
    auto* bannerLayout = new QHBoxLayout(openBanner_);
    openBannerText_ = new QLabel(openBanner_);
    paintAsErrorBanner(openBanner_, openBannerText_);
    openBannerText_->setWordWrap(true);
    openBannerText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bannerLayout->addWidget(openBannerText_, 1);
    // A missing operator is fixed from here too: its library loaded, and the model opened again.
    openBannerLibrary_ = new QPushButton(tr("Load Operator Library…"), openBanner_);
    openBannerLibrary_->setObjectName(QStringLiteral("openBannerLibrary"));
    openBannerLibrary_->hide();
    connect(openBannerLibrary_, &QPushButton::clicked, this, [this]() {
        const QString suggested = openBannerLibrary_->property("library").toString();
        if (suggested.isEmpty()) {
            chooseOperatorLibrary();
        } else {
            addOperatorLibrary(suggested);
        }
    });
    bannerLayout->addWidget(openBannerLibrary_);
    auto* details = new QPushButton(tr("Show in the Model workspace"), openBanner_);
    connect(details, &QPushButton::clicked, this,
            [this]() { workspaces_->setCurrentWidget(modelWorkspace_); });
    bannerLayout->addWidget(details);
    auto* dismiss = new QPushButton(tr("Dismiss"), openBanner_);
    connect(dismiss, &QPushButton::clicked, openBanner_, &QWidget::hide);
    bannerLayout->addWidget(dismiss);
    openBanner_->hide();
    connect(workspaces_, &QTabWidget::currentChanged, this, [this]() {
        if (workspaces_->currentWidget() == modelWorkspace_) {
            openBanner_->hide(); // the Model workspace shows the same message in its banner
        }
    });
    buildLibraryBanner();
    auto* central = new QWidget(this);
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(openBanner_);
    centralLayout->addWidget(libraryBanner_);
    centralLayout->addWidget(workspaces_, 1);
    setCentralWidget(central);
    connect(warpEditor_, &WarpEditor::sessionChanged, this, [this]() {
        // Written (and synced) as it changes, so that a crash loses nothing.
        QSettings settings;
        settings.setValue(
            QStringLiteral("warp/session"),
            QString::fromUtf8(
                QJsonDocument(warpEditor_->session()).toJson(QJsonDocument::Compact)));
        settings.sync();
    });

    statusFile_ = new ElidedLabel(this, Qt::ElideMiddle);
    statusFile_->setObjectName(QStringLiteral("fileStatus"));
    statusModel_ = new ElidedLabel(this);
    statusModel_->setObjectName(QStringLiteral("modelStatus"));
    statusRuntime_ = new QLabel(this);
    statusRuntime_->setObjectName(QStringLiteral("runtimeStatus"));
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
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString& message) {
        if (message.isEmpty()) {
            statusBar()->setToolTip({});
        }
    });
    connect(worker_, &WorkerClient::sandboxKnown, this,
            [this](bool confined, const QString& summary, const QStringList& notes) {
                statusSandbox_->setText(confined ? tr("Untrusted code · sandboxed")
                                                 : tr("Untrusted code · partly sandboxed"));
                setTextColour(statusSandbox_, confined ? QColor() : QColor(0xb2, 0x6a, 0x00));
                statusSandbox_->setToolTip(
                    tr("<p>A TorchScript archive is a program: loading and running it executes its "
                       "code. Open only archives you trust (PyTorch's own advice).</p><p>Models "
                       "run in a separate worker process with a memory and a time limit. %1</p>%2"
                       "<p>It can still read any file you can read.</p>")
                        .arg(summary.toHtmlEscaped(),
                             notes.isEmpty()
                                 ? QString()
                                 : QStringLiteral("<p>Not applied: ") +
                                       notes.join(QStringLiteral("; ")).toHtmlEscaped() +
                                       QStringLiteral("</p>")));
            });
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this]() { chooseFile(); });
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Preview Without Running…"), this, [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Preview an archive without running it"), {}, modelFileDialogFilter());
        if (!path.isEmpty()) {
            previewWithoutRunning(path);
        }
    });
    file->addAction(tr("&Reload"), QKeySequence::Refresh, this, [this]() { reload(); });
    file->addAction(tr("Load Operator &Library…"), this, [this]() { chooseOperatorLibrary(); });
    file->addAction(tr("Operator Li&braries…"), this, [this]() { editOperatorLibraries(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    file->insertAction(file->actions().constLast(),
                       file->addAction(tr("&Limits…"), this, [this]() { editLimits(); }));
    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Expand All"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Plus),
                    modelWorkspace_, &ModelWorkspace::expandAll);
    view->addAction(tr("&Collapse All"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Minus),
                    modelWorkspace_, &ModelWorkspace::collapseAll);
    view->addAction(tr("&Filter Modules"), QKeySequence(Qt::CTRL | Qt::Key_L), this, [this]() {
        workspaces_->setCurrentWidget(modelWorkspace_);
        modelWorkspace_->focusFilter();
    });
    const QStringList tabs = modelWorkspace_->tabNames();
    for (int i = 0; i < tabs.size(); ++i) {
        view->addAction(tabs[i],
                        QKeySequence(QKeyCombination(Qt::ALT, static_cast<Qt::Key>(Qt::Key_1 + i))),
                        this, [this, i]() { modelWorkspace_->showTab(i); });
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
    help->addAction(tr("&Keyboard Shortcuts"), QKeySequence::HelpContents, this,
                    [this]() { showHelp(HelpWindow::kShortcutsPage); });
    help->addAction(tr("&User Guide"), this, [this]() { showHelp(tr("The inspector")); });
    help->addSeparator();
    help->addAction(tr("&About ScriptScope"), this, &MainWindow::showAbout);

    // Esc cancels what the worker is doing (a load, a run, a playing source), from anywhere in
    // the window; bound only while there is something to cancel, so that Esc keeps its other uses.
    cancelAction_ = new QAction(tr("Cancel"), this);
    cancelAction_->setShortcut(QKeySequence(Qt::Key_Escape));
    cancelAction_->setShortcutContext(Qt::WindowShortcut);
    cancelAction_->setEnabled(false);
    connect(cancelAction_, &QAction::triggered, this, [this]() {
        runPanel_->cancel();
        worker_->cancel();
    });
    addAction(cancelAction_);
}

void MainWindow::openFile(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    pendingFile_ = absolute;
    reselectPath_ = absolute == currentFile_ ? modelWorkspace_->selectedModulePath() : QString();
    setBusy(true, tr("Opening %1").arg(QFileInfo(absolute).fileName()));
    // The last open's failure is not this one's.
    // What the status bar said belongs to the model before (a failed open, its notes): it goes.
    statusBar()->clearMessage();
    loadRequest_ = worker_->load(absolute, operator_libraries::remembered());
}

void MainWindow::reload() {
    if (!currentFile_.isEmpty()) {
        openFile(currentFile_);
    }
}

void MainWindow::showModel(const ModelInfo& info) {
    const bool otherModel = pendingFile_ != currentFile_;
    model_ = info;
    if (!currentFile_.isEmpty() && currentFile_ != pendingFile_) {
        watcher_->removePath(currentFile_);
    }
    currentFile_ = pendingFile_;
    if (!watcher_->files().contains(currentFile_)) {
        watcher_->addPath(currentFile_);
    }
    addRecent(currentFile_);
    showRefusedLibraries(info);
    runPanel_->setModel(info);
    numericsPanel_->setModel(info, otherModel);
    {
        // The session: after a restart (or a crash of this window) the same model comes back.
        QSettings settings;
        settings.setValue(QStringLiteral("session/model"), currentFile_);
        settings.sync();
    }
    setWindowTitle(QStringLiteral("%1 — ScriptScope").arg(QFileInfo(currentFile_).fileName()));
    modelWorkspace_->showModel(info, reselectPath_, otherModel);
    openBanner_->hide();
    // What the status bar said belongs to the model before (a failed open, its notes): it goes.
    statusBar()->clearMessage();
    QStringList notes;
    if (std::exchange(reloadingFromDisk_, false) && !otherModel) {
        // Saved again from Python: the new model shows, and the person is told why it changed.
        notes << tr("%1 changed on disk and was reloaded at %2")
                     .arg(QFileInfo(currentFile_).fileName(),
                          QLocale().toString(QTime::currentTime(), QLocale::ShortFormat));
    }
    for (const auto& note : info.probe.notes) {
        notes << q(note);
    }
    if (!notes.isEmpty()) {
        showStatusMessage(notes.join(QStringLiteral("; ")), 20000);
    }
    statusFile_->setFullText(
        QStringLiteral("%1 (%2)").arg(currentFile_, q(formatBytes(info.probe.fileSize))));
    statusModel_->setFullText(
        tr("%1 modules, %2 parameters (%3), %4 methods")
            .arg(info.modules.size())
            .arg(QLocale().toString(static_cast<qulonglong>(info.parameterCount)))
            .arg(q(formatBytes(info.parameterBytes)))
            .arg(info.methodCount));
    Q_EMIT modelShown(currentFile_);
}

void MainWindow::showError(const Error& error) {
    reloadingFromDisk_ = false;
    QString message = q(error.message);
    if (!model_.modules.empty() && pendingFile_ != currentFile_) {
        message += tr("\nStill showing %1.").arg(QFileInfo(currentFile_).fileName());
    }
    // An archive that would not load (damaged, too new, crashing LibTorch) can still be read.
    const bool archiveProblem =
        error.kind == ErrorKind::Format || error.kind == ErrorKind::Version ||
        error.kind == ErrorKind::MissingOperator || error.kind == ErrorKind::NeedsNewerLibTorch ||
        error.kind == ErrorKind::Crashed || error.kind == ErrorKind::TimedOut ||
        error.kind == ErrorKind::OutOfMemory;
    modelWorkspace_->showError(error, message, archiveProblem && QFileInfo(pendingFile_).isFile());
    const QString name = QFileInfo(pendingFile_).fileName();
    const QString firstLine = message.section(QLatin1Char('\n'), 0, 0);
    showStatusMessage(tr("Could not open %1: %2").arg(name, firstLine));
    if (workspaces_->currentWidget() != modelWorkspace_) {
        openBannerText_->setText(tr("Could not open %1. %2").arg(name, message));
        const QString library = q(error.library);
        openBannerLibrary_->setProperty("library", library);
        openBannerLibrary_->setText(library.isEmpty()
                                        ? tr("Load Operator Library…")
                                        : tr("Load %1").arg(QFileInfo(library).fileName()));
        openBannerLibrary_->setToolTip(library);
        openBannerLibrary_->setVisible(error.kind == ErrorKind::MissingOperator);
        openBanner_->show();
    }
    if (error.kind == ErrorKind::OperatorLibrary && !error.library.empty()) {
        // A remembered library crashed the worker: it must not do so at every open.
        showLibraryProblem(q(error.library), message.section(QLatin1Char('\n'), 0, 0));
    }
    // Saved by a newer PyTorch: this build can never load it, but its tree, code and records can
    // be read without running anything, so they are shown at once.
    if (error.kind == ErrorKind::NeedsNewerLibTorch && QFileInfo(pendingFile_).isFile()) {
        previewWithoutRunning(pendingFile_);
    }
}

void MainWindow::chooseFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a PyTorch archive"),
                                                      QFileInfo(currentFile_).absolutePath(),
                                                      modelFileDialogFilter());
    if (!path.isEmpty()) {
        openFile(path);
    }
}

void MainWindow::selectModule(const QString& path) {
    modelWorkspace_->selectModule(path);
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
    for (const auto& path : recent) {
        recentMenu_->addAction(path, this, [this, path]() { openFile(path); });
    }
    modelWorkspace_->setRecentFiles(recent);
    recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::setBusy(bool busy, const QString& what) {
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    cancelAction_->setEnabled(busy);
    if (!what.isEmpty()) {
        progress_->setFormat(what);
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/splitter"), modelWorkspace_->splitterState());
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
    QWidget* page = key == QLatin1String("model")      ? static_cast<QWidget*>(modelWorkspace_)
                    : key == QLatin1String("warp")     ? static_cast<QWidget*>(warpEditor_)
                    : key == QLatin1String("run")      ? static_cast<QWidget*>(runPanel_)
                    : key == QLatin1String("numerics") ? static_cast<QWidget*>(numericsPanel_)
                                                       : nullptr;
    if (!page) {
        return false;
    }
    workspaces_->setCurrentWidget(page);
    return true;
}

QString MainWindow::openErrorBannerText() const {
    return openBanner_->isVisibleTo(this) ? openBannerText_->text() : QString();
}

} // namespace scriptscope
