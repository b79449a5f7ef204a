// auto_functionalized and auto_functionalized_v2: how a functional graph calls an operator that
// mutates its arguments (a custom operator: export and run_decompositions functionalize its calls).
// The node names the operator and gives its arguments by name; the operator runs on copies of what
// it mutates, and the node returns the operator's results, then the copies, which later nodes read
// as the mutated values. As torch/_higher_order_ops/auto_functionalize.py runs them:
//   v1  auto_functionalized(op, *, _only_clone_these_tensors=None, **args): each mutated argument
//       copied (strides kept) unless left out of _only_clone_these_tensors;
//   v2  auto_functionalized_v2(op, *, _all_bases, _only_clone_these_bases=None, **args): the
//       mutated arguments are not given but made again from the copied bases they are views of:
//       _<arg>_base_index, then _<arg>_alias, _<arg>_size/_stride/_storage_offset (as_strided) or
//       _<arg>_slice_dim/_start/_end; a list argument has _<arg>_length and _<arg>_<i>_... per
//       element.
#include "engine_internal.h"
#include "exported_steps.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace scriptscope::detail {

namespace {

bool isList(const c10::Argument& argument) {
    const std::string type = argument.type()->str();
    return type.find("[]") != std::string::npos;
}

// A copy with the same sizes, strides and offset (torch._prims_common.clone_preserve_strides): the
// operator sees the layout it would have seen.
at::Tensor copyKeepingStrides(const at::Tensor& x) {
    int64_t needed = 0;
    if (x.numel() > 0) {
        needed = x.storage_offset() + 1;
        for (int64_t d = 0; d < x.dim(); ++d) {
            needed += (x.size(d) - 1) * x.stride(d);
        }
    }
    const at::Tensor buffer = x.as_strided({needed}, {1}, 0).clone();
    return buffer.as_strided(x.sizes(), x.strides(), x.storage_offset());
}

c10::IValue copied(const c10::IValue& value) {
    if (value.isTensor()) {
        return copyKeepingStrides(value.toTensor());
    }
    if (value.isTensorList()) {
        c10::List<at::Tensor> out;
        for (const at::Tensor& t : value.toTensorVector()) {
            out.push_back(copyKeepingStrides(t));
        }
        return out;
    }
    return value; // None
}

} // namespace

