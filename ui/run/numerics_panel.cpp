#include "numerics_panel.h"

#include "capability.h"
#include "operator_libraries.h"

#include "model_workspace.h"
#include "run_panel.h"
#include "worker_client.h"

#include <format.h>

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
namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString shapeText(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (const int64_t size : shape) {
        parts << QString::number(size);
    }
    return parts.isEmpty() ? QStringLiteral("scalar") : parts.join(QLatin1Char('x'));
}

bool noFiniteValue(const ActivationRecord& r) {
    return r.numel > 0 && r.nanCount + r.infCount == r.numel;
}

QString number(double v) {
    return QString::number(v, 'g', 5);
}

QString where(const ActivationRecord& r) {
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

QPlainTextEdit* codeText(QWidget* parent) {
    auto* view = new QPlainTextEdit(parent);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    view->setFont(mono);
    return view;
}

// Background of removed (red) and added (green) lines, readable in light and dark themes.
QColor diffColour(bool added, const QPalette& palette) {
    const bool dark = palette.color(QPalette::Base).lightness() < 128;
    if (added) {
        return dark ? QColor(30, 80, 40) : QColor(214, 245, 214);
    }
    return dark ? QColor(95, 35, 35) : QColor(255, 222, 222);
}

// Fills a text view, painting each line's background by `marks` (0 none, 1 removed, 2 added,
// 3 a gap where the other side has lines).
void fillMarked(QPlainTextEdit* view, const QStringList& lines, const std::vector<int>& marks) {
    view->setPlainText(lines.join(QLatin1Char('\n')));
    QList<QTextEdit::ExtraSelection> selections;
    QTextBlock block = view->document()->firstBlock();
    for (size_t i = 0; block.isValid() && i < marks.size(); ++i, block = block.next()) {
        if (marks[i] == 0) {
            continue;
        }
        QTextEdit::ExtraSelection selection;
        selection.cursor = QTextCursor(block);
        selection.format.setProperty(QTextFormat::FullWidthSelection, true);
        selection.format.setBackground(marks[i] == 3
                                           ? view->palette().color(QPalette::AlternateBase)
                                           : diffColour(marks[i] == 2, view->palette()));
        selections << selection;
    }
    view->setExtraSelections(selections);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The table

void ActivationTableModel::setReport(const ActivationReport& report) {
    beginResetModel();
    report_ = report;
    endResetModel();
}

int ActivationTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(report_.records.size());
}

int ActivationTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ActivationTableModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == StdColumn) {
        return tr("Standard deviation of the finite values as torch.std() computes it: unbiased, "
                  "dividing by n \u2212 1 (0 for a single value)");
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case IndexColumn:
        return tr("#");
    case NodeColumn:
        return tr("Node");
    case ModuleColumn:
        return tr("Module");
    case ShapeColumn:
        return tr("Shape");
    case DtypeColumn:
        return tr("dtype");
    case MinColumn:
        return tr("Min");
    case MaxColumn:
        return tr("Max");
    case MeanColumn:
        return tr("Mean");
    case StdColumn:
        return tr("Std");
    case NanColumn:
        return tr("NaN");
    case InfColumn:
        return tr("Inf");
    case DiffColumn:
        return tr("Max |diff|");
    default:
        return {};
    }
}

