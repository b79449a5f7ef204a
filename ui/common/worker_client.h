// The GUI's side of the worker process: starts scriptscope-worker, sends requests, and reports
// progress, results and failures as signals. When the worker crashes, is killed or runs past its
// time limit, the request fails with a message that says which file and what happened, and the
// next request starts a new worker. The GUI never loads or runs a model itself.
#pragma once

#include <protocol.h>

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>

#include <deque>
#include <memory>
#include <optional>

class QLocalServer;
class QLocalSocket;

namespace scriptscope {

class WorkerClient : public QObject {
    Q_OBJECT

public:
    explicit WorkerClient(QObject* parent = nullptr);
    ~WorkerClient() override;

    // The worker executable; by default scriptscope-worker beside the running program.
    void setWorkerPath(const QString& path) { workerPath_ = path; }
    void setLoadTimeout(int milliseconds) { loadTimeoutMs_ = milliseconds; }
    void setRunTimeout(int milliseconds) { runTimeoutMs_ = milliseconds; }
    int loadTimeout() const { return loadTimeoutMs_; }
    int runTimeout() const { return runTimeoutMs_; }
    // Applies to the next worker started (see stop()).
    void setMemoryLimitMb(qint64 megabytes) { memoryLimitMb_ = megabytes; }
    qint64 memoryLimitMb() const { return memoryLimitMb_; }
    // Ends the worker now; the next request starts a new one (with the current settings).
    void stop() { stopWorker(); }
    // Starts the worker ahead of the first request (its Ready names the devices and the formats
    // format libraries add); false, with why, when it cannot start.
    bool start(QString& why) { return ensureWorker(why); }

    // Each returns the request's id, which the answering signal carries.
    quint64 load(const QString& path, const QStringList& operatorLibraries = {});
    quint64 probe(const QString& path);
    quint64 code(const QString& modulePath, const QString& method);
    quint64 graph(const QString& modulePath, const QString& method, bool inlined);
    // The graph as the diagram draws it (GraphModel), built once per request.
    quint64 diagram(const QString& modulePath, const QString& method, bool inlined);
    // Another file's (a model the open one is compared with), opened for it; the libraries are
    // loaded first.
    quint64 diagramOf(const QString& path, const QString& modulePath, const QString& method,
                      bool inlined, const QStringList& operatorLibraries = {});
    quint64 run(const RunRequest& request);
    // Statistics of a module's parameters and buffers (they read every value, so only on request).
    quint64 statistics(const QString& modulePath);
    // Every value one run computes (a Model's activations, model.h).
    quint64 activations(const ActivationRequest& request);
    // Passes on a copy of the model. The worker may write only into scratchPath(): give savePath
    // there and move the file.
    quint64 optimize(const OptimizeRequest& request);
    // The loaded model against another archive.
    quint64 diff(const QString& path, const QStringList& operatorLibraries = {});
    // A source of frames (an image folder, a video file, "camera:N"), opened and decoded in the
    // worker: answered by sourceOpened.
    quint64 openSource(const QString& source);
    // One frame of the source run with the request (its image:- input takes the frame): the
    // frame at index, or live, the newest one due by the source's clock. A newer frame request
    // replaces a queued one. Answered by frameReady.
    quint64 runFrame(const QString& source, qint64 index, bool live, bool restart,
                     const RunRequest& request);
    // The folder the worker may write to (empty before the first worker started).
    QString scratchPath() const;

