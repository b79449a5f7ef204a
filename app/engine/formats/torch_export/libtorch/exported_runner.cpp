// AOTInductor packages run through torch::inductor::AOTIModelPackageLoader (exported_runner.h).
#include "exported_runner.h"
#include "engine_internal.h"
#include "exported_interpreter.h"
#include "torch_values.h"

#include <scratch_file.h>

#include <schema.h>
#include <stats.h>
#include <zip_reader.h>

#include <torch/torch.h>

#if __has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#define SCRIPTSCOPE_HAS_AOTI 1
#endif

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>

namespace scriptscope {

// A .pt2's example inputs are read whole; larger ones are refused.
constexpr uint64_t kMaxSampleInputBytes = uint64_t{1} << 30;

struct ExportedRunner::Impl {
#ifdef SCRIPTSCOPE_HAS_AOTI
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
#endif
    std::string path;
    std::string deviceType; // what it was compiled for
    double loadMs = 0;
    std::optional<std::vector<ExportedRunner::ExpectedInput>> expected;
    std::string samplesPath, samplesRecord;          // where the example inputs are
    std::optional<std::vector<c10::IValue>> samples; // its arguments, then its kwargs' values
    size_t sampleArguments = 0;                      // how many of them are positional
    // A plain exported program, run by the interpreter (prepared for one device at a time).
    const ExportedProgram* program = nullptr;
    std::unique_ptr<detail::ExportedInterpreter> interpreter;

