// An ExecuTorch program as a model (executorch_program.h): the tree, the texts, the diagram and
// the memory plan, all made from what the reader read.
#include "executorch_program.h"

#include "delegate_contents.h"

#include <format.h>
#include <parameter_counts.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

namespace scriptscope {

namespace {

std::string valueName(int64_t index) {
    return "v" + std::to_string(index);
}

template <typename T>
std::string joined(const std::vector<T>& items, const char* separator = ", ") {
    std::string text;
    for (size_t i = 0; i < items.size(); ++i) {
        text += (i ? separator : "") + std::to_string(items[i]);
    }
    return text;
}

bool isTensor(const PteValue& value) {
    return value.kind == PteValue::Kind::Tensor;
}

// A tensor with its data in the program (a weight, a constant).
bool isConstant(const PteValue& value) {
    return isTensor(value) && value.tensor.dataBuffer > 0;
}

// A value as an argument reads: a scalar or list by its value, a constant by its shape.
std::string argumentText(const PtePlan& plan, int64_t index) {
    const PteValue& value = plan.values[static_cast<size_t>(index)];
    switch (value.kind) {
    case PteValue::Kind::Absent:
    case PteValue::Kind::Null:
        return "None";
    case PteValue::Kind::Int:
        return std::to_string(value.intValue);
    case PteValue::Kind::Bool:
        return value.boolValue ? "True" : "False";
    case PteValue::Kind::Double:
        return formatPythonFloat(value.doubleValue);
    case PteValue::Kind::String:
        return "'" + value.stringValue + "'";
    case PteValue::Kind::IntList: {
        // Its items are values, each an int (the reader checked that they are values).
        std::string text = "[";
        for (size_t i = 0; i < value.items.size(); ++i) {
            const PteValue& item = plan.values[static_cast<size_t>(value.items[i])];
            text +=
                (i ? ", " : "") + (item.kind == PteValue::Kind::Int ? std::to_string(item.intValue)
                                                                    : valueName(value.items[i]));
        }
        return text + "]";
    }
    case PteValue::Kind::DoubleList: {
        std::string text = "[";
        for (size_t i = 0; i < value.doubles.size(); ++i) {
            text += (i ? ", " : "") + formatPythonFloat(value.doubles[i]);
        }
        return text + "]";
    }
    case PteValue::Kind::BoolList: {
        std::string text = "[";
        for (size_t i = 0; i < value.bools.size(); ++i) {
            text += std::string(i ? ", " : "") + (value.bools[i] ? "True" : "False");
        }
        return text + "]";
    }
    case PteValue::Kind::TensorList:
    case PteValue::Kind::OptionalTensorList: {
        std::string text = "[";
        for (size_t i = 0; i < value.items.size(); ++i) {
            text += (i ? ", " : "") +
                    (value.items[i] < 0 ? std::string("None") : valueName(value.items[i]));
        }
        return text + "]";
    }
    case PteValue::Kind::Tensor:
        return valueName(index);
    }
    return valueName(index);
}

// One call of a method, as the texts and the diagram see it: what it reads and what it makes.
struct Step {
    size_t chain = 0, instruction = 0;
    const PteInstruction* call = nullptr;
    std::string kind;               // "aten::convolution.out", "delegate::XnnpackBackend"
    std::vector<int32_t> arguments; // every argument, in order
    std::vector<int32_t> reads;     // the tensors it reads (lists opened)
    std::vector<int32_t> makes;     // the tensors it writes first
    // Reads that are views of an earlier value: no call makes them, the memory plan gives them
    // the viewed value's place (ExecuTorch's emitter drops a view_copy it can alias). Value ->
    // the value it views.
    std::map<int32_t, int32_t> views;
};

namespace {

// An out-variant kernel's out tensors: it takes them last and returns them again ([..., out,
// out]). Empty when its arguments do not end so.
std::set<int32_t> outsOf(const std::vector<int32_t>& args) {
    const size_t n = args.size();
    for (size_t k = n / 2; k > 0; --k) {
        if (std::equal(args.end() - static_cast<std::ptrdiff_t>(k), args.end(),
                       args.end() - static_cast<std::ptrdiff_t>(2 * k))) {
            return {args.end() - static_cast<std::ptrdiff_t>(k), args.end()};
        }
    }
    return {};
}

} // namespace

// The method's kernel and delegate calls in the order they run, each argument sorted into read or
// made. The file does not say which arguments are outputs: an out-variant kernel takes its out
// tensors last and returns them again. A tensor is made by the first call that names it and is
// neither an input nor a constant; a move makes its destination. A kernel's tensor that is not
// one of its outs and that no call made is a view of the value last made at the same planned
// place with as many bytes (its view_copy was dropped): read, not made.
std::vector<Step> stepsOf(const PtePlan& plan) {
    std::vector<bool> defined(plan.values.size(), false);
    for (size_t i = 0; i < plan.values.size(); ++i) {
        defined[i] = !isTensor(plan.values[i]) || isConstant(plan.values[i]);
    }
    for (const int32_t input : plan.inputs) {
        defined[static_cast<size_t>(input)] = true;
    }
    // The value last made at each planned place (memory id, offset), with its bytes.
    std::map<std::pair<uint32_t, uint64_t>, int32_t> placed;
    const auto place = [&](int32_t index) {
        const PteValue& value = plan.values[static_cast<size_t>(index)];
        if (value.kind == PteValue::Kind::Tensor && value.tensor.allocated) {
            placed[{value.tensor.memoryId, value.tensor.memoryOffset}] = index;
        }
    };
    for (const int32_t input : plan.inputs) {
        place(input);
    }
    std::vector<Step> steps;
    for (size_t c = 0; c < plan.chains.size(); ++c) {
        const auto& instructions = plan.chains[c].instructions;
        for (size_t n = 0; n < instructions.size(); ++n) {
            const PteInstruction& call = instructions[n];
            if (call.kind == PteInstruction::Kind::Move) {
                defined[static_cast<size_t>(call.target)] = true;
                continue;
            }
            if (call.kind != PteInstruction::Kind::Kernel &&
                call.kind != PteInstruction::Kind::Delegate) {
                continue;
            }
            Step step;
            step.chain = c;
            step.instruction = n;
            step.call = &call;
            step.arguments = call.args;
            step.kind = call.kind == PteInstruction::Kind::Kernel
                            ? plan.operators[static_cast<size_t>(call.index)].text()
                            : "delegate::" + plan.delegates[static_cast<size_t>(call.index)].id;
            std::set<int32_t> made;
            const std::set<int32_t> outs =
                call.kind == PteInstruction::Kind::Kernel ? outsOf(call.args) : std::set<int32_t>();
            // A view of what was last made at its place (same bytes), where that is known.
            const auto viewed = [&](int32_t index) -> int32_t {
                const PteValue& value = plan.values[static_cast<size_t>(index)];
                if (outs.empty() || outs.count(index) || value.kind != PteValue::Kind::Tensor ||
                    !value.tensor.allocated) {
                    return -1;
                }
                const auto at = placed.find({value.tensor.memoryId, value.tensor.memoryOffset});
                if (at == placed.end() ||
                    plan.values[static_cast<size_t>(at->second)].tensor.bytes() !=
                        value.tensor.bytes()) {
                    return -1;
                }
                return at->second;
            };
            const auto visit = [&](int32_t index) {
                if (made.count(index)) {
                    return; // an out tensor returned again
                }
                if (!defined[static_cast<size_t>(index)]) {
                    if (const int32_t base = viewed(index); base >= 0) {
                        defined[static_cast<size_t>(index)] = true;
                        step.views[index] = base;
                        step.reads.push_back(index);
                        return;
                    }
                    made.insert(index);
                    step.makes.push_back(index);
                } else if (isTensor(plan.values[static_cast<size_t>(index)]) &&
                           !isConstant(plan.values[static_cast<size_t>(index)]) &&
                           std::find(step.reads.begin(), step.reads.end(), index) ==
                               step.reads.end()) {
                    step.reads.push_back(index);
                }
            };
            for (const int32_t arg : call.args) {
                const PteValue& value = plan.values[static_cast<size_t>(arg)];
                if (value.kind == PteValue::Kind::TensorList ||
                    value.kind == PteValue::Kind::OptionalTensorList) {
                    for (const int64_t item : value.items) {
                        if (item >= 0) {
                            visit(static_cast<int32_t>(item));
                        }
                    }
                } else {
                    visit(arg);
                }
            }
            for (const int32_t index : made) {
                defined[static_cast<size_t>(index)] = true;
            }
            for (const int32_t index : step.makes) {
                place(index);
            }
            steps.push_back(std::move(step));
        }
    }
    return steps;
}

// A value's type as a schema writes it ("int", "Tensor[]"); "" for what a schema has no name for.
std::string schemaType(const PteValue& value) {
    switch (value.kind) {
    case PteValue::Kind::Tensor:
        return "Tensor";
    case PteValue::Kind::Int:
        return "int";
    case PteValue::Kind::Bool:
        return "bool";
    case PteValue::Kind::Double:
        return "float";
    case PteValue::Kind::IntList:
        return "int[]";
    case PteValue::Kind::TensorList:
        return "Tensor[]";
    default:
        return "";
    }
}

// A value's type with a tensor's dtype and shape: "f32[1, 3, 32, 32]".
std::string typeOf(const PtePlan& plan, int64_t index) {
    const PteValue& value = plan.values[static_cast<size_t>(index)];
    return value.kind == PteValue::Kind::Tensor ? value.tensor.text() : schemaType(value);
}

std::string signatureOf(const PtePlan& plan) {
    std::string text = plan.name + "(";
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
        text += (i ? ", " : "") + valueName(plan.inputs[i]) + ": " + typeOf(plan, plan.inputs[i]);
    }
    text += ") -> (";
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        text += (i ? ", " : "") + typeOf(plan, plan.outputs[i]);
    }
    return text + ")";
}

