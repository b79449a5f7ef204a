// libFuzzer: the GUI <-> worker protocol: framing, CBOR decoding and every message body's reader.
#include <protocol.h>

#include <cstddef>
#include <cstdint>

using namespace scriptscope::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    // As a stream of frames, in two pieces (a frame may arrive split)...
    FrameReader reader;
    reader.append(bytes.left(bytes.size() / 2));
    reader.append(bytes.mid(bytes.size() / 2));
    while (auto payload = reader.next()) {
        (void)decode(*payload);
    }
    // ...and as one payload, with every body reader applied to what decodes.
    const auto message = decode(bytes);
    if (message) {
        const QCborMap& body = message->body;
        (void)modelInfoFromCbor(body);
        (void)probeResultFromCbor(body);
        (void)runRequestFromCbor(body);
        (void)runResultFromCbor(body);
        (void)errorFromCbor(body);
        (void)outputFromCbor(body);
        (void)deviceFromCbor(body);
    }
    return 0;
}