    Status loadSamples();
    // The request's tensors (the samples, a file, specs), checked against what the model
    // expects; how each was given goes to `descriptions`.
    Expected<std::vector<at::Tensor>> gather(const RunRequest& request,
                                             std::vector<std::string>& descriptions);
    // The program's interpreter prepared for `device` (its graph checked, its weights there).
    Status interpretOn(const torch::Device& device);
    // For the interpreter's observed runs: the request's inputs on its device, the interpreter
    // prepared there.
    Expected<std::vector<c10::IValue>> interpretedInputs(const RunRequest& request);
};

namespace {

// A value's tensors in pytree order (tuples and lists in order, dicts in insertion order), the
// way torch.export flattens a model's inputs for the compiled code.
Status flattenTensors(const c10::IValue& value, const std::string& what,
                      std::vector<at::Tensor>& out, int depth = 0) {
    if (depth > 32) {
        return Error{ErrorKind::Input, what + " is nested too deeply"};
    }
    if (value.isTensor()) {
        out.push_back(value.toTensor());
    } else if (value.isTuple() || value.isList()) {
        const auto elements =
            value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        for (size_t i = 0; i < elements.size(); ++i) {
            if (auto error = flattenTensors(elements[i], what + "[" + std::to_string(i) + "]", out,
                                            depth + 1)) {
                return error;
            }
        }
    } else if (value.isGenericDict()) {
        for (const auto& entry : value.toGenericDict()) {
            if (auto error = flattenTensors(entry.value(), what, out, depth + 1)) {
                return error;
            }
        }
    } else {
        return Error{ErrorKind::Input,
                     what + " is " + value.tagKind() + ": a compiled model takes tensors only"};
    }
    return std::nullopt;
}

} // namespace

namespace {

std::string shapeText(const at::Tensor& t) {
    std::string text;
    for (int64_t i = 0; i < t.dim(); ++i) {
        text += (i ? "x" : "") + std::to_string(t.size(i));
    }
    return (text.empty() ? std::string("scalar") : text) + " " + detail::dtypeName(t.scalar_type());
}

std::string expectedText(const ExportedRunner::ExpectedInput& input) {
    std::string sizes;
    for (size_t i = 0; i < input.sizes.size(); ++i) {
        sizes += (i ? ", " : "") + input.sizes[i];
    }
    std::string ranges;
    for (const auto& size : input.sizes) {
        const auto range = input.ranges.find(size);
        if (range != input.ranges.end() && ranges.find(size + " in") == std::string::npos) {
            const bool open = range->second.second == std::numeric_limits<int64_t>::max();
            ranges += (ranges.empty() ? " with " : ", ") + size + " in [" +
                      std::to_string(range->second.first) + ", " +
                      (open ? std::string("inf") : std::to_string(range->second.second)) + "]";
        }
    }
    return input.dtype + "[" + sizes + "]" + ranges;
}

// The inputs against what the compiled code was made for: count, dtype, rank, every static size,
// and each plain symbol's range.
Status checkInputs(const std::vector<at::Tensor>& inputs,
                   const std::vector<ExportedRunner::ExpectedInput>& expected) {
    if (inputs.size() != expected.size()) {
        return Error{ErrorKind::Input, "the model takes " + std::to_string(expected.size()) +
                                           " tensors, not " + std::to_string(inputs.size())};
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto& want = expected[i];
        const at::Tensor& t = inputs[i];
        if (want.dtype.empty()) {
            continue;
        }
        const std::string where = "input " + std::to_string(i) + " (" + want.name + ") is " +
                                  shapeText(t) + ": the model takes " + expectedText(want);
        bool fits = detail::dtypeName(t.scalar_type()) == want.dtype &&
                    t.dim() == static_cast<int64_t>(want.sizes.size());
        std::map<std::string, int64_t> bound;
        for (size_t d = 0; fits && d < want.sizes.size(); ++d) {
            const std::string& size = want.sizes[d];
            const int64_t actual = t.size(static_cast<int64_t>(d));
            if (!size.empty() && std::all_of(size.begin(), size.end(), ::isdigit)) {
                fits = std::stoll(size) == actual;
            } else if (const auto range = want.ranges.find(size); range != want.ranges.end()) {
                fits = actual >= range->second.first && actual <= range->second.second;
                const auto seen = bound.emplace(size, actual);
                fits = fits && seen.first->second == actual; // one symbol, one size
            }
        }
        if (!fits) {
            return Error{ErrorKind::Input, where};
        }
    }
    return std::nullopt;
}

} // namespace

void ExportedRunner::expectInputs(std::vector<ExpectedInput> inputs) {
    impl_->expected = std::move(inputs);
}

void ExportedRunner::sampleInputsFrom(const std::string& path, const std::string& record) {
    impl_->samplesPath = path;
    impl_->samplesRecord = record;
    impl_->samples.reset();
}

namespace {

// The archive's data/sample_inputs record: a torch.save file inside the .pt2, read through a
// copy in the temporary folder (the worker's is its scratch folder).
Expected<c10::IValue> readSampleRecord(const std::string& path, const std::string& name) {
    const ZipReader zip(path);
    const ArchiveRecord* record = zip.ok() ? zip.find(name) : nullptr;
    const auto bytes = record ? zip.read(*record, kMaxSampleInputBytes) : std::nullopt;
    if (!bytes) {
        return Error{ErrorKind::Format, "cannot read the sample inputs '" + name + "' of '" + path +
                                            "' (compressed, damaged or over 1 GiB)"};
    }
    ScratchFile copy("sample");
    if (auto error = copy.write(bytes->data(), bytes->size())) {
        error->message += " to read the sample inputs of '" + path + "'";
        return *error;
    }
    auto value = detail::loadValueFile(copy.path());
    if (!value) {
        Error e = value.error();
        e.message = "the sample inputs of '" + path + "': " + e.message;
        return e;
    }
    return value;
}

} // namespace

Status ExportedRunner::Impl::loadSamples() {
    if (samples) {
        return std::nullopt;
    }
    if (samplesRecord.empty()) {
        return Error{ErrorKind::Input, "'" + path +
                                           "' keeps no sample inputs (data/sample_inputs): give "
                                           "the model's inputs"};
    }
    auto value = readSampleRecord(samplesPath, samplesRecord);
    if (!value) {
        return value.error();
    }
    // torch.export saves (args, kwargs).
    const bool pair = value->isTuple() && value->toTupleRef().elements().size() == 2 &&
                      value->toTupleRef().elements()[0].isTuple() &&
                      value->toTupleRef().elements()[1].isGenericDict();
    if (!pair) {
        return Error{ErrorKind::Format, "the sample inputs of '" + samplesPath +
                                            "' are not the (args, kwargs) torch.export saves"};
    }
    std::vector<c10::IValue> values =
        value->toTupleRef().elements()[0].toTupleRef().elements().vec();
    sampleArguments = values.size();
    for (const auto& entry : value->toTupleRef().elements()[1].toGenericDict()) {
        values.push_back(entry.value());
    }
    samples = std::move(values);
    return std::nullopt;
}

Status ExportedRunner::saveSampleInputs(const std::string& path) {
    if (auto error = impl_->loadSamples()) {
        return error;
    }
    if (impl_->samples->size() != impl_->sampleArguments) {
        return Error{ErrorKind::Input, "the sample inputs of '" + impl_->samplesPath +
                                           "' include keyword arguments: give the inputs"};
    }
    return detail::saveValueFile(c10::ivalue::Tuple::create(*impl_->samples), path);
}

ExportedRunner::ExportedRunner()
    : impl_(std::make_unique<Impl>()) {}
ExportedRunner::~ExportedRunner() = default;

bool ExportedRunner::supported() {
#ifdef SCRIPTSCOPE_HAS_AOTI
    return true;
#else
    return false;
#endif
}

bool ExportedRunner::opened() const {
#ifdef SCRIPTSCOPE_HAS_AOTI
    if (impl_->loader) {
        return true;
    }
#endif
    return impl_->program != nullptr;
}

bool ExportedRunner::interprets() const {
    return impl_->program != nullptr;
}

void ExportedRunner::interpret(const ExportedProgram& program) {
    impl_->program = &program;
    impl_->interpreter.reset();
    impl_->path = program.info().path;
}

double ExportedRunner::loadMilliseconds() const {
    return impl_->loadMs;
}

Status ExportedRunner::open(const std::string& path, const std::string& name,
                            const std::string& device) {
#ifdef SCRIPTSCOPE_HAS_AOTI
    const auto start = std::chrono::steady_clock::now();
    try {
        impl_->loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(path, name);
    } catch (const std::exception& error) {
        Error e = detail::errorFromException(error, ErrorKind::Format);
        e.message = "cannot load the compiled model '" + name + "' of '" + path + "': " + e.message;
        return e;
    }
    impl_->loadMs = detail::elapsedMs(start);
    impl_->path = path;
    impl_->deviceType = device.empty() ? std::string("cpu") : device;
    return std::nullopt;
#else
    (void)name;
    (void)device;
    return Error{ErrorKind::Version,
                 "'" + path + "' holds a model compiled by AOTInductor; LibTorch " +
                     libtorchVersion() +
                     " cannot run one (AOTIModelPackageLoader came with PyTorch 2.6). Open it with "
                     "a ScriptScope built on PyTorch 2.x (scripts/setup.sh --torch-venv)."};
#endif
}

Status ExportedRunner::Impl::interpretOn(const torch::Device& device) {
    if (interpreter && interpreter->device() == device) {
        return std::nullopt;
    }
    const auto start = std::chrono::steady_clock::now();
    auto prepared = detail::ExportedInterpreter::prepare(*program, device);
    if (!prepared) {
        return prepared.error();
    }
    interpreter = std::move(prepared).value();
    loadMs = detail::elapsedMs(start);
    return std::nullopt;
}

Expected<std::vector<at::Tensor>>
ExportedRunner::Impl::gather(const RunRequest& request, std::vector<std::string>& descriptions) {
    std::vector<at::Tensor> inputs;
    const auto take = [&inputs](const c10::IValue& value, const std::string& what) -> Status {
        if (!value.isTensor()) {
            return Error{ErrorKind::Input, what + " is " + value.tagKind() +
                                               ": an exported model takes tensors only"};
        }
        inputs.push_back(value.toTensor());
        return std::nullopt;
    };
    if (request.inputs.empty() && request.inputsFile.empty()) {
        // Nothing given: the inputs it was exported with, when the archive keeps them.
        if (auto error = loadSamples()) {
            return *error;
        }
        for (size_t i = 0; i < samples->size(); ++i) {
            if (auto error =
                    flattenTensors((*samples)[i], "sample input " + std::to_string(i), inputs)) {
                return *error;
            }
        }
        descriptions.push_back("the archive's sample inputs");
    }
    if (!request.inputsFile.empty()) {
        auto value = detail::loadValueFile(request.inputsFile);
        if (!value) {
            return value.error();
        }
        std::vector<c10::IValue> values = value->isTuple()  ? value->toTupleRef().elements().vec()
                                          : value->isList() ? value->toListRef().vec()
                                                            : std::vector<c10::IValue>{*value};
        for (size_t i = 0; i < values.size(); ++i) {
            if (auto error = flattenTensors(
                    values[i], "input " + std::to_string(i) + " of " + request.inputsFile,
                    inputs)) {
                return *error;
            }
        }
        descriptions.push_back("from " + request.inputsFile);
    }
    for (size_t position = 0; position < request.inputs.size(); ++position) {
        const InputSpec& spec = request.inputs[position];
        if (spec.kind == InputSpec::Kind::Sample) {
            if (auto error = loadSamples()) {
                return *error;
            }
            const size_t index = spec.intValue < 0 ? position : static_cast<size_t>(spec.intValue);
            if (index >= samples->size()) {
                return Error{ErrorKind::Input,
                             "the archive keeps " + std::to_string(samples->size()) +
                                 " sample inputs, none for argument " + std::to_string(index)};
            }
            if (auto error = flattenTensors((*samples)[index], spec.describe(), inputs)) {
                return *error;
            }
            descriptions.push_back(spec.describe());
            continue;
        }
        auto value = detail::buildInput(spec, request.frame.data ? &request.frame : nullptr);
        if (!value) {
            return value.error();
        }
        if (auto error = take(*value, spec.describe())) {
            return *error;
        }
        descriptions.push_back(spec.describe());
    }
    if (expected) {
        if (auto error = checkInputs(inputs, *expected)) {
            return *error;
        }
    }
    return inputs;
}

Expected<std::vector<c10::IValue>>
ExportedRunner::Impl::interpretedInputs(const RunRequest& request) {
    if (!program) {
        return Error{ErrorKind::Format,
                     "'" + path +
                         "': AOTInductor's compiled code runs as one call: it has no "
                         "values to inspect or compare (its exported program has)"};
    }
    if (request.method != "forward") {
        return Error{ErrorKind::Input,
                     "an exported program has one method, forward, not " + request.method};
    }
    auto device = detail::parseDevice(request.device);
    if (!device) {
        return device.error();
    }
    if (auto error = interpretOn(*device)) {
        return *error;
    }
    std::vector<std::string> descriptions;
    auto inputs = gather(request, descriptions);
    if (!inputs) {
        return inputs.error();
    }
    std::vector<c10::IValue> values;
    try {
        for (const at::Tensor& input : *inputs) {
            values.emplace_back(input.to(*device).contiguous());
        }
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Device);
    }
    return values;
}

