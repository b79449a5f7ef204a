#include "code_view.h"

#include <QAction>
#include <QElapsedTimer>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QRegularExpression>
#include <QTextBlock>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace scriptscope {

namespace {

// Colors that read on light and dark palettes alike.
QTextCharFormat format(const QColor& color, bool bold = false, bool italic = false) {
    QTextCharFormat f;
    f.setForeground(color);
    if (bold) {
        f.setFontWeight(QFont::Bold);
    }
    f.setFontItalic(italic);
    return f;
}

struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
};

const QVector<Rule>& rules(CodeHighlighter::Language language) {
    static const QVector<Rule> torchScript = {
        {QRegularExpression(QStringLiteral(
             R"(\b(def|return|if|else|elif|for|while|in|not|and|or|is|pass|break|continue|raise|assert|class|None|True|False)\b)")),
         format(QColor(0x8e, 0x44, 0xad), true)},
        {QRegularExpression(QStringLiteral(
             R"(\b(Tensor|int|float|bool|str|List|Dict|Tuple|Optional|NoneType|Device)\b)")),
         format(QColor(0x16, 0x8a, 0x8a))},
        {QRegularExpression(QStringLiteral(R"(\b(torch|ops)\.[\w.]+)")),
         format(QColor(0x2e, 0x6d, 0xb4))},
        {QRegularExpression(QStringLiteral(R"(\b\d+(\.\d+)?([eE][-+]?\d+)?\b)")),
         format(QColor(0xc0, 0x6a, 0x10))},
        {QRegularExpression(QStringLiteral(R"("[^"]*"|'[^']*')")),
         format(QColor(0x3a, 0x8a, 0x2a))},
        {QRegularExpression(QStringLiteral(R"(#.*$)")),
         format(QColor(0x80, 0x80, 0x80), false, true)},
    };
    static const QVector<Rule> graphIr = {
        {QRegularExpression(QStringLiteral(R"(%[\w.]+)")), format(QColor(0xb0, 0x55, 0x20))},
        {QRegularExpression(QStringLiteral(R"(\baten::\w+)")),
         format(QColor(0x2e, 0x6d, 0xb4), true)},
        {QRegularExpression(QStringLiteral(R"(\bprim::\w+)")),
         format(QColor(0x8e, 0x44, 0xad), true)},
        {QRegularExpression(QStringLiteral(R"(\b(?!aten::|prim::)[a-z_]\w*::\w+)")),
         format(QColor(0xc0, 0x30, 0x60), true)},
        {QRegularExpression(QStringLiteral(R"(:\s*([\w.\[\]()?, ]+?)(?= =|,$|\)$|\):))")),
         format(QColor(0x16, 0x8a, 0x8a))},
        {QRegularExpression(QStringLiteral(R"(\b(graph|block\d+)\b)")),
         format(QColor(0x80, 0x50, 0x00), true)},
        {QRegularExpression(QStringLiteral(R"(#.*$)")),
         format(QColor(0x80, 0x80, 0x80), false, true)},
    };
    return language == CodeHighlighter::Language::TorchScript ? torchScript : graphIr;
}

class LineNumberArea : public QWidget {
public:
    explicit LineNumberArea(CodeEditor* editor)
        : QWidget(editor)
        , editor_(editor) {}
    QSize sizeHint() const override { return {editor_->lineNumberAreaWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent* event) override { editor_->paintLineNumbers(event); }

private:
    CodeEditor* editor_;
};

} // namespace

CodeHighlighter::CodeHighlighter(QTextDocument* document, Language language)
    : QSyntaxHighlighter(document)
    , language_(language) {}

void CodeHighlighter::highlightBlock(const QString& text) {
    for (const Rule& rule : rules(language_)) {
        auto it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const auto match = it.next();
            const int group = match.lastCapturedIndex() >= 1 && language_ == Language::GraphIr &&
                                      rule.pattern.pattern().startsWith(QLatin1Char(':'))
                                  ? 1
                                  : 0;
            setFormat(static_cast<int>(match.capturedStart(group)),
                      static_cast<int>(match.capturedLength(group)), rule.format);
        }
    }
}

CodeEditor::CodeEditor(QWidget* parent)
    : QPlainTextEdit(parent)
    , lineNumbers_(new LineNumberArea(this)) {
    setReadOnly(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    connect(this, &QPlainTextEdit::blockCountChanged, this, [this]() { updateMargins(); });
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
        if (dy) {
            lineNumbers_->scroll(0, dy);
        } else {
            lineNumbers_->update(0, rect.y(), lineNumbers_->width(), rect.height());
        }
    });
    updateMargins();
}