    bool busy() const { return pending_ != 0 || !queue_.empty(); }
    // The running worker's process id (0 when none), for diagnostics and tests.
    qint64 workerProcessId() const { return process_ ? process_->processId() : 0; }
    // Ends the worker (and with it whatever it was doing); the running and queued requests fail as
    // cancelled.
    void cancel();

Q_SIGNALS:
    void progress(quint64 id, const QString& stage, const QString& detail);
    void loaded(quint64 id, const scriptscope::ModelInfo& info);
    void probed(quint64 id, const scriptscope::ProbeResult& result);
    void textReady(quint64 id, const QString& text);
    // Shared, not copied: a transformer's graph has 50,000 nodes.
    void diagramReady(quint64 id, std::shared_ptr<const scriptscope::GraphModel> graph);
    void runFinished(quint64 id, const scriptscope::RunResult& result);
    void failed(quint64 id, const scriptscope::Error& error);
    void statisticsReady(quint64 id, const std::vector<scriptscope::OutputValue>& values);
    void activationsReady(quint64 id, const scriptscope::ActivationReport& report);
    void optimized(quint64 id, const scriptscope::OptimizeResult& result);
    void diffReady(quint64 id, const scriptscope::ArchiveDiff& diff);
    void sourceOpened(quint64 id, const scriptscope::SourceInfo& info);
    void frameReady(quint64 id, const scriptscope::FrameResult& frame);
    // What the worker can run on, said once by each new worker.
    void devicesKnown(const std::vector<scriptscope::DeviceInfo>& devices,
                      const QString& libtorchVersion);
    // What the worker was built with (LibTorch, CUDA, OpenCV), a line each; said once per worker.
    void buildKnown(const QStringList& lines);
    void busyChanged(bool busy);
    // What the new worker's sandbox enforces (see app/engine/sandbox.h): `confined` when sockets
    // and file writes are both blocked; `summary` and `notes` say what is and is not.
    void sandboxKnown(bool confined, const QString& summary, const QStringList& notes);
    // The worker said which formats its format libraries add; they are in modelFileFormats() now
    // (every File dialog's filter), for views that list the formats to list them again.
    void formatsKnown();

public:
    // A message from the worker as decoded (in a thread when it is large): the message, or why
    // it could not be read; a diagram's graph already converted.
    struct Decoded {
        std::optional<protocol::Message> message;
        QString error;
        std::optional<GraphModel> graph;
    };

private:
    struct Request {
        quint64 id = 0;
        protocol::MessageType type = protocol::MessageType::Probe;
        QCborMap body;
        int timeoutMs = 0;
        QString what; // "loading '/path/model.pt'", for messages
        // The worker's last progress stage for it ("library", "loading") and its detail (the
        // library's path): a crash in an operator library's initialisers is blamed on it.
        QString stage;
        QString stageDetail;
    };

    // Requests run one at a time, in order; a newer request replaces a queued one of the same kind.
    quint64 send(protocol::MessageType type, QCborMap body, int timeoutMs, const QString& what);
    void dispatch();
    // Starts a worker unless one runs; it connects back later (the GUI thread never waits for it).
    bool ensureWorker(QString& why);
    void onWorkerConnected();
    void onReadyRead();
    void processFrames();
    // Acts on one message; false when the worker was stopped (nothing more is read from it).
    bool handle(Decoded decoded);
    void onWorkerFinished(int exitCode, QProcess::ExitStatus status);
    void finishPending();
    void failPending(ErrorKind kind, const QString& message);
    void stopWorker();

    QString workerPath_;
    int loadTimeoutMs_ = 120000;
    int runTimeoutMs_ = 300000;
    qint64 memoryLimitMb_ = 0;
    std::unique_ptr<QLocalServer> server_;
    QLocalSocket* socket_ = nullptr;
    std::unique_ptr<QProcess> process_;
    std::unique_ptr<QTemporaryDir> scratch_; // the worker's only writable folder
    protocol::FrameReader reader_;
    QByteArray outbox_; // the request written once a starting worker has connected
    quint64 nextId_ = 1;
    quint64 pending_ = 0; // the id of the request the worker is working on
    Request running_;
    std::deque<Request> queue_;
    // The last load that succeeded: a new worker (after a crash or a cancel) loads it again before
    // it answers questions about the model the window shows.
    std::optional<QCborMap> loadedBody_;
    QTimer timeout_;
    bool cancelling_ = false;
    bool timedOut_ = false;
    bool decoding_ = false;   // a large message is being decoded; the frames after it wait
    quint64 decodeEpoch_ = 0; // a decode started under another worker (or before a stop) is moot
};

} // namespace scriptscope
