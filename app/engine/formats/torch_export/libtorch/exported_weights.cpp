// An exported program's parameters, buffers and constants read from its archive: raw storages
// with their dtype, sizes and strides (PyTorch 2.8's layout, each checked to lie inside its
// record), or torch.save files (the early layout, and pickled constants).
#include "engine_internal.h"
#include "exported_steps.h"
#include "torch_values.h"

#include <scratch_file.h>

#include <pt2_values.h>

#include <cstring>

namespace scriptscope::detail {

namespace {

// The bytes of one record (a weight's whole storage, or a torch.save file).
Expected<std::string> recordBytes(const ZipReader& zip, const std::string& name,
                                  const std::string& path) {
    const ArchiveRecord* record = zip.find(name);
    const auto bytes = record ? zip.read(*record, record->size) : std::nullopt;
    if (!bytes) {
        return Error{ErrorKind::Format, "cannot read '" + name + "' of '" + path +
                                            "' (missing, compressed in a way not read, or "
                                            "damaged)"};
    }
    return *bytes;
}

// A torch.save file inside the archive, read through a copy in the temporary folder.
Expected<c10::IValue> torchSaveRecord(const ZipReader& zip, const std::string& name,
                                      const std::string& path) {
    auto bytes = recordBytes(zip, name, path);
    if (!bytes) {
        return bytes.error();
    }
    ScratchFile copy("weight");
    if (auto error = copy.write(bytes->data(), bytes->size())) {
        error->message += " to read '" + name + "' of '" + path + "'";
        return *error;
    }
    return loadValueFile(copy.path());
}

Expected<at::Tensor> readWeight(const ZipReader& zip, const Pt2Weight& weight,
                                const std::string& path) {
    if (weight.record.empty()) {
        return Error{ErrorKind::Format, "'" + path + "' holds no data for '" + weight.name + "'"};
    }
    if (weight.pickled) {
        auto value = torchSaveRecord(zip, weight.record, path);
        if (!value) {
            return value.error();
        }
        if (!value->isTensor()) {
            return Error{ErrorKind::Format, "'" + weight.name + "' in '" + path + "' is " +
                                                value->tagKind() + ", not a tensor"};
        }
        return value->toTensor();
    }
    const auto dtype = [&]() -> std::optional<c10::ScalarType> {
        for (int code = 1; code <= 35; ++code) {
            const auto names = pt2::dtypeNames(code);
            if (names.first == weight.meta.dtype) {
                return scalarTypeOf(code);
            }
        }
        return std::nullopt;
    }();
    if (!dtype) {
        return Error{ErrorKind::Format, "'" + weight.name + "' in '" + path + "' has the dtype " +
                                            weight.meta.dtype + ", which LibTorch " +
                                            libtorchVersion() + " cannot make"};
    }
    std::vector<int64_t> sizes;
    for (const std::string& size : weight.meta.sizes) {
        char* end = nullptr;
        const long long n = std::strtoll(size.c_str(), &end, 10);
        if (size.empty() || *end != '\0' || n < 0) {
            return Error{ErrorKind::Format, "'" + weight.name + "' in '" + path +
                                                "' has the size " + size + ", not a number"};
        }
        sizes.push_back(n);
    }
    auto bytes = recordBytes(zip, weight.record, path);
    if (!bytes) {
        return bytes.error();
    }
    const auto elementSize = static_cast<int64_t>(c10::elementSize(*dtype));
    const int64_t stored = static_cast<int64_t>(bytes->size()) / elementSize;
    std::vector<int64_t> strides = weight.strides;
    if (strides.size() != sizes.size()) {
        // Contiguous, when the archive does not say.
        strides.assign(sizes.size(), 1);
        for (size_t i = sizes.size(); i-- > 1;) {
            strides[i - 1] = strides[i] * std::max<int64_t>(sizes[i], 1);
        }
    }
    // The furthest element the view reaches must be inside the stored bytes.
    int64_t reach = weight.storageOffset;
    bool empty = false;
    for (size_t i = 0; i < sizes.size(); ++i) {
        empty = empty || sizes[i] == 0;
        if (strides[i] < 0) {
            return Error{ErrorKind::Format,
                         "'" + weight.name + "' in '" + path + "' has a negative stride"};
        }
        reach += (sizes[i] - 1) * strides[i];
    }
    if (!empty && (weight.storageOffset < 0 || reach >= stored)) {
        return Error{ErrorKind::Format, "'" + weight.name + "' in '" + path + "' is " +
                                            std::to_string(bytes->size()) +
                                            " bytes, too few for its shape and strides"};
    }
    at::Tensor storage = at::empty({stored}, at::TensorOptions().dtype(*dtype));
    std::memcpy(storage.data_ptr(), bytes->data(), static_cast<size_t>(stored * elementSize));
    return storage.as_strided(sizes, strides, weight.storageOffset);
}

// The early layout (PyTorch 2.1 to 2.7): the state dict and constants as torch.save files.
Status readEarlyWeights(const ZipReader& zip, const Pt2Model& model, const std::string& path,
                        std::map<std::string, at::Tensor>& out) {
    for (const std::string& name : model.pickledWeights) {
        auto value = torchSaveRecord(zip, name, path);
        if (!value) {
            return value.error();
        }
        if (!value->isGenericDict()) {
            continue;
        }
        for (const auto& entry : value->toGenericDict()) {
            if (entry.key().isString() && entry.value().isTensor()) {
                out[entry.key().toStringRef()] = entry.value().toTensor();
            }
        }
    }
    return std::nullopt;
}

} // namespace

Expected<std::map<std::string, at::Tensor>>
readProgramTensors(const ZipReader& zip, const Pt2Model& model, const std::string& path) {
    std::map<std::string, at::Tensor> tensors;
    if (model.weights.empty() && model.constants.empty()) {
        if (auto error = readEarlyWeights(zip, model, path, tensors)) {
            return *error;
        }
    }
    for (const auto* list : {&model.weights, &model.constants}) {
        for (const Pt2Weight& weight : *list) {
            auto tensor = readWeight(zip, weight, path);
            if (!tensor) {
                return tensor.error();
            }
            tensors[weight.name] = *tensor;
        }
    }
    return tensors;
}

} // namespace scriptscope::detail
