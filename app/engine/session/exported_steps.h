// Internal to the exported program's interpreter files: the program a graph is resolved into
// (exported_builder.cpp), run by exported_interpreter.cpp; the Python functions on SymInts
// (exported_symbolic.cpp) and the weights (exported_weights.cpp) it takes. Includes LibTorch.
#pragma once

#include "exported_interpreter.h"

#include <zip_reader.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope::detail {

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
    // The higher-order operators: cond, while_loop, map_impl, wrap_with_set_grad_enabled and
    // wrap_with_autocast, each with its graphs as programs of their own (branches).
    enum class What { Operator, Python, GetItem, Cond, WhileLoop, Map, SetGrad, Autocast };
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
    // cond: true, false; while_loop: cond, body; the others: the body.
    std::vector<std::shared_ptr<const ExportedInterpreter::Program>> branches;
};
struct ExportedInterpreter::Program {
    std::vector<int> inputs; // the placeholders' slots, -1 for one that is not a value
    std::vector<Step> steps;
    std::vector<Arg> outputs;
    int slots = 0;
    std::vector<std::string> names; // per slot: the graph's name for the value
    std::vector<int> lastUse;       // per slot: the last step that reads it; steps.size(): output
    // Per step: the slots let go after it (their last reader, or the step that made them where
    // nothing reads them), so that a value's memory is free for the next as Python frees it.
    std::vector<std::vector<int>> freedAfter;
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

using Program = ExportedInterpreter::Program;

// exported_builder.cpp: the graph into a program (slots for its values, a step per node), every
// node checked against its operator's schema first; `where` names the graph in errors.
Expected<std::shared_ptr<Program>> buildProgram(const Pt2Model& graph, const torch::Device& device,
                                                const std::string& where);
// The serializer's ScalarType codes (torch/_export/serde/schema.py) as c10's.
std::optional<c10::ScalarType> scalarTypeOf(int64_t code);

// exported_symbolic.cpp: the Python function a target names (operator.add, torch.sym_max, ...),
// or an empty function.
SymFunction symFunction(const std::string& target);

// exported_weights.cpp: the parameters, buffers and constants of the program in `path`, by their
// state-dict names, read from its records (either layout), on the CPU.
Expected<std::map<std::string, at::Tensor>>
readProgramTensors(const ZipReader& zip, const Pt2Model& model, const std::string& path);

} // namespace scriptscope::detail
