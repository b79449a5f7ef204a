#include "help_window.h"

#include <QAction>
#include <QHBoxLayout>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSplitter>
#include <QTextBrowser>
#include <QTextDocument>

namespace scriptscope {

const QString HelpWindow::kShortcutsPage = QObject::tr("Keyboard Shortcuts");

namespace {

// The README's "## " sections, each a page; pictures (screenshots beside the README, not built
// in) are left out.
QList<QPair<QString, QString>> readmeSections() {
    QList<QPair<QString, QString>> sections;
    const QStringList lines = QString::fromUtf8(builtInReadme()).split(QLatin1Char('\n'));
    static const QRegularExpression picture(QStringLiteral("!\\[[^\\]]*\\]\\([^)]*\\)"));
    QString title = QObject::tr("Introduction");
    QString body;
    bool fenced = false;
    for (const QString& line : lines) {
        if (line.startsWith(QLatin1String("```"))) {
            fenced = !fenced;
        }
        if (!fenced && line.startsWith(QLatin1String("## "))) {
            sections.append({title, body});
            title = line.mid(3).trimmed();
            body.clear();
            continue;
        }
        if (!fenced && line.startsWith(QLatin1String("# "))) {
            continue; // the document's title
        }
        if (!fenced && line.contains(picture)) {
            QString rest = line;
            rest.remove(picture);
            // A table of pictures keeps no row worth reading.
            if (rest.remove(QLatin1Char('|')).trimmed().isEmpty()) {
                continue;
            }
        }
        body += line + QLatin1Char('\n');
    }
    sections.append({title, body});
    return sections;
}

QString plain(QString text) {
    return text.remove(QLatin1Char('&'));
}

// The view shortcuts that are no menu's: bound by the code view, the drawn graph, the warp editor.
const QList<QPair<QString, QStringList>>& viewShortcuts() {
    static const QList<QPair<QString, QStringList>> groups = {
        {QObject::tr("Code and graph text"),
         {QObject::tr("Ctrl+F\tFind"), QObject::tr("F3 / Shift+F3\tNext / previous match"),
          QObject::tr("Esc\tClose the find bar"),
          QObject::tr("Ctrl+= or Ctrl++ / Ctrl+-\tZoom in / out (also Ctrl+wheel)"),
          QObject::tr("Ctrl+0\tThe usual size")}},
        {QObject::tr("Drawn graph"),
         {QObject::tr("Ctrl+F\tSearch nodes (typing starts a search too)"),
          QObject::tr("Enter / Shift+Enter\tNext / previous match (in the search box)"),
          QObject::tr("+ or = / -\tZoom in / out (also Ctrl+wheel)"),
          QObject::tr("0 or F\tFit the picture"), QObject::tr("Arrows\tPan (also the wheel)"),
          QObject::tr("Enter\tOpen or close the selected group"),
          QObject::tr("Double-click\tOpen a group; its title closes it"),
          QObject::tr("Right-click\tUpstream, downstream, compare layers")}},
        {QObject::tr("Warp editor"),
         {QObject::tr("Ctrl+Z / Ctrl+Shift+Z\tUndo / redo"), QObject::tr("Ctrl+0\tFit"),
          QObject::tr("Ctrl+1\tOne image pixel per screen pixel"),
          QObject::tr("Tab / Shift+Tab\tSelect the next / previous corner"),
          QObject::tr("Arrows\tMove the selected corner by a pixel (Shift: ten)")}},
        {QObject::tr("Anywhere"),
         {QObject::tr("Esc\tCancel the load or run under way"), QObject::tr("F1\tThis page")}},
    };
    return groups;
}

void addMenuRows(const QMenu* menu, const QString& path, QString& rows) {
    for (const QAction* action : menu->actions()) {
        if (action->menu()) {
            addMenuRows(action->menu(), path + QStringLiteral(" \u203a ") + plain(action->text()),
                        rows);
        } else if (!action->shortcut().isEmpty() && !action->isSeparator()) {
            rows += QStringLiteral("<tr><td><b>%1</b></td><td>%2 \u203a %3</td></tr>")
                        .arg(action->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                             path.toHtmlEscaped(), plain(action->text()).toHtmlEscaped());
        }
    }
}

} // namespace

HelpWindow::HelpWindow(QMenuBar* menus, QWidget* parent)
    : QDialog(parent)
    , menus_(menus)
    , guide_(readmeSections()) {
    setWindowTitle(tr("ScriptScope Help"));
    setObjectName(QStringLiteral("helpWindow"));
    auto* layout = new QHBoxLayout(this);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    list_ = new QListWidget(splitter);
    list_->setObjectName(QStringLiteral("helpPages"));
    text_ = new QTextBrowser(splitter);
    text_->setObjectName(QStringLiteral("helpText"));
    text_->setOpenExternalLinks(false);
    layout->addWidget(splitter);
    list_->addItem(kShortcutsPage);
    for (const auto& [title, markdown] : guide_) {
        list_->addItem(title);
    }
    splitter->setStretchFactor(1, 3);
    connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row == 0) {
            text_->setHtml(shortcutsHtml());
        } else if (row > 0 && row <= guide_.size()) {
            text_->setMarkdown(guide_.at(row - 1).second);
        }
    });
    // A link to a section of the README ("#the-cli") opens that page.
    connect(text_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        const QString anchor = url.fragment().replace(QLatin1Char('-'), QLatin1Char(' '));
        for (int i = 0; i < guide_.size(); ++i) {
            if (guide_.at(i).first.compare(anchor, Qt::CaseInsensitive) == 0) {
                list_->setCurrentRow(i + 1);
                return;
            }
        }
    });
    list_->setCurrentRow(0);
    resize(980, 640);
}

QStringList HelpWindow::pages() const {
    QStringList titles;
    for (int i = 0; i < list_->count(); ++i) {
        titles << list_->item(i)->text();
    }
    return titles;
}

bool HelpWindow::showPage(const QString& title) {
    const auto found = list_->findItems(title, Qt::MatchExactly);
    if (found.isEmpty()) {
        return false;
    }
    list_->setCurrentItem(found.first());
    return true;
}

QString HelpWindow::currentPage() const {
    return list_->currentItem() ? list_->currentItem()->text() : QString();
}

QString HelpWindow::pageText() const {
    return text_->toPlainText();
}

QString HelpWindow::shortcutsHtml() const {
    QString html = tr("<h2>Keyboard shortcuts</h2><p>The menus' shortcuts as they are bound now, "
                      "then those of the views.</p><table cellpadding='3'>");
    for (const QAction* action : menus_->actions()) {
        if (action->menu()) {
            addMenuRows(action->menu(), plain(action->text()), html);
        }
    }
    html += QStringLiteral("</table>");
    for (const auto& [group, rows] : viewShortcuts()) {
        html += QStringLiteral("<h3>%1</h3><table cellpadding='3'>").arg(group.toHtmlEscaped());
        for (const QString& row : rows) {
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                        .arg(row.section(QLatin1Char('\t'), 0, 0).toHtmlEscaped(),
                             row.section(QLatin1Char('\t'), 1).toHtmlEscaped());
        }
        html += QStringLiteral("</table>");
    }
    return html;
}

} // namespace scriptscope
