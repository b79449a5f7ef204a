#include "safe_preview.h"

#include "item_rows.h"

#include "code_view.h"

#include <format.h>

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>

namespace scriptscope {
using inspector::flatTable;
using inspector::q;
using inspector::readOnlyRow;

SafePreview::SafePreview(QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Preview Without Running"));
    resize(1000, 700);
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);
    auto* tabs = new QTabWidget(this);
    layout->addWidget(tabs, 1);

    auto* codeSplit = new QSplitter(Qt::Horizontal, tabs);
    codeFiles_ = new QListWidget(codeSplit);
    code_ = new CodeView(CodeHighlighter::Language::TorchScript, codeSplit);
    codeSplit->setStretchFactor(1, 3);
    tabs->addTab(codeSplit, tr("Code files"));
    connect(codeFiles_, &QListWidget::currentTextChanged, this, [this](const QString& name) {
        const auto found = probe_.codeFiles.find(name.toStdString());
        code_->setText(found == probe_.codeFiles.end() ? QString() : q(found->second));
    });

    auto* tensorSplit = new QSplitter(Qt::Vertical, tabs);
    storages_ = new QStandardItemModel(this);
    flatTable(storages_, tensorSplit);
    tensors_ = new QPlainTextEdit(tensorSplit);
    tensors_->setReadOnly(true);
    tensors_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    tabs->addTab(tensorSplit, tr("Tensors"));

    records_ = new QStandardItemModel(this);
    tabs->addTab(flatTable(records_, tabs), tr("Records"));

    auto* extraSplit = new QSplitter(Qt::Horizontal, tabs);
    extraFiles_ = new QListWidget(extraSplit);
    extra_ = new QPlainTextEdit(extraSplit);
    extra_->setReadOnly(true);
    extraSplit->setStretchFactor(1, 3);
    tabs->addTab(extraSplit, tr("Extra files"));
    connect(extraFiles_, &QListWidget::currentTextChanged, this, [this](const QString& name) {
        const auto found = probe_.extraFiles.find(name.toStdString());
        extra_->setPlainText(found == probe_.extraFiles.end() ? QString() : q(found->second));
    });

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    layout->addWidget(buttons);
}

void SafePreview::showProbe(const ProbeResult& p) {
    probe_ = p;
    setWindowTitle(tr("Preview Without Running — %1").arg(QFileInfo(q(p.path)).fileName()));
    QStringList lines;
    lines << tr("<b>%1</b>: %2")
                 .arg(QFileInfo(q(p.path)).fileName().toHtmlEscaped(),
                      q(p.summary).toHtmlEscaped());
    lines << tr("Read without running anything: nothing in the archive was executed.");
    for (const auto& note : p.notes) {
        lines << tr("Note: %1").arg(q(note).toHtmlEscaped());
    }
    if (!p.damage.empty()) {
        lines << tr("<span style='color:#c62828'><b>Damaged:</b> %1 — loading would fail or read "
                    "garbage.</span>")
                     .arg(q(p.damage).toHtmlEscaped());
    }
    QStringList missing;
    for (const auto& op : p.operators) {
        if (!op.registered) {
            missing << q(op.name);
        }
    }
    if (!missing.isEmpty()) {
        lines << tr("Operators nobody registered: %1")
                     .arg(missing.join(QStringLiteral(", ")).toHtmlEscaped());
    }
    summary_->setText(lines.join(QStringLiteral("<br>")));

    codeFiles_->clear();
    for (const auto& [name, code] : p.codeFiles) {
        codeFiles_->addItem(q(name));
    }
    if (codeFiles_->count() > 0) {
        codeFiles_->setCurrentRow(0);
    } else {
        code_->setText(tr("(no code files)"));
    }

    storages_->clear();
    storages_->setHorizontalHeaderLabels(
        {tr("Record"), tr("dtype"), tr("Elements"), tr("Saved on"), tr("Declared"), tr("Stored")});
    for (const auto& s : p.storages) {
        auto items = readOnlyRow({q(s.record), q(s.dtype), QString::number(s.numel), q(s.location),
                                  q(formatBytes(s.declaredBytes)),
                                  s.present ? q(formatBytes(s.storedBytes)) : tr("MISSING")});
        if (!s.present || s.storedBytes < s.declaredBytes) {
            items.last()->setForeground(QColor(0xc6, 0x28, 0x28));
        }
        storages_->appendRow(items);
    }
    QString tensors;
    for (const auto& t : p.tensors) {
        tensors += q(t) + QLatin1Char('\n');
    }
    tensors_->setPlainText(tensors.isEmpty() ? tr("(no tensors)") : tensors);

    records_->clear();
    records_->setHorizontalHeaderLabels({tr("Record"), tr("Size"), tr("Stored size")});
    for (const auto& r : p.records) {
        records_->appendRow(
            readOnlyRow({q(r.name), QString::number(r.size), QString::number(r.compressedSize)}));
    }

    extraFiles_->clear();
    for (const auto& [name, content] : p.extraFiles) {
        extraFiles_->addItem(q(name));
    }
    if (extraFiles_->count() > 0) {
        extraFiles_->setCurrentRow(0);
    } else {
        extra_->setPlainText(tr("(no extra files)"));
    }
}

QString SafePreview::summaryText() const {
    return summary_->text();
}

QStringList SafePreview::codeFileNames() const {
    QStringList names;
    for (int i = 0; i < codeFiles_->count(); ++i) {
        names << codeFiles_->item(i)->text();
    }
    return names;
}

} // namespace scriptscope
