// An exported program run: prepare() checks its graph, resolves it into steps
// (exported_builder.cpp) and reads its weights (exported_weights.cpp); run() moves values between
// slots and the dispatcher.
#include "engine_internal.h"
#include "exported_steps.h"
#include "torch_values.h"

#include <graph_check.h>

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <map>
#include <string>
#include <vector>

namespace scriptscope::detail {

namespace {

c10::IValue make(const Arg& arg, const std::vector<c10::IValue>& env) {
    switch (arg.how) {
    case Arg::How::Constant:
        return arg.constant;
    case Arg::How::Slot:
        return env[static_cast<size_t>(arg.slot)];
    case Arg::How::Tensors: {
        c10::List<at::Tensor> list;
        list.reserve(arg.slots.size());
        for (const int slot : arg.slots) {
            list.push_back(env[static_cast<size_t>(slot)].toTensor());
        }
        return list;
    }
    case Arg::How::OptionalTensors: {
        c10::List<c10::optional<at::Tensor>> list;
        list.reserve(arg.slots.size());
        for (const int slot : arg.slots) {
            if (slot < 0) {
                list.push_back(c10::nullopt);
            } else {
                list.push_back(env[static_cast<size_t>(slot)].toTensor());
            }
        }
        return list;
    }
    case Arg::How::Ints: {
        std::vector<int64_t> values(arg.slots.size());
        for (size_t i = 0; i < values.size(); ++i) {
            values[i] = arg.slots[i] < 0 ? arg.ints[i] : env[size_t(arg.slots[i])].toInt();
        }
        return values;
    }
    case Arg::How::Floats: {
        std::vector<double> values(arg.slots.size());
        for (size_t i = 0; i < values.size(); ++i) {
            values[i] = arg.slots[i] < 0 ? arg.floats[i] : env[size_t(arg.slots[i])].toDouble();
        }
        return values;
    }
    case Arg::How::Bools: {
        c10::List<bool> values;
        for (size_t i = 0; i < arg.slots.size(); ++i) {
            values.push_back(arg.slots[i] < 0 ? arg.ints[i] != 0
                                              : env[size_t(arg.slots[i])].toBool());
        }
        return values;
    }
    }
    return {};
}

std::vector<c10::IValue> runProgram(const Program& program, std::vector<c10::IValue> inputs,
                                    const ExportedInterpreter::Observer* observer = nullptr);

bool truth(const c10::IValue& value) {
    return value.isTensor() ? value.toTensor().item<bool>()
           : value.isBool() ? value.toBool()
                            : value.toInt() != 0;
}

std::vector<c10::IValue> elementsOf(const c10::IValue& value) {
    return value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
}

void assign(const Step& step, size_t index, const c10::IValue& value,
            std::vector<c10::IValue>& env) {
    const std::vector<int>& slots = step.outputs[index];
    if (!step.listOutput[index]) {
        if (!slots.empty() && slots[0] >= 0) {
            env[size_t(slots[0])] = value;
        }
        return;
    }
    const std::vector<c10::IValue> elements = elementsOf(value);
    TORCH_CHECK(elements.size() == slots.size(), step.label, " returned ", elements.size(),
                " values where the graph names ", slots.size());
    for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i] >= 0) {
            env[size_t(slots[i])] = elements[i];
        }
    }
}

