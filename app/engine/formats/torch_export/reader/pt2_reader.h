// torch.export archives (.pt2, written by torch.export.save and by AOTInductor's
// aoti_compile_and_package) read without LibTorch and without running anything: the schema
// version, the graph signature, the nodes with their targets, arguments, tensor metadata and
// module stacks, the weights and constants configs, and the archive's other parts.
//
// Two layouts: PyTorch 2.8 and later write `<root>/archive_format` ("pt2"), `archive_version`,
// `models/<name>.json`, `data/weights/<name>_weights_config.json`,
// `data/constants/<name>_constants_config.json`, `data/sample_inputs/<name>.pt` and optionally
// `data/aotinductor/`; earlier releases wrote `serialized_exported_program.json`,
// `serialized_state_dict.pt`, `serialized_constants.pt` and `version` ("major.minor").
//
// Like the zip and pickle readers it trusts nothing: every JSON text is bounded in size and
// nesting, every reference into the archive is checked against its records, and what cannot be
// read is a note, never a crash.
#pragma once

#include "pytree_spec.h"
#include "zip_reader.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace scriptscope {

// The serialization schema this reader was written against (torch/_export/serde/schema.py):
// an archive with a newer major version is shown as far as it reads, with a note.
constexpr int kPt2SchemaMajor = 8;
constexpr int kPt2SchemaMinor = 20;

struct Pt2TensorMeta {
    std::string dtype;              // as Python prints it: "float32"
    std::string shortDtype;         // as print(exported_program) annotates it: "f32"
    std::vector<std::string> sizes; // "3", or a symbol's expression ("s0")
    std::string device;             // "cpu", "cuda:0"
    bool requiresGrad = false;
    // "f32[1, 3, 224, 224]", as the graph printout's annotations
    std::string text() const;
};

struct Pt2ModuleFrame {
    std::string key;  // "L__self___layer1_0"
    std::string path; // "layer1.0"
    std::string type; // "torchvision.models.resnet.BasicBlock"
};

// A value as the graph holds it (an argument, a node's output, a graph's input or output), for
// the interpreter that runs it (formats/torch_export/libtorch/exported_interpreter.cpp). Lists keep
// one entry per element in every vector they use.
struct Pt2Value {
    enum class Kind {
        None,
        Tensor,          // names[0]
        Tensors,         // names
        OptionalTensors, // names, "" for None
        Int,             // ints[0]
        Ints,
        Float, // floats[0]
        Floats,
        Bool, // ints[0]: 0 or 1
        Bools,
        String, // text
        Strings,
        SymInt, // names[0], or "" and ints[0] for a constant
        SymInts,
        SymFloat, // names[0], or "" and floats[0]
        SymFloats,
        SymBool, // names[0], or "" and ints[0]
        SymBools,
        ScalarType,   // ints[0]: the serializer's code (dtypeNames)
        MemoryFormat, // ints[0]: 1 contiguous, 2 channels last, 3 channels last 3d, 4 preserve
        Layout,       // ints[0]: 7 strided, 1 sparse COO, ...
        Device,       // text: "cpu", "cuda"; ints[0]: its index, -1 for none
        Graph,        // text: the subgraph's name (Pt2Model::subgraphs)
        Operator,     // text: the operator's overload ("torch.ops.my_ops.scale_.default")
        Other,        // text: the union's name ("as_custom_obj"), which nothing here runs
    };
    Kind kind = Kind::None;
    std::vector<std::string> names;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
    std::string text;
};

struct Pt2Argument {
    std::string name;  // the schema's argument name ("input", "weight")
    std::string text;  // its value as the graph printout writes it, repr() ("x", "[1, 1]", "'a'")
    std::string plain; // as str(graph) writes it, str() ("a", "cuda:0", "%x")
    std::vector<std::string> values; // the graph values it reads
    bool keyword = false;
    Pt2Value value;
};

struct Pt2Node {
    std::string name;   // the first output's name ("conv2d")
    std::string target; // "torch.ops.aten.conv2d.default"
    std::vector<Pt2Argument> inputs;
    std::vector<std::string> outputs; // value names, "" for an output that is not a value
    std::vector<Pt2Value> returns;    // the serialized outputs, one per schema return
    // The call returns a tuple or list (Python's graph then takes each value out with a getitem
    // node named after it), not one value.
    bool multipleOutputs = false;
    std::vector<Pt2ModuleFrame> moduleStack; // outermost first (the model itself first)
    std::vector<std::string> subgraphs;      // the graphs it takes (torch.cond's branches)
    std::string stackTrace;
};