Expected<ActivationReport> ExportedRunner::activations(const ActivationRequest& request) {
    auto inputs = impl_->interpretedInputs(request.run);
    if (!inputs) {
        return inputs.error();
    }
    return detail::interpretedActivations(*impl_->program, *impl_->interpreter, *inputs, request);
}

Expected<std::shared_ptr<const ModuleValues>>
ExportedRunner::moduleOutputs(const RunRequest& request) {
    auto inputs = impl_->interpretedInputs(request);
    if (!inputs) {
        return inputs.error();
    }
    return detail::interpretedModuleOutputs(*impl_->program, *impl_->interpreter, *inputs);
}

Expected<RunResult> ExportedRunner::run(const RunRequest& request) {
    if (!opened()) {
        return Error{ErrorKind::Internal, "no compiled model is loaded"};
    }
    if (request.iterations < 1 || request.warmup < 0) {
        return Error{ErrorKind::Input, "iterations must be at least 1 and warm-up at least 0"};
    }
    if (request.method != "forward") {
        return Error{ErrorKind::Input,
                     "a compiled model has one method, forward, not " + request.method};
    }
    auto device = detail::parseDevice(request.device);
    if (!device) {
        return device.error();
    }
    if (!impl_->program &&
        c10::DeviceTypeName(device->type(), /*lower_case=*/true) != impl_->deviceType) {
        return Error{ErrorKind::Device, "'" + impl_->path + "' was compiled by AOTInductor for " +
                                            impl_->deviceType + " and runs only there, not on " +
                                            device->str() + ": compile it again for that device"};
    }
    // The whole graph checked (and the weights read) before anything else of the run.
    if (impl_->program) {
        if (auto error = impl_->interpretOn(*device)) {
            return *error;
        }
    }
    RunResult result;
    result.model = impl_->path;
    result.method = request.method;
    result.device = device->str();
    result.deviceName =
        device->is_cuda() ? detail::cudaDeviceName(device->index(), nullptr) : "CPU";
    result.warmup = request.warmup;
    auto gathered = impl_->gather(request, result.inputDescriptions);
    if (!gathered) {
        return gathered.error();
    }
    std::vector<at::Tensor> inputs = std::move(gathered).value();
    const std::string what = impl_->program ? "the exported program" : "the compiled model";
    try {
        for (auto& input : inputs) {
            input = input.to(*device).contiguous();
        }
        c10::InferenceMode inferenceMode;
        const std::vector<c10::IValue> arguments(inputs.begin(), inputs.end());
        std::vector<ControlFlowRun> flow; // the last call's
        const auto call = [&]() -> c10::IValue {
            std::vector<c10::IValue> outputs;
            if (impl_->interpreter) {
                outputs = impl_->interpreter->run(arguments, {}, &flow);
            } else {
#ifdef SCRIPTSCOPE_HAS_AOTI
                const std::vector<at::Tensor> tensors = impl_->loader->run(inputs);
                outputs.assign(tensors.begin(), tensors.end());
#endif
            }
            if (impl_->program && impl_->program->hasProgram()) {
                return detail::programOutput(impl_->program->program(), std::move(outputs));
            }
            return outputs.size() == 1 ? outputs.front()
                                       : c10::ivalue::Tuple::create(std::move(outputs));
        };
        c10::IValue output;
        for (int i = 0; i < request.warmup; ++i) {
            output = call();
        }
        detail::synchronize(*device);
        result.synchronized = device->is_cuda();
        result.samplesMs.reserve(static_cast<size_t>(request.iterations));
        for (int i = 0; i < request.iterations; ++i) {
            const auto start = std::chrono::steady_clock::now();
            output = call();
            detail::synchronize(*device);
            result.samplesMs.push_back(detail::elapsedMs(start));
        }
        result.stats = computeStats(result.samplesMs);
        if (request.profile && impl_->interpreter) {
            // One more call with every operator timed, by operator and by the module of its node.
            result.profile = detail::profileOperators(
                [&]() {
                    output = call();
                    detail::synchronize(*device);
                },
                device->is_cuda() ? std::max<int>(0, device->index()) : -1);
            result.profiled = true;
        }
        result.output = detail::describeOutput(output, request.previewValues, request.valuesLimit);
        for (ControlFlowRun& f : flow) {
            f.graphNode = impl_->program->graphNodeOf(f.node);
        }
        result.controlFlow = std::move(flow);
        if (!request.saveOutputsPath.empty()) {
            if (auto error = detail::saveValueFile(output, request.saveOutputsPath)) {
                return *error;
            }
        }
    } catch (const std::exception& error) {
        Error e = detail::errorFromException(error, ErrorKind::Model);
        e.message = what + " failed: " + e.message;
        return e;
    }
    return result;
}

