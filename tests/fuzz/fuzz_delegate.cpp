// libFuzzer: what reads a delegate's blob, hostile input inside a .pte: the XNNPACK graph reader
// (its header, its FlatBuffer) and the views' texts and constants of what it read. Seeded with
// .pte files, whose XNNPACK blobs are found by their "XH00" header and read where they start.
#include <xnnpack_graph.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

void readBlob(std::string_view bytes) {
    if (const auto graph = scriptscope::readXnnpackBlob(bytes)) {
        (void)scriptscope::xnnpackConstants(*graph);
        (void)scriptscope::xnnpackNodeCounts(*graph);
        (void)scriptscope::xnnpackGraphText(*graph, "  ");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    readBlob(bytes);
    // A program's blobs, where they start (at most a few: the budget is the fuzzer's time).
    int blobs = 0;
    for (size_t at = bytes.find("XH00"); at != std::string_view::npos && blobs < 4;
         at = bytes.find("XH00", at + 1)) {
        if (at >= 4) {
            readBlob(bytes.substr(at - 4));
            ++blobs;
        }
    }
    return 0;
}