// torch.autocast(device_type, dtype, enabled, cache_enabled) over a block, as Python's context
// manager enters and leaves it.
class AutocastScope {
public:
    AutocastScope(c10::DeviceType device, c10::ScalarType dtype, bool enabled, bool cache)
        : device_(device)
        , wasEnabled_(enabled_())
        , wasDtype_(dtype_())
        , wasCache_(at::autocast::is_autocast_cache_enabled()) {
        setEnabled(enabled);
        setDtype(dtype);
        at::autocast::set_autocast_cache_enabled(cache);
        at::autocast::increment_nesting();
    }
    ~AutocastScope() {
        if (at::autocast::decrement_nesting() == 0) {
            at::autocast::clear_cache();
        }
        setEnabled(wasEnabled_);
        setDtype(wasDtype_);
        at::autocast::set_autocast_cache_enabled(wasCache_);
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
#if TORCH_VERSION_MAJOR >= 2
    bool enabled_() const {
        return at::autocast::is_autocast_enabled(device_);
    }
    c10::ScalarType dtype_() const {
        return at::autocast::get_autocast_dtype(device_);
    }
    void setEnabled(bool on) {
        at::autocast::set_autocast_enabled(device_, on);
    }
    void setDtype(c10::ScalarType t) {
        at::autocast::set_autocast_dtype(device_, t);
    }
#else
    // LibTorch 1.13: one switch and one dtype for the CPU, one for CUDA.
    bool cpu() const {
        return device_ == c10::DeviceType::CPU;
    }
    bool enabled_() const {
        return cpu() ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
    }
    c10::ScalarType dtype_() const {
        return cpu() ? at::autocast::get_autocast_cpu_dtype()
                     : at::autocast::get_autocast_gpu_dtype();
    }
    void setEnabled(bool on) {
        cpu() ? at::autocast::set_cpu_enabled(on) : at::autocast::set_enabled(on);
    }
    void setDtype(c10::ScalarType t) {
        cpu() ? at::autocast::set_autocast_cpu_dtype(t) : at::autocast::set_autocast_gpu_dtype(t);
    }
#endif
    c10::DeviceType device_;
    bool wasEnabled_;
    c10::ScalarType wasDtype_;
    bool wasCache_;
};

// What the top-level graph's control flow did in this run, where the caller asked (run()'s
// `flow`); programs count how deep they run (1: the top-level graph).
thread_local std::vector<ControlFlowRun>* flowLog = nullptr;
thread_local int programDepth = 0;

void logFlow(const Step& step, const char* kind, int branch, int64_t iterations) {
    if (flowLog && programDepth == 1) {
        flowLog->push_back({step.node, -1, kind, branch, iterations});
    }
}

// A higher-order operator's call: its graphs run on the operands as Python's implementation
// runs them; what it returns, as one tuple.
std::vector<c10::IValue> runHigherOrder(const Step& step, const torch::jit::Stack& stack) {
    switch (step.what) {
    case Step::What::Cond: {
        const bool taken = truth(stack.at(0));
        logFlow(step, "cond", taken ? 0 : 1, -1);
        return runProgram(*step.branches[taken ? 0 : 1], elementsOf(stack.at(1)));
    }
    case Step::What::WhileLoop: {
        std::vector<c10::IValue> carried = elementsOf(stack.at(0));
        const std::vector<c10::IValue> additional = elementsOf(stack.at(1));
        const size_t count = carried.size();
        for (int64_t iterations = 0;; ++iterations) {
            std::vector<c10::IValue> operands = carried;
            operands.insert(operands.end(), additional.begin(), additional.end());
            const std::vector<c10::IValue> predicate = runProgram(*step.branches[0], operands);
            TORCH_CHECK(predicate.size() == 1, step.label, ": its cond_fn returned ",
                        predicate.size(), " values, not one");
            if (!truth(predicate[0])) {
                logFlow(step, "while_loop", -1, iterations);
                return carried;
            }
            carried = runProgram(*step.branches[1], std::move(operands));
            TORCH_CHECK(carried.size() == count, step.label, ": its body_fn returned ",
                        carried.size(), " values for ", count, " carried inputs");
        }
    }
    case Step::What::Map: {
        // The body on each slice of the mapped tensors along their first dimension, its results
        // stacked.
        const std::vector<c10::IValue> xs = elementsOf(stack.at(0));
        const std::vector<c10::IValue> args = elementsOf(stack.at(1));
        TORCH_CHECK(!xs.empty(), step.label, ": map takes at least one tensor to map over");
        const int64_t n = xs[0].toTensor().dim() > 0 ? xs[0].toTensor().size(0) : -1;
        TORCH_CHECK(n > 0, step.label, ": map takes tensors of at least one slice");
        std::vector<std::vector<at::Tensor>> slices;
        for (int64_t i = 0; i < n; ++i) {
            std::vector<c10::IValue> operands;
            for (const c10::IValue& x : xs) {
                const at::Tensor& t = x.toTensor();
                TORCH_CHECK(t.dim() > 0 && t.size(0) == n, step.label,
                            ": the tensors it maps over differ in their first dimension");
                operands.emplace_back(t.select(0, i));
            }
            operands.insert(operands.end(), args.begin(), args.end());
            const std::vector<c10::IValue> results = runProgram(*step.branches[0], operands);
            slices.resize(results.size());
            for (size_t r = 0; r < results.size(); ++r) {
                slices[r].push_back(results[r].toTensor());
            }
        }
        std::vector<c10::IValue> stacked;
        for (const auto& outputs : slices) {
            stacked.emplace_back(at::stack(outputs));
        }
        logFlow(step, "map", -1, n);
        return stacked;
    }
    case Step::What::SetGrad: {
        // Grad mode changes no value; the weights are detached, so nothing is recorded for a
        // backward pass even where it is on.
        const c10::AutoGradMode mode(stack.at(0).toBool());
        return runProgram(*step.branches[0], {stack.begin() + 1, stack.end()});
    }
    case Step::What::Autocast: {
        const c10::Device device(stack.at(0).toStringRef());
        const AutocastScope scope(device.type(), static_cast<c10::ScalarType>(stack.at(1).toInt()),
                                  stack.at(2).toBool(), stack.at(3).toBool());
        return runProgram(*step.branches[0], {stack.begin() + 4, stack.end()});
    }
    default:
        TORCH_CHECK(false, step.label, " is not a higher-order operator");
    }
}

void runStep(const Step& step, std::vector<c10::IValue>& env, torch::jit::Stack& stack) {
    stack.clear();
    for (const Arg& arg : step.args) {
        stack.push_back(make(arg, env));
    }
    switch (step.what) {
    case Step::What::Operator:
        step.op->callBoxed(&stack);
        break;
    case Step::What::Python: {
        c10::IValue result = step.function(stack);
        stack.assign(1, std::move(result));
        break;
    }
    case Step::What::GetItem: {
        const int64_t index = stack.at(1).toInt();
        const auto elements = elementsOf(stack.at(0));
        const int64_t size = static_cast<int64_t>(elements.size());
        TORCH_CHECK(index >= -size && index < size, step.label, ": index ", index,
                    " out of range for ", size, " values");
        c10::IValue element = elements[size_t(index < 0 ? index + size : index)];
        stack.assign(1, std::move(element));
        break;
    }
    case Step::What::Cond:
    case Step::What::WhileLoop:
    case Step::What::Map:
    case Step::What::SetGrad:
    case Step::What::Autocast: {
        std::vector<c10::IValue> results = runHigherOrder(step, stack);
        stack.assign(1, c10::ivalue::Tuple::create(std::move(results)));
        break;
    }
    case Step::What::Functionalized: {
        std::vector<c10::IValue> results = runFunctionalized(step, stack);
        stack.assign(1, c10::ivalue::Tuple::create(std::move(results)));
        break;
    }
    }
    TORCH_CHECK(stack.size() >= step.outputs.size(), step.label, " returned ", stack.size(),
                " values where its schema has ", step.outputs.size());
    for (size_t i = 0; i < step.outputs.size(); ++i) {
        assign(step, i, stack[i], env);
    }
}

std::vector<c10::IValue> runProgram(const Program& program, std::vector<c10::IValue> inputs,
                                    const ExportedInterpreter::Observer* observer) {
    std::vector<c10::IValue> env(static_cast<size_t>(program.slots));
    TORCH_CHECK(inputs.size() == program.inputs.size(), "the graph takes ", program.inputs.size(),
                " inputs, not ", inputs.size());
    struct Depth {
        Depth() { ++programDepth; }
        ~Depth() { --programDepth; }
    } depth;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (program.inputs[i] >= 0) {
            env[size_t(program.inputs[i])] = std::move(inputs[i]);
        }
    }
    torch::jit::Stack stack;
    uint64_t writes = 0;
    for (const Step& step : program.steps) {
        setProfileScope(&step.module);
        try {
            runStep(step, env, stack);
        } catch (const c10::Error& error) {
            // Which node failed, in front of what the operator said.
            TORCH_CHECK(false, step.label, ": ", error.what_without_backtrace());
        }
        const size_t k = static_cast<size_t>(&step - program.steps.data());
        writes += step.writes ? 1 : 0;
        if (observer) {
            for (const std::vector<int>& slots : step.outputs) {
                for (const int slot : slots) {
                    if (slot >= 0 && env[size_t(slot)].isTensor()) {
                        (*observer)({static_cast<int>(k), program.lastUse[size_t(slot)],
                                     program.names[size_t(slot)], env[size_t(slot)].toTensor(),
                                     writes});
                    }
                }
            }
        }
        for (const int slot : program.freedAfter[k]) {
            env[size_t(slot)] = c10::IValue();
        }
    }
    std::vector<c10::IValue> outputs;
    outputs.reserve(program.outputs.size());
    for (const Arg& output : program.outputs) {
        outputs.push_back(make(output, env));
    }
    return outputs;
}

} // namespace