// The signature as a TorchScript schema ("forward(Tensor v0) -> Tensor"), what the Run workspace's
// input table reads; each tensor's dtype and shape are the method's input annotations.
std::string schemaOf(const PtePlan& plan) {
    const auto type = [&plan](int64_t index) {
        const std::string name = schemaType(plan.values[static_cast<size_t>(index)]);
        return name.empty() ? std::string("Any") : name;
    };
    std::string text = plan.name + "(";
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
        text += (i ? ", " : "") + type(plan.inputs[i]) + " " + valueName(plan.inputs[i]);
    }
    text += ") -> ";
    if (plan.outputs.size() == 1) {
        return text + type(plan.outputs.front());
    }
    text += "(";
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        text += (i ? ", " : "") + type(plan.outputs[i]);
    }
    return text + ")";
}

std::string delegatePath(const PtePlan& plan, size_t index) {
    return plan.name + ".delegate_" + std::to_string(index);
}

std::string delegateBlobText(const PteDelegate& delegate) {
    return formatBytes(delegate.blobBytes) +
           (delegate.inSegment ? " in segment " : " inline, blob ") +
           std::to_string(delegate.index);
}

// The method's calls written as calls: what a reader follows (the code view).
std::string codeOf(const PtePlan& plan, const std::vector<Step>& steps) {
    std::string text = "def " + signatureOf(plan) + ":\n";
    size_t next = 0;
    for (size_t c = 0; c < plan.chains.size(); ++c) {
        const auto& instructions = plan.chains[c].instructions;
        if (plan.chains.size() > 1) {
            text += "    # chain " + std::to_string(c) + "\n";
        }
        for (size_t n = 0; n < instructions.size(); ++n) {
            const PteInstruction& call = instructions[n];
            const std::string at = "    ";
            if (next < steps.size() && steps[next].chain == c && steps[next].instruction == n) {
                const Step& step = steps[next++];
                for (const auto& [view, base] : step.views) {
                    text += at + valueName(view) + " = " + valueName(base) +
                            "  # a view: no instruction, the planned memory of " + valueName(base) +
                            "\n";
                }
                std::string made;
                for (size_t i = 0; i < step.makes.size(); ++i) {
                    made += (i ? ", " : "") + valueName(step.makes[i]);
                }
                // An out tensor is named once, as out=, not again as the value returned.
                std::string args;
                std::set<int32_t> named;
                for (const int32_t arg : step.arguments) {
                    const bool out =
                        std::find(step.makes.begin(), step.makes.end(), arg) != step.makes.end();
                    if (out && !named.insert(arg).second) {
                        continue;
                    }
                    args += (args.empty() ? "" : ", ") + std::string(out ? "out=" : "") +
                            argumentText(plan, arg);
                }
                text += at + (made.empty() ? "" : made + " = ") + step.kind + "(" + args + ")\n";
            } else if (call.kind == PteInstruction::Kind::Move) {
                text += at + valueName(call.target) + " = " + valueName(call.index) + "  # move\n";
            } else if (call.kind == PteInstruction::Kind::JumpFalse) {
                text += at + "if not " + valueName(call.index) + ": goto " +
                        std::to_string(call.target) + "\n";
            } else if (call.kind == PteInstruction::Kind::Free) {
                text += at + "del " + valueName(call.index) + "\n";
            }
        }
    }
    std::string outputs;
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        outputs += (i ? ", " : "") + valueName(plan.outputs[i]);
    }
    return text + "    return (" + outputs + (plan.outputs.size() == 1 ? ",)" : ")") + "\n";
}

