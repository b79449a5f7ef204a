#include "exported_interpreter.h"
#include "session_internal.h"
#include "torch_values.h"

#include <graph_check.h>
#include <pt2_values.h>
#include <zip_reader.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <unistd.h>

namespace scriptscope::detail {

namespace {

using Kind = Pt2Value::Kind;

// How one argument is made at run time: a constant made once, a value of the environment, or a
// list of values and constants.
struct Arg {
    enum class How { Constant, Slot, Tensors, OptionalTensors, Ints, Floats, Bools };
    How how = How::Constant;
    c10::IValue constant;
    int slot = -1;
    std::vector<int> slots; // lists: -1 where the element is a constant (or None)
    std::vector<int64_t> ints;
    std::vector<double> floats;
};

// Python-level calls on SymInts, floats and bools (operator.add, torch.sym_max, ...).
using SymFunction = std::function<c10::IValue(const std::vector<c10::IValue>&)>;

struct Step {
    enum class What { Operator, Python, GetItem, Cond };
    What what = What::Operator;
    std::string label;  // "node 'conv2d' (aten::conv2d)"
    std::string module; // the innermost module of its nn_module_stack ("layer1.0.conv1")
    std::optional<c10::OperatorHandle> op;
    size_t returns = 0; // the schema's
    SymFunction function;
    std::vector<Arg> args;
    // Where each return goes: one slot, or (a list return) one slot per element.
    std::vector<std::vector<int>> outputs;
    std::vector<bool> listOutput;
    std::vector<std::shared_ptr<const ExportedInterpreter::Program>> branches; // cond: true, false
};

} // namespace

struct ExportedInterpreter::Program {
    std::vector<int> inputs; // the placeholders' slots, -1 for one that is not a value
    std::vector<Step> steps;
    std::vector<Arg> outputs;
    int slots = 0;
    std::vector<std::string> names; // per slot: the graph's name for the value
    // The top-level program only: how placeholders are bound, and mutated outputs written back.
    struct Binding {
        enum class From { User, Tensor, Token } from = From::User;
        at::Tensor tensor; // a parameter, buffer or constant
    };
    std::vector<Binding> bindings;
    struct Mutation {
        enum class Of { None, Buffer, UserInput } of = Of::None;
        at::Tensor buffer;
        size_t userInput = 0;
    };
    std::vector<Mutation> mutations; // one per output
    size_t userInputs = 0;
    torch::Device device{torch::kCPU};
};

namespace {

using Program = ExportedInterpreter::Program;

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
                        (*observer)(program.names[size_t(slot)], env[size_t(slot)].toTensor());
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

// ---- Preparing: the graph resolved into steps, checked against the schemas ----

// The serializer's ScalarType codes (torch/_export/serde/schema.py) by c10's names.
std::optional<c10::ScalarType> scalarTypeOf(int64_t code) {
    static const std::map<int64_t, const char*> names = {{1, "Byte"},
                                                         {2, "Char"},
                                                         {3, "Short"},
                                                         {4, "Int"},
                                                         {5, "Long"},
                                                         {6, "Half"},
                                                         {7, "Float"},
                                                         {8, "Double"},
                                                         {9, "ComplexHalf"},
                                                         {10, "ComplexFloat"},
                                                         {11, "ComplexDouble"},
                                                         {12, "Bool"},
                                                         {13, "BFloat16"},
                                                         {28, "UInt16"},
                                                         {29, "Float8_e4m3fn"},
                                                         {30, "Float8_e5m2"},
                                                         {31, "Float8_e4m3fnuz"},
                                                         {32, "Float8_e5m2fnuz"},
                                                         {33, "Float8_e8m0fnu"},
                                                         {34, "UInt32"},
                                                         {35, "UInt64"}};
    const auto name = names.find(code);
    if (name == names.end()) {
        return std::nullopt;
    }
    for (int i = 0; i < static_cast<int>(c10::ScalarType::NumOptions); ++i) {
        const auto type = static_cast<c10::ScalarType>(i);
        if (std::string(c10::toString(type)) == name->second) {
            return type;
        }
    }
    return std::nullopt;
}

int64_t layoutOf(int64_t code) {
    switch (code) {
    case 1:
        return static_cast<int64_t>(c10::kSparse);
    case 2:
        return static_cast<int64_t>(c10::kSparseCsr);
    case 6:
        return static_cast<int64_t>(c10::kMkldnn);
    default:
        return static_cast<int64_t>(c10::kStrided);
    }
}

int64_t memoryFormatOf(int64_t code) {
    switch (code) {
    case 2:
        return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast);
    case 3:
        return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast3d);
    case 4:
        return static_cast<int64_t>(c10::MemoryFormat::Preserve);
    default:
        return static_cast<int64_t>(c10::MemoryFormat::Contiguous);
    }
}