Expected<RunResult> runExported(const ExportedProgram& program, ExportedRunner& compiled,
                                const RunRequest& request) {
    if (!program.compiled() && !program.hasProgram()) {
        return Error{ErrorKind::Format,
                     "'" + program.info().path + "' holds neither a program nor a compiled model"};
    }
    if (auto error = openExported(program, compiled)) {
        return *error;
    }
    return compiled.run(request);
}

Status openExported(const ExportedProgram& program, ExportedRunner& compiled) {
    const std::string& path = program.info().path;
    const Pt2CompiledModel* model = program.compiled();
    if (!compiled.opened()) {
        // The inputs the program was exported for; a compiled model alone names only its inputs.
        std::vector<ExportedRunner::ExpectedInput> expected;
        if (program.hasProgram()) {
            const Pt2Model& exported = program.program();
            for (const Pt2SignatureEntry& entry : exported.inputs) {
                if (entry.kind != "USER_INPUT") {
                    continue;
                }
                ExportedRunner::ExpectedInput input;
                input.name = entry.name;
                if (const auto meta = exported.tensors.find(entry.name);
                    meta != exported.tensors.end()) {
                    input.dtype = meta->second.dtype;
                    input.sizes = meta->second.sizes;
                }
                for (const auto& [symbol, range] : exported.rangeConstraints) {
                    // "VR[2, 64]"; an open end (int_oo) is no bound
                    int64_t low = 0, high = 0;
                    if (std::sscanf(range.c_str(), "VR[%ld, %ld]", &low, &high) == 2) {
                        input.ranges[symbol] = {low, high};
                    } else if (std::sscanf(range.c_str(), "VR[%ld,", &low) == 1) {
                        input.ranges[symbol] = {low, std::numeric_limits<int64_t>::max()};
                    }
                }
                expected.push_back(std::move(input));
            }
        } else {
            for (const SchemaArgument& argument :
                 schemaArguments(program.info().modules.front().methods.front().schema)) {
                expected.push_back({argument.name, {}, {}, {}});
            }
        }
        compiled.expectInputs(std::move(expected));
        if (program.hasProgram() && program.program().sampleInputs) {
            compiled.sampleInputsFrom(path, program.program().sampleInputsRecord);
        }
        if (!model) {
            // No compiled model: the interpreter runs the program's graph.
            compiled.interpret(program);
            return std::nullopt;
        }
        const auto device = model->metadata.find("AOTI_DEVICE_KEY");
        if (auto error = compiled.open(path, model->name,
                                       device == model->metadata.end() ? "cpu" : device->second)) {
            return *error;
        }
    }
    return std::nullopt;
}

} // namespace scriptscope
