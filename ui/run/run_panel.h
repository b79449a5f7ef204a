// The run workspace: inputs built from the method's schema, device, warm-up and iterations; the
// outputs as a tree, an image, a top-k table or numbers; the timing overlay and plots; a kept
// result to compare with; and the per-module profile. Runs happen in the worker.
#pragma once

#include "output_models.h"

#include <model_info.h>
#include <run_types.h>
#include <schema.h>

#include <QFrame>
#include <QJsonObject>
#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QFrame;
class QGroupBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QTableView;
class QTableWidget;
class QTreeView;

namespace scriptscope {

class FramePlayer;
class InputTable;
class OutputImageView;
class OutputPanel;
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
    // An ExecuTorch program's runs recorded elsewhere (an ETDump): shown as a run of the current
    // method, its runs as the timing samples and its events as the profile.
    void openRecordedRuns(const QString& etdump);
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
    FramePlayer* framePlayer() const { return player_; }
    // The last page result's corners become the warp editor's handles ("use the model's
    // corners"); false when there is none or they cannot be a warp.
    bool useModelCorners();
    // The bundled demo video, offered among the frame sources.
    void setDemoVideo(const QString& path);
    QString deviceNote() const;
    QString statusText() const;
    OutputPanel* outputs() const { return outputs_; }
    OutputTreeModel* outputModel() const;
    TensorTableModel* tableModel() const;
    TopKModel* topKModel() const;
    QString topKNote() const;
    RunHistoryModel* historyModel() const { return history_; }
    OperatorProfileModel* profileModel() const { return profileModel_; }
    OutputImageView* imageView() const;
    TimingPlot* timingPlot() const { return plot_; }
    const std::optional<RunResult>& lastResult() const { return last_; }
    // Keeps the last result; the next ones show their difference to it.
    void keepResult();
    const std::optional<RunResult>& keptResult() const;
    QString comparisonText() const;
    // Sets an argument's source ("image", "warp", "random", "zeros", "ones", "file", "value",
    // "none", "default", "elements") and value text; elements through inputTable().
    void setInput(int argument, const QString& source, const QString& value = {});
    // Its first 4-D weight takes 3 channels and its last 2-D weight gives 1000 scores.
    static bool looksLikeImageNetClassifier(const ModelInfo& model);
    // The usual warm-ups and iterations (a model's first run is a single iteration): what Run
    // More sets, and the demo's first run.
    static constexpr int kUsualWarmup = 2;
    static constexpr int kUsualIterations = 20;
    void useUsualTiming();
    QPushButton* runMoreButton() const { return runMore_; }
    QPushButton* runButton() const { return run_; }
    QWidget* presetHint() const { return presetHint_; }
    // The lines drawn over a run's result: device, p50/p90, rate, iterations and warm-ups.
    static QStringList timingOverlay(const RunResult& result);
    // "48.3 fps at p50", "0.69 fps"... "one run every 53.1 s at p50" below one a second.
    static QString rateText(double p50Ms);

Q_SIGNALS:
    void runShown(const scriptscope::RunResult& result);
    void runFailed(const QString& message);
    void profileReady(const scriptscope::RunProfile& profile);
    void modelCornersUsed();
    // The output's NaN warning asks where the first NaN was made (the Numerics workspace says).
    void firstNonFiniteRequested();

private:
    // Builds the panel: the settings side, then the results, one control group at a time.
    void buildUi();
    // Builds the scrolling settings: the run target, inputs, frame source, image and timing boxes.
    QWidget* buildSettingsPanel();
    // Builds the "Run" box: the method and device choices and the device's note.
    QGroupBox* buildTargetBox(QWidget* parent);
    // Builds the "Inputs" box: the table of arguments and the hint on what they take.
    QGroupBox* buildInputsBox(QWidget* parent);
    // Builds the frame player (a video, camera or folder as the input) and connects its signals.
    FramePlayer* buildFramePlayer(QWidget* parent);
    // Builds the "Image preprocessing" box, with its ImageNet preset button.
    QGroupBox* buildImageBox(QWidget* parent);
    // Builds the "Timing" box: warm-ups, iterations, and the profile and live options.
    QGroupBox* buildTimingBox(QWidget* parent);
    // Builds the side column: the preset hint, the scrolling settings, the buttons and the status.
    QWidget* buildSide(QSplitter* splitter, QWidget* settingsPanel);
    // Builds the row of run buttons (Run, Run More, Open ETDump, Run continuously, Cancel).
    QHBoxLayout* buildButtons(QWidget* side);
    // Builds the hint that offers the ImageNet preset to a model that looks like a classifier.
    QFrame* buildPresetHint(QWidget* side);
    // Builds the results column: the outputs above, the timing and profile tabs below.
    QSplitter* buildResults(QSplitter* splitter);
    // Builds the output panel (tree, image, top-k, numbers, comparison) and connects its requests.
    OutputPanel* buildOutputs(QWidget* parent);
    // Builds the "Timing" tab: the latency plot, the run history and the export buttons.
    QWidget* buildTimingPage(QWidget* parent);
    // Builds the "Profile" tab: the summary and the sortable table of operators.
    QWidget* buildProfilePage(QWidget* parent);
    void fillMethods();
    void fillInputs();
    void showDevices(const std::vector<DeviceInfo>& devices);
    void showResult(const RunResult& result);
    void showFrame(const FrameResult& frame);
    // The overlay's last line while frames play: fps, the dropped count, recording.
    QString framesLine() const;
    void showStatus(const QString& text, bool problem);
    void saveSettings() const;
    void clearResults();
    QJsonObject settings() const;
    QString imageOptions() const;
    // "224x224" when the model is an exported program whose first input is a batch of images
    // of a static size; empty otherwise.
    QString exportedImageSize() const;
    const MethodInfo* currentMethod() const;