const char* kindName(Kind kind) {
    switch (kind) {
    case Kind::None:
        return "None";
    case Kind::Tensor:
        return "a tensor";
    case Kind::Tensors:
        return "a list of tensors";
    case Kind::OptionalTensors:
        return "a list of optional tensors";
    case Kind::Int:
    case Kind::SymInt:
        return "an int";
    case Kind::Ints:
    case Kind::SymInts:
        return "a list of ints";
    case Kind::Float:
    case Kind::SymFloat:
        return "a float";
    case Kind::Floats:
    case Kind::SymFloats:
        return "a list of floats";
    case Kind::Bool:
    case Kind::SymBool:
        return "a bool";
    case Kind::Bools:
    case Kind::SymBools:
        return "a list of bools";
    case Kind::String:
        return "a string";
    case Kind::Strings:
        return "a list of strings";
    case Kind::ScalarType:
        return "a dtype";
    case Kind::MemoryFormat:
        return "a memory format";
    case Kind::Layout:
        return "a layout";
    case Kind::Device:
        return "a device";
    case Kind::Graph:
        return "a graph";
    case Kind::Other:
        return "a value this interpreter does not run";
    }
    return "a value";
}

// Whether a value of `kind` can be given for a schema argument of type `type` (its str(), which
// reads the same in LibTorch 1.13 and 2.x: "Tensor", "Tensor?[]", "SymInt[]", "Scalar", ...).
bool fits(std::string type, Kind kind) {
    if (kind == Kind::None) {
        return type.size() > 1 && type.back() == '?';
    }
    if (!type.empty() && type.back() == '?') {
        type.pop_back();
    }
    const bool list = type.size() > 2 && type.compare(type.size() - 2, 2, "[]") == 0;
    const std::string element = list ? type.substr(0, type.size() - 2) : type;
    if (list) {
        if (element == "Tensor" || element == "Tensor?") {
            return kind == Kind::Tensors || (element == "Tensor?" && kind == Kind::OptionalTensors);
        }
        if (element == "int" || element == "SymInt") {
            return kind == Kind::Ints || kind == Kind::SymInts;
        }
        if (element == "float") {
            return kind == Kind::Floats || kind == Kind::SymFloats;
        }
        if (element == "bool") {
            return kind == Kind::Bools || kind == Kind::SymBools;
        }
        if (element == "str") {
            return kind == Kind::Strings;
        }
        if (element == "Scalar") {
            return kind == Kind::Ints || kind == Kind::Floats;
        }
        return kind != Kind::Other;
    }
    if (type == "Tensor") {
        // Python wraps a number given for a tensor (x.add_(1)) into a 0-dim tensor.
        return kind == Kind::Tensor || kind == Kind::Int || kind == Kind::Float ||
               kind == Kind::Bool;
    }
    if (type == "int" || type == "SymInt") {
        return kind == Kind::Int || kind == Kind::SymInt || kind == Kind::ScalarType ||
               kind == Kind::Layout || kind == Kind::MemoryFormat || kind == Kind::Bool;
    }
    if (type == "ScalarType") {
        return kind == Kind::ScalarType || kind == Kind::Int;
    }
    if (type == "Layout") {
        return kind == Kind::Layout || kind == Kind::Int;
    }
    if (type == "MemoryFormat") {
        return kind == Kind::MemoryFormat || kind == Kind::Int;
    }
    if (type == "float" || type == "SymFloat") {
        return kind == Kind::Float || kind == Kind::SymFloat || kind == Kind::Int ||
               kind == Kind::SymInt;
    }
    if (type == "Scalar" || type == "number") {
        return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool ||
               kind == Kind::SymInt || kind == Kind::SymFloat;
    }
    if (type == "bool" || type == "SymBool") {
        return kind == Kind::Bool || kind == Kind::SymBool;
    }
    if (type == "str") {
        return kind == Kind::String;
    }
    if (type == "Device") {
        return kind == Kind::Device;
    }
    return kind != Kind::Other && kind != Kind::Graph;
}

