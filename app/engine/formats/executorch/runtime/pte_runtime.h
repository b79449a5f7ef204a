// ExecuTorch's C++ runtime (the user's, from its wheel) running a .pte file: methods loaded and
// executed through its Module, with its event tracer (ETDump) when a trace is asked for.
//
// No ExecuTorch or LibTorch header here: ExecuTorch's headers carry c10 headers of their own that
// cannot meet LibTorch's in one file, so tensors cross as plain memory (PlainTensor), and only
// pte_runtime.cpp includes ExecuTorch. Built where CMake found ExecuTorch
// (SCRIPTSCOPE_HAS_EXECUTORCH).
#pragma once

#include <error.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace scriptscope {

// A tensor as memory and its layout. The scalar type uses the numbering ExecuTorch's and
// LibTorch's ScalarType share (6 is float32).
struct PlainTensor {
    int scalarType = 6;
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides; // in elements; as many as sizes
    void* data = nullptr;         // not owned: the caller's (inputs) or the method's (outputs)
    size_t nbytes = 0;
};

// One input or output of a method.
struct PlainValue {
    enum class Kind { None, Tensor, Int, Double, Bool, String, Other };
    Kind kind = Kind::None;
    PlainTensor tensor;
    int64_t intValue = 0;
    double doubleValue = 0;
    bool boolValue = false;
    std::string text; // String; for Other, what it is
};

// What a traced runtime records.
struct PteTraceOptions {
    bool profile = true;         // every instruction's and delegate's time
    size_t debugBufferBytes = 0; // > 0: every instruction's output values too (intermediate
                                 // outputs), into a buffer of this size
};

struct PteTrace {
    std::vector<uint8_t> etdump;      // the ETDump file's bytes (etdump_schema_flatcc)
    std::vector<uint8_t> debugBuffer; // what the ETDump's tensors point into (offsets)
};

class PteRuntime {
public:
    ~PteRuntime();
    PteRuntime(const PteRuntime&) = delete;
    PteRuntime& operator=(const PteRuntime&) = delete;

    // The ExecuTorch release this build runs .pte files with ("1.5.1").
    static std::string version();

    // Opens the program (its methods are loaded on first use); with trace, an ETDump event tracer
    // records every run until takeTrace().
    static Expected<std::unique_ptr<PteRuntime>> open(const std::string& path,
                                                      const PteTraceOptions* trace = nullptr);

    // Loads the method and its delegates (XNNPACK's graphs are built here), once.
    Status load(const std::string& method);

    // One run. The outputs' tensors point into the method's memory, valid until the next run.
    Expected<std::vector<PlainValue>> execute(const std::string& method,
                                              const std::vector<PlainValue>& inputs);

    // What the tracer recorded since it was opened (an error when it was opened without one).
    Expected<PteTrace> takeTrace();

private:
    struct Impl;
    explicit PteRuntime(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace scriptscope
