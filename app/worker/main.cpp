// scriptscope-worker: owns the loaded torch::jit::Module in its own process and serves the GUI
// over a QLocalSocket (app/protocol/protocol.h). The GUI never loads or runs a model itself: when
// LibTorch or a model's code crashes, hangs or runs out of memory here, the GUI survives, says
// what happened, and starts a new worker.
//   scriptscope-worker --socket NAME [--scratch DIR] [--memory-limit MB]
#include <engine.h>
#include <exported_program.h>
#include <frame_source.h>
#include <process_limits.h>
#include <protocol.h>
#include <sandbox.h>

#include <QCoreApplication>
#include <QFile>
#include <QLocalSocket>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace scriptscope;
using namespace scriptscope::protocol;

namespace {

class Worker {
public:
    explicit Worker(QLocalSocket& socket)
        : socket_(socket) {}

    void send(const Message& message) {
        const QByteArray bytes = frame(encode(message));
        // Straight to the socket, whole, before the next request is handled: through
        // QLocalSocket's buffer it left a socket buffer's worth per turn of the event loop. Every
        // message leaves through here, so that buffer holds nothing to be overtaken.
        const int fd = static_cast<int>(socket_.socketDescriptor());
        qint64 sent = 0;
        while (fd >= 0 && sent < bytes.size()) {
            const ssize_t n = ::send(fd, bytes.constData() + sent,
                                     static_cast<size_t>(bytes.size() - sent), MSG_NOSIGNAL);
            if (n > 0) {
                sent += n;
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                pollfd writable{fd, POLLOUT, 0};
                ::poll(&writable, 1, -1);
            } else {
                return; // the GUI is gone: the socket's disconnection ends the worker
            }
        }
    }

    void fail(quint64 id, const Error& error) {
        send(make(MessageType::Failure, id, toCbor(error)));
    }

    void progress(quint64 id, const char* stage, const std::string& detail) {
        QCborMap body;
        body.insert(QLatin1String("stage"), QLatin1String(stage));
        body.insert(QLatin1String("detail"), QString::fromStdString(detail));
        send(make(MessageType::Progress, id, body));
    }

