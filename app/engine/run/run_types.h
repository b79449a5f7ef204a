// Plain value structs for building inputs, running a method and reporting what came out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace scriptscope {

// How an image file becomes a tensor.
struct ImagePreprocess {
    int width = 0; // 0: keep the image's size
    int height = 0;
    bool rgb = true;           // channel order; false: BGR as OpenCV reads it
    bool channelsFirst = true; // CHW; false: HWC
    bool batch = true;         // add a leading batch dimension
    std::string dtype = "float32";
    double scale = 1.0 / 255.0; // applied before mean/std: (x * scale - mean) / std
    std::vector<double> mean;   // one per channel, or empty
    std::vector<double> stddev; // one per channel, or empty
    bool grayscale = false;
};

// One argument of a method, as a person describes it.
struct InputSpec {
    enum class Kind {
        Random, // standard normal (floating) or 0..9 (integral)
        Zeros,
        Ones,
        Image,
        File,   // a value written by Python's torch.save
        Matrix, // a 3x3 float32 homography from a matrix file (JSON, .npy, OpenCV XML/YAML), or
                // the nine values in floatList when path is empty (the warp editor's matrix)
        Int,
        Float,
        Bool,
        String,
        None,
        IntList,
        FloatList,
        // Containers of other specs: list:SPEC;SPEC, tuple:SPEC;SPEC, dict:KEY=SPEC;KEY=SPEC.
        List,
        Tuple,
        Dict, // string keys, in keys[] beside elements[]
        // A .pt2's own example input (data/sample_inputs, what torch.export was given): argument
        // intValue of it, or the argument in this spec's position when intValue is -1.
        Sample,
    };
    Kind kind = Kind::None;
    std::vector<int64_t> shape;
    std::string dtype = "float32";
    std::string path;
    std::string node; // for Matrix: the FileStorage node, empty for the first 3x3 matrix
    ImagePreprocess image;
    int64_t intValue = 0;
    double floatValue = 0;
    bool boolValue = false;
    std::string stringValue;
    std::vector<int64_t> intList;
    std::vector<double> floatList;
    uint64_t seed = 0;
    std::vector<InputSpec> elements; // List, Tuple, Dict
    std::vector<std::string> keys;   // Dict: one per element

    std::string describe() const;
};

struct TimingStats {
    size_t count = 0;
    double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0, stddev = 0;
};

// What a method returned, as a tree of plain values.
struct OutputValue {
    enum class Kind { None, Tensor, Int, Float, Bool, String, Tuple, List, Dict, Other };
    Kind kind = Kind::None;
    std::string key; // the dict key or the index this value sits under
    // Tensor
    std::vector<int64_t> shape;
    std::string dtype;
    std::string device;
    double min = 0, max = 0, mean = 0, stddev = 0; // over the finite values
    int64_t nanCount = 0, infCount = 0, numel = 0;
    std::vector<double> preview; // the first values, flattened
    // Every value as float32, row-major, when the tensor has at most RunRequest::valuesLimit
    // elements (for drawing it as an image, tables and comparisons); empty otherwise.
    std::vector<float> values;
    // Scalars and other values
    std::string text;
    std::vector<OutputValue> children;
};

// A decoded frame the engine reads an "image:-" input from: 8-bit BGR pixels it does not own.
struct ImageFrame {
    const unsigned char* data = nullptr;
    int width = 0, height = 0;
    size_t step = 0; // bytes per row
};

// What an image input reads when its path is "-": the frame a source gives (image:-).
constexpr const char* kFrameImagePath = "-";

struct RunRequest {
    std::string method = "forward";
    std::vector<InputSpec> inputs;
    std::string inputsFile; // all arguments from one torch.save file
    std::string device = "cpu";
    int warmup = 1;
    int iterations = 10;
    std::string saveOutputsPath; // written so that Python's torch.load reads it
    size_t previewValues = 8;
    size_t valuesLimit = 0; // see OutputValue::values
    // After the timed iterations, one more run records every operator call (RecordFunction) and
    // attributes its time to the module it ran in.
    bool profile = false;
    // An ExecuTorch program's runs recorded elsewhere (an ETDump, from a phone or a board): read
    // instead of running, its runs as the timing samples and its events as the profile.
    std::string etdumpPath;
    // The current frame of a source, for "image:-" inputs. Not sent over the protocol: the worker
    // and the CLI decode frames themselves and point here.
    ImageFrame frame;
};

