#include "archive_view.h"

#include "item_rows.h"

#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QStandardItemModel>
#include <QTreeView>

namespace scriptscope {
using inspector::flatTable;
using inspector::q;
using inspector::readOnlyRow;

ArchiveView::ArchiveView(const QFont& codeFont, QWidget* parent)
    : QSplitter(Qt::Vertical, parent) {
    archiveSummary_ = new QLabel(this);
    archiveSummary_->setWordWrap(true);
    archiveSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    archiveSummary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    recordsModel_ = new QStandardItemModel(this);
    records_ = flatTable(recordsModel_, this);
    records_->setObjectName(QStringLiteral("archiveRecords"));
    operatorsModel_ = new QStandardItemModel(this);
    operators_ = flatTable(operatorsModel_, this);
    operators_->setObjectName(QStringLiteral("archiveOperators"));
    auto* extraBox = new QSplitter(Qt::Horizontal, this);
    extraFiles_ = new QListWidget(extraBox);
    extraContent_ = new QPlainTextEdit(extraBox);
    extraContent_->setReadOnly(true);
    extraContent_->setFont(codeFont);
    addWidget(archiveSummary_);
    addWidget(records_);
    addWidget(operators_);
    addWidget(extraBox);
    connect(extraFiles_, &QListWidget::currentTextChanged, this, [this](const QString& name) {
        const auto found = probe_.extraFiles.find(name.toStdString());
        if (found == probe_.extraFiles.end()) {
            extraContent_->clear();
            return;
        }
        const QByteArray content = QByteArray::fromStdString(found->second);
        QJsonParseError error{};
        const QJsonDocument json = QJsonDocument::fromJson(content, &error);
        extraContent_->setPlainText(error.error == QJsonParseError::NoError
                                        ? QString::fromUtf8(json.toJson(QJsonDocument::Indented))
                                        : QString::fromUtf8(content));
    });
}

void ArchiveView::setProbe(const ProbeResult& p) {
    probe_ = p;
    QStringList lines;
    lines << tr("<b>%1</b>").arg(q(p.summary).toHtmlEscaped());
    lines << tr("Archive folder: <code>%1/</code> &nbsp; Serialization version: %2 (this LibTorch "
                "reads up to %3)")
                 .arg(q(p.archiveName).toHtmlEscaped(), q(p.versionText).toHtmlEscaped())
                 .arg(p.maxSupportedVersion);
    for (const auto& note : p.notes) {
        lines << tr("Note: %1").arg(q(note).toHtmlEscaped());
    }
    archiveSummary_->setText(lines.join(QStringLiteral("<br>")));

    recordsModel_->clear();
    recordsModel_->setHorizontalHeaderLabels(
        {tr("Record"), tr("Size"), tr("Stored size"), tr("Compression")});
    for (const auto& r : p.records) {
        auto items = readOnlyRow(
            {q(r.name), QString(), QString(), r.stored ? tr("stored") : tr("deflated")});
        items[1]->setData(QVariant::fromValue<qulonglong>(r.size), Qt::DisplayRole);
        items[2]->setData(QVariant::fromValue<qulonglong>(r.compressedSize), Qt::DisplayRole);
        recordsModel_->appendRow(items);
    }
    records_->resizeColumnToContents(0);

    operatorsModel_->clear();
    operatorsModel_->setHorizontalHeaderLabels({tr("Operator used by the code"), tr("Available")});
    for (const auto& op : p.operators) {
        auto items = readOnlyRow({q(op.name), op.registered ? tr("yes") : tr("NOT REGISTERED")});
        if (!op.registered) {
            items[1]->setForeground(QColor(0xc0, 0x20, 0x20));
        }
        operatorsModel_->appendRow(items);
    }
    operators_->resizeColumnToContents(0);

    extraFiles_->clear();
    for (const auto& [name, content] : p.extraFiles) {
        extraFiles_->addItem(q(name));
    }
    if (extraFiles_->count() > 0) {
        extraFiles_->setCurrentRow(0);
    } else {
        extraContent_->setPlainText(tr("(no extra files)"));
    }
}

} // namespace scriptscope
