// Internal to the Numerics workspace's files (numerics_*.cpp): what they share.
#pragma once

#include "numerics_panel.h"

#include <numerics_types.h>

#include <QColor>
#include <QObject>
#include <QPalette>
#include <QSortFilterProxyModel>
#include <QString>
#include <QStringList>
#include <QToolButton>

#include <string>
#include <vector>

class QDoubleSpinBox;
class QPlainTextEdit;
class QWidget;

namespace scriptscope::numerics {

inline QString q(const std::string& s) {
    return QString::fromStdString(s);
}

inline QString shapeText(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (const int64_t size : shape) {
        parts << QString::number(size);
    }
    return parts.isEmpty() ? QStringLiteral("scalar") : parts.join(QLatin1Char('x'));
}

inline bool noFiniteValue(const ActivationRecord& r) {
    return r.numel > 0 && r.nanCount + r.infCount == r.numel;
}

inline QString number(double v) {
    return QString::number(v, 'g', 5);
}

inline QString where(const ActivationRecord& r) {
    if (r.kind == "input") {
        return QObject::tr("input %1").arg(q(r.value));
    }
    return r.occurrence > 0 ? QStringLiteral("%1 #%2").arg(q(r.kind)).arg(r.occurrence) : q(r.kind);
}

// Filters by text (operator, module, value) and, on request, to the non-finite rows.
class ActivationFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setText(const QString& text) {
        text_ = text.trimmed();
        invalidateFilter();
    }
    void setNonFiniteOnly(bool on) {
        nonFiniteOnly_ = on;
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        const auto* model = static_cast<const ActivationTableModel*>(sourceModel());
        const auto& r = model->report().records[static_cast<size_t>(row)];
        if (nonFiniteOnly_ && !r.nonFinite()) {
            return false;
        }
        if (text_.isEmpty()) {
            return true;
        }
        for (const std::string* s : {&r.kind, &r.module, &r.value, &r.source}) {
            if (q(*s).contains(text_, Qt::CaseInsensitive)) {
                return true;
            }
        }
        return parent.isValid();
    }

private:
    QString text_;
    bool nonFiniteOnly_ = false;
};

// Background of removed (red) and added (green) lines, readable in light and dark themes.
QColor diffColour(bool added, const QPalette& palette);
// Where a comparison's criterion is set (verdict.h): a button that says it ("max rel 0.001,
// 40 dB, cos 0.9999") and opens a form with max rel <=, SNR >=, cosine >= and an absolute floor,
// the CLI's defaults at first. Compact: the Activations and Compare bars fit a small window.
class CriterionBox : public QToolButton {
public:
    explicit CriterionBox(QWidget* parent);
    Criterion criterion() const;
    void setCriterion(const Criterion& criterion);
    QDoubleSpinBox* rtol() const { return rtol_; }
    QDoubleSpinBox* minSnr() const { return snr_; }
    QDoubleSpinBox* minCosine() const { return cosine_; }
    QDoubleSpinBox* atol() const { return atol_; }

private:
    void showCriterion();

    QDoubleSpinBox* rtol_ = nullptr;
    QDoubleSpinBox* snr_ = nullptr;
    QDoubleSpinBox* cosine_ = nullptr;
    QDoubleSpinBox* atol_ = nullptr;
};
// Whether a compared record agrees by the report's criterion.
inline bool recordAgrees(const ActivationRecord& r, const Criterion& c) {
    return !r.compared || agrees(r.maxAbsDiff, r.maxRelDiff, r.cosine, r.snrDb, c);
}
// A read-only, unwrapped text view in the fixed font.
QPlainTextEdit* codeText(QWidget* parent);
// Fills a text view, painting each line's background by `marks` (0 none, 1 removed, 2 added,
// 3 a gap where the other side has lines).
void fillMarked(QPlainTextEdit* view, const QStringList& lines, const std::vector<int>& marks);

} // namespace scriptscope::numerics