QVariant ActivationTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto row = static_cast<size_t>(index.row());
    const ActivationRecord& r = report_.records[row];
    const bool stats = r.note.empty() && r.numel > 0 && !noFiniteValue(r);
    const bool beyond = r.compared && r.maxAbsDiff > report_.tolerance;
    if (role == RecordRole) {
        return index.row();
    }
    if (role == NonFiniteRole) {
        return r.nonFinite();
    }
    if (role == SortRole) {
        switch (index.column()) {
        case IndexColumn:
            return index.row();
        case MinColumn:
            return stats ? r.min : -HUGE_VAL;
        case MaxColumn:
            return stats ? r.max : -HUGE_VAL;
        case MeanColumn:
            return stats ? r.mean : -HUGE_VAL;
        case StdColumn:
            return stats ? r.stddev : -HUGE_VAL;
        case NanColumn:
            return static_cast<qlonglong>(r.nanCount);
        case InfColumn:
            return static_cast<qlonglong>(r.infCount);
        case DiffColumn:
            return r.compared ? r.maxAbsDiff : -1.0;
        case ShapeColumn:
            return static_cast<qlonglong>(r.numel);
        default:
            break;
        }
        return data(index, Qt::DisplayRole);
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case IndexColumn:
            return index.row();
        case NodeColumn:
            return where(r);
        case ModuleColumn:
            return r.module.empty() ? tr("(root)") : q(r.module);
        case ShapeColumn:
            return r.note.empty() ? shapeText(r.shape) : q(r.note);
        case DtypeColumn:
            return q(r.dtype);
        case MinColumn:
            return stats ? number(r.min) : QStringLiteral("\u2014");
        case MaxColumn:
            return stats ? number(r.max) : QStringLiteral("\u2014");
        case MeanColumn:
            return stats ? number(r.mean) : QStringLiteral("\u2014");
        case StdColumn:
            return stats ? number(r.stddev) : QStringLiteral("\u2014");
        case NanColumn:
            return static_cast<qlonglong>(r.nanCount);
        case InfColumn:
            return static_cast<qlonglong>(r.infCount);
        case DiffColumn:
            return r.compared              ? number(r.maxAbsDiff)
                   : r.compareNote.empty() ? QString()
                                           : tr("not compared");
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() >= DiffColumn &&
        index.column() != DtypeColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::BackgroundRole) {
        const bool dark = QApplication::palette().color(QPalette::Base).lightness() < 128;
        if (r.nonFinite()) {
            return dark ? QColor(110, 30, 30) : QColor(255, 205, 205);
        }
        if (static_cast<int>(row) == report_.firstDifference ||
            (beyond && index.column() == DiffColumn)) {
            return dark ? QColor(110, 70, 10) : QColor(255, 226, 180);
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        QStringList lines;
        lines << QStringLiteral("%%1 = %2").arg(q(r.value), where(r));
        if (!r.source.empty()) {
            lines << tr("source %1: %2").arg(q(r.source), q(r.sourceText));
        }
        if (!r.moduleOutputs.empty()) {
            QStringList paths;
            for (const auto& p : r.moduleOutputs) {
                paths << q(p);
            }
            lines << tr("the output of %1").arg(paths.join(QStringLiteral(", ")));
        }
        if (!r.comparedWith.empty()) {
            lines
                << (r.compared
                        ? tr("compared with %1: max |diff| %2, relative %3, cosine %4, "
                             "SNR %5 dB")
                              .arg(q(r.comparedWith), number(r.maxAbsDiff), number(r.maxRelDiff),
                                   number(r.cosine), number(r.snrDb))
                        : tr("not compared with %1: %2").arg(q(r.comparedWith), q(r.compareNote)));
        }
        return lines.join(QLatin1Char('\n'));
    }
    return {};
}

// ---------------------------------------------------------------------------------------------
// The panel

NumericsPanel::NumericsPanel(WorkerClient* worker, RunPanel* run, ModelWorkspace* workspace,
                             QWidget* parent)
    : QWidget(parent)
    , worker_(worker)
    , run_(run)
    , workspace_(workspace) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName(QStringLiteral("numericsTabs"));
    tabs_->addTab(buildActivations(), tr("&Activations"));
    tabs_->addTab(buildPasses(), tr("&Passes"));
    tabs_->addTab(buildDiff(), tr("&Diff"));
    layout->addWidget(tabs_);

    connect(worker_, &WorkerClient::activationsReady, this,
            [this](quint64 id, const ActivationReport& report) {
                if (id == activationRequest_) {
                    activationRequest_ = 0;
                    offer(record_, modelInfo_, Capability::Activations);
                    showReport(report);
                    if (std::exchange(selectFirstNonFinite_, false)) {
                        showFirstNonFinite();
                    }
                }
            });
    connect(worker_, &WorkerClient::optimized, this,
            [this](quint64 id, const OptimizeResult& result) {
                if (id == optimizeRequest_) {
                    optimizeRequest_ = 0;
                    offer(apply_, modelInfo_, Capability::Optimize);
                    showPasses(result);
                }
            });
    connect(worker_, &WorkerClient::diffReady, this, [this](quint64 id, const ArchiveDiff& diff) {
        if (id == diffRequest_) {
            diffRequest_ = 0;
            offer(diffOpen_, modelInfo_, Capability::Diff);
            showDiff(diff);
        }
    });
    connect(worker_, &WorkerClient::failed, this, &NumericsPanel::fail);
    clearAll();
    applyPlotPalette();
}

void NumericsPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPlotPalette();
    }
}

void NumericsPanel::applyPlotPalette() {
    stylePlot(histogram_, palette());
}

NumericsPanel::~NumericsPanel() = default;

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
    compare_->addItem(tr("Compare with another archive\u2026"), QStringLiteral("model"));
    compare_->setToolTip(tr("Values saved from Python: torch.save({module_path: tensor, ...}), "
                            "each compared with the output of the module with that path"));
    tolerance_ = new QDoubleSpinBox(page);
    tolerance_->setDecimals(8);
    tolerance_->setRange(0, 1e6);
    tolerance_->setValue(1e-4);
    tolerance_->setPrefix(tr("tolerance "));
    tolerance_->setToolTip(tr("The largest |difference| that still counts as equal"));
    bar->addWidget(record_);
    bar->addWidget(compare_);
    bar->addWidget(tolerance_);
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
            target = QFileDialog::getOpenFileName(
                this, tr("Another model"), {},
                tr("PyTorch models (*.pt *.pth *.ptl *.pt2 *.zip);;All files (*)"));
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
                                 : tr("Compare with another archive\u2026"));
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
    a.tolerance = tolerance_->value();
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
    record_->setEnabled(false);
    status_->setText(tr("Recording every value of %1\u2026").arg(q(a.run.method)));
    activationRequest_ = worker_->activations(a);
}