ExportedInterpreter::ExportedInterpreter() = default;
ExportedInterpreter::~ExportedInterpreter() = default;

const torch::Device& ExportedInterpreter::device() const {
    return program_->device;
}

size_t ExportedInterpreter::userInputs() const {
    return program_->userInputs;
}

Expected<std::unique_ptr<ExportedInterpreter>>
ExportedInterpreter::prepare(const ExportedProgram& exported, const torch::Device& device) {
    const std::string& path = exported.info().path;
    if (!exported.hasProgram()) {
        return Error{ErrorKind::Format, "'" + path + "' holds no exported program to run"};
    }
    const Pt2Model& model = exported.program();
    if (model.nodes.empty() && model.inputValues.empty() && !exported.archive().notes.empty()) {
        std::string why;
        for (const std::string& note : exported.archive().notes) {
            why += (why.empty() ? "" : "; ") + note;
        }
        return Error{ErrorKind::Format, "the program of '" + path + "' did not read: " + why};
    }
    if (auto error = checkExportedGraph(model)) {
        return *error;
    }
    auto built = buildProgram(model, device, "the graph of '" + model.name + "'");
    if (!built) {
        return built.error();
    }
    std::unique_ptr<ExportedInterpreter> interpreter(new ExportedInterpreter());
    interpreter->program_ = std::make_unique<Program>(std::move(*built.value()));
    Program& program = *interpreter->program_;
    program.device = device;
    // The weights and constants, by their state-dict names.
    const ZipReader zip(path);
    if (!zip.ok()) {
        return Error{ErrorKind::File, "cannot read '" + path + "' again to load its weights"};
    }
    std::map<std::string, at::Tensor> tensors;
    try {
        auto read = readProgramTensors(zip, model, path);
        if (!read) {
            return read.error();
        }
        tensors = std::move(read).value();
        for (auto& [name, tensor] : tensors) {
            tensor = tensor.to(device).detach();
        }
    } catch (const std::exception& error) {
        Error e = errorFromException(error, ErrorKind::Format);
        e.message = "cannot read the weights of '" + path + "': " + e.message;
        return e;
    }
    std::map<std::string, size_t> userInputIndex; // graph name -> position among the user inputs
    for (const Pt2SignatureEntry& entry : model.inputs) {
        Program::Binding binding;
        if (entry.kind == "USER_INPUT") {
            userInputIndex[entry.name] = program.userInputs++;
        } else if (entry.kind == "PARAMETER" || entry.kind == "BUFFER" ||
                   entry.kind == "CONSTANT_TENSOR") {
            const auto found = tensors.find(entry.target);
            if (found == tensors.end()) {
                return Error{ErrorKind::Format, "'" + path + "' has no data for the " + entry.kind +
                                                    " '" + entry.target + "' its graph reads"};
            }
            binding.from = Program::Binding::From::Tensor;
            binding.tensor = found->second;
        } else if (entry.kind == "TOKEN") {
            binding.from = Program::Binding::From::Token;
        } else {
            return Error{ErrorKind::Format, "'" + path + "' takes a " + entry.kind + " ('" +
                                                entry.name +
                                                "'), which ScriptScope's interpreter does not "
                                                "run yet"};
        }
        program.bindings.push_back(std::move(binding));
    }
    for (const Pt2SignatureEntry& entry : model.outputs) {
        Program::Mutation mutation;
        if (entry.kind == "BUFFER_MUTATION") {
            const auto found = tensors.find(entry.target);
            if (found == tensors.end()) {
                return Error{ErrorKind::Format, "'" + path + "' mutates the buffer '" +
                                                    entry.target + "', which it holds no data for"};
            }
            mutation.of = Program::Mutation::Of::Buffer;
            mutation.buffer = found->second;
        } else if (entry.kind == "USER_INPUT_MUTATION") {
            const auto found = userInputIndex.find(entry.target);
            if (found == userInputIndex.end()) {
                return Error{ErrorKind::Format, "'" + path + "' mutates the input '" +
                                                    entry.target + "', which it does not take"};
            }
            mutation.of = Program::Mutation::Of::UserInput;
            mutation.userInput = found->second;
        } else if (entry.kind != "USER_OUTPUT" && entry.kind != "LOSS_OUTPUT") {
            mutation.of = Program::Mutation::Of::None;
            mutation.userInput = SIZE_MAX; // not returned
        }
        program.mutations.push_back(std::move(mutation));
    }
    return interpreter;
}

