// An exported program's graph resolved into steps before anything runs: each node's operator
// found by its schema and its arguments put in schema order (defaults filled in, each checked for
// its type), the SymInt arithmetic, getitem, and torch.cond's branches as programs of their own.
#include "engine_internal.h"
#include "exported_steps.h"

#include <pt2_values.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace scriptscope::detail {

namespace {

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
        // Where each value is read for the last time: the step, or the end for an output.
        program->lastUse.assign(static_cast<size_t>(program->slots), -1);
        const auto reads = [&program](const Arg& arg, int step) {
            if (arg.slot >= 0) {
                program->lastUse[static_cast<size_t>(arg.slot)] = step;
            }
            for (const int slot : arg.slots) {
                if (slot >= 0) {
                    program->lastUse[static_cast<size_t>(slot)] = step;
                }
            }
        };
        for (size_t k = 0; k < program->steps.size(); ++k) {
            for (const Arg& arg : program->steps[k].args) {
                reads(arg, static_cast<int>(k));
            }
        }
        for (const Arg& output : program->outputs) {
            reads(output, static_cast<int>(program->steps.size()));
        }
        std::vector<int> madeBy(static_cast<size_t>(program->slots), -1);
        for (size_t k = 0; k < program->steps.size(); ++k) {
            for (const std::vector<int>& targets : program->steps[k].outputs) {
                for (const int slot : targets) {
                    if (slot >= 0) {
                        madeBy[static_cast<size_t>(slot)] = static_cast<int>(k);
                    }
                }
            }
        }
        program->freedAfter.assign(program->steps.size(), {});
        for (size_t slot = 0; slot < madeBy.size(); ++slot) {
            const int last = program->lastUse[slot] >= 0 ? program->lastUse[slot] : madeBy[slot];
            if (last >= 0 && last < static_cast<int>(program->steps.size())) {
                program->freedAfter[static_cast<size_t>(last)].push_back(static_cast<int>(slot));
            }
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
        if (target == "torch.ops.higher_order.auto_functionalized" ||
            target == "torch.ops.higher_order.auto_functionalized_v2") {
            auto call = functionalized(node, slots, at);
            if (!call) {
                return call.error();
            }
            step = std::move(call).value();
            step.label = "node '" + node.name + "' (" + target + ")";
        } else if (target.rfind("torch.ops.higher_order.", 0) == 0) {
            auto call = higherOrder(graph, node, slots, at);
            if (!call) {
                return call.error();
            }
            step = std::move(call).value();
            step.label = "node '" + node.name + "' (" + target + ")";
            step.node = node.name;
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
        while (step.what == Step::What::Operator && outputs.size() > returns &&
               outputs.back().kind == Kind::None) {
            outputs.pop_back();
        }
        if (step.what >= Step::What::Cond) {
            // A higher-order operator returns a tuple: its elements are the node's outputs.
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

    // The operator a target names (torch.ops.<namespace>.<name>.<overload>), or why there is
    // none.
    Expected<c10::OperatorHandle> findOperator(const std::string& target, const std::string& at) {
        const std::string path = target.rfind("torch.ops.", 0) == 0 ? target.substr(10) : "";
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
        return *op;
    }

    // A registered operator: its arguments in schema order, defaults filled in, each checked.
    // Those named in `later` are made at run time (None until then).
    Expected<Step> operatorCall(const Pt2Node& node, const std::map<std::string, int>& slots,
                                const std::string& at, const std::set<std::string>& later = {}) {
        auto op = findOperator(node.target, at);
        if (!op) {
            return op.error();
        }
        const std::string& name = op->schema().name();
        Step step;
        step.what = Step::What::Operator;
        step.op = *op;
        const c10::FunctionSchema& schema = op->schema();
        step.returns = schema.returns().size();
        std::vector<bool> used(node.inputs.size(), false);
        for (const c10::Argument& argument : schema.arguments()) {
            const std::string type = argument.type()->str();
            step.writes =
                step.writes || (argument.alias_info() && argument.alias_info()->isWrite());
            if (later.count(argument.name())) {
                step.args.emplace_back();
                continue;
            }
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
                Error e{ErrorKind::Format, at + ": " + schema.name() + " has no argument '" +
                                               node.inputs[i].name +
                                               "' (its schema: " + toString(schema) + ")"};
                // PyTorch's own operators gain arguments from release to release: an archive
                // a newer PyTorch saved may give one this LibTorch's does not have.
                if ((name.rfind("aten::", 0) == 0 || name.rfind("prims::", 0) == 0) &&
                    newerThanThisLibTorch(exportedBy_)) {
                    e.kind = ErrorKind::NeedsNewerLibTorch;
                    e.operatorName = schema.name();
                    e.message = at + ": LibTorch " + libtorchVersion() + "'s " + schema.name() +
                                " has no argument '" + node.inputs[i].name +
                                "'; the program was exported by a newer PyTorch. Open it with a "
                                "ScriptScope built on that PyTorch (scripts/setup.sh --torch-venv)";
                }
                return e;
            }
        }
        return step;
    }

    // auto_functionalized(_v2): the operator's call with its arguments checked against its
    // schema, then the bases and the views' numbers (exported_functionalized.cpp).
    Expected<Step> functionalized(const Pt2Node& node, const std::map<std::string, int>& slots,
                                  const std::string& at) {
        if (node.inputs.empty() || node.inputs.front().value.kind != Kind::Operator) {
            return Error{ErrorKind::Format, at + " does not name the operator it calls first"};
        }
        auto op = findOperator(node.inputs.front().value.text, at);
        if (!op) {
            return op.error();
        }
        auto form = functionalizedForm(node, op->schema(), at);
        if (!form) {
            return form.error();
        }
        auto call = operatorCall(form->call, slots, at, form->later);
        if (!call) {
            return call.error();
        }
        Step step = std::move(call).value();
        step.what = Step::What::Functionalized;
        step.functionalized = form->spec;
        step.functionalized.schemaArgs = step.args.size();
        for (const auto& [extra, type] : form->extra) {
            auto arg = value(extra, type, slots, at);
            if (!arg) {
                return arg.error();
            }
            step.args.push_back(std::move(arg).value());
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

    // A higher-order operator: its graphs built as programs (in order), its other inputs as
    // arguments in order, checked against what the operator takes:
    //   cond(pred, true_graph, false_graph, operands)
    //   while_loop(cond_graph, body_graph, carried_inputs, additional_inputs)
    //   map_impl(body_graph, xs, args)
    //   wrap_with_set_grad_enabled(enabled, graph, *args)
    //   wrap_with_autocast(device_type, dtype, enabled, cache_enabled, graph, *args)
    Expected<Step> higherOrder(const Pt2Model& graph, const Pt2Node& node,
                               const std::map<std::string, int>& slots, const std::string& at) {
        struct Form {
            const char* name;
            Step::What what;
            size_t graphs;
            std::vector<Kind> before; // the inputs before the first graph
            size_t lists;             // lists of tensors after the graphs; else each a tensor
            const char* signature;
        };
        static const Form forms[] = {
            {"cond",
             Step::What::Cond,
             2,
             {Kind::None},
             1,
             "cond(pred, true_fn, false_fn, operands)"},
            {"while_loop",
             Step::What::WhileLoop,
             2,
             {},
             2,
             "while_loop(cond_fn, body_fn, carried_inputs, additional_inputs)"},
            {"map_impl", Step::What::Map, 1, {}, 2, "map_impl(body_fn, xs, args)"},
            {"wrap_with_set_grad_enabled",
             Step::What::SetGrad,
             1,
             {Kind::Bool},
             0,
             "wrap_with_set_grad_enabled(enabled, graph, *args)"},
            {"wrap_with_autocast",
             Step::What::Autocast,
             1,
             {Kind::String, Kind::ScalarType, Kind::Bool, Kind::Bool},
             0,
             "wrap_with_autocast(device_type, dtype, enabled, cache_enabled, graph, *args)"},
        };
        const std::string name = node.target.substr(23);
        const Form* form = nullptr;
        for (const Form& f : forms) {
            form = name == f.name ? &f : form;
        }
        if (!form) {
            return Error{ErrorKind::Format,
                         at + ": the higher-order operator " + name +
                             " is not run by ScriptScope's interpreter yet (cond, while_loop, "
                             "map, wrap_with_set_grad_enabled and wrap_with_autocast are)"};
        }
        const auto wrong = [&] {
            return Error{ErrorKind::Format, at + " is not " + form->signature};
        };
        const size_t before = form->before.size();
        if (node.inputs.size() < before + form->graphs ||
            (form->lists > 0 && node.inputs.size() != before + form->graphs + form->lists)) {
            return wrong();
        }
        Step step;
        step.what = form->what;
        step.writes = true;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const Pt2Value& input = node.inputs[i].value;
            const bool isGraph = i >= before && i < before + form->graphs;
            if (isGraph != (input.kind == Kind::Graph) ||
                (i < before && form->before[i] != Kind::None && input.kind != form->before[i])) {
                return wrong();
            }
            if (isGraph) {
                const auto found = std::find_if(
                    graph.subgraphs.begin(), graph.subgraphs.end(),
                    [&](const Pt2Model& subgraph) { return subgraph.name == input.text; });
                if (found == graph.subgraphs.end()) {
                    return Error{ErrorKind::Format, at + " calls the graph '" + input.text +
                                                        "', which the archive does not hold"};
                }
                auto branch = build(*found, at + " > " + input.text);
                if (!branch) {
                    return branch.error();
                }
                step.branches.push_back(std::move(branch).value());
                continue;
            }
            auto arg = value(input, "", slots, at);
            if (!arg) {
                return arg.error();
            }
            if (i >= before + form->graphs) {
                const bool list = arg->how == Arg::How::Tensors ||
                                  (arg->how == Arg::How::Constant && input.kind == Kind::Tensors);
                const bool tensor = arg->how == Arg::How::Slot && input.kind == Kind::Tensor;
                if (form->lists > 0 ? !list : !tensor) {
                    return Error{ErrorKind::Format,
                                 at + ": its operands are not " +
                                     (form->lists > 0 ? "lists of tensors" : "tensors")};
                }
            }
            step.args.push_back(std::move(arg).value());
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
        case Kind::Operator:
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

public:
    std::string exportedBy_; // the PyTorch that saved the program ("2.14.1+cu130")

private:
    torch::Device device_;
};

} // namespace

Expected<std::shared_ptr<Program>> buildProgram(const Pt2Model& graph, const torch::Device& device,
                                                const std::string& where) {
    Builder builder(device);
    builder.exportedBy_ = graph.torchVersion;
    return builder.build(graph, where);
}

} // namespace scriptscope::detail
