// A pickle scanned without executing it: the classes it names (how the probe tells a state_dict
// from a pickled eager model), the storages PyTorch refers to by persistent id and the tensors
// rebuilt from them (dtype, shape, where they were saved). A pass over what the one pickle
// interpreter (pickle_interpreter.h) builds with its lenient policy: what it does not understand
// is walked past, and what it cannot read is an error at a byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scriptscope {

// ('storage', torch.FloatStorage, '0', 'cpu', 4): a record data/<key> holding numel elements.
struct StorageRef {
    std::string key;
    std::string type;     // "torch.FloatStorage"
    std::string dtype;    // "float32"; empty when the storage type is unknown
    int elementSize = 0;  // bytes; 0 when unknown
    std::string location; // "cpu", "cuda:0"
    int64_t numel = -1;
};

// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...).
struct TensorRef {
    std::string storageKey;
    int64_t offset = 0;
    std::vector<int64_t> shape;
    std::vector<int64_t> stride;
};

struct PickleScan {
    bool complete = false;            // reached STOP
    std::string error;                // why the walk stopped early
    std::vector<std::string> globals; // "module.name", in order of first appearance
    std::vector<StorageRef> storages; // in order of first appearance, one per key
    std::vector<TensorRef> tensors;
};

PickleScan scanPickle(std::string_view data);

// The dtype and element size of a storage class name ("torch.HalfStorage" -> float16, 2).
bool storageDtype(const std::string& type, std::string& dtype, int& elementSize);

} // namespace scriptscope
