// The Numerics workspace's Passes tab: optimisation passes on a copy of the model.
#include "numerics_common.h"
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

using namespace numerics;

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

} // namespace scriptscope
