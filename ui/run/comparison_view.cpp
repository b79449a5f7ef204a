#include "comparison_view.h"
#include "numerics_common.h"

#include <format.h>

#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFont>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace scriptscope {

using namespace numerics;

namespace {

// The module a compared value stands for: its reference's name without " in FILE".
QString referenceModule(const ActivationRecord& r) {
    const size_t in = r.comparedWith.find(" in ");
    return q(in == std::string::npos ? r.comparedWith : r.comparedWith.substr(0, in));
}

QString decibels(double snr) {
    return std::isinf(snr) ? (snr > 0 ? QStringLiteral("\u221e") : QStringLiteral("-\u221e"))
                           : QString::number(snr, 'f', 1);
}

QTableWidgetItem* cell(const QString& text, double sortValue) {
    auto* item = new QTableWidgetItem(text);
    item->setData(Qt::UserRole, sortValue);
    return item;
}

} // namespace

ComparisonView::ComparisonView(QWidget* parent)
    : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    choose_ = new QPushButton(tr("Compare with a model\u2026"), this);
    choose_->setObjectName(QStringLiteral("compareModel"));
    choose_->setToolTip(tr("Runs this model and another (a .pt, a .pt2: its export, another "
                           "copy) on the Run workspace's inputs, module output by module output"));
    tolerance_ = toleranceBox(this, tr("The largest |difference| that is not yet a divergence"));
    first_ = new QPushButton(tr("Go to the first divergence"), this);
    first_->setObjectName(QStringLiteral("firstDivergence"));
    first_->setToolTip(tr("Selects it here and in the Model workspace's diagram"));
    bar->addWidget(choose_);
    bar->addWidget(tolerance_);
    bar->addWidget(first_);
    bar->addStretch();
    layout->addLayout(bar);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("comparisonSummary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);
    table_ = new QTableWidget(0, ColumnCount, this);
    table_->setObjectName(QStringLiteral("comparisonTable"));
    table_->setHorizontalHeaderLabels({tr("#"), tr("Module or %node"), tr("Node"), tr("Shape"),
                                       tr("max |diff|"), tr("max rel"), tr("cosine"),
                                       tr("SNR dB")});
    table_->horizontalHeaderItem(RelColumn)->setToolTip(
        tr("max |diff| over the other model's largest |value|"));
    table_->horizontalHeaderItem(SnrColumn)->setToolTip(
        tr("10 log10(|other|\u00b2 / |difference|\u00b2); \u221e when equal"));
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setAlternatingRowColors(true);
    layout->addWidget(table_, 1);

    connect(choose_, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Compare with"), {},
            tr("PyTorch models (*.pt *.pth *.ptl *.pt2 *.zip);;All files (*)"));
        if (!path.isEmpty()) {
            Q_EMIT compareRequested(path);
        }
    });
    connect(first_, &QPushButton::clicked, this, &ComparisonView::goToFirstDivergence);
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        Q_EMIT showRecord(table_->item(row, IndexColumn)->data(Qt::UserRole).toInt());
    });
    clear();
}

void ComparisonView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && table_->rowCount() > 0) {
        setReport(ActivationReport(report_)); // the diverging rows' colour is the theme's
    }
}

double ComparisonView::tolerance() const {
    return tolerance_->value();
}

void ComparisonView::setUnavailable(const QString& why) {
    choose_->setEnabled(why.isEmpty());
    choose_->setToolTip(why.isEmpty() ? tr("Runs this model and another (a .pt, a .pt2: its "
                                           "export, another copy) on the Run workspace's inputs, "
                                           "module output by module output")
                                      : why);
    if (!why.isEmpty()) {
        summary_->setText(tr("Not for this model: %1").arg(why.toHtmlEscaped()));
    }
}

void ComparisonView::clear() {
    report_ = {};
    table_->setRowCount(0);
    firstRow_ = firstRecord_ = -1;
    first_->setEnabled(false);
    summary_->setText(tr("Runs the shown model and another on the Run workspace's inputs and "
                         "compares them module output by module output, in the order this one "
                         "runs, to the first place they part ways."));
}

