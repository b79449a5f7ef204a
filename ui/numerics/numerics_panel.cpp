// The Numerics workspace: the panel, its tabs and what belongs to the shown model
// (numerics_activations.cpp, numerics_passes.cpp and numerics_diff.cpp fill the tabs).
#include "numerics_panel.h"
#include "numerics_common.h"

#include "comparison_view.h"
#include "run_memory_view.h"

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
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
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
#include <QWidgetAction>

#include "plot_style.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace scriptscope {

namespace numerics {

CriterionBox::CriterionBox(QWidget* parent)
    : QToolButton(parent) {
    setObjectName(QStringLiteral("criterion"));
    setPopupMode(QToolButton::InstantPopup);
    setToolTip(tr("When two values agree: max |diff| at most the absolute floor, or max rel, SNR "
                  "and cosine all within their bounds (as scriptscope-cli's --rtol, --min-snr, "
                  "--min-cosine and --atol)"));
    auto* menu = new QMenu(this);
    auto* form = new QWidget(menu);
    auto* layout = new QFormLayout(form);
    const auto box = [form, layout](const QString& label, int decimals, double low, double high,
                                    const QString& objectName, const QString& toolTip) {
        auto* spin = new QDoubleSpinBox(form);
        spin->setDecimals(decimals);
        spin->setRange(low, high);
        spin->setObjectName(objectName);
        spin->setToolTip(toolTip);
        layout->addRow(label, spin);
        return spin;
    };
    rtol_ = box(tr("max rel \u2264"), 6, 0, 1e6, QStringLiteral("criterionRtol"),
                tr("The largest max |diff| over the reference's largest |value| that agrees"));
    snr_ = box(tr("SNR \u2265"), 1, -400, 400, QStringLiteral("criterionSnr"),
               tr("The lowest signal-to-noise ratio that agrees: 10 log10(|reference|\u00b2 / "
                  "|difference|\u00b2)"));
    snr_->setSuffix(tr(" dB"));
    cosine_ = box(tr("cosine \u2265"), 6, -1, 1, QStringLiteral("criterionCosine"),
                  tr("The lowest cosine similarity that agrees"));
    atol_ = box(tr("or max |diff| \u2264"), 8, 0, 1e6, QStringLiteral("criterionAtol"),
                tr("An absolute floor: a value whose max |diff| is at most this agrees whatever "
                   "else (0: none, so that a near-zero output cannot make everything equal)"));
    auto* defaults = new QPushButton(tr("Defaults"), form);
    layout->addRow(QString(), defaults);
    connect(defaults, &QPushButton::clicked, this, [this]() { setCriterion(Criterion()); });
    auto* action = new QWidgetAction(menu);
    action->setDefaultWidget(form);
    menu->addAction(action);
    setMenu(menu);
    for (QDoubleSpinBox* spin : {rtol_, snr_, cosine_, atol_}) {
        connect(spin, &QDoubleSpinBox::valueChanged, this, [this]() { showCriterion(); });
    }
    setCriterion(Criterion());
}

Criterion CriterionBox::criterion() const {
    Criterion c;
    c.rtol = rtol_->value();
    c.minSnrDb = snr_->value();
    c.minCosine = cosine_->value();
    c.atol = atol_->value();
    return c;
}

void CriterionBox::setCriterion(const Criterion& c) {
    rtol_->setValue(c.rtol);
    snr_->setValue(c.minSnrDb);
    cosine_->setValue(c.minCosine);
    atol_->setValue(c.atol);
    showCriterion();
}

void CriterionBox::showCriterion() {
    const Criterion c = criterion();
    QString text = tr("rel %1, %2 dB, cos %3")
                       .arg(QString::number(c.rtol, 'g', 3), QString::number(c.minSnrDb, 'g', 4),
                            QString::number(c.minCosine, 'g', 6));
    if (c.atol > 0) {
        text += tr(", |diff| %1").arg(QString::number(c.atol, 'g', 3));
    }
    setText(text);
}

QPlainTextEdit* codeText(QWidget* parent) {
    auto* view = new QPlainTextEdit(parent);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    view->setFont(mono);
    return view;
}

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

} // namespace numerics

