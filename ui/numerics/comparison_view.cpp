#include "comparison_view.h"
#include "numerics_common.h"

#include <elided_label.h>
#include <format.h>
#include <graph_diagram.h>
#include <model_files.h>

#include <QEvent>
#include <QFileDialog>
#include <QFont>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
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
    criterion_ = new CriterionBox(this);
    first_ = new QPushButton(tr("Go to the first divergence"), this);
    first_->setObjectName(QStringLiteral("firstDivergence"));
    first_->setToolTip(tr("Selects it in the table and in both diagrams"));
    bar->addWidget(choose_);
    bar->addWidget(criterion_);
    bar->addWidget(first_);
    bar->addStretch();
    layout->addLayout(bar);
    verdict_ = new QLabel(this);
    verdict_->setObjectName(QStringLiteral("comparisonVerdict"));
    verdict_->setWordWrap(true);
    verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    verdict_->setContentsMargins(6, 3, 6, 3);
    verdict_->setAutoFillBackground(true);
    layout->addWidget(verdict_);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("comparisonSummary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);
    // The module outputs of the other model that nothing matched: a count, the names on demand.
    unmatchedToggle_ = new QToolButton(this);
    unmatchedToggle_->setObjectName(QStringLiteral("unmatchedToggle"));
    unmatchedToggle_->setCheckable(true);
    unmatchedToggle_->setArrowType(Qt::RightArrow);
    unmatchedToggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    unmatchedToggle_->setAutoRaise(true);
    unmatched_ = new QPlainTextEdit(this);
    unmatched_->setObjectName(QStringLiteral("unmatchedList"));
    unmatched_->setReadOnly(true);
    unmatched_->setMaximumHeight(120);
    unmatched_->hide();
    layout->addWidget(unmatchedToggle_);
    layout->addWidget(unmatched_);
    connect(unmatchedToggle_, &QToolButton::toggled, this, [this](bool open) {
        unmatched_->setVisible(open);
        unmatchedToggle_->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    });
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
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Compare with"), {}, modelFileDialogFilter());
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
    setUnavailable({});
    clear();
}

void ComparisonView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && !report_.comparison.empty()) {
        // The verdict's and the diverging rows' colours are the theme's: drawn again, the
        // selection kept.
        const int selected = selectedRecord();
        setReport(ActivationReport(report_));
        if (selected >= 0) {
            selectRecord(selected, true);
        }
    }
}

Criterion ComparisonView::criterion() const {
    return criterion_->criterion();
}

