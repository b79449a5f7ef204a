// For the GUI tests: screenshots of what they show, saved to build/screenshots/ to be looked at
// (scripts/update-screenshots.sh copies the README's to docs/).
#pragma once

#include <code_view.h>
#include <main_window.h>
#include <model_workspace.h>
#include <module_tree_model.h>
#include <worker_client.h>

#include <QCoreApplication>
#include <QDir>
#include <QPalette>
#include <QSize>

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QString>
#include <QTabWidget>
#include <QTest>
#include <QTreeView>
#include <QWidget>
#include <functional>

namespace scriptscope::test {

// A dark palette, for the screenshots in a dark theme.
inline QPalette darkPalette() {
    QPalette p;
    p.setColor(QPalette::Window, QColor(37, 37, 38));
    p.setColor(QPalette::WindowText, QColor(230, 230, 230));
    p.setColor(QPalette::Base, QColor(30, 30, 30));
    p.setColor(QPalette::AlternateBase, QColor(45, 45, 48));
    p.setColor(QPalette::Text, QColor(230, 230, 230));
    p.setColor(QPalette::Button, QColor(45, 45, 48));
    p.setColor(QPalette::ButtonText, QColor(230, 230, 230));
    p.setColor(QPalette::Highlight, QColor(38, 79, 120));
    p.setColor(QPalette::HighlightedText, QColor(255, 255, 255));
    return p;
}

// The window size GUI tests take their screenshots at: SCRIPTSCOPE_SCREENSHOT_SIZE ("1920x1080"),
// else 1280x800.
inline QSize screenshotSize() {
    const QStringList size =
        qEnvironmentVariable("SCRIPTSCOPE_SCREENSHOT_SIZE", QStringLiteral("1280x800"))
            .split(QLatin1Char('x'));
    const QSize asked(size.value(0).toInt(), size.value(1).toInt());
    return asked.isValid() && !asked.isEmpty() ? asked : QSize(1280, 800);
}

// A window on a real worker, as a GUI test starts it: a clean test profile of settings, and the
// size SCRIPTSCOPE_SCREENSHOT_SIZE gives (default 1280x800) to look at others (1920x1080).
inline MainWindow* openTestWindow(QObject* owner, WorkerClient** worker) {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    *worker = new WorkerClient(owner);
    (*worker)->setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
    auto* window = new MainWindow(*worker);
    window->resize(screenshotSize());
    window->show();
    return window;
}

inline void saveScreenshot(QWidget* widget, const QString& name) {
    // What the person would see: the layouts asked for by the last changes done first (an
    // elided label was caught at its old width).
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
    const QString folder = QStringLiteral(SCRIPTSCOPE_SCREENSHOT_DIR);
    QDir().mkpath(folder);
    QVERIFY(widget->grab().save(folder + QLatin1Char('/') + name + QStringLiteral(".png")));
}

// Opens a model in the window and waits for it to be shown or refused; true when shown (a
// refusal or no answer is reported as a warning).
inline bool openModel(MainWindow* window, const QString& path) {
    QSignalSpy shown(window, &MainWindow::modelShown);
    QSignalSpy error(window, &MainWindow::errorShown);
    window->openFile(path);
    const bool answered =
        QTest::qWaitFor([&]() { return !shown.isEmpty() || !error.isEmpty(); }, 120000);
    if (!answered) {
        qWarning() << "no answer to opening" << path;
    }
    if (!error.isEmpty()) {
        qWarning() << "open failed:" << error.first().first().toString();
    }
    return !shown.isEmpty();
}

// The window's views, found by their object names (they are not part of the window's API).
template <typename T>
T* part(const QWidget* window, const char* name) {
    T* found = window->findChild<T*>(QLatin1String(name));
    if (!found) {
        qFatal("the window has no %s", name);
    }
    return found;
}
inline QTreeView* moduleTree(const QWidget* w) {
    return part<QTreeView>(w, "moduleTree");
}
// The module paths the tree shows (through its filter), depth first.
inline QStringList modulePaths(const QTreeView* tree) {
    QStringList paths;
    std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int r = 0; r < tree->model()->rowCount(parent); ++r) {
            const QModelIndex index = tree->model()->index(r, 0, parent);
            paths << index.data(ModuleTreeModel::PathRole).toString();
            walk(index);
        }
    };
    walk({});
    return paths;
}
inline QLineEdit* moduleFilter(const QWidget* w) {
    return part<QLineEdit>(w, "moduleFilter");
}
inline QTabWidget* inspectorTabs(const QWidget* w) {
    return part<QTabWidget>(w, "inspectorTabs");
}
inline QStandardItemModel* detailsModel(const QWidget* w) {
    return qobject_cast<QStandardItemModel*>(part<QTreeView>(w, "details")->model());
}
inline QStandardItemModel* recordsModel(const QWidget* w) {
    return qobject_cast<QStandardItemModel*>(part<QTreeView>(w, "archiveRecords")->model());
}
inline QStandardItemModel* operatorsModel(const QWidget* w) {
    return qobject_cast<QStandardItemModel*>(part<QTreeView>(w, "archiveOperators")->model());
}
inline CodeView* codeView(const QWidget* w) {
    return part<CodeView>(w, "code");
}
inline CodeView* graphView(const QWidget* w) {
    return part<CodeView>(w, "graph");
}
inline QString codeText(const QWidget* w) {
    return codeView(w)->text();
}
inline QString graphText(const QWidget* w) {
    return graphView(w)->text();
}
inline QString errorText(const MainWindow* w) {
    return w->modelWorkspace()->errorText();
}
inline QString runtimeText(const QWidget* w) {
    return part<QLabel>(w, "runtimeStatus")->text();
}
inline QString sandboxText(const QWidget* w) {
    const QLabel* label = part<QLabel>(w, "sandboxStatus");
    return label->text() + QLatin1Char('\n') + label->toolTip();
}
inline QString bannerActionText(const QWidget* w) {
    const QPushButton* button = part<QPushButton>(w, "bannerAction");
    return button->isVisibleTo(w) ? button->text() : QString();
}

} // namespace scriptscope::test
