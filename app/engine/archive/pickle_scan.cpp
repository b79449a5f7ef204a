// The scan (pickle_scan.h): a pass over what the one interpreter (pickle_interpreter.h) builds
// with its lenient policy.
#include "pickle_scan.h"

#include "pickle_interpreter.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace scriptscope {

bool storageDtype(const std::string& type, std::string& dtype, int& elementSize) {
    static const std::map<std::string, std::pair<const char*, int>> types{
        {"torch.FloatStorage", {"float32", 4}},
        {"torch.DoubleStorage", {"float64", 8}},
        {"torch.HalfStorage", {"float16", 2}},
        {"torch.BFloat16Storage", {"bfloat16", 2}},
        {"torch.LongStorage", {"int64", 8}},
        {"torch.IntStorage", {"int32", 4}},
        {"torch.ShortStorage", {"int16", 2}},
        {"torch.CharStorage", {"int8", 1}},
        {"torch.ByteStorage", {"uint8", 1}},
        {"torch.BoolStorage", {"bool", 1}},
        {"torch.ComplexFloatStorage", {"complex64", 8}},
        {"torch.ComplexDoubleStorage", {"complex128", 16}},
        {"torch.QInt8Storage", {"qint8", 1}},
        {"torch.QUInt8Storage", {"quint8", 1}},
        {"torch.QInt32Storage", {"qint32", 4}},
    };
    const auto found = types.find(type);
    if (found == types.end()) {
        return false;
    }
    dtype = found->second.first;
    elementSize = found->second.second;
    return true;
}

PickleScan scanPickle(std::string_view data) {
    PickleInterpretation run = interpretPickle(data, PicklePolicy::Lenient);
    PickleScan scan;
    scan.complete = run.stopped && run.error.empty();
    scan.error = std::move(run.error);
    scan.globals = std::move(run.globals);
    // Every value reachable from what was built, once each (values are shared, and a hostile
    // pickle may tie them in loops): storages by their key and tensors, in the order the
    // interpreter made them.
    std::vector<PickleValuePtr> pending =
        run.value ? std::vector<PickleValuePtr>{run.value} : std::move(run.built);
    std::unordered_set<const PickleValue*> seen;
    std::map<uint64_t, StorageRef> storages; // by the serial of the value that named it
    std::map<uint64_t, TensorRef> tensors;
    while (!pending.empty()) {
        const PickleValuePtr v = std::move(pending.back());
        pending.pop_back();
        if (!v || !seen.insert(v.get()).second) {
            continue;
        }
        if (v->kind == PickleValue::Kind::Tensor) {
            tensors.emplace(v->serial, v->tensor);
            storages.emplace(v->storageSerial, v->storage);
        } else if (v->kind == PickleValue::Kind::Object && v->text == "storage") {
            storages.emplace(v->serial, v->storage);
        }
        pending.insert(pending.end(), v->items.begin(), v->items.end());
    }
    for (const auto& entry : storages) {
        const StorageRef& storage = entry.second;
        const bool known = std::any_of(scan.storages.begin(), scan.storages.end(),
                                       [&](const StorageRef& s) { return s.key == storage.key; });
        if (!known) {
            scan.storages.push_back(storage);
        }
    }
    for (const auto& [serial, tensor] : tensors) {
        scan.tensors.push_back(tensor);
    }
    return scan;
}

} // namespace scriptscope
