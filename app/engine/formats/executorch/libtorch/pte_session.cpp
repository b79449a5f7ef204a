// PteSession (pte_session.h): LibTorch builds the inputs and describes the outputs; ExecuTorch's
// runtime (pte_runtime.h, a target of its own) runs the program. Tensors cross as plain memory.
#include "pte_session.h"

#include "engine_internal.h"
#include "format.h"
#include "torch_values.h"
#include "value_tap.h"

#include <etdump_profile.h>
#include <etdump_reader.h>
#include <pte_runtime.h>
#include <stats.h>

#include <chrono>
#include <set>

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

// The method's outputs as the model returned them in Python: nested by the plan's output spec
// (a dict, a tuple), else one value as it is and several as a tuple.
c10::IValue outputOf(const std::vector<PlainValue>& outputs, const PtePlan& plan) {
    std::vector<c10::IValue> values;
    for (const PlainValue& value : outputs) {
        values.push_back(ivalueOf(value));
    }
    std::string why;
    if (const auto spec = parseExecutorchSpec(plan.encodedOutputs, why);
        spec && spec->leaves() == values.size()) {
        if (auto nested = detail::nestOutputs(*spec, values)) {
            return std::move(nested).value();
        }
    }
    return values.size() == 1 ? values.front() : c10::ivalue::Tuple::create(std::move(values));
}

} // namespace

struct PteSites;

struct PteSession::Impl {
    const ExecuTorchProgram& program;
    std::unique_ptr<PteRuntime> runtime; // opened on the first run
    const EtRecord* record = nullptr;    // the program's ETRecord, when there is one

    explicit Impl(const ExecuTorchProgram& p)
        : program(p) {}

    const std::string& path() const { return program.info().path; }

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

    Expected<PteSites> sitesOf(const std::string& method) const;
    // One traced run with every value recorded into `run` (its output into *output).
    Status observe(const RunRequest& request, const PteSites& sites, detail::TapRun& run,
                   c10::IValue* output, std::vector<std::string>& notes) const;

    // `runs` traced runs on the request's inputs (two by default: XNNPACK packs its weights on the
    // first), in a runtime of their own; the last one's outputs copied into `output`, each one's
    // wall time into `samplesMs` when given, timed as run() times its runs.
    Expected<PteTrace> tracedRun(const RunRequest& request, size_t debugBufferBytes,
                                 c10::IValue* output, int runs = 2,
                                 std::vector<double>* samplesMs = nullptr) const {
        auto found = program.plan(request.method);
        if (!found) {
            return found.error();
        }
        // A runtime of its own: the timed one keeps no tracer, so its runs pay for none.
        PteTraceOptions options;
        options.debugBufferBytes = debugBufferBytes;
        auto traced = PteRuntime::open(path(), &options);
        if (!traced) {
            return traced.error();
        }
        std::vector<at::Tensor> keep;
        std::vector<std::string> descriptions;
        auto in = inputs(request, **found, keep, descriptions);
        if (!in) {
            return in.error();
        }
        for (int i = 0; i < runs; ++i) {
            const auto start = std::chrono::steady_clock::now();
            auto outputs = (*traced)->execute(request.method, *in);
            if (samplesMs) {
                samplesMs->push_back(detail::elapsedMs(start));
            }
            if (!outputs) {
                return outputs.error();
            }
            if (i == runs - 1 && output) {
                *output = outputOf(*outputs, **found);
            }
        }
        return (*traced)->takeTrace();
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
    auto plan = impl_->program.plan(request.method);
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
        const c10::IValue output = outputOf(*outputs, **plan); // copied before any other run
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
        // The same warm-up and iterations again, with the event tracer on: the profile is the
        // mean of the traced iterations, and its wall time their p50, timed as the runs above,
        // so what tracing costs reads against the timed p50.
        std::vector<double> tracedMs;
        auto traced =
            impl_->tracedRun(request, 0, nullptr, request.warmup + request.iterations, &tracedMs);
        if (!traced) {
            return traced.error();
        }
        auto dump = readEtdump(std::string_view(
            reinterpret_cast<const char*>(traced->etdump.data()), traced->etdump.size()));
        if (!dump) {
            return dump.error();
        }
        auto profile = profileOfEtdump(*dump, impl_->program, request.method,
                                       static_cast<size_t>(request.iterations), impl_->record);
        if (!profile) {
            return profile.error();
        }
        result.profile = std::move(profile->profile);
        result.profile.runs = static_cast<int64_t>(profile->runs);
        tracedMs.erase(tracedMs.begin(), tracedMs.begin() + request.warmup);
        result.profile.wallMs = computeStats(tracedMs).p50;
        result.profiled = true;
    }
    return result;
}

