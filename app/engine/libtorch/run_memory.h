// Internal to the engine's LibTorch files (includes LibTorch): the bytes a run holds, value by
// value. An exported program's interpreter knows each value's last reader; a TorchScript run's
// values are followed until its interpreter lets them go (MemoryWatch).
#pragma once

#include "engine.h"
#include "numerics_types.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace torch::jit {
struct Graph;
struct Module;
} // namespace torch::jit

namespace scriptscope::detail {

// The storage a record's value holds, or none (no storage, not strided). The weak reference lets
// the memory go when the run lets the value go, and keeps the address from being handed to a
// later value, which would then count as the same storage.
struct HeldStorage {
    const void* storage = nullptr;
    uint64_t bytes = 0;
    std::optional<c10::weak_intrusive_ptr<c10::StorageImpl>> keep;
};
HeldStorage heldStorage(const at::Tensor& tensor);

// The run's memory from its records (each with madeAt and lastUseAt) and the storage each holds
// (parallel to the records): a storage counted once, by the first value that holds it, alive
// from the step that made it to the last step that reads any value on it. Sets each record's
// storageBytes (0 but for the first on a storage).
MemoryTimeline memoryOf(std::vector<ActivationRecord>& records,
                        const std::vector<HeldStorage>& storages, size_t steps);

// A run's storages followed as its interpreter lets them go: each recorded value is a step; a
// storage let go between two values was held while the later one was made (an operator's inputs
// go after it returns). Storages the run did not make (inputs, weights, constants) are not
// counted, nor are views of them.
class MemoryWatch {
public:
    explicit MemoryWatch(std::set<const void*> external);
    // Record `records.back()`, just made from `tensor`.
    void made(std::vector<ActivationRecord>& records, const at::Tensor& tensor);
    // The timeline at the end of the run: what is still held (its outputs) lasts to the end.
    MemoryTimeline finish(std::vector<ActivationRecord>& records);

private:
    std::set<const void*> external_;
    std::vector<HeldStorage> storages_; // per record
    std::vector<size_t> alive_;         // records whose storage is still held
};

// The storages a TorchScript run does not make: the module's tensors (every attribute, in every
// submodule), the graph's constants and the inputs'.
std::set<const void*> storagesBefore(const torch::jit::Module& module,
                                     const torch::jit::Graph& graph,
                                     const std::vector<c10::IValue>& inputs);

} // namespace scriptscope::detail