    // Returns false when the worker should stop.
    bool handle(const Message& m) {
        if (exported_ && inspectsValues(m.type)) {
            fail(m.id, notInspectable());
            return true;
        }
        const auto str = [&](const char* key) {
            return m.body.value(QLatin1String(key)).toString().toStdString();
        };
        switch (m.type) {
        case MessageType::Probe:
            send(make(MessageType::ProbeResult, m.id, toCbor(probeArchive(str("path")))));
            return true;
        case MessageType::Load: {
            // The libraries the GUI remembers, each on its own before the archive (a crash in one
            // is told apart by the "library" stage). One that cannot be loaded here (built for
            // another LibTorch, gone) does not keep the model from opening: it is reported.
            std::vector<std::pair<std::string, std::string>> refused;
            for (const auto& library : m.body.value(QLatin1String("op_libraries")).toArray()) {
                const std::string path = library.toString().toStdString();
                progress(m.id, "library", path);
                if (auto error = session_->loadOperatorLibrary(path)) {
                    refused.emplace_back(path, error->message);
                }
            }
            const auto withRefused = [&](ModelInfo info) {
                info.refusedLibraries = refused;
                return info;
            };
            progress(m.id, "loading", str("path"));
            exported_.reset();
            compiled_ = std::make_unique<CompiledModel>();
            // The zip's directory tells the formats apart; Session::load probes a TorchScript
            // archive itself.
            if (isPt2File(str("path"))) {
                // Read, never run: the previous model goes, as it would for a TorchScript one.
                auto exported = ExportedProgram::open(str("path"), probeArchive(str("path")));
                if (!exported) {
                    fail(m.id, exported.error());
                    return true;
                }
                session_ = std::make_unique<Session>();
                exported_ = std::move(exported).value();
                send(make(MessageType::ModelInfo, m.id, toCbor(withRefused(exported_->info()))));
                return true;
            }
            LoadOptions options;
            if (!str("device").empty()) {
                options.device = str("device");
            }
            const auto model = session_->load(str("path"), options);
            if (model) {
                send(make(MessageType::ModelInfo, m.id, toCbor(withRefused(*model))));
            } else {
                Error error = model.error();
                for (const auto& [library, why] : refused) {
                    error.message += " (" + why + ")";
                }
                fail(m.id, error);
            }
            return true;
        }
        case MessageType::Code:
        case MessageType::Graph: {
            const bool inlined = m.body.value(QLatin1String("inlined")).toBool();
            const auto text = exported_ ? (m.type == MessageType::Code
                                               ? exported_->code(str("module"), str("method"))
                                               : exported_->graph(str("module"), str("method")))
                              : m.type == MessageType::Code
                                  ? session_->code(str("module"), str("method"))
                                  : session_->graph(str("module"), str("method"), inlined);
            if (text) {
                QCborMap body;
                body.insert(QLatin1String("text"), QString::fromStdString(*text));
                send(make(MessageType::Text, m.id, body));
            } else {
                fail(m.id, text.error());
            }
            return true;
        }
        case MessageType::Diagram: {
            const auto graph =
                exported_ ? exported_->graphModel(str("module"), str("method"))
                          : session_->graphModel(str("module"), str("method"),
                                                 m.body.value(QLatin1String("inlined")).toBool());
            if (graph) {
                send(make(MessageType::DiagramModel, m.id, toCbor(*graph)));
            } else {
                fail(m.id, graph.error());
            }
            return true;
        }
        case MessageType::Run: {
            progress(m.id, "running", str("method"));
            const auto result = runModel(runRequestFromCbor(m.body));
            if (result) {
                send(make(MessageType::RunResult, m.id, toCbor(*result)));
            } else {
                fail(m.id, result.error());
            }
            return true;
        }
        case MessageType::Statistics: {
            progress(m.id, "statistics", str("module"));
            const auto values = session_->tensorStatistics(str("module"));
            if (values) {
                QCborArray array;
                for (const auto& value : *values) {
                    array.append(toCbor(value));
                }
                QCborMap body;
                body.insert(QLatin1String("values"), array);
                send(make(MessageType::Values, m.id, body));
            } else {
                fail(m.id, values.error());
            }
            return true;
        }
        case MessageType::Activations: {
            progress(m.id, "activations", "");
            const auto report = session_->activations(activationRequestFromCbor(m.body));
            if (report) {
                send(make(MessageType::ActivationReport, m.id, toCbor(*report)));
            } else {
                fail(m.id, report.error());
            }
            return true;
        }
        case MessageType::Optimize: {
            progress(m.id, "optimizing", "");
            // The sandbox lets the worker write only to its scratch folder: the GUI gives a path
            // there and moves the file where the person wants it.
            const auto result = session_->optimize(optimizeRequestFromCbor(m.body));
            if (result) {
                send(make(MessageType::OptimizeResult, m.id, toCbor(*result)));
            } else {
                fail(m.id, result.error());
            }
            return true;
        }
        case MessageType::Diff: {
            progress(m.id, "loading", str("path"));
            if (exported_ || isPt2File(str("path"))) {
                diffExported(m.id, str("path"),
                             m.body.value(QLatin1String("op_libraries")).toArray());
                return true;
            }
            const auto other = loadToCompare(m.id, str("path"),
                                             m.body.value(QLatin1String("op_libraries")).toArray());
            if (!other) {
                return true;
            }
            progress(m.id, "comparing", str("path"));
            const auto diff = session_->diff(*other);
            if (diff) {
                send(make(MessageType::ArchiveDiff, m.id, toCbor(*diff)));
            } else {
                fail(m.id, diff.error());
            }
            return true;
        }
        case MessageType::SourceOpen:
            progress(m.id, "opening", str("source"));
            if (auto error = openSource(str("source"))) {
                fail(m.id, *error);
            } else {
                send(make(MessageType::SourceInfo, m.id, toCbor(source_->info())));
            }
            return true;
        case MessageType::SourceFrame:
            runFrame(m);
            return true;
        case MessageType::Shutdown:
            return false;
        default:
            fail(m.id, Error(ErrorKind::Internal, "the worker does not take this message"));
            return true;
        }
    }

private:
    // What needs a TorchScript model's values and graph in LibTorch; a .pt2 runs (its compiled
    // model) but these do not take it yet.
    static bool inspectsValues(MessageType type) {
        return type == MessageType::Statistics || type == MessageType::Activations ||
               type == MessageType::Optimize;
    }

    // The TorchScript archive the open model is compared with, loaded beside it with the same
    // operator libraries (its code is not needed); nullptr once the failure has been sent.
    std::unique_ptr<Session> loadToCompare(quint64 id, const std::string& path,
                                           const QCborArray& libraries) {
        auto other = std::make_unique<Session>();
        // As at Load: a library refused here (built for another LibTorch) was said when the
        // model opened; the other archive names an operator it would have brought.
        for (const auto& library : libraries) {
            (void)other->loadOperatorLibrary(library.toString().toStdString());
        }
        LoadOptions options;
        options.includeCode = false;
        if (const auto loaded = other->load(path, options); !loaded) {
            fail(id, loaded.error());
            return nullptr;
        }
        return other;
    }

