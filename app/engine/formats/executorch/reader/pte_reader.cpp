// The .pte reader (pte_reader.h): a FlatBuffer walked by hand against program.fbs's field
// numbers, every step bounded, and the program built from it.
#include "pte_reader.h"

#include "flatbuffer_walk.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>

namespace scriptscope {

namespace {

using namespace flatbuffer;

// program.fbs's field ids. A union takes two: its type, then its value.
namespace field {
// Program
constexpr int kVersion = 0, kExecutionPlan = 1, kConstantBuffer = 2, kDelegateData = 3,
              kSegments = 4, kConstantSegment = 5, kNamedData = 7;
// ExecutionPlan
constexpr int kName = 0, kContainerMeta = 1, kValues = 2, kInputs = 3, kOutputs = 4, kChains = 5,
              kOperators = 6, kDelegates = 7, kNonConstBufferSizes = 8;
// Tensor
constexpr int kScalarType = 0, kStorageOffset = 1, kSizes = 2, kDimOrder = 3, kRequiresGrad = 4,
              kDataBufferIdx = 5, kAllocationInfo = 6, kLayout = 7, kShapeDynamism = 8;
} // namespace field

PteTensor readTensor(const Table& t) {
    PteTensor tensor;
    tensor.scalarType = t.scalar<int8_t>(field::kScalarType);
    tensor.storageOffset = t.scalar<int32_t>(field::kStorageOffset);
    tensor.sizes = t.scalars<int32_t>(field::kSizes, "a tensor's sizes");
    tensor.dimOrder = t.scalars<uint8_t>(field::kDimOrder, "a tensor's dim order");
    tensor.requiresGrad = t.scalar<uint8_t>(field::kRequiresGrad) != 0;
    tensor.dataBuffer = t.scalar<uint32_t>(field::kDataBufferIdx);
    if (const auto allocation = t.table(field::kAllocationInfo, "an allocation")) {
        tensor.allocated = true;
        tensor.memoryId = allocation->scalar<uint32_t>(0);
        tensor.memoryOffset = allocation->scalar<uint32_t>(1) |
                              (static_cast<uint64_t>(allocation->scalar<uint32_t>(2)) << 32);
    }
    tensor.layout = t.scalar<int8_t>(field::kLayout);
    tensor.shapeDynamism = t.scalar<int8_t>(field::kShapeDynamism);
    return tensor;
}

PteValue readValue(const Table& t) {
    PteValue value;
    const auto type = t.scalar<uint8_t>(0);
    const auto body = t.table(1, "a value");
    if (type == 0 || !body) {
        return value; // an empty union: ExecuTorch reads it as None
    }
    if (type > static_cast<int>(PteValue::Kind::OptionalTensorList)) {
        refuse("a value of unknown type " + std::to_string(type) + at(t.position()));
    }
    value.kind = static_cast<PteValue::Kind>(type);
    switch (value.kind) {
    case PteValue::Kind::Int:
        value.intValue = body->scalar<int64_t>(0);
        break;
    case PteValue::Kind::Bool:
        value.boolValue = body->scalar<uint8_t>(0) != 0;
        break;
    case PteValue::Kind::Double:
        value.doubleValue = body->scalar<double>(0);
        break;
    case PteValue::Kind::Tensor:
        value.tensor = readTensor(*body);
        break;
    case PteValue::Kind::String:
        value.stringValue = body->string(0, "a string value");
        break;
    case PteValue::Kind::IntList:
        value.items = body->scalars<int64_t>(0, "an int list");
        break;
    case PteValue::Kind::DoubleList:
        value.doubles = body->scalars<double>(0, "a double list");
        break;
    case PteValue::Kind::BoolList:
        for (const uint8_t b : body->scalars<uint8_t>(0, "a bool list")) {
            value.bools.push_back(b != 0);
        }
        break;
    case PteValue::Kind::TensorList:
    case PteValue::Kind::OptionalTensorList:
        for (const int32_t i : body->scalars<int32_t>(0, "a tensor list")) {
            value.items.push_back(i);
        }
        break;
    default:
        break;
    }
    return value;
}

PteInstruction readInstruction(const Table& t) {
    PteInstruction instruction;
    const auto type = t.scalar<uint8_t>(0);
    const auto body = t.table(1, "an instruction's arguments");
    if (type == 0 || !body) {
        refuse("an instruction without arguments" + at(t.position()));
    }
    if (type > static_cast<int>(PteInstruction::Kind::Free)) {
        refuse("an instruction of unknown type " + std::to_string(type) + at(t.position()));
    }
    instruction.kind = static_cast<PteInstruction::Kind>(type);
    instruction.index = body->scalar<int32_t>(0);
    switch (instruction.kind) {
    case PteInstruction::Kind::Kernel:
    case PteInstruction::Kind::Delegate:
        instruction.args = body->scalars<int32_t>(1, "a call's arguments");
        break;
    case PteInstruction::Kind::Move:
    case PteInstruction::Kind::JumpFalse:
        instruction.target = body->scalar<int32_t>(1);
        break;
    default:
        break;
    }
    return instruction;
}

// An inline blob's size and where its bytes start in the program.
struct InlineBlob {
    uint64_t size = 0;
    uint64_t offset = 0;
};

PtePlan readPlan(const Table& t, const std::vector<InlineBlob>& inlineBlobs,
                 const std::vector<PteSegment>& segments, uint64_t segmentBase) {
    PtePlan plan;
    plan.name = t.string(field::kName, "a method's name");
    if (const auto meta = t.table(field::kContainerMeta, "a method's container types")) {
        plan.encodedInputs = meta->string(0, "an input spec");
        plan.encodedOutputs = meta->string(1, "an output spec");
    }
    t.tables(field::kValues, "a value",
             [&](const Table& v) { plan.values.push_back(readValue(v)); });
    plan.inputs = t.scalars<int32_t>(field::kInputs, "a method's inputs");
    plan.outputs = t.scalars<int32_t>(field::kOutputs, "a method's outputs");
    t.tables(field::kChains, "a chain", [&](const Table& c) {
        PteChain chain;
        chain.inputs = c.scalars<int32_t>(0, "a chain's inputs");
        chain.outputs = c.scalars<int32_t>(1, "a chain's outputs");
        c.tables(2, "an instruction",
                 [&](const Table& i) { chain.instructions.push_back(readInstruction(i)); });
        plan.chains.push_back(std::move(chain));
    });
    t.tables(field::kOperators, "an operator", [&](const Table& o) {
        plan.operators.push_back(
            {o.string(0, "an operator's name"), o.string(1, "an operator's overload")});
    });
    t.tables(field::kDelegates, "a delegate", [&](const Table& d) {
        PteDelegate delegate;
        delegate.id = d.string(0, "a delegate's id");
        if (const auto processed = d.table(1, "a delegate's blob")) {
            delegate.inSegment = processed->scalar<int8_t>(0) == 1;
            delegate.index = processed->scalar<uint32_t>(1);
        }
        if (delegate.inSegment && delegate.index < segments.size()) {
            delegate.blobBytes = segments[delegate.index].size;
            delegate.blobOffset = segmentBase + segments[delegate.index].offset;
        } else if (!delegate.inSegment && delegate.index < inlineBlobs.size()) {
            delegate.blobBytes = inlineBlobs[delegate.index].size;
            delegate.blobOffset = inlineBlobs[delegate.index].offset;
        }
        d.tables(2, "a compile spec", [&](const Table& s) {
            PteCompileSpec spec;
            spec.key = s.string(0, "a compile spec's key");
            spec.size = s.byteCount(1, "a compile spec's value");
            const std::string_view value = s.bytesOf(1, "a compile spec's value", 256);
            spec.value.assign(value.begin(), value.end());
            delegate.compileSpecs.push_back(std::move(spec));
        });
        plan.delegates.push_back(std::move(delegate));
    });
    plan.nonConstBufferSizes = t.scalars<int64_t>(field::kNonConstBufferSizes, "a memory plan");
    return plan;
}

// What ties the parts together: indices into the values, the operators, the delegates and the
// segments, each checked, so that the views can follow them without checking again.
void check(PteProgram& program) {
    for (const PtePlan& plan : program.plans) {
        const std::string where = "method '" + plan.name + "': ";
        const auto value = [&](int64_t index, const std::string& what) {
            if (index < 0 || static_cast<uint64_t>(index) >= plan.values.size()) {
                refuse(where + what + " refers to value " + std::to_string(index) + " of " +
                       std::to_string(plan.values.size()));
            }
        };
        for (const int32_t i : plan.inputs) {
            value(i, "an input");
        }
        for (const int32_t i : plan.outputs) {
            value(i, "an output");
        }
        for (size_t c = 0; c < plan.chains.size(); ++c) {
            const PteChain& chain = plan.chains[c];
            for (size_t n = 0; n < chain.instructions.size(); ++n) {
                const PteInstruction& instruction = chain.instructions[n];
                const std::string what =
                    "instruction " + std::to_string(n) + " of chain " + std::to_string(c);
                for (const int32_t arg : instruction.args) {
                    value(arg, what);
                }
                // An index into a table of `count`; `last` also allows `count` itself.
                const auto within = [&](int index, size_t count, const std::string& does,
                                        bool last = false) {
                    if (index < 0 || static_cast<size_t>(index) > count ||
                        (!last && static_cast<size_t>(index) == count)) {
                        refuse(where + what + does + std::to_string(index) + " of " +
                               std::to_string(count));
                    }
                };
                switch (instruction.kind) {
                case PteInstruction::Kind::Kernel:
                    within(instruction.index, plan.operators.size(), " calls operator ");
                    break;
                case PteInstruction::Kind::Delegate:
                    within(instruction.index, plan.delegates.size(), " calls delegate ");
                    break;
                case PteInstruction::Kind::Move:
                    value(instruction.index, what);
                    value(instruction.target, what);
                    break;
                case PteInstruction::Kind::JumpFalse:
                    value(instruction.index, what);
                    within(instruction.target, chain.instructions.size(), " jumps to instruction ",
                           true); // the end: the chain stops
                    break;
                case PteInstruction::Kind::Free:
                    value(instruction.index, what);
                    break;
                default:
                    break;
                }
            }
        }
        for (const PteValue& v : plan.values) {
            if (v.kind == PteValue::Kind::IntList) {
                for (const int64_t item : v.items) { // each a value that holds an int
                    value(item, "an int list");
                }
            }
            if (v.kind == PteValue::Kind::TensorList ||
                v.kind == PteValue::Kind::OptionalTensorList) {
                for (const int64_t item : v.items) {
                    // An optional list's missing tensors are -1.
                    if (!(item == -1 && v.kind == PteValue::Kind::OptionalTensorList)) {
                        value(item, "a tensor list");
                    }
                }
            }
            if (v.kind == PteValue::Kind::Tensor && v.tensor.allocated &&
                v.tensor.memoryId >= plan.nonConstBufferSizes.size()) {
                refuse(where + "a tensor is planned in buffer " +
                       std::to_string(v.tensor.memoryId) + " of " +
                       std::to_string(plan.nonConstBufferSizes.size()));
            }
            if (v.kind == PteValue::Kind::Tensor && v.tensor.allocated) {
                const uint64_t end = v.tensor.memoryOffset + v.tensor.bytes();
                const int64_t size = plan.nonConstBufferSizes[v.tensor.memoryId];
                if (size < 0 || end > static_cast<uint64_t>(size)) {
                    program.notes.push_back(where + "a " + v.tensor.text() + " tensor at offset " +
                                            std::to_string(v.tensor.memoryOffset) + " of buffer " +
                                            std::to_string(v.tensor.memoryId) + " ends past its " +
                                            std::to_string(size) + " bytes");
                }
            }
        }
        for (const PteDelegate& delegate : plan.delegates) {
            const size_t count = delegate.inSegment ? program.segments.size() : 0;
            if (delegate.inSegment && delegate.index >= count) {
                refuse(where + "delegate '" + delegate.id + "' is in segment " +
                       std::to_string(delegate.index) + " of " + std::to_string(count));
            }
        }
    }
    const uint64_t segmentsEnd = program.fileSize;
    for (size_t i = 0; i < program.segments.size(); ++i) {
        const PteSegment& s = program.segments[i];
        const uint64_t base = program.segmentBaseOffset;
        if (s.offset > segmentsEnd || s.size > segmentsEnd ||
            base + s.offset + s.size > segmentsEnd) {
            refuse("the file is cut off: segment " + std::to_string(i) + " (" +
                   std::to_string(s.size) + " bytes at byte " + std::to_string(base + s.offset) +
                   ") ends past its " + std::to_string(segmentsEnd) + " bytes");
        }
    }
}

std::string number(double x) {
    if (std::isnan(x)) {
        return "nan";
    }
    if (std::isinf(x)) {
        return x > 0 ? "inf" : "-inf";
    }
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", x);
    return text;
}

template <typename T>
std::string list(const std::vector<T>& items) {
    std::string text = "[";
    for (size_t i = 0; i < items.size(); ++i) {
        text += (i ? "," : "") + std::to_string(static_cast<int64_t>(items[i]));
    }
    return text + "]";
}

std::string jsonString(const std::string& s) {
    std::string text = "\"";
    for (const unsigned char c : s) {
        if (c == '"' || c == '\\') {
            text += '\\';
            text += static_cast<char>(c);
        } else if (c < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            text += escaped;
        } else {
            text += static_cast<char>(c);
        }
    }
    return text + "\"";
}

} // namespace

std::string pteDtypeName(int scalarType) {
    static const char* const kNames[] = {"uint8",           "int8",
                                         "int16",           "int32",
                                         "int64",           "float16",
                                         "float32",         "float64",
                                         "complex32",       "complex64",
                                         "complex128",      "bool",
                                         "qint8",           "quint8",
                                         "qint32",          "bfloat16",
                                         "quint4x2",        "quint2x4",
                                         "bits1x8",         "bits2x4",
                                         "bits4x2",         "bits8",
                                         "bits16",          "float8_e5m2",
                                         "float8_e4m3fn",   "float8_e5m2fnuz",
                                         "float8_e4m3fnuz", "uint16",
                                         "uint32",          "uint64"};
    if (scalarType >= 0 && scalarType < static_cast<int>(std::size(kNames))) {
        return kNames[scalarType];
    }
    return "scalar_type " + std::to_string(scalarType);
}

int pteElementSize(int scalarType) {
    static const int kSizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 4, 8, 16, 1, 1, 1, 4,
                                 2, 0, 0, 1, 1, 1, 1, 2, 1, 1, 1,  1, 2, 4, 8};
    if (scalarType >= 0 && scalarType < static_cast<int>(std::size(kSizes))) {
        return kSizes[scalarType];
    }
    return 0;
}

