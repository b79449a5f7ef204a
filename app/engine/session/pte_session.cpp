// PteSession (pte_session.h): LibTorch builds the inputs and describes the outputs; ExecuTorch's
// runtime (pte_runtime.h, a target of its own) runs the program. Tensors cross as plain memory.
#include "pte_session.h"

#include "session_internal.h"
#include "torch_values.h"

#include <etdump_profile.h>
#include <etdump_reader.h>
#include <pte_runtime.h>
#include <stats.h>

#include <chrono>

namespace scriptscope {

namespace {

// A tensor of a method's input metadata, random (floating) or zeros, seeded: what a run takes
// when it is given no inputs.
at::Tensor planInput(const PteTensor& meta, uint64_t seed) {
    std::vector<int64_t> sizes(meta.sizes.begin(), meta.sizes.end());
    const auto type = static_cast<c10::ScalarType>(meta.scalarType);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    if (c10::isFloatingType(type)) {
        return at::randn(sizes, generator, at::TensorOptions().dtype(at::kFloat)).to(type);
    }
    return at::zeros(sizes, at::TensorOptions().dtype(type));
}

Expected<PlainValue> plainOf(const c10::IValue& value, std::vector<at::Tensor>& keep,
                             const std::string& what) {
    PlainValue plain;
    if (value.isTensor()) {
        at::Tensor tensor = value.toTensor().cpu().contiguous();
        keep.push_back(tensor);
        plain.kind = PlainValue::Kind::Tensor;
        plain.tensor.scalarType = static_cast<int>(tensor.scalar_type());
        plain.tensor.sizes = tensor.sizes().vec();
        plain.tensor.strides = tensor.strides().vec();
        plain.tensor.data = tensor.data_ptr();
        plain.tensor.nbytes = tensor.nbytes();
    } else if (value.isInt()) {
        plain.kind = PlainValue::Kind::Int;
        plain.intValue = value.toInt();
    } else if (value.isDouble()) {
        plain.kind = PlainValue::Kind::Double;
        plain.doubleValue = value.toDouble();
    } else if (value.isBool()) {
        plain.kind = PlainValue::Kind::Bool;
        plain.boolValue = value.toBool();
    } else if (!value.isNone()) {
        return Error{ErrorKind::Input, what + " is " + value.tagKind() +
                                           ": an ExecuTorch method takes tensors and scalars"};
    }
    return plain;
}

// Input `index` as the method's plan describes it: a tensor of its shape and dtype (random when
// floating, seeded by its position), a scalar its value.
Expected<PlainValue> planValue(const PtePlan& plan, size_t index, std::vector<at::Tensor>& keep,
                               std::vector<std::string>& descriptions) {
    const PteValue& meta = plan.values[static_cast<size_t>(plan.inputs[index])];
    c10::IValue value;
    std::string description;
    switch (meta.kind) {
    case PteValue::Kind::Tensor: {
        value = planInput(meta.tensor, index);
        const bool floating =
            c10::isFloatingType(static_cast<c10::ScalarType>(meta.tensor.scalarType));
        description = (floating ? "random " : "zeros ") + meta.tensor.text() +
                      " (the method's input " + std::to_string(index) + ")";
        break;
    }
    case PteValue::Kind::Int:
        value = meta.intValue;
        description = std::to_string(meta.intValue);
        break;
    case PteValue::Kind::Double:
        value = meta.doubleValue;
        description = std::to_string(meta.doubleValue);
        break;
    case PteValue::Kind::Bool:
        value = meta.boolValue;
        description = meta.boolValue ? "True" : "False";
        break;
    default:
        description = "None";
        break;
    }
    descriptions.push_back(description);
    return plainOf(value, keep, "input " + std::to_string(index));
}

c10::IValue ivalueOf(const PlainValue& value) {
    switch (value.kind) {
    case PlainValue::Kind::Tensor: {
        const PlainTensor& t = value.tensor;
        const auto options = at::TensorOptions().dtype(static_cast<c10::ScalarType>(t.scalarType));
        return at::from_blob(t.data, t.sizes, t.strides, options).clone();
    }
    case PlainValue::Kind::Int:
        return value.intValue;
    case PlainValue::Kind::Double:
        return value.doubleValue;
    case PlainValue::Kind::Bool:
        return value.boolValue;
    case PlainValue::Kind::String:
    case PlainValue::Kind::Other:
        return value.text;
    case PlainValue::Kind::None:
        break;
    }
    return c10::IValue();
}

c10::IValue outputOf(const std::vector<PlainValue>& outputs) {
    std::vector<c10::IValue> values;
    for (const PlainValue& value : outputs) {
        values.push_back(ivalueOf(value));
    }
    return values.size() == 1 ? values.front() : c10::ivalue::Tuple::create(std::move(values));
}

} // namespace

struct PteSession::Impl {
    const ExecuTorchProgram& program;
    std::unique_ptr<PteRuntime> runtime; // opened on the first run
    const EtRecord* record = nullptr;    // the program's ETRecord, when there is one

