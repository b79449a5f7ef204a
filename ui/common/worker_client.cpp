#include "worker_client.h"

#include <format.h>
#include <process_limits.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLocalServer>
#include <QLocalSocket>
#include <QProcessEnvironment>
#include <QUuid>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace scriptscope {

// The longest the GUI thread waits for the rest of a message that is arriving (milliseconds).
constexpr qint64 kReadSliceMs = 25;
// Messages from this size on are decoded in a thread.
constexpr qsizetype kDecodeInThreadBytes = 1 << 20;

using namespace protocol;

WorkerClient::WorkerClient(QObject* parent)
    : QObject(parent)
    , workerPath_(QDir(QCoreApplication::applicationDirPath())
                      .filePath(QStringLiteral("scriptscope-worker"))) {
    // The worker's address space is limited to three quarters of physical memory by default, so a
    // model that allocates without bound fails there instead of driving the machine into swap.
    memoryLimitMb_ = static_cast<qint64>(defaultMemoryLimit() >> 20);
    timeout_.setSingleShot(true);
    connect(&timeout_, &QTimer::timeout, this, [this]() {
        timedOut_ = true;
        stopWorker();
    });
}

WorkerClient::~WorkerClient() {
    if (process_) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);
    }
}

bool WorkerClient::ensureWorker(QString& why) {
    if (process_ && process_->state() != QProcess::NotRunning) {
        return true; // running, or starting and about to connect
    }
    stopWorker();
    if (!QFileInfo(workerPath_).isExecutable()) {
        why = QStringLiteral("the worker program %1 is missing; reinstall ScriptScope")
                  .arg(workerPath_);
        return false;
    }
    server_ = std::make_unique<QLocalServer>();
    server_->setSocketOptions(QLocalServer::UserAccessOption);
    const QString name = QStringLiteral("scriptscope-%1-%2")
                             .arg(QCoreApplication::applicationPid())
                             .arg(QUuid::createUuid().toString(QUuid::Id128).left(12));
    if (!server_->listen(name)) {
        why = QStringLiteral("cannot open a local socket for the worker: %1")
                  .arg(server_->errorString());
        server_.reset();
        return false;
    }
    connect(server_.get(), &QLocalServer::newConnection, this, &WorkerClient::onWorkerConnected);
    process_ = std::make_unique<QProcess>();
    process_->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    // The worker runs model code: it gets a folder of its own to write to, and an environment
    // without the GUI's secrets (tokens, credentials, SSH agent) - only what the libraries need.
    scratch_ = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                               QStringLiteral("/scriptscope-worker-XXXXXX"));
    const QProcessEnvironment inherited = QProcessEnvironment::systemEnvironment();
    QProcessEnvironment environment;
    for (const char* keep :
         {"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TZ", "LD_LIBRARY_PATH",
          "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "OMP_NUM_THREADS",
          "MKL_NUM_THREADS", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
          "SCRIPTSCOPE_FORMAT_LIBRARIES"}) { // the formats the worker reads besides its own
        const QString key = QLatin1String(keep);
        if (inherited.contains(key)) {
            environment.insert(key, inherited.value(key));
        }
    }
    if (scratch_->isValid()) {
        environment.insert(QStringLiteral("HOME"), scratch_->path());
        environment.insert(QStringLiteral("TMPDIR"), scratch_->path());
    }
    // In a sanitizer build the memory limit travels as sanitizer options (see process_limits.h).
    const QString sanitizer = QString::fromStdString(
        sanitizerMemoryOptions(static_cast<uint64_t>(std::max<qint64>(0, memoryLimitMb_)) << 20));
    if (!sanitizer.isEmpty()) {
        const QString inheritedOptions = environment.value(QStringLiteral("ASAN_OPTIONS"));
        environment.insert(QStringLiteral("ASAN_OPTIONS"),
                           inheritedOptions.isEmpty()
                               ? sanitizer
                               : inheritedOptions + QLatin1Char(':') + sanitizer);
    }
    process_->setProcessEnvironment(environment);
    // The full path: the worker's TMPDIR is not the GUI's.
    QStringList arguments{QStringLiteral("--socket"), server_->fullServerName()};
    if (scratch_->isValid()) {
        arguments << QStringLiteral("--scratch") << scratch_->path();
    }
    if (memoryLimitMb_ > 0) {
        arguments << QStringLiteral("--memory-limit") << QString::number(memoryLimitMb_);
    }
    connect(process_.get(), &QProcess::finished, this, &WorkerClient::onWorkerFinished);
    connect(process_.get(), &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            failPending(ErrorKind::Crashed,
                        QStringLiteral("The worker program %1 could not start: %2")
                            .arg(workerPath_, process_->errorString()));
            stopWorker();
        }
    });
    process_->start(workerPath_, arguments);
    return true;
}