void ComparisonView::setUnavailable(const QString& why) {
    choose_->setEnabled(why.isEmpty());
    choose_->setToolTip(why.isEmpty()
                            ? tr("Runs this model and another (its TorchScript twin, its export, "
                                 "its .pte, another copy) on the Run workspace's inputs: their "
                                 "outputs, then every value inside that can be matched")
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
    verdict_->hide();
    showUnmatched({});
    summary_->setText(tr("Runs the shown model and another on the Run workspace's inputs and "
                         "compares their outputs, then every value inside that can be matched, "
                         "in the order this one runs, to the first place they part ways."));
}

void ComparisonView::showVerdict(const ComparisonVerdict& v) {
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    QColor background;
    QString text;
    switch (v.verdict) {
    case Verdict::Same:
        background = dark ? QColor(30, 80, 40) : QColor(214, 245, 214);
        text = tr("<b>The same</b>: %1.");
        break;
    case Verdict::Differ:
        background = dark ? QColor(95, 35, 35) : QColor(255, 222, 222);
        text = tr("<b>They differ</b>: %1.");
        break;
    case Verdict::CouldNotCompare:
        background = dark ? QColor(90, 70, 20) : QColor(255, 240, 200);
        text = tr("<b>Could not compare</b>: %1.");
        break;
    }
    QPalette p = verdict_->palette();
    p.setColor(QPalette::Window, background);
    p.setColor(QPalette::WindowText, palette().color(QPalette::Text));
    verdict_->setPalette(p);
    verdict_->setText(text.arg(q(v.why).toHtmlEscaped()));
    verdict_->show();
}

void ComparisonView::showUnmatched(const std::vector<std::string>& names) {
    unmatchedToggle_->setVisible(!names.empty());
    unmatchedToggle_->setText(
        tr("%n module output(s) of the other model matched by none of this one", nullptr,
           static_cast<int>(names.size())));
    QStringList lines;
    for (const std::string& name : names) {
        lines << q(name);
    }
    unmatched_->setPlainText(lines.join(QLatin1Char('\n')));
    unmatched_->setVisible(!names.empty() && unmatchedToggle_->isChecked());
}

namespace {

QString leafLine(const OutputLeafComparison& l, const Criterion& criterion) {
    if (!l.compared) {
        return QObject::tr("%1: not compared, %2").arg(q(l.where), q(l.note)).toHtmlEscaped();
    }
    const ValueDifference& d = l.difference;
    QString line =
        QObject::tr("%1 %2: max |diff| %3, max rel %4, cosine %5, SNR %6 dB")
            .arg(q(l.where), shapeText(l.shape), number(d.maxAbsDiff), number(d.maxRelDiff),
                 QString::number(d.cosine, 'f', 6), decibels(d.snrDb))
            .toHtmlEscaped();
    return line + (l.agrees ? QObject::tr(" \u2014 agrees")
                            : QObject::tr(" \u2014 <b>apart</b>: %1")
                                  .arg(q(failedMeasures(d, criterion)).toHtmlEscaped()));
}

} // namespace

void ComparisonView::setReport(const ActivationReport& report) {
    const bool outputsOnly = !report.outputsOnly.why.empty();
    if (report.comparison.empty() && !outputsOnly) {
        clear();
        return;
    }
    report_ = report;
    showVerdict(verdictOf(report));
    fillTable(report);
    QStringList lines;
    const OutputComparison& outputs = outputsOnly ? report.outputsOnly.outputs : report.outputs;
    if (outputsOnly) {
        lines << tr("Against %1: no node could be matched (%2), so both ran on the same inputs "
                    "and their outputs are compared.")
                     .arg(q(report.comparison).toHtmlEscaped(),
                          q(report.outputsOnly.why).toHtmlEscaped());
    } else {
        lines << tr("Against %1, by %2.")
                     .arg(q(report.comparison).toHtmlEscaped(),
                          q(describe(report.criterion)).toHtmlEscaped());
    }
    if (!outputs.structure.empty() || !outputs.note.empty()) {
        if (outputs.compared) {
            lines << tr("<b>Outputs</b> %1 against %2:")
                         .arg(q(outputs.structure).toHtmlEscaped(),
                              q(outputs.referenceStructure).toHtmlEscaped());
            for (const OutputLeafComparison& leaf : outputs.leaves) {
                lines << QStringLiteral("&nbsp;&nbsp;") + leafLine(leaf, report.criterion);
            }
        } else {
            lines << tr("<b>Outputs not compared:</b> %1").arg(q(outputs.note).toHtmlEscaped());
        }
    }
    if (outputsOnly) {
        if (outputs.compared) {
            lines << tr("<b>Timing:</b> p50 %1 ms here against %2 ms, %n run(s) each on %3.",
                        nullptr, report.outputsOnly.runs)
                         .arg(report.outputsOnly.p50Ms, 0, 'f', 3)
                         .arg(report.outputsOnly.otherP50Ms, 0, 'f', 3)
                         .arg(q(report.device).toHtmlEscaped());
        }
    } else {
        const int matched = report.referenceCount - static_cast<int>(report.unmatched.size());
        const double share =
            report.referenceCount > 0 ? 100.0 * matched / report.referenceCount : 0;
        QString byName;
        if (report.operatorsMatched > 0) {
            byName = tr(" and %n more value(s) inside modules, by node name or operator order",
                        nullptr, report.operatorsMatched);
        }
        lines << tr("<b>Inside:</b> matched %1 of its %2 module outputs (%3%)%4; %5 values "
                    "compared.")
                     .arg(matched)
                     .arg(report.referenceCount)
                     .arg(share, 0, 'f', 1)
                     .arg(byName.toHtmlEscaped())
                     .arg(report.comparedCount);
        if (firstRecord_ >= 0) {
            const ActivationRecord& d = report.records[static_cast<size_t>(firstRecord_)];
            const ValueDifference difference = differenceOf(d);
            lines << tr("<b>First divergence:</b> %1 (#%2 %3): %4.")
                         .arg(referenceModule(d).toHtmlEscaped())
                         .arg(firstRecord_)
                         .arg(where(d).toHtmlEscaped(),
                              q(failedMeasures(difference, report.criterion)).toHtmlEscaped());
        } else if (report.comparedCount > 0) {
            lines << tr("No divergence inside.");
        }
    }
    for (const std::string& note : report.notes) {
        lines << tr("Note: %1").arg(q(note).toHtmlEscaped());
    }
    summary_->setText(lines.join(QStringLiteral("<br>")));
    showUnmatched(report.unmatched);
    first_->setEnabled(firstRecord_ >= 0);
    if (outputsOnly) {
        for (const Side side : {ThisModel, OtherModel}) {
            keys_[side].clear();
            diagrams_[side]->showMessage(tr("No node could be matched (the summary says why)."));
        }
    } else if (table_->rowCount() == 0) {
        for (const Side side : {ThisModel, OtherModel}) {
            keys_[side].clear();
            diagrams_[side]->showMessage(
                tr("Nothing inside was matched: only the outputs were compared."));
        }
    } else {
        paintDiagrams();
    }
}

void ComparisonView::showFailure(const QString& otherModel, const QString& message) {
    clear();
    showVerdict({Verdict::CouldNotCompare, message.toStdString()});
    summary_->setText(tr("Against %1: the comparison could not be made. Nothing was compared.")
                          .arg(otherModel.toHtmlEscaped()));
    for (const Side side : {ThisModel, OtherModel}) {
        diagrams_[side]->showMessage(tr("Nothing was compared (the message above says why)."));
    }
}

void ComparisonView::fillTable(const ActivationReport& report) {
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
        const bool diverges = !recordAgrees(r, report.criterion);
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