Expected<PteTrace> PteSession::trace(const RunRequest& request, size_t debugBufferBytes) {
    return impl_->tracedRun(request, debugBufferBytes, nullptr);
}

// Every value one traced run made, from the event tracer's intermediate outputs: one site per
// value the diagram draws (a call's output), by the ETRecord's modules where there is one.
struct PteSites {
    GraphModel model;
    std::vector<detail::Site> sites;
    std::vector<std::vector<std::string>> siteModules;
    std::map<std::pair<int, int>, int> byOutput; // (node, output) -> site
    // The node of each kernel or delegate call, by (chain, instruction) as the tracer names it.
    std::map<std::pair<size_t, size_t>, int> nodeAt;
};

Expected<PteSites> PteSession::Impl::sitesOf(const std::string& method) const {
    auto graph = program.graphModel(method);
    auto calls = program.calls(method);
    if (!graph || !calls) {
        return graph ? calls.error() : graph.error();
    }
    PteSites out;
    out.model = std::move(graph).value();
    const GraphModel& g = out.model;
    // Each call's module of the model (the ETRecord's); without one, none.
    // and the export node it was lowered from.
    std::vector<std::string> nodeModules(g.nodes.size());
    std::vector<std::vector<std::string>> nodeOperators(g.nodes.size());
    const std::map<int, std::vector<std::string>>* operators = nullptr;
    if (record) {
        const auto found = record->instructionOperators.find(method);
        operators = found == record->instructionOperators.end() ? nullptr : &found->second;
    }
    for (size_t i = 0; i < calls->size(); ++i) {
        const ExecuTorchProgram::Call& call = (*calls)[i];
        out.nodeAt[{call.chain, call.instruction}] = static_cast<int>(i);
        if (record && i < nodeModules.size()) {
            nodeModules[i] = record->moduleOf(method, static_cast<int>(call.instruction));
        }
        if (operators && i < nodeOperators.size()) {
            const auto found = operators->find(static_cast<int>(call.instruction));
            if (found != operators->end()) {
                nodeOperators[i] = found->second;
            }
        }
    }
    std::set<std::string> graphOutputs;
    for (const GraphPort& port : g.outputs) {
        graphOutputs.insert(port.name);
    }
    const auto modules = detail::outputModules(g, nodeModules, graphOutputs);
    for (const GraphNode& node : g.nodes) {
        for (size_t o = 0; o < node.outputs.size(); ++o) {
            out.byOutput[{node.id, static_cast<int>(o)}] = static_cast<int>(out.sites.size());
            detail::Site site;
            site.node = node.id;
            site.output = static_cast<int>(o);
            site.value = node.outputs[o].name;
            if (node.outputs.size() == 1 && static_cast<size_t>(node.id) < nodeOperators.size()) {
                site.operators = nodeOperators[static_cast<size_t>(node.id)];
            }
            // The model's module it ran in (the ETRecord's), not the delegate's group.
            site.module = nodeModules[static_cast<size_t>(node.id)];
            site.op = record ? detail::comparableOperator(node.kind) : std::string();
            out.sites.push_back(std::move(site));
            out.siteModules.push_back(modules[static_cast<size_t>(node.id)][o]);
        }
    }
    return out;
}