void WorkerClient::onWorkerConnected() {
    if (socket_ || !server_) {
        return;
    }
    socket_ = server_->nextPendingConnection();
    reader_ = FrameReader();
    decoding_ = false;
    ++decodeEpoch_;
    connect(socket_, &QLocalSocket::readyRead, this, &WorkerClient::onReadyRead);
    if (!outbox_.isEmpty()) {
        socket_->write(outbox_);
        socket_->flush();
        outbox_.clear();
    }
}

quint64 WorkerClient::send(MessageType type, QCborMap body, int timeoutMs, const QString& what) {
    const quint64 id = nextId_++;
    // Clicking through modules while the worker is busy must not pile up stale requests.
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                                [type](const Request& r) { return r.type == type; }),
                 queue_.end());
    queue_.push_back(Request{id, type, std::move(body), timeoutMs, what, {}, {}});
    dispatch();
    return id;
}

void WorkerClient::dispatch() {
    if (pending_ != 0 || queue_.empty()) {
        return;
    }
    Request request = std::move(queue_.front());
    queue_.pop_front();
    const bool fresh = !process_ || process_->state() == QProcess::NotRunning;
    QString why;
    if (!ensureWorker(why)) {
        Q_EMIT failed(request.id, Error(ErrorKind::Crashed, why.toStdString()));
        dispatch();
        return;
    }
    pending_ = request.id;
    timedOut_ = false;
    cancelling_ = false;
    timeout_.start(request.timeoutMs);
    QByteArray bytes;
    if (fresh && loadedBody_ && request.type != MessageType::Load &&
        request.type != MessageType::Probe) {
        // A new worker has no model yet: load the one the window shows (its answer, id 0, is not
        // reported) before the question about it.
        bytes += frame(encode(make(MessageType::Load, 0, *loadedBody_)));
    }
    bytes += frame(encode(make(request.type, request.id, request.body)));
    running_ = std::move(request);
    if (socket_) {
        socket_->write(bytes);
        socket_->flush();
    } else {
        outbox_ += bytes; // the worker is starting
    }
    Q_EMIT busyChanged(true);
}

quint64 WorkerClient::load(const QString& path, const QStringList& operatorLibraries) {
    QCborMap body;
    body.insert(QLatin1String("path"), path);
    QCborArray libraries;
    for (const auto& library : operatorLibraries) {
        libraries.append(library);
    }
    body.insert(QLatin1String("op_libraries"), libraries);
    return send(MessageType::Load, body, loadTimeoutMs_, QStringLiteral("loading '%1'").arg(path));
}

quint64 WorkerClient::probe(const QString& path) {
    QCborMap body;
    body.insert(QLatin1String("path"), path);
    return send(MessageType::Probe, body, loadTimeoutMs_, QStringLiteral("reading '%1'").arg(path));
}

namespace {

// The body of the requests about one method: Code, Graph and Diagram.
QCborMap methodBody(const QString& modulePath, const QString& method) {
    QCborMap body;
    body.insert(QLatin1String("module"), modulePath);
    body.insert(QLatin1String("method"), method);
    return body;
}

QCborMap methodBody(const QString& modulePath, const QString& method, bool inlined) {
    QCborMap body = methodBody(modulePath, method);
    body.insert(QLatin1String("inlined"), inlined);
    return body;
}

} // namespace

