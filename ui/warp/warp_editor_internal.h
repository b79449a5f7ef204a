// Helpers shared by the warp editor's implementation files (warp_editor*.cpp); not an interface.
#pragma once

#include <homography.h>

#include <QComboBox>
#include <QLineEdit>
#include <QString>

#include <initializer_list>
#include <utility>

namespace scriptscope::warp_detail {

inline const char* const kDecompositionNames[8] = {"tx", "ty",    "rotation (°)", "sx",
                                                   "sy", "shear", "px",           "py"};

inline double& decompositionField(Decomposition& d, size_t index) {
    switch (index) {
    case 0:
        return d.tx;
    case 1:
        return d.ty;
    case 2:
        return d.rotationDegrees;
    case 3:
        return d.sx;
    case 4:
        return d.sy;
    case 5:
        return d.shear;
    case 6:
        return d.px;
    default:
        return d.py;
    }
}

inline QString formatNumber(double v) {
    if (v == 0) {
        return QStringLiteral("0");
    }
    return QString::number(v, 'g', 8);
}

inline void markField(QLineEdit* field, bool bad, const QString& why = {}) {
    field->setStyleSheet(bad ? QStringLiteral("QLineEdit { background: #f8d7da; color: #58151c; }")
                             : QString());
    field->setToolTip(why);
}

inline QComboBox* makeCombo(QWidget* parent,
                            std::initializer_list<std::pair<QString, QString>> entries) {
    auto* combo = new QComboBox(parent);
    for (const auto& [label, key] : entries) {
        combo->addItem(label, key);
    }
    return combo;
}

} // namespace scriptscope::warp_detail