int CodeEditor::lineNumberAreaWidth() const {
    const int digits = QString::number(std::max({1, blockCount(), expectedLines_})).size();
    return 12 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits;
}

void CodeEditor::expectLines(int lines) {
    expectedLines_ = lines;
    updateMargins();
}

void CodeEditor::updateMargins() {
    setViewportMargins(lineNumberAreaWidth(), 0, 0, 0);
}

void CodeEditor::resizeEvent(QResizeEvent* event) {
    QPlainTextEdit::resizeEvent(event);
    const QRect r = contentsRect();
    lineNumbers_->setGeometry(QRect(r.left(), r.top(), lineNumberAreaWidth(), r.height()));
}

void CodeEditor::paintLineNumbers(QPaintEvent* event) {
    QPainter painter(lineNumbers_);
    painter.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
    painter.setPen(palette().color(QPalette::PlaceholderText));
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    while (block.isValid() && top <= event->rect().bottom()) {
        const int height = qRound(blockBoundingRect(block).height());
        if (block.isVisible()) {
            painter.drawText(0, top, lineNumbers_->width() - 6, height, Qt::AlignRight,
                             QString::number(block.blockNumber() + 1));
        }
        top += height;
        block = block.next();
    }
}

void CodeEditor::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ControlModifier) {
        event->angleDelta().y() > 0 ? zoomIn(1) : zoomOut(1);
        updateMargins();
        return;
    }
    QPlainTextEdit::wheelEvent(event);
}

void CodeEditor::mouseReleaseEvent(QMouseEvent* event) {
    QPlainTextEdit::mouseReleaseEvent(event);
    if (!valueHighlighting_ || textCursor().hasSelection()) {
        return;
    }
    // The value under the click: %name with dots and digits.
    const QTextCursor cursor = cursorForPosition(event->position().toPoint());
    const QString line = cursor.block().text();
    static const QRegularExpression value(QStringLiteral(R"(%[\w.]+)"));
    auto it = value.globalMatch(line);
    QString found;
    while (it.hasNext()) {
        const auto match = it.next();
        if (cursor.positionInBlock() >= match.capturedStart() &&
            cursor.positionInBlock() <= match.capturedEnd()) {
            found = match.captured();
        }
    }
    highlightValue(found);
}

void CodeEditor::highlightValue(const QString& valueName) {
    highlightedValue_ = valueName;
    QList<QTextEdit::ExtraSelection> selections;
    if (!valueName.isEmpty()) {
        // Whole values only: %x must not match inside %x.1.
        const QRegularExpression pattern(QRegularExpression::escape(valueName) +
                                         QStringLiteral(R"((?![\w.]))"));
        const QString all = toPlainText();
        auto it = pattern.globalMatch(all);
        const QColor use = palette().color(QPalette::Highlight).lighter(160);
        QColor definition = use;
        definition.setAlpha(255);
        while (it.hasNext()) {
            const auto match = it.next();
            QTextEdit::ExtraSelection selection;
            selection.cursor = QTextCursor(document());
            selection.cursor.setPosition(static_cast<int>(match.capturedStart()));
            selection.cursor.setPosition(static_cast<int>(match.capturedEnd()),
                                         QTextCursor::KeepAnchor);
            // The definition: the value before " : " or as a block/graph parameter.
            const QString line = selection.cursor.block().text().trimmed();
            const bool isDefinition =
                line.startsWith(valueName + QStringLiteral(" :")) ||
                line.contains(QStringLiteral("(") + valueName + QStringLiteral(" :")) ||
                line.contains(QStringLiteral(", ") + valueName + QStringLiteral(" :"));
            selection.format.setBackground(isDefinition ? QColor(0xff, 0xc8, 0x57) : use);
            if (isDefinition) {
                selection.format.setFontWeight(QFont::Bold);
            }
            selections.append(selection);
        }
    }
    setExtraSelections(selections);
}