quint64 WorkerClient::code(const QString& modulePath, const QString& method) {
    return send(MessageType::Code, methodBody(modulePath, method), loadTimeoutMs_,
                QStringLiteral("printing the code of %1").arg(method));
}

quint64 WorkerClient::graph(const QString& modulePath, const QString& method, bool inlined) {
    return send(MessageType::Graph, methodBody(modulePath, method, inlined), loadTimeoutMs_,
                QStringLiteral("printing the graph of %1").arg(method));
}

quint64 WorkerClient::diagram(const QString& modulePath, const QString& method, bool inlined) {
    return send(MessageType::Diagram, methodBody(modulePath, method, inlined), loadTimeoutMs_,
                QStringLiteral("building the diagram of %1").arg(method));
}

quint64 WorkerClient::diagramOf(const QString& path, const QString& modulePath,
                                const QString& method, bool inlined,
                                const QStringList& operatorLibraries) {
    QCborMap body = methodBody(modulePath, method, inlined);
    body.insert(QLatin1String("path"), path);
    body.insert(QLatin1String("op_libraries"), QCborArray::fromStringList(operatorLibraries));
    return send(MessageType::Diagram, body, loadTimeoutMs_,
                QStringLiteral("building the diagram of '%1'").arg(path));
}

quint64 WorkerClient::statistics(const QString& modulePath) {
    QCborMap body;
    body.insert(QLatin1String("module"), modulePath);
    return send(MessageType::Statistics, body, loadTimeoutMs_,
                QStringLiteral("computing statistics of '%1'").arg(modulePath));
}

quint64 WorkerClient::run(const RunRequest& request) {
    return send(MessageType::Run, toCbor(request), runTimeoutMs_,
                QStringLiteral("running %1").arg(QString::fromStdString(request.method)));
}

quint64 WorkerClient::openSource(const QString& source) {
    return send(MessageType::SourceOpen, QCborMap{{QLatin1String("source"), source}},
                loadTimeoutMs_, QStringLiteral("opening '%1'").arg(source));
}

quint64 WorkerClient::runFrame(const QString& source, qint64 index, bool live, bool restart,
                               const RunRequest& request) {
    QCborMap body{{QLatin1String("source"), source},
                  {QLatin1String("index"), index},
                  {QLatin1String("live"), live},
                  {QLatin1String("restart"), restart},
                  {QLatin1String("run"), toCbor(request)}};
    return send(MessageType::SourceFrame, std::move(body), runTimeoutMs_,
                QStringLiteral("running %1 on frame %2 of '%3'")
                    .arg(QString::fromStdString(request.method))
                    .arg(index + 1)
                    .arg(source));
}

quint64 WorkerClient::activations(const ActivationRequest& request) {
    return send(MessageType::Activations, toCbor(request), runTimeoutMs_,
                QStringLiteral("recording every value of %1")
                    .arg(QString::fromStdString(request.run.method)));
}

quint64 WorkerClient::optimize(const OptimizeRequest& request) {
    return send(MessageType::Optimize, toCbor(request), runTimeoutMs_,
                QStringLiteral("optimising a copy of the model"));
}

quint64 WorkerClient::diff(const QString& path, const QStringList& operatorLibraries) {
    QCborMap body;
    body.insert(QLatin1String("path"), path);
    QCborArray libraries;
    for (const auto& library : operatorLibraries) {
        libraries.append(library);
    }
    body.insert(QLatin1String("op_libraries"), libraries);
    return send(MessageType::Diff, body, loadTimeoutMs_,
                QStringLiteral("comparing with '%1'").arg(path));
}

QString WorkerClient::scratchPath() const {
    return scratch_ && scratch_->isValid() ? scratch_->path() : QString();
}

