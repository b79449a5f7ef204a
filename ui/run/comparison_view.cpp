#include "comparison_view.h"
#include "numerics_common.h"

#include <elided_label.h>
#include <format.h>
#include <graph_diagram.h>

#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFont>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
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

// A group's module path and those of the groups around it.
template <typename Visit>
void eachModuleAround(const GraphModel& graph, int group, Visit visit) {
    for (int at = group; at >= 0 && at < static_cast<int>(graph.groups.size());
         at = graph.groups[static_cast<size_t>(at)].parent) {
        const GraphGroup& g = graph.groups[static_cast<size_t>(at)];
        if (g.kind == GraphGroup::Kind::Module && !g.module.empty()) {
            visit(g.module);
        }
    }
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
    first_->setToolTip(tr("Selects it in the table and in both diagrams"));
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

    // The table over the two diagrams, this model's on the left.
    splitter_ = new QSplitter(Qt::Vertical, this);
    splitter_->setObjectName(QStringLiteral("comparisonSplitter"));
    splitter_->setChildrenCollapsible(false);
    splitter_->addWidget(table_);
    auto* sides = new QSplitter(Qt::Horizontal, splitter_);
    sides->setChildrenCollapsible(false);
    for (const Side side : {ThisModel, OtherModel}) {
        auto* pane = new QWidget(sides);
        auto* column = new QVBoxLayout(pane);
        column->setContentsMargins(0, 0, 0, 0);
        column->setSpacing(2);
        captions_[side] = new ElidedLabel(pane, Qt::ElideMiddle);
        diagrams_[side] = new GraphDiagram(pane);
        diagrams_[side]->setObjectName(side == ThisModel ? QStringLiteral("comparedThis")
                                                         : QStringLiteral("comparedOther"));
        column->addWidget(captions_[side]);
        column->addWidget(diagrams_[side], 1);
        sides->addWidget(pane);
        connect(diagrams_[side], &GraphDiagram::nodeSelected, this,
                [this, side](int node) { nodeClicked(side, node); });
    }
    splitter_->addWidget(sides);
    splitter_->setStretchFactor(0, 2);
    splitter_->setStretchFactor(1, 3);
    layout->addWidget(splitter_, 1);

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
    connect(table_, &QTableWidget::itemSelectionChanged, this, [this]() {
        if (!selecting_) {
            selectRecord(selectedRecord(), false);
        }
    });
    clear();
}

void ComparisonView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && table_->rowCount() > 0) {
        // The diverging rows' colour is the theme's: the table drawn again, its selection kept.
        const int selected = selectedRecord();
        setReport(ActivationReport(report_));
        if (selected >= 0) {
            selectRecord(selected, true);
        }
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
    for (const Side side : {ThisModel, OtherModel}) {
        keys_[side].clear();
        captions_[side]->setFullText(side == ThisModel ? tr("This model") : tr("The other model"));
        diagrams_[side]->showMessage(tr("Both models' diagrams show here after a comparison "
                                        "with another model."));
    }
    table_->setRowCount(0);
    firstRecord_ = -1;
    first_->setEnabled(false);
    summary_->setText(tr("Runs the shown model and another on the Run workspace's inputs and "
                         "compares them module output by module output, in the order this one "
                         "runs, to the first place they part ways."));
}

void ComparisonView::setReport(const ActivationReport& report) {
    if (!report.outputsOnly.why.empty()) {
        showOutputsOnly(report);
        return;
    }
    if ((report.referenceCount == 0 && report.operatorsMatched == 0) || report.comparison.empty()) {
        clear();
        return;
    }
    report_ = report;
    table_->setSortingEnabled(false);
    table_->setRowCount(0);
    firstRecord_ = -1;
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
    first_->setEnabled(firstRecord_ >= 0);
    paintDiagrams();
}

// No node could be matched (a side shows no values): both models' outputs and p50s on the same
// inputs.
void ComparisonView::showOutputsOnly(const ActivationReport& report) {
    clear();
    report_ = report;
    const OutputsOnly& o = report.outputsOnly;
    QStringList lines;
    lines << tr("Against %1: no node could be matched (%2), so both ran on the same inputs and "
                "their outputs are compared.")
                 .arg(q(report.comparison).toHtmlEscaped(), q(o.why).toHtmlEscaped());
    if (o.outputs.compared) {
        const bool apart = !(o.outputs.maxAbsDiff <= report.tolerance);
        lines << tr("<b>Outputs:</b> max |diff| %1, %2 %3%4.")
                     .arg(number(o.outputs.maxAbsDiff), apart ? tr("<b>beyond</b>") : tr("within"))
                     .arg(report.tolerance)
                     .arg(o.outputs.note.empty()
                              ? QString()
                              : tr(", largest at %1").arg(q(o.outputs.note).toHtmlEscaped()));
        lines << tr("<b>Timing:</b> p50 %1 ms here against %2 ms, %n run(s) each on %3.", nullptr,
                    o.runs)
                     .arg(o.p50Ms, 0, 'f', 3)
                     .arg(o.otherP50Ms, 0, 'f', 3)
                     .arg(q(report.device).toHtmlEscaped());
    } else {
        lines << tr("<b>Outputs not compared:</b> %1").arg(q(o.outputs.note).toHtmlEscaped());
    }
    summary_->setText(lines.join(QStringLiteral("<br>")));
    for (const Side side : {ThisModel, OtherModel}) {
        diagrams_[side]->showMessage(tr("No node could be matched (the summary says why)."));
    }
}

