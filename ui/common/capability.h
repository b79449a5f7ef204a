// Controls for what the open model may lack (ModelInfo::lacking): such a control is disabled, and
// its tooltip says why, in the words the worker would refuse it with. Views never ask which format
// a model is.
#pragma once

#include <model_info.h>

#include <QCoreApplication>
#include <QString>
#include <QVariant>
#include <QWidget>

namespace scriptscope {

// Enables `control` when `enabled` and the model can do `capability`; its own tooltip comes back
// once a model can.
inline void offer(QWidget* control, const ModelInfo& model, Capability capability,
                  bool enabled = true) {
    static constexpr const char* kOwnToolTip = "scriptscopeOwnToolTip";
    if (!control->property(kOwnToolTip).isValid()) {
        control->setProperty(kOwnToolTip, control->toolTip());
    }
    const QString why = QString::fromStdString(model.lacks(capability));
    control->setEnabled(enabled && why.isEmpty());
    control->setToolTip(
        why.isEmpty()
            ? control->property(kOwnToolTip).toString()
            : QCoreApplication::translate("Capability", "Not for this model: %1").arg(why));
}

} // namespace scriptscope