size_t ExportedInterpreter::steps() const {
    return program_->steps.size();
}

bool ExportedInterpreter::holdsStorage(const at::Tensor& tensor) const {
    if (!tensor.defined() || !tensor.has_storage()) {
        return false;
    }
    const void* storage = tensor.storage().unsafeGetStorageImpl();
    for (const Program::Binding& binding : program_->bindings) {
        if (binding.tensor.defined() && binding.tensor.has_storage() &&
            binding.tensor.storage().unsafeGetStorageImpl() == storage) {
            return true;
        }
    }
    return false;
}

std::vector<c10::IValue> ExportedInterpreter::run(const std::vector<c10::IValue>& inputs) {
    return run(inputs, Observer());
}

std::vector<c10::IValue> ExportedInterpreter::run(const std::vector<c10::IValue>& inputs,
                                                  const Observer& observer,
                                                  std::vector<ControlFlowRun>* flow) {
    Program& program = *program_;
    struct FlowScope {
        explicit FlowScope(std::vector<ControlFlowRun>* log) { flowLog = log; }
        ~FlowScope() { flowLog = nullptr; }
    } flowScope(flow);
    if (flow) {
        flow->clear();
    }
    TORCH_CHECK(inputs.size() == program.userInputs, "the program takes ", program.userInputs,
                " inputs, not ", inputs.size());
    std::vector<c10::IValue> placeholders;
    placeholders.reserve(program.bindings.size());
    size_t next = 0;
    for (const Program::Binding& binding : program.bindings) {
        switch (binding.from) {
        case Program::Binding::From::User:
            placeholders.push_back(inputs[next++]);
            break;
        case Program::Binding::From::Tensor:
            placeholders.push_back(binding.tensor);
            break;
        case Program::Binding::From::Token:
            placeholders.push_back(at::empty({0}, at::TensorOptions().device(program.device)));
            break;
        }
    }
    struct ScopeReset {
        ~ScopeReset() { setProfileScope(nullptr); }
    } reset;
    if (observer) {
        for (size_t i = 0; i < program.bindings.size() && i < program.inputs.size(); ++i) {
            const int slot = program.inputs[i];
            if (program.bindings[i].from == Program::Binding::From::User && slot >= 0 &&
                placeholders[i].isTensor()) {
                observer({-1, program.lastUse[size_t(slot)], program.names[size_t(slot)],
                          placeholders[i].toTensor()});
            }
        }
    }
    std::vector<c10::IValue> outputs =
        runProgram(program, std::move(placeholders), observer ? &observer : nullptr);
    std::vector<c10::IValue> user;
    for (size_t i = 0; i < outputs.size() && i < program.mutations.size(); ++i) {
        const Program::Mutation& mutation = program.mutations[i];
        if (mutation.of == Program::Mutation::Of::Buffer) {
            at::Tensor buffer = mutation.buffer;
            buffer.copy_(outputs[i].toTensor());
        } else if (mutation.of == Program::Mutation::Of::UserInput) {
            at::Tensor input = inputs[mutation.userInput].toTensor();
            input.copy_(outputs[i].toTensor());
        } else if (mutation.userInput != SIZE_MAX) {
            user.push_back(std::move(outputs[i]));
        }
    }
    return user;
}

c10::IValue programOutput(const Pt2Model& model, std::vector<c10::IValue> outputs) {
    if (model.outputSpec && model.outputSpec->leaves() == outputs.size()) {
        auto nested = nestOutputs(*model.outputSpec, outputs);
        if (nested) {
            return std::move(nested).value();
        }
    }
    return outputs.size() == 1 ? outputs.front() : c10::ivalue::Tuple::create(std::move(outputs));
}

} // namespace scriptscope::detail