CodeView::CodeView(CodeHighlighter::Language language, QWidget* parent)
    : QWidget(parent)
    , editor_(new CodeEditor(this))
    , findBar_(new QWidget(this))
    , findText_(new QLineEdit(findBar_))
    , findStatus_(new QLabel(findBar_)) {
    new CodeHighlighter(editor_->document(), language);
    editor_->setValueHighlighting(language == CodeHighlighter::Language::GraphIr);

    auto* findLayout = new QHBoxLayout(findBar_);
    findLayout->setContentsMargins(4, 2, 4, 2);
    findText_->setPlaceholderText(tr("Find"));
    findText_->setClearButtonEnabled(true);
    auto* previous = new QToolButton(findBar_);
    previous->setText(tr("Previous"));
    auto* next = new QToolButton(findBar_);
    next->setText(tr("Next"));
    auto* close = new QToolButton(findBar_);
    close->setText(QStringLiteral("✕"));
    close->setToolTip(tr("Close (Esc)"));
    findLayout->addWidget(findText_, 1);
    findLayout->addWidget(previous);
    findLayout->addWidget(next);
    findLayout->addWidget(findStatus_);
    findLayout->addWidget(close);
    findBar_->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(editor_, 1);
    layout->addWidget(findBar_);

    connect(findText_, &QLineEdit::returnPressed, this, [this]() { find(findText_->text()); });
    connect(findText_, &QLineEdit::textChanged, this, [this](const QString& text) {
        QTextCursor cursor = editor_->textCursor();
        cursor.setPosition(cursor.selectionStart());
        editor_->setTextCursor(cursor);
        find(text);
    });
    connect(next, &QToolButton::clicked, this, [this]() { find(findText_->text()); });
    connect(previous, &QToolButton::clicked, this, [this]() { find(findText_->text(), true); });
    connect(close, &QToolButton::clicked, findBar_, &QWidget::hide);

    auto addAction = [this](const QKeySequence& keys, auto slot) {
        auto* action = new QAction(this);
        action->setShortcut(keys);
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(action, &QAction::triggered, this, slot);
        QWidget::addAction(action);
        return action;
    };
    addAction(QKeySequence::Find, [this]() { showFind(); });
    addAction(QKeySequence::FindNext, [this]() { find(findText_->text()); });
    addAction(QKeySequence::FindPrevious, [this]() { find(findText_->text(), true); });
    // Esc closes the find bar while it shows; otherwise it is the window's (Cancel).
    QAction* closeFind = addAction(QKeySequence(Qt::Key_Escape), [this]() { findBar_->hide(); });
    closeFind->setEnabled(false);
    findBar_->installEventFilter(this);
    closeFindAction_ = closeFind;
    addAction(QKeySequence::ZoomIn, [this]() { editor_->zoomIn(1); });
    // Ctrl+= is Ctrl++ without Shift on most keyboards; QKeySequence::ZoomIn is Ctrl++ only.
    addAction(QKeySequence(Qt::CTRL | Qt::Key_Equal), [this]() { editor_->zoomIn(1); });
    addAction(QKeySequence::ZoomOut, [this]() { editor_->zoomOut(1); });
    addAction(QKeySequence(Qt::CTRL | Qt::Key_0),
              [this]() { editor_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont)); });
}

namespace {

// Texts longer than this are shown in slices; each slice takes about kSliceMs of the GUI thread
// (building the blocks and highlighting them).
constexpr qsizetype kSlicedChars = 256 * 1024;
constexpr qint64 kSliceMs = 8;
constexpr int kSliceLines = 200;

} // namespace

