#include "session.h"
#include "graph_builder.h"
#include "library_check.h"
#include "probe.h"
#include "session_internal.h"
#include "stats.h"
#include "torch_compat.h"
#include "torch_values.h"

#include <warp_perspective.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/python_print.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <unordered_map>

namespace scriptscope {

namespace {

using detail::elapsedMs;
using detail::errorFromException;
using detail::knownOperatorLibrary;

TensorInfo tensorInfo(const std::string& name, const torch::Tensor& tensor) {
    TensorInfo info;
    info.name = name;
    if (!tensor.defined()) {
        info.dtype = "undefined";
        return info;
    }
    info.shape = tensor.sizes().vec();
    info.dtype = detail::dtypeName(tensor.scalar_type());
    info.device = tensor.device().str();
    info.bytes =
        static_cast<uint64_t>(tensor.numel()) * static_cast<uint64_t>(tensor.element_size());
    info.requiresGrad = tensor.requires_grad();
    if (tensor.is_quantized()) {
        const auto scheme = tensor.qscheme();
        info.qscheme = c10::toString(scheme);
        if (scheme == c10::kPerTensorAffine || scheme == c10::kPerTensorSymmetric) {
            info.scale = tensor.q_scale();
            info.zeroPoint = tensor.q_zero_point();
        } else if (scheme == c10::kPerChannelAffine || scheme == c10::kPerChannelSymmetric ||
                   scheme == c10::kPerChannelAffineFloatQParams) {
            const auto scales = tensor.q_per_channel_scales().to(torch::kFloat64).contiguous();
            const auto points = tensor.q_per_channel_zero_points().to(torch::kInt64).contiguous();
            info.scales.assign(scales.data_ptr<double>(),
                               scales.data_ptr<double>() + scales.numel());
            info.zeroPoints.assign(points.data_ptr<int64_t>(),
                                   points.data_ptr<int64_t>() + points.numel());
            info.axis = tensor.q_per_channel_axis();
        }
    }
    return info;
}

std::string methodCode(const torch::jit::Method& method) {
    // What Python's ScriptMethod.code does.
    std::vector<c10::IValue> constants;
    torch::jit::PrintDepsTable deps;
    torch::jit::PythonPrint printer(constants, deps);
    printer.printMethod(method.function());
    return printer.str();
}

} // namespace

const Session::Impl::Inlined& Session::Impl::inlined(const torch::jit::Method& method) const {
    Inlined& inlined = inlinedGraphs[&method.function()];
    if (!inlined.graph) {
        // What Python's ScriptMethod.inlined_graph does (and buildGraphModel, value_tap and
        // graph_shapes do: the same node ids and value names).
        inlined.graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
        torch::jit::Inline(*inlined.graph);
        inlined.text = inlined.graph->toString();
    }
    return inlined;
}

namespace {

// Modules of the same type share their methods' Functions, so their code and graph text are the
// same: print each Function once (ResNet-18 has 60 modules but a dozen types).
struct MethodText {
    std::string schema, code, graph;
};
using MethodTextCache = std::unordered_map<const torch::jit::Function*, MethodText>;

ModuleInfo moduleInfo(const std::string& path, const torch::jit::Module& module, bool includeCode,
                      MethodTextCache& cache) {
    ModuleInfo info;
    info.path = path;
    const auto dot = path.rfind('.');
    info.name = dot == std::string::npos ? path : path.substr(dot + 1);
    const auto& type = module.type();
    info.type = type->name() ? type->name()->qualifiedName() : type->str();
    for (const auto& p : module.named_parameters(/*recurse=*/false)) {
        info.parameters.push_back(tensorInfo(p.name, p.value));
        info.parameterCount += static_cast<uint64_t>(p.value.numel());
        info.parameterBytes += info.parameters.back().bytes;
    }
    for (const auto& b : module.named_buffers(/*recurse=*/false)) {
        info.buffers.push_back(tensorInfo(b.name, b.value));
    }
    for (const auto& [attribute, packed] : detail::packedTensors(module)) {
        auto t = tensorInfo(packed.name, packed.tensor);
        t.packed = true;
        t.packedIn = attribute;
        info.parameters.push_back(t);
        info.parameterCount += static_cast<uint64_t>(packed.tensor.numel());
        info.parameterBytes += t.bytes;
    }
    const auto object = module._ivalue();
    for (size_t slot = 0; slot < type->numAttributes(); ++slot) {
        const auto& attributeType = type->getAttribute(slot);
        if (type->is_parameter(slot) || type->is_buffer(slot)) {
            continue;
        }
        if (const auto classType = attributeType->cast<c10::ClassType>();
            classType && classType->is_module()) {
            continue;
        }
        info.attributes.push_back({type->getAttributeName(slot), attributeType->annotation_str(),
                                   detail::previewValue(object->getSlot(slot))});
    }
    for (const auto& method : module.get_methods()) {
        auto [text, added] = cache.try_emplace(&method.function());
        if (added) {
            std::ostringstream schema;
            schema << method.function().getSchema();
            text->second.schema = schema.str();
            if (includeCode) {
                text->second.code = methodCode(method);
                text->second.graph = method.graph()->toString();
            }
        }
        info.methods.push_back({method.name(),
                                text->second.schema,
                                text->second.code,
                                text->second.graph,
                                {},
                                false,
                                {}});
    }
    for (const auto& child : module.named_children()) {
        info.children.push_back(path.empty() ? child.name : path + "." + child.name);
    }
    return info;
}

Expected<torch::jit::Module> findModule(const torch::jit::Module& root, const std::string& path) {
    if (path.empty()) {
        return root;
    }
    for (const auto& entry : root.named_modules()) {
        if (entry.name == path) {
            return entry.value;
        }
    }
    std::string known;
    for (const auto& entry : root.named_modules()) {
        if (!entry.name.empty()) {
            known += (known.empty() ? "" : ", ") + entry.name;
        }
    }
    return Error{ErrorKind::Input,
                 "the model has no submodule '" + path + "'" +
                     (known.empty() ? std::string(" (it has none)") : "; it has: " + known),
                 {}};
}

Expected<torch::jit::Method> findMethod(const torch::jit::Module& module, const std::string& path,
                                        const std::string& name) {
    if (auto method = module.find_method(name)) {
        return *method;
    }
    std::string known;
    for (const auto& method : module.get_methods()) {
        known += (known.empty() ? "" : ", ") + method.name();
    }
    return Error{ErrorKind::Input,
                 "the module '" + (path.empty() ? std::string("<root>") : path) +
                     "' has no method '" + name + "'" +
                     (known.empty() ? std::string(" (it has none)") : "; it has: " + known),
                 {}};
}

// Catches a mismatch between the inputs and the schema before running, naming the argument and
// the element; refines each input to its argument's type (a list read from a file as List[Any]
// becomes the List[Tensor] the argument takes).
Status conformInputs(const c10::FunctionSchema& schema, std::vector<c10::IValue>& inputs) {
    const auto& arguments = schema.arguments();
    const size_t first = !arguments.empty() && arguments[0].name() == "self" ? 1 : 0;
    const size_t declared = arguments.size() - first;
    size_t required = 0;
    for (size_t i = first; i < arguments.size(); ++i) {
        if (!arguments[i].default_value()) {
            required = i - first + 1;
        }
    }
    auto signature = [&]() {
        std::string s;
        for (size_t i = first; i < arguments.size(); ++i) {
            s += (i > first ? ", " : "") + arguments[i].name() + ": " +
                 arguments[i].type()->annotation_str();
        }
        return schema.name() + "(" + s + ")";
    };
    if (inputs.size() < required || inputs.size() > declared) {
        return Error{ErrorKind::Input,
                     std::to_string(inputs.size()) + " input(s) given, but " + signature() +
                         (required == declared ? " takes " + std::to_string(declared)
                                               : " takes " + std::to_string(required) + " to " +
                                                     std::to_string(declared)),
                     {}};
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto& argument = arguments[first + i];
        auto conformed = detail::conformToType(inputs[i], argument.type(), argument.name());
        if (!conformed) {
            std::string message = "argument '" + argument.name() + "' (" + std::to_string(i + 1) +
                                  " of " + signature() + ") expects " +
                                  argument.type()->annotation_str();
            const std::string& why = conformed.error().message;
            // "x is Tensor, not int": the argument itself; "images[1] is ...": an element of it.
            if (why.rfind(argument.name() + " is ", 0) == 0) {
                message += ", but the input is " + why.substr(argument.name().size() + 4);
            } else {
                message += ", but " + why;
            }
            return Error{ErrorKind::Input, message, {}};
        }
        inputs[i] = std::move(conformed).value();
    }
    return std::nullopt;
}

// How the value of an --inputs file becomes the arguments: a tuple holds the arguments (what
// torch.save(tuple(inputs)) writes); a list does too, unless the method's first argument is a
// list that it fits (torch.save([image_a, image_b]) for a detector's List[Tensor] images).
std::vector<c10::IValue> argumentsFromFile(const c10::IValue& value,
                                           const c10::FunctionSchema& schema) {
    if (value.isTuple()) {
        return value.toTupleRef().elements().vec();
    }
    if (value.isList()) {
        const auto& arguments = schema.arguments();
        const size_t first = !arguments.empty() && arguments[0].name() == "self" ? 1 : 0;
        if (first < arguments.size()) {
            const auto& type = arguments[first].type();
            if (type->kind() == c10::TypeKind::ListType &&
                detail::conformToType(value, type, arguments[first].name())) {
                return {value};
            }
        }
        return value.toListRef().vec();
    }
    return {value};
}

} // namespace

namespace detail {

double elapsedMs(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
        .count();
}

Expected<torch::jit::Method> findMethod(const torch::jit::Module& module, const std::string& path,
                                        const std::string& name) {
    return scriptscope::findMethod(module, path, name);
}

std::string methodCode(const torch::jit::Method& method) {
    return scriptscope::methodCode(method);
}

Expected<PreparedRun> prepareRun(torch::jit::Module& module, torch::Device& modelDevice,
                                 const torch::jit::Method& method, const RunRequest& request) {
    PreparedRun run;
    auto device = parseDevice(request.device);
    if (!device) {
        return device.error();
    }
    run.device = *device;
    if (!request.inputsFile.empty()) {
        auto value = loadValueFile(request.inputsFile);
        if (!value) {
            return value.error();
        }
        run.inputs = argumentsFromFile(*value, method.function().getSchema());
        run.descriptions.push_back("from " + request.inputsFile);
    }
    for (const auto& spec : request.inputs) {
        auto value = buildInput(spec, request.frame.data ? &request.frame : nullptr);
        if (!value) {
            return value.error();
        }
        run.inputs.push_back(std::move(value).value());
        run.descriptions.push_back(spec.describe());
    }
    if (auto error = conformInputs(method.function().getSchema(), run.inputs)) {
        return *error;
    }
    try {
        // The model moves once per device change, not per run.
        if (modelDevice != run.device) {
            module.to(run.device);
            modelDevice = run.device;
        }
        for (auto& input : run.inputs) {
            input = toDevice(input, run.device);
        }
    } catch (const std::exception& error) {
        return errorFromException(error, ErrorKind::Device);
    }
    return run;
}

} // namespace detail

Session::Session()
    : impl_(std::make_unique<Impl>()) {
    my_ops::ensureRegistered();
}
Session::~Session() = default;

bool Session::loaded() const {
    return impl_->module.has_value();
}

Status Session::loadOperatorLibrary(const std::string& path) {
    const auto refused = [&](const std::string& why) {
        Error error{ErrorKind::OperatorLibrary,
                    "cannot load the operator library '" + path + "': " + why};
        error.library = path;
        return error;
    };
    // Built for another LibTorch, it would bring that one in beside this one and crash the
    // process in its initialisers: refused before it is mapped.
    const LibraryVerdict verdict = checkOperatorLibrary(path, libtorchVersion());
    if (!verdict.loadable) {
        return refused(verdict.reason);
    }
    // As torch.ops.load_library does: global symbols, so libraries can share them.
    if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
        const char* why = ::dlerror();
        return refused(why ? why : "unknown error");
    }
    return std::nullopt;
}