void ComparisonView::setReport(const ActivationReport& report) {
    if ((report.referenceCount == 0 && report.operatorsMatched == 0) || report.comparison.empty()) {
        clear();
        return;
    }
    report_ = report;
    table_->setSortingEnabled(false);
    table_->setRowCount(0);
    firstRow_ = firstRecord_ = -1;
    const QColor apart = diffColour(false, palette());
    for (size_t i = 0; i < report.records.size(); ++i) {
        const ActivationRecord& r = report.records[i];
        if (r.comparedWith.empty()) {
            continue;
        }
        const int row = table_->rowCount();
        table_->insertRow(row);
        table_->setItem(row, IndexColumn, cell(QString::number(i), static_cast<double>(i)));
        table_->setItem(row, ModuleColumn, cell(referenceModule(r), 0));
        table_->setItem(row, NodeColumn, cell(where(r), 0));
        table_->setItem(row, ShapeColumn, cell(shapeText(r.shape), 0));
        if (r.compared) {
            table_->setItem(row, AbsColumn, cell(number(r.maxAbsDiff), r.maxAbsDiff));
            table_->setItem(row, RelColumn, cell(number(r.maxRelDiff), r.maxRelDiff));
            table_->setItem(row, CosineColumn, cell(QString::number(r.cosine, 'f', 6), r.cosine));
            table_->setItem(row, SnrColumn, cell(decibels(r.snrDb), r.snrDb));
        } else {
            table_->setItem(row, AbsColumn, cell(tr("not compared: %1").arg(q(r.compareNote)), 0));
        }
        const bool diverges = r.compared && r.maxAbsDiff > report.tolerance;
        const bool first = static_cast<int>(i) == report.firstDifference;
        for (int column = 0; column < ColumnCount; ++column) {
            QTableWidgetItem* item = table_->item(row, column);
            if (!item) {
                table_->setItem(row, column, item = cell({}, 0));
            }
            if (diverges) {
                item->setBackground(apart);
            }
            if (first) {
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
            }
        }
        if (first) {
            firstRow_ = row;
            firstRecord_ = static_cast<int>(i);
        }
    }
    table_->resizeColumnsToContents();
    const int matched = report.referenceCount - static_cast<int>(report.unmatched.size());
    QStringList lines;
    const double share = report.referenceCount > 0 ? 100.0 * matched / report.referenceCount : 0;
    QString byName;
    if (report.operatorsMatched > 0) {
        byName = tr(" and %n more value(s) inside modules, by node name or operator order", nullptr,
                    report.operatorsMatched);
    }
    lines << tr("Against %1: matched %2 of its %3 module outputs (%4%)%5; %6 values compared.")
                 .arg(q(report.comparison).toHtmlEscaped())
                 .arg(matched)
                 .arg(report.referenceCount)
                 .arg(share, 0, 'f', 1)
                 .arg(byName.toHtmlEscaped())
                 .arg(report.comparedCount);
    if (firstRecord_ >= 0) {
        const ActivationRecord& d = report.records[static_cast<size_t>(firstRecord_)];
        lines << tr("<b>First divergence beyond %1:</b> %2 (#%3 %4), max |diff| %5, cosine %6.")
                     .arg(report.tolerance)
                     .arg(referenceModule(d).toHtmlEscaped())
                     .arg(firstRecord_)
                     .arg(where(d).toHtmlEscaped(), number(d.maxAbsDiff),
                          QString::number(d.cosine, 'f', 6));
    } else {
        lines << tr("No divergence beyond %1.").arg(report.tolerance);
    }
    if (!report.unmatched.empty()) {
        QStringList names;
        for (const auto& n : report.unmatched) {
            names << q(n);
        }
        lines << tr("Module outputs of the other model this one has none of: %1")
                     .arg(names.join(QStringLiteral(", ")).toHtmlEscaped());
    }
    summary_->setText(lines.join(QStringLiteral("<br>")));
    first_->setEnabled(firstRow_ >= 0);
}

void ComparisonView::goToFirstDivergence() {
    if (firstRow_ < 0) {
        return;
    }
    table_->selectRow(firstRow_);
    table_->scrollToItem(table_->item(firstRow_, 0), QAbstractItemView::PositionAtCenter);
    Q_EMIT showRecord(firstRecord_);
}

} // namespace scriptscope
