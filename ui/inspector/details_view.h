// The Details tab of the Model workspace: the selected module's parameters and buffers (packed
// quantized weights among them), attributes and methods, and their statistics on request.
#pragma once

#include <model_info.h>
#include <run_types.h>

#include <QWidget>

class QLabel;
class QPushButton;
class QStandardItemModel;
class QTreeView;

namespace scriptscope {

class DetailsView : public QWidget {
    Q_OBJECT

public:
    explicit DetailsView(QWidget* parent = nullptr);
    // The module shown; null clears. The statistics column stays empty until showStatistics().
    // `model` holds it: what it lacks is not offered.
    void setModule(const ModuleInfo* module, const ModelInfo& model);
    // Fills the statistics column of the Parameters and Buffers rows (by name).
    void showStatistics(const std::vector<OutputValue>& values);

Q_SIGNALS:
    void statisticsRequested();
    void statisticsShown();

private:
    QLabel* detailsHeader_ = nullptr;
    QPushButton* statisticsButton_ = nullptr;
    QTreeView* details_ = nullptr;
    QStandardItemModel* detailsModel_ = nullptr;
};

} // namespace scriptscope
