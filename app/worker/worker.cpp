// The worker's requests, each answered with a value or an error (worker.h).
#include "worker.h"

#include <engine.h>
#include <side_by_side.h>

#include <QCborArray>

#include <algorithm>
#include <chrono>
#include <thread>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>

namespace scriptscope::worker {

using namespace scriptscope::protocol;

namespace {

std::string str(const Message& m, const char* key) {
    return m.body.value(QLatin1String(key)).toString().toStdString();
}

std::vector<std::string> strings(const QCborArray& array) {
    std::vector<std::string> out;
    for (const auto& value : array) {
        out.push_back(value.toString().toStdString());
    }
    return out;
}

} // namespace

void Worker::send(const Message& message) {
    const QByteArray bytes = frame(encode(message));
    // Straight to the socket, whole, before the next request is handled: through QLocalSocket's
    // buffer it left a socket buffer's worth per turn of the event loop. Every message leaves
    // through here, so that buffer holds nothing to be overtaken.
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

void Worker::fail(quint64 id, const Error& error) {
    send(make(MessageType::Failure, id, toCbor(error)));
}

void Worker::progress(quint64 id, const char* stage, const std::string& detail) {
    QCborMap body;
    body.insert(QLatin1String("stage"), QLatin1String(stage));
    body.insert(QLatin1String("detail"), QString::fromStdString(detail));
    send(make(MessageType::Progress, id, body));
}

Model* Worker::model(quint64 id) {
    if (!model_) {
        fail(id, Error(ErrorKind::Input, "no model is open"));
    }
    return model_.get();
}

bool Worker::handle(const Message& m) {
    switch (m.type) {
    case MessageType::Probe:
        send(make(MessageType::ProbeResult, m.id, toCbor(probeArchive(str(m, "path")))));
        return true;
    case MessageType::Load:
        load(m);
        return true;
    case MessageType::Code:
    case MessageType::Graph:
        text(m);
        return true;
    case MessageType::Diagram:
        if (!str(m, "path").empty()) {
            otherDiagram(m);
        } else if (Model* model = this->model(m.id)) {
            reply(m.id, MessageType::DiagramModel,
                  model->graphModel(str(m, "module"), str(m, "method"),
                                    m.body.value(QLatin1String("inlined")).toBool()));
        }
        return true;
    case MessageType::Run:
        if (Model* model = this->model(m.id)) {
            progress(m.id, "running", str(m, "method"));
            reply(m.id, MessageType::RunResult, model->run(runRequestFromCbor(m.body)));
        }
        return true;
    case MessageType::Statistics:
        statistics(m);
        return true;
    case MessageType::Activations:
        if (Model* model = this->model(m.id)) {
            progress(m.id, "activations", "");
            // Against a model whose values cannot be matched: by outputs and p50s instead.
            reply(m.id, MessageType::ActivationReport,
                  activationsOrOutputs(*model, activationRequestFromCbor(m.body)));
        }
        return true;
    case MessageType::Optimize:
        if (Model* model = this->model(m.id)) {
            progress(m.id, "optimizing", "");
            // The sandbox lets the worker write only to its scratch folder: the GUI gives a path
            // there and moves the file where the person wants it.
            reply(m.id, MessageType::OptimizeResult,
                  model->optimize(optimizeRequestFromCbor(m.body)));
        }
        return true;
    case MessageType::Diff:
        diff(m);
        return true;
    case MessageType::SourceOpen:
        progress(m.id, "opening", str(m, "source"));
        if (auto error = openSource(str(m, "source"))) {
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

void Worker::load(const Message& m) {
    // The libraries the GUI remembers, each on its own before the archive (a crash in one is told
    // apart by the "library" stage). One that cannot be loaded here (built for another LibTorch,
    // gone) does not keep the model from opening: it is reported.
    std::vector<std::pair<std::string, std::string>> refused;
    for (const std::string& path : strings(m.body.value(QLatin1String("op_libraries")).toArray())) {
        progress(m.id, "library", path);
        if (auto error = loadOperatorLibrary(path)) {
            refused.emplace_back(path, error->message);
        }
    }
    progress(m.id, "loading", str(m, "path"));
    OpenOptions options;
    if (!str(m, "device").empty()) {
        options.device = str(m, "device");
    }
    auto opened = openModel(str(m, "path"), options);
    if (!opened) {
        Error error = opened.error();
        for (const auto& [library, why] : refused) {
            error.message += " (" + why + ")";
        }
        // The model that was open stays open: the GUI still shows it.
        fail(m.id, error);
        return;
    }
    model_ = std::move(opened).value();
    ModelInfo info = model_->info();
    info.refusedLibraries = std::move(refused);
    send(make(MessageType::ModelInfo, m.id, toCbor(info)));
}

void Worker::text(const Message& m) {
    Model* model = this->model(m.id);
    if (!model) {
        return;
    }
    const auto text = m.type == MessageType::Code
                          ? model->code(str(m, "module"), str(m, "method"))
                          : model->graph(str(m, "module"), str(m, "method"),
                                         m.body.value(QLatin1String("inlined")).toBool());
    if (text) {
        QCborMap body;
        body.insert(QLatin1String("text"), QString::fromStdString(*text));
        send(make(MessageType::Text, m.id, body));
    } else {
        fail(m.id, text.error());
    }
}

void Worker::statistics(const Message& m) {
    Model* model = this->model(m.id);
    if (!model) {
        return;
    }
    progress(m.id, "statistics", str(m, "module"));
    const auto values = model->tensorStatistics(str(m, "module"));
    if (!values) {
        fail(m.id, values.error());
        return;
    }
    QCborArray array;
    for (const auto& value : *values) {
        array.append(toCbor(value));
    }
    QCborMap body;
    body.insert(QLatin1String("values"), array);
    send(make(MessageType::Values, m.id, body));
}

// Another file (the body's path) opened beside the open model with the body's operator
// libraries, its code not needed; nullptr when it did not open (said as the request's failure).
std::unique_ptr<Model> Worker::openOther(const Message& m) {
    const std::string path = str(m, "path");
    progress(m.id, "loading", path);
    // As at Load: a library refused here (built for another LibTorch) was said when the model
    // opened; the other file names an operator it would have brought.
    for (const std::string& library :
         strings(m.body.value(QLatin1String("op_libraries")).toArray())) {
        (void)loadOperatorLibrary(library);
    }
    OpenOptions options;
    options.includeCode = false;
    auto other = openModel(path, options);
    if (!other) {
        fail(m.id, other.error());
        return nullptr;
    }
    return std::move(other).value();
}

// The open model against another file: the open one is always the first side.
void Worker::diff(const Message& m) {
    Model* model = this->model(m.id);
    if (!model) {
        return;
    }
    if (const auto other = openOther(m)) {
        progress(m.id, "comparing", str(m, "path"));
        reply(m.id, MessageType::ArchiveDiff, diffModels(*model, *other));
    }
}

// Another model's diagram (the one the open model is compared with): opened for it and let go.
void Worker::otherDiagram(const Message& m) {
    if (const auto other = openOther(m)) {
        reply(m.id, MessageType::DiagramModel,
              other->graphModel(str(m, "module"), str(m, "method"),
                                m.body.value(QLatin1String("inlined")).toBool()));
    }
}

Status Worker::openSource(const std::string& text) {
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

void Worker::runFrame(const Message& m) {
    Model* model = this->model(m.id);
    if (!model) {
        return;
    }
    const std::string text = str(m, "source");
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
    if (auto run = model->run(request)) {
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

} // namespace scriptscope::worker
