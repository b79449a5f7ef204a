// Plain value structs that describe an archive and a loaded model. No LibTorch types: these cross
// into the CLI, the worker protocol and the GUI.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace scriptscope {

// ---- Probe: what a file is, read without executing anything ----

enum class FileKind {
    Missing,
    Directory,
    Unreadable,
    Empty,
    TorchScript,      // torch.jit.save
    TorchSaveZip,     // torch.save (zip format): a state_dict, a tensor, a pickled eager model
    LegacyTorchSave,  // torch.save with _use_new_zipfile_serialization=False
    MobileFlatbuffer, // _save_for_lite_interpreter(..., _use_flatbuffer=True)
    Onnx,
    ExportedProgram,    // torch.export.save (.pt2)
    ExecuTorch,         // an ExecuTorch program (.pte): to_executorch().buffer
    PreviewTorchScript, // PyTorch 1.0-preview's TorchScript format (magic PYTORCH1), read by none
    Zip,                // a zip that is none of the above
    TruncatedZip,       // starts like a zip but its directory is missing or cut off
    Text,
    Added, // a format a format library adds (formats/added/format_library.h)
    Unknown,
};

const char* toString(FileKind kind);

struct ArchiveRecord {
    std::string name; // as stored, e.g. "model/code/__torch__.py"
    uint64_t size = 0;
    uint64_t compressedSize = 0;
    uint64_t offset = 0; // of the local header
    bool stored = true;  // false when compressed (PyTorch 1.13 deflates code records)
    uint16_t method = 0; // zip compression method: 0 stored, 8 deflate
    uint32_t crc32 = 0;  // the CRC-32 the directory gives for its bytes
};

struct OperatorUse {
    std::string name; // "aten::matmul", "my_ops::warp_perspective"
    bool registered = false;
};

// A tensor storage the archive's pickles refer to, with what the archive holds for it.
struct StorageInfo {
    std::string record;   // "data/0", "constants/1" (under the archive's folder)
    std::string dtype;    // "float32"; empty when the storage type is unknown
    std::string location; // where it was saved: "cpu", "cuda:0"
    int64_t numel = -1;
    uint64_t declaredBytes = 0; // numel x element size
    uint64_t storedBytes = 0;   // the record's size
    bool present = false;       // the record exists
};

struct ProbeResult {
    std::string path;
    uint64_t fileSize = 0;
    FileKind kind = FileKind::Unknown;
    std::string summary;     // one line a person reads: what the file is and what to do
    std::string archiveName; // the single top folder of the records
    std::vector<ArchiveRecord> records;
    int64_t version = -1;    // the serialization version record, -1 when absent or unreadable
    std::string versionText; // the record as written, for messages
    int64_t maxSupportedVersion = 0;
    std::map<std::string, std::string> extraFiles; // name (under extra/) -> content
    std::vector<OperatorUse> operators;
    std::vector<std::string> pickleGlobals; // classes named by data.pkl, for non-TorchScript zips
    std::string producer;                   // for ONNX, the producer if readable
    // TorchScript, read without executing anything (the safe preview):
    std::map<std::string, std::string> codeFiles; // "code/__torch__.py" -> its text
    std::vector<StorageInfo> storages;
    // Tensors as the pickles rebuild them: "data.pkl: float32[64, 3, 3, 3] from data/0".
    std::vector<std::string> tensors;
    // Why loading would go wrong, found before loading (a storage shorter than it declares).
    std::string damage;
    // What a person should know that is not an error ("saved on cuda:0: loaded on the CPU").
    std::vector<std::string> notes;
    // FileKind::Added: the name of the added format that claimed it ("Toy models").
    std::string addedFormat;
};

// ---- Inspect: the loaded model ----

struct TensorInfo {
    std::string name;
    std::vector<int64_t> shape;
    std::string dtype; // as Python prints it, without "torch."
    std::string device;
    uint64_t bytes = 0;
    bool requiresGrad = false;
    // A weight or bias held inside a quantized module's packed parameters (Conv2dPackedParamsBase,
    // LinearPackedParamsBase, the CellParamsBase of a dynamic quantized LSTM), unpacked.
    bool packed = false;
    std::string packedIn; // the attribute that holds it: "_packed_params", "_all_weight_values.0"
    // Quantized tensors: "per_tensor_affine" with scale and zeroPoint, "per_channel_affine" with
    // scales, zeroPoints and axis. Empty for others.
    std::string qscheme;
    double scale = 0;
    int64_t zeroPoint = 0;
    std::vector<double> scales;
    std::vector<int64_t> zeroPoints;
    int64_t axis = -1;
};

struct AttributeInfo {
    std::string name;
    std::string type;    // TorchScript annotation, e.g. "List[int]"
    std::string preview; // short value text
};

