// The Model workspace: the start page until a model is open, then the inspector: the module tree
// with its filter, the selected module's details, its code and graph IR (or the whole model's
// inlined graph), and the archive as read without running it; an error banner above them. The
// worker prints the inlined graph and computes statistics on request.
#pragma once

#include "graph_diagram.h"

#include <graph_model.h>
#include <model_info.h>
#include <run_types.h>

#include <QStackedWidget>

#include <map>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTreeView;

namespace scriptscope {

class ArchiveView;
class CodeView;
class DetailsView;
class GraphDiagram;
class MemoryView;
class ModuleFilterModel;
class ModuleTreeModel;
class WorkerClient;
struct Error;

class ModelWorkspace : public QStackedWidget {
    Q_OBJECT

public:
    explicit ModelWorkspace(WorkerClient* worker, QWidget* parent = nullptr);
    ~ModelWorkspace() override;

    // The model the worker loaded. A reload keeps `reselect` selected; another model starts
    // afresh (filter, selection, details, code, graph).
    void showModel(const ModelInfo& info, const QString& reselect, bool otherModel);
    // The banner: the message, the library that defines a missing operator (offered), and
    // whether reading the archive without running it is offered.
    void showError(const Error& error, const QString& message, bool offerPreview);
    void clearError();
    QString errorText() const;
    void setRecentFiles(const QStringList& paths);
    // Per-module times of a profiled run: the tree's Time column.
    void setProfile(const RunProfile& profile);
    // A run of the shown model: its control flow marked on the diagram's blocks (a .pt2's
    // forward), until the next run or another model.
    void setControlFlow(const RunResult& run);

    // Paints the whole model's inlined graph by a value per node (the Numerics workspace's
    // statistic); an empty overlay removes it. Cleared when another model is shown.
    void setValueOverlay(const GraphDiagram::ValueOverlay& overlay);
    // Shows node `node` of the whole model's inlined forward graph: the Graph tab, the diagram
    // with the node selected (its IR line and its module with it), once the diagram is there.
    void showForwardNode(int node);

    void selectModule(const QString& path);
    QString selectedModulePath() const;
    const ModuleInfo* selectedModule() const;
    // The module whose methods the Code and Graph tabs show for `module`: itself, or, where it has
    // none of its own (an ExecuTorch delegate, a container), the nearest one around it that has.
    const ModuleInfo* methodOwner(const ModuleInfo* module) const;
    // Asks the worker for the selected module's tensor statistics (the Details tab's button).
    void requestStatistics();

    void expandAll();
    void collapseAll();
    void focusFilter();
    void showTab(int index);
    QStringList tabNames() const;
    QByteArray splitterState() const;
    GraphDiagram* diagram() const;
    CodeView* graphText() const;
    CodeView* codeText() const;
    void restoreSplitterState(const QByteArray& state);

Q_SIGNALS:
    void openRequested(const QString& path);         // empty: let the person choose
    void libraryRequested(const QString& suggested); // empty: let the person choose
    void previewRequested();
    void statisticsShown();
    void errorShown(const QString& message);

private:
    void showSelection();
    void showCode();
    void showGraph();
    void showDiagramFor(const QString& key);
    void showNodeInText(int node);
    void selectPendingNode();
    void selectNodeAtTextLine(int line);
    // Puts the IR text's cursor on a line, or on it once a long text has arrived there.
    void showIrLine(int line);

    WorkerClient* worker_;
    ModelInfo model_;
    quint64 graphRequest_ = 0;
    quint64 statisticsRequest_ = 0;
    QString inlinedGraph_; // of the shown model's forward, once the worker has printed it
    QString suggestedLibrary_;

    QListWidget* startRecent_ = nullptr;
    QLabel* banner_ = nullptr;
    QPushButton* bannerAction_ = nullptr;
    QPushButton* bannerPreview_ = nullptr;
    QSplitter* splitter_ = nullptr;
    QLineEdit* filter_ = nullptr;
    QTreeView* tree_ = nullptr;
    ModuleTreeModel* treeModel_ = nullptr;
    ModuleFilterModel* treeProxy_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    DetailsView* details_ = nullptr;
    QComboBox* codeMethod_ = nullptr;
    CodeView* code_ = nullptr;
    QComboBox* graphMethod_ = nullptr;
    QCheckBox* inlined_ = nullptr;
    CodeView* graph_ = nullptr;
    QSplitter* graphSplitter_ = nullptr;
    QWidget* graphPage_ = nullptr;
    GraphDiagram* diagram_ = nullptr;
    // of this model, by "PATH/METHOD" or "\nforward"
    std::map<QString, std::shared_ptr<const GraphModel>> diagrams_;
    quint64 diagramRequest_ = 0;
    QString diagramKey_;   // what diagramRequest_ asked for
    QString diagramShown_; // what the diagram shows
    std::map<int, int> nodeOfIrLine_;
    bool syncingText_ = false;
    RunProfile profile_;                 // the shown model's last profiled run
    std::vector<ControlFlowRun> flow_;   // and its last run's control flow
    GraphDiagram::ValueOverlay overlay_; // of the shown model
    int pendingNode_ = -1;               // to select once the diagram pendingKey_ names is shown
    QString pendingKey_;    // "\nforward", or "PATH/forward" where there is no inlined graph
    int pendingIrLine_ = 0; // to go to once the (long) IR text has all its lines
    ArchiveView* archive_ = nullptr;
    MemoryView* memory_ = nullptr;
};

} // namespace scriptscope
