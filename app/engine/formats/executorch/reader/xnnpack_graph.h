// What is inside an XNNPACK delegate: the processed blob ExecuTorch's XNNPACK backend writes
// (backends/xnnpack/serialization/ in the executorch wheel). A header, "XH00" at byte 4, says where
// the XNNGraph FlatBuffer (identifier "XN00" or "XN01", runtime_schema.fbs) and the constant data
// lie; older blobs are the FlatBuffer alone. The graph is read with the bounded walk of
// flatbuffer_walk.h, as the .pte is: a blob is hostile input. The constants' bytes are never read,
// only their sizes and where they are. No ExecuTorch, no LibTorch.
#pragma once

#include <error.h>
#include <model_info.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scriptscope {

// XNNPACK's quantization of a value: none, per tensor (scale, zero point), per channel (a scale
// per channel of channelDim), per channel in groups of groupSize, or per token, computed as it
// runs.
struct XnnQuantization {
    enum class Kind { None, PerTensor, PerChannel, PerChannelGroup, PerTokenDynamic };
    Kind kind = Kind::None;
    float scale = 0;
    int32_t zeroPoint = 0;
    int32_t channelDim = 0;
    int32_t groupSize = 0;
    uint32_t scaleCount = 0;   // per channel (or group): how many scales
    std::vector<float> scales; // the first of them the blob holds inline (at most 4096)
};

struct XnnValue {
    uint32_t id = 0;            // id_out: what the nodes call it by
    int datatype = 0;           // XNNDatatype: 1 fp32, 3 qint8, 6 qcint8, 8 qcint4, ...
    std::vector<uint32_t> dims; //
    uint32_t constant = 0;      // constant_buffer_idx: 0 when it is no constant
    uint32_t externalId = 0;    // its place among the delegate call's arguments, when external
    uint32_t flags = 0;         // 1: an external input, 2: an external output
    XnnQuantization quantization;
    uint64_t constantBytes = 0; // a constant's bytes, from where the blob says they are
    std::string namedKey;       // a constant kept in the program's named data, by this key

    bool isInput() const { return flags & 1u; }
    bool isOutput() const { return flags & 2u; }
};

struct XnnNode {
    std::string kind;              // the schema's name without "XNN": "Conv2d", "FullyConnected"
    std::vector<uint32_t> inputs;  // value ids, in the operator's order (input, filter, bias)
    std::vector<uint32_t> outputs; //
    std::string parameters;        // "kernel 3x3, stride 1x1, padding 1,1,1,1, groups 1"
    uint32_t debugHandle = 0;      // the export node it came from (an ETRecord's debug handle)
    bool clamped = false;          // a fused activation: the output clamped to [min, max]
    float min = 0, max = 0;
};

struct XnnGraph {
    std::string version;
    std::vector<XnnNode> nodes;
    std::vector<XnnValue> values;
    std::vector<uint32_t> inputs, outputs; // value ids of the delegate call's arguments
    uint64_t flatbufferBytes = 0;
    uint64_t constantDataBytes = 0; // the blob's constant data (0 for blobs without a header)

    const XnnValue* value(uint32_t id) const;
};

// XNNPACK's value ids that name no value (a convolution without bias).
constexpr uint32_t kXnnInvalidValueId = 0xffffffffu;

// The graph in a blob's bytes (its header and FlatBuffer; the constant data may be left off).
Expected<XnnGraph> readXnnpackBlob(std::string_view bytes);
// The blob of `size` bytes at `offset` in the file at `path`: its header and FlatBuffer only.
Expected<XnnGraph> readXnnpackBlobAt(const std::string& path, uint64_t offset, uint64_t size);

// The datatype as Python would name the tensor's dtype ("float32", "qint8", "qint4"), and
// XNNPACK's own ("fp32", "qcint8", "qcint4").
std::string xnnDtypeName(int datatype);
std::string xnnDatatype(int datatype);

// The delegate's constants as the tree lists parameters: "conv2d_0.filter", shape, dtype, bytes
// and quantization, named by the first node that reads each.
std::vector<TensorInfo> xnnpackConstants(const XnnGraph& graph);
// "3 Conv2d, 1 FullyConnected, 2 Clamp": the nodes by kind, most first.
std::string xnnpackNodeCounts(const XnnGraph& graph);
// The graph as text, one node a line ("%5 = Conv2d(%0, %1, %2)  kernel 3x3, ...  [clamp 0, inf]"),
// after its values.
std::string xnnpackGraphText(const XnnGraph& graph, const std::string& indent);

} // namespace scriptscope