namespace {

// PyTorch's own operators: one of these missing means a newer PyTorch saved the archive.
bool isPyTorchOperator(const std::string& name) {
    return name.rfind("aten::", 0) == 0 || name.rfind("prim::", 0) == 0;
}

// "... calls aten::scaled_dot_product_attention, which LibTorch 1.13.0 does not have; it was
// probably saved by a newer PyTorch — open it with a ScriptScope built on PyTorch >= 2.0", naming
// every other PyTorch operator the probe found missing too.
std::string newerPyTorchMessage(const std::string& path, const std::string& op,
                                const ProbeResult& probe) {
    std::string others;
    std::string needed = compat::operatorIntroducedIn(op);
    for (const auto& use : probe.operators) {
        if (!use.registered && use.name != op && isPyTorchOperator(use.name)) {
            others += (others.empty() ? "" : ", ") + use.name;
            const std::string version = compat::operatorIntroducedIn(use.name);
            if (!version.empty() && (needed.empty() || compat::releaseBefore(needed, version))) {
                needed = version;
            }
        }
    }
    return "'" + path + "' calls " + op + (others.empty() ? "" : " (and " + others + ")") +
           ", which LibTorch " + libtorchVersion() +
           " does not have; it was probably saved by a newer PyTorch. Open it with a ScriptScope "
           "built on PyTorch " +
           (needed.empty() ? "newer than " + libtorchVersion() : "\u2265 " + needed) +
           " (scripts/setup.sh --torch-venv), or export it again with PyTorch " +
           libtorchVersion() + ".";
}

} // namespace