Expected<FunctionalizedForm>
functionalizedForm(const Pt2Node& node, const c10::FunctionSchema& schema, const std::string& at) {
    FunctionalizedForm form;
    Functionalized& spec = form.spec;
    spec.v2 = node.target == "torch.ops.higher_order.auto_functionalized_v2";
    form.call.name = node.name;
    form.call.target = node.inputs.front().value.text;
    // The keyword arguments by name, each taken once.
    std::map<std::string, const Pt2Value*> given;
    for (size_t i = 1; i < node.inputs.size(); ++i) {
        given.emplace(node.inputs[i].name, &node.inputs[i].value);
    }
    std::set<std::string> taken;
    const auto take = [&](const std::string& name) -> const Pt2Value* {
        const auto found = given.find(name);
        if (found == given.end()) {
            return nullptr;
        }
        taken.insert(name);
        return found->second;
    };
    const auto wrong = [&](const std::string& what) {
        return Error{ErrorKind::Format, at + ": " + what};
    };
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
        const c10::Argument& argument = schema.arguments()[i];
        if (argument.alias_info() && argument.alias_info()->isWrite()) {
            spec.mutated.push_back(i);
            spec.listed.push_back(isList(argument));
        }
    }
    if (spec.mutated.empty()) {
        return wrong(schema.name() + " mutates none of its arguments: there is nothing to "
                                     "functionalize");
    }
    if (!spec.v2) {
        // v1: every argument by name; the mutated ones copied unless left out of the list.
        std::set<std::string> only;
        const Pt2Value* list = take("_only_clone_these_tensors");
        if (list && list->kind != Kind::None && list->kind != Kind::Strings) {
            return wrong("_only_clone_these_tensors is not a list of argument names");
        }
        if (list) {
            only.insert(list->strings.begin(), list->strings.end());
        }
        for (const size_t m : spec.mutated) {
            const std::string& name = schema.arguments()[m].name();
            spec.copied.push_back(!list || list->kind == Kind::None || only.count(name) > 0);
        }
    } else {
        // v2: the bases, then how each mutated argument is made from them.
        const Pt2Value* bases = take("_all_bases");
        if (!bases || bases->kind != Kind::Tensors) {
            return wrong("auto_functionalized_v2 takes _all_bases, a list of tensors");
        }
        form.extra.emplace_back(*bases, "Tensor[]");
        const size_t count = bases->names.size();
        spec.copiedBases.assign(count, true);
        if (const Pt2Value* only = take("_only_clone_these_bases");
            only && only->kind != Kind::None) {
            if (only->kind != Kind::Ints) {
                return wrong("_only_clone_these_bases is not a list of ints");
            }
            spec.copiedBases.assign(count, false);
            for (const int64_t index : only->ints) {
                if (index < 0 || static_cast<size_t>(index) >= count) {
                    return wrong("_only_clone_these_bases names base " + std::to_string(index) +
                                 " of " + std::to_string(count));
                }
                spec.copiedBases[static_cast<size_t>(index)] = true;
            }
        }
        const auto readView = [&](const std::string& prefix) -> Expected<Functionalized::View> {
            Functionalized::View view;
            const Pt2Value* base = take(prefix + "_base_index");
            if (!base) {
                return wrong("auto_functionalized_v2 does not say which base " + prefix.substr(1) +
                             " is made from (" + prefix + "_base_index)");
            }
            if (base->kind == Kind::None) {
                return view;
            }
            if (base->kind != Kind::Int || base->ints[0] < 0 ||
                static_cast<size_t>(base->ints[0]) >= count) {
                return wrong(prefix + "_base_index is not the index of one of its " +
                             std::to_string(count) + " bases");
            }
            view.base = static_cast<int>(base->ints[0]);
            view.how = Functionalized::View::How::Base;
            const auto numbers =
                [&](const std::vector<std::pair<std::string, std::string>>& names) -> Status {
                view.firstArg = form.extra.size();
                for (const auto& [suffix, type] : names) {
                    const Pt2Value* value = take(prefix + suffix);
                    if (!value || !fits(type, value->kind)) {
                        return wrong(prefix + suffix + " is not " +
                                     (type == "SymInt[]" ? "a list of ints" : "an int"));
                    }
                    form.extra.emplace_back(*value, type);
                }
                return std::nullopt;
            };
            Status error;
            if (take(prefix + "_alias")) {
                view.how = Functionalized::View::How::Alias;
            } else if (given.count(prefix + "_storage_offset")) {
                view.how = Functionalized::View::How::AsStrided;
                error = numbers({{"_size", "SymInt[]"},
                                 {"_stride", "SymInt[]"},
                                 {"_storage_offset", "SymInt"}});
            } else if (given.count(prefix + "_slice_dim")) {
                view.how = Functionalized::View::How::Slice;
                error = numbers(
                    {{"_slice_dim", "int"}, {"_slice_start", "SymInt"}, {"_slice_end", "SymInt"}});
            }
            if (error) {
                return *error;
            }
            return view;
        };
        for (size_t k = 0; k < spec.mutated.size(); ++k) {
            const std::string& name = schema.arguments()[spec.mutated[k]].name();
            if (given.count("_" + name + "_dtype")) {
                return wrong("it calls " + schema.name() +
                             " as an out= operator (its outputs made from sizes and dtypes), "
                             "which the interpreter does not run yet");
            }
            std::vector<Functionalized::View> views;
            bool absent = false;
            if (spec.listed[k]) {
                const Pt2Value* length = take("_" + name + "_length");
                if (!length || (length->kind != Kind::Int && length->kind != Kind::None)) {
                    return wrong("auto_functionalized_v2 does not give the length of " + name +
                                 " (_" + name + "_length)");
                }
                absent = length->kind == Kind::None;
                for (int64_t i = 0; !absent && i < length->ints[0]; ++i) {
                    auto view = readView("_" + name + "_" + std::to_string(i));
                    if (!view) {
                        return view.error();
                    }
                    views.push_back(*view);
                }
            } else {
                auto view = readView("_" + name);
                if (!view) {
                    return view.error();
                }
                views.push_back(*view);
            }
            spec.absent.push_back(absent);
            spec.views.push_back(std::move(views));
            form.later.insert(name);
        }
    }
    // What is left are the operator's own arguments (its schema checks them).
    for (size_t i = 1; i < node.inputs.size(); ++i) {
        if (!taken.count(node.inputs[i].name)) {
            form.call.inputs.push_back(node.inputs[i]);
        }
    }
    return form;
}