uint64_t PteTensor::bytes() const {
    uint64_t count = 1;
    for (const int32_t size : sizes) {
        if (size < 0) {
            return 0;
        }
        // Saturate rather than wrap: a hostile size must not make a small number.
        if (size && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(size)) {
            return std::numeric_limits<uint64_t>::max();
        }
        count *= static_cast<uint64_t>(size);
    }
    const uint64_t element = static_cast<uint64_t>(pteElementSize(scalarType));
    return count > std::numeric_limits<uint64_t>::max() / std::max<uint64_t>(element, 1)
               ? std::numeric_limits<uint64_t>::max()
               : count * element;
}

std::string PteTensor::text() const {
    static const char* const kShort[] = {"u8",  "i8",  "i16",  "i32", "i64", "f16", "f32",  "f64",
                                         "c32", "c64", "c128", "b8",  "qi8", "qu8", "qi32", "bf16"};
    std::string text = scalarType >= 0 && scalarType < static_cast<int>(std::size(kShort))
                           ? kShort[scalarType]
                           : pteDtypeName(scalarType);
    text += "[";
    for (size_t i = 0; i < sizes.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(sizes[i]);
    }
    return text + "]";
}

std::string PteOperator::text() const {
    return overload.empty() ? name : name + "." + overload;
}

