// The Run workspace's outputs: the returned values as a tree, and the selected tensor drawn as an
// image (with the timing overlay), ranked as top-k (with labels), listed as numbers, or compared
// with a kept result (kept across sessions).
#pragma once

#include "output_models.h"

#include <run_types.h>

#include <opencv2/core.hpp>

#include <QSplitter>

#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QFrame;
class QLabel;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTreeView;

class QAction;
class QBoxLayout;
class QToolBar;

namespace scriptscope {

class LabelPicker;
class OutputImageView;
struct LabelSet;

class OutputPanel : public QSplitter {
    Q_OBJECT

public:
    explicit OutputPanel(QWidget* parent = nullptr);

    // A new result: the same output stays selected across runs.
    void showResult(const RunResult& result);
    // Nothing shown (another model); the kept result stays, labelled when it is another model's.
    void clear(const std::string& modelPath);
    // Keeps the last result; the next ones show their difference to it.
    void keepResult();
    const std::optional<RunResult>& keptResult() const { return kept_; }
    QString comparisonText() const;
    QString topKNote() const;
    // One label per line, in index order, chosen as the label set of the Result page and the top-k
    // table; false (and the Top-k note says why) when the file cannot be read.
    bool loadLabels(const QString& path);
    // The Top-k page's line naming the label set ("names: ImageNet-1k"), as the Result caption
    // does.
    QString labelsNote() const;
    LabelPicker* labelPicker() const { return labelPicker_; }

    OutputTreeModel* outputModel() const { return outputModel_; }
    TensorTableModel* tableModel() const { return tableModel_; }
    TopKModel* topKModel() const { return topKModel_; }
    OutputImageView* imageView() const { return imageView_; }
    // The warning over the pages while the output holds NaN or Inf (empty: none shows).
    QString nonFiniteWarning() const;
    // Why the Image tab draws nothing for the selected output (empty: it draws it).
    QString imageNote() const;
    // How many values a run keeps per tensor (RunRequest::valuesLimit), for that note.
    void setValuesLimit(size_t limit) { valuesLimit_ = limit; }

    // The Result page: the output drawn as its task over the image the model saw.
    // The image input of the run about to be shown (its file, and the size it was resized to;
    // empty: none), and the model's own labels (its labels.txt extra file).
    void setInputImage(const QString& path, const QSize& size);
    // A source's frame (8-bit BGR) instead of an image file, scaled to size when it is given.
    void setInputFrame(const cv::Mat& bgr, const QSize& size);
    // The Result page's last picture, 8-bit BGR (what recording writes); empty when none.
    const cv::Mat& renderedFrame() const { return rendered_; }
    // The source's frame the result is drawn over (empty for an image file).
    const cv::Mat& inputFrame() const { return inputFrame_; }
    void setArchiveLabels(const LabelSet& labels);
    // The task the output is drawn as ("auto", "detection", ... as task_result.h names them);
    // remembered per model.
    void setTask(const QString& task);
    QString task() const;
    void setScoreThreshold(double threshold);
    QString taskSummary() const;
    OutputImageView* resultView() const { return resultView_; }
    QTabWidget* pages() const { return outputPages_; }

    // The last page result's corners (TL, TR, BR, BL) in pixels of the image drawn over, and
    // the size of the page the model rectified; empty when the result is no page.
    const std::vector<std::pair<double, double>>& pageCorners() const { return pageCorners_; }
    QSize pageSize() const { return pageSize_; }
    QAction* useCornersAction() const { return useCorners_; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

Q_SIGNALS:
    void problem(const QString& message);
    // "Use the model's corners": the warp editor takes them as its handles.
    void useCornersRequested();
    // "Find the first NaN" on the warning over an output that holds NaN or Inf.
    void firstNonFiniteRequested();

private:
    void showOutput(const QModelIndex& index);
    void restoreKeptResult();
    void showTask();
    void arrangeControls();
    void shareWidth();
    // The names of the chosen label set for a ranking over this many classes; the Top-k page says
    // which set they are.
    QStringList topKNames(size_t classes);

    std::string modelPath_;
    std::optional<RunResult> last_;
    std::optional<RunResult> kept_;
    OutputTreeModel* outputModel_ = nullptr;
    QTreeView* outputTree_ = nullptr;
    QTabWidget* outputPages_ = nullptr;
    QWidget* imagePage_ = nullptr;
    QWidget* topKPage_ = nullptr;
    // While a run's result arrives: its output interpreted as a task keeps the Result tab.
    bool runArriving_ = false;
    bool interpreted_ = false; // the last result was drawn as its task
    OutputImageView* imageView_ = nullptr;
    QFrame* nonFinite_ = nullptr;
    QLabel* nonFiniteText_ = nullptr;
    QComboBox* channel_ = nullptr;
    QSpinBox* batch_ = nullptr;
    QString chosenChannel_; // the Channel entry the person picked ("flow", "channel:3")
    QAction* batchAction_ = nullptr;
    QLabel* imageNote_ = nullptr; // why the selected output is not drawn
    size_t valuesLimit_ = 16u << 20;
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
    // Result
    OutputImageView* resultView_ = nullptr;
    QComboBox* task_ = nullptr;
    QSlider* threshold_ = nullptr;
    QLabel* thresholdText_ = nullptr;
    QLabel* taskSummary_ = nullptr;
    std::vector<std::pair<double, double>> pageCorners_;
    QSize pageSize_;
    QAction* useCorners_ = nullptr;
    // The Result page's second row: the names, and the score slider while the result is a
    // detection's; side by side where they fit, else one above the other.
    QWidget* resultPage_ = nullptr;
    QToolBar* namesBar_ = nullptr;
    QToolBar* scoreBar_ = nullptr;
    QBoxLayout* controlsRow_ = nullptr;
    bool sized_ = false; // the tree and the pages got their first shares
    QString inputImage_;
    cv::Mat inputFrame_;
    cv::Mat rendered_;
    QSize inputSize_;
    LabelPicker* labelPicker_ = nullptr;
    bool taskShownForModel_ = false;
};

} // namespace scriptscope