void WorkerClient::cancel() {
    while (!queue_.empty()) {
        const Request dropped = std::move(queue_.front());
        queue_.pop_front();
        Q_EMIT failed(dropped.id,
                      Error(ErrorKind::TimedOut, "Cancelled " + dropped.what.toStdString() + "."));
    }
    if (pending_ == 0) {
        return;
    }
    cancelling_ = true;
    stopWorker();
}

void WorkerClient::onReadyRead() {
    reader_.append(socket_->readAll());
    // A message that is arriving is read to its end here, while its bytes keep coming, for at most
    // kReadSliceMs: through the event loop it came a socket buffer (about 200 KB) per turn, and a
    // 12 MB diagram took 600 ms instead of 30.
    QElapsedTimer slice;
    slice.start();
    while (reader_.inFrame() && slice.elapsed() < kReadSliceMs &&
           socket_->waitForReadyRead(static_cast<int>(kReadSliceMs - slice.elapsed()))) {
        reader_.append(socket_->readAll());
    }
    processFrames();
}

namespace {

WorkerClient::Decoded decodeFrame(const QByteArray& payload) {
    WorkerClient::Decoded decoded;
    auto message = decode(payload);
    if (!message) {
        decoded.error = QString::fromStdString(message.error().message);
        return decoded;
    }
    decoded.message = std::move(message).value();
    if (decoded.message->type == MessageType::DiagramModel) {
        decoded.graph = graphModelFromCbor(decoded.message->body);
        // Freed here, not on the GUI thread: a 56,000-node diagram's CBOR tree took 100 ms to free.
        decoded.message->body = QCborMap();
    }
    return decoded;
}

} // namespace

void WorkerClient::processFrames() {
    while (!decoding_) {
        auto payload = reader_.next();
        if (!payload) {
            break;
        }
        if (payload->size() < kDecodeInThreadBytes) {
            if (!handle(decodeFrame(*payload))) {
                return;
            }
            continue;
        }
        // A large message (a transformer's diagram is 12 MB) is decoded in a thread: the GUI
        // keeps answering. Later frames wait, in order; the request's time limit waits too.
        decoding_ = true;
        const quint64 epoch = ++decodeEpoch_;
        const int remaining = timeout_.isActive() ? timeout_.remainingTime() : -1;
        timeout_.stop();
        auto* watcher = new QFutureWatcher<Decoded>(this);
        connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, remaining, epoch]() {
            watcher->deleteLater();
            if (epoch != decodeEpoch_) {
                return; // the worker was stopped meanwhile: its messages are moot
            }
            decoding_ = false;
            if (remaining >= 0 && pending_ != 0) {
                timeout_.start(std::max(1, remaining));
            }
            if (handle(watcher->future().takeResult())) {
                processFrames();
            }
        });
        watcher->setFuture(
            QtConcurrent::run([bytes = std::move(*payload)]() { return decodeFrame(bytes); }));
        return;
    }
    if (!decoding_ && reader_.failed()) {
        failPending(ErrorKind::Internal,
                    QStringLiteral("the worker sent a frame larger than the protocol allows"));
        stopWorker();
    }
}