uint64_t PteProgram::constantBytes(uint32_t dataBuffer) const {
    if (hasConstantSegment && !constantOffsets.empty()) {
        if (dataBuffer >= constantOffsets.size()) {
            return 0;
        }
        // A constant runs to the next one's offset, the last to its segment's end.
        const uint64_t start = constantOffsets[dataBuffer];
        uint64_t end =
            constantSegmentIndex < segments.size() ? segments[constantSegmentIndex].size : start;
        if (dataBuffer + 1 < constantOffsets.size()) {
            end = constantOffsets[dataBuffer + 1];
        }
        return end > start ? end - start : 0;
    }
    return dataBuffer < constantBufferSizes.size() ? constantBufferSizes[dataBuffer] : 0;
}

bool looksLikePte(std::string_view head) {
    return head.size() >= 8 && head.compare(4, 2, "ET") == 0 && std::isdigit(head[6] & 0xff) &&
           std::isdigit(head[7] & 0xff);
}

Expected<PteProgram> readPte(std::string_view bytes, uint64_t fileSize) {
    PteProgram program;
    program.fileSize = fileSize;
    if (bytes.size() < 8) {
        return Error{ErrorKind::Format, "the file is cut off: " + std::to_string(bytes.size()) +
                                            " bytes, too short for an ExecuTorch program"};
    }
    if (bytes.compare(4, 4, "ET12") != 0) {
        const std::string identifier(bytes.substr(4, 4));
        bool printable = true;
        for (const char c : identifier) {
            printable = printable && c >= 0x20 && c < 0x7f;
        }
        return Error{
            ErrorKind::Format,
            "the file identifier at byte 4 is " +
                (printable ? "'" + identifier + "'" : std::string("not text")) +
                ", not ExecuTorch's 'ET12'" +
                (looksLikePte(bytes) ? ": a program for another release of ExecuTorch" : "")};
    }
    uint64_t programSize = bytes.size();
    if (bytes.size() >= 16 && bytes.compare(8, 4, "eh00") == 0) {
        uint32_t length = 0;
        std::memcpy(&length, bytes.data() + 12, 4);
        if (length < 24 || bytes.size() < 8 + static_cast<uint64_t>(length)) {
            return Error{ErrorKind::Format, "the extended header at byte 8 is cut off (" +
                                                std::to_string(length) + " bytes)"};
        }
        program.extendedHeader = true;
        std::memcpy(&programSize, bytes.data() + 16, 8);
        std::memcpy(&program.segmentBaseOffset, bytes.data() + 24, 8);
        if (length >= 32) {
            std::memcpy(&program.segmentDataSize, bytes.data() + 32, 8);
        }
        if (programSize > bytes.size()) {
            return Error{ErrorKind::Format,
                         "the file is cut off: its header says the program has " +
                             std::to_string(programSize) + " bytes, the file has " +
                             std::to_string(fileSize)};
        }
        if (program.segmentBaseOffset && program.segmentBaseOffset < programSize) {
            return Error{ErrorKind::Format, "the extended header's segment base (byte " +
                                                std::to_string(program.segmentBaseOffset) +
                                                ") lies inside the program (" +
                                                std::to_string(programSize) + " bytes)"};
        }
    }
    program.programSize = programSize;
    try {
        Buffer buffer(bytes.substr(0, programSize));
        const uint32_t root = buffer.read<uint32_t>(0, "the root offset");
        if (root < 8 || root >= buffer.size()) {
            refuse("the root offset at byte 0 points to byte " + std::to_string(root) +
                   ", outside the program (" + std::to_string(buffer.size()) + " bytes)");
        }
        const Table top(buffer, root, {}, "the program");
        program.version = top.scalar<uint32_t>(field::kVersion);
        top.tables(field::kConstantBuffer, "a constant buffer", [&](const Table& b) {
            program.constantBufferSizes.push_back(b.byteCount(0, "a constant buffer's bytes"));
        });
        std::vector<InlineBlob> inlineBlobs;
        top.tables(field::kDelegateData, "inline delegate data", [&](const Table& d) {
            const std::string_view blob = d.bytesOf(0, "a delegate's bytes", UINT64_MAX);
            inlineBlobs.push_back(
                {blob.size(),
                 blob.data() ? static_cast<uint64_t>(blob.data() - buffer.bytes().data()) : 0});
        });
        top.tables(field::kSegments, "a segment", [&](const Table& s) {
            program.segments.push_back({s.scalar<uint64_t>(0), s.scalar<uint64_t>(1)});
        });
        if (const auto constants = top.table(field::kConstantSegment, "the constant segment")) {
            program.hasConstantSegment = true;
            program.constantSegmentIndex = constants->scalar<uint32_t>(0);
            program.constantOffsets = constants->scalars<uint64_t>(1, "the constants' offsets");
        }
        top.tables(field::kNamedData, "named data", [&](const Table& n) {
            program.namedData.push_back({n.string(0, "a name"), n.scalar<uint32_t>(1)});
        });
        top.tables(field::kExecutionPlan, "an execution plan", [&](const Table& p) {
            program.plans.push_back(
                readPlan(p, inlineBlobs, program.segments, program.segmentBaseOffset));
        });
        check(program);
    } catch (const Refusal& refusal) {
        return Error{ErrorKind::Format, refusal.message};
    }
    if (program.plans.empty()) {
        return Error{ErrorKind::Format, "the program has no execution plan (no method to show)"};
    }
    return program;
}