std::string valueText(const PtePlan& plan, const PteProgram& program, size_t index) {
    const PteValue& value = plan.values[index];
    if (value.kind == PteValue::Kind::IntList) { // its items are values: named, then read
        std::string items;
        for (size_t i = 0; i < value.items.size(); ++i) {
            items += (i ? ", " : "") + valueName(value.items[i]);
        }
        return "int_list [" + items + "] = " + argumentText(plan, static_cast<int64_t>(index));
    }
    if (!isTensor(value)) {
        return pteValueLine(value);
    }
    const PteTensor& t = value.tensor;
    std::string text = "tensor " + t.text() + " " + pteDtypeName(t.scalarType);
    if (t.dataBuffer > 0) {
        text += ", constant " + std::to_string(t.dataBuffer) + " (" +
                formatBytes(program.constantBytes(t.dataBuffer)) + ")";
    } else if (t.allocated) {
        text += ", planned in buffer " + std::to_string(t.memoryId) + " at " +
                std::to_string(t.memoryOffset) + " (" + formatBytes(t.bytes()) + ")";
    } else {
        text += ", memory from the caller";
    }
    std::vector<int> order(t.dimOrder.begin(), t.dimOrder.end());
    bool contiguous = true;
    for (size_t i = 0; i < order.size(); ++i) {
        contiguous = contiguous && order[i] == static_cast<int>(i);
    }
    if (!contiguous) {
        text += ", dim order [" + joined(order) + "]";
    }
    if (t.shapeDynamism == 1) {
        text += ", dynamic (bounded)";
    } else if (t.shapeDynamism == 2) {
        text += ", dynamic (unbounded)";
    }
    return text;
}