// One input or output of the graph signature, as print(exported_program) lists it.
struct Pt2SignatureEntry {
    std::string kind;   // "PARAMETER", "BUFFER", "CONSTANT_TENSOR", "USER_INPUT", "USER_OUTPUT",
                        // "BUFFER_MUTATION", "USER_INPUT_MUTATION", ...
    std::string name;   // the graph's value ("p_conv_weight")
    std::string target; // the state dict's name ("conv.weight"), empty for user values
    bool persistent = true; // buffers
};

struct Pt2Weight {
    std::string name;   // the state dict's name
    std::string record; // the archive record holding it, "" when it cannot be found
    Pt2TensorMeta meta;
    bool parameter = false;
    uint64_t bytes = 0; // the record's size
    // How the record's bytes (the tensor's whole storage) are viewed; a pickled weight
    // (use_pickle) is a torch.save file instead.
    std::vector<int64_t> strides;
    int64_t storageOffset = 0;
    bool pickled = false;
};

struct Pt2Model {
    std::string name; // "model"
    std::string torchVersion;
    std::vector<Pt2SignatureEntry> inputs, outputs;
    std::vector<Pt2Node> nodes;
    std::map<std::string, Pt2TensorMeta> tensors;    // value name -> metadata
    std::map<std::string, std::string> symbols;      // SymInt value name -> its expression ("s77")
    std::vector<std::string> graphInputs;            // the graph's placeholders, in order
    std::vector<std::string> graphOutputs;           // what the graph returns
    std::vector<Pt2Value> inputValues, outputValues; // the same, as values
    // The graph returns its one output itself, not in a tuple (a while_loop's cond_fn):
    // is_single_tensor_return.
    bool singleTensorReturn = false;
    // symbol -> "VR[2, 64]", in the archive's order (Python prints them in it)
    std::vector<std::pair<std::string, std::string>> rangeConstraints;
    std::vector<Pt2Weight> weights, constants;
    // The graphs that control flow operators call (torch.cond's true_graph_0, ...), each with its
    // own inputs, nodes and values, in the order the graph names them; Python shows each as a
    // submodule of the graph module.
    std::vector<Pt2Model> subgraphs;
    // How the user outputs nest in what ep.module() returns (module_call_graph's out_spec for the
    // root): read when the archive keeps one (outputSpecText), else why not (outputSpecNote).
    std::optional<PytreeSpec> outputSpec;
    std::string outputSpecNote;
    bool sampleInputs = false;
    std::string
        sampleInputsRecord; // the record of the example inputs, a torch.save of (args, kwargs)
    // The early layout keeps its state dict and constants as torch.save files: their records.
    std::vector<std::string> pickledWeights;
    std::vector<std::string> notes; // parts that did not read, and why
};

// A model AOTInductor compiled into the archive (data/aotinductor/<name>/): a shared library and
// its generated sources, run by LibTorch's AOTIModelPackageLoader.
struct Pt2CompiledModel {
    std::string name;                            // "model"
    std::map<std::string, std::string> metadata; // "AOTI_DEVICE_KEY" -> "cpu", "AOTI_CPU_ISA", ...
    std::string wrapperSource;                   // the record of its generated wrapper .cpp
    uint64_t libraryBytes = 0;                   // its shared libraries' size
};

struct Pt2Archive {
    bool ok = false;    // the archive is a .pt2 and its models were read (perhaps in part)
    std::string error;  // why not, when !ok
    std::string layout; // "pt2 (PyTorch 2.8 and later)" or "serialized_exported_program"
    std::string root;   // the records' top folder ("" for the early layout)
    std::string archiveVersion;
    int schemaMajor = -1, schemaMinor = -1;
    std::vector<Pt2Model> models;
    std::vector<std::string> aotInductorFiles; // under data/aotinductor/: a compiled model
    std::vector<Pt2CompiledModel> compiled;
    std::vector<std::string> extraFiles;
    std::vector<std::string> notes; // the schema is newer, parts did not read, ...
};

// What the reader accepts: JSON texts up to maxJsonBytes, nested up to maxDepth, at most
// maxNodes nodes per graph.
struct Pt2Limits {
    uint64_t maxJsonBytes = 256ull << 20;
    int maxDepth = 256;
    size_t maxNodes = 2'000'000;
};

// The graph signature as print(exported_program.graph_signature) lists it: "# inputs",
// "p_conv_weight: PARAMETER target='conv.weight'", ..., "", "# outputs", "linear: USER_OUTPUT".
std::vector<std::string> signatureLines(const Pt2Model& model);

// The compiled model of that name, or nullptr.
const Pt2CompiledModel* findCompiled(const Pt2Archive& archive, const std::string& name);

// True when the zip is a .pt2 of either layout.
bool isPt2Archive(const ZipReader& zip);
Pt2Archive readPt2Archive(const ZipReader& zip, const Pt2Limits& limits = {});

} // namespace scriptscope