// A number given where a tensor is taken, as Python passes it: a 0-dim tensor marked as a wrapped
// number, so that it does not decide the result's dtype (int + float32 tensor stays float32).
at::Tensor wrappedNumber(at::Tensor tensor) {
    tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
    return tensor;
}

class Builder {
public:
    Builder(const torch::Device& device)
        : device_(device) {}

    // The graph into a program: slots for its values, a step per node.
    Expected<std::shared_ptr<Program>> build(const Pt2Model& graph, const std::string& where) {
        auto program = std::make_shared<Program>();
        std::map<std::string, int> slots;
        const auto slotOf = [&](const std::string& name) {
            const auto found = slots.find(name);
            if (found != slots.end()) {
                return found->second;
            }
            slots.emplace(name, program->slots);
            program->names.push_back(name);
            return program->slots++;
        };
        for (const Pt2Value& input : graph.inputValues) {
            program->inputs.push_back(
                input.names.empty() || input.names[0].empty() ? -1 : slotOf(input.names[0]));
        }
        for (const Pt2Node& node : graph.nodes) {
            auto step = this->step(graph, node, slots, slotOf, where);
            if (!step) {
                return step.error();
            }
            program->steps.push_back(std::move(step).value());
        }
        for (const Pt2Value& output : graph.outputValues) {
            auto arg = value(output, "", slots, where + ": an output");
            if (!arg) {
                return arg.error();
            }
            program->outputs.push_back(std::move(arg).value());
        }
        return program;
    }

private:
    template <class SlotOf>
    Expected<Step> step(const Pt2Model& graph, const Pt2Node& node,
                        const std::map<std::string, int>& slots, SlotOf& slotOf,
                        const std::string& where) {
        Step step;
        const std::string& target = node.target;
        step.label = "node '" + node.name + "' (" + target + ")";
        const std::string at = where + ": " + step.label;
        if (target == "torch.ops.higher_order.cond") {
            auto cond = this->cond(graph, node, slots, at);
            if (!cond) {
                return cond.error();
            }
            step = std::move(cond).value();
            step.label = "node '" + node.name + "' (" + target + ")";
        } else if (target.rfind("torch.ops.higher_order.", 0) == 0) {
            return Error{ErrorKind::Format,
                         at + ": the higher-order operator " + target.substr(23) +
                             " is not run by ScriptScope's interpreter yet (torch.cond is)"};
        } else if (target.rfind("torch.ops.", 0) == 0) {
            auto call = operatorCall(node, slots, at);
            if (!call) {
                return call.error();
            }
            step = std::move(call).value();
            step.label = "node '" + node.name + "' (" + target.substr(10) + ")";
        } else if (target == "_operator.getitem") {
            step.what = Step::What::GetItem;
            if (auto error = positional(node, 2, slots, at, step)) {
                return *error;
            }
        } else if (SymFunction function = symFunction(target)) {
            step.what = Step::What::Python;
            step.function = std::move(function);
            if (auto error = positional(node, node.inputs.size(), slots, at, step)) {
                return *error;
            }
        } else {
            return Error{ErrorKind::MissingOperator,
                         at + ": the target " + target +
                             " is neither a registered operator nor a Python function the "
                             "interpreter knows"};
        }
        if (!node.moduleStack.empty()) {
            step.module = node.moduleStack.back().path;
        }
        // Where the returns go.
        const size_t returns = step.what == Step::What::Operator ? step.returns : 1;
        std::vector<Pt2Value> outputs = node.returns;
        while (!outputs.empty() && outputs.size() > returns && outputs.back().kind == Kind::None) {
            outputs.pop_back();
        }
        if (step.what == Step::What::Cond) {
            // cond returns a tuple: its elements are the node's outputs.
            Pt2Value all;
            all.kind = Kind::Tensors;
            for (const Pt2Value& output : outputs) {
                all.names.push_back(output.names.empty() ? "" : output.names[0]);
            }
            outputs = {all};
        }
        if (outputs.size() != returns && !(returns == 0 && outputs.empty())) {
            return Error{ErrorKind::Format, at + " names " + std::to_string(outputs.size()) +
                                                " outputs, but it returns " +
                                                std::to_string(returns)};
        }
        for (const Pt2Value& output : outputs) {
            const bool list = output.kind == Kind::Tensors || output.kind == Kind::SymInts;
            std::vector<int> targets;
            for (const std::string& name : output.names) {
                targets.push_back(name.empty() ? -1 : slotOf(name));
            }
            step.outputs.push_back(std::move(targets));
            step.listOutput.push_back(list);
        }
        return step;
    }