// The plan as the file holds it (the graph view): values, then each chain's instructions with
// the values they name. `lines` gets each instruction's line, counted from 1.
std::string graphOf(const PtePlan& plan, const PteProgram& program,
                    std::map<std::pair<size_t, size_t>, int>* lines = nullptr) {
    std::string text = "method " + plan.name + ": " + std::to_string(plan.values.size()) +
                       " values, " + std::to_string(plan.operators.size()) + " operators, " +
                       std::to_string(plan.delegates.size()) + " delegates\n";
    text += "inputs: [" + joined(plan.inputs) + "]  outputs: [" + joined(plan.outputs) + "]\n";
    text += "memory plan: ";
    for (size_t i = 0; i < plan.nonConstBufferSizes.size(); ++i) {
        text += (i ? ", " : "") + std::string("buffer ") + std::to_string(i) + " " +
                std::to_string(plan.nonConstBufferSizes[i]) + " bytes";
    }
    text += "\n\noperators:\n";
    for (size_t i = 0; i < plan.operators.size(); ++i) {
        text += "  " + std::to_string(i) + ": " + plan.operators[i].text() + "\n";
    }
    if (!plan.delegates.empty()) {
        text += "\ndelegates:\n";
        for (size_t i = 0; i < plan.delegates.size(); ++i) {
            const PteDelegate& d = plan.delegates[i];
            text += "  " + std::to_string(i) + ": " + d.id + ", " + delegateBlobText(d);
            for (const PteCompileSpec& spec : d.compileSpecs) {
                text += ", " + spec.key + " (" + std::to_string(spec.size) + " bytes)";
            }
            text += "\n";
        }
    }
    text += "\nvalues:\n";
    for (size_t i = 0; i < plan.values.size(); ++i) {
        text +=
            "  " + valueName(static_cast<int64_t>(i)) + ": " + valueText(plan, program, i) + "\n";
    }
    int line = 0;
    for (const char c : text) {
        line += c == '\n';
    }
    for (size_t c = 0; c < plan.chains.size(); ++c) {
        const PteChain& chain = plan.chains[c];
        text += "\nchain " + std::to_string(c) + " (inputs [" + joined(chain.inputs) +
                "], outputs [" + joined(chain.outputs) + "]):\n";
        line += 2;
        for (size_t n = 0; n < chain.instructions.size(); ++n) {
            const PteInstruction& call = chain.instructions[n];
            std::string what;
            switch (call.kind) {
            case PteInstruction::Kind::Kernel:
                what = "kernel " + plan.operators[static_cast<size_t>(call.index)].text() + " [" +
                       joined(call.args) + "]";
                break;
            case PteInstruction::Kind::Delegate:
                what = "delegate " + std::to_string(call.index) + " " +
                       plan.delegates[static_cast<size_t>(call.index)].id + " [" +
                       joined(call.args) + "]";
                break;
            default:
                what = pteInstructionLine(call);
                break;
            }
            text += "  " + std::to_string(n) + ": " + what + "\n";
            ++line;
            if (lines) {
                (*lines)[{c, n}] = line;
            }
        }
    }
    return text;
}

