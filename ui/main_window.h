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

namespace scriptscope {

class CodeView;
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

    ModelWorkspace* modelWorkspace() const { return modelWorkspace_; }
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
    void chooseOperatorLibrary();
    void addOperatorLibrary(const QString& path);
    void applyTheme(const QString& theme);
    void showAbout();

    WorkerClient* worker_;
    ModelInfo model_;
    QString currentFile_;
    QStringList workerBuild_;      // the worker's buildDescription(), once it has started
    QFrame* openBanner_ = nullptr; // a failed open, over the workspaces other than Model
    QLabel* openBannerText_ = nullptr;
    QString pendingFile_;
    QString reselectPath_;
    QStringList operatorLibraries_;
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
    QFileSystemWatcher* watcher_ = nullptr;
    QTimer* reloadTimer_ = nullptr;
};

} // namespace scriptscope