    // A registered operator: its arguments in schema order, defaults filled in, each checked.
    Expected<Step> operatorCall(const Pt2Node& node, const std::map<std::string, int>& slots,
                                const std::string& at) {
        // torch.ops.<namespace>.<name>.<overload>
        const std::string path = node.target.substr(10);
        const size_t first = path.find('.');
        const size_t last = path.rfind('.');
        if (first == std::string::npos || last == first) {
            return Error{ErrorKind::Format, at + ": the target is not an operator's overload"};
        }
        const std::string name =
            path.substr(0, first) + "::" + path.substr(first + 1, last - first - 1);
        std::string overload = path.substr(last + 1);
        if (overload == "default") {
            overload.clear();
        }
        const auto op = c10::Dispatcher::singleton().findSchema({name, overload});
        if (!op) {
            Error e{ErrorKind::MissingOperator, ""};
            e.operatorName = overload.empty() ? name : name + "." + overload;
            const bool pytorch = name.rfind("aten::", 0) == 0 || name.rfind("prims::", 0) == 0;
            if (pytorch) {
                e.kind = ErrorKind::NeedsNewerLibTorch;
                e.message = at + ": LibTorch " + libtorchVersion() + " has no " + e.operatorName +
                            "; the program was exported by a newer PyTorch. Open it with a "
                            "ScriptScope built on that PyTorch (scripts/setup.sh --torch-venv)";
            } else {
                e.library = knownOperatorLibrary(name);
                e.message =
                    at + ": the operator " + e.operatorName +
                    " is not registered. Load the library that defines it first "
                    "(scriptscope-cli --op-library PATH; in the GUI, File > Load "
                    "Operator Library)" +
                    (e.library.empty() ? std::string() : "; this machine has it in " + e.library);
            }
            return e;
        }
        Step step;
        step.what = Step::What::Operator;
        step.op = *op;
        const c10::FunctionSchema& schema = op->schema();
        step.returns = schema.returns().size();
        std::vector<bool> used(node.inputs.size(), false);
        for (const c10::Argument& argument : schema.arguments()) {
            const std::string type = argument.type()->str();
            size_t given = node.inputs.size();
            for (size_t i = 0; i < node.inputs.size(); ++i) {
                if (!used[i] && node.inputs[i].name == argument.name()) {
                    given = i;
                    break;
                }
            }
            if (given == node.inputs.size()) {
                if (argument.default_value()) {
                    Arg constant;
                    constant.constant = *argument.default_value();
                    step.args.push_back(std::move(constant));
                } else if (!type.empty() && type.back() == '?') {
                    step.args.push_back({});
                } else {
                    return Error{ErrorKind::Format, at + ": the argument '" + argument.name() +
                                                        "' of " + schema.name() +
                                                        " is not given and has no default"};
                }
                continue;
            }
            used[given] = true;
            const Pt2Value& value = node.inputs[given].value;
            if (!fits(type, value.kind)) {
                return Error{ErrorKind::Format,
                             at + ": the argument '" + argument.name() + "' of " + schema.name() +
                                 " takes " + type + ", but the graph gives " +
                                 kindName(value.kind) +
                                 (value.kind == Kind::Other ? " (" + value.text + ")" : "")};
            }
            auto arg = this->value(value, type, slots, at);
            if (!arg) {
                return arg.error();
            }
            step.args.push_back(std::move(arg).value());
        }
        for (size_t i = 0; i < used.size(); ++i) {
            if (!used[i]) {
                return Error{ErrorKind::Format, at + ": " + schema.name() + " has no argument '" +
                                                    node.inputs[i].name +
                                                    "' (its schema: " + toString(schema) + ")"};
            }
        }
        return step;
    }

