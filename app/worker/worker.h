// The worker's one model and the requests it serves (worker.cpp); main.cpp connects it to the GUI's
// socket. It holds a Model, never a format: what a format cannot do, the model refuses.
#pragma once

#include <frame_source.h>
#include <model.h>
#include <protocol.h>

#include <QLocalSocket>

#include <memory>
#include <string>

namespace scriptscope::worker {

class Worker {
public:
    explicit Worker(QLocalSocket& socket)
        : socket_(socket) {}

    void send(const protocol::Message& message);
    void fail(quint64 id, const Error& error);
    // Returns false when the worker should stop.
    bool handle(const protocol::Message& m);

private:
    void progress(quint64 id, const char* stage, const std::string& detail);
    // The answer to request `id`: the value as a message of `type`, or its error.
    template <typename T>
    void reply(quint64 id, protocol::MessageType type, const Expected<T>& value) {
        if (value) {
            send(protocol::make(type, id, protocol::toCbor(*value)));
        } else {
            fail(id, value.error());
        }
    }
    // The open model; nullptr once request `id` has been told that none is open.
    Model* model(quint64 id);

    void load(const protocol::Message& m);
    void text(const protocol::Message& m);
    void statistics(const protocol::Message& m);
    void diff(const protocol::Message& m);
    void otherDiagram(const protocol::Message& m);
    std::unique_ptr<Model> openOther(const protocol::Message& m);
    // Opens a source of frames (replacing the open one); its frames are decoded here.
    Status openSource(const std::string& text);
    // One frame of the open source, run: the frame the index names, or, live, the newest one due
    // by the source's clock (frames that came while the model ran are dropped and counted).
    void runFrame(const protocol::Message& m);

    QLocalSocket& socket_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<FrameSource> source_;
    std::string sourceText_;
    LivePacer pacer_;
    int64_t last_ = -1;
};

} // namespace scriptscope::worker
