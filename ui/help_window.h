// Help > Keyboard Shortcuts (F1) and Help > User Guide: one window with a page of every shortcut
// (the menus' as they are bound, and the views' own) and the README's sections as pages, offline.
#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

class QListWidget;
class QMenuBar;
class QTextBrowser;

namespace scriptscope {

class HelpWindow : public QDialog {
    Q_OBJECT

public:
    // The shortcuts page lists what `menus` binds, as bound now.
    explicit HelpWindow(QMenuBar* menus, QWidget* parent = nullptr);
    // The page titles: "Keyboard Shortcuts", then the README's sections.
    QStringList pages() const;
    // Shows the page of this title (false: none has it).
    bool showPage(const QString& title);
    QString currentPage() const;
    // The shown page's text, without markup.
    QString pageText() const;

    static const QString kShortcutsPage;

private:
    QString shortcutsHtml() const;

    QMenuBar* menus_;
    QListWidget* list_ = nullptr;
    QTextBrowser* text_ = nullptr;
    QList<QPair<QString, QString>> guide_; // title, markdown
};

// The README as it was built in (readme_text.cpp.in).
const char* builtInReadme();

} // namespace scriptscope