bool WorkerClient::handle(Decoded decoded) {
    if (!decoded.message) {
        failPending(ErrorKind::Internal,
                    QStringLiteral("the worker sent a message this program cannot read (%1)")
                        .arg(decoded.error));
        stopWorker();
        return false;
    }
    const Message& m = *decoded.message;
    if (m.type == MessageType::Ready) {
        std::vector<DeviceInfo> devices;
        for (const auto& device : m.body.value(QLatin1String("devices")).toArray()) {
            devices.push_back(deviceFromCbor(device.toMap()));
        }
        Q_EMIT devicesKnown(devices, m.body.value(QLatin1String("libtorch")).toString());
        QStringList build;
        for (const auto& line : m.body.value(QLatin1String("build")).toArray()) {
            build << line.toString();
        }
        Q_EMIT buildKnown(build);
        const QCborMap sandbox = m.body.value(QLatin1String("sandbox")).toMap();
        QStringList notes;
        for (const auto& note : sandbox.value(QLatin1String("notes")).toArray()) {
            notes << note.toString();
        }
        Q_EMIT sandboxKnown(sandbox.value(QLatin1String("confined")).toBool(),
                            sandbox.value(QLatin1String("summary")).toString(), notes);
        const QCborArray formats = m.body.value(QLatin1String("formats")).toArray();
        for (const auto& format : formats) {
            addModelFileFormat(fileFormatFromCbor(format.toMap()));
        }
        if (!formats.isEmpty()) {
            Q_EMIT formatsKnown();
        }
        return true;
    }
    if (m.id != pending_ || pending_ == 0) {
        return true; // an answer to an abandoned request
    }
    switch (m.type) {
    case MessageType::Progress:
        running_.stage = m.body.value(QLatin1String("stage")).toString();
        running_.stageDetail = m.body.value(QLatin1String("detail")).toString();
        Q_EMIT progress(m.id, running_.stage, running_.stageDetail);
        return true;
    case MessageType::ModelInfo: {
        const auto info = modelInfoFromCbor(m.body);
        loadedBody_ = running_.body;
        finishPending();
        Q_EMIT loaded(m.id, info);
        break;
    }
    case MessageType::ProbeResult: {
        const auto result = probeResultFromCbor(m.body);
        finishPending();
        Q_EMIT probed(m.id, result);
        break;
    }
    case MessageType::Text: {
        const QString text = m.body.value(QLatin1String("text")).toString();
        finishPending();
        Q_EMIT textReady(m.id, text);
        break;
    }
    case MessageType::RunResult: {
        const auto result = runResultFromCbor(m.body);
        finishPending();
        Q_EMIT runFinished(m.id, result);
        break;
    }
    case MessageType::SourceInfo: {
        const auto info = sourceInfoFromCbor(m.body);
        finishPending();
        Q_EMIT sourceOpened(m.id, info);
        break;
    }
    case MessageType::FrameResult: {
        const auto frame = frameResultFromCbor(m.body);
        finishPending();
        Q_EMIT frameReady(m.id, frame);
        break;
    }
    case MessageType::DiagramModel: {
        auto graph = std::make_shared<const GraphModel>(decoded.graph ? std::move(*decoded.graph)
                                                                      : graphModelFromCbor(m.body));
        finishPending();
        Q_EMIT diagramReady(m.id, std::move(graph));
        break;
    }
    case MessageType::ActivationReport: {
        const auto report = activationReportFromCbor(m.body);
        finishPending();
        Q_EMIT activationsReady(m.id, report);
        break;
    }
    case MessageType::OptimizeResult: {
        const auto result = optimizeResultFromCbor(m.body);
        finishPending();
        Q_EMIT optimized(m.id, result);
        break;
    }
    case MessageType::ArchiveDiff: {
        const auto diff = archiveDiffFromCbor(m.body);
        finishPending();
        Q_EMIT diffReady(m.id, diff);
        break;
    }
    case MessageType::Values: {
        std::vector<OutputValue> values;
        for (const auto& value : m.body.value(QLatin1String("values")).toArray()) {
            values.push_back(outputFromCbor(value.toMap()));
        }
        finishPending();
        Q_EMIT statisticsReady(m.id, values);
        break;
    }
    case MessageType::Failure: {
        auto error = errorFromCbor(m.body);
        if (error.kind == ErrorKind::OutOfMemory && memoryLimitMb_ > 0) {
            error.message += " The worker hit its memory limit of " +
                             formatBytes(static_cast<uint64_t>(memoryLimitMb_) << 20) + ".";
        }
        finishPending();
        Q_EMIT failed(m.id, error);
        break;
    }
    default:
        break;
    }
    return true;
}

void WorkerClient::finishPending() {
    timeout_.stop();
    pending_ = 0;
    if (queue_.empty()) {
        Q_EMIT busyChanged(false);
    } else {
        // After the answer's signal has been handled.
        QMetaObject::invokeMethod(this, &WorkerClient::dispatch, Qt::QueuedConnection);
    }
}