    explicit Impl(const ExecuTorchProgram& p)
        : program(p) {}

    const std::string& path() const { return program.info().path; }

    Expected<const PtePlan*> plan(const std::string& method) const {
        for (const PtePlan& plan : program.program().plans) {
            if (plan.name == method) {
                return &plan;
            }
        }
        return Error{ErrorKind::Input, "'" + path() + "' has no method '" + method + "'"};
    }

    // The request's inputs as plain values (the tensors they point into kept in `keep`).
    Expected<std::vector<PlainValue>> inputs(const RunRequest& request, const PtePlan& plan,
                                             std::vector<at::Tensor>& keep,
                                             std::vector<std::string>& descriptions) const {
        std::vector<PlainValue> plain;
        try {
            if (request.inputs.empty() && request.inputsFile.empty()) {
                // Nothing given: what the execution plan says each input is.
                for (size_t i = 0; i < plan.inputs.size(); ++i) {
                    auto p = planValue(plan, i, keep, descriptions);
                    if (!p) {
                        return p.error();
                    }
                    plain.push_back(*p);
                }
                return plain;
            }
            if (!request.inputsFile.empty()) {
                auto value = detail::loadValueFile(request.inputsFile);
                if (!value) {
                    return value.error();
                }
                const std::vector<c10::IValue> values =
                    value->isTuple()  ? value->toTupleRef().elements().vec()
                    : value->isList() ? value->toListRef().vec()
                                      : std::vector<c10::IValue>{*value};
                for (size_t i = 0; i < values.size(); ++i) {
                    auto p = plainOf(values[i], keep,
                                     "input " + std::to_string(i) + " of " + request.inputsFile);
                    if (!p) {
                        return p.error();
                    }
                    plain.push_back(*p);
                }
                descriptions.push_back("from " + request.inputsFile);
            }
            for (size_t position = 0; position < request.inputs.size(); ++position) {
                const InputSpec& spec = request.inputs[position];
                if (spec.kind == InputSpec::Kind::Sample) {
                    const size_t index =
                        spec.intValue < 0 ? position : static_cast<size_t>(spec.intValue);
                    if (index >= plan.inputs.size()) {
                        return Error{ErrorKind::Input,
                                     plan.name + " takes " + std::to_string(plan.inputs.size()) +
                                         " inputs, none in position " + std::to_string(index)};
                    }
                    auto p = planValue(plan, index, keep, descriptions);
                    if (!p) {
                        return p.error();
                    }
                    plain.push_back(*p);
                    continue;
                }
                auto value =
                    detail::buildInput(spec, request.frame.data ? &request.frame : nullptr);
                if (!value) {
                    return value.error();
                }
                auto p = plainOf(*value, keep, spec.describe());
                if (!p) {
                    return p.error();
                }
                plain.push_back(*p);
                descriptions.push_back(spec.describe());
            }
        } catch (const std::exception& error) {
            return detail::errorFromException(error, ErrorKind::Input);
        }
        return plain;
    }