Expected<PteProgram> readPteFile(const std::string& path, const PteLimits& limits) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{ErrorKind::File, "'" + path + "' cannot be read"};
    }
    in.seekg(0, std::ios::end);
    const auto end = in.tellg();
    if (end < 0) {
        return Error{ErrorKind::File, "'" + path + "' cannot be read"};
    }
    const uint64_t fileSize = static_cast<uint64_t>(end);
    in.seekg(0);
    std::string head(static_cast<size_t>(std::min<uint64_t>(fileSize, 40)), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    uint64_t wanted = fileSize;
    if (head.size() >= 24 && head.compare(8, 4, "eh00") == 0) {
        std::memcpy(&wanted, head.data() + 16, 8);
        wanted = std::min(wanted, fileSize); // readPte says the file is cut off
    }
    if (wanted > limits.maxProgramBytes) {
        return Error{ErrorKind::Format,
                     "its program has " + std::to_string(wanted) + " bytes, more than the " +
                         std::to_string(limits.maxProgramBytes) + " this reader reads"};
    }
    std::string bytes(static_cast<size_t>(wanted), '\0');
    in.seekg(0);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (static_cast<uint64_t>(in.gcount()) != wanted) {
        return Error{ErrorKind::File, "'" + path + "' could not be read to its end"};
    }
    // A header that claims more than the file has: readPte says so, with both sizes.
    if (head.size() >= 24 && head.compare(8, 4, "eh00") == 0) {
        uint64_t claimed = 0;
        std::memcpy(&claimed, head.data() + 16, 8);
        if (claimed > fileSize) {
            return readPte(head, fileSize);
        }
    }
    return readPte(bytes, fileSize);
}

