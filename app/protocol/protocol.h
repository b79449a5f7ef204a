// The messages between the GUI and scriptscope-worker, in one place with their version.
//
// Transport: a QLocalSocket. Each message is a frame: a 4-byte big-endian length, then that many
// bytes of CBOR: a map {"v": kVersion, "type": <MessageType>, "id": <request id>, "body": {...}}.
// Tensors travel as raw bytes with their dtype and shape. A frame with another version, a
// malformed one, or one larger than kMaxFrameBytes is refused, never guessed at.
#pragma once

#include <error.h>
#include <file_formats.h>
#include <graph_model.h>
#include <model_info.h>
#include <numerics_types.h>
#include <run_types.h>

#include <QByteArray>
#include <QCborArray>
#include <QCborMap>
#include <QString>

#include <optional>

namespace scriptscope::protocol {

constexpr int kVersion = 13;
constexpr qint64 kMaxFrameBytes = 512ll << 20;

enum class MessageType {
    // GUI -> worker
    Probe = 1,  // {path}
    Load,       // {path, op_libraries: [...], device}
    Code,       // {module, method}
    Graph,      // {module, method, inlined}
    Run,        // RunRequest
    Shutdown,   // {}
    Statistics, // {module}: statistics of its parameters and buffers
    // worker -> GUI
    Ready,       // {pid, libtorch, devices, formats}: sent once the worker has connected
    Progress,    // {stage, detail}
    ProbeResult, // ProbeResult
    ModelInfo,   // ModelInfo
    Text,        // {text}
    RunResult,   // RunResult
    Failure,     // Error
    Values,      // {values: [OutputValue...]}
    // GUI -> worker
    Diagram, // {module, method, inlined[, path, op_libraries]}: the graph as the diagram draws it
             // (of the file at path, not the open model, when given)
    // worker -> GUI
    DiagramModel, // GraphModel
    // GUI -> worker
    Activations, // ActivationRequest
    Optimize,    // OptimizeRequest
    Diff,        // {path, op_libraries}: the loaded model against another archive
    // worker -> GUI
    ActivationReport, // ActivationReport
    OptimizeResult,   // OptimizeResult
    ArchiveDiff,      // ArchiveDiff
    // GUI -> worker: a source of frames for a live demo, decoded here (untrusted files).
    SourceOpen, // {source: "camera:N" | folder | video file}
    // {source, index, live, restart, run: RunRequest}: read a frame, run the model on it. The
    // source is opened again when it is not the open one (a new worker after a crash).
    SourceFrame,
    // worker -> GUI
    SourceInfo,  // SourceInfo
    FrameResult, // FrameResult (the decoded frame as raw bytes, the run or its error)
};
constexpr MessageType kLastMessageType = MessageType::FrameResult;

struct Message {
    MessageType type = MessageType::Shutdown;
    quint64 id = 0; // a reply carries the id of its request
    QCborMap body;

    bool operator==(const Message& other) const {
        return type == other.type && id == other.id && body == other.body;
    }
};

QByteArray encode(const Message& message);
// Refuses a wrong version, an unknown type, or bytes that are not one well-formed CBOR map.
Expected<Message> decode(const QByteArray& bytes);

QByteArray frame(const QByteArray& payload);

// Collects frames from a stream that arrives in pieces.
class FrameReader {
public:
    void append(const QByteArray& bytes) { buffer_.append(bytes); }
    // Part of a frame has arrived, the rest not yet.
    bool inFrame() const;
    // The next whole frame's payload; nullopt until one has arrived. After an oversized length
    // prefix, failed() is true and nothing more is read.
    std::optional<QByteArray> next();
    bool failed() const { return failed_; }

private:
    QByteArray buffer_;
    bool failed_ = false;
};

// ---- Bodies: the engine's value structs <-> CBOR ----
QCborMap toCbor(const ProbeResult& value);
QCborMap toCbor(const ModelInfo& value);
QCborMap toCbor(const RunRequest& value);
QCborMap toCbor(const RunResult& value);
QCborMap toCbor(const Error& value);
QCborMap toCbor(const OutputValue& value);
QCborMap toCbor(const DeviceInfo& value);
QCborMap toCbor(const FileFormatPatterns& value);
QCborMap toCbor(const GraphModel& value);
QCborMap toCbor(const ActivationRequest& value);
QCborMap toCbor(const ActivationReport& value);
QCborMap toCbor(const OptimizeRequest& value);
QCborMap toCbor(const OptimizeResult& value);
QCborMap toCbor(const ArchiveDiff& value);
QCborMap toCbor(const SourceInfo& value);
QCborMap toCbor(const FrameResult& value);

ProbeResult probeResultFromCbor(const QCborMap& map);
ModelInfo modelInfoFromCbor(const QCborMap& map);
RunRequest runRequestFromCbor(const QCborMap& map);
RunResult runResultFromCbor(const QCborMap& map);
Error errorFromCbor(const QCborMap& map);
OutputValue outputFromCbor(const QCborMap& map);
DeviceInfo deviceFromCbor(const QCborMap& map);
FileFormatPatterns fileFormatFromCbor(const QCborMap& map);
GraphModel graphModelFromCbor(const QCborMap& map);
ActivationRequest activationRequestFromCbor(const QCborMap& map);
ActivationReport activationReportFromCbor(const QCborMap& map);
OptimizeRequest optimizeRequestFromCbor(const QCborMap& map);
OptimizeResult optimizeResultFromCbor(const QCborMap& map);
ArchiveDiff archiveDiffFromCbor(const QCborMap& map);
SourceInfo sourceInfoFromCbor(const QCborMap& map);
// A frame whose bytes do not match its width and height comes back without them.
FrameResult frameResultFromCbor(const QCborMap& map);

// A message of the given type with a body, for brevity at call sites.
Message make(MessageType type, quint64 id, QCborMap body = {});

} // namespace scriptscope::protocol