Expected<ModelInfo> Session::load(const std::string& path, const LoadOptions& options) {
    return load(path, probeArchive(path), options);
}

Expected<ModelInfo> Session::load(const std::string& path, ProbeResult probeResult,
                                  const LoadOptions& options) {
    ModelInfo info;
    info.path = path;
    info.torchVersion = libtorchVersion();
    info.probe = std::move(probeResult);
    const ProbeResult& probe = info.probe;
    if (probe.kind != FileKind::TorchScript) {
        return unopenedError(probe);
    }
    if (probe.version > probe.maxSupportedVersion) {
        return Error{ErrorKind::Version,
                     "'" + path + "' has serialization version " + std::to_string(probe.version) +
                         "; this LibTorch " + libtorchVersion() + " reads versions up to " +
                         std::to_string(probe.maxSupportedVersion) +
                         ". Save it again with an older PyTorch, or build ScriptScope against a "
                         "newer LibTorch.",
                     {}};
    }
    if (probe.version < 0) {
        return Error{ErrorKind::Format,
                     "'" + path + "' is damaged: its version record is " +
                         (probe.versionText.empty() ? std::string("missing")
                                                    : "'" + probe.versionText + "', not a number"),
                     {}};
    }
    if (!probe.damage.empty()) {
        // LibTorch 1.13 would load it and read past the record (or crash): refuse it first.
        return Error{ErrorKind::Format, "'" + path + "' is damaged: " + probe.damage};
    }
    auto device = detail::parseDevice(options.device);
    if (!device) {
        return device.error();
    }
    const auto start = std::chrono::steady_clock::now();
    try {
        torch::jit::ExtraFilesMap extra;
        auto module = torch::jit::load(path, *device, extra);
        info.loadMilliseconds = elapsedMs(start);
        MethodTextCache cache;
        for (const auto& entry : module.named_modules()) {
            info.modules.push_back(moduleInfo(entry.name, entry.value, options.includeCode, cache));
        }
        info.sumTotals();
        impl_->inlinedGraphs.clear();
        if (options.includeInlinedGraph) {
            if (auto forward = module.find_method("forward")) {
                info.inlinedForwardGraph = impl_->inlined(*forward).text;
            }
        }
        impl_->module = std::move(module);
        impl_->device = *device;
        impl_->path = path;
    } catch (const std::exception& error) {
        Error e = errorFromException(error, ErrorKind::Format);
        if (e.kind == ErrorKind::MissingOperator && isPyTorchOperator(e.operatorName)) {
            e.kind = ErrorKind::NeedsNewerLibTorch;
            e.message = newerPyTorchMessage(path, e.operatorName, probe);
        } else if (e.kind == ErrorKind::MissingOperator) {
            e.library = knownOperatorLibrary(e.operatorName);
            e.message =
                "'" + path + "' calls the operator " + e.operatorName +
                ", which is not registered. Load the library that defines it first "
                "(scriptscope-cli --op-library PATH; in the GUI, File > Load Operator "
                "Library)" +
                (e.library.empty() ? std::string() : "; this machine has it in " + e.library) + ".";
        } else {
            e.message = "cannot load '" + path + "': " + e.message;
        }
        return e;
    }
    return info;
}

