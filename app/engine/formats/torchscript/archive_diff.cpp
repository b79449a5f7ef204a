// Two archives compared: their module trees, parameters and buffers, attributes, code and extra
// files, and (with inputs) their outputs and every module's output.
#include "exported_program.h"
#include "session.h"
#include "session_internal.h"
#include "text_diff.h"
#include "torch_values.h"
#include "value_tap.h"
#include "zip_reader.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace scriptscope {

namespace {

using detail::demangled;
using detail::maxAbsDifference;
using detail::shapeText;
using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

std::string typeName(const torch::jit::Module& module) {
    const auto type = module.type();
    return type->name() ? type->name()->qualifiedName() : type->str();
}

std::map<std::string, torch::jit::Module> modulesByPath(const torch::jit::Module& root) {
    std::map<std::string, torch::jit::Module> modules;
    for (const auto& entry : root.named_modules()) {
        modules.emplace(entry.name, entry.value);
    }
    return modules;
}

struct NamedTensor {
    at::Tensor tensor;
    bool buffer = false;
};

// A tensor only the first model has.
TensorChange removedTensor(const std::string& name, const NamedTensor& entry) {
    TensorChange change;
    change.name = name;
    change.buffer = entry.buffer;
    change.shapeA = entry.tensor.sizes().vec();
    change.dtypeA = detail::dtypeName(entry.tensor.scalar_type());
    change.numel = entry.tensor.numel();
    change.kind = TensorChange::Kind::Removed;
    return change;
}

std::map<std::string, NamedTensor> tensorsByName(const torch::jit::Module& root) {
    std::map<std::string, NamedTensor> tensors;
    for (const auto& entry : root.named_parameters(/*recurse=*/true)) {
        tensors[entry.name] = {entry.value, false};
    }
    for (const auto& entry : root.named_buffers(/*recurse=*/true)) {
        tensors[entry.name] = {entry.value, true};
    }
    return tensors;
}

// Attributes that are neither modules nor tensors, as short text.
std::map<std::string, std::string> plainAttributes(const torch::jit::Module& module) {
    std::map<std::string, std::string> attributes;
    const auto type = module.type();
    const auto object = module._ivalue();
    for (size_t i = 0; i < type->numAttributes(); ++i) {
        const auto& attributeType = type->getAttribute(i);
        if (attributeType->cast<c10::ClassType>() &&
            attributeType->castRaw<c10::ClassType>()->is_module()) {
            continue;
        }
        const c10::IValue value = object->getSlot(i);
        if (value.isTensor() || value.isModule()) {
            continue;
        }
        attributes[type->getAttributeName(i)] = detail::previewValue(value, 120);
    }
    return attributes;
}

// (elements that differ, max |difference|) of two contiguous float32 CPU tensors of one shape; NaN
// against NaN is equal, NaN against a number an infinite difference.
std::pair<int64_t, double> floatDifference(const at::Tensor& a, const at::Tensor& b) {
    const float* x = a.data_ptr<float>();
    const float* y = b.data_ptr<float>();
    const int64_t n = a.numel();
    constexpr int64_t kGrain = int64_t{1} << 16;
    const int64_t chunks = (n + kGrain - 1) / kGrain;
    std::vector<std::pair<int64_t, double>> partial(static_cast<size_t>(chunks), {0, 0.0});
    at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            int64_t differing = 0;
            float largest = 0;
            const int64_t to = std::min(n, (c + 1) * kGrain);
            for (int64_t i = c * kGrain; i < to; ++i) {
                if (x[i] != y[i]) {
                    if (std::isnan(x[i]) && std::isnan(y[i])) {
                        continue;
                    }
                    ++differing;
                    const float d = std::abs(x[i] - y[i]);
                    largest = std::isnan(d) ? std::numeric_limits<float>::infinity()
                                            : std::max(largest, d);
                }
            }
            partial[static_cast<size_t>(c)] = {differing, largest};
        }
    });
    std::pair<int64_t, double> total{0, 0.0};
    for (const auto& [differing, largest] : partial) {
        total.first += differing;
        total.second = std::max(total.second, largest);
    }
    return total;
}

// The code files (and the constants they use) of an archive, by their name inside it; empty when
// the zip cannot be read (then the code is compared method by method).
std::map<std::string, std::string> codeRecords(const std::string& path) {
    std::map<std::string, std::string> records;
    ZipReader zip(path);
    if (!zip.ok()) {
        return records;
    }
    for (const auto& record : zip.records()) {
        const auto slash = record.name.find('/');
        const std::string inner =
            slash == std::string::npos ? record.name : record.name.substr(slash);
        if (inner.rfind("/code/", 0) != 0 && inner != "/constants.pkl") {
            continue;
        }
        const auto bytes = zip.read(record, uint64_t{64} << 20);
        if (!bytes) {
            return {};
        }
        records[inner] = *bytes;
    }
    return records;
}