// Where a method's planned tensors live, decided ahead of time (an ExecuTorch program's memory
// plan): each buffer's size, and each tensor's place in its buffer over the steps (instructions)
// from the one that makes it to the last that uses it.
struct MemoryBlock {
    std::string value; // "v7"
    std::string type;  // "f32[1, 8, 32, 32]"
    int buffer = 0;    // index into MemoryPlan::bufferBytes
    uint64_t offset = 0;
    uint64_t bytes = 0;
    int first = 0; // the step that makes it; -1: a method input, there before the first step
    int last = 0;  // the last step that uses it; steps.size(): a method output, kept to the end
};
struct MemoryPlan {
    std::vector<int64_t> bufferBytes; // by memory id
    std::vector<std::string> steps;   // each step as the drawing labels it: "aten::relu.out"
    std::vector<MemoryBlock> blocks;
    bool empty() const { return blocks.empty(); }
};

struct MethodInfo {
    std::string name;
    std::string schema; // e.g. "forward(__torch__.MyCell self, Tensor x, Tensor h) -> ..."
    std::string code;   // exactly Python's module.method.code
    std::string graph;  // exactly Python's str(module.method.graph)
    // A .pt2's forward: each argument as the exported program records it ("f32[1, 3, 224, 224]",
    // "f32[s77, 3, 8, 8]"); empty for TorchScript, whose methods take any shape.
    std::vector<std::string> inputAnnotations;
    // A .pt2's forward that runs (a compiled model) and whose archive keeps the example inputs it
    // was exported with (data/sample_inputs): the `sample` input gives them. A .pte's method: its
    // plan gives each input's shape and dtype, and `sample` makes one of them (random, seeded).
    bool sampleInputs = false;
    // The size of the images its first input takes, where the format records that input's shape
    // and it is a batch of one- or three-channel images of a static size ([N, 1 or 3, H, W]): the
    // Run workspace makes images that size. 0 otherwise, and for TorchScript, whose methods take
    // any shape.
    int imageWidth = 0;
    int imageHeight = 0;
    // Sets imageWidth and imageHeight from the first input's sizes, each -1 where it is symbolic.
    void setImageInput(const std::vector<int64_t>& sizes);
    // A .pte method's memory plan; empty for formats that plan memory as they run.
    MemoryPlan memoryPlan;
};

struct ModuleInfo {
    std::string path; // "" for the root, dotted as in named_modules()
    std::string name; // last component of the path ("" for the root)
    std::string type; // qualified type name, e.g. "__torch__.MyCell"
    std::vector<TensorInfo> parameters;
    std::vector<TensorInfo> buffers;
    std::vector<AttributeInfo> attributes;
    std::vector<MethodInfo> methods;
    std::vector<std::string> children; // paths of direct submodules
    uint64_t parameterCount = 0;       // own parameters' elements
    uint64_t parameterBytes = 0;
    uint64_t totalParameterCount = 0; // including submodules
    uint64_t totalBytes = 0;          // parameters and buffers, including submodules
};

// What a model may be asked beyond its tree and its drawn graph. A format, or a build, that cannot
// do one says why (ModelInfo::lacking): the GUI hides or disables it with that reason, the worker
// and the CLI refuse it with the same words.
enum class Capability {
    Code,            // Python's module.method.code
    InlinedGraph,    // str(model.inlined_graph); a flat exported graph has no other
    Run,             // timed runs, live sources
    Profile,         // the per-operator profile of a run
    Statistics,      // statistics of parameters and buffers
    Activations,     // every value of one run, the first NaN or Inf
    Optimize,        // passes on a copy
    Diff,            // against another model
    RecordedProfile, // runs recorded elsewhere (an ETDump) read over it
    Count
};
// "code", "inlined_graph", "run", ... (the protocol's and the CLI's JSON names).
const char* toString(Capability capability);
// The capability of that name, Capability::Count when none is.
Capability capabilityFromString(const std::string& name);

struct ModelInfo {
    std::string path;
    // The format that opened it, as a person names it: "TorchScript", "torch.export",
    // "AOTInductor package" (the format registry's names).
    std::string format;
    ProbeResult probe;
    std::vector<ModuleInfo> modules; // pre-order; modules[0] is the root
    // Python's str(model.inlined_graph), with LoadOptions::includeInlinedGraph; empty otherwise and
    // for models without forward.
    std::string inlinedForwardGraph;
    uint64_t parameterCount = 0;
    uint64_t parameterBytes = 0;
    uint64_t bufferBytes = 0;
    uint64_t methodCount = 0;
    std::string torchVersion; // of the LibTorch that loaded it
    double loadMilliseconds = 0;
    // Remembered operator libraries that were not loaded (built for another LibTorch, missing,
    // failing): the library's path and why. The model was opened without them.
    std::vector<std::pair<std::string, std::string>> refusedLibraries;
    // What this model cannot do in this build, each with why (Capability above).
    std::map<Capability, std::string> lacking;

    // Why the model cannot do `capability`; empty when it can.
    std::string lacks(Capability capability) const {
        const auto found = lacking.find(capability);
        return found == lacking.end() ? std::string() : found->second;
    }

    // Fills the totals from each module's own parameters and buffers: every module's
    // totalParameterCount and totalBytes (its submodules' included), and the model's counts.
    // `modules` must be in pre-order (children after their parent).
    void sumTotals();

    const ModuleInfo* findModule(const std::string& modulePath) const {
        for (const auto& module : modules) {
            if (module.path == modulePath) {
                return &module;
            }
        }
        return nullptr;
    }
};

} // namespace scriptscope