MemoryPlan memoryPlanOf(const PtePlan& plan, const std::vector<Step>& steps) {
    MemoryPlan memory;
    memory.bufferBytes = plan.nonConstBufferSizes;
    std::map<int32_t, std::pair<int, int>> span; // value -> first and last step
    for (const int32_t input : plan.inputs) {
        span[input] = {-1, -1};
    }
    for (size_t s = 0; s < steps.size(); ++s) {
        memory.steps.push_back(steps[s].kind);
        for (const int32_t v : steps[s].makes) {
            if (!span.count(v)) {
                span[v] = {static_cast<int>(s), static_cast<int>(s)};
            }
        }
        for (const int32_t v : steps[s].reads) {
            auto found = span.find(v);
            if (found == span.end()) {
                span[v] = {static_cast<int>(s), static_cast<int>(s)};
            } else {
                found->second.second = static_cast<int>(s);
            }
        }
    }
    for (const int32_t output : plan.outputs) {
        if (span.count(output)) {
            span[output].second = static_cast<int>(steps.size());
        }
    }
    for (const auto& [index, lifetime] : span) {
        const PteValue& value = plan.values[static_cast<size_t>(index)];
        if (!isTensor(value) || !value.tensor.allocated) {
            continue;
        }
        MemoryBlock block;
        block.value = valueName(index);
        block.type = value.tensor.text();
        block.buffer = static_cast<int>(value.tensor.memoryId);
        block.offset = value.tensor.memoryOffset;
        block.bytes = value.tensor.bytes();
        block.first = lifetime.first;
        block.last = std::max(lifetime.first, lifetime.second);
        memory.blocks.push_back(std::move(block));
    }
    return memory;
}

} // namespace

Expected<ExecuTorchProgram> ExecuTorchProgram::open(const std::string& path, ProbeResult probe) {
    const auto start = std::chrono::steady_clock::now();
    auto read = readPteFile(path);
    if (!read) {
        Error error = read.error();
        error.message =
            "'" + path + "' is an ExecuTorch program that cannot be read: " + error.message;
        return error;
    }
    ExecuTorchProgram result;
    result.program_ = std::move(read).value();
    const PteProgram& program = result.program_;
    ModelInfo& info = result.info_;
    info.path = path;
    info.format = "ExecuTorch";
    info.probe = std::move(probe);
    ModuleInfo root;
    root.type = "ExecuTorch program (version " + std::to_string(program.version) + ")";
    root.attributes.push_back({"version", "int", std::to_string(program.version)});
    root.attributes.push_back({"program", "bytes", std::to_string(program.programSize)});
    root.attributes.push_back({"segments", "list",
                               std::to_string(program.segments.size()) + " segments, " +
                                   formatBytes(program.segmentDataSize)});
    std::vector<ModuleInfo> children;
    for (const PtePlan& plan : program.plans) {
        const std::vector<Step> steps = stepsOf(plan);
        MethodInfo method;
        method.name = plan.name;
        method.schema = schemaOf(plan);
        method.code = codeOf(plan, steps);
        method.graph = graphOf(plan, program);
        // Inside each delegate whose backend's blobs this reads: its graph after the plan's.
        std::vector<DelegateContents> contents;
        for (size_t d = 0; d < plan.delegates.size(); ++d) {
            contents.push_back(delegateContents(path, plan.delegates[d]));
            if (contents.back().read) {
                method.graph += "\ndelegate " + std::to_string(d) + " (" + plan.delegates[d].id +
                                "):\n" + contents.back().graphText;
            } else if (!contents.back().problem.empty()) {
                info.probe.notes.push_back(delegatePath(plan, d) + ": " + contents.back().problem);
            }
        }
        for (const int32_t input : plan.inputs) {
            method.inputAnnotations.push_back(typeOf(plan, input));
        }
        if (!plan.inputs.empty()) {
            const PteValue& first = plan.values[static_cast<size_t>(plan.inputs.front())];
            if (first.kind == PteValue::Kind::Tensor) {
                method.setImageInput({first.tensor.sizes.begin(), first.tensor.sizes.end()});
            }
        }
        // Its plan gives every input's shape and dtype: a run's "sample" input is made to it.
        method.sampleInputs = true;
        method.memoryPlan = memoryPlanOf(plan, steps);
        root.methods.push_back(method);

        ModuleInfo module;
        module.path = plan.name;
        module.name = plan.name;
        module.type = "method";
        module.methods.push_back(method);
        for (size_t i = 0; i < plan.values.size(); ++i) {
            const PteValue& value = plan.values[i];
            if (!isConstant(value)) {
                continue;
            }
            TensorInfo tensor;
            tensor.name = valueName(static_cast<int64_t>(i));
            tensor.shape.assign(value.tensor.sizes.begin(), value.tensor.sizes.end());
            tensor.dtype = pteDtypeName(value.tensor.scalarType);
            tensor.device = "cpu";
            tensor.bytes = program.constantBytes(value.tensor.dataBuffer);
            module.parameters.push_back(tensor);
        }
        module.attributes.push_back(
            {"instructions", "int", std::to_string(steps.size()) + " calls"});
        std::string operators;
        for (const PteOperator& op : plan.operators) {
            operators += (operators.empty() ? "" : ", ") + op.text();
        }
        module.attributes.push_back({"operators", "list", operators});
        std::string planned;
        int64_t plannedBytes = 0;
        for (const int64_t bytes : plan.nonConstBufferSizes) {
            plannedBytes += bytes;
        }
        module.attributes.push_back({"memory plan", "bytes",
                                     formatBytes(static_cast<uint64_t>(plannedBytes)) + " in " +
                                         std::to_string(plan.nonConstBufferSizes.size()) +
                                         " buffers"});
        for (size_t d = 0; d < plan.delegates.size(); ++d) {
            const PteDelegate& delegate = plan.delegates[d];
            ModuleInfo child;
            child.path = delegatePath(plan, d);
            child.name = "delegate_" + std::to_string(d);
            child.type = delegate.id;
            child.attributes.push_back({"backend", "str", delegate.id});
            child.attributes.push_back({"processed", "bytes", delegateBlobText(delegate)});
            for (const PteCompileSpec& spec : delegate.compileSpecs) {
                child.attributes.push_back(
                    {spec.key, "compile spec", std::to_string(spec.size) + " bytes"});
            }
            child.attributes.insert(child.attributes.end(), contents[d].attributes.begin(),
                                    contents[d].attributes.end());
            child.parameters = std::move(contents[d].constants);
            module.children.push_back(child.path);
            children.push_back(std::move(child));
        }
        root.children.push_back(module.path);
        info.modules.push_back(std::move(module));
    }
    // Pre-order: the root, then each method followed by its delegates.
    std::vector<ModuleInfo> ordered{std::move(root)};
    for (ModuleInfo& method : info.modules) {
        const std::string prefix = method.path + ".";
        ordered.push_back(std::move(method));
        for (ModuleInfo& child : children) {
            if (child.path.compare(0, prefix.size(), prefix) == 0) {
                ordered.push_back(std::move(child));
            }
        }
    }
    info.modules = std::move(ordered);
    for (ModuleInfo& module : info.modules) {
        countOwnParameters(module);
    }
    info.sumTotals();
    info.methodCount = program.plans.size(); // each once, not as both tree levels list it
    for (const std::string& note : program.notes) {
        info.probe.notes.push_back(note);
    }
    info.loadMilliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
}