std::vector<c10::IValue> runFunctionalized(const Step& step, torch::jit::Stack& stack) {
    const Functionalized& spec = step.functionalized;
    std::vector<c10::IValue> copies;
    if (!spec.v2) {
        for (size_t k = 0; k < spec.mutated.size(); ++k) {
            c10::IValue& argument = stack.at(spec.mutated[k]);
            if (spec.copied[k]) {
                argument = copied(argument);
            }
            copies.push_back(argument);
        }
    } else {
        const std::vector<at::Tensor> bases = stack.at(spec.schemaArgs).toTensorVector();
        TORCH_CHECK(bases.size() == spec.copiedBases.size(), step.label, ": it has ", bases.size(),
                    " bases where the graph names ", spec.copiedBases.size());
        std::vector<at::Tensor> fresh;
        for (size_t i = 0; i < bases.size(); ++i) {
            fresh.push_back(spec.copiedBases[i] ? copyKeepingStrides(bases[i]) : bases[i]);
        }
        const auto number = [&](size_t at) { return stack.at(spec.schemaArgs + at); };
        const auto make = [&](const Functionalized::View& view) -> c10::IValue {
            using How = Functionalized::View::How;
            if (view.how == How::None) {
                return {};
            }
            const at::Tensor& base = fresh.at(static_cast<size_t>(view.base));
            switch (view.how) {
            case How::Alias:
                return at::alias(base);
            case How::AsStrided:
                return base.as_strided(number(view.firstArg).toIntVector(),
                                       number(view.firstArg + 1).toIntVector(),
                                       number(view.firstArg + 2).toInt());
            case How::Slice:
                return base.slice(number(view.firstArg).toInt(), number(view.firstArg + 1).toInt(),
                                  number(view.firstArg + 2).toInt());
            default:
                return base;
            }
        };
        for (size_t k = 0; k < spec.mutated.size(); ++k) {
            const std::vector<Functionalized::View>& views = spec.views[k];
            c10::IValue& argument = stack.at(spec.mutated[k]);
            if (!spec.listed[k]) {
                argument = make(views.front());
                continue;
            }
            if (spec.absent[k]) {
                argument = c10::IValue();
                continue;
            }
            c10::List<at::Tensor> list;
            for (const Functionalized::View& view : views) {
                const c10::IValue element = make(view);
                TORCH_CHECK(element.isTensor(), step.label, ": a list it mutates holds a None");
                list.push_back(element.toTensor());
            }
            argument = list;
        }
        copies.assign(fresh.begin(), fresh.end());
    }
    stack.resize(spec.schemaArgs);
    step.op->callBoxed(&stack);
    // What the operator returns (None where nothing, one value, or each of several), then the
    // copies it mutated.
    std::vector<c10::IValue> results;
    if (stack.empty()) {
        results.emplace_back();
    } else {
        results.assign(stack.begin(), stack.end());
    }
    results.insert(results.end(), copies.begin(), copies.end());
    return results;
}

} // namespace scriptscope::detail
