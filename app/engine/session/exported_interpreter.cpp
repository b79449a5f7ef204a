// An exported program run: prepare() checks its graph, resolves it into steps
// (exported_builder.cpp) and reads its weights (exported_weights.cpp); run() moves values between
// slots and the dispatcher.
#include "exported_steps.h"
#include "session_internal.h"
#include "torch_values.h"

#include <graph_check.h>

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

void assign(const Step& step, size_t index, const c10::IValue& value,
            std::vector<c10::IValue>& env) {
    const std::vector<int>& slots = step.outputs[index];
    if (!step.listOutput[index]) {
        if (!slots.empty() && slots[0] >= 0) {
            env[size_t(slots[0])] = value;
        }
        return;
    }
    const std::vector<c10::IValue> elements =
        value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    TORCH_CHECK(elements.size() == slots.size(), step.label, " returned ", elements.size(),
                " values where the graph names ", slots.size());
    for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i] >= 0) {
            env[size_t(slots[i])] = elements[i];
        }
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
        const c10::IValue& container = stack.at(0);
        const int64_t index = stack.at(1).toInt();
        const auto elements = container.isTuple() ? container.toTupleRef().elements().vec()
                                                  : container.toListRef().vec();
        const int64_t size = static_cast<int64_t>(elements.size());
        TORCH_CHECK(index >= -size && index < size, step.label, ": index ", index,
                    " out of range for ", size, " values");
        c10::IValue element = elements[size_t(index < 0 ? index + size : index)];
        stack.assign(1, std::move(element));
        break;
    }
    case Step::What::Cond: {
        const c10::IValue& predicate = stack.at(0);
        const bool taken = predicate.isTensor() ? predicate.toTensor().item<bool>()
                           : predicate.isBool() ? predicate.toBool()
                                                : predicate.toInt() != 0;
        const auto operands = stack.at(1).toListRef().vec();
        std::vector<c10::IValue> results =
            runProgram(*step.branches[taken ? 0 : 1], {operands.begin(), operands.end()});
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
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (program.inputs[i] >= 0) {
            env[size_t(program.inputs[i])] = std::move(inputs[i]);
        }
    }
    torch::jit::Stack stack;
    for (const Step& step : program.steps) {
        setProfileScope(&step.module);
        try {
            runStep(step, env, stack);
        } catch (const c10::Error& error) {
            // Which node failed, in front of what the operator said.
            TORCH_CHECK(false, step.label, ": ", error.what_without_backtrace());
        }
        if (observer) {
            for (const std::vector<int>& slots : step.outputs) {
                for (const int slot : slots) {
                    if (slot >= 0 && env[size_t(slot)].isTensor()) {
                        (*observer)({static_cast<int>(&step - program.steps.data()),
                                     program.lastUse[size_t(slot)], program.names[size_t(slot)],
                                     env[size_t(slot)].toTensor()});
                    }
                }
            }
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
                                                  const Observer& observer) {
    Program& program = *program_;
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

} // namespace scriptscope::detail