    Status open() {
        if (runtime) {
            return std::nullopt;
        }
        auto opened = PteRuntime::open(path());
        if (!opened) {
            return opened.error();
        }
        runtime = std::move(opened).value();
        return std::nullopt;
    }
};

PteSession::PteSession(const ExecuTorchProgram& program, const EtRecord* record)
    : impl_(std::make_unique<Impl>(program)) {
    impl_->record = record;
}

PteSession::~PteSession() = default;

Expected<RunResult> PteSession::run(const RunRequest& request) {
    if (request.iterations < 1 || request.warmup < 0) {
        return Error{ErrorKind::Input, "iterations must be at least 1 and warm-up at least 0"};
    }
    if (request.device != "cpu") {
        return Error{ErrorKind::Device, "ExecuTorch runs '" + impl_->path() +
                                            "' on the CPU (its kernels and the "
                                            "XNNPACK delegate), not on " +
                                            request.device};
    }
    auto plan = impl_->plan(request.method);
    if (!plan) {
        return plan.error();
    }
    if (auto error = impl_->open()) {
        return *error;
    }
    if (auto error = impl_->runtime->load(request.method)) {
        return *error;
    }
    RunResult result;
    result.model = impl_->path();
    result.method = request.method;
    result.device = "cpu";
    result.deviceName = "ExecuTorch " + PteRuntime::version() + " on the CPU";
    result.warmup = request.warmup;
    std::vector<at::Tensor> keep;
    auto inputs = impl_->inputs(request, **plan, keep, result.inputDescriptions);
    if (!inputs) {
        return inputs.error();
    }
    Expected<std::vector<PlainValue>> outputs = std::vector<PlainValue>{};
    for (int i = 0; i < request.warmup; ++i) {
        outputs = impl_->runtime->execute(request.method, *inputs);
        if (!outputs) {
            return outputs.error();
        }
    }
    result.samplesMs.reserve(static_cast<size_t>(request.iterations));
    for (int i = 0; i < request.iterations; ++i) {
        const auto start = std::chrono::steady_clock::now();
        outputs = impl_->runtime->execute(request.method, *inputs);
        result.samplesMs.push_back(detail::elapsedMs(start));
        if (!outputs) {
            return outputs.error();
        }
    }
    result.stats = computeStats(result.samplesMs);
    try {
        const c10::IValue output = outputOf(*outputs); // copied before any other run
        result.output = detail::describeOutput(output, request.previewValues, request.valuesLimit);
        if (!request.saveOutputsPath.empty()) {
            if (auto error = detail::saveValueFile(output, request.saveOutputsPath)) {
                return *error;
            }
        }
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Model);
    }
    if (request.profile) {
        auto traced = trace(request, 0);
        if (!traced) {
            return traced.error();
        }
        auto dump = readEtdump(std::string_view(
            reinterpret_cast<const char*>(traced->etdump.data()), traced->etdump.size()));
        if (!dump) {
            return dump.error();
        }
        auto profile = profileOfEtdump(*dump, impl_->program, request.method, 1, impl_->record);
        if (!profile) {
            return profile.error();
        }
        result.profile = std::move(profile->profile);
        result.profiled = true;
    }
    return result;
}

Expected<PteTrace> PteSession::trace(const RunRequest& request, size_t debugBufferBytes) {
    auto plan = impl_->plan(request.method);
    if (!plan) {
        return plan.error();
    }
    // A runtime of its own: the timed one keeps no tracer, so its runs pay for none.
    PteTraceOptions options;
    options.debugBufferBytes = debugBufferBytes;
    auto traced = PteRuntime::open(impl_->path(), &options);
    if (!traced) {
        return traced.error();
    }
    std::vector<at::Tensor> keep;
    std::vector<std::string> descriptions;
    auto inputs = impl_->inputs(request, **plan, keep, descriptions);
    if (!inputs) {
        return inputs.error();
    }
    // One run to warm the delegates up (XNNPACK packs its weights on the first), then the one
    // the profile is of: the last block of the dump.
    for (int i = 0; i < 2; ++i) {
        auto outputs = (*traced)->execute(request.method, *inputs);
        if (!outputs) {
            return outputs.error();
        }
    }
    return (*traced)->takeTrace();
}

} // namespace scriptscope