std::map<std::string, std::string> extraFiles(const std::string& path) {
    std::map<std::string, std::string> files;
    ZipReader zip(path);
    if (!zip.ok()) {
        return files;
    }
    for (const auto& record : zip.records()) {
        const auto at = record.name.find("/extra/");
        if (at == std::string::npos) {
            continue;
        }
        auto bytes = zip.read(record, uint64_t{64} << 20);
        files[record.name.substr(at + 7)] = bytes ? *bytes : std::string("<unreadable>");
    }
    return files;
}

} // namespace

namespace detail {

std::optional<TensorChange> compareTensors(const std::string& name, bool buffer,
                                           const at::Tensor& x, const at::Tensor& other) {
    TensorChange change;
    change.name = name;
    change.buffer = buffer;
    change.shapeA = x.sizes().vec();
    change.dtypeA = detail::dtypeName(x.scalar_type());
    change.numel = x.numel();
    const at::Tensor y = other.to(x.device());
    change.shapeB = y.sizes().vec();
    change.dtypeB = detail::dtypeName(y.scalar_type());
    if (change.shapeA != change.shapeB) {
        change.kind = TensorChange::Kind::Shape;
        return change;
    }
    if (change.dtypeA != change.dtypeB) {
        change.kind = TensorChange::Kind::Dtype;
        return change;
    }
    const at::Tensor dx = x.is_quantized() ? x.dequantize() : x;
    const at::Tensor dy = y.is_quantized() ? y.dequantize() : y;
    if (dx.device().is_cpu() && dx.scalar_type() == at::kFloat) {
        // Most parameters: one pass over both, no temporaries.
        const auto difference = floatDifference(dx.contiguous(), dy.contiguous());
        if (difference.first == 0) {
            return std::nullopt;
        }
        change.differing = difference.first;
        change.maxAbsDiff = difference.second;
        change.kind = TensorChange::Kind::Values;
        return change;
    }
    if (at::equal(dx, dy)) {
        return std::nullopt;
    }
    double largest = 0;
    if (dx.is_floating_point()) {
        largest = (dx - dy).abs().max().item<double>();
    } else {
        largest = (dx.to(at::kDouble) - dy.to(at::kDouble)).abs().max().item<double>();
    }
    change.differing = dx.ne(dy).sum().item<int64_t>();
    if (std::isnan(largest)) {
        // equal() says NaN != NaN: look closer before calling it a change.
        largest = maxAbsDifference(dx, dy).value_or(0);
        const at::Tensor same = (dx == dy) | (dx.isnan() & dy.isnan());
        change.differing = change.numel - same.sum().item<int64_t>();
    }
    if (change.differing == 0) {
        return std::nullopt;
    }
    change.kind = TensorChange::Kind::Values;
    change.maxAbsDiff = largest;
    return change;
}

} // namespace detail

