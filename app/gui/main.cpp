// scriptscope: the desktop inspector. With no argument it opens the bundled demo.
#include <file_formats.h>
#include <main_window.h>
#include <run_panel.h>
#include <worker_client.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

namespace {

// A demo file beside an installed program (share/scriptscope), else in the source tree it was
// built from.
QString demoFile(const QString& name) {
    const QDir appDir(QCoreApplication::applicationDirPath());
    const QString installed = appDir.filePath(QStringLiteral("../share/scriptscope/") + name);
    if (QFileInfo::exists(installed)) {
        return QFileInfo(installed).canonicalFilePath();
    }
    return QStringLiteral(SCRIPTSCOPE_SOURCE_RESOURCES "/") + name;
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ScriptScope"));
    QApplication::setOrganizationName(QStringLiteral("ScriptScope"));
    QApplication::setApplicationVersion(QStringLiteral(SCRIPTSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("A debugger for exported PyTorch models (TorchScript, torch.export, "
                       "ExecuTorch)."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("model"),
        QString::fromStdString("The model to open: " + scriptscope::modelFileKinds() +
                               " (default: the demo)."));
    QCommandLineOption workspace(
        QStringLiteral("workspace"),
        QStringLiteral("The workspace to show first: model, warp or run (default: model)."),
        QStringLiteral("name"), QStringLiteral("model"));
    parser.addOption(workspace);
    parser.process(app);

    scriptscope::WorkerClient worker;
    scriptscope::MainWindow window(&worker);
    window.placeOnScreen(QSize(1280, 800));
    // The demo's matrix rectifies the photo's page to 200 x 280 pixels (resources/make_demo.py).
    window.restoreWarpSession(demoFile(QStringLiteral("demo.png")),
                              demoFile(QStringLiteral("demo_warp.npy")), QSize(200, 280));
    if (!window.showWorkspace(parser.value(workspace))) {
        qWarning("unknown workspace '%s' (use model, warp or run)",
                 qPrintable(parser.value(workspace)));
    }
    window.show();
    const QStringList files = parser.positionalArguments();
    // No argument: the model of the last session (also after a crash), else the demo.
    QString model = files.isEmpty() ? scriptscope::MainWindow::lastSessionModel() : files.first();
    if (model.isEmpty()) {
        model = demoFile(QStringLiteral("demo_model.pt"));
    }
    const QString demoVideo = demoFile(QStringLiteral("demo_video.mp4"));
    if (QFileInfo::exists(demoVideo)) {
        window.runPanel()->setDemoVideo(demoVideo);
    }
    if (QFileInfo(model).canonicalFilePath() ==
            QFileInfo(demoFile(QStringLiteral("demo_model.pt"))).canonicalFilePath() &&
        !parser.isSet(workspace)) {
        // The demo shows itself working at once: its Run workspace, run on the demo photo (the
        // page's corners found, the page rectified and its kind said).
        window.showWorkspace(QStringLiteral("run"));
        auto* connection = new QMetaObject::Connection;
        *connection = QObject::connect(&window, &scriptscope::MainWindow::modelShown, &window,
                                       [&window, connection](const QString&) {
                                           QObject::disconnect(*connection);
                                           delete connection;
                                           // The demo is small: timed as usual at once.
                                           window.runPanel()->useUsualTiming();
                                           window.runPanel()->runOnce();
                                       });
    }
    window.openFile(model);
    return app.exec();
}