    // The first `count` inputs in order (Python functions and getitem take them positionally).
    Status positional(const Pt2Node& node, size_t count, const std::map<std::string, int>& slots,
                      const std::string& at, Step& step) {
        if (node.inputs.size() != count) {
            return Error{ErrorKind::Format, at + " takes " + std::to_string(count) +
                                                " arguments, not " +
                                                std::to_string(node.inputs.size())};
        }
        for (const Pt2Argument& input : node.inputs) {
            auto arg = value(input.value, "", slots, at);
            if (!arg) {
                return arg.error();
            }
            step.args.push_back(std::move(arg).value());
        }
        return std::nullopt;
    }

    // torch.cond(pred, true_graph, false_graph, operands).
    Expected<Step> cond(const Pt2Model& graph, const Pt2Node& node,
                        const std::map<std::string, int>& slots, const std::string& at) {
        if (node.inputs.size() != 4 || node.inputs[1].value.kind != Kind::Graph ||
            node.inputs[2].value.kind != Kind::Graph) {
            return Error{ErrorKind::Format, at + " is not cond(pred, true_fn, false_fn, operands)"};
        }
        Step step;
        step.what = Step::What::Cond;
        for (const size_t i : {size_t(0), size_t(3)}) {
            auto arg = value(node.inputs[i].value, "", slots, at);
            if (!arg) {
                return arg.error();
            }
            step.args.push_back(std::move(arg).value());
        }
        if (step.args[1].how != Arg::How::Tensors && step.args[1].how != Arg::How::Constant) {
            return Error{ErrorKind::Format, at + ": its operands are not a list of tensors"};
        }
        for (const size_t i : {size_t(1), size_t(2)}) {
            const std::string& name = node.inputs[i].value.text;
            const auto found =
                std::find_if(graph.subgraphs.begin(), graph.subgraphs.end(),
                             [&](const Pt2Model& subgraph) { return subgraph.name == name; });
            if (found == graph.subgraphs.end()) {
                return Error{ErrorKind::Format, at + " calls the graph '" + name +
                                                    "', which the archive does not hold"};
            }
            auto branch = build(*found, at + " > " + name);
            if (!branch) {
                return branch.error();
            }
            step.branches.push_back(std::move(branch).value());
        }
        return step;
    }

