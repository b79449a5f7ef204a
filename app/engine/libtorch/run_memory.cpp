// The bytes a run holds, value by value: the timeline from each value's storage and lifetime, and
// a TorchScript run's storages followed until its interpreter lets them go.
#include "run_memory.h"

#include <torch/script.h>

#include <algorithm>
#include <map>
#include <utility>

namespace scriptscope::detail {

HeldStorage heldStorage(const at::Tensor& tensor) {
    HeldStorage held;
    if (tensor.defined() && tensor.has_storage() && tensor.layout() == at::kStrided) {
        held.storage = tensor.storage().unsafeGetStorageImpl();
        held.bytes = tensor.storage().nbytes();
        held.keep = tensor.storage().getWeakStorageImpl();
    }
    return held;
}

MemoryTimeline memoryOf(std::vector<ActivationRecord>& records,
                        const std::vector<HeldStorage>& storages, size_t steps) {
    MemoryTimeline memory;
    memory.known = true;
    std::map<const void*, size_t> owner; // storage -> the record that made it
    for (size_t i = 0; i < records.size() && i < storages.size(); ++i) {
        if (!storages[i].storage) {
            continue;
        }
        const auto [found, first] = owner.emplace(storages[i].storage, i);
        ActivationRecord& holder = records[found->second];
        if (first) {
            holder.storageBytes = storages[i].bytes;
        } else {
            holder.lastUseAt = std::max(holder.lastUseAt, records[i].lastUseAt);
            records[i].storageBytes = 0;
        }
    }
    memory.liveBytes.assign(steps, 0);
    for (const auto& [storage, index] : owner) {
        const ActivationRecord& r = records[index];
        const int last = std::min(r.lastUseAt, static_cast<int>(steps) - 1);
        for (int step = std::max(r.madeAt, 0); step <= last; ++step) {
            memory.liveBytes[static_cast<size_t>(step)] += r.storageBytes;
        }
    }
    for (size_t step = 0; step < steps; ++step) {
        if (memory.peakStep < 0 || memory.liveBytes[step] > memory.peakBytes) {
            memory.peakStep = static_cast<int>(step);
            memory.peakBytes = memory.liveBytes[step];
        }
    }
    for (const auto& [storage, index] : owner) {
        const ActivationRecord& r = records[index];
        if (r.storageBytes > 0 && r.madeAt <= memory.peakStep && memory.peakStep <= r.lastUseAt) {
            memory.peakRecords.push_back(static_cast<int>(index));
        }
    }
    std::sort(memory.peakRecords.begin(), memory.peakRecords.end());
    return memory;
}

MemoryWatch::MemoryWatch(std::set<const void*> external)
    : external_(std::move(external)) {}

void MemoryWatch::made(std::vector<ActivationRecord>& records, const at::Tensor& tensor) {
    const int step = static_cast<int>(records.size()) - 1;
    // What was let go since the value before this one was held while this one was made.
    size_t kept = 0;
    for (const size_t index : alive_) {
        if (storages_[index].keep->expired()) {
            records[index].lastUseAt = step;
        } else {
            alive_[kept++] = index;
        }
    }
    alive_.resize(kept);
    ActivationRecord& r = records.back();
    r.madeAt = step;
    r.lastUseAt = step;
    HeldStorage held = heldStorage(tensor);
    if (held.storage && external_.count(held.storage)) {
        held = {};
    }
    if (held.storage) {
        r.bytes = static_cast<uint64_t>(tensor.numel()) * tensor.element_size();
        alive_.push_back(records.size() - 1);
    }
    storages_.resize(records.size() - 1);
    storages_.push_back(std::move(held));
}

MemoryTimeline MemoryWatch::finish(std::vector<ActivationRecord>& records) {
    // Let go after the last value: held while it was made. Still held: an output.
    const int steps = static_cast<int>(records.size());
    for (const size_t index : alive_) {
        records[index].lastUseAt = storages_[index].keep->expired() ? steps - 1 : steps;
    }
    alive_.clear();
    storages_.resize(records.size());
    MemoryTimeline memory = memoryOf(records, storages_, records.size());
    storages_.clear();
    return memory;
}

namespace {

void addStorages(const c10::IValue& value, std::set<const void*>& out) {
    value.visit([&out](const c10::IValue& v) {
        if (v.isTensor()) {
            const at::Tensor& t = v.toTensor();
            if (t.defined() && t.has_storage()) {
                out.insert(t.storage().unsafeGetStorageImpl());
            }
        }
        return false; // go into lists, tuples, dicts and objects
    });
}

void addBlockConstants(const torch::jit::Block& block, std::set<const void*>& out) {
    for (const torch::jit::Node* node : block.nodes()) {
        if (node->kind() == c10::prim::Constant && node->outputs().size() == 1) {
            if (const auto constant = torch::jit::toIValue(node->output())) {
                addStorages(*constant, out);
            }
        }
        for (const torch::jit::Block* inner : node->blocks()) {
            addBlockConstants(*inner, out);
        }
    }
}

} // namespace

std::set<const void*> storagesBefore(const torch::jit::Module& module,
                                     const torch::jit::Graph& graph,
                                     const std::vector<c10::IValue>& inputs) {
    std::set<const void*> out;
    addStorages(module._ivalue(), out);
    addBlockConstants(*graph.block(), out);
    for (const c10::IValue& input : inputs) {
        addStorages(input, out);
    }
    return out;
}

} // namespace scriptscope::detail
