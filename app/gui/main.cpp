// scriptscope: the desktop inspector. With no argument it opens the bundled demo.
#include <main_window.h>
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
        QStringLiteral("A debugger for exported PyTorch (TorchScript) models."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("model"),
        QStringLiteral("The TorchScript archive to open (default: the demo)."));
    parser.process(app);

    scriptscope::WorkerClient worker;
    scriptscope::MainWindow window(&worker);
    window.resize(1280, 800);
    window.restoreWarpSession(demoFile(QStringLiteral("demo.png")));
    window.show();
    const QStringList files = parser.positionalArguments();
    window.openFile(files.isEmpty() ? demoFile(QStringLiteral("demo_model.pt")) : files.first());
    return app.exec();
}