std::string pteValueLine(const PteValue& value) {
    switch (value.kind) {
    case PteValue::Kind::Absent:
    case PteValue::Kind::Null:
        return "null";
    case PteValue::Kind::Int:
        return "int " + std::to_string(value.intValue);
    case PteValue::Kind::Bool:
        return std::string("bool ") + (value.boolValue ? "true" : "false");
    case PteValue::Kind::Double:
        return "double " + number(value.doubleValue);
    case PteValue::Kind::String:
        return "string " + jsonString(value.stringValue);
    case PteValue::Kind::IntList:
        return "int_list " + list(value.items);
    case PteValue::Kind::DoubleList: {
        std::string text = "double_list [";
        for (size_t i = 0; i < value.doubles.size(); ++i) {
            text += (i ? "," : "") + number(value.doubles[i]);
        }
        return text + "]";
    }
    case PteValue::Kind::BoolList: {
        std::string text = "bool_list [";
        for (size_t i = 0; i < value.bools.size(); ++i) {
            text += std::string(i ? "," : "") + (value.bools[i] ? "true" : "false");
        }
        return text + "]";
    }
    case PteValue::Kind::TensorList:
        return "tensor_list " + list(value.items);
    case PteValue::Kind::OptionalTensorList:
        return "optional_tensor_list " + list(value.items);
    case PteValue::Kind::Tensor: {
        const PteTensor& t = value.tensor;
        return "tensor type=" + std::to_string(t.scalarType) + " sizes=" + list(t.sizes) +
               " dim_order=" + list(t.dimOrder) + " buffer=" + std::to_string(t.dataBuffer) +
               " alloc=" +
               (t.allocated ? std::to_string(t.memoryId) + ":" + std::to_string(t.memoryOffset)
                            : std::string("none")) +
               " dynamism=" + std::to_string(t.shapeDynamism);
    }
    }
    return "null";
}

std::string pteInstructionLine(const PteInstruction& instruction) {
    const std::string index = std::to_string(instruction.index);
    switch (instruction.kind) {
    case PteInstruction::Kind::Kernel:
        return "kernel " + index + " " + list(instruction.args);
    case PteInstruction::Kind::Delegate:
        return "delegate " + index + " " + list(instruction.args);
    case PteInstruction::Kind::Move:
        return "move " + index + " " + std::to_string(instruction.target);
    case PteInstruction::Kind::JumpFalse:
        return "jump_false " + index + " " + std::to_string(instruction.target);
    case PteInstruction::Kind::Free:
        return "free " + index;
    case PteInstruction::Kind::Absent:
        break;
    }
    return "absent";
}

std::string pteDelegateLine(const PteDelegate& delegate) {
    std::string text = delegate.id + (delegate.inSegment ? " segment:" : " inline:") +
                       std::to_string(delegate.index) + " specs=";
    for (size_t i = 0; i < delegate.compileSpecs.size(); ++i) {
        text += (i ? "," : "") + delegate.compileSpecs[i].key + "=" +
                std::to_string(delegate.compileSpecs[i].size);
    }
    return text;
}

} // namespace scriptscope