void CodeView::setText(const QString& text) {
    ++generation_;
    pending_.clear();
    shown_ = 0;
    if (text.size() <= kSlicedChars) {
        editor_->expectLines(0);
        editor_->setPlainText(text);
        editor_->highlightValue({});
        Q_EMIT textLoaded();
        return;
    }
    // The first slice as the whole text, so that the editor's cursor stays at its start: one at
    // the end would move with every slice appended (and select the node of each line it passed).
    editor_->document()->setUndoRedoEnabled(false);
    editor_->expectLines(static_cast<int>(text.count(QLatin1Char('\n'))) + 1);
    pending_ = text;
    shown_ = sliceEnd(0);
    editor_->setPlainText(text.left(shown_));
    editor_->highlightValue({});
    const quint64 generation = generation_;
    QTimer::singleShot(0, this, [this, generation]() { appendSlice(generation); });
}

qsizetype CodeView::sliceEnd(qsizetype from) const {
    qsizetype stop = from;
    for (int line = 0; line < kSliceLines && stop >= 0; ++line) {
        stop = pending_.indexOf(QLatin1Char('\n'), stop + (line > 0 ? 1 : 0));
    }
    return stop < 0 ? pending_.size() : stop + 1;
}

void CodeView::appendSlice(quint64 generation) {
    if (generation != generation_ || pending_.isEmpty()) {
        return;
    }
    QElapsedTimer slice;
    slice.start();
    QTextCursor end(editor_->document());
    end.movePosition(QTextCursor::End);
    while (shown_ < pending_.size() && slice.elapsed() < kSliceMs) {
        const qsizetype stop = sliceEnd(shown_);
        end.insertText(QStringView(pending_).mid(shown_, stop - shown_).toString());
        shown_ = stop;
    }
    if (shown_ < pending_.size()) {
        QTimer::singleShot(0, this, [this, generation]() { appendSlice(generation); });
        return;
    }
    pending_.clear();
    shown_ = 0;
    Q_EMIT textLoaded();
}

QString CodeView::text() const {
    return pending_.isEmpty() ? editor_->toPlainText() : pending_;
}

bool CodeView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == findBar_ && (event->type() == QEvent::Show || event->type() == QEvent::Hide)) {
        closeFindAction_->setEnabled(event->type() == QEvent::Show);
    }
    return QWidget::eventFilter(watched, event);
}

void CodeView::showFind() {
    findBar_->show();
    findText_->setFocus();
    findText_->selectAll();
}

bool CodeView::find(const QString& text, bool backwards) {
    if (text.isEmpty()) {
        findStatus_->clear();
        return false;
    }
    const auto flags = backwards ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    bool found = editor_->find(text, flags);
    if (!found) {
        // Wrap around.
        QTextCursor cursor = editor_->textCursor();
        cursor.movePosition(backwards ? QTextCursor::End : QTextCursor::Start);
        editor_->setTextCursor(cursor);
        found = editor_->find(text, flags);
    }
    if (!found) {
        findStatus_->setText(tr("Not found"));
        return false;
    }
    // "3 of 17": where this match is among all of them (case-insensitive, as find() matches).
    const QString all = editor_->toPlainText();
    const int here = editor_->textCursor().selectionStart();
    int count = 0, current = 0;
    for (int at = all.indexOf(text, 0, Qt::CaseInsensitive); at >= 0;
         at = all.indexOf(text, at + 1, Qt::CaseInsensitive)) {
        ++count;
        if (at <= here) {
            current = count;
        }
    }
    findStatus_->setText(tr("%1 of %2").arg(current).arg(count));
    return true;
}

QString CodeView::findStatus() const {
    return findStatus_->text();
}

void CodeView::setLineWrap(bool on) {
    editor_->setLineWrapMode(on ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap);
}

bool CodeView::lineWrap() const {
    return editor_->lineWrapMode() != QPlainTextEdit::NoWrap;
}

} // namespace scriptscope