    // A value given for a schema argument of `type` ("" where there is no schema).
    Expected<Arg> value(const Pt2Value& value, const std::string& type,
                        const std::map<std::string, int>& slots, const std::string& at) {
        Arg arg;
        std::string missing;
        const auto slotOf = [&](const std::string& name) {
            const auto found = slots.find(name);
            if (found == slots.end()) {
                missing = name;
                return -1;
            }
            return found->second;
        };
        const auto element = [&](size_t i) { return value.names.size() > i ? value.names[i] : ""; };
        const auto symList = [&](Arg::How how) {
            arg.how = how;
            arg.ints = value.ints;
            arg.floats = value.floats;
            for (size_t i = 0; i < value.names.size(); ++i) {
                arg.slots.push_back(element(i).empty() ? -1 : slotOf(element(i)));
            }
        };
        std::string bare = type;
        if (!bare.empty() && bare.back() == '?') {
            bare.pop_back();
        }
        switch (value.kind) {
        case Kind::None:
            break;
        case Kind::Tensor:
        case Kind::SymInt:
        case Kind::SymFloat:
        case Kind::SymBool:
            if (element(0).empty()) {
                if (value.kind == Kind::SymFloat) {
                    arg.constant = value.floats.empty() ? 0.0 : value.floats[0];
                } else if (value.kind == Kind::SymBool) {
                    arg.constant = !value.ints.empty() && value.ints[0] != 0;
                } else {
                    arg.constant = value.ints.empty() ? int64_t(0) : value.ints[0];
                }
            } else {
                arg.how = Arg::How::Slot;
                arg.slot = slotOf(element(0));
            }
            break;
        case Kind::Tensors:
        case Kind::OptionalTensors:
            arg.how = value.kind == Kind::OptionalTensors || bare == "Tensor?[]"
                          ? Arg::How::OptionalTensors
                          : Arg::How::Tensors;
            for (size_t i = 0; i < value.names.size(); ++i) {
                arg.slots.push_back(element(i).empty() ? -1 : slotOf(element(i)));
            }
            break;
        case Kind::SymInts:
            symList(Arg::How::Ints);
            break;
        case Kind::SymFloats:
            symList(Arg::How::Floats);
            break;
        case Kind::SymBools:
            symList(Arg::How::Bools);
            break;
        case Kind::Int:
            if (bare == "Tensor") {
                arg.constant = wrappedNumber(at::scalar_tensor(value.ints[0], at::kLong));
            } else if (bare == "float" || bare == "SymFloat") {
                arg.constant = static_cast<double>(value.ints[0]);
            } else if (bare == "bool") {
                arg.constant = value.ints[0] != 0;
            } else {
                arg.constant = value.ints[0];
            }
            break;
        case Kind::Ints:
            arg.constant = value.ints;
            break;
        case Kind::Float:
            arg.constant =
                bare == "Tensor"
                    ? c10::IValue(wrappedNumber(at::scalar_tensor(value.floats[0], at::kDouble)))
                    : c10::IValue(value.floats[0]);
            break;
        case Kind::Floats:
            arg.constant = value.floats;
            break;
        case Kind::Bool:
            arg.constant =
                bare == "Tensor"
                    ? c10::IValue(wrappedNumber(at::scalar_tensor(value.ints[0] != 0, at::kBool)))
                    : c10::IValue(value.ints[0] != 0);
            break;
        case Kind::Bools: {
            c10::List<bool> bools;
            for (const int64_t b : value.ints) {
                bools.push_back(b != 0);
            }
            arg.constant = bools;
            break;
        }
        case Kind::String:
            arg.constant = value.text;
            break;
        case Kind::Strings: {
            c10::List<std::string> strings;
            for (const std::string& s : value.strings) {
                strings.push_back(s);
            }
            arg.constant = strings;
            break;
        }
        case Kind::ScalarType: {
            const auto scalarType = scalarTypeOf(value.ints[0]);
            if (!scalarType) {
                return Error{ErrorKind::NeedsNewerLibTorch,
                             at + ": it uses a dtype (serialized as " +
                                 std::to_string(value.ints[0]) + ") that LibTorch " +
                                 libtorchVersion() + " does not have"};
            }
            arg.constant = static_cast<int64_t>(*scalarType);
            break;
        }
        case Kind::Layout:
            arg.constant = layoutOf(value.ints[0]);
            break;
        case Kind::MemoryFormat:
            arg.constant = memoryFormatOf(value.ints[0]);
            break;
        case Kind::Device:
            // Tensors the graph makes go where the run is (torch.export's move_to_device_pass).
            arg.constant = device_;
            break;
        case Kind::Graph:
        case Kind::Other:
            return Error{ErrorKind::Format,
                         at + " takes " + kindName(value.kind) + " (" + value.text + ")"};
        }
        if (!missing.empty()) {
            return Error{ErrorKind::Format,
                         at + " reads '" + missing + "', which no input or earlier node defines"};
        }
        return arg;
    }