using namespace numerics;

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
    comparison_ = new ComparisonView(this);
    tabs_->addTab(comparison_, tr("&Compare"));
    memory_ = new RunMemoryView(this);
    tabs_->addTab(memory_, tr("&Memory"));
    layout->addWidget(tabs_);

    connect(comparison_, &ComparisonView::compareRequested, this, [this](const QString& path) {
        setComparison(QStringLiteral("model"), path);
        criterion_->setCriterion(comparison_->criterion());
        recordActivations();
    });
    connect(comparison_, &ComparisonView::showRecord, this, &NumericsPanel::showRecordInGraph);
    connect(memory_, &RunMemoryView::showRecord, this, &NumericsPanel::showRecordInGraph);

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
    connect(worker_, &WorkerClient::diagramReady, this,
            [this](quint64 id, std::shared_ptr<const GraphModel> graph) {
                for (const auto side : {ComparisonView::ThisModel, ComparisonView::OtherModel}) {
                    if (id != 0 && id == diagramRequests_[side]) {
                        diagramRequests_[side] = 0;
                        const QString key = diagramKeys_[side];
                        const QString path = key.section(QLatin1Char('\n'), 0, 0);
                        comparison_->setDiagram(side, key, std::move(graph),
                                                (side == ComparisonView::ThisModel
                                                     ? tr("This model: %1")
                                                     : tr("Compared with: %1"))
                                                    .arg(QFileInfo(path).fileName()));
                    }
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

// ---------------------------------------------------------------------------------------------

void NumericsPanel::fail(quint64 id, const Error& error) {
    const QString message = q(error.message);
    for (const auto side : {ComparisonView::ThisModel, ComparisonView::OtherModel}) {
        if (id != 0 && id == diagramRequests_[side]) {
            // Said where the diagram would be: the comparison itself stands.
            diagramRequests_[side] = 0;
            comparison_->setDiagramMessage(side, {}, tr("No diagram: %1").arg(message));
            return;
        }
    }
    if (id != 0 && id == activationRequest_) {
        activationRequest_ = 0;
        offer(record_, modelInfo_, Capability::Activations);
        status_->setText(tr("<b>Recording failed:</b> %1").arg(message.toHtmlEscaped()));
        if (compareKind_ == QLatin1String("model")) {
            // The Compare tab says it too: never a blank table where a comparison was asked for.
            comparison_->showFailure(compareTarget_, message);
        }
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
    diagramRequests_ = {};
    selectFirstNonFinite_ = false;
    offer(record_, modelInfo_, Capability::Activations);
    offer(apply_, modelInfo_, Capability::Optimize);
    offer(diffOpen_, modelInfo_, Capability::Diff);
    model_->setReport({});
    comparison_->clear();
    // A model whose values cannot be seen but which runs is compared by its outputs.
    comparison_->setUnavailable(modelInfo_.lacks(Capability::Activations).empty()
                                    ? QString()
                                    : q(modelInfo_.lacks(Capability::Run)));
    memory_->clear();
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

void NumericsPanel::requestComparedDiagrams(const ActivationReport& report) {
    if (comparison_->table()->rowCount() == 0) {
        return; // no comparison shown
    }
    const QString method = q(report.method);
    const std::array<QString, 2> paths = {q(modelInfo_.path), recordedReference_};
    for (const auto side : {ComparisonView::ThisModel, ComparisonView::OtherModel}) {
        const QString key = paths[side] + QLatin1Char('\n') + method;
        if (comparison_->diagramKey(side) == key ||
            (diagramRequests_[side] != 0 && diagramKeys_[side] == key)) {
            continue;
        }
        diagramKeys_[side] = key;
        diagramRequests_[side] = 0;
        if (paths[side].isEmpty()) {
            comparison_->setDiagramMessage(
                side, key, tr("Values saved from Python: there is no graph to draw."));
            continue;
        }
        comparison_->setDiagramMessage(side, {}, tr("Building the diagram\u2026"));
        // The graph the records' nodes are of: the method's, inlined.
        diagramRequests_[side] = side == ComparisonView::ThisModel
                                     ? worker_->diagram({}, method, true)
                                     : worker_->diagramOf(paths[side], {}, method, true,
                                                          operator_libraries::remembered());
    }
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
