// A value-building reader for what Python's torch.save writes (data.pkl inside the zip), without
// LibTorch and without executing anything: the opcodes of pickle protocols 0-5 that build plain
// values (None, bool, int, float, str, bytes, list, tuple, dict) and the few callables torch.save
// uses (torch._utils._rebuild_tensor_v2, _rebuild_parameter, collections.OrderedDict,
// torch.Size). Other classes become Object values that name their class, so the caller can say
// what the file holds instead of guessing.
//
// Why not torch::pickle_load: LibTorch 1.13's unpickler lacks APPEND, which Python uses for every
// one-element list (torch.save([x], f) fails with "Unknown opcode for unpickling at 0x61").
#pragma once

#include "pickle_scan.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace scriptscope {

struct PickleValue;
using PickleValuePtr = std::shared_ptr<PickleValue>;

struct PickleValue {
    enum class Kind { None, Bool, Int, Float, String, Bytes, List, Tuple, Dict, Tensor, Object };
    Kind kind = Kind::None;
    bool boolean = false;
    int64_t integer = 0;
    double number = 0;
    std::string text; // String, Bytes; Object: the class ("__main__.Point")
    // List and Tuple: the elements. Dict: keys and values alternating, in insertion order.
    // Object: what it was made with (its arguments, then its state), as far as the pickle says.
    std::vector<PickleValuePtr> items;
    // Tensor: where its elements are and how they are laid out.
    StorageRef storage;
    TensorRef tensor;
    bool requiresGrad = false;
    // The order the interpreter made values in (from 1), and for a tensor, its storage's: what
    // a scan lists them by.
    uint64_t serial = 0;
    uint64_t storageSerial = 0;
};

struct PickleReadResult {
    PickleValuePtr value; // null on error
    std::string error;
};

// Reads a whole pickle. Hostile input ends in an error, never a crash or unbounded memory: the
// stack, memo and containers are bounded, and a list that contains itself is refused.
PickleReadResult readPickle(std::string_view data);

// "list of 2 tensors", "dict of 3 (str -> Tensor)", "tensor float32[2, 3]", "int 7".
std::string describePickleValue(const PickleValue& value);

} // namespace scriptscope
