// The XNNPACK delegate reader (xnnpack_graph.h): runtime_schema.fbs's tables walked by field
// number.
#include "xnnpack_graph.h"

#include "flatbuffer_walk.h"

#include <format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>

namespace scriptscope {

namespace {

using namespace flatbuffer;

// How a node's table lays out its value ids and parameters (the schema's shared node tables).
enum class Layout {
    Unary,     // _XNNNode1x1: input, output, flags
    Binary,    // _XNNNode2x1: input1, input2, output, flags
    Fully,     // XNNFullyConnected: input1, filter, bias, output, flags
    Conv,      // _XNNNodeConv: paddings, kernel, subsampling, dilation, groups, ..., ids
    Pool,      // _XNNPooling2D
    Transpose, // XNNStaticTranspose: num_dims, perm, input, output
    Resize,    // XNNStaticResizeBilinear2D: new_height, new_width, input, output
    Pad,       // XNNStaticConstantPad: pre, post, value, input, output
    Cat,       // _XNNCat: axis, input1..4, output, flags, input5
    Elu,       // XNNELU: alpha, input, output
    Reshape,   // XNNStaticReshape: num_dims, new_shape, input, output
    ArgMax,    // XNNArgMaxPooling2d: paddings, pooling, input, value and index outputs
    Slice,     // XNNStaticSlice: num_dims, offsets, sizes, input, output
    Attention, // XNNScaledDotProductAttention: query, key, value, scale, mask, output
    Leaky,     // XNNLeakyReLU: negative_slope, input, output
};

struct NodeKind {
    const char* name;
    Layout layout;
};

// XNodeUnion's members in order: type 1 is the first.
constexpr NodeKind kNodeKinds[] = {
    {"Add", Layout::Binary},
    {"FullyConnected", Layout::Fully},
    {"Softmax", Layout::Unary},
    {"Sigmoid", Layout::Unary},
    {"StaticTranspose", Layout::Transpose},
    {"Clamp", Layout::Unary},
    {"Conv2d", Layout::Conv},
    {"Div", Layout::Binary},
    {"StaticResizeBilinear2D", Layout::Resize},
    {"StaticConstantPad", Layout::Pad},
    {"AvgPooling2d", Layout::Pool},
    {"Minimum", Layout::Binary},
    {"DepthwiseConv2d", Layout::Conv},
    {"MaxPooling2d", Layout::Pool},
    {"Multiply", Layout::Binary},
    {"Subtract", Layout::Binary},
    {"Floor", Layout::Unary},
    {"Convert", Layout::Unary},
    {"GlobalAvgPooling2d", Layout::Unary},
    {"StaticReshape", Layout::Reshape},
    {"ArgMaxPooling2d", Layout::ArgMax},
    {"SquareRoot", Layout::Unary},
    {"Ceiling", Layout::Unary},
    {"Hardswish", Layout::Unary},
    {"LeakyReLU", Layout::Leaky},
    {"Maximum", Layout::Binary},
    {"Negate", Layout::Unary},
    {"Square", Layout::Unary},
    {"ELU", Layout::Elu},
    {"Abs", Layout::Unary},
    {"PReLU", Layout::Binary},
    {"Concatenate2", Layout::Cat},
    {"Concatenate3", Layout::Cat},
    {"Concatenate4", Layout::Cat},
    {"StaticSlice", Layout::Slice},
    {"ScaledDotProductAttention", Layout::Attention},
    {"BatchMatrixMultiply", Layout::Binary},
    {"Concatenate5", Layout::Cat},
    {"ConvTranspose2d", Layout::Conv},
    {"ReciprocalSquareRoot", Layout::Unary},
    {"Log", Layout::Unary},
    {"Gelu", Layout::Unary},
    {"Tanh", Layout::Unary},
    {"Exp", Layout::Unary},
    {"Sin", Layout::Unary},
    {"Copy", Layout::Unary},
    {"Cos", Layout::Unary},
};

// XNNDatatype, by value: XNNPACK's name, the dtype Python would print, and bits per element.
struct Datatype {
    const char* xnn;
    const char* dtype;
    int bits;
};
constexpr Datatype kDatatypes[] = {
    {"invalid", "unknown", 0}, {"fp32", "float32", 32},   {"fp16", "float16", 16},
    {"qint8", "qint8", 8},     {"quint8", "quint8", 8},   {"qint32", "qint32", 32},
    {"qcint8", "qint8", 8},    {"qcint32", "qint32", 32}, {"qcint4", "qint4", 4},
    {"qdint8", "qint8", 8},    {"qbint4", "qint4", 4},    {"qpint8", "qint8", 8},
    {"int32", "int32", 32},    {"pfp32", "float32", 32},  {"bf16", "bfloat16", 16},
};

const Datatype& datatypeOf(int datatype) {
    return datatype >= 0 && datatype < static_cast<int>(std::size(kDatatypes))
               ? kDatatypes[datatype]
               : kDatatypes[0];
}

std::string joined(const std::vector<uint32_t>& items, const char* separator) {
    std::string text;
    for (size_t i = 0; i < items.size(); ++i) {
        text += (i ? separator : "") + std::to_string(items[i]);
    }
    return text;
}

std::string number(float value) {
    return formatPythonFloat(value);
}

// The ids at `ids` of table `t` that name a value. A field left out holds the schema's default,
// 0, which is a value's id like any other; no value is XNNPACK's invalid id (a missing bias).
std::vector<uint32_t> idsAt(const Table& t, std::initializer_list<int> ids) {
    std::vector<uint32_t> values;
    for (const int id : ids) {
        const uint32_t value = t.scalar<uint32_t>(id, 0);
        if (value != kXnnInvalidValueId) {
            values.push_back(value);
        }
    }
    return values;
}

std::string windowText(const Table& t, const char* window, int first) {
    return std::string(window) + " " + std::to_string(t.scalar<uint32_t>(first + 4)) + "x" +
           std::to_string(t.scalar<uint32_t>(first + 5)) + ", stride " +
           std::to_string(t.scalar<uint32_t>(first + 6)) + "x" +
           std::to_string(t.scalar<uint32_t>(first + 7)) + ", padding " +
           std::to_string(t.scalar<uint32_t>(first)) + "," +
           std::to_string(t.scalar<uint32_t>(first + 1)) + "," +
           std::to_string(t.scalar<uint32_t>(first + 2)) + "," +
           std::to_string(t.scalar<uint32_t>(first + 3));
}

void readNodeTable(const Table& t, Layout layout, const std::string& kind, XnnNode& node) {
    switch (layout) {
    case Layout::Unary:
        node.inputs = idsAt(t, {0});
        node.outputs = idsAt(t, {1});
        break;
    case Layout::Binary:
        node.inputs = idsAt(t, {0, 1});
        node.outputs = idsAt(t, {2});
        break;
    case Layout::Fully:
        node.inputs = idsAt(t, {0, 1, 2});
        node.outputs = idsAt(t, {3});
        break;
    case Layout::Conv:
        node.inputs = idsAt(t, {15, 16, 17});
        node.outputs = idsAt(t, {18});
        node.parameters = windowText(t, "kernel", 0) + ", dilation " +
                          std::to_string(t.scalar<uint32_t>(8)) + "x" +
                          std::to_string(t.scalar<uint32_t>(9)) + ", groups " +
                          std::to_string(t.scalar<uint32_t>(12)) + " of " +
                          std::to_string(t.scalar<uint32_t>(10)) + " to " +
                          std::to_string(t.scalar<uint32_t>(11)) + " channels";
        break;
    case Layout::Pool:
        node.inputs = idsAt(t, {10});
        node.outputs = idsAt(t, {11});
        node.parameters = windowText(t, "pooling", 0);
        break;
    case Layout::Transpose:
        node.inputs = idsAt(t, {2});
        node.outputs = idsAt(t, {3});
        node.parameters = "perm [" + joined(t.scalars<uint32_t>(1, "a permutation"), ", ") + "]";
        break;
    case Layout::Resize:
        node.inputs = idsAt(t, {2});
        node.outputs = idsAt(t, {3});
        node.parameters = "to " + std::to_string(t.scalar<uint32_t>(0)) + "x" +
                          std::to_string(t.scalar<uint32_t>(1));
        break;
    case Layout::Pad:
        node.inputs = idsAt(t, {3});
        node.outputs = idsAt(t, {4});
        node.parameters = "before [" + joined(t.scalars<uint32_t>(0, "paddings"), ", ") +
                          "], after [" + joined(t.scalars<uint32_t>(1, "paddings"), ", ") +
                          "], value " + number(t.scalar<float>(2));
        break;
    case Layout::Cat: {
        const int count = kind.back() - '0'; // Concatenate2 .. Concatenate5
        const std::vector<int> fields = {1, 2, 3, 4, 7};
        for (int i = 0; i < count && i < static_cast<int>(fields.size()); ++i) {
            const std::vector<uint32_t> one = idsAt(t, {fields[static_cast<size_t>(i)]});
            node.inputs.insert(node.inputs.end(), one.begin(), one.end());
        }
        node.outputs = idsAt(t, {5});
        node.parameters = "axis " + std::to_string(t.scalar<uint32_t>(0));
        break;
    }
    case Layout::Elu:
    case Layout::Leaky:
        node.inputs = idsAt(t, {1});
        node.outputs = idsAt(t, {2});
        node.parameters =
            std::string(layout == Layout::Elu ? "alpha " : "slope ") + number(t.scalar<float>(0));
        break;
    case Layout::Reshape:
        node.inputs = idsAt(t, {2});
        node.outputs = idsAt(t, {3});
        node.parameters = "to [" + joined(t.scalars<uint32_t>(1, "a shape"), ", ") + "]";
        break;
    case Layout::ArgMax:
        node.inputs = idsAt(t, {6});
        node.outputs = idsAt(t, {7, 8});
        node.parameters = "pooling " + std::to_string(t.scalar<uint32_t>(4)) + "x" +
                          std::to_string(t.scalar<uint32_t>(5));
        break;
    case Layout::Slice:
        node.inputs = idsAt(t, {3});
        node.outputs = idsAt(t, {4});
        node.parameters = "offsets [" + joined(t.scalars<uint32_t>(1, "offsets"), ", ") +
                          "], sizes [" + joined(t.scalars<uint32_t>(2, "sizes"), ", ") + "]";
        break;
    case Layout::Attention:
        node.inputs = idsAt(t, {0, 1, 2, 3, 4});
        node.outputs = idsAt(t, {5});
        break;
    }
}

XnnNode readNode(const Table& x) {
    XnnNode node;
    const auto type = x.scalar<uint8_t>(0);
    if (type == 0 || type > std::size(kNodeKinds)) {
        refuse("a node of unknown type " + std::to_string(type) + at(x.position()) +
               " (this reader knows " + std::to_string(std::size(kNodeKinds)) + ")");
    }
    const NodeKind& kind = kNodeKinds[type - 1];
    node.kind = kind.name;
    if (const auto t = x.table(1, "a node")) {
        readNodeTable(*t, kind.layout, node.kind, node);
    }
    node.debugHandle = x.scalar<uint32_t>(2);
    if (const auto clamp = x.table(3, "a node's output range")) {
        node.clamped = true;
        node.min = clamp->scalar<float>(0);
        node.max = clamp->scalar<float>(1);
    }
    return node;
}

XnnQuantization readQuantization(uint8_t type, const Table& q) {
    XnnQuantization quantization;
    constexpr size_t kMostScales = 4096;
    const auto scalesOf = [&](int id) {
        std::vector<float> scales = q.scalars<float>(id, "scales");
        quantization.scaleCount = static_cast<uint32_t>(scales.size());
        if (scales.size() > kMostScales) {
            scales.resize(kMostScales);
        }
        quantization.scales = std::move(scales);
    };
    switch (type) {
    case 1: // PerChannelQuant: scale, channel_dim, scale_buffer_idx, num_scales
        quantization.kind = XnnQuantization::Kind::PerChannel;
        scalesOf(0);
        quantization.channelDim = q.scalar<int32_t>(1);
        quantization.scaleCount = std::max(quantization.scaleCount, q.scalar<uint32_t>(3));
        break;
    case 2: // PerTensorQuant: scale, zero_point
        quantization.kind = XnnQuantization::Kind::PerTensor;
        quantization.scale = q.scalar<float>(0);
        quantization.zeroPoint = q.scalar<int32_t>(1);
        break;
    case 3: // PerTokenDynamicQuant: num_nonbatch_dims
        quantization.kind = XnnQuantization::Kind::PerTokenDynamic;
        break;
    case 4: // PerChannelGroupQuant: scale, channel_dim, group_size, (bf16), buffer, num_scales
        quantization.kind = XnnQuantization::Kind::PerChannelGroup;
        scalesOf(0);
        quantization.channelDim = q.scalar<int32_t>(1);
        quantization.groupSize = q.scalar<int32_t>(2);
        quantization.scaleCount = std::max(quantization.scaleCount, q.scalar<uint32_t>(5));
        break;
    default:
        refuse("a quantization of unknown type " + std::to_string(type) + at(q.position()));
    }
    return quantization;
}

// XNNTensorValue: datatype, num_dims, dims, constant_buffer_idx, external_id, flags, id_out.
void readTensorValue(const Table& t, XnnValue& value) {
    value.datatype = t.scalar<int16_t>(0);
    value.dims = t.scalars<uint32_t>(2, "a value's dims");
    value.constant = t.scalar<uint32_t>(3);
    value.externalId = t.scalar<uint32_t>(4);
    value.flags = t.scalar<uint32_t>(5);
    value.id = t.scalar<uint32_t>(6);
}

XnnValue readValue(const Table& x) {
    XnnValue value;
    const auto type = x.scalar<uint8_t>(0);
    const auto t = x.table(1, "a value");
    if (!t) {
        refuse("a value without its table" + at(x.position()));
    }
    if (type == 1) {
        readTensorValue(*t, value);
    } else if (type == 2) { // XNNQuantizedTensorValue: tensor_value, quant_params
        if (const auto tensor = t->table(0, "a quantized value's tensor")) {
            readTensorValue(*tensor, value);
        }
        const auto quantType = t->scalar<uint8_t>(1);
        if (const auto q = t->table(2, "a value's quantization")) {
            value.quantization = readQuantization(quantType, *q);
        }
    } else {
        refuse("a value of unknown type " + std::to_string(type) + at(x.position()));
    }
    return value;
}

// The element count of `dims`, saturating (a hostile blob may claim any).
uint64_t elements(const std::vector<uint32_t>& dims) {
    uint64_t count = 1;
    for (const uint32_t dim : dims) {
        if (dim && count > UINT64_MAX / dim) {
            return UINT64_MAX;
        }
        count *= dim;
    }
    return count;
}

XnnGraph readGraph(std::string_view bytes) {
    Buffer buffer(bytes, "the XNNPACK graph");
    const uint32_t root = buffer.read<uint32_t>(0, "the root offset");
    if (root < 8 || root >= buffer.size()) {
        refuse("the root offset points to byte " + std::to_string(root) +
               ", outside the XNNPACK graph (" + std::to_string(buffer.size()) + " bytes)");
    }
    const Table top(buffer, root, {}, "the XNNPACK graph");
    XnnGraph graph;
    graph.flatbufferBytes = bytes.size();
    graph.version = top.string(0, "the graph's version");
    top.tables(1, "a node", [&](const Table& x) { graph.nodes.push_back(readNode(x)); });
    top.tables(2, "a value", [&](const Table& x) { graph.values.push_back(readValue(x)); });
    graph.inputs = top.scalars<uint32_t>(4, "the graph's inputs");
    graph.outputs = top.scalars<uint32_t>(5, "the graph's outputs");
    // Constants: constant_data (offsets into the blob's constant data, or a named key into the
    // program's named data), or the older inline constant_buffer.
    std::vector<std::pair<uint64_t, std::string>> constantData;
    top.tables(8, "a constant's place", [&](const Table& c) {
        constantData.emplace_back(c.scalar<uint64_t>(1), c.string(2, "a constant's key"));
    });
    std::vector<uint64_t> buffers;
    top.tables(6, "a constant buffer",
               [&](const Table& b) { buffers.push_back(b.byteCount(0, "a constant's bytes")); });
    for (XnnValue& value : graph.values) {
        if (!value.constant) {
            continue;
        }
        if (value.constant < constantData.size()) {
            value.constantBytes = constantData[value.constant].first;
            value.namedKey = constantData[value.constant].second;
        } else if (value.constant < buffers.size()) {
            value.constantBytes = buffers[value.constant];
        }
        if (!value.constantBytes) { // kept elsewhere (named data): its size from its shape
            const uint64_t count = elements(value.dims);
            const int bits = datatypeOf(value.datatype).bits;
            value.constantBytes = count == UINT64_MAX ? 0 : (count * bits + 7) / 8;
        }
    }
    return graph;
}

bool identifiedGraph(std::string_view bytes) {
    return bytes.size() >= 8 && (bytes.substr(4, 4) == "XN00" || bytes.substr(4, 4) == "XN01");
}

constexpr size_t kHeaderBytes = 30;

struct Header {
    uint32_t flatbufferOffset = 0, flatbufferSize = 0, constantOffset = 0;
    uint64_t constantSize = 0;
};

// The header, checked against the blob's size.
Header readHeader(std::string_view bytes, uint64_t blobSize) {
    Header header;
    uint16_t length = 0;
    std::memcpy(&length, bytes.data() + 8, 2);
    std::memcpy(&header.flatbufferOffset, bytes.data() + 10, 4);
    std::memcpy(&header.flatbufferSize, bytes.data() + 14, 4);
    std::memcpy(&header.constantOffset, bytes.data() + 18, 4);
    std::memcpy(&header.constantSize, bytes.data() + 22, 8);
    if (length < kHeaderBytes) {
        refuse("the XNNPACK header says it is " + std::to_string(length) + " bytes, fewer than " +
               std::to_string(kHeaderBytes));
    }
    if (header.flatbufferSize == 0 || header.flatbufferOffset < length ||
        uint64_t{header.flatbufferOffset} + header.flatbufferSize > blobSize) {
        refuse("the XNNPACK header puts the graph at bytes " +
               std::to_string(header.flatbufferOffset) + " to " +
               std::to_string(uint64_t{header.flatbufferOffset} + header.flatbufferSize) +
               ", outside the blob (" + std::to_string(blobSize) + " bytes)");
    }
    if (header.constantOffset < uint64_t{header.flatbufferOffset} + header.flatbufferSize ||
        header.constantOffset + header.constantSize > blobSize) {
        refuse("the XNNPACK header puts the constant data at bytes " +
               std::to_string(header.constantOffset) + " to " +
               std::to_string(header.constantOffset + header.constantSize) +
               ", outside the blob (" + std::to_string(blobSize) + " bytes) or over the graph");
    }
    return header;
}

Expected<XnnGraph> caught(std::string_view graphBytes, uint64_t constantSize) {
    try {
        if (!identifiedGraph(graphBytes)) {
            refuse("the XNNPACK graph has no identifier XN00 or XN01 at byte 4");
        }
        XnnGraph graph = readGraph(graphBytes);
        graph.constantDataBytes = constantSize;
        return graph;
    } catch (const Refusal& refusal) {
        return Error{ErrorKind::Format, refusal.message};
    }
}

} // namespace

const XnnValue* XnnGraph::value(uint32_t id) const {
    for (const XnnValue& v : values) {
        if (v.id == id) {
            return &v;
        }
    }
    return nullptr;
}

Expected<XnnGraph> readXnnpackBlob(std::string_view bytes) {
    if (bytes.size() >= kHeaderBytes && bytes.substr(4, 4) == "XH00") {
        Header header;
        try {
            header = readHeader(bytes, bytes.size());
        } catch (const Refusal& refusal) {
            return Error{ErrorKind::Format, refusal.message};
        }
        return caught(bytes.substr(header.flatbufferOffset, header.flatbufferSize),
                      header.constantSize);
    }
    return caught(bytes, 0);
}

Expected<XnnGraph> readXnnpackBlobAt(const std::string& path, uint64_t offset, uint64_t size) {
    constexpr uint64_t kMostGraphBytes = 256ull << 20; // the FlatBuffer; constants are not read
    std::ifstream in(path, std::ios::binary);
    const auto readAt = [&](uint64_t at, uint64_t count) {
        std::string bytes(count, '\0');
        in.seekg(static_cast<std::streamoff>(at));
        in.read(bytes.data(), static_cast<std::streamsize>(count));
        bytes.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
        return bytes;
    };
    if (!in) {
        return Error{ErrorKind::File, "cannot open '" + path + "'"};
    }
    const std::string head = readAt(offset, std::min<uint64_t>(size, kHeaderBytes));
    if (head.size() >= kHeaderBytes && head.substr(4, 4) == "XH00") {
        Header header;
        try {
            header = readHeader(head, size);
        } catch (const Refusal& refusal) {
            return Error{ErrorKind::Format, refusal.message};
        }
        if (header.flatbufferSize > kMostGraphBytes) {
            return Error{ErrorKind::Format, "its XNNPACK graph is " +
                                                formatBytes(header.flatbufferSize) +
                                                ", more than this reader reads"};
        }
        const std::string graph = readAt(offset + header.flatbufferOffset, header.flatbufferSize);
        if (graph.size() != header.flatbufferSize) {
            return Error{ErrorKind::Format, "the file ends inside the delegate's XNNPACK graph"};
        }
        return caught(graph, header.constantSize);
    }
    if (size > kMostGraphBytes) {
        return Error{ErrorKind::Format,
                     "its XNNPACK blob is " + formatBytes(size) + ", more than this reader reads"};
    }
    const std::string blob = readAt(offset, size);
    if (blob.size() != size) {
        return Error{ErrorKind::Format, "the file ends inside the delegate's blob"};
    }
    return caught(blob, 0);
}

std::string xnnDtypeName(int datatype) {
    return datatypeOf(datatype).dtype;
}

std::string xnnDatatype(int datatype) {
    return datatypeOf(datatype).xnn;
}

std::vector<TensorInfo> xnnpackConstants(const XnnGraph& graph) {
    // Each constant named by the first node that reads it: "conv2d_0.filter".
    std::map<uint32_t, std::string> names;
    std::map<std::string, int> seen;
    for (const XnnNode& node : graph.nodes) {
        std::string base = node.kind;
        std::transform(base.begin(), base.end(), base.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        const int index = seen[base]++;
        const char* roles[] = {"input", "filter", "bias", "input3", "input4"};
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const XnnValue* value = graph.value(node.inputs[i]);
            if (value && value->constant && !names.count(value->id)) {
                const std::string role =
                    (node.kind == "Conv2d" || node.kind == "DepthwiseConv2d" ||
                     node.kind == "ConvTranspose2d" || node.kind == "FullyConnected") &&
                            i < 3
                        ? roles[i]
                        : "input" + std::to_string(i);
                names[value->id] = base + "_" + std::to_string(index) + "." + role;
            }
        }
    }
    std::vector<TensorInfo> constants;
    for (const XnnValue& value : graph.values) {
        if (!value.constant) {
            continue;
        }
        TensorInfo t;
        const auto name = names.find(value.id);
        t.name = name != names.end() ? name->second : "v" + std::to_string(value.id);
        t.shape.assign(value.dims.begin(), value.dims.end());
        t.dtype = xnnDtypeName(value.datatype);
        t.device = "cpu"; // XNNPACK runs on the CPU; its own datatype is in the graph text
        t.bytes = value.constantBytes;
        const XnnQuantization& q = value.quantization;
        switch (q.kind) {
        case XnnQuantization::Kind::PerTensor:
            t.qscheme = "per_tensor_affine";
            t.scale = q.scale;
            t.zeroPoint = q.zeroPoint;
            break;
        case XnnQuantization::Kind::PerChannel:
        case XnnQuantization::Kind::PerChannelGroup:
            t.qscheme = q.kind == XnnQuantization::Kind::PerChannel ? "per_channel_symmetric"
                                                                    : "per_channel_group";
            t.scales.assign(q.scales.begin(), q.scales.end());
            t.axis = q.channelDim;
            break;
        default:
            break;
        }
        constants.push_back(std::move(t));
    }
    return constants;
}

std::string xnnpackNodeCounts(const XnnGraph& graph) {
    std::map<std::string, int> counts;
    for (const XnnNode& node : graph.nodes) {
        ++counts[node.kind];
    }
    std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string text;
    for (const auto& [kind, count] : sorted) {
        text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + kind;
    }
    return text;
}

std::string xnnpackGraphText(const XnnGraph& graph, const std::string& indent) {
    const auto name = [](uint32_t id) { return "%" + std::to_string(id); };
    std::string text;
    for (const XnnValue& value : graph.values) {
        text += indent + name(value.id) + " : " + xnnDatatype(value.datatype) + "[" +
                joined(value.dims, ", ") + "]";
        if (value.constant) {
            // Named data keys are content hashes: the first 12 digits tell them apart.
            const std::string key = value.namedKey.size() > 12
                                        ? value.namedKey.substr(0, 12) + "\u2026"
                                        : value.namedKey;
            text += " constant " + formatBytes(value.constantBytes) +
                    (key.empty() ? "" : " (named data " + key + ")");
        }
        if (value.isInput()) {
            text += " input " + std::to_string(value.externalId);
        }
        if (value.isOutput()) {
            text += " output " + std::to_string(value.externalId);
        }
        const XnnQuantization& q = value.quantization;
        if (q.kind == XnnQuantization::Kind::PerTensor) {
            text += " scale " + number(q.scale) + " zero point " + std::to_string(q.zeroPoint);
        } else if (q.kind == XnnQuantization::Kind::PerChannel) {
            text += " " + std::to_string(q.scaleCount) + " scales along dim " +
                    std::to_string(q.channelDim);
        } else if (q.kind == XnnQuantization::Kind::PerChannelGroup) {
            text += " " + std::to_string(q.scaleCount) + " scales, groups of " +
                    std::to_string(q.groupSize);
        } else if (q.kind == XnnQuantization::Kind::PerTokenDynamic) {
            text += " quantized per token as it runs";
        }
        text += "\n";
    }
    for (const XnnNode& node : graph.nodes) {
        std::vector<std::string> outputs, inputs;
        for (const uint32_t id : node.outputs) {
            outputs.push_back(name(id));
        }
        for (const uint32_t id : node.inputs) {
            inputs.push_back(name(id));
        }
        std::string line = indent;
        for (size_t i = 0; i < outputs.size(); ++i) {
            line += (i ? ", " : "") + outputs[i];
        }
        line += " = " + node.kind + "(";
        for (size_t i = 0; i < inputs.size(); ++i) {
            line += (i ? ", " : "") + inputs[i];
        }
        line += ")";
        if (!node.parameters.empty()) {
            line += "  " + node.parameters;
        }
        if (node.clamped) {
            line += "  [clamp " + number(node.min) + ", " + number(node.max) + "]";
        }
        if (node.debugHandle) {
            line += "  # debug handle " + std::to_string(node.debugHandle);
        }
        text += line + "\n";
    }
    return text;
}

} // namespace scriptscope