Expected<const PtePlan*> ExecuTorchProgram::plan(const std::string& method) const {
    for (const PtePlan& plan : program_.plans) {
        if (plan.name == method) {
            return &plan;
        }
    }
    return Error{ErrorKind::Input, "'" + info_.path + "' has no method '" + method + "'"};
}

// The texts open() made: the root lists every method.
Expected<std::string> ExecuTorchProgram::code(const std::string& method) const {
    if (auto found = plan(method); !found) {
        return found.error();
    }
    return methodInfo(method).code;
}

Expected<std::string> ExecuTorchProgram::graph(const std::string& method) const {
    if (auto found = plan(method); !found) {
        return found.error();
    }
    return methodInfo(method).graph;
}

const MethodInfo& ExecuTorchProgram::methodInfo(const std::string& method) const {
    for (const MethodInfo& m : info_.modules.front().methods) {
        if (m.name == method) {
            return m;
        }
    }
    return info_.modules.front().methods.front(); // plan() found it: not reached
}

Expected<std::vector<ExecuTorchProgram::Call>>
ExecuTorchProgram::calls(const std::string& method) const {
    auto found = plan(method);
    if (!found) {
        return found.error();
    }
    const PtePlan& plan = *found.value();
    std::vector<Call> calls;
    for (const Step& step : stepsOf(plan)) {
        Call call;
        call.chain = step.chain;
        call.instruction = step.instruction;
        call.kind = step.kind;
        call.delegate = step.call->kind == PteInstruction::Kind::Delegate;
        call.module =
            call.delegate ? delegatePath(plan, static_cast<size_t>(step.call->index)) : plan.name;
        calls.push_back(std::move(call));
    }
    return calls;
}

