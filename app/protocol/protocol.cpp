// The envelope: a message's version, type, id and body, and the frames that carry it. The bodies
// tables are in model_cbor.cpp, run_cbor.cpp and numerics_cbor.cpp.
#include "protocol.h"

#include <QCborStreamReader>
#include <QCborValue>
#include <QtEndian>

namespace scriptscope::protocol {
namespace {

void put(QCborMap& map, const char* key, const QCborValue& value) {
    map.insert(QLatin1String(key), value);
}

} // namespace

QByteArray encode(const Message& message) {
    QCborMap map;
    put(map, "v", kVersion);
    put(map, "type", static_cast<int>(message.type));
    put(map, "id", qint64(message.id));
    put(map, "body", message.body);
    return map.toCborValue().toCbor();
}

Expected<Message> decode(const QByteArray& bytes) {
    QCborStreamReader reader(bytes);
    const QCborValue value = QCborValue::fromCbor(reader);
    if (reader.lastError() != QCborError::NoError) {
        return Error(ErrorKind::Internal,
                     "malformed message: " + reader.lastError().toString().toStdString());
    }
    if (reader.currentOffset() != bytes.size()) {
        return Error(ErrorKind::Internal, "malformed message: bytes after the message");
    }
    if (!value.isMap()) {
        return Error(ErrorKind::Internal, "malformed message: not a map");
    }
    const QCborMap map = value.toMap();
    const QCborValue version = map.value(QLatin1String("v"));
    if (!version.isInteger() || version.toInteger() != kVersion) {
        return Error(ErrorKind::Internal,
                     "protocol version " + std::to_string(version.toInteger()) +
                         " is not this program's version " + std::to_string(kVersion) +
                         ": the worker and the GUI come from different builds");
    }
    const QCborValue type = map.value(QLatin1String("type"));
    if (!type.isInteger() || type.toInteger() < static_cast<int>(MessageType::Probe) ||
        type.toInteger() > static_cast<int>(kLastMessageType)) {
        return Error(ErrorKind::Internal, "malformed message: unknown type");
    }
    const QCborValue id = map.value(QLatin1String("id"));
    const QCborValue body = map.value(QLatin1String("body"));
    if (!id.isInteger() || !body.isMap()) {
        return Error(ErrorKind::Internal, "malformed message: no id or body");
    }
    return Message{static_cast<MessageType>(type.toInteger()), static_cast<quint64>(id.toInteger()),
                   body.toMap()};
}

QByteArray frame(const QByteArray& payload) {
    QByteArray bytes(4, '\0');
    qToBigEndian(static_cast<quint32>(payload.size()), bytes.data());
    return bytes + payload;
}

bool FrameReader::inFrame() const {
    return !failed_ && !buffer_.isEmpty() &&
           (buffer_.size() < 4 ||
            buffer_.size() < 4 + qFromBigEndian<quint32>(buffer_.constData()));
}

std::optional<QByteArray> FrameReader::next() {
    if (failed_ || buffer_.size() < 4) {
        return std::nullopt;
    }
    const qint64 length = qFromBigEndian<quint32>(buffer_.constData());
    if (length > kMaxFrameBytes) {
        failed_ = true;
        return std::nullopt;
    }
    if (buffer_.size() < 4 + length) {
        return std::nullopt;
    }
    QByteArray payload = buffer_.mid(4, length);
    buffer_.remove(0, 4 + length);
    return payload;
}

Message make(MessageType type, quint64 id, QCborMap body) {
    return Message{type, id, std::move(body)};
}

} // namespace scriptscope::protocol
