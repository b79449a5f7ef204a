// ExecuTorch programs (.pte, written by to_executorch().buffer) read without ExecuTorch and
// without running anything: the program's version, its execution plans (methods) with their
// values, chains, instructions, operators and delegates, the constant buffers and segments, and
// the memory plan.
//
// A .pte is a FlatBuffer (schema/program.fbs, file identifier "ET12" at byte 4), optionally
// followed by segments (constant data, delegate blobs) that an extended header at byte 8 ("eh00")
// locates. The reader is written against the schema's field numbers, which are facts of the
// format; it reads only the program's bytes, never the segments' contents.
//
// Like the other archive readers it trusts nothing: every offset, vector length and string is
// checked against the program's size, offsets that lead back to where they came from are a
// nesting loop, and the total of what is read is bounded by the size of the bytes it is read
// from. What is wrong is an error that says what, and at which byte.
#pragma once

#include <error.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scriptscope {

// ExecuTorch's ScalarType (runtime/core/portable_type/scalar_type.h, the numbering of c10's).
// Its name as PyTorch prints a dtype ("float32", "quint8"), "scalar_type N" when unknown.
std::string pteDtypeName(int scalarType);
// Its element size in bytes; 0 when unknown or when it packs several in one byte.
int pteElementSize(int scalarType);

struct PteTensor {
    int scalarType = 0;
    int storageOffset = 0;
    std::vector<int32_t> sizes;
    std::vector<uint8_t> dimOrder;
    bool requiresGrad = false;
    // 0: the tensor has no constant data (an input or an activation); N: constant buffer N, or
    // the Nth offset of the constant segment.
    uint32_t dataBuffer = 0;
    // Where the memory planner put it: buffer memoryId (an index into the plan's
    // nonConstBufferSizes) at memoryOffset. No allocation: a constant, or memory the caller
    // provides.
    bool allocated = false;
    uint32_t memoryId = 0;
    uint64_t memoryOffset = 0;
    int layout = 0;        // 0: strided
    int shapeDynamism = 0; // 0 static, 1 dynamic with an upper bound, 2 dynamic unbound

    uint64_t bytes() const;   // elements x element size (0 when the dtype's size is unknown)
    std::string text() const; // "f32[1, 3, 32, 32]"
};

struct PteValue {
    // The union's types, numbered as program.fbs numbers KernelTypes.
    enum class Kind {
        Absent = 0,
        Null = 1,
        Int,
        Bool,
        Double,
        Tensor,
        String,
        IntList,
        DoubleList,
        BoolList,
        TensorList,
        OptionalTensorList,
    };
    Kind kind = Kind::Absent;
    int64_t intValue = 0;
    bool boolValue = false;
    double doubleValue = 0;
    std::string stringValue;
    // IntList (each an Int value), TensorList, OptionalTensorList (-1: none): the values, by
    // index, that hold its items.
    std::vector<int64_t> items;
    std::vector<double> doubles;
    std::vector<bool> bools;
    PteTensor tensor;
};

struct PteInstruction {
    // Numbered as program.fbs numbers InstructionArguments.
    enum class Kind { Absent = 0, Kernel = 1, Delegate, Move, JumpFalse, Free };
    Kind kind = Kind::Absent;
    // Kernel: the operator's index; Delegate: the delegate's; Move: the value moved from;
    // JumpFalse: the condition's value; Free: the value freed.
    int index = 0;
    // Move: the value moved to; JumpFalse: the instruction jumped to when the condition is false.
    int target = 0;
    std::vector<int32_t> args; // Kernel and Delegate: value indices (inputs, then outputs)
};

struct PteChain {
    std::vector<int32_t> inputs, outputs;
    std::vector<PteInstruction> instructions;
};

struct PteOperator {
    std::string name;         // "aten::convolution"
    std::string overload;     // "out"
    std::string text() const; // "aten::convolution.out"
};

struct PteCompileSpec {
    std::string key;
    std::vector<uint8_t> value; // the first 256 bytes
    uint64_t size = 0;
};

struct PteDelegate {
    std::string id;          // the backend's id: "XnnpackBackend"
    bool inSegment = false;  // false: inline, in the program's backend_delegate_data
    uint32_t index = 0;      // into backend_delegate_data, or into the segments
    uint64_t blobBytes = 0;  // the processed blob's size; 0 when its index is out of range
    uint64_t blobOffset = 0; // where the blob's bytes start in the file (with blobBytes)
    std::vector<PteCompileSpec> compileSpecs;
};

struct PtePlan {
    std::string name;                          // "forward"
    std::string encodedInputs, encodedOutputs; // container_meta_type: the pytree specs
    std::vector<PteValue> values;
    std::vector<int32_t> inputs, outputs; // value indices
    std::vector<PteChain> chains;
    std::vector<PteOperator> operators;
    std::vector<PteDelegate> delegates;
    // The memory plan: the size of each planned buffer, by memory id. Buffer 0 is reserved by
    // the planner (always 0 bytes).
    std::vector<int64_t> nonConstBufferSizes;
};

struct PteSegment {
    uint64_t offset = 0; // from the segment base
    uint64_t size = 0;
};

struct PteNamedData {
    std::string key;
    uint32_t segment = 0;
};

struct PteProgram {
    uint64_t fileSize = 0;
    uint32_t version = 0;
    bool extendedHeader = false;
    uint64_t programSize = 0;       // the FlatBuffer's bytes (the whole file without a header)
    uint64_t segmentBaseOffset = 0; // where segment offsets count from
    uint64_t segmentDataSize = 0;
    std::vector<PtePlan> plans;
    std::vector<uint64_t> constantBufferSizes; // inline constant buffers (older programs)
    std::vector<PteSegment> segments;
    bool hasConstantSegment = false;
    uint32_t constantSegmentIndex = 0;
    std::vector<uint64_t> constantOffsets; // of each constant inside the constant segment
    std::vector<PteNamedData> namedData;
    std::vector<std::string> notes; // what does not add up but does not stop the reading

    // The bytes constant tensor `dataBuffer` holds, from the constant segment's offsets or the
    // inline buffer's size; 0 when unknown.
    uint64_t constantBytes(uint32_t dataBuffer) const;
};

struct PteLimits {
    uint64_t maxProgramBytes = 512ull << 20; // the FlatBuffer read; segments are not read
};

// Whether the bytes look like an ExecuTorch program: "ET12" (or another "ET" + two digits) at
// byte 4.
bool looksLikePte(std::string_view head);

// The program in `bytes` (the file's first programSize bytes at least; fileSize the whole
// file's, which segments are checked against).
Expected<PteProgram> readPte(std::string_view bytes, uint64_t fileSize);
// The file read from disk: its header, then its program's bytes.
Expected<PteProgram> readPteFile(const std::string& path, const PteLimits& limits = {});

// The canonical one-line forms tests/fixtures/make_pte.py writes of ExecuTorch's own reading,
// for the tests that compare the two.
std::string pteValueLine(const PteValue& value);
std::string pteInstructionLine(const PteInstruction& instruction);
std::string pteDelegateLine(const PteDelegate& delegate);

} // namespace scriptscope