Expected<GraphModel> ExecuTorchProgram::graphModel(const std::string& method) const {
    auto found = plan(method);
    if (!found) {
        return found.error();
    }
    const PtePlan& plan = *found.value();
    std::map<std::pair<size_t, size_t>, int> lines;
    (void)graphOf(plan, program_, &lines);
    const std::vector<Step> steps = stepsOf(plan);
    GraphModel g;
    g.modulePath = plan.name;
    g.method = plan.name;
    g.inlined = true;
    GraphGroup root;
    root.label = "(root)";
    root.module = plan.name;
    root.type = "method";
    g.groups.push_back(root);
    std::map<int32_t, int> inputOf;
    for (const int32_t input : plan.inputs) {
        inputOf[input] = static_cast<int>(g.inputs.size());
        g.inputs.push_back({valueName(input), typeOf(plan, input)});
    }
    for (const int32_t output : plan.outputs) {
        g.outputs.push_back({valueName(output), typeOf(plan, output)});
    }
    std::map<int32_t, int> producer;
    std::map<int32_t, int32_t> viewOf; // a view -> the value it is a view of (Step::views)
    std::map<int, int> delegateGroup;  // delegate index -> its group
    for (const Step& step : steps) {
        GraphNode node;
        node.id = static_cast<int>(g.nodes.size());
        node.kind = step.kind;
        node.module = plan.name;
        node.irLine = lines[{step.chain, step.instruction}];
        if (step.call->kind == PteInstruction::Kind::Delegate) {
            const int index = step.call->index;
            auto group = delegateGroup.find(index);
            if (group == delegateGroup.end()) {
                const PteDelegate& delegate = plan.delegates[static_cast<size_t>(index)];
                GraphGroup added;
                added.id = static_cast<int>(g.groups.size());
                added.parent = 0;
                added.kind = GraphGroup::Kind::Module;
                added.module = delegatePath(plan, static_cast<size_t>(index));
                added.type = delegate.id;
                added.label = "delegate_" + std::to_string(index);
                added.depth = 1;
                g.groups.push_back(added);
                group = delegateGroup.emplace(index, added.id).first;
            }
            node.group = group->second;
            node.module = g.groups[static_cast<size_t>(node.group)].module;
            const PteDelegate& delegate = plan.delegates[static_cast<size_t>(index)];
            node.attributes.push_back({"processed", delegateBlobText(delegate)});
        }
        for (size_t i = 0; i < step.arguments.size(); ++i) {
            const int32_t arg = step.arguments[i];
            const PteValue& value = plan.values[static_cast<size_t>(arg)];
            const bool drawn = isTensor(value) && !isConstant(value);
            if (drawn || value.kind == PteValue::Kind::TensorList ||
                value.kind == PteValue::Kind::OptionalTensorList) {
                continue; // an edge, or edges
            }
            std::string text = argumentText(plan, arg);
            if (isConstant(value)) {
                std::string shape;
                for (size_t d = 0; d < value.tensor.sizes.size(); ++d) {
                    shape += (d ? "x" : "") + std::to_string(value.tensor.sizes[d]);
                }
                text = (shape.empty() ? std::string("scalar") : shape) + " " +
                       pteDtypeName(value.tensor.scalarType) + " (constant " +
                       std::to_string(value.tensor.dataBuffer) + ", " + valueName(arg) + ")";
            }
            node.attributes.push_back({"input " + std::to_string(i), text});
        }
        for (const auto& [view, base] : step.views) {
            // A view reads what its base's maker (or input) made, by the base's name: the one
            // value the two names have.
            const auto known = viewOf.find(base);
            viewOf[view] = known == viewOf.end() ? base : known->second;
        }
        for (int32_t read : step.reads) {
            const std::string type = typeOf(plan, read); // as this call sees it
            if (const auto base = viewOf.find(read); base != viewOf.end()) {
                read = base->second;
            }
            node.inputs.push_back({valueName(read), type});
            GraphEdge edge;
            edge.value = valueName(read);
            edge.type = type;
            edge.to = node.id;
            if (const auto from = producer.find(read); from != producer.end()) {
                edge.from = from->second;
            } else if (const auto in = inputOf.find(read); in != inputOf.end()) {
                edge.fromInput = in->second;
            } else {
                continue; // memory no call makes (a mutable buffer): not drawn
            }
            g.edges.push_back(edge);
        }
        for (const int32_t made : step.makes) {
            node.outputs.push_back({valueName(made), typeOf(plan, made)});
            producer[made] = node.id;
        }
        g.nodes.push_back(std::move(node));
    }
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        GraphEdge edge;
        const auto base = viewOf.find(plan.outputs[i]);
        const int32_t output = base == viewOf.end() ? plan.outputs[i] : base->second;
        edge.value = valueName(output);
        edge.type = typeOf(plan, plan.outputs[i]);
        edge.to = -1;
        edge.toOutput = static_cast<int>(i);
        if (const auto from = producer.find(output); from != producer.end()) {
            edge.from = from->second;
        } else if (const auto in = inputOf.find(output); in != inputOf.end()) {
            edge.fromInput = in->second;
        } else {
            continue;
        }
        g.edges.push_back(edge);
    }
    // No markRepeatedGroups: two delegates look alike from outside but run different blobs.
    return g;
}

