// ExecuTorch's ETDump (etdump_schema_flatcc.fbs, file identifier "ED00"): what its event tracer
// recorded of a program's runs, read without ExecuTorch, every step bounded (flatbuffer_walk.h).
// A run block holds profile events (an instruction's or a delegate operator's start and end
// ticks) and debug events (an instruction's output value, its tensors' bytes in the debug buffer
// written beside the dump). A dump made on a phone or a board reads as one made here.
#pragma once

#include <error.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scriptscope {

struct EtdumpTensor {
    int scalarType = 0; // ExecuTorch's (and LibTorch's) ScalarType numbering
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    int64_t offset = 0; // into the debug buffer; -1 where the tracer had no room
};

struct EtdumpValue {
    enum class Kind { Null, Int, Bool, Float, Double, Tensor, TensorList, String };
    Kind kind = Kind::Null;
    std::vector<EtdumpTensor> tensors; // Tensor: one; TensorList: each
    int64_t intValue = 0;
    double doubleValue = 0; // Float and Double
    bool boolValue = false;
    std::string text;
    bool output = false; // a program output rather than an intermediate one
};

struct EtdumpProfileEvent {
    std::string name; // "OPERATOR_CALL", "DELEGATE_CALL", "Method::execute", or a
                      // delegate's own operator ("Convolution (NHWC, F32) IGEMM #1")
    int chain = 0;
    int instruction = -1;          // the instruction of the chain, -1: none
    int delegateDebugId = -1;      // a delegate event's id, when it gave a number
    std::string delegateDebugName; // or its name
    uint64_t metadataBytes = 0;
    uint64_t start = 0, end = 0; // ticks (nanoseconds on Linux)
    double ms() const { return end >= start ? static_cast<double>(end - start) / 1e6 : 0.0; }
    bool delegated() const { return delegateDebugId >= 0 || !delegateDebugName.empty(); }
};

struct EtdumpDebugEvent {
    uint64_t chain = 0;
    int instruction = -1;
    int delegateDebugId = -1;
    std::string delegateDebugName;
    std::string name;
    EtdumpValue value;
};

// One block of events: "Default" (the method's load) or one "Execute" per run.
struct EtdumpRun {
    std::string name;
    int bundledInput = -1;
    std::vector<std::string> allocators;
    std::vector<EtdumpProfileEvent> profile;
    std::vector<EtdumpDebugEvent> debug;
    uint64_t allocations = 0, allocatedBytes = 0;
};

struct Etdump {
    uint32_t version = 0;
    bool sizePrefixed = false;
    std::vector<EtdumpRun> runs;
};

struct EtdumpLimits {
    uint64_t maxBytes = 512ull << 20;
};

Expected<Etdump> readEtdump(std::string_view bytes);
Expected<Etdump> readEtdumpFile(const std::string& path, const EtdumpLimits& limits = {});

} // namespace scriptscope
