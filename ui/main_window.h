// The main window: the menus, the three workspaces (Model, Warp, Run), the worker's wiring (open,
// reload, errors) and the status bar. Everything that loads or runs a model goes through the
// WorkerClient.
#pragma once

#include <model_info.h>
#include <run_types.h>

#include <QMainWindow>
#include <QStringList>

class QFileSystemWatcher;
class QFrame;
class QLabel;

namespace scriptscope {
class ElidedLabel;
}
class QLineEdit;
class QComboBox;
class QCheckBox;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QStandardItemModel;
class QTabWidget;
class QTimer;
class QTreeView;
class QListWidget;
class QPlainTextEdit;
class QMenu;
class QAction;

namespace scriptscope {

class CodeView;
class HelpWindow;
class WarpEditor;
class NumericsPanel;
class RunPanel;
class SafePreview;
class ModelWorkspace;
class WorkerClient;
struct Error;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(WorkerClient* worker, QWidget* parent = nullptr);
    ~MainWindow() override;

    void openFile(const QString& path);
    // The warp editor's last session; without one, the demo image with the demo's matrix (when
    // given). A session whose image is gone falls back to the demo image.
    void restoreWarpSession(const QString& demoImage, const QString& demoMatrix = {},
                            const QSize& demoOutputSize = {});
    // "model", "warp" or "run".
    bool showWorkspace(const QString& name);
    // The model the last session showed, when it is still there.
    static QString lastSessionModel();
    // Reads an archive without running anything and shows what it holds (File > Preview Without
    // Running).
    void previewWithoutRunning(const QString& path);
    SafePreview* safePreview() const { return safePreview_; }
    WarpEditor* warpEditor() const { return warpEditor_; }
    RunPanel* runPanel() const { return runPanel_; }
    NumericsPanel* numericsPanel() const { return numericsPanel_; }
    QTabWidget* workspaces() const { return workspaces_; }
    void reload();
    void selectModule(const QString& path);

    // Sizes the window to `preferred` (or the saved size), within the screen's available area.
    void placeOnScreen(const QSize& preferred);
    // The size placeOnScreen gives: the saved one (empty: none) within 95% of the available area;
    // one under two thirds of the usual size (saved at another scale: QT_SCALE_FACTOR=2 leaves a
    // quarter of the screen) gives the usual size, `preferred` within that area.
    static QSize openingSize(const QSize& saved, const QSize& preferred, const QSize& available);
    // A message in the status bar, elided to fit (whole in the tooltip); 0 ms: until replaced.
    void showStatusMessage(const QString& text, int timeoutMs = 0);

    // Help > About: the version, and what ScriptScope and its worker were built with (LibTorch,
    // whether CUDA is compiled in and usable, OpenCV, Qt), as a bug report needs it.
    QString aboutText() const;
    // The failed open's message over a workspace other than Model; empty when none shows.
    QString openErrorBannerText() const;
    // The banner about a remembered operator library that was not loaded; empty when none shows.
    QString libraryBannerText() const;

    ModelWorkspace* modelWorkspace() const { return modelWorkspace_; }
    HelpWindow* helpWindow() const { return help_; }
    QAction* cancelAction() const { return cancelAction_; }
    QString currentFile() const { return currentFile_; }
    const ModelInfo& model() const { return model_; }

Q_SIGNALS:
    void statisticsShown();
    void modelShown(const QString& path);
    void errorShown(const QString& message);
    void previewShown(const QString& path);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildUi();
    void buildMenus();
    void applyLimits();
    void editLimits();
    void showModel(const ModelInfo& info);
    void showError(const Error& error);
    void chooseFile();
    void addRecent(const QString& path);
    void updateRecentMenu();
    void setBusy(bool busy, const QString& what = {});
    // The file dialog starts beside `near` (a library a message named), else where the last one
    // was chosen.
    void chooseOperatorLibrary(const QString& near = {});
    void addOperatorLibrary(const QString& path);
    void editOperatorLibraries();
    void buildLibraryBanner();
    // A remembered library that was not loaded, or crashed the worker: the banner with Forget.
    void showLibraryProblem(const QString& library, const QString& why);
    void showRefusedLibraries(const ModelInfo& info);
    void applyTheme(const QString& theme);
    void showAbout();
    // Help: the shortcuts page, or a section of the README.
    void showHelp(const QString& page);

    WorkerClient* worker_;
    ModelInfo model_;
    QString currentFile_;
    QStringList workerBuild_;      // the worker's buildDescription(), once it has started
    QFrame* openBanner_ = nullptr; // a failed open, over the workspaces other than Model
    QLabel* openBannerText_ = nullptr;
    QString pendingFile_;
    QString reselectPath_;
    QPushButton* openBannerLibrary_ = nullptr; // loads the missing operator's library
    QFrame* libraryBanner_ = nullptr;          // a remembered library that was not loaded
    QLabel* libraryBannerText_ = nullptr;
    bool reloadingFromDisk_ = false; // the open under way: the file was saved again
    QString justAddedLibrary_;       // chosen for the open under way: refused, it is not remembered
    quint64 loadRequest_ = 0;

    ModelWorkspace* modelWorkspace_ = nullptr;
    QTabWidget* workspaces_ = nullptr;
    WarpEditor* warpEditor_ = nullptr;
    RunPanel* runPanel_ = nullptr;
    NumericsPanel* numericsPanel_ = nullptr;
    SafePreview* safePreview_ = nullptr;
    quint64 previewRequest_ = 0;
    ElidedLabel* statusFile_ = nullptr; // the path elided in the middle, whole in the tooltip
    ElidedLabel* statusModel_ = nullptr;
    QLabel* statusRuntime_ = nullptr;
    QLabel* statusSandbox_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QAction* cancelAction_ = nullptr; // Esc, while the worker is busy
    HelpWindow* help_ = nullptr;
    QFileSystemWatcher* watcher_ = nullptr;
    QTimer* reloadTimer_ = nullptr;
};

} // namespace scriptscope