std::string executorchDetailsText(const PteProgram& program) {
    std::string text = "ExecuTorch program: version " + std::to_string(program.version) + ", " +
                       std::to_string(program.plans.size()) + " method" +
                       (program.plans.size() == 1 ? "" : "s") + "\n";
    text += "  program: " + std::to_string(program.programSize) + " bytes";
    if (program.extendedHeader) {
        text += "; segments from byte " + std::to_string(program.segmentBaseOffset) + ": " +
                std::to_string(program.segments.size()) + " (" +
                std::to_string(program.segmentDataSize) + " bytes)";
    }
    text += "\n";
    if (program.hasConstantSegment) {
        text += "  constants: " + std::to_string(program.constantOffsets.size()) + " in segment " +
                std::to_string(program.constantSegmentIndex) + "\n";
    } else if (!program.constantBufferSizes.empty()) {
        text += "  constants: " + std::to_string(program.constantBufferSizes.size()) +
                " inline buffers\n";
    }
    for (const PtePlan& plan : program.plans) {
        text += "  method " + signatureOf(plan) + "\n";
        size_t calls = 0;
        for (const PteChain& chain : plan.chains) {
            calls += chain.instructions.size();
        }
        text += "    " + std::to_string(plan.values.size()) + " values, " + std::to_string(calls) +
                " instructions in " + std::to_string(plan.chains.size()) + " chain" +
                (plan.chains.size() == 1 ? "" : "s") + "\n";
        text += "    operators:";
        for (const PteOperator& op : plan.operators) {
            text += " " + op.text();
        }
        text += plan.operators.empty() ? " none\n" : "\n";
        for (size_t d = 0; d < plan.delegates.size(); ++d) {
            text += "    delegate " + std::to_string(d) + ": " + plan.delegates[d].id + ", " +
                    delegateBlobText(plan.delegates[d]) + "\n";
        }
        text += "    memory plan: [" + joined(plan.nonConstBufferSizes) + "] bytes\n";
    }
    for (const std::string& note : program.notes) {
        text += "  note: " + note + "\n";
    }
    return text;
}

std::string executorchDetailsJson(const PteProgram& program) {
    nlohmann::json j = {{"version", program.version},
                        {"program_bytes", program.programSize},
                        {"segment_base_offset", program.segmentBaseOffset},
                        {"segment_bytes", program.segmentDataSize},
                        {"constant_buffers", program.constantBufferSizes},
                        {"constant_offsets", program.constantOffsets},
                        {"notes", program.notes}};
    j["segments"] = nlohmann::json::array();
    for (const PteSegment& s : program.segments) {
        j["segments"].push_back({{"offset", s.offset}, {"size", s.size}});
    }
    j["methods"] = nlohmann::json::array();
    for (const PtePlan& plan : program.plans) {
        nlohmann::json m = {{"name", plan.name},
                            {"inputs", plan.inputs},
                            {"outputs", plan.outputs},
                            {"non_const_buffer_sizes", plan.nonConstBufferSizes}};
        m["operators"] = nlohmann::json::array();
        for (const PteOperator& op : plan.operators) {
            m["operators"].push_back(op.text());
        }
        m["values"] = nlohmann::json::array();
        for (const PteValue& value : plan.values) {
            m["values"].push_back(pteValueLine(value));
        }
        m["chains"] = nlohmann::json::array();
        for (const PteChain& chain : plan.chains) {
            nlohmann::json instructions = nlohmann::json::array();
            for (const PteInstruction& i : chain.instructions) {
                instructions.push_back(pteInstructionLine(i));
            }
            m["chains"].push_back({{"inputs", chain.inputs},
                                   {"outputs", chain.outputs},
                                   {"instructions", instructions}});
        }
        m["delegates"] = nlohmann::json::array();
        for (const PteDelegate& d : plan.delegates) {
            nlohmann::json specs = nlohmann::json::object();
            for (const PteCompileSpec& spec : d.compileSpecs) {
                specs[spec.key] = spec.size;
            }
            m["delegates"].push_back({{"id", d.id},
                                      {"location", d.inSegment ? "segment" : "inline"},
                                      {"index", d.index},
                                      {"bytes", d.blobBytes},
                                      {"compile_specs", specs}});
        }
        j["methods"].push_back(m);
    }
    return j.dump();
}

} // namespace scriptscope