Expected<ArchiveDiff> Session::diff(const Session& other) const {
    if (!impl_->module || !other.impl_->module) {
        return Error{ErrorKind::Internal, "both models must be loaded"};
    }
    const auto start = std::chrono::steady_clock::now();
    ArchiveDiff out;
    out.pathA = impl_->path;
    out.pathB = other.impl_->path;
    try {
        const auto a = modulesByPath(*impl_->module);
        const auto b = modulesByPath(*other.impl_->module);
        for (const auto& [path, module] : a) {
            const auto found = b.find(path);
            if (found == b.end()) {
                out.modules.push_back(
                    {path, ModuleChange::Kind::Removed, demangled(typeName(module)), ""});
            } else if (demangled(typeName(module)) != demangled(typeName(found->second))) {
                out.modules.push_back({path, ModuleChange::Kind::Retyped,
                                       demangled(typeName(module)),
                                       demangled(typeName(found->second))});
            }
        }
        for (const auto& [path, module] : b) {
            if (!a.count(path)) {
                out.modules.push_back(
                    {path, ModuleChange::Kind::Added, "", demangled(typeName(module))});
            }
        }
        // Tensors
        const auto ta = tensorsByName(*impl_->module);
        const auto tb = tensorsByName(*other.impl_->module);
        for (const auto& [name, entry] : ta) {
            const auto found = tb.find(name);
            if (found == tb.end()) {
                out.tensors.push_back(removedTensor(name, entry));
                continue;
            }
            ++out.tensorsCompared;
            if (auto changed = detail::compareTensors(name, entry.buffer, entry.tensor,
                                                      found->second.tensor)) {
                out.tensors.push_back(std::move(*changed));
            }
        }
        for (const auto& [name, entry] : tb) {
            if (!ta.count(name)) {
                TensorChange change;
                change.name = name;
                change.kind = TensorChange::Kind::Added;
                change.buffer = entry.buffer;
                change.shapeB = entry.tensor.sizes().vec();
                change.dtypeB = detail::dtypeName(entry.tensor.scalar_type());
                change.numel = entry.tensor.numel();
                out.tensors.push_back(change);
            }
        }
        // Attributes, code and graphs of the modules both have; each pair of types once. When
        // both archives hold the same code files, every method's code and graph are the same
        // (they are compiled from them): nothing to print.
        const auto recordsA = codeRecords(impl_->path);
        const bool sameCode = !recordsA.empty() && recordsA == codeRecords(other.impl_->path);
        std::map<std::pair<std::string, std::string>, std::vector<TextChange>> byTypes;
        for (const auto& [path, module] : a) {
            const auto found = b.find(path);
            if (found == b.end()) {
                continue;
            }
            const auto attributesA = plainAttributes(module);
            const auto attributesB = plainAttributes(found->second);
            for (const auto& [name, value] : attributesA) {
                const auto theirs = attributesB.find(name);
                if (theirs == attributesB.end() || theirs->second != value) {
                    out.attributes.push_back(
                        {path, name, value, theirs == attributesB.end() ? "" : theirs->second});
                }
            }
            for (const auto& [name, value] : attributesB) {
                if (!attributesA.count(name)) {
                    out.attributes.push_back({path, name, "", value});
                }
            }
            if (sameCode) {
                continue;
            }
            const auto types = std::make_pair(typeName(module), typeName(found->second));
            auto cached = byTypes.find(types);
            if (cached == byTypes.end()) {
                std::vector<TextChange> changes;
                std::map<std::string, torch::jit::Method> methodsA, methodsB;
                for (const auto& m : module.get_methods()) {
                    methodsA.emplace(m.name(), m);
                }
                for (const auto& m : found->second.get_methods()) {
                    methodsB.emplace(m.name(), m);
                }
                std::set<std::string> names;
                for (const auto& [name, m] : methodsA) {
                    names.insert(name);
                }
                for (const auto& [name, m] : methodsB) {
                    names.insert(name);
                }
                for (const auto& name : names) {
                    const auto ma = methodsA.find(name);
                    const auto mb = methodsB.find(name);
                    const std::string codeA =
                        ma != methodsA.end() ? detail::methodCode(ma->second) : "";
                    const std::string codeB =
                        mb != methodsB.end() ? detail::methodCode(mb->second) : "";
                    const std::string graphA =
                        ma != methodsA.end() ? ma->second.graph()->toString() : "";
                    const std::string graphB =
                        mb != methodsB.end() ? mb->second.graph()->toString() : "";
                    // Mangled class names differ between two saves of one model: not a change.
                    for (const auto& [what, ta2, tb2] :
                         {std::make_tuple("code", demangled(codeA), demangled(codeB)),
                          std::make_tuple("graph", demangled(graphA), demangled(graphB))}) {
                        if (ta2 == tb2) {
                            continue;
                        }
                        TextChange change;
                        change.method = name;
                        change.what = what;
                        const auto lines = diffLines(ta2, tb2);
                        for (const auto& line : lines) {
                            change.added += line.op == DiffLine::Op::Added ? 1 : 0;
                            change.removed += line.op == DiffLine::Op::Removed ? 1 : 0;
                        }
                        change.lines = withContext(lines, 3);
                        changes.push_back(std::move(change));
                    }
                }
                cached = byTypes.emplace(types, std::move(changes)).first;
            }
            for (TextChange change : cached->second) {
                change.module = path;
                out.texts.push_back(std::move(change));
            }
        }
        const auto extraA = extraFiles(impl_->path);
        const auto extraB = extraFiles(other.impl_->path);
        for (const auto& [name, content] : extraA) {
            const auto found = extraB.find(name);
            if (found == extraB.end()) {
                out.extraFiles.push_back({name, "removed"});
            } else if (found->second != content) {
                out.extraFiles.push_back({name, "changed"});
            }
        }
        for (const auto& [name, content] : extraB) {
            if (!extraA.count(name)) {
                out.extraFiles.push_back({name, "added"});
            }
        }
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Model);
    }
    out.identical = out.modules.empty() && out.tensors.empty() && out.attributes.empty() &&
                    out.texts.empty() && out.extraFiles.empty();
    out.diffMs = detail::elapsedMs(start);
    return out;
}

