// The inspector's main window: module tree, details, code, graph IR and archive views of the model
// the worker loaded. Everything that loads or runs a model goes through the WorkerClient.
#pragma once

#include <model_info.h>
#include <run_types.h>

#include <QMainWindow>
#include <QStringList>

class QFileSystemWatcher;
class QLabel;
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
class RunPanel;
class SafePreview;
class ModuleTreeModel;
class ModuleFilterModel;
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
    QTabWidget* workspaces() const { return workspaces_; }
    void reload();
    void selectModule(const QString& path);

    // Sizes the window to `preferred` (or the saved size), within the screen's available area.
    void placeOnScreen(const QSize& preferred);

    // For tests and screenshots.
    QString currentFile() const { return currentFile_; }
    QLineEdit* moduleFilter() const { return filter_; }
    CodeView* codeView() const { return code_; }
    CodeView* graphView() const { return graph_; }
    QString errorText() const;
    QString codeText() const;
    QString graphText() const;
    QTreeView* moduleTree() const { return tree_; }
    QTabWidget* tabs() const { return tabs_; }
    const ModelInfo& model() const { return model_; }
    QStandardItemModel* detailsModel() const { return detailsModel_; }
    QStandardItemModel* recordsModel() const { return recordsModel_; }
    QStandardItemModel* operatorsModel() const { return operatorsModel_; }
    QString runtimeText() const;
    QString sandboxText() const;
    QString bannerActionText() const;
    // Asks the worker for the selected module's tensor statistics (the Details tab's button).
    void requestStatistics();

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
    void clearError();
    void showModuleDetails();
    void showCode();
    void showGraph();
    void fillArchive(const ProbeResult& probe);
    void addRecent(const QString& path);
    void updateRecentMenu();
    void setBusy(bool busy, const QString& what = {});
    void chooseOperatorLibrary();
    void addOperatorLibrary(const QString& path);
    void showStatistics(const std::vector<OutputValue>& values);
    void applyTheme(const QString& theme);
    QString selectedModulePath() const;
    const ModuleInfo* selectedModule() const;

    WorkerClient* worker_;
    ModelInfo model_;
    QString currentFile_;
    QString pendingFile_;
    QString reselectPath_;
    QStringList operatorLibraries_;
    quint64 loadRequest_ = 0;
    quint64 graphRequest_ = 0;
    quint64 statisticsRequest_ = 0;
    QString inlinedGraph_; // of the shown model's forward, once the worker has printed it
    QString suggestedLibrary_;

    QTabWidget* workspaces_ = nullptr;
    WarpEditor* warpEditor_ = nullptr;
    RunPanel* runPanel_ = nullptr;
    SafePreview* safePreview_ = nullptr;
    quint64 previewRequest_ = 0;
    QStackedWidget* pages_ = nullptr;
    QListWidget* startRecent_ = nullptr;
    QLabel* banner_ = nullptr;
    QPushButton* bannerAction_ = nullptr;
    QPushButton* bannerPreview_ = nullptr;
    QPushButton* statisticsButton_ = nullptr;
    QSplitter* splitter_ = nullptr;
    QLineEdit* filter_ = nullptr;
    QTreeView* tree_ = nullptr;
    ModuleTreeModel* treeModel_ = nullptr;
    ModuleFilterModel* treeProxy_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QLabel* detailsHeader_ = nullptr;
    QTreeView* details_ = nullptr;
    QStandardItemModel* detailsModel_ = nullptr;
    QComboBox* codeMethod_ = nullptr;
    CodeView* code_ = nullptr;
    QComboBox* graphMethod_ = nullptr;
    QCheckBox* inlined_ = nullptr;
    CodeView* graph_ = nullptr;
    QLabel* archiveSummary_ = nullptr;
    QTreeView* records_ = nullptr;
    QStandardItemModel* recordsModel_ = nullptr;
    QTreeView* operators_ = nullptr;
    QStandardItemModel* operatorsModel_ = nullptr;
    QListWidget* extraFiles_ = nullptr;
    QPlainTextEdit* extraContent_ = nullptr;
    QLabel* statusFile_ = nullptr;
    QLabel* statusModel_ = nullptr;
    QLabel* statusRuntime_ = nullptr;
    QLabel* statusSandbox_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QFileSystemWatcher* watcher_ = nullptr;
    QTimer* reloadTimer_ = nullptr;
};

} // namespace scriptscope
