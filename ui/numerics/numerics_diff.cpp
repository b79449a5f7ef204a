// The Numerics workspace's Diff tab: the shown archive against another.
#include "numerics_common.h"
#include "numerics_panel.h"

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
            modelFileDialogFilter());
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

} // namespace scriptscope