    WorkerClient* worker_;
    WarpEditor* warpEditor_;
    ModelInfo model_;
    std::vector<DeviceInfo> devices_;
    quint64 request_ = 0;
    bool continuous_ = false;
    std::optional<RunResult> last_;
    std::optional<RunRequest> running_; // the request of the run in flight (or last shown)
    // A playing source's record in the history: one sample per frame.
    RunResult liveRun_;
    bool liveRecord_ = false;
    bool showingFrames_ = false; // the overlay is a playing source's, not a single run's

    QComboBox* method_ = nullptr;
    QComboBox* device_ = nullptr;
    QLabel* deviceNote_ = nullptr;
    InputTable* inputs_ = nullptr;
    FramePlayer* player_ = nullptr;
    QLineEdit* imageSize_ = nullptr;
    QComboBox* imageOrder_ = nullptr;
    QComboBox* imageLayout_ = nullptr;
    QCheckBox* imageBatch_ = nullptr;
    QComboBox* imageDtype_ = nullptr;
    QLineEdit* imageScale_ = nullptr;
    QLineEdit* imageMean_ = nullptr;
    QLineEdit* imageStd_ = nullptr;
    QPushButton* imagenetPreset_ = nullptr; // the image box's preset, which the hint clicks
    QSpinBox* warmup_ = nullptr;
    QSpinBox* iterations_ = nullptr;
    QCheckBox* profile_ = nullptr;
    QCheckBox* live_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* openEtdump_ = nullptr; // an ExecuTorch program's recorded runs
    QPushButton* runContinuously_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QPushButton* runMore_ = nullptr; // after a first single iteration
    QFrame* presetHint_ = nullptr;   // "looks like an ImageNet classifier"

    QLabel* status_ = nullptr;

    OutputPanel* outputs_ = nullptr;

    RunHistoryModel* history_ = nullptr;
    TimingPlot* plot_ = nullptr;
    OperatorProfileModel* profileModel_ = nullptr;
    QLabel* profileSummary_ = nullptr;
};

} // namespace scriptscope