int ComparisonView::selectedRecord() const {
    const auto rows = table_->selectionModel()->selectedRows();
    return rows.isEmpty()
               ? -1
               : table_->item(rows.front().row(), IndexColumn)->data(Qt::UserRole).toInt();
}

void ComparisonView::setDiagram(Side side, const QString& key,
                                std::shared_ptr<const GraphModel> graph, const QString& caption) {
    keys_[side] = key;
    captions_[side]->setFullText(caption);
    diagrams_[side]->setGraph(std::move(graph));
    paintDiagrams();
    const int record = selectedRecord();
    if (record >= 0) {
        selectRecord(record, false);
    }
}

void ComparisonView::setDiagramMessage(Side side, const QString& key, const QString& message) {
    keys_[side] = key;
    diagrams_[side]->showMessage(message);
}

// Each side painted by max |diff|: a node by the values it made, a module box by the largest
// difference inside it (what a collapsed box hides).
void ComparisonView::paintDiagrams() {
    for (const Side side : {ThisModel, OtherModel}) {
        GraphDiagram* diagram = diagrams_[side];
        if (!diagram->hasGraph()) {
            continue;
        }
        const GraphModel& graph = diagram->graph();
        GraphDiagram::ValueOverlay overlay;
        overlay.name = tr("max |diff|");
        overlay.method = q(graph.method);
        for (const ActivationRecord& r : report_.records) {
            const int node = side == ThisModel ? r.node : r.referenceNode;
            if (!r.compared || node < 0 || node >= static_cast<int>(graph.nodes.size()) ||
                !(r.maxAbsDiff > 0)) {
                continue;
            }
            const double d = std::min(r.maxAbsDiff, 1e300);
            double& mine = overlay.nodes[node];
            mine = std::max(mine, d);
            eachModuleAround(graph, graph.nodes[static_cast<size_t>(node)].group,
                             [&overlay, d](const std::string& module) {
                                 double& box = overlay.modules[module];
                                 box = std::max(box, d);
                             });
        }
        diagram->setValueOverlay(overlay);
    }
}

void ComparisonView::selectRecord(int record, bool inTable) {
    if (selecting_) {
        return;
    }
    selecting_ = true;
    const ActivationRecord* r = record >= 0 && record < static_cast<int>(report_.records.size())
                                    ? &report_.records[static_cast<size_t>(record)]
                                    : nullptr;
    if (inTable) {
        table_->clearSelection();
        for (int row = 0; r && row < table_->rowCount(); ++row) {
            if (table_->item(row, IndexColumn)->data(Qt::UserRole).toInt() == record) {
                table_->selectRow(row);
                table_->scrollToItem(table_->item(row, 0), QAbstractItemView::PositionAtCenter);
                break;
            }
        }
    }
    for (const Side side : {ThisModel, OtherModel}) {
        GraphDiagram* diagram = diagrams_[side];
        const int node = r ? (side == ThisModel ? r->node : r->referenceNode) : -1;
        if (diagram->hasGraph()) {
            diagram->selectNode(node < static_cast<int>(diagram->graph().nodes.size()) ? node : -1,
                                true);
        }
    }
    selecting_ = false;
}

// A node picked in one diagram: the value it made (compared here) in the table and the other's.
void ComparisonView::nodeClicked(Side side, int node) {
    if (selecting_ || node < 0) {
        return;
    }
    int found = -1;
    for (size_t i = 0; i < report_.records.size() && found < 0; ++i) {
        const ActivationRecord& r = report_.records[i];
        if (!r.comparedWith.empty() && (side == ThisModel ? r.node : r.referenceNode) == node) {
            found = static_cast<int>(i);
        }
    }
    if (found >= 0) {
        selectRecord(found, true);
    }
}

void ComparisonView::goToFirstDivergence() {
    if (firstRecord_ < 0) {
        return;
    }
    selectRecord(firstRecord_, true);
}

} // namespace scriptscope