Expected<torch::jit::Method> Session::Impl::method(const std::string& modulePath,
                                                   const std::string& name) const {
    if (!module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    auto owner = findModule(*module, modulePath);
    if (!owner) {
        return owner.error();
    }
    return findMethod(*owner, modulePath, name);
}

Expected<std::string> Session::code(const std::string& modulePath,
                                    const std::string& method) const {
    auto found = impl_->method(modulePath, method);
    if (!found) {
        return found.error();
    }
    return methodCode(*found);
}

Expected<std::string> Session::graph(const std::string& modulePath, const std::string& method,
                                     bool inlined) const {
    auto found = impl_->method(modulePath, method);
    if (!found) {
        return found.error();
    }
    return inlined ? impl_->inlined(*found).text : found->graph()->toString();
}

Expected<GraphModel> Session::graphModel(const std::string& modulePath, const std::string& method,
                                         bool inlined) const {
    auto found = impl_->method(modulePath, method);
    if (!found) {
        return found.error();
    }
    try {
        auto owner = findModule(*impl_->module, modulePath);
        if (!owner) {
            return owner.error();
        }
        if (!inlined) {
            return detail::buildGraphModel(*owner, modulePath, *found);
        }
        std::vector<torch::jit::Node*> nodes;
        const Impl::Inlined& graph = impl_->inlined(*found);
        return detail::buildGraphModel(*owner, modulePath, found->name(), *graph.graph, true, nodes,
                                       &graph.text);
    } catch (const std::exception& error) {
        return errorFromException(error, ErrorKind::Internal);
    }
}

Expected<std::vector<OutputValue>> Session::tensorStatistics(const std::string& modulePath) const {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    auto module = findModule(*impl_->module, modulePath);
    if (!module) {
        return module.error();
    }
    std::vector<OutputValue> values;
    try {
        c10::InferenceMode guard;
        for (const auto& p : module->named_parameters(/*recurse=*/false)) {
            values.push_back(detail::describeOutput(p.value, 0));
            values.back().key = p.name;
        }
        for (const auto& b : module->named_buffers(/*recurse=*/false)) {
            values.push_back(detail::describeOutput(b.value, 0));
            values.back().key = b.name;
        }
        // Packed weights: statistics of the values they stand for.
        for (const auto& [attribute, packed] : detail::packedTensors(*module)) {
            const auto& t = packed.tensor;
            values.push_back(detail::describeOutput(t.is_quantized() ? t.dequantize() : t, 0));
            values.back().key = packed.name;
        }
    } catch (const std::exception& error) {
        return errorFromException(error, ErrorKind::Internal);
    }
    return values;
}

Expected<RunResult> Session::run(const RunRequest& request) {
    if (!impl_->module) {
        return Error{ErrorKind::Internal, "no model is loaded"};
    }
    if (request.iterations < 1 || request.warmup < 0) {
        return Error{ErrorKind::Input, "iterations must be at least 1 and warm-up at least 0"};
    }
    auto method = findMethod(*impl_->module, "", request.method);
    if (!method) {
        return method.error();
    }
    auto prepared = detail::prepareRun(*impl_->module, impl_->device, *method, request);
    if (!prepared) {
        return prepared.error();
    }
    const torch::Device device = prepared->device;
    std::vector<c10::IValue>& inputs = prepared.value().inputs;
    RunResult result;
    result.model = impl_->path;
    result.method = request.method;
    result.device = device.str();
    result.deviceName = device.is_cuda() ? detail::cudaDeviceName(device.index(), nullptr) : "CPU";
    result.warmup = request.warmup;
    result.inputDescriptions = prepared->descriptions;

    try {
        const bool cuda = device.is_cuda();
        auto synchronize = [&]() { detail::synchronize(device); };
        c10::InferenceMode inferenceMode;
        c10::IValue output;
        for (int i = 0; i < request.warmup; ++i) {
            output = (*method)(inputs);
        }
        synchronize();
        result.synchronized = cuda;
        result.samplesMs.reserve(static_cast<size_t>(request.iterations));
        for (int i = 0; i < request.iterations; ++i) {
            const auto start = std::chrono::steady_clock::now();
            output = (*method)(inputs);
            synchronize();
            result.samplesMs.push_back(elapsedMs(start));
        }
        result.stats = computeStats(result.samplesMs);
        if (request.profile) {
            // Only this iteration carries the callbacks: the timed ones above ran without them.
            result.profile = detail::profileOperators(
                [&]() {
                    output = (*method)(inputs);
                    synchronize();
                },
                cuda ? std::max<int>(0, device.index()) : -1);
            result.profiled = true;
            // The shapes along the graph's values, for the diagram: one more run, uninstrumented
            // by the timing callbacks, through PyTorch's profiling interpreter.
            result.profile.shapesMethod = request.method;
            try {
                result.profile.valueShapes =
                    detail::recordValueShapes(*impl_->module, *method, inputs);
            } catch (const std::exception& error) {
                const std::string what = error.what();
                result.profile.shapesError = what.substr(0, what.find('\n'));
            }
        }
        result.output = detail::describeOutput(output, request.previewValues, request.valuesLimit);
        if (!request.saveOutputsPath.empty()) {
            if (auto error = detail::saveValueFile(output, request.saveOutputsPath)) {
                return *error;
            }
        }
    } catch (const std::exception& error) {
        Error e = errorFromException(error, ErrorKind::Model);
        e.message = request.method + " failed: " + e.message;
        return e;
    }
    return result;
}

} // namespace scriptscope