void NumericsPanel::showReport(const ActivationReport& report) {
    model_->setReport(report);
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
        if (report.firstDifference >= 0) {
            const auto& d = records[static_cast<size_t>(report.firstDifference)];
            lines << tr("Compared with %1: %2 values; <b>the first beyond %3</b> is #%4 %5 in %6 "
                        "(max |diff| %7).")
                         .arg(q(report.comparison).toHtmlEscaped())
                         .arg(report.comparedCount)
                         .arg(report.tolerance)
                         .arg(report.firstDifference)
                         .arg(where(d).toHtmlEscaped(),
                              d.module.empty() ? tr("the root module") : q(d.module),
                              number(d.maxAbsDiff));
        } else {
            lines << tr("Compared with %1: %2 values, all within %3.")
                         .arg(q(report.comparison).toHtmlEscaped())
                         .arg(report.comparedCount)
                         .arg(report.tolerance);
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

// ---------------------------------------------------------------------------------------------
// Passes

QWidget* NumericsPanel::buildPasses() {
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    auto* top = new QHBoxLayout;
    auto* left = new QVBoxLayout;
    left->addWidget(new QLabel(tr("Passes, in order (drag to reorder):"), page));
    passes_ = new QListWidget(page);
    passes_->setObjectName(QStringLiteral("passList"));
    passes_->setDragDropMode(QAbstractItemView::InternalMove);
    for (const auto& pass : availablePasses()) {
        auto* item = new QListWidgetItem(q(pass.name), passes_);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(pass.name == "freeze" ? Qt::Checked : Qt::Unchecked);
        item->setToolTip(q(pass.description));
        item->setData(Qt::UserRole, q(pass.name));
    }
    passes_->setMaximumWidth(passes_->sizeHintForColumn(0) + 60);
    left->addWidget(passes_);
    apply_ = new QPushButton(tr("Apply to a copy"), page);
    apply_->setObjectName(QStringLiteral("applyPasses"));
    apply_->setToolTip(tr("The loaded model stays as it is. With the Run workspace's inputs, "
                          "both are timed and their outputs compared"));
    saveCopy_ = new QPushButton(tr("Save the copy\u2026"), page);
    saveCopy_->setObjectName(QStringLiteral("saveOptimised"));
    left->addWidget(apply_);
    left->addWidget(saveCopy_);
    top->addLayout(left);

    auto* right = new QVBoxLayout;
    passSummary_ = new QLabel(page);
    passSummary_->setObjectName(QStringLiteral("passSummary"));
    passSummary_->setWordWrap(true);
    passSummary_->setTextFormat(Qt::RichText);
    passSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    right->addWidget(passSummary_);
    auto* split = new QSplitter(Qt::Horizontal, page);
    kinds_ = new QTableWidget(0, 3, split);
    kinds_->setObjectName(QStringLiteral("kindCounts"));
    kinds_->setHorizontalHeaderLabels({tr("Kind"), tr("Before"), tr("After")});
    kinds_->verticalHeader()->hide();
    kinds_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    kinds_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    kinds_->verticalHeader()->setDefaultSectionSize(kinds_->fontMetrics().height() + 6);
    kinds_->setSortingEnabled(true);
    before_ = codeText(split);
    before_->setObjectName(QStringLiteral("graphBefore"));
    after_ = codeText(split);
    after_->setObjectName(QStringLiteral("graphAfter"));
    split->addWidget(kinds_);
    split->addWidget(before_);
    split->addWidget(after_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 2);
    split->setSizes({340, 420, 420});
    right->addWidget(split, 1);
    top->addLayout(right, 1);
    layout->addLayout(top, 1);

    // The two sides scroll together (their lines are aligned).
    connect(before_->verticalScrollBar(), &QScrollBar::valueChanged, after_->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(after_->verticalScrollBar(), &QScrollBar::valueChanged, before_->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(apply_, &QPushButton::clicked, this, &NumericsPanel::applyPasses);
    connect(saveCopy_, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save the optimised copy"),
            QFileInfo(q(modelInfo_.path)).completeBaseName() + QStringLiteral("_optimised.pt"),
            tr("TorchScript archives (*.pt)"));
        QString why;
        if (!path.isEmpty() && !saveOptimisedCopy(path, &why)) {
            passSummary_->setText(passSummary_->text() + QStringLiteral("<br>") + why);
        }
    });
    return page;
}

void NumericsPanel::applyPasses() {
    OptimizeRequest request;
    for (int i = 0; i < passes_->count(); ++i) {
        if (passes_->item(i)->checkState() == Qt::Checked) {
            request.passes.push_back(passes_->item(i)->data(Qt::UserRole).toString().toStdString());
        }
    }
    if (request.passes.empty()) {
        passSummary_->setText(tr("Tick at least one pass."));
        return;
    }
    QString why;
    if (const auto run = run_->buildRequest(&why)) {
        request.run = *run;
        request.run.saveOutputsPath.clear();
        request.run.valuesLimit = 0;
        request.run.profile = false;
        request.run.iterations = std::max(request.run.iterations, 10);
    } else {
        request.run.method = "forward";
    }
    const QString scratch = worker_->scratchPath();
    static int copies = 0;
    if (!scratch.isEmpty()) {
        request.savePath =
            QDir(scratch).filePath(QStringLiteral("optimised-%1.pt").arg(++copies)).toStdString();
    }
    apply_->setEnabled(false);
    saveCopy_->setEnabled(false);
    passSummary_->setText(tr("Optimising a copy\u2026"));
    optimizeRequest_ = worker_->optimize(request);
}

void NumericsPanel::showPasses(const OptimizeResult& r) {
    optimizeResult_ = r;
    optimisedCopy_ = q(r.saved);
    saveCopy_->setEnabled(!optimisedCopy_.isEmpty());
    saveCopy_->setToolTip(!r.saveError.empty() ? q(r.saveError)
                          : r.savedVerified
                              ? tr("Write the optimised copy (it was loaded back and run once)")
                              : QString());
    QStringList applied;
    for (const auto& a : r.applied) {
        applied << q(a);
    }
    QStringList lines;
    lines << tr("<b>%1</b>: %2 nodes \u2192 %3")
                 .arg(applied.join(QStringLiteral(", ")))
                 .arg(r.nodesBefore)
                 .arg(r.nodesAfter);
    if (r.timed) {
        lines << tr("p50 %1 ms \u2192 %2 ms: <b>%3\u00d7</b> (%4 runs each, interleaved)")
                     .arg(r.before.p50, 0, 'f', 3)
                     .arg(r.after.p50, 0, 'f', 3)
                     .arg(r.speedup, 0, 'f', 2)
                     .arg(r.before.count);
    }
    if (r.outputsCompared) {
        lines << tr("outputs: max |diff| %1").arg(number(r.maxAbsDiff));
    } else if (!r.compareNote.empty()) {
        lines << tr("outputs not compared: %1").arg(q(r.compareNote));
    }
    if (!r.modules.empty()) {
        lines << (r.firstDifferentModule.empty()
                      ? tr("%1 module outputs compared, all within %2")
                            .arg(r.modules.size())
                            .arg(r.tolerance)
                      : tr("%1 module outputs compared; the first beyond %2: <b>%3</b>")
                            .arg(r.modules.size())
                            .arg(r.tolerance)
                            .arg(q(r.firstDifferentModule)));
    }
    if (!r.saveError.empty()) {
        // The copy was not kept: "Save the copy" stays off rather than hand over a broken file.
        lines << tr("<b>No copy to save</b>: %1").arg(q(r.saveError).toHtmlEscaped());
    }
    for (const auto& note : r.notes) {
        lines << q(note).toHtmlEscaped();
    }
    passSummary_->setText(lines.join(QStringLiteral("<br>")));

    kinds_->setSortingEnabled(false);
    kinds_->setRowCount(static_cast<int>(r.kinds.size()));
    for (int row = 0; row < static_cast<int>(r.kinds.size()); ++row) {
        const auto& k = r.kinds[static_cast<size_t>(row)];
        auto* kind = new QTableWidgetItem(q(k.kind));
        auto* before = new QTableWidgetItem;
        before->setData(Qt::DisplayRole, k.before);
        auto* after = new QTableWidgetItem;
        after->setData(Qt::DisplayRole, k.after);
        if (k.before != k.after) {
            const QColor c = diffColour(k.after > k.before, kinds_->palette());
            kind->setBackground(c);
            before->setBackground(c);
            after->setBackground(c);
        }
        kinds_->setItem(row, 0, kind);
        kinds_->setItem(row, 1, before);
        kinds_->setItem(row, 2, after);
    }
    kinds_->setSortingEnabled(true);
    kinds_->resizeColumnToContents(1);
    kinds_->resizeColumnToContents(2);

    // Side by side: a removed run beside the added run that replaced it, blank lines opposite.
    QStringList left, right;
    std::vector<int> leftMarks, rightMarks;
    const auto& lines2 = r.graphDiff;
    for (size_t i = 0; i < lines2.size();) {
        if (lines2[i].op == DiffLine::Op::Same) {
            left << q(lines2[i].text);
            right << q(lines2[i].text);
            leftMarks.push_back(0);
            rightMarks.push_back(0);
            ++i;
            continue;
        }
        QStringList removed, added;
        while (i < lines2.size() && lines2[i].op != DiffLine::Op::Same) {
            (lines2[i].op == DiffLine::Op::Removed ? removed : added) << q(lines2[i].text);
            ++i;
        }
        const auto n = std::max(removed.size(), added.size());
        for (qsizetype k = 0; k < n; ++k) {
            left << (k < removed.size() ? removed[k] : QString());
            leftMarks.push_back(k < removed.size() ? 1 : 3);
            right << (k < added.size() ? added[k] : QString());
            rightMarks.push_back(k < added.size() ? 2 : 3);
        }
    }
    fillMarked(before_, left, leftMarks);
    fillMarked(after_, right, rightMarks);
    Q_EMIT passesShown();
}

bool NumericsPanel::saveOptimisedCopy(const QString& path, QString* why) {
    if (optimisedCopy_.isEmpty() || !QFile::exists(optimisedCopy_)) {
        *why = tr("There is no optimised copy to save (apply passes first).");
        return false;
    }
    if (QFile::exists(path) && !QFile::remove(path)) {
        *why = tr("Cannot replace %1.").arg(path);
        return false;
    }
    if (!QFile::copy(optimisedCopy_, path)) {
        *why = tr("Cannot write %1.").arg(path);
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Diff

QWidget* NumericsPanel::buildDiff() {
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    auto* bar = new QHBoxLayout;
    diffOpen_ = new QPushButton(tr("Compare with an archive\u2026"), page);
    diffOpen_->setObjectName(QStringLiteral("diffOpen"));
    diffSummary_ = new QLabel(page);
    diffSummary_->setObjectName(QStringLiteral("diffSummary"));
    diffSummary_->setWordWrap(true);
    diffSummary_->setTextFormat(Qt::RichText);
    diffSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bar->addWidget(diffOpen_);
    bar->addWidget(diffSummary_, 1);
    layout->addLayout(bar);
    auto* split = new QSplitter(Qt::Horizontal, page);
    diffTree_ = new QTreeWidget(split);
    diffTree_->setObjectName(QStringLiteral("diffTree"));
    diffTree_->setHeaderLabels({tr("What"), tr("Change"), tr("Detail")});
    diffTree_->setRootIsDecorated(true);
    diffText_ = codeText(split);
    diffText_->setObjectName(QStringLiteral("diffText"));
    split->addWidget(diffTree_);
    split->addWidget(diffText_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
    connect(diffOpen_, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Compare with an archive"), QFileInfo(q(modelInfo_.path)).absolutePath(),
            tr("Models (*.pt *.pth *.zip *.pt2 *.pte);;All files (*)"));
        if (!path.isEmpty()) {
            compareWith(path);
        }
    });
    connect(diffTree_, &QTreeWidget::currentItemChanged, this, &NumericsPanel::showDiffItem);
    return page;
}

void NumericsPanel::compareWith(const QString& path) {
    diffOpen_->setEnabled(false);
    diffSummary_->setText(tr("Comparing with %1\u2026").arg(path));
    diffRequest_ = worker_->diff(path, operator_libraries::remembered());
}

void NumericsPanel::showDiff(const ArchiveDiff& d) {
    diff_ = d;
    diffTree_->clear();
    diffText_->clear();
    const QString other = QFileInfo(q(d.pathB)).fileName();
    if (d.identical) {
        diffSummary_->setText(tr("<b>The same as %1</b>: %2 parameters and buffers, every module, "
                                 "attribute, method's code and graph, and the extra files.")
                                  .arg(other)
                                  .arg(d.tensorsCompared));
        Q_EMIT diffShown();
        return;
    }
    diffSummary_->setText(tr("Against <b>%1</b>: %2 module changes, %3 tensors differ (of %4 "
                             "compared), %5 attributes, %6 code and graph texts, %7 extra files.")
                              .arg(other)
                              .arg(d.modules.size())
                              .arg(d.tensors.size())
                              .arg(d.tensorsCompared)
                              .arg(d.attributes.size())
                              .arg(d.texts.size())
                              .arg(d.extraFiles.size()));
    auto section = [&](const QString& title, size_t count) -> QTreeWidgetItem* {
        auto* item = new QTreeWidgetItem(diffTree_, {title, QString::number(count)});
        QFont bold = item->font(0);
        bold.setBold(true);
        item->setFont(0, bold);
        item->setExpanded(true);
        return item;
    };
    if (!d.modules.empty()) {
        auto* s = section(tr("Modules"), d.modules.size());
        for (const auto& m : d.modules) {
            new QTreeWidgetItem(s, {m.path.empty() ? tr("(root)") : q(m.path), q(toString(m.kind)),
                                    m.kind == ModuleChange::Kind::Retyped
                                        ? q(m.typeA) + QStringLiteral(" \u2192 ") + q(m.typeB)
                                        : q(m.typeA.empty() ? m.typeB : m.typeA)});
        }
    }
    if (!d.tensors.empty()) {
        auto* s = section(tr("Parameters and buffers"), d.tensors.size());
        for (const auto& t : d.tensors) {
            QString detail;
            switch (t.kind) {
            case TensorChange::Kind::Values:
                detail = tr("max |diff| %1 in %2 of %3 values")
                             .arg(number(t.maxAbsDiff))
                             .arg(t.differing)
                             .arg(t.numel);
                break;
            case TensorChange::Kind::Shape:
                detail = shapeText(t.shapeA) + QStringLiteral(" \u2192 ") + shapeText(t.shapeB);
                break;
            case TensorChange::Kind::Dtype:
                detail = q(t.dtypeA) + QStringLiteral(" \u2192 ") + q(t.dtypeB);
                break;
            case TensorChange::Kind::Added:
                detail = shapeText(t.shapeB) + QLatin1Char(' ') + q(t.dtypeB);
                break;
            case TensorChange::Kind::Removed:
                detail = shapeText(t.shapeA) + QLatin1Char(' ') + q(t.dtypeA);
                break;
            }
            new QTreeWidgetItem(s, {q(t.name), q(toString(t.kind)), detail});
        }
    }
    if (!d.attributes.empty()) {
        auto* s = section(tr("Attributes"), d.attributes.size());
        for (const auto& a : d.attributes) {
            new QTreeWidgetItem(
                s, {(a.module.empty() ? QString() : q(a.module) + QLatin1Char('.')) + q(a.name),
                    tr("changed"),
                    (a.valueA.empty() ? tr("(none)") : q(a.valueA)) + QStringLiteral(" \u2192 ") +
                        (a.valueB.empty() ? tr("(none)") : q(a.valueB))});
        }
    }
    if (!d.texts.empty()) {
        auto* s = section(tr("Code and graphs"), d.texts.size());
        for (size_t i = 0; i < d.texts.size(); ++i) {
            const auto& t = d.texts[i];
            auto* item = new QTreeWidgetItem(
                s,
                {(t.module.empty() ? tr("(root)") : q(t.module)) + QLatin1Char('.') + q(t.method),
                 q(t.what), QStringLiteral("+%1 \u2212%2").arg(t.added).arg(t.removed)});
            item->setData(0, Qt::UserRole, static_cast<int>(i));
        }
    }
    if (!d.extraFiles.empty()) {
        auto* s = section(tr("Extra files"), d.extraFiles.size());
        for (const auto& e : d.extraFiles) {
            new QTreeWidgetItem(s, {q(e.name), q(e.change)});
        }
    }
    diffTree_->resizeColumnToContents(0);
    diffTree_->resizeColumnToContents(1);
    // The first text change shows at once.
    for (int i = 0; i < diffTree_->topLevelItemCount(); ++i) {
        auto* top = diffTree_->topLevelItem(i);
        if (top->childCount() && top->child(0)->data(0, Qt::UserRole).isValid()) {
            diffTree_->setCurrentItem(top->child(0));
            break;
        }
    }
    Q_EMIT diffShown();
}

void NumericsPanel::showDiffItem() {
    auto* item = diffTree_->currentItem();
    if (!item || !item->data(0, Qt::UserRole).isValid()) {
        return;
    }
    const int index = item->data(0, Qt::UserRole).toInt();
    if (index < 0 || index >= static_cast<int>(diff_.texts.size())) {
        return;
    }
    const auto& t = diff_.texts[static_cast<size_t>(index)];
    QStringList lines;
    std::vector<int> marks;
    for (const auto& l : t.lines) {
        switch (l.op) {
        case DiffLine::Op::Same:
            lines << QStringLiteral("  ") + q(l.text);
            marks.push_back(0);
            break;
        case DiffLine::Op::Removed:
            lines << QStringLiteral("- ") + q(l.text);
            marks.push_back(1);
            break;
        case DiffLine::Op::Added:
            lines << QStringLiteral("+ ") + q(l.text);
            marks.push_back(2);
            break;
        case DiffLine::Op::Skipped:
            lines << tr("\u2026 %1 unchanged lines \u2026").arg(l.count);
            marks.push_back(3);
            break;
        }
    }
    fillMarked(diffText_, lines, marks);
}

// ---------------------------------------------------------------------------------------------

void NumericsPanel::fail(quint64 id, const Error& error) {
    const QString message = q(error.message);
    if (id != 0 && id == activationRequest_) {
        activationRequest_ = 0;
        offer(record_, modelInfo_, Capability::Activations);
        status_->setText(tr("<b>Recording failed:</b> %1").arg(message.toHtmlEscaped()));
    } else if (id != 0 && id == optimizeRequest_) {
        optimizeRequest_ = 0;
        offer(apply_, modelInfo_, Capability::Optimize);
        passSummary_->setText(tr("<b>Failed:</b> %1").arg(message.toHtmlEscaped()));
    } else if (id != 0 && id == diffRequest_) {
        diffRequest_ = 0;
        offer(diffOpen_, modelInfo_, Capability::Diff);
        diffSummary_->setText(tr("<b>Cannot compare:</b> %1").arg(message.toHtmlEscaped()));
    } else {
        return;
    }
    Q_EMIT failedWith(message);
}

void NumericsPanel::clearAll() {
    activationRequest_ = optimizeRequest_ = diffRequest_ = 0;
    selectFirstNonFinite_ = false;
    offer(record_, modelInfo_, Capability::Activations);
    offer(apply_, modelInfo_, Capability::Optimize);
    offer(diffOpen_, modelInfo_, Capability::Diff);
    model_->setReport({});
    histogram_->clearPlottables();
    if (auto* title = qobject_cast<QCPTextElement*>(histogram_->plotLayout()->element(0, 0))) {
        title->setText(tr("Histogram"));
    }
    histogram_->replot();
    details_->clear();
    if (const std::string why = modelInfo_.lacks(Capability::Activations); !why.empty()) {
        // Said where it is read, not only in the disabled button's tooltip.
        status_->setText(tr("Not for this model: %1").arg(q(why).toHtmlEscaped()));
    } else {
        status_->setText(
            tr("Records every value the Run workspace's method computes with its inputs: "
               "statistics per node and loop iteration, the first NaN or Inf, and comparisons."));
    }
    firstNonFinite_->setEnabled(false);
    firstDifference_->setEnabled(false);
    inGraph_->setEnabled(false);
    paint_->setCurrentIndex(0);
    paint_->setEnabled(false);
    setProperty("pinned", QVariantList());
    optimizeResult_ = {};
    optimisedCopy_.clear();
    saveCopy_->setEnabled(false);
    kinds_->setRowCount(0);
    before_->clear();
    after_->clear();
    passSummary_->setText(tr("Applies the ticked passes, in order, to a copy of the model. With "
                             "the Run workspace's inputs both are timed and compared."));
    diff_ = {};
    diffTree_->clear();
    diffText_->clear();
    diffSummary_->setText(tr("Compares the shown archive with another: modules, parameters and "
                             "buffers, attributes, code, graphs and extra files."));
}

void NumericsPanel::setModel(const ModelInfo& model, bool otherModel) {
    modelInfo_ = model;
    // Results are of the model as it was loaded: a reload may have changed it, another model
    // must never show them.
    clearAll();
    if (otherModel) {
        keptRun_.reset();
        setComparison({}, {});
    }
}

} // namespace scriptscope
