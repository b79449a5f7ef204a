// The Numerics workspace's Activations tab: every value of one run, its table and histogram,
// the first NaN and comparisons, the graph painted by a statistic.
#include "numerics_common.h"

#include "comparison_view.h"
#include "numerics_panel.h"
#include "run_memory_view.h"

#include "capability.h"
#include "operator_libraries.h"

#include "model_workspace.h"
#include "run_panel.h"
#include "worker_client.h"

#include <format.h>
#include <model_files.h>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTextBlock>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "plot_style.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace scriptscope {

using namespace numerics;

QWidget* NumericsPanel::buildActivations() {
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    auto* bar = new QHBoxLayout;
    record_ = new QPushButton(tr("Record every value"), page);
    record_->setObjectName(QStringLiteral("recordActivations"));
    record_->setToolTip(tr("Runs the Run workspace's method once, with its inputs and device, "
                           "through a copy of the inlined graph with a probe after every node"));
    compare_ = new QComboBox(page);
    compare_->setObjectName(QStringLiteral("compareWith"));
    compare_->addItem(tr("Compare with nothing"), QString());
    compare_->addItem(tr("Compare with another device\u2026"), QStringLiteral("device"));
    compare_->addItem(tr("Compare with values saved from Python\u2026"), QStringLiteral("file"));
    compare_->addItem(tr("Compare with the current inputs, kept"), QStringLiteral("inputs"));
    compare_->addItem(tr("Compare with another model\u2026"), QStringLiteral("model"));
    compare_->setToolTip(tr("Values saved from Python: torch.save({module_path: tensor, ...}), "
                            "each compared with the output of the module with that path"));
    criterion_ = new CriterionBox(page);
    bar->addWidget(record_);
    bar->addWidget(compare_);
    bar->addWidget(criterion_);
    bar->addStretch();
    layout->addLayout(bar);

    auto* tools = new QHBoxLayout;
    filter_ = new QLineEdit(page);
    filter_->setObjectName(QStringLiteral("activationFilter"));
    filter_->setPlaceholderText(tr("Filter by operator, module or value"));
    filter_->setClearButtonEnabled(true);
    nonFiniteOnly_ = new QCheckBox(tr("Only NaN / Inf"), page);
    firstNonFinite_ = new QPushButton(tr("First NaN / Inf"), page);
    firstNonFinite_->setObjectName(QStringLiteral("firstNonFinite"));
    firstDifference_ = new QPushButton(tr("First difference"), page);
    inGraph_ = new QPushButton(tr("Show in graph"), page);
    inGraph_->setToolTip(tr("The selected value's node in the Model workspace's graph, its IR "
                            "line and its module's code"));
    paint_ = new QComboBox(page);
    paint_->setObjectName(QStringLiteral("paintGraphBy"));
    paint_->addItem(tr("Graph: times"), QString());
    paint_->addItem(tr("Graph by NaN + Inf count"), QStringLiteral("nonfinite"));
    paint_->addItem(tr("Graph by max |x|"), QStringLiteral("abs"));
    paint_->addItem(tr("Graph by std"), QStringLiteral("std"));
    paint_->addItem(tr("Graph by max |diff|"), QStringLiteral("diff"));
    paint_->setToolTip(tr("Paints the whole model's inlined graph (Model workspace, Graph tab) "
                          "by a statistic of the recorded values"));
    tools->addWidget(filter_, 1);
    tools->addWidget(nonFiniteOnly_);
    tools->addWidget(firstNonFinite_);
    tools->addWidget(firstDifference_);
    tools->addWidget(inGraph_);
    tools->addWidget(paint_);
    layout->addLayout(tools);

    status_ = new QLabel(page);
    status_->setObjectName(QStringLiteral("activationStatus"));
    status_->setWordWrap(true);
    status_->setTextFormat(Qt::RichText);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(status_);

    auto* split = new QSplitter(Qt::Horizontal, page);
    model_ = new ActivationTableModel(this);
    proxy_ = new ActivationFilter(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(ActivationTableModel::SortRole);
    table_ = new QTableView(split);
    table_->setObjectName(QStringLiteral("activationTable"));
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(ActivationTableModel::IndexColumn, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setAlternatingRowColors(true);
    auto* side = new QWidget(split);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    histogram_ = new QCustomPlot(side);
    histogram_->setObjectName(QStringLiteral("activationHistogram"));
    histogram_->setMinimumHeight(160);
    histogram_->xAxis->setLabel(tr("value"));
    histogram_->yAxis->setLabel(tr("count"));
    histogram_->plotLayout()->insertRow(0);
    histogram_->plotLayout()->addElement(0, 0, new QCPTextElement(histogram_, tr("Histogram")));
    details_ = new QLabel(side);
    details_->setWordWrap(true);
    details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* pin = new QPushButton(tr("Keep this node's values next time"), side);
    pin->setToolTip(tr("The next recording keeps the selected node's values whole (up to "
                       "256 MB in all), to copy them"));
    auto* copy = new QPushButton(tr("Copy kept values"), side);
    sideLayout->addWidget(histogram_, 3);
    sideLayout->addWidget(details_, 2);
    auto* pinBar = new QHBoxLayout;
    pinBar->addWidget(pin);
    pinBar->addWidget(copy);
    sideLayout->addLayout(pinBar);
    split->addWidget(table_);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({700, 300});
    layout->addWidget(split, 1);

    connect(record_, &QPushButton::clicked, this, &NumericsPanel::recordActivations);
    connect(compare_, QOverload<int>::of(&QComboBox::activated), this, [this](int index) {
        const QString kind = compare_->itemData(index).toString();
        QString target;
        if (kind == QLatin1String("device")) {
            bool ok = false;
            target = QInputDialog::getItem(
                this, tr("Compare with another device"), tr("Run again on:"),
                {QStringLiteral("cpu"), QStringLiteral("cuda")}, 1, false, &ok);
            if (!ok) {
                target.clear();
            }
        } else if (kind == QLatin1String("file")) {
            target =
                QFileDialog::getOpenFileName(this, tr("Values saved from Python"), {},
                                             tr("torch.save files (*.pt *.pth);;All files (*)"));
        } else if (kind == QLatin1String("inputs")) {
            // The Run workspace's inputs (and warp matrix) now: change them, record again, and
            // each value is compared with what these inputs gave.
            QString why;
            const auto kept = run_->buildRequest(&why);
            if (!kept) {
                status_->setText(tr("Set the inputs in the Run workspace first: %1").arg(why));
            } else {
                keptRun_ = *kept;
                QStringList described;
                for (const auto& spec : kept->inputs) {
                    described << q(spec.describe());
                }
                target = described.join(QStringLiteral(", "));
                status_->setText(tr("Kept these inputs: %1. Change the inputs or the warp, then "
                                    "record: every value is compared with what these gave.")
                                     .arg(target.toHtmlEscaped()));
            }
        } else if (kind == QLatin1String("model")) {
            target = QFileDialog::getOpenFileName(this, tr("Another model"), {},
                                                  modelFileDialogFilter());
        }
        setComparison(target.isEmpty() ? QString() : kind, target);
    });
    connect(filter_, &QLineEdit::textChanged, this,
            [this](const QString& text) { static_cast<ActivationFilter*>(proxy_)->setText(text); });
    connect(nonFiniteOnly_, &QCheckBox::toggled, this,
            [this](bool on) { static_cast<ActivationFilter*>(proxy_)->setNonFiniteOnly(on); });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &NumericsPanel::showSelected);
    connect(firstNonFinite_, &QPushButton::clicked, this, &NumericsPanel::showFirstNonFinite);
    connect(firstDifference_, &QPushButton::clicked, this, [this]() {
        const int row = model_->report().firstDifference;
        if (row >= 0) {
            const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
            table_->setCurrentIndex(index);
            table_->scrollTo(index, QAbstractItemView::PositionAtCenter);
        }
    });
    connect(inGraph_, &QPushButton::clicked, this, [this]() {
        const QModelIndex current = proxy_->mapToSource(table_->currentIndex());
        if (current.isValid()) {
            showRecordInGraph(current.row());
        }
    });
    connect(paint_, QOverload<int>::of(&QComboBox::currentIndexChanged), this,
            &NumericsPanel::updatePaint);
    connect(pin, &QPushButton::clicked, this, [this]() {
        const QModelIndex current = proxy_->mapToSource(table_->currentIndex());
        if (!current.isValid()) {
            return;
        }
        const int node = model_->report().records[static_cast<size_t>(current.row())].node;
        QVariantList pinned = property("pinned").toList();
        if (!pinned.contains(node)) {
            pinned << node;
        }
        setProperty("pinned", pinned);
        status_->setText(
            pinned.size() == 1
                ? tr("The next recording keeps the values of 1 node whole.")
                : tr("The next recording keeps the values of %1 nodes whole.").arg(pinned.size()));
    });
    connect(copy, &QPushButton::clicked, this, [this]() {
        const QModelIndex current = proxy_->mapToSource(table_->currentIndex());
        if (!current.isValid()) {
            return;
        }
        const auto& r = model_->report().records[static_cast<size_t>(current.row())];
        QStringList values;
        values.reserve(static_cast<qsizetype>(r.values.size()));
        for (const float v : r.values) {
            values << QString::number(static_cast<double>(v), 'g', 9);
        }
        QApplication::clipboard()->setText(values.join(QLatin1Char('\n')));
    });
    return page;
}

void NumericsPanel::setComparison(const QString& kind, const QString& target) {
    compareKind_ = kind;
    compareTarget_ = target;
    const int index = std::max(0, compare_->findData(kind));
    compare_->setCurrentIndex(index);
    const QString name = QFileInfo(target).fileName();
    compare_->setItemText(1, kind == QLatin1String("device")
                                 ? tr("Compare with %1").arg(target)
                                 : tr("Compare with another device\u2026"));
    compare_->setItemText(2, kind == QLatin1String("file")
                                 ? tr("Compare with values in %1").arg(name)
                                 : tr("Compare with values saved from Python\u2026"));
    compare_->setItemText(3, kind == QLatin1String("inputs")
                                 ? tr("Compare with the kept inputs (%1)").arg(target)
                                 : tr("Compare with the current inputs, kept"));
    compare_->setItemText(4, kind == QLatin1String("model")
                                 ? tr("Compare with %1").arg(name)
                                 : tr("Compare with another model\u2026"));
}

void NumericsPanel::recordActivations() {
    QString why;
    const auto request = run_->buildRequest(&why);
    if (!request) {
        status_->setText(tr("Set the inputs in the Run workspace first: %1").arg(why));
        return;
    }
    ActivationRequest a;
    a.run = *request;
    a.run.valuesLimit = 0;
    a.run.saveOutputsPath.clear();
    a.criterion = criterion_->criterion();
    for (const auto& v : property("pinned").toList()) {
        a.pinNodes.push_back(v.toInt());
    }
    if (compareKind_ == QLatin1String("device")) {
        a.compareDevice = compareTarget_.toStdString();
    } else if (compareKind_ == QLatin1String("file")) {
        a.referenceFile = compareTarget_.toStdString();
    } else if (compareKind_ == QLatin1String("inputs") && keptRun_) {
        a.compareRun = *keptRun_;
        a.compareRun->valuesLimit = 0;
        a.compareRun->saveOutputsPath.clear();
    } else if (compareKind_ == QLatin1String("model")) {
        a.referenceModel = compareTarget_.toStdString();
        for (const auto& library : operator_libraries::remembered()) {
            a.referenceOperatorLibraries.push_back(library.toStdString());
        }
    }
    recordedReference_ = q(a.referenceModel);
    record_->setEnabled(false);
    status_->setText(tr("Recording every value of %1\u2026").arg(q(a.run.method)));
    activationRequest_ = worker_->activations(a);
}

void NumericsPanel::showReport(const ActivationReport& report) {
    if (!report.outputsOnly.why.empty()) {
        // Compared by outputs alone: no value was recorded, the Compare tab says what was.
        model_->setReport({});
        memory_->clear();
        comparison_->setReport(report);
        status_->setText(tr("No values recorded: compared with another model by its outputs "
                            "alone, in the Compare tab (%1).")
                             .arg(q(report.outputsOnly.why).toHtmlEscaped()));
        Q_EMIT activationsShown();
        return;
    }
    model_->setReport(report);
    comparison_->setReport(report);
    requestComparedDiagrams(report);
    memory_->setReport(report);
    table_->setColumnHidden(ActivationTableModel::DiffColumn, report.comparison.empty());
    table_->resizeColumnsToContents();
    const auto& records = report.records;
    QStringList lines;
    lines << tr("%1 values from %2 on %3, %4 ms with statistics.")
                 .arg(records.size())
                 .arg(q(report.method), q(report.device))
                 .arg(report.runMs, 0, 'f', 1);
    if (report.firstNonFinite >= 0) {
        const auto& bad = records[static_cast<size_t>(report.firstNonFinite)];
        lines << tr("<b>First NaN / Inf:</b> #%1 %2 in %3%4 (%5 NaN, %6 Inf of %7).")
                     .arg(report.firstNonFinite)
                     .arg(where(bad).toHtmlEscaped(),
                          bad.module.empty() ? tr("the root module") : q(bad.module),
                          bad.source.empty() ? QString() : QStringLiteral(", ") + q(bad.source))
                     .arg(bad.nanCount)
                     .arg(bad.infCount)
                     .arg(bad.numel);
    } else {
        lines << tr("No NaN or Inf.");
    }
    if (!report.comparison.empty()) {
        const ComparisonVerdict verdict = verdictOf(report);
        if (report.firstDifference >= 0) {
            const auto& d = records[static_cast<size_t>(report.firstDifference)];
            const ValueDifference difference = differenceOf(d);
            lines << tr("Compared with %1: %2 values; <b>the first apart</b> is #%3 %4 in %5: %6.")
                         .arg(q(report.comparison).toHtmlEscaped())
                         .arg(report.comparedCount)
                         .arg(report.firstDifference)
                         .arg(where(d).toHtmlEscaped(),
                              d.module.empty() ? tr("the root module") : q(d.module),
                              q(failedMeasures(difference, report.criterion)).toHtmlEscaped());
        } else if (verdict.verdict == Verdict::CouldNotCompare) {
            lines << tr("Compared with %1: <b>could not compare</b>, %2.")
                         .arg(q(report.comparison).toHtmlEscaped(), q(verdict.why).toHtmlEscaped());
        } else {
            lines << tr("Compared with %1: %2 values, all agree (%3).")
                         .arg(q(report.comparison).toHtmlEscaped())
                         .arg(report.comparedCount)
                         .arg(q(describe(report.criterion)).toHtmlEscaped());
        }
        if (!report.unmatched.empty()) {
            QStringList names;
            for (const auto& n : report.unmatched) {
                names << q(n);
            }
            lines << tr("Matched no module output: %1").arg(names.join(QStringLiteral(", ")));
        }
    }
    for (const auto& note : report.notes) {
        lines << q(note).toHtmlEscaped();
    }
    status_->setText(lines.join(QStringLiteral("<br>")));
    firstNonFinite_->setEnabled(report.firstNonFinite >= 0);
    firstDifference_->setEnabled(report.firstDifference >= 0);
    inGraph_->setEnabled(!records.empty());
    paint_->setEnabled(!records.empty());
    if (report.firstNonFinite >= 0) {
        showFirstNonFinite();
    } else if (report.firstDifference >= 0) {
        const QModelIndex index = proxy_->mapFromSource(model_->index(report.firstDifference, 0));
        table_->setCurrentIndex(index);
        table_->scrollTo(index);
    } else if (!records.empty()) {
        table_->setCurrentIndex(proxy_->index(0, 0));
    }
    updatePaint();
    Q_EMIT activationsShown();
}

void NumericsPanel::showSelected() {
    histogram_->clearPlottables();
    const QModelIndex current = proxy_->mapToSource(table_->currentIndex());
    if (!current.isValid()) {
        details_->clear();
        histogram_->replot();
        return;
    }
    const auto& r = model_->report().records[static_cast<size_t>(current.row())];
    QStringList lines;
    lines << QStringLiteral("<b>%%1</b> = %2")
                 .arg(q(r.value).toHtmlEscaped(), where(r).toHtmlEscaped());
    lines << tr("module %1").arg(r.module.empty() ? tr("(root)") : q(r.module));
    if (!r.moduleOutputs.empty()) {
        QStringList paths;
        for (const auto& p : r.moduleOutputs) {
            paths << q(p);
        }
        lines << tr("the output of %1").arg(paths.join(QStringLiteral(", ")));
    }
    if (!r.source.empty()) {
        lines << tr("%1: <code>%2</code>").arg(q(r.source), q(r.sourceText).toHtmlEscaped());
    }
    if (r.irLine > 0) {
        lines << tr("line %1 of the inlined graph").arg(r.irLine);
    }
    lines << tr("%1 %2 on %3, %4 values")
                 .arg(shapeText(r.shape), q(r.dtype), q(r.device))
                 .arg(r.numel);
    if (!r.comparedWith.empty()) {
        lines << (r.compared ? tr("max |diff| %1 against %2 (relative %3, cosine %4, SNR %5 dB)")
                                   .arg(number(r.maxAbsDiff), q(r.comparedWith),
                                        number(r.maxRelDiff), number(r.cosine), number(r.snrDb))
                             : tr("not compared: %1").arg(q(r.compareNote)));
    }
    if (!r.values.empty()) {
        QStringList first;
        for (size_t i = 0; i < std::min<size_t>(8, r.values.size()); ++i) {
            first << number(static_cast<double>(r.values[i]));
        }
        lines << tr("kept: %1%2")
                     .arg(first.join(QStringLiteral(", ")),
                          r.values.size() > 8 ? QStringLiteral(", \u2026") : QString());
    }
    details_->setText(lines.join(QStringLiteral("<br>")));

    if (!r.histogram.empty() && r.histogramMax >= r.histogramMin) {
        auto* bars = new QCPBars(histogram_->xAxis, histogram_->yAxis);
        const int bins = static_cast<int>(r.histogram.size());
        const double width =
            r.histogramMax > r.histogramMin ? (r.histogramMax - r.histogramMin) / bins : 1.0;
        QVector<double> keys, counts;
        double most = 0;
        for (int b = 0; b < bins; ++b) {
            keys << r.histogramMin + (b + 0.5) * width;
            counts << static_cast<double>(r.histogram[static_cast<size_t>(b)]);
            most = std::max(most, counts.back());
        }
        bars->setWidth(width * 0.9);
        bars->setData(keys, counts);
        bars->setPen(Qt::NoPen);
        bars->setBrush(r.nonFinite() ? QColor(229, 57, 53) : QColor(30, 136, 229));
        histogram_->xAxis->setRange(r.histogramMin - width, r.histogramMax + width);
        histogram_->yAxis->setRange(0, std::max(1.0, most * 1.08));
    }
    if (auto* title = qobject_cast<QCPTextElement*>(histogram_->plotLayout()->element(0, 0))) {
        title->setText(noFiniteValue(r) ? tr("%%1: no finite value").arg(q(r.value))
                                        : tr("%%1: finite values").arg(q(r.value)));
    }
    histogram_->replot();
}

void NumericsPanel::findFirstNonFinite() {
    tabs_->setCurrentIndex(0);
    recordActivations();
    selectFirstNonFinite_ = activationRequest_ != 0;
}

void NumericsPanel::showFirstNonFinite() {
    const int row = model_->report().firstNonFinite;
    if (row < 0) {
        return;
    }
    if (!proxy_->mapFromSource(model_->index(row, 0)).isValid()) {
        filter_->clear(); // the filter hid it
    }
    const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    table_->setCurrentIndex(index);
    table_->scrollTo(index, QAbstractItemView::PositionAtCenter);
}

void NumericsPanel::showRecordInGraph(int record) {
    const auto& report = model_->report();
    if (record < 0 || record >= static_cast<int>(report.records.size())) {
        return;
    }
    const auto& r = report.records[static_cast<size_t>(record)];
    if (report.method != "forward") {
        status_->setText(tr("The graph shows forward's inlined graph; these values are of %1.")
                             .arg(q(report.method)));
        return;
    }
    if (r.node < 0) {
        status_->setText(tr("%1 is an input of the method: it has no node.").arg(q(r.value)));
        return;
    }
    Q_EMIT showModelWorkspace();
    workspace_->showForwardNode(r.node);
}

void NumericsPanel::updatePaint() {
    const QString by = paint_->currentData().toString();
    const auto& report = model_->report();
    GraphDiagram::ValueOverlay overlay;
    if (!by.isEmpty() && !report.records.empty()) {
        overlay.method = q(report.method);
        overlay.name = paint_->currentText().remove(QStringLiteral("Graph by "));
        for (const auto& r : report.records) {
            if (r.node < 0) {
                continue;
            }
            double value = 0;
            if (by == QLatin1String("nonfinite")) {
                value = static_cast<double>(r.nanCount + r.infCount);
            } else if (by == QLatin1String("abs")) {
                value = noFiniteValue(r) ? 0 : std::max(std::abs(r.min), std::abs(r.max));
            } else if (by == QLatin1String("std")) {
                value = noFiniteValue(r) ? 0 : r.stddev;
            } else if (by == QLatin1String("diff")) {
                value = r.compared ? std::min(r.maxAbsDiff, 1e300) : 0;
            }
            if (value <= 0) {
                continue;
            }
            auto& node = overlay.nodes[r.node];
            node = std::max(node, value);
            // Every module around the node: the largest of its nodes.
            for (std::string path = r.module;;) {
                auto& module = overlay.modules[path];
                module = std::max(module, value);
                if (path.empty()) {
                    break;
                }
                const auto dot = path.rfind('.');
                path = dot == std::string::npos ? std::string() : path.substr(0, dot);
            }
        }
    }
    workspace_->setValueOverlay(overlay);
}

} // namespace scriptscope
