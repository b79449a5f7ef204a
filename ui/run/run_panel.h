// The run workspace: inputs built from the method's schema, device, warm-up and iterations; the
// outputs as a tree, an image, a top-k table or numbers; the timing overlay and plots; a kept
// result to compare with; and the per-module profile. Runs happen in the worker.
#pragma once

#include "output_models.h"

#include <model_info.h>
#include <run_types.h>
#include <schema.h>

#include <QJsonObject>
#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTableWidget;
class QTreeView;

namespace scriptscope {

class InputTable;
class OutputImageView;
class TimingPlot;
class WarpEditor;
class WorkerClient;

class RunPanel : public QWidget {
    Q_OBJECT

public:
    RunPanel(WorkerClient* worker, WarpEditor* warpEditor, QWidget* parent = nullptr);
    ~RunPanel() override;

    // The model the window shows; restores the inputs used with it before.
    void setModel(const ModelInfo& model);
    // The request the current settings make, or why they do not make one (the argument named).
    std::optional<RunRequest> buildRequest(QString* why) const;

    void runOnce();
    void setContinuous(bool on);
    bool continuous() const { return continuous_; }
    void cancel();

    // For tests and screenshots.
    QComboBox* deviceBox() const { return device_; }
    QComboBox* methodBox() const { return method_; }
    QTableWidget* inputsTable() const;
    InputTable* inputTable() const { return inputs_; }
    QSpinBox* iterationsBox() const { return iterations_; }
    QSpinBox* warmupBox() const { return warmup_; }
    QCheckBox* profileBox() const { return profile_; }
    QCheckBox* liveBox() const { return live_; }
    QString deviceNote() const;
    QString statusText() const;
    OutputTreeModel* outputModel() const { return outputModel_; }
    TensorTableModel* tableModel() const { return tableModel_; }
    TopKModel* topKModel() const { return topKModel_; }
    QString topKNote() const;
    RunHistoryModel* historyModel() const { return history_; }
    OperatorProfileModel* profileModel() const { return profileModel_; }
    OutputImageView* imageView() const { return imageView_; }
    TimingPlot* timingPlot() const { return plot_; }
    const std::optional<RunResult>& lastResult() const { return last_; }
    // Keeps the last result; the next ones show their difference to it.
    void keepResult();
    const std::optional<RunResult>& keptResult() const { return kept_; }
    QString comparisonText() const;
    // Sets an argument's source ("image", "warp", "random", "zeros", "ones", "file", "value",
    // "none", "default", "elements") and value text; elements through inputTable().
    void setInput(int argument, const QString& source, const QString& value = {});

Q_SIGNALS:
    void runShown(const scriptscope::RunResult& result);
    void runFailed(const QString& message);
    void profileReady(const scriptscope::RunProfile& profile);

private:
    void buildUi();
    void fillMethods();
    void fillInputs();
    void showDevices(const std::vector<DeviceInfo>& devices);
    void showResult(const RunResult& result);
    void showOutput(const QModelIndex& index);
    void showStatus(const QString& text, bool problem);
    void saveSettings() const;
    void clearResults();
    void restoreKeptResult();
    QJsonObject settings() const;
    QString imageOptions() const;
    const MethodInfo* currentMethod() const;

    WorkerClient* worker_;
    WarpEditor* warpEditor_;
    ModelInfo model_;
    std::vector<SchemaArgument> arguments_;
    std::vector<DeviceInfo> devices_;
    quint64 request_ = 0;
    bool continuous_ = false;
    std::optional<RunResult> last_;
    std::optional<RunResult> kept_;
    QStringList labels_;

    QComboBox* method_ = nullptr;
    QComboBox* device_ = nullptr;
    QLabel* deviceNote_ = nullptr;
    InputTable* inputs_ = nullptr;
    QLineEdit* imageSize_ = nullptr;
    QComboBox* imageOrder_ = nullptr;
    QComboBox* imageLayout_ = nullptr;
    QCheckBox* imageBatch_ = nullptr;
    QComboBox* imageDtype_ = nullptr;
    QLineEdit* imageScale_ = nullptr;
    QLineEdit* imageMean_ = nullptr;
    QLineEdit* imageStd_ = nullptr;
    QSpinBox* warmup_ = nullptr;
    QSpinBox* iterations_ = nullptr;
    QCheckBox* profile_ = nullptr;
    QCheckBox* live_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* runContinuously_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* status_ = nullptr;

    OutputTreeModel* outputModel_ = nullptr;
    QTreeView* outputTree_ = nullptr;
    QTabWidget* outputPages_ = nullptr;
    OutputImageView* imageView_ = nullptr;
    QComboBox* channel_ = nullptr;
    QComboBox* colormap_ = nullptr;
    QComboBox* range_ = nullptr;
    QCheckBox* overlay_ = nullptr;
    TopKModel* topKModel_ = nullptr;
    QTableView* topK_ = nullptr;
    QLabel* labelsNote_ = nullptr;
    QSpinBox* topKRow_ = nullptr;
    QLabel* topKNote_ = nullptr;
    TensorTableModel* tableModel_ = nullptr;
    QTableView* table_ = nullptr;
    QLabel* compareText_ = nullptr;
    OutputImageView* differenceView_ = nullptr;

    RunHistoryModel* history_ = nullptr;
    TimingPlot* plot_ = nullptr;
    OperatorProfileModel* profileModel_ = nullptr;
    QLabel* profileSummary_ = nullptr;
};

} // namespace scriptscope