void WorkerClient::failPending(ErrorKind kind, const QString& message) {
    if (pending_ == 0) {
        return;
    }
    const quint64 id = pending_;
    finishPending();
    Q_EMIT failed(id, Error(kind, message.toStdString()));
}

void WorkerClient::onWorkerFinished(int exitCode, QProcess::ExitStatus status) {
    // Read what it said before it went, then explain what ended it. Its last words may still lie
    // in the socket, not yet read when the process's end is reported (a crash right after the
    // worker wrote them, as in a library's initialiser): read them from the socket first.
    while (socket_ && socket_->waitForReadyRead(0)) {
    }
    if (socket_ && socket_->bytesAvailable() > 0) {
        onReadyRead();
    }
    if (pending_ == 0) {
        return;
    }
    const QString what = running_.what;
    if (cancelling_) {
        failPending(ErrorKind::TimedOut, QStringLiteral("Cancelled %1.").arg(what));
    } else if (timedOut_) {
        failPending(
            ErrorKind::TimedOut,
            QStringLiteral(
                "Stopped %1: it did not finish within %2 s (a hang in the archive's code or in "
                "LibTorch).")
                .arg(what)
                .arg(timeout_.interval() / 1000));
    } else if (status == QProcess::CrashExit && running_.stage == QLatin1String("library")) {
        // Loaded on its own before the archive: the library's own initialisers crashed.
        Error error(ErrorKind::OperatorLibrary,
                    QStringLiteral("The worker crashed with %1 while loading the operator library "
                                   "%2, before the archive: the library is damaged or was built "
                                   "for another LibTorch. File > Operator Libraries forgets it. "
                                   "Everything you had open is kept; the next request starts a "
                                   "new worker.")
                        .arg(QString::fromStdString(describeSignal(exitCode)), running_.stageDetail)
                        .toStdString());
        error.library = running_.stageDetail.toStdString();
        const quint64 id = pending_;
        finishPending();
        Q_EMIT failed(id, error);
    } else if (status == QProcess::CrashExit) {
        // On a crash, QProcess reports the signal that ended the process as its exit code.
        failPending(ErrorKind::Crashed,
                    QStringLiteral(
                        "The worker crashed with %1 while %2: the archive is damaged or hostile, "
                        "or LibTorch has a bug. Everything you had open is kept; the next request "
                        "starts a new worker.")
                        .arg(QString::fromStdString(describeSignal(exitCode)), what));
    } else if (exitCode == kMemoryLimitExitCode) {
        failPending(ErrorKind::OutOfMemory,
                    QStringLiteral("The worker hit its memory limit of %1 while %2 and was "
                                   "stopped. Everything you had open is kept; the next request "
                                   "starts a new worker.")
                        .arg(QString::fromStdString(
                                 formatBytes(static_cast<uint64_t>(memoryLimitMb_) << 20)),
                             what));
    } else {
        failPending(
            ErrorKind::Crashed,
            QStringLiteral("The worker ended (exit code %1) while %2.").arg(exitCode).arg(what));
    }
}

void WorkerClient::stopWorker() {
    decoding_ = false; // a message being decoded is dropped when it is done
    ++decodeEpoch_;
    if (process_) {
        if (process_->state() != QProcess::NotRunning) {
            process_->kill();
            process_->waitForFinished(
                5000); // emits finished: the pending request fails with a reason
        }
        process_->disconnect(this);
        process_.reset();
    }
    if (socket_) {
        socket_->disconnect(this);
        socket_->deleteLater();
        socket_ = nullptr;
    }
    server_.reset();
    scratch_.reset(); // removes what the worker wrote
    outbox_.clear();
    if (pending_ != 0) {
        failPending(ErrorKind::Crashed,
                    QStringLiteral("The worker stopped while %1.").arg(running_.what));
    }
}

} // namespace scriptscope