struct ModuleTime {
    std::string path;   // as in ModuleInfo::path: "" for the root, "features.0", ...
    double selfMs = 0;  // operators called directly in this module's code
    double totalMs = 0; // with its submodules
    int64_t calls = 0;  // operator calls, self
};

struct OperatorTime {
    std::string name;   // "aten::conv2d"
    double totalMs = 0; // including operators it called
    double selfMs = 0;
    int64_t calls = 0;
};

struct RunProfile {
    double operatorMs = 0; // all top-level operator calls: the modules' shares add up to this
    double wallMs = 0;     // the profiled iteration, end to end (the p50 of several traced ones)
    std::vector<ModuleTime> modules;     // every module with time, parents before children
    std::vector<OperatorTime> operators; // by total time, longest first
    // The tensor shapes that flowed along the values of the run method's inlined graph, by the
    // values' debug names ("1x64x56x56"): the diagram's edge labels after the run.
    std::map<std::string, std::string> valueShapes;
    std::string shapesMethod; // the method whose inlined graph they are of
    std::string shapesError;  // why there are none, when recording them failed
    // Each diagram node's own time, by node id, where the run timed every call (a .pte's
    // instructions, from ExecuTorch's event tracer); empty where times are known by operator only.
    std::vector<double> nodeMs;
    int64_t runs = 1; // the times are the mean of this many runs (an ETDump's, a .pte's)
};

// What a run's control flow did: a torch.cond's branch, a while_loop's or a map's count of body
// runs, for the diagram to mark (the last timed run's; a .pt2's top-level nodes).
struct ControlFlowRun {
    std::string node;        // the node's name in its graph ("cond")
    int graphNode = -1;      // the diagram's node (GraphModel id); -1 when unknown
    std::string kind;        // "cond", "while_loop", "map"
    int branch = -1;         // cond: 0 the true branch ran, 1 the false one
    int64_t iterations = -1; // while_loop, map: how many times the body ran
};

struct RunResult {
    std::string model; // the archive's path, so runs of different models are told apart
    std::string method;
    std::string device;
    std::string deviceName;
    int warmup = 0;
    // The device runs asynchronously (CUDA) and each timed iteration waited for it to finish, so
    // the samples are the kernels' time and not only the time to queue them.
    bool synchronized = false;
    std::vector<double> samplesMs; // every timed iteration, in order
    TimingStats stats;
    std::vector<std::string> inputDescriptions;
    OutputValue output;
    bool profiled = false;
    RunProfile profile;
    std::vector<ControlFlowRun> controlFlow;
};

// Where the frames of a live demo come from (media/frame_source.h opens it).
struct SourceSpec {
    enum class Kind { Folder, Video, Camera };
    Kind kind = Kind::Video;
    std::string path; // the folder or the video file; for a camera its device ("/dev/video0")
    int camera = 0;   // the V4L2 index
};

struct SourceInfo {
    SourceSpec::Kind kind = SourceSpec::Kind::Video;
    std::string path;
    std::string description;        // "clip.mp4: 96 frames, 640x480 at 12 fps (FFmpeg)"
    int64_t frames = -1;            // -1: unknown (a camera, or a video without a frame count)
    double fps = 0;                 // 0: not a timed stream (a folder)
    int width = 0, height = 0;      // of the first frame, where known
    std::vector<std::string> files; // a folder's images, in order
    std::vector<std::string> notes; // files left out, and why
};

struct CameraInfo {
    int index = 0;
    std::string device; // "/dev/video0"
    std::string name;   // from the driver
};

// One frame of a source, run: what the worker answers while a source plays.
struct FrameResult {
    int64_t index = 0;
    std::string name;
    int64_t dropped = 0; // frames that arrived while the model ran, skipped since the last one
    bool end = false;    // past the last frame: nothing was read
    int width = 0, height = 0;
    std::vector<unsigned char> bgr; // the frame as decoded, width x height x 3, to draw over
    std::string error; // the frame did not decode or the run failed (the source goes on)
    bool hasRun = false;
    RunResult run;
    double decodeMs = 0; // reading and decoding the frame
};

struct DeviceInfo {
    std::string id;   // "cpu", "cuda:0"
    std::string name; // for CUDA, the device's name where known
    uint64_t memoryBytes = 0;
    bool available = true;
    std::string reason; // why not available
};

} // namespace scriptscope
