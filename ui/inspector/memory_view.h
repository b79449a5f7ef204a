// The Model workspace's Memory tab: a method's memory plan (MethodInfo::memoryPlan) drawn as the
// planner laid it out. One chart per planned buffer: across, the method's calls in the order they
// run; down, the buffer's bytes. Each planned tensor is a box at its offset, as tall as its bytes
// and as wide as it lives (from the call that makes it to the last that reads it), so that reuse
// of the same bytes by tensors that never live at once reads at a glance. Hovering a box names the
// tensor, its size and the calls that bound it.
#pragma once

#include <model_info.h>

#include <QWidget>

class QComboBox;
class QLabel;
class QScrollArea;

namespace scriptscope {

class MemoryChart;

class MemoryView : public QWidget {
    Q_OBJECT

public:
    explicit MemoryView(QWidget* parent = nullptr);

    // The selected module's methods that have a plan; nothing of a previous module stays.
    void setModule(const ModuleInfo* module);
    // Whether any method of `module` has a memory plan (the tab shows only then).
    static bool hasPlan(const ModuleInfo* module);

private:
    void showMethod();

    std::vector<MethodInfo> methods_;
    QComboBox* method_ = nullptr;
    QLabel* summary_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    MemoryChart* chart_ = nullptr;
};

} // namespace scriptscope
