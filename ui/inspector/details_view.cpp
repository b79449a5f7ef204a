#include "details_view.h"

#include "capability.h"
#include "item_rows.h"

#include <format.h>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>

#include <map>

namespace scriptscope {
using inspector::flatTable;
using inspector::q;
using inspector::readOnlyRow;

DetailsView::DetailsView(QWidget* parent)
    : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    detailsHeader_ = new QLabel(this);
    detailsHeader_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    detailsModel_ = new QStandardItemModel(this);
    details_ = new QTreeView(this);
    details_->setObjectName(QStringLiteral("details"));
    details_->setModel(detailsModel_);
    details_->setUniformRowHeights(true);
    details_->setAlternatingRowColors(true);
    statisticsButton_ = new QPushButton(tr("Compute &statistics"), this);
    statisticsButton_->setToolTip(
        tr("min, max, mean, std and NaN/Inf counts of this module's parameters and "
           "buffers (reads every value)"));
    statisticsButton_->setEnabled(false);
    auto* bar = new QHBoxLayout;
    bar->addWidget(detailsHeader_, 1);
    bar->addWidget(statisticsButton_);
    layout->addLayout(bar);
    layout->addWidget(details_);
    connect(statisticsButton_, &QPushButton::clicked, this, &DetailsView::statisticsRequested);
}

void DetailsView::setModule(const ModuleInfo* m, const ModelInfo& model) {
    detailsModel_->clear();
    detailsModel_->setHorizontalHeaderLabels(
        {tr("Name"), tr("Shape / type"), tr("Dtype / value"), tr("Size"), tr("Statistics")});
    if (!m) {
        statisticsButton_->setEnabled(false);
        detailsHeader_->clear();
        return;
    }
    detailsHeader_->setText(QStringLiteral("<b>%1</b> &nbsp; <code>%2</code>")
                                .arg(m->path.empty() ? tr("(root)") : q(m->path).toHtmlEscaped(),
                                     q(m->type).toHtmlEscaped()));
    auto section = [this](const QString& title, int count) {
        auto* item = new QStandardItem(QStringLiteral("%1 (%2)").arg(title).arg(count));
        item->setEditable(false);
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
        detailsModel_->appendRow(item);
        return item;
    };
    auto tensorRow = [this](const TensorInfo& t) {
        // The last column is filled by "Compute statistics".
        QString dtype = q(t.dtype);
        const QString quantization = q(describeQuantization(t));
        if (!t.qscheme.empty()) {
            dtype += t.axis >= 0
                         ? tr(", per channel (axis %1)").arg(t.axis)
                         : tr(", scale %1, zero point %2").arg(t.scale, 0, 'g', 4).arg(t.zeroPoint);
        }
        if (t.packed) {
            dtype += tr(" · packed");
        }
        auto items = readOnlyRow(
            {q(t.name), q(formatShape(t.shape)), dtype, q(formatBytes(t.bytes)), QString()});
        if (t.packed || !quantization.isEmpty()) {
            const QString tip =
                (t.packed ? tr("Unpacked from the quantized module's %1 (%2)")
                                .arg(q(t.packedIn), q(t.dtype))
                          : q(t.dtype)) +
                (quantization.isEmpty() ? QString() : QStringLiteral("\n") + quantization);
            for (auto* item : items) {
                item->setToolTip(tip);
            }
        }
        return items;
    };
    auto* parameters = section(tr("Parameters"), static_cast<int>(m->parameters.size()));
    for (const auto& t : m->parameters) {
        parameters->appendRow(tensorRow(t));
    }
    auto* buffers = section(tr("Buffers"), static_cast<int>(m->buffers.size()));
    for (const auto& t : m->buffers) {
        buffers->appendRow(tensorRow(t));
    }
    auto* attributes = section(tr("Attributes"), static_cast<int>(m->attributes.size()));
    for (const auto& a : m->attributes) {
        attributes->appendRow(
            readOnlyRow({q(a.name), q(a.type), q(a.preview), QString(), QString()}));
    }
    auto* methods = section(tr("Methods"), static_cast<int>(m->methods.size()));
    for (const auto& method : m->methods) {
        methods->appendRow(
            readOnlyRow({q(method.name), q(method.schema), QString(), QString(), QString()}));
    }
    offer(statisticsButton_, model, Capability::Statistics,
          !m->parameters.empty() || !m->buffers.empty());
    details_->expandAll();
    // Long method schemas and values would push the other columns out of view; they are in the
    // tooltips.
    for (int column = 0; column < 4; ++column) {
        details_->resizeColumnToContents(column);
    }
    details_->setColumnWidth(1, std::min(details_->columnWidth(1), 240));
    details_->setColumnWidth(2, std::min(details_->columnWidth(2), 300));
}

void DetailsView::showStatistics(const std::vector<OutputValue>& values) {
    std::map<QString, const OutputValue*> byName;
    for (const auto& v : values) {
        byName[q(v.key)] = &v;
    }
    // The Parameters and Buffers sections are the first two.
    for (int section = 0; section < 2 && section < detailsModel_->rowCount(); ++section) {
        QStandardItem* parent = detailsModel_->item(section);
        for (int r = 0; r < parent->rowCount(); ++r) {
            const auto found = byName.find(parent->child(r, 0)->text());
            QStandardItem* cell = parent->child(r, 4);
            if (found == byName.end() || !cell) {
                continue;
            }
            const OutputValue& v = *found->second;
            QString text = v.numel == 0 ? tr("empty")
                                        : tr("min %1  max %2  mean %3  std %4")
                                              .arg(v.min, 0, 'g', 4)
                                              .arg(v.max, 0, 'g', 4)
                                              .arg(v.mean, 0, 'g', 4)
                                              .arg(v.stddev, 0, 'g', 4);
            if (v.nanCount || v.infCount) {
                text += tr("  NaN %1  Inf %2").arg(v.nanCount).arg(v.infCount);
                cell->setForeground(QColor(0xc0, 0x20, 0x20));
            }
            cell->setText(text);
            cell->setToolTip(text);
        }
    }
    details_->resizeColumnToContents(4);
    // The column is right of the others, often out of view in a narrow pane: scrolled to, at
    // the first value it now holds.
    for (int section = 0; section < 2 && section < detailsModel_->rowCount(); ++section) {
        QStandardItem* parent = detailsModel_->item(section);
        if (parent->rowCount() > 0 && parent->child(0, 4)) {
            details_->scrollTo(parent->child(0, 4)->index(), QAbstractItemView::EnsureVisible);
            break;
        }
    }
    Q_EMIT statisticsShown();
}

} // namespace scriptscope
