// Internal to the session files: a torch.export program run in C++ by interpreting its graph. No
// LibTorch library runs an ExportedProgram (the wheel's torch/nativert header has no symbols
// behind it), but its graph is a list of calls to registered operators, and the dispatcher calls
// any of them by schema.
//
// prepare() checks the whole graph before anything runs, and refuses, each with its reason: what
// checkExportedGraph (reader/graph_check.h, torch-free and fuzzed) refuses; a target no loaded
// library registers (naming it, and the library on this machine that has it); arguments that do
// not fit the operator's schema, or returns that do not match it; what the interpreter does not
// run (custom objects, higher-order operators other than cond). Then it reads
// the weights and constants onto the device. run() calls the nodes in order: call_function
// through the dispatcher, the SymInt arithmetic (operator.add, sym_max, ...) on integers,
// operator.getitem, and torch.cond on the branch its predicate picks; it writes buffer and user
// input mutations back as PyTorch does, and returns the user outputs.
//
// Device arguments in the graph (a tensor made with device='cpu') are moved to the run's device,
// as torch.export's move_to_device_pass does.
#pragma once

#include <error.h>
#include <exported_program.h>
#include <numerics_types.h>

#include <torch/script.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace scriptscope::detail {

class ExportedInterpreter {
public:
    ~ExportedInterpreter();
    ExportedInterpreter(const ExportedInterpreter&) = delete;
    ExportedInterpreter& operator=(const ExportedInterpreter&) = delete;

    // The program's graph checked and its weights read onto `device`.
    static Expected<std::unique_ptr<ExportedInterpreter>> prepare(const ExportedProgram& program,
                                                                  const torch::Device& device);

    const torch::Device& device() const;
    // How many user inputs a call takes (the signature's USER_INPUTs, pytree-flattened).
    size_t userInputs() const;
    // One call: the user outputs in the signature's order. Throws what an operator throws, with
    // the node's name and target in front of its message.
    std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs);
    // The same call, with every tensor the top-level graph's user inputs and nodes hold shown to
    // `observer` in the order they are made (a cond's branch is one node: what it returns is
    // shown, not what is inside it).
    struct Observed {
        int step = -1;    // the node that made it (its index among steps()); -1: a user input
        int lastUse = -1; // the last step that reads it; steps() for an output of the graph
        const std::string& name; // the graph's name for it
        const at::Tensor& tensor;
        // How many steps so far wrote into their arguments in place: values with equal counts
        // saw the same contents of any storage they share.
        uint64_t writes = 0;
    };
    using Observer = std::function<void(const Observed&)>;
    // `flow`, when given, gets what the top-level graph's control flow did (its graphNode left
    // for the caller: ExportedProgram::graphNodeOf).
    std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, const Observer& observer,
                                 std::vector<ControlFlowRun>* flow = nullptr);
    // How many steps a run of the top-level graph takes (a node each, getitem included).
    size_t steps() const;
    // Whether the tensor's storage is one of the program's parameters, buffers or constants.
    bool holdsStorage(const at::Tensor& tensor) const;

    struct Program;

private:
    ExportedInterpreter();
    std::unique_ptr<Program> program_;
};

// The user outputs as ep.module() returns them: nested by the program's out_spec (a dict, a
// NamedTuple, ...); without a spec that fits them, one value as it is and several as a tuple.
c10::IValue programOutput(const Pt2Model& model, std::vector<c10::IValue> outputs);

// exported_numerics.cpp: one run of the interpreter with every tensor of its graph recorded, as a
// TorchScript archive's activations are (inputs already on the interpreter's device).
Expected<ActivationReport> interpretedActivations(const ExportedProgram& program,
                                                  ExportedInterpreter& interpreter,
                                                  const std::vector<c10::IValue>& inputs,
                                                  const ActivationRequest& request);
// The output of every module of the program's nn_module_stack in one run.
Expected<std::shared_ptr<const ModuleValues>>
interpretedModuleOutputs(const ExportedProgram& program, ExportedInterpreter& interpreter,
                         const std::vector<c10::IValue>& inputs);

} // namespace scriptscope::detail
