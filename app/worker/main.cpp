// scriptscope-worker: owns the open model in its own process and serves the GUI over a
// QLocalSocket (app/protocol/protocol.h; the requests: worker.cpp). The GUI never loads or runs a
// model itself: when LibTorch or a model's code crashes, hangs or runs out of memory here, the GUI
// survives, says what happened, and starts a new worker.
//   scriptscope-worker --socket NAME [--scratch DIR] [--memory-limit MB]
#include "worker.h"

#include <added_formats.h>
#include <engine.h>
#include <process_limits.h>
#include <protocol.h>
#include <sandbox.h>

#include <QCborArray>
#include <QCoreApplication>
#include <QFile>
#include <QLocalSocket>

#include <cstdio>
#include <cstdlib>

#include <unistd.h>

using namespace scriptscope;
using namespace scriptscope::protocol;

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QString socketName;
    QString scratch;
    for (int i = 1; i + 1 < argc; ++i) {
        const QString argument = QString::fromLocal8Bit(argv[i]);
        if (argument == QLatin1String("--socket")) {
            socketName = QString::fromLocal8Bit(argv[++i]);
        } else if (argument == QLatin1String("--scratch")) {
            scratch = QString::fromLocal8Bit(argv[++i]);
        } else if (argument == QLatin1String("--memory-limit")) {
            applyMemoryLimit(QString::fromLocal8Bit(argv[++i]).toULongLong() << 20);
        }
    }
    if (socketName.isEmpty()) {
        std::fprintf(stderr,
                     "usage: scriptscope-worker --socket NAME [--scratch DIR] [--memory-limit MB]\n"
                     "Started by ScriptScope; it serves one GUI over a local socket.\n");
        return 2;
    }
    QLocalSocket socket;
    socket.connectToServer(socketName);
    if (!socket.waitForConnected(10000)) {
        std::fprintf(stderr, "scriptscope-worker: cannot connect to %s\n", qPrintable(socketName));
        return 1;
    }
    // From here on the process runs archives' code: it makes no new sockets, writes only to its
    // scratch folder, and gains no privileges (see sandbox.h). Before LibTorch starts threads.
    // Temporary files go to the scratch folder, the one place the sandbox lets the worker write:
    // LibTorch unpacks an AOTInductor package's compiled model into TMPDIR to load it.
    if (!scratch.isEmpty()) {
        ::setenv("TMPDIR", QFile::encodeName(scratch).constData(), 1);
    }
    const SandboxReport sandbox = applySandbox(QFile::encodeName(scratch).toStdString());
    if (!sandbox.notes.empty()) {
        std::fprintf(stderr, "scriptscope-worker: %s\n", sandbox.summary().c_str());
    }
    worker::Worker worker(socket);
    FrameReader reader;
    QObject::connect(&socket, &QLocalSocket::disconnected, &app, &QCoreApplication::quit);
    QObject::connect(&socket, &QLocalSocket::readyRead, &app, [&]() {
        reader.append(socket.readAll());
        while (auto payload = reader.next()) {
            auto message = decode(*payload);
            if (!message) {
                worker.fail(0, message.error());
                continue;
            }
            if (!worker.handle(*message)) {
                app.quit();
                return;
            }
        }
        if (reader.failed()) {
            worker.fail(0, Error(ErrorKind::Internal, "a frame larger than the protocol allows"));
            app.exit(1);
        }
    });
    QCborMap ready;
    ready.insert(QLatin1String("pid"), qint64(::getpid()));
    ready.insert(QLatin1String("libtorch"), QString::fromStdString(libtorchVersion()));
    QCborArray build;
    for (const auto& line : buildDescription()) {
        build.append(QString::fromStdString(line));
    }
    ready.insert(QLatin1String("build"), build);
    QCborArray devices;
    for (const auto& device : listDevices()) {
        devices.append(toCbor(device));
    }
    ready.insert(QLatin1String("devices"), devices);
    // What format libraries add (SCRIPTSCOPE_FORMAT_LIBRARIES), loaded here, in the sandbox: the
    // GUI's File dialogs and start page offer them beside ScriptScope's own.
    QCborArray formats;
    for (const AddedFormat& format : addedFormats()) {
        formats.append(toCbor(format.reader.patterns));
    }
    ready.insert(QLatin1String("formats"), formats);
    QCborArray notes;
    for (const auto& note : sandbox.notes) {
        notes.append(QString::fromStdString(note));
    }
    ready.insert(QLatin1String("sandbox"),
                 QCborMap{{QLatin1String("confined"), sandbox.noSockets && sandbox.writesConfined},
                          {QLatin1String("summary"), QString::fromStdString(sandbox.summary())},
                          {QLatin1String("notes"), notes}});
    worker.send(make(MessageType::Ready, 0, ready));
    return app.exec();
}