    static SymFunction symFunction(const std::string& target) {
        using V = std::vector<c10::IValue>;
        const auto number = [](const c10::IValue& v) {
            return v.isDouble() ? v.toDouble()
                   : v.isBool() ? double(v.toBool())
                                : double(v.toInt());
        };
        const auto integral = [](const V& a) {
            return std::all_of(a.begin(), a.end(),
                               [](const c10::IValue& v) { return v.isInt() || v.isBool(); });
        };
        const auto integer = [](const c10::IValue& v) {
            return v.isBool() ? int64_t(v.toBool()) : v.toInt();
        };
        const auto arithmetic = [=](auto ints, auto floats) -> SymFunction {
            return [=](const V& a) -> c10::IValue {
                TORCH_CHECK(a.size() == 2, "takes two arguments");
                if (integral(a)) {
                    return ints(integer(a[0]), integer(a[1]));
                }
                return floats(number(a[0]), number(a[1]));
            };
        };
        const auto compare = [=](auto op) -> SymFunction {
            return [=](const V& a) -> c10::IValue {
                TORCH_CHECK(a.size() == 2, "takes two arguments");
                return op(number(a[0]), number(a[1]));
            };
        };
        static const std::map<std::string, std::function<SymFunction()>> functions = {
            {"_operator.add",
             [=] { return arithmetic(std::plus<int64_t>(), std::plus<double>()); }},
            {"_operator.sub",
             [=] { return arithmetic(std::minus<int64_t>(), std::minus<double>()); }},
            {"_operator.mul",
             [=] { return arithmetic(std::multiplies<int64_t>(), std::multiplies<double>()); }},
            {"_operator.floordiv",
             [=] {
                 return arithmetic(
                     [](int64_t x, int64_t y) {
                         TORCH_CHECK(y != 0, "integer division by zero");
                         const int64_t q = x / y;
                         return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
                     },
                     [](double x, double y) { return std::floor(x / y); });
             }},
            {"_operator.mod",
             [=] {
                 return arithmetic(
                     [](int64_t x, int64_t y) {
                         TORCH_CHECK(y != 0, "integer modulo by zero");
                         const int64_t r = x % y;
                         return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
                     },
                     [](double x, double y) { return x - std::floor(x / y) * y; });
             }},
            {"_operator.truediv",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 2, "takes two arguments");
                     return number(a[0]) / number(a[1]);
                 });
             }},
            {"_operator.pow",
             [=] {
                 return arithmetic(
                     [](int64_t x, int64_t y) {
                         return static_cast<int64_t>(std::llround(std::pow(x, y)));
                     },
                     [](double x, double y) { return std::pow(x, y); });
             }},
            {"torch.sym_max",
             [=] {
                 return arithmetic([](int64_t x, int64_t y) { return std::max(x, y); },
                                   [](double x, double y) { return std::max(x, y); });
             }},
            {"torch.sym_min",
             [=] {
                 return arithmetic([](int64_t x, int64_t y) { return std::min(x, y); },
                                   [](double x, double y) { return std::min(x, y); });
             }},
            {"_operator.eq", [=] { return compare(std::equal_to<double>()); }},
            {"_operator.ne", [=] { return compare(std::not_equal_to<double>()); }},
            {"_operator.lt", [=] { return compare(std::less<double>()); }},
            {"_operator.le", [=] { return compare(std::less_equal<double>()); }},
            {"_operator.gt", [=] { return compare(std::greater<double>()); }},
            {"_operator.ge", [=] { return compare(std::greater_equal<double>()); }},
            {"_operator.and_",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 2, "takes two arguments");
                     return number(a[0]) != 0 && number(a[1]) != 0;
                 });
             }},
            {"_operator.or_",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 2, "takes two arguments");
                     return number(a[0]) != 0 || number(a[1]) != 0;
                 });
             }},
            {"_operator.neg",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 1, "takes one argument");
                     return a[0].isDouble() ? c10::IValue(-a[0].toDouble())
                                            : c10::IValue(-integer(a[0]));
                 });
             }},
            {"torch.sym_not",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 1, "takes one argument");
                     return number(a[0]) == 0;
                 });
             }},
            {"torch.sym_float",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 1, "takes one argument");
                     return number(a[0]);
                 });
             }},
            {"torch.sym_int",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 1, "takes one argument");
                     return static_cast<int64_t>(std::trunc(number(a[0])));
                 });
             }},
            {"math.ceil",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 1, "takes one argument");
                     return static_cast<int64_t>(std::ceil(number(a[0])));
                 });
             }},
            {"math.floor",
             [=] {
                 return SymFunction([=](const V& a) -> c10::IValue {
                     TORCH_CHECK(a.size() == 1, "takes one argument");
                     return static_cast<int64_t>(std::floor(number(a[0])));
                 });
             }},
        };
        const auto found = functions.find(target);
        return found == functions.end() ? SymFunction() : found->second();
    }

    torch::Device device_;
};

// ---- Weights ----

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
    std::error_code ignored;
    static std::atomic<int> copies{0};
    const auto copy = std::filesystem::temp_directory_path(ignored) /
                      ("scriptscope-weight-" + std::to_string(::getpid()) + "-" +
                       std::to_string(++copies) + ".pt");
    {
        std::ofstream out(copy, std::ios::binary);
        out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
        if (!out.flush()) {
            std::filesystem::remove(copy, ignored);
            return Error{ErrorKind::File, "cannot write '" + copy.string() + "' to read '" + name +
                                              "' of '" + path + "'"};
        }
    }
    auto value = loadValueFile(copy.string());
    std::filesystem::remove(copy, ignored);
    return value;
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
    Builder builder(device);
    auto built = builder.build(model, "the graph of '" + model.name + "'");
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
                observer(program.names[size_t(slot)], placeholders[i].toTensor());
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