// The bytes the event tracer needs to keep every value of one run: each tensor of the plan, with
// room for alignment.
static size_t debugBytesOf(const PtePlan& plan) {
    uint64_t bytes = 1u << 20;
    for (const PteValue& value : plan.values) {
        if (value.kind == PteValue::Kind::Tensor) {
            bytes += value.tensor.bytes() + 64;
        }
    }
    return static_cast<size_t>(std::min<uint64_t>(bytes * 2, uint64_t{4} << 30));
}

Status PteSession::Impl::observe(const RunRequest& request, const PteSites& sites,
                                 detail::TapRun& run, c10::IValue* output,
                                 std::vector<std::string>& notes) const {
    auto found = program.plan(request.method);
    if (!found) {
        return found.error();
    }
    auto trace = tracedRun(request, debugBytesOf(**found), output);
    if (!trace) {
        return trace.error();
    }
    auto dump = readEtdump(std::string_view(reinterpret_cast<const char*>(trace->etdump.data()),
                                            trace->etdump.size()));
    if (!dump) {
        return dump.error();
    }
    // The traced run's block: the last that holds values.
    const EtdumpRun* last = nullptr;
    for (const EtdumpRun& block : dump->runs) {
        last = block.debug.empty() ? last : &block;
    }
    run.sites = sites.sites;
    run.siteModules = sites.siteModules;
    run.occurrences.assign(run.sites.size(), 0);
    if (!last) {
        notes.push_back("ExecuTorch's event tracer recorded no values of this run");
        return std::nullopt;
    }
    // The values each call logged, in order: a kernel logs its output, a delegate call every
    // argument (its inputs, then its outputs), so a node's outputs are its last ones. The
    // program's outputs are logged again after the run (no chain).
    std::map<int, std::vector<const EtdumpDebugEvent*>> logged;
    size_t outside = 0, unplaced = 0;
    for (const EtdumpDebugEvent& event : last->debug) {
        if (event.instruction < 0 || event.chain > static_cast<uint64_t>(INT32_MAX) ||
            event.value.kind != EtdumpValue::Kind::Tensor || event.value.tensors.empty()) {
            continue;
        }
        const auto at = sites.nodeAt.find(
            {static_cast<size_t>(event.chain), static_cast<size_t>(event.instruction)});
        if (at == sites.nodeAt.end()) {
            ++unplaced;
            continue;
        }
        logged[at->second].push_back(&event);
    }
    for (const auto& [node, events] : logged) {
        const size_t outputs = static_cast<size_t>(node) < sites.model.nodes.size()
                                   ? sites.model.nodes[static_cast<size_t>(node)].outputs.size()
                                   : 0;
        const size_t first = events.size() > outputs ? events.size() - outputs : 0;
        for (size_t k = first; k < events.size(); ++k) {
            const auto site = sites.byOutput.find({node, static_cast<int>(k - first)});
            if (site == sites.byOutput.end()) {
                ++unplaced;
                continue;
            }
            const EtdumpTensor& t = events[k]->value.tensors.front();
            const auto type = static_cast<c10::ScalarType>(t.scalarType);
            int64_t numel = 1;
            for (const int64_t size : t.sizes) {
                numel *= size;
            }
            const uint64_t bytes = static_cast<uint64_t>(numel) * c10::elementSize(type);
            if (t.offset < 0 ||
                static_cast<uint64_t>(t.offset) + bytes > trace->debugBuffer.size()) {
                ++outside;
                continue;
            }
            const at::Tensor value =
                at::from_blob(const_cast<uint8_t*>(trace->debugBuffer.data()) + t.offset, t.sizes,
                              at::TensorOptions().dtype(type))
                    .clone();
            detail::recordValue(run, site->second, value);
        }
    }
    if (outside > 0) {
        notes.push_back(std::to_string(outside) +
                        " values did not fit the event tracer's buffer and were not recorded");
    }
    if (unplaced > 0) {
        notes.push_back(std::to_string(unplaced) +
                        " values the tracer logged belong to no call the diagram draws");
    }
    if (!record) {
        notes.push_back("no ETRecord beside '" + path() +
                        "': its values have no module of the model, so none is matched with "
                        "another model's module outputs (to_edge_transform_and_lower(..., "
                        "generate_etrecord=True) makes one)");
    }
    return std::nullopt;
}