    // A TorchScript archive against a .pt2, whichever of the two is open: the open one is always
    // the first side.
    void diffExported(quint64 id, const std::string& path, const QCborArray& libraries) {
        if (exported_ && isPt2File(path)) {
            fail(id, Error{ErrorKind::Input, "two .pt2 archives are not compared yet: compare "
                                             "each with its TorchScript twin"});
            return;
        }
        Expected<ArchiveDiff> diff = Error{ErrorKind::Internal, "no comparison"};
        if (exported_) {
            const auto other = loadToCompare(id, path, libraries);
            if (!other) {
                return;
            }
            progress(id, "comparing", path);
            const auto forward = other->diff(*exported_);
            diff = forward ? Expected<ArchiveDiff>(reversed(*forward)) : forward.error();
        } else {
            const auto other = ExportedProgram::open(path, probeArchive(path));
            if (!other) {
                fail(id, other.error());
                return;
            }
            progress(id, "comparing", path);
            diff = session_->diff(*other);
        }
        if (diff) {
            send(make(MessageType::ArchiveDiff, id, toCbor(*diff)));
        } else {
            fail(id, diff.error());
        }
    }

    Error notInspectable() const {
        return Error{ErrorKind::Format,
                     "'" + exported_->info().path +
                         "' is a torch.export program: ScriptScope shows, draws and runs it, but "
                         "its statistics, activations and passes work on TorchScript archives "
                         "only so far"};
    }

    // The open model's run: the TorchScript method, or the .pt2's compiled model.
    Expected<RunResult> runModel(const RunRequest& request) {
        return exported_ ? runExported(*exported_, *compiled_, request) : session_->run(request);
    }

    // Opens a source of frames (replacing the open one); its frames are decoded here.
    Status openSource(const std::string& text) {
        source_.reset();
        sourceText_.clear();
        auto spec = parseSourceSpec(text);
        if (!spec) {
            return spec.error();
        }
        auto source = FrameSource::open(*spec);
        if (!source) {
            return source.error();
        }
        source_ = std::move(source).value();
        sourceText_ = text;
        last_ = -1;
        return std::nullopt;
    }

    // One frame of the open source, run: the frame the index names, or, live, the newest one due
    // by the source's clock (frames that came while the model ran are dropped and counted).
    void runFrame(const Message& m) {
        const std::string text = m.body.value(QLatin1String("source")).toString().toStdString();
        if (!source_ || text != sourceText_) {
            if (auto error = openSource(text)) {
                fail(m.id, *error);
                return;
            }
        }
        RunRequest request = runRequestFromCbor(m.body.value(QLatin1String("run")).toMap());
        int64_t index = m.body.value(QLatin1String("index")).toInteger();
        FrameResult result;
        if (m.body.value(QLatin1String("live")).toBool()) {
            const SourceInfo& info = source_->info();
            if (m.body.value(QLatin1String("restart")).toBool() || last_ < 0) {
                pacer_.start(info.kind == SourceSpec::Kind::Folder ? 0 : info.fps, index);
                last_ = index - 1;
            }
            index = pacer_.due(last_);
            if (const double wait = pacer_.waitMs(index); wait > 0) {
                // Faster than the video: wait for the frame's time rather than play it early.
                std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(wait));
            }
            result.dropped = index - (last_ + 1);
        }
        result.index = index;
        if (source_->atEnd(index)) {
            // Frames the clock passed on the way to the end were dropped too (not past the end).
            const int64_t frames = source_->info().frames;
            result.dropped = frames >= 0 ? std::max<int64_t>(0, frames - (last_ + 1)) : 0;
            result.end = true;
            send(make(MessageType::FrameResult, m.id, toCbor(result)));
            return;
        }
        const auto started = std::chrono::steady_clock::now();
        auto frame = source_->read(index);
        result.decodeMs =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
        last_ = index;
        if (!frame) {
            result.error = frame.error().message;
            result.end = source_->atEnd(index);
            send(make(MessageType::FrameResult, m.id, toCbor(result)));
            return;
        }
        cv::Mat bgr = frame->bgr; // the header: the pixels are shared
        if (!bgr.isContinuous()) {
            bgr = bgr.clone();
        }
        result.name = frame->name;
        result.width = bgr.cols;
        result.height = bgr.rows;
        request.frame = frameView(bgr);
        if (auto run = runModel(request)) {
            result.hasRun = true;
            result.run = std::move(run).value();
        } else {
            result.error = run.error().message;
        }
        QCborMap body = toCbor(result);
        // The pixels go straight from the decoder's buffer into the message.
        body.insert(QLatin1String("bgr"),
                    QByteArray::fromRawData(reinterpret_cast<const char*>(bgr.data),
                                            static_cast<qsizetype>(bgr.total() * bgr.elemSize())));
        send(make(MessageType::FrameResult, m.id, body));
    }

    QLocalSocket& socket_;
    std::unique_ptr<Session> session_ = std::make_unique<Session>();
    std::optional<ExportedProgram> exported_; // a .pt2 is open instead of a TorchScript archive
    std::unique_ptr<CompiledModel> compiled_ = std::make_unique<CompiledModel>(); // its model
    std::unique_ptr<FrameSource> source_;
    std::string sourceText_;
    LivePacer pacer_;
    int64_t last_ = -1;
};

} // namespace

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
    Worker worker(socket);
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