namespace {

std::string className(const std::string& type) {
    const size_t dot = type.rfind('.');
    return dot == std::string::npos ? type : type.substr(dot + 1);
}

// A weight of the .pt2 as a tensor: its record's bytes viewed with its sizes, strides and offset.
Expected<at::Tensor> exportedTensor(const ZipReader& zip, const Pt2Weight& weight) {
    const std::string where = "'" + weight.name + "' of the .pt2";
    if (weight.pickled || weight.record.empty()) {
        return Error{ErrorKind::Format, where + " is not stored as raw bytes"};
    }
    const ArchiveRecord* record = zip.find(weight.record);
    auto dtype = detail::dtypeFromName(weight.meta.dtype);
    if (!record || !dtype) {
        return Error{ErrorKind::Format, where + " cannot be read"};
    }
    auto bytes = zip.read(*record, uint64_t{16} << 30);
    if (!bytes) {
        return Error{ErrorKind::Format, where + ": " + zip.error()};
    }
    std::vector<int64_t> sizes;
    for (const std::string& size : weight.meta.sizes) {
        sizes.push_back(std::atoll(size.c_str()));
    }
    std::vector<int64_t> strides = weight.strides;
    if (strides.size() != sizes.size()) {
        const auto contiguous = c10::contiguous_strides(sizes);
        strides.assign(contiguous.begin(), contiguous.end());
    }
    const int64_t element = static_cast<int64_t>(c10::elementSize(*dtype));
    // The last element the view reaches must lie inside the record.
    int64_t last = weight.storageOffset;
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == 0) {
            last = -1;
            break;
        }
        last += (sizes[i] - 1) * strides[i];
    }
    if (weight.storageOffset < 0 ||
        (last >= 0 && (last + 1) * element > static_cast<int64_t>(bytes->size()))) {
        return Error{ErrorKind::Format, where + " is shorter than its shape"};
    }
    const at::Tensor storage =
        at::empty({static_cast<int64_t>(bytes->size()) / element}, at::TensorOptions(*dtype));
    std::memcpy(storage.data_ptr(), bytes->data(), static_cast<size_t>(storage.numel() * element));
    return storage.as_strided(sizes, strides, weight.storageOffset).clone();
}

} // namespace

Expected<ArchiveDiff> Session::diff(const ExportedProgram& other) const {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    if (!other.hasProgram()) {
        return Error{ErrorKind::Input, "'" + other.info().path +
                                           "' holds a compiled model without its exported "
                                           "program: there is no module tree or state to compare"};
    }
    const auto start = std::chrono::steady_clock::now();
    ArchiveDiff out;
    out.pathA = impl_->path;
    out.pathB = other.info().path;
    try {
        const auto a = modulesByPath(*impl_->module);
        std::map<std::string, std::string> b;
        for (const ModuleInfo& module : other.info().modules) {
            b[module.path] = module.type;
        }
        for (const auto& [path, module] : a) {
            const auto found = b.find(path);
            const std::string type = demangled(typeName(module));
            if (found == b.end()) {
                out.modules.push_back({path, ModuleChange::Kind::Removed, type, ""});
            } else if (found->second != "(not called)" && !path.empty() &&
                       className(type) != className(found->second)) {
                out.modules.push_back({path, ModuleChange::Kind::Retyped, type, found->second});
            }
        }
        for (const auto& [path, type] : b) {
            if (!a.count(path)) {
                out.modules.push_back({path, ModuleChange::Kind::Added, "", type});
            }
        }
        const ZipReader zip(other.info().path);
        std::map<std::string, const Pt2Weight*> weights;
        for (const auto* list : {&other.program().weights, &other.program().constants}) {
            for (const Pt2Weight& weight : *list) {
                weights[weight.name] = &weight;
            }
        }
        const auto ta = tensorsByName(*impl_->module);
        for (const auto& [name, entry] : ta) {
            const auto found = weights.find(name);
            if (found == weights.end()) {
                out.tensors.push_back(removedTensor(name, entry));
                continue;
            }
            auto theirs = exportedTensor(zip, *found->second);
            if (!theirs) {
                return theirs.error();
            }
            ++out.tensorsCompared;
            if (auto changed = detail::compareTensors(name, entry.buffer, entry.tensor, *theirs)) {
                out.tensors.push_back(std::move(*changed));
            }
        }
        for (const auto& [name, weight] : weights) {
            if (!ta.count(name)) {
                TensorChange change;
                change.name = name;
                change.kind = TensorChange::Kind::Added;
                change.buffer = !weight->parameter;
                for (const std::string& size : weight->meta.sizes) {
                    change.shapeB.push_back(std::atoll(size.c_str()));
                }
                change.dtypeB = weight->meta.dtype;
                out.tensors.push_back(change);
            }
        }
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Internal);
    }
    out.identical = out.modules.empty() && out.tensors.empty();
    out.diffMs = detail::elapsedMs(start);
    return out;
}

} // namespace scriptscope
