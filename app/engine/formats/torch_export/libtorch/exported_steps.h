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
#include <set>
#include <string>
#include <utility>
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

// auto_functionalized(_v2): what the operator mutates and how each is made at run time. The step's
// arguments are the operator's in schema order (v2: None where it mutates), then (v2) the list of
// bases and the views' sizes, strides and offsets.
struct Functionalized {
    bool v2 = false;
    size_t schemaArgs = 0;       // the operator's arguments at the front of the step's
    std::vector<size_t> mutated; // their positions in the schema
    std::vector<bool> listed;    // per mutated argument: a list of tensors
    std::vector<bool> absent;    // v2: per mutated argument, given as None (a list's length None)
    std::vector<bool> copied;    // v1: per mutated argument, copied first (else mutated as it is)
    // v2: per mutated argument, per element (one for a tensor), how it is made from the bases.
    struct View {
        enum class How { None, Base, Alias, AsStrided, Slice } how = How::None;
        int base = -1;
        size_t firstArg = 0; // AsStrided: size, stride, offset; Slice: dim, start, end
    };
    std::vector<std::vector<View>> views;
    std::vector<bool> copiedBases; // per base: copied first
};

struct Step {
    // The higher-order operators: cond, while_loop, map_impl, wrap_with_set_grad_enabled and
    // wrap_with_autocast, each with its graphs as programs of their own (branches), and
    // auto_functionalized(_v2).
    enum class What {
        Operator,
        Python,
        GetItem,
        Cond,
        WhileLoop,
        Map,
        SetGrad,
        Autocast,
        Functionalized
    };
    What what = What::Operator;
    std::string label;  // "node 'conv2d' (aten::conv2d)"
    std::string node;   // a higher-order operator's node name ("cond"), for ControlFlowRun
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
    Functionalized functionalized;
    // It may write into a value in place: an operator whose schema marks an argument written
    // (relu_, copy_, a custom operator's), or a higher-order operator (its graphs may).
    bool writes = false;
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

// exported_arguments.cpp: how a serialized value fits a schema.
// The serializer's ScalarType codes (torch/_export/serde/schema.py) as c10's.
std::optional<c10::ScalarType> scalarTypeOf(int64_t code);
// Its Layout and MemoryFormat codes as c10's, as ints.
int64_t layoutOf(int64_t code);
int64_t memoryFormatOf(int64_t code);
// A kind of value in words ("a list of tensors").
const char* kindName(Kind kind);
// Whether a value of `kind` can be given for a schema argument of type `type` (its str(), which
// reads the same in LibTorch 1.13 and 2.x: "Tensor", "Tensor?[]", "SymInt[]", "Scalar", ...).
bool fits(std::string type, Kind kind);
// A number given where a tensor is taken, as Python passes it: a 0-dim tensor marked as a wrapped
// number, so that it does not decide the result's dtype (int + float32 tensor stays float32).
at::Tensor wrappedNumber(at::Tensor tensor);
// Whether `version` ("2.14.1+cu130") is a later release than this LibTorch's.
bool newerThanThisLibTorch(const std::string& version);

// exported_functionalized.cpp: auto_functionalized and auto_functionalized_v2, the calls of an
// operator that mutates its arguments in a functional graph: the operator runs on copies of what
// it mutates (v1: each mutated argument; v2: the bases they are views of, the views made again on
// the copies), and returns its results, then the copies.
// The node read against the operator's schema: the operator's own call (its target and the
// arguments it is given by name; v2: those it mutates are `later`, made at run time), and the
// spec; `extra` are the values the step takes after the operator's arguments (v2: the bases, then
// each view's numbers), each with the schema type it must fit. Views' firstArg count from there.
struct FunctionalizedForm {
    Pt2Node call;
    std::set<std::string> later;
    Functionalized spec;
    std::vector<std::pair<Pt2Value, std::string>> extra;
};
Expected<FunctionalizedForm>
functionalizedForm(const Pt2Node& node, const c10::FunctionSchema& schema, const std::string& at);
// Runs the step on its arguments (the stack), as the operator's dense implementation does.
std::vector<c10::IValue> runFunctionalized(const Step& step, torch::jit::Stack& stack);

// exported_symbolic.cpp: the Python function a target names (operator.add, torch.sym_max, ...),
// or an empty function.
SymFunction symFunction(const std::string& target);

// exported_weights.cpp: the parameters, buffers and constants of the program in `path`, by their
// state-dict names, read from its records (either layout), on the CPU.
Expected<std::map<std::string, at::Tensor>>
readProgramTensors(const ZipReader& zip, const Pt2Model& model, const std::string& path);

} // namespace scriptscope::detail