Expected<ActivationReport> PteSession::activations(const ActivationRequest& request) {
    if (request.bins < 1 || request.bins > 4096) {
        return Error{ErrorKind::Input, "the histogram takes 1 to 4096 bins"};
    }
    if (!request.compareDevice.empty() || request.compareRun) {
        return Error{ErrorKind::Input,
                     "an ExecuTorch program is compared with values saved from Python or with "
                     "another model; a second run on other inputs is TorchScript's only so far"};
    }
    if (!request.referenceFile.empty() && request.referenceValues) {
        return Error{ErrorKind::Input,
                     "compare with one thing at a time: a file of values or a model"};
    }
    if (request.run.device != "cpu") {
        return Error{ErrorKind::Device, "ExecuTorch runs on the CPU, not on " + request.run.device};
    }
    auto made = impl_->sitesOf(request.run.method);
    if (!made) {
        return made.error();
    }
    PteSites sites = std::move(made).value();
    ActivationReport report;
    report.model = impl_->path();
    report.method = request.run.method;
    report.device = "cpu";
    try {
        std::shared_ptr<const ModuleValues> reference;
        if (auto error = detail::prepareRecording(request, sites.sites, sites.siteModules, report,
                                                  reference)) {
            return *error;
        }
        detail::TapRun run;
        run.reference = reference.get();
        run.bins = request.bins;
        run.pinBudget = request.pinBytes;
        c10::IValue output;
        const auto start = std::chrono::steady_clock::now();
        if (auto error = impl_->observe(request.run, sites, run, &output, report.notes)) {
            return *error;
        }
        report.runMs = detail::elapsedMs(start);
        if (run.pinOverflow) {
            report.notes.push_back("pinned values beyond " + formatBytes(request.pinBytes) +
                                   " were not kept");
        }
        report.pinnedBytes = run.pinnedBytes;
        detail::finishReport(run, sites.model, sites.siteModules, reference.get(), output, request,
                             report);
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Model);
    }
    return report;
}

Expected<std::shared_ptr<const ModuleValues>> PteSession::moduleOutputs(const RunRequest& request) {
    auto sites = impl_->sitesOf(request.method);
    if (!sites) {
        return sites.error();
    }
    try {
        detail::TapRun run;
        run.bins = 1;
        run.keepModuleOutputs = true;
        run.keepOperatorOutputs = true;
        std::vector<std::string> notes;
        c10::IValue output;
        if (auto error = impl_->observe(request, *sites, run, &output, notes)) {
            return *error;
        }
        auto values = std::make_shared<ModuleValues>();
        detail::keepInto(run, output, *values);
        values->model = impl_->path();
        return std::shared_ptr<const ModuleValues>(std::move(values));
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Model);
    }
}

Status PteSession::saveSampleInputs(const std::string& path, const std::string& method) {
    auto found = impl_->program.plan(method);
    if (!found) {
        return found.error();
    }
    std::vector<at::Tensor> keep;
    std::vector<std::string> descriptions;
    std::vector<c10::IValue> values;
    try {
        for (size_t i = 0; i < (*found)->inputs.size(); ++i) {
            auto value = planValue(**found, i, keep, descriptions);
            if (!value) {
                return value.error();
            }
            values.push_back(value->kind == PlainValue::Kind::Tensor ? c10::IValue(keep.back())
                                                                     : ivalueOf(*value));
        }
        return detail::saveValueFile(c10::ivalue::Tuple::create(std::move(values)), path);
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Input);
    }
}

} // namespace scriptscope
