// A read-only, monospace text view for TorchScript code and graph IR: line numbers, syntax
// highlighting, find (Ctrl+F, F3/Shift+F3), zoom (Ctrl+wheel, Ctrl++/-/0). In graph mode, clicking
// a value (%x) highlights its definition and every use.
#pragma once

#include <QPlainTextEdit>
#include <QSyntaxHighlighter>
#include <QWidget>

class QLineEdit;
class QAction;
class QLabel;

namespace scriptscope {

class CodeHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    enum class Language { TorchScript, GraphIr };
    CodeHighlighter(QTextDocument* document, Language language);

protected:
    void highlightBlock(const QString& text) override;

private:
    Language language_;
};

class CodeEditor : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeEditor(QWidget* parent = nullptr);
    int lineNumberAreaWidth() const;
    // The number of lines a text that is still arriving will have: the line numbers get their
    // final width at once, not a wider margin (and a relayout) at 1,000, 10,000, 100,000 lines.
    void expectLines(int lines);
    void paintLineNumbers(QPaintEvent* event);
    void setValueHighlighting(bool on) { valueHighlighting_ = on; }
    // Highlights every occurrence of the value (e.g. "%x.1"); empty clears.
    void highlightValue(const QString& value);
    QString highlightedValue() const { return highlightedValue_; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

private:
    void updateMargins();
    QWidget* lineNumbers_;
    bool valueHighlighting_ = false;
    int expectedLines_ = 0;
    QString highlightedValue_;
};

class CodeView : public QWidget {
    Q_OBJECT
public:
    CodeView(CodeHighlighter::Language language, QWidget* parent = nullptr);

    // A long text (a transformer's inlined graph: 100,000 lines, 9 MB) is shown a slice per turn
    // of the event loop, so that the GUI keeps answering while it fills; text() is all of it
    // from the start, and loaded() says when the view has all of it.
    void setText(const QString& text);
    QString text() const;
    bool loaded() const { return pending_.isEmpty(); }
    CodeEditor* editor() const { return editor_; }
    void showFind();
    // Finds the next (or previous) match from the cursor; wraps around. Returns false if none.
    bool find(const QString& text, bool backwards = false);
    // "3 of 17" after a match, "Not found", or empty.
    QString findStatus() const;
    // Long lines (IR lines with their source comments) wrap at the view's width.
    void setLineWrap(bool on);
    bool lineWrap() const;

Q_SIGNALS:
    void textLoaded();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void appendSlice(quint64 generation);
    // Where the slice of pending_ starting at `from` ends (after a number of whole lines).
    qsizetype sliceEnd(qsizetype from) const;

    CodeEditor* editor_;
    QString pending_; // the text being shown, while slices of it are still to come
    qsizetype shown_ = 0;
    quint64 generation_ = 0;
    QWidget* findBar_;
    QLineEdit* findText_;
    QLabel* findStatus_;
    QAction* closeFindAction_ = nullptr; // Esc, while the find bar shows
};

} // namespace scriptscope
