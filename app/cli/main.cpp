// scriptscope-cli: the engine, headless and scriptable.
#include "isolation.h"

#include <engine.h>
#include <format.h>
#include <frame_source.h>
#include <graph_layout.h>
#include <input_spec.h>
#include <matrix_io.h>
#include <process_limits.h>
#include <stats.h>
#include <task_render.h>
#include <task_result.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#ifndef SCRIPTSCOPE_VERSION
#error "SCRIPTSCOPE_VERSION comes from CMake"
#endif

namespace scriptscope::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCrashed = 3;
constexpr int kExitTimedOut = 4;
constexpr int kExitNeedsNewerLibTorch = 5;

const char* const kProgram = "scriptscope-cli";

// Each command's help names the global options, which CLI11 lists only in the top-level help.
const char* const kGlobalOptionsNote =
    R"(Options for every command, before or after it (see scriptscope-cli --help): --op-library PATH,
--timeout S, --memory-limit MB, --in-process, --verbose.)";

const char* const kTopFooter =
    R"('scriptscope-cli COMMAND --help' describes a command and its options ('run --help' the input
specs). The options above may come before or after the command.

Exit status: 0 success; 1 bad input or model error; 2 usage error; 3 the work crashed or hit the
memory limit; 4 the work timed out; 5 the archive was saved by a newer PyTorch and calls operators
this LibTorch does not have.)";

const char* const kInfoFooter =
    R"(Reads records, serialization version, extra files, operators used and whether each is
registered, tensor storages (dtype, size, where saved; short or missing data is reported as
damage), and the code files (--show-code prints them). Nothing in the file is executed. The exit
status is 1 for a file that this LibTorch cannot open as a model.)";

const char* const kTreeFooter =
    R"(Loads the model and prints its modules, each with its parameters, buffers, attributes and
methods (schemas), and the totals.)";

const char* const kCodeFooter =
    R"(Prints what Python prints for model.PATH.NAME.code (default: the root's forward).)";

const char* const kGraphFooter =
    R"(Prints str(model.PATH.NAME.graph) (default: the root's forward); --inlined prints
str(model.inlined_graph), with the calls of submodules inlined.

--format json or dot gives the graph as the diagram draws it: operator nodes (constants and
prim::GetAttr folded into the nodes that use them, as attributes), the values between them, and
groups: one per module instance (from the inlined call stack; the module is the dotted path of
named_modules(), "" for the root) and one per block of prim::If and prim::Loop. --expand N shows
the contents of groups down to depth N (the root is 0, its children 1; default 0: the root's
children as boxes; blocks are one deeper than their owner); --expand all shows every node. dot is
Graphviz's language (render it with dot -Tsvg). svg is the diagram as the GUI draws it: each open
group laid out on its own by Graphviz (--layout graphviz, in a separate process under
--layout-timeout) or by the simple layered layout (--layout simple).)";

const char* const kRunFooter = R"(Runs a method (after the warm-up runs) and times each iteration.

One --input per argument of the method, in order. SPEC is one of:
  random:1x3x224x224[:DTYPE[:SEED]]  zeros:2x3:int64  ones:4
  image:photo.png[,size=224x224][,order=rgb|bgr][,layout=chw|hwc][,batch=0|1][,dtype=float32]
       [,scale=1/255][,mean=a/b/c][,std=a/b/c][,gray=1][,preset=imagenet]
  file:x.pt (a value written by torch.save)
  matrix:h.npy[#node] (a 3x3 float32 homography from a matrix file)
  3   3.5   true   false   none   str:TEXT   ints:1,2   floats:0.5,1
  list:SPEC;SPEC;...  tuple:SPEC;SPEC  dict:KEY=SPEC;KEY=SPEC
       each element any spec, e.g. a detector's List[Tensor]:
       'list:image:a.png,batch=0;image:b.png,batch=0'; [..] nests:
       'list:[list:ones:2;ones:3];ones:4'; 'list:' is empty

--inputs FILE gives every argument from one torch.save file: a tensor, or a tuple/list with one
value per argument; a list that fits a first List[...] argument is that argument.

--render OUT.png draws the output as the task it is over the (first) image input, at the size the
model saw: a detector's boxes (torchvision's List[Dict] with boxes/labels/scores, masks and
keypoints when present, the (losses, detections) tuple of scripted detectors, N x 4 / N x 6
tensors) with class names and scores from --score-threshold; a segmentation (N x C x H x W, or a
dict with "out") blended in with a legend; a classifier's top-k (softmax applied to logits).
--task forces one; names come from --labels, else the archive's extra file labels.txt, else the
built-in ImageNet-1k, COCO or Pascal VOC set that fits. --json adds "interpreted".)";

const char* const kWarpFooter =
    R"(Warps IMAGE with my_ops::warp_perspective into -o OUT. Give either --matrix or --corners.
The matrix maps source pixels to output pixels, as cv::warpPerspective's (JSON, NumPy .npy,
OpenCV FileStorage .xml/.yml). --corners: where the image's corners (top-left, top-right,
bottom-right, bottom-left) go.)";

const char* const kActivationsFooter =
    R"(Runs the method once through a copy of its inlined graph with a probe after every node, and
prints every tensor value it computed, in execution order: the node's operator and module, the
shape, min/max/mean/std over the finite values and the NaN and Inf counts. A node in a loop gives
one line per iteration (#N). --first-nonfinite prints only the first value with a NaN or an Inf
and the values its node read. Comparisons, node by node (the first value beyond --tolerance is
named):
  --compare-device D   the same model and inputs on another device (cpu against cuda)
  --compare-input SPEC / --compare-inputs FILE
                       the same model with other inputs (before and after a change)
  --reference FILE     values saved from Python: torch.save({module_path: tensor, ...}), each
                       matched to the output of the module with that path
  --compare-model B    another archive on the same inputs, module output by module output
Inputs as for run (see run --help).)";

const char* const kOptimizeFooter =
    R"(Applies passes in order to a copy of the model (--freeze first, then --for-inference, then
each --pass in the order given), prints the node counts per operator kind before and after, and
with inputs times both (interleaved, after at least 3 warm-up runs) and compares their outputs.
-o writes the optimised copy as an archive Python's torch.jit.load reads. Passes:
  freeze, optimize-for-inference, fold-conv-bn, constant-propagation, dead-code-elimination,
  common-subexpression-elimination, peephole, remove-dropout, fuse-linear)";

const char* const kDiffFooter =
    R"(Compares two archives: modules added, removed or of another type; parameters and buffers that
differ (max |difference|, or shape or dtype); plain attributes; the code and graph of every
method (a diff); extra files. The exit status is 0 when they are the same, 1 when they differ
(or cannot be read), 2 for a usage error.)";

const char* const kDevicesFooter =
    R"(Lists cpu and every CUDA device this LibTorch sees, with the reason when CUDA is unavailable.)";

struct Options {
    std::string command;
    std::vector<std::string> positional;
    std::vector<std::string> opLibraries;
    bool json = false;
    bool showCode = false;
    bool inProcess = false;
    bool supervised = false; // set on the child by the supervising parent
    bool verbose = false;
    double timeout = 300;
    uint64_t memoryLimit = 0;
    bool memoryLimitGiven = false;
    std::string module;
    std::string method = "forward";
    bool inlined = false;
    std::string graphFormat = "text"; // graph: text (the IR), json or dot
    std::string expand = "0";         // graph: all, or the depth down to which groups are open
    int expandDepth = 0;              // expand parsed by checkCommand: -1 for all
    std::string layout = "graphviz";  // graph --format svg: graphviz or simple
    double layoutTimeout = 30;        // graph --format svg: Graphviz's time per nesting level
    RunRequest run;
    std::vector<std::string> inputSpecs;
    // run: the output drawn as its task
    std::string render;
    std::string source; // run --source: a video, an image folder or camera:N, frame by frame
    std::string task = "auto";
    std::string labels;
    double scoreThreshold = 0.5;
    int topK = 5;
    // activations
    bool firstNonFinite = false;
    std::string compareDevice;
    std::vector<std::string> compareInputSpecs;
    std::string compareInputsFile;
    std::optional<RunRequest> compareRun;
    std::string referenceFile;
    std::string compareModel;
    double tolerance = 1e-4;
    int bins = 32;
    // optimize
    bool freeze = false;
    bool forInference = false;
    std::vector<std::string> passes;
    // warp
    std::string matrixFile;
    std::string matrixNode;
    std::string corners;
    std::string output;
    std::string size;
    std::string interpolation = "linear";
    std::string border = "constant";
    double borderValue = 0;
    bool inverse = false;
};

struct UsageError {
    std::string message;
};

// One line on stderr, whatever the message holds.
int usage(const std::string& command, std::string message) {
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::cerr << kProgram << ": " << message << " (see " << kProgram << " "
              << (command.empty() ? "" : command + " ") << "--help)\n";
    return kExitUsage;
}

double parseNumber(const std::string& option, const std::string& value) {
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') {
        throw UsageError{option + " expects a number, got '" + value + "'"};
    }
    return number;
}

// CLI11 validators for numbers as strtod reads them, so "1e3" and "7.0" count, as before. CLI11
// puts the option's name before the message.
bool readNumber(const std::string& value, double& number) {
    char* end = nullptr;
    number = std::strtod(value.c_str(), &end);
    return !value.empty() && *end == '\0';
}

CLI::Validator aNumber(std::function<bool(double)> fits, const std::string& expected) {
    return CLI::Validator(
        [fits = std::move(fits), expected](std::string& value) -> std::string {
            double number = 0;
            return readNumber(value, number) && fits(number) ? std::string()
                                                             : expected + ", got '" + value + "'";
        },
        std::string());
}

// Also rewrites the number in plain decimal: CLI11's integer conversion reads "010" as octal.
CLI::Validator aWholeNumber(int minimum) {
    return CLI::Validator(
        [minimum](std::string& value) -> std::string {
            double number = 0;
            if (!readNumber(value, number) || number != std::floor(number) || number < minimum ||
                number > 1e8) {
                return "expects a whole number of at least " + std::to_string(minimum) + ", got '" +
                       value + "'";
            }
            value = std::to_string(static_cast<int>(number));
            return {};
        },
        std::string());
}

// What CLI11 left over, in the words of the old parser: an unknown command or option, or a
// second file.
std::string describeExtras(const CLI::App& app, const std::string& command) {
    const std::vector<std::string> extras = app.remaining(true);
    if (extras.empty()) {
        return {};
    }
    const std::string& first = extras.front();
    if (first.size() > 1 && first[0] == '-') {
        return command.empty() ? "unknown option '" + first + "'"
                               : command + " has no option '" + first + "'";
    }
    if (command.empty()) {
        return "unknown command '" + first + "'";
    }
    return command +
           (command == "devices" ? " takes no file"
            : command == "diff"  ? " takes two files"
                                 : " takes one file") +
           ", got '" + first + "' too";
}

// --expand: -1 for all, else the depth (a usage error otherwise).
int expandDepth(const std::string& expand) {
    if (expand == "all") {
        return -1;
    }
    char* end = nullptr;
    const long depth = std::strtol(expand.c_str(), &end, 10);
    if (expand.empty() || *end != '\0' || depth < 0 || depth > 1000) {
        throw UsageError{"--expand expects all or a depth (0, 1, 2, ...), got '" + expand + "'"};
    }
    return static_cast<int>(depth);
}

// Checks CLI11 cannot express; their messages are those of the old parser.
void checkCommand(Options& o) {
    for (const auto& spec : o.inputSpecs) {
        auto parsed = parseInputSpec(spec);
        if (!parsed) {
            throw UsageError{"--input " + parsed.error().message};
        }
        o.run.inputs.push_back(parsed.value());
    }
    o.run.method = o.method;
    if (o.command == "warp" && o.matrixFile.empty() == o.corners.empty()) {
        throw UsageError{"warp needs either --matrix FILE or --corners x0,y0,...,x3,y3"};
    }
    if (o.command == "graph") {
        o.expandDepth = expandDepth(o.expand);
    }
    if (o.command == "optimize" && !o.freeze && !o.forInference && o.passes.empty()) {
        throw UsageError{"optimize needs --freeze, --for-inference or --pass NAME"};
    }
    const bool otherInputs = !o.compareInputSpecs.empty() || !o.compareInputsFile.empty();
    if (o.command == "activations" && (!o.compareDevice.empty()) + (!o.referenceFile.empty()) +
                                              (!o.compareModel.empty()) + otherInputs >
                                          1) {
        throw UsageError{"give one of --compare-device, --compare-input(s), --reference and "
                         "--compare-model"};
    }
    if (otherInputs) {
        RunRequest other;
        other.device = o.run.device;
        other.inputsFile = o.compareInputsFile;
        for (const auto& spec : o.compareInputSpecs) {
            auto parsed = parseInputSpec(spec);
            if (!parsed) {
                throw UsageError{"--compare-input " + parsed.error().message};
            }
            other.inputs.push_back(parsed.value());
        }
        o.compareRun = other;
    }
}

// Fills `o` from the arguments. Returns an exit status when there is nothing to run: help or
// version printed (0), or a usage error reported (2).
std::optional<int> parseArguments(const std::vector<std::string>& args, Options& o) {
    CLI::App app("Inspect, run and warp with exported PyTorch (TorchScript) models.", kProgram);
    app.get_formatter()->column_width(34);
    app.get_formatter()->label("SUBCOMMAND", "COMMAND");
    app.footer(kTopFooter);
    app.require_subcommand(1);
    // Inherited by the commands: the global options work after them too, as they must, since the
    // supervising parent appends `--in-process --supervised` to the child's arguments.
    app.fallthrough();
    // Later occurrences win, as before; repeatable options say take_all().
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

    app.add_option("--op-library", o.opLibraries,
                   "Load a library of operators first (repeatable), e.g.\n"
                   "torchvision's _C library for torchvision::nms")
        ->type_name("PATH")
        ->allow_extra_args(false)
        ->take_all();
    app.add_option("--timeout", o.timeout, "Time limit in seconds for the work")
        ->type_name("S")
        ->check(aNumber([](double s) { return s > 0; }, "expects a positive number"))
        ->capture_default_str();
    double memoryLimitMb = 0;
    CLI::Option* memoryLimit =
        app.add_option("--memory-limit", memoryLimitMb,
                       "Memory limit for the work (default: 3/4 of physical\nmemory)")
            ->type_name("MB")
            ->check(
                aNumber([](double mb) { return mb >= 64; }, "is in MB and must be at least 64"));
    app.add_flag("--in-process", o.inProcess,
                 "Do the work in this process, without isolation (for\ndebugging)");
    app.add_flag("--verbose", o.verbose,
                 "Print error messages in full (LibTorch's can span many\nlines)");
    app.add_flag("--supervised", o.supervised)->group(""); // the supervising parent's child
    app.add_flag_callback(
           "--version",
           [] {
               std::cout << kProgram << " " SCRIPTSCOPE_VERSION "\n";
               for (const auto& line : buildDescription()) {
                   std::cout << line << "\n";
               }
               std::cout << "Qt " SCRIPTSCOPE_QT_VERSION " (the GUI's and the worker's)\n";
               throw CLI::Success();
           },
           "Version of scriptscope-cli and of the libraries it uses")
        ->trigger_on_parse();

    std::string file;
    auto command = [&](const char* name, const char* description, const char* footer,
                       const char* fileName, const char* fileDescription) {
        CLI::App* sub = app.add_subcommand(name, description)->group("Commands");
        sub->footer(std::string(footer) + "\n\n" + kGlobalOptionsNote);
        if (fileName) {
            sub->add_option(fileName, file, fileDescription)->type_name("")->required();
        }
        return sub;
    };
    auto jsonFlag = [&](CLI::App* sub) { sub->add_flag("--json", o.json, "Print JSON"); };
    auto methodOption = [&](CLI::App* sub) {
        sub->add_option("--method", o.method, "The method")
            ->type_name("NAME")
            ->capture_default_str();
    };
    auto moduleOption = [&](CLI::App* sub) {
        sub->add_option("--module", o.module,
                        "The submodule, by its path (e.g. loop.cell; default:\nthe root)")
            ->type_name("PATH");
    };

    CLI::App* info = command("info", "What the file is, read without executing it (a safe preview)",
                             kInfoFooter, "MODEL", "The file (a TorchScript archive, or any file)");
    info->add_flag("--show-code", o.showCode, "Print the code files");
    jsonFlag(info);

    CLI::App* tree =
        command("tree", "The module tree: types, parameters, buffers, attributes, methods",
                kTreeFooter, "MODEL", "The TorchScript archive");
    jsonFlag(tree);

    CLI::App* code = command("code", "What Python prints for model.PATH.NAME.code", kCodeFooter,
                             "MODEL", "The TorchScript archive");
    moduleOption(code);
    methodOption(code);

    CLI::App* graph = command("graph", "str(model.PATH.NAME.graph), or the inlined graph",
                              kGraphFooter, "MODEL", "The TorchScript archive");
    moduleOption(graph);
    methodOption(graph);
    graph->add_flag("--inlined", o.inlined, "str(model.inlined_graph): calls inlined");
    graph
        ->add_option("--format", o.graphFormat,
                     "text (the IR), or the diagram as json, dot or svg (laid out)")
        ->check(CLI::IsMember({"text", "json", "dot", "svg"}))
        ->type_name("FORMAT")
        ->capture_default_str();
    graph->add_option("--expand", o.expand, "json/dot/svg: all, or the depth of groups shown open")
        ->type_name("all|DEPTH")
        ->capture_default_str();
    graph
        ->add_option("--layout", o.layout,
                     "svg: graphviz (dot, in its own process; what it cannot lay out within "
                     "--layout-timeout falls back to simple), or simple (layered, fast)")
        ->check(CLI::IsMember({"graphviz", "simple"}))
        ->capture_default_str();
    graph
        ->add_option("--layout-timeout", o.layoutTimeout,
                     "svg: seconds Graphviz may take per nesting level")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    graph->add_option("-o,--output", o.output, "Write to this file instead of printing")
        ->type_name("FILE");

    CLI::App* run = command("run", "Runs a method and times it", kRunFooter, "MODEL",
                            "The TorchScript archive");
    methodOption(run);
    run->add_option("--input", o.inputSpecs,
                    "One argument of the method (repeatable, in order;\nSPEC below)")
        ->type_name("SPEC")
        ->allow_extra_args(false)
        ->take_all();
    run->add_option("--inputs", o.run.inputsFile, "Every argument from one torch.save file")
        ->type_name("FILE");
    run->add_option("--device", o.run.device, "cpu, cuda or cuda:N")
        ->type_name("D")
        ->capture_default_str();
    run->add_option("--warmup", o.run.warmup, "Untimed runs first")
        ->type_name("N")
        ->transform(aWholeNumber(0))
        ->capture_default_str();
    run->add_option("--iters,--iterations", o.run.iterations, "Timed runs")
        ->type_name("N")
        ->transform(aWholeNumber(1))
        ->capture_default_str();
    jsonFlag(run);
    run->add_option("--save-outputs", o.run.saveOutputsPath,
                    "Write the outputs to a file Python's torch.load reads")
        ->type_name("FILE");
    run->add_option("--render", o.render,
                    "Draw the output as its task over the image input: boxes\n"
                    "with names and scores, a segmentation, the top-k")
        ->type_name("OUT.png|OUT.mp4|DIR");
    run->add_option("--source", o.source,
                    "Run on every frame of a video, an image folder or\n"
                    "camera:N; the input image:- takes each frame")
        ->type_name("VIDEO|FOLDER");
    run->add_option("--task", o.task,
                    "What the output is: auto, detection, segmentation,\n"
                    "classification, page or none")
        ->check(
            CLI::IsMember({"auto", "none", "classification", "detection", "segmentation", "page"}))
        ->capture_default_str();
    run->add_option("--labels", o.labels,
                    "Class names: imagenet, coco, voc (built in) or a file\n"
                    "with one name per line (default: the archive's labels.txt,\n"
                    "else the built-in set that fits)")
        ->type_name("SET|FILE");
    run->add_option("--score-threshold", o.scoreThreshold, "Detections drawn from this score")
        ->type_name("S")
        ->check(aNumber([](double v) { return v >= 0 && v <= 1; }, "expects 0 to 1"))
        ->capture_default_str();
    run->add_option("--top-k", o.topK, "Classification: the best K")
        ->type_name("K")
        ->transform(aWholeNumber(1))
        ->capture_default_str();
    run->add_flag("--profile", o.run.profile,
                  "One more run times every operator call and gives each\n"
                  "module's share (the timed iterations run without it)");

    auto runOptions = [&](CLI::App* sub) {
        methodOption(sub);
        sub->add_option("--input", o.inputSpecs,
                        "One argument of the method (repeatable, in order;\nsee run --help)")
            ->type_name("SPEC")
            ->allow_extra_args(false)
            ->take_all();
        sub->add_option("--inputs", o.run.inputsFile, "Every argument from one torch.save file")
            ->type_name("FILE");
        sub->add_option("--device", o.run.device, "cpu, cuda or cuda:N")
            ->type_name("D")
            ->capture_default_str();
    };
    CLI::App* activations =
        command("activations", "Every value one run computes, the first NaN, comparisons",
                kActivationsFooter, "MODEL", "The TorchScript archive");
    runOptions(activations);
    jsonFlag(activations);
    activations->add_flag("--first-nonfinite", o.firstNonFinite,
                          "Only the first value with a NaN or an Inf, and its inputs");
    activations->add_option("--compare-device", o.compareDevice, "Compare with a run on device D")
        ->type_name("D");
    activations
        ->add_option(
            "--compare-input", o.compareInputSpecs,
            "Compare with a run of other inputs: one per argument\n(repeatable, as --input)")
        ->type_name("SPEC")
        ->allow_extra_args(false)
        ->take_all();
    activations
        ->add_option("--compare-inputs", o.compareInputsFile,
                     "Compare with a run of the arguments in this torch.save file")
        ->type_name("FILE");
    activations
        ->add_option("--reference", o.referenceFile,
                     "Compare with values saved from Python (module path -> tensor)")
        ->type_name("FILE");
    activations
        ->add_option("--compare-model", o.compareModel,
                     "Compare with another archive's module outputs")
        ->type_name("B");
    activations
        ->add_option("--tolerance", o.tolerance, "max |difference| that still counts as equal")
        ->type_name("T")
        ->check(aNumber([](double t) { return t >= 0; }, "expects a number of at least 0"))
        ->capture_default_str();
    activations->add_option("--bins", o.bins, "Histogram bins (JSON)")
        ->type_name("N")
        ->transform(aWholeNumber(1))
        ->capture_default_str();

    CLI::App* optimize = command("optimize", "Optimisation passes on a copy: counts, speed, |diff|",
                                 kOptimizeFooter, "MODEL", "The TorchScript archive");
    runOptions(optimize);
    jsonFlag(optimize);
    optimize->add_flag("--freeze", o.freeze, "torch.jit.freeze first");
    optimize->add_flag("--for-inference", o.forInference, "torch.jit.optimize_for_inference");
    optimize->add_option("--pass", o.passes, "A pass (repeatable, applied in order)")
        ->type_name("NAME")
        ->allow_extra_args(false)
        ->take_all();
    optimize->add_option("-o,--output", o.output, "Write the optimised copy (an archive)")
        ->type_name("OUT.pt");
    optimize->add_option("--warmup", o.run.warmup, "Untimed runs of each first (at least 3)")
        ->type_name("N")
        ->transform(aWholeNumber(0))
        ->capture_default_str();
    optimize->add_option("--iters,--iterations", o.run.iterations, "Timed runs of each")
        ->type_name("N")
        ->transform(aWholeNumber(1))
        ->capture_default_str();

    std::string secondFile;
    CLI::App* diff = command("diff", "Two archives compared: modules, tensors, code, graphs",
                             kDiffFooter, "A", "The first archive");
    diff->add_option("B", secondFile, "The second archive")->type_name("")->required();
    jsonFlag(diff);

    CLI::App* warp = command("warp", "Warps an image with my_ops::warp_perspective", kWarpFooter,
                             "IMAGE", "The image to warp");
    warp->add_option("--matrix", o.matrixFile, "The 3x3 homography (JSON, .npy, .xml/.yml)")
        ->type_name("FILE");
    warp->add_option("--matrix-node", o.matrixNode,
                     "The matrix's node in an OpenCV FileStorage file")
        ->type_name("NAME");
    warp->add_option("--corners", o.corners, "Where the corners go: x0,y0,x1,y1,x2,y2,x3,y3")
        ->type_name("LIST");
    warp->add_option("-o,--output", o.output, "The warped image")->type_name("OUT")->required();
    warp->add_option("--size", o.size, "The output's size (default: the input's)")
        ->type_name("WxH");
    warp->add_option("--interp,--interpolation", o.interpolation,
                     "nearest, linear, cubic or lanczos4")
        ->type_name("NAME")
        ->capture_default_str();
    warp->add_option("--border", o.border, "constant, replicate, reflect, reflect101 or wrap")
        ->type_name("NAME")
        ->capture_default_str();
    warp->add_option("--border-value", o.borderValue, "The value of constant borders")
        ->type_name("V")
        ->check(aNumber([](double) { return true; }, "expects a number"))
        ->capture_default_str();
    warp->add_flag("--inverse", o.inverse, "The matrix maps output pixels to source pixels");

    CLI::App* devices =
        command("devices", "The devices runs can use, and why CUDA is unavailable if it is",
                kDevicesFooter, nullptr, nullptr);
    jsonFlag(devices);

    if (args.empty()) {
        std::cerr << app.help();
        return kExitUsage;
    }
    // After "--" all is positional, the flags that the supervising parent appends included.
    if (std::find(args.begin(), args.end(), "--") != args.end()) {
        return usage({}, "'--' is not supported (give a file named -x as ./-x)");
    }
    auto selected = [&app]() -> std::string {
        const auto commands = app.get_subcommands();
        return commands.empty() ? std::string() : commands.front()->get_name();
    };
    try {
        // CLI11 takes the arguments last first.
        app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help(); // the chosen command's help, if there is one
        return kExitOk;
    } catch (const CLI::Success&) {
        return kExitOk; // --version
    } catch (const CLI::ParseError& error) {
        const std::string name = selected();
        std::string message;
        if (name.empty() || dynamic_cast<const CLI::ExtrasError*>(&error)) {
            message = describeExtras(app, name);
        }
        if (message.empty()) {
            message = name.empty() && dynamic_cast<const CLI::RequiredError*>(&error)
                          ? std::string("no command given")
                          : std::string(error.what());
        }
        return usage(name, message);
    }
    o.command = selected();
    if (o.command == "diff") {
        o.positional = {file, secondFile};
    } else if (o.command != "devices") {
        o.positional = {file};
    }
    o.memoryLimitGiven = memoryLimit->count() > 0;
    o.memoryLimit = o.memoryLimitGiven ? static_cast<uint64_t>(memoryLimitMb * 1024 * 1024)
                                       : defaultMemoryLimit();
    try {
        checkCommand(o);
    } catch (const UsageError& error) {
        return usage(o.command, error.message);
    }
    return std::nullopt;
}

std::string firstLine(const std::string& text) {
    const auto start = text.find_first_not_of("\n ");
    if (start == std::string::npos) {
        return text;
    }
    const auto end = text.find('\n', start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

int fail(const Options& o, const Error& error) {
    const std::string message = o.verbose && !error.details.empty()
                                    ? error.message + "\n" + error.details
                                    : firstLine(error.message);
    std::cerr << "scriptscope-cli: " << message;
    if (error.kind == ErrorKind::OutOfMemory && o.supervised) {
        std::cerr << " (memory limit " << formatBytes(o.memoryLimit)
                  << "; --memory-limit MB changes it)";
    }
    std::cerr << "\n";
    switch (error.kind) {
    case ErrorKind::OutOfMemory:
        return kExitCrashed;
    case ErrorKind::NeedsNewerLibTorch:
        return kExitNeedsNewerLibTorch;
    default:
        return kExitError;
    }
}

nlohmann::json tensorJson(const TensorInfo& t) {
    nlohmann::json j{{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype}, {"bytes", t.bytes}};
    if (t.packed) {
        j["packed"] = true;
        j["packed_in"] = t.packedIn;
    }
    if (!t.qscheme.empty()) {
        j["qscheme"] = t.qscheme;
        if (t.axis >= 0) {
            j["scales"] = t.scales;
            j["zero_points"] = t.zeroPoints;
            j["axis"] = t.axis;
        } else {
            j["scale"] = t.scale;
            j["zero_point"] = t.zeroPoint;
        }
    }
    return j;
}

nlohmann::json outputJson(const OutputValue& v) {
    static const char* const kinds[] = {"none",   "tensor", "int",  "float", "bool",
                                        "string", "tuple",  "list", "dict",  "other"};
    nlohmann::json j = {{"kind", kinds[static_cast<int>(v.kind)]}};
    if (!v.key.empty()) {
        j["key"] = v.key;
    }
    if (v.kind == OutputValue::Kind::Tensor) {
        j["shape"] = v.shape;
        j["dtype"] = v.dtype;
        j["device"] = v.device;
        j["min"] = v.min;
        j["max"] = v.max;
        j["mean"] = v.mean;
        j["std"] = v.stddev;
        j["nan"] = v.nanCount;
        j["inf"] = v.infCount;
        j["preview"] = v.preview;
    } else if (!v.children.empty() || v.kind == OutputValue::Kind::Tuple ||
               v.kind == OutputValue::Kind::List || v.kind == OutputValue::Kind::Dict) {
        j["items"] = nlohmann::json::array();
        for (const auto& child : v.children) {
            j["items"].push_back(outputJson(child));
        }
    } else {
        j["value"] = v.text;
    }
    return j;
}

void printOutput(const OutputValue& v, int depth) {
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    const std::string key = v.key.empty() ? std::string() : "[" + v.key + "] ";
    std::cout << indent << key;
    if (v.kind == OutputValue::Kind::Tensor) {
        std::cout << "Tensor" << formatShape(v.shape) << " " << v.dtype << " on " << v.device;
        if (v.numel > 0) {
            std::cout << "  min " << v.min << "  max " << v.max << "  mean " << v.mean << "  std "
                      << v.stddev;
        }
        if (v.nanCount || v.infCount) {
            std::cout << "  NaN " << v.nanCount << "  Inf " << v.infCount;
        }
        std::cout << "\n";
        if (!v.preview.empty()) {
            std::cout << indent << "  first values:";
            for (const double value : v.preview) {
                std::cout << " " << value;
            }
            std::cout << (static_cast<int64_t>(v.preview.size()) < v.numel ? " ..." : "") << "\n";
        }
    } else {
        std::cout << v.text << "\n";
    }
    for (const auto& child : v.children) {
        printOutput(child, depth + 1);
    }
}

int commandInfo(const Options& o) {
    const ProbeResult p = probeArchive(o.positional[0]);
    if (o.json) {
        nlohmann::json j = {{"path", p.path},
                            {"size", p.fileSize},
                            {"kind", toString(p.kind)},
                            {"summary", p.summary},
                            {"archive", p.archiveName},
                            {"version", p.version},
                            {"version_text", p.versionText},
                            {"max_supported_version", p.maxSupportedVersion},
                            {"libtorch", libtorchVersion()}};
        j["records"] = nlohmann::json::array();
        for (const auto& r : p.records) {
            j["records"].push_back({{"name", r.name},
                                    {"size", r.size},
                                    {"compressed_size", r.compressedSize},
                                    {"stored", r.stored}});
        }
        j["extra_files"] = p.extraFiles;
        j["operators"] = nlohmann::json::array();
        for (const auto& op : p.operators) {
            j["operators"].push_back({{"name", op.name}, {"registered", op.registered}});
        }
        if (!p.pickleGlobals.empty()) {
            j["pickle_globals"] = p.pickleGlobals;
        }
        j["code_files"] = p.codeFiles;
        j["storages"] = nlohmann::json::array();
        for (const auto& st : p.storages) {
            j["storages"].push_back({{"record", st.record},
                                     {"dtype", st.dtype},
                                     {"location", st.location},
                                     {"numel", st.numel},
                                     {"declared_bytes", st.declaredBytes},
                                     {"stored_bytes", st.storedBytes},
                                     {"present", st.present}});
        }
        j["tensors"] = p.tensors;
        j["damage"] = p.damage;
        j["notes"] = p.notes;
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << "File        " << p.path << " (" << formatBytes(p.fileSize) << ")\n"
                  << "Kind        " << toString(p.kind) << "\n"
                  << "Summary     " << p.summary << "\n";
        if (p.kind == FileKind::TorchScript) {
            std::cout << "Archive     " << p.archiveName << "/\n"
                      << "Version     " << (p.versionText.empty() ? "(missing)" : p.versionText)
                      << " (this LibTorch " << libtorchVersion() << " reads up to "
                      << p.maxSupportedVersion << ")\n";
        }
        if (!p.records.empty()) {
            std::cout << "Records     " << p.records.size() << "\n";
            for (const auto& r : p.records) {
                std::cout << "  " << std::setw(12) << r.size << "  " << r.name
                          << (r.stored ? "" : "  (compressed)") << "\n";
            }
        }
        if (!p.extraFiles.empty()) {
            std::cout << "Extra files " << p.extraFiles.size() << "\n";
            for (const auto& [name, content] : p.extraFiles) {
                std::cout << "  " << name << ": " << firstLine(content).substr(0, 100) << "\n";
            }
        }
        if (!p.operators.empty()) {
            std::cout << "Operators   " << p.operators.size() << "\n";
            for (const auto& op : p.operators) {
                std::cout << "  " << std::left << std::setw(44) << op.name << std::right
                          << (op.registered ? "registered" : "NOT REGISTERED") << "\n";
            }
        }
        if (!p.pickleGlobals.empty()) {
            std::cout << "Classes     ";
            for (size_t i = 0; i < p.pickleGlobals.size(); ++i) {
                std::cout << (i ? ", " : "") << p.pickleGlobals[i];
            }
            std::cout << "\n";
        }
        if (!p.storages.empty()) {
            std::cout << "Storages    " << p.storages.size() << "\n";
            for (const auto& st : p.storages) {
                std::cout << "  " << std::left << std::setw(16) << st.record << std::right
                          << std::setw(10) << (st.dtype.empty() ? "?" : st.dtype) << " x"
                          << std::setw(10) << st.numel << "  on " << st.location << "  "
                          << (!st.present ? "MISSING"
                              : st.storedBytes < st.declaredBytes
                                  ? "SHORT: " + std::to_string(st.storedBytes) + " of " +
                                        std::to_string(st.declaredBytes) + " bytes"
                                  : formatBytes(st.storedBytes))
                          << "\n";
            }
        }
        if (!p.tensors.empty()) {
            std::cout << "Tensors     " << p.tensors.size() << "\n";
            for (size_t i = 0; i < std::min<size_t>(p.tensors.size(), 20); ++i) {
                std::cout << "  " << p.tensors[i] << "\n";
            }
            if (p.tensors.size() > 20) {
                std::cout << "  ... (" << p.tensors.size() - 20 << " more; --json lists all)\n";
            }
        }
        if (!p.codeFiles.empty()) {
            std::cout << "Code files  " << p.codeFiles.size() << "\n";
            for (const auto& [name, code] : p.codeFiles) {
                std::cout << "  " << std::setw(10) << code.size() << "  " << name << "\n";
            }
        }
        for (const auto& note : p.notes) {
            std::cout << "Note        " << note << "\n";
        }
        if (!p.damage.empty()) {
            std::cout << "DAMAGED     " << p.damage << "\n";
        }
        if (o.showCode) {
            for (const auto& [name, code] : p.codeFiles) {
                std::cout << "\n# ---- " << name << "\n" << code;
            }
        }
    }
    // A file that cannot be opened here is an error for scripts, even though info described it.
    const bool operatorsRegistered =
        std::all_of(p.operators.begin(), p.operators.end(),
                    [](const OperatorUse& op) { return op.registered; });
    const bool usable = p.kind == FileKind::TorchScript && p.version >= 0 &&
                        p.version <= p.maxSupportedVersion && operatorsRegistered &&
                        p.damage.empty();
    return usable ? kExitOk : kExitError;
}

Expected<ModelInfo> loadModel(Session& session, const Options& o, bool includeCode) {
    for (const auto& library : o.opLibraries) {
        if (auto error = session.loadOperatorLibrary(library)) {
            return *error;
        }
    }
    LoadOptions options;
    options.includeCode = includeCode;
    return session.load(o.positional[0], options);
}

int commandTree(const Options& o) {
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
    if (o.json) {
        nlohmann::json modules = nlohmann::json::array();
        for (const auto& m : model->modules) {
            nlohmann::json j = {{"path", m.path}, {"type", m.type}};
            j["parameters"] = nlohmann::json::array();
            for (const auto& t : m.parameters) {
                j["parameters"].push_back(tensorJson(t));
            }
            j["buffers"] = nlohmann::json::array();
            for (const auto& t : m.buffers) {
                j["buffers"].push_back(tensorJson(t));
            }
            j["attributes"] = nlohmann::json::array();
            for (const auto& a : m.attributes) {
                j["attributes"].push_back(
                    {{"name", a.name}, {"type", a.type}, {"value", a.preview}});
            }
            j["methods"] = nlohmann::json::array();
            j["schemas"] = nlohmann::json::object();
            for (const auto& method : m.methods) {
                j["methods"].push_back(method.name);
                j["schemas"][method.name] = method.schema;
            }
            modules.push_back(j);
        }
        std::cout << nlohmann::json{{"modules", modules},
                                    {"parameter_count", model->parameterCount},
                                    {"parameter_bytes", model->parameterBytes},
                                    {"buffer_bytes", model->bufferBytes}}
                         .dump(2)
                  << "\n";
        return kExitOk;
    }
    for (const auto& m : model->modules) {
        const auto depth = m.path.empty() ? 0 : std::count(m.path.begin(), m.path.end(), '.') + 1;
        const std::string indent(static_cast<size_t>(depth) * 2, ' ');
        std::cout << indent << (m.path.empty() ? "(root)" : m.name) << "  " << m.type << "  "
                  << m.totalParameterCount << " parameters, " << formatBytes(m.totalBytes) << "\n";
        for (const auto& t : m.parameters) {
            std::cout << indent << "    param  " << t.name << " " << formatShape(t.shape) << " "
                      << t.dtype;
            if (t.packed) {
                std::cout << " (packed in " << t.packedIn << ")";
            }
            if (!t.qscheme.empty()) {
                std::cout << " " << describeQuantization(t);
            }
            std::cout << "\n";
        }
        for (const auto& t : m.buffers) {
            std::cout << indent << "    buffer " << t.name << " " << formatShape(t.shape) << " "
                      << t.dtype << "\n";
        }
        for (const auto& a : m.attributes) {
            std::cout << indent << "    attr   " << a.name << ": " << a.type << " = " << a.preview
                      << "\n";
        }
        for (const auto& method : m.methods) {
            std::cout << indent << "    def    " << method.schema << "\n";
        }
    }
    std::cout << "Total: " << model->parameterCount << " parameters ("
              << formatBytes(model->parameterBytes) << "), buffers "
              << formatBytes(model->bufferBytes) << ", " << model->methodCount << " methods\n";
    return kExitOk;
}

// The command's text on stdout, or in the -o file.
int printOrWrite(const Options& o, const std::string& text) {
    if (o.output.empty()) {
        std::cout << text;
        return kExitOk;
    }
    std::ofstream file(o.output, std::ios::binary | std::ios::trunc);
    if (!file || !file.write(text.data(), static_cast<std::streamsize>(text.size())) ||
        !file.flush()) {
        return fail(o, Error{ErrorKind::File, "cannot write '" + o.output + "'"});
    }
    return kExitOk;
}

std::string groupRef(int id) {
    return "g" + std::to_string(id);
}

std::string nodeRef(int id) {
    return "n" + std::to_string(id);
}

nlohmann::json portsJson(const std::vector<GraphPort>& ports) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : ports) {
        list.push_back({{"name", p.name}, {"type", p.type}});
    }
    return list;
}

nlohmann::json graphJson(const GraphModel& g, const VisibleGraph& visible,
                         const std::string& expand) {
    nlohmann::json nodes = nlohmann::json::array(), groups = nlohmann::json::array(),
                   edges = nlohmann::json::array();
    std::vector<std::string> itemRefs;
    std::set<int> shownGroups(visible.openGroups.begin(), visible.openGroups.end());
    std::set<int> collapsed;
    for (const VisibleItem& item : visible.items) {
        if (item.isGroup) {
            itemRefs.push_back(groupRef(item.id));
            collapsed.insert(item.id);
            shownGroups.insert(item.id);
            continue;
        }
        itemRefs.push_back(nodeRef(item.id));
        const GraphNode& n = g.nodes[static_cast<size_t>(item.id)];
        nlohmann::json attributes = nlohmann::json::array();
        for (const auto& a : n.attributes) {
            attributes.push_back({{"name", a.name}, {"value", a.value}});
        }
        nodes.push_back({{"id", nodeRef(n.id)},
                         {"kind", n.kind},
                         {"module", n.module},
                         {"group", groupRef(n.group)},
                         {"schema", n.schema},
                         {"source", n.source},
                         {"source_text", n.sourceText},
                         {"ir_line", n.irLine},
                         {"attributes", attributes},
                         {"inputs", portsJson(n.inputs)},
                         {"outputs", portsJson(n.outputs)}});
    }
    for (const int id : shownGroups) {
        const GraphGroup& group = g.groups[static_cast<size_t>(id)];
        groups.push_back(
            {{"id", groupRef(group.id)},
             {"parent",
              group.parent < 0 ? nlohmann::json() : nlohmann::json(groupRef(group.parent))},
             {"kind", group.kind == GraphGroup::Kind::Module ? "module" : "block"},
             {"module", group.module},
             {"type", group.type},
             {"label", group.label},
             {"parameters", group.parameters},
             {"depth", group.depth},
             {"owner", group.owner < 0 ? nlohmann::json() : nlohmann::json(nodeRef(group.owner))},
             {"collapsed", collapsed.count(id) > 0}});
    }
    for (const VisibleEdge& e : visible.edges) {
        edges.push_back(
            {{"from", e.from >= 0 ? itemRefs[static_cast<size_t>(e.from)]
                                  : "input:" + g.inputs[static_cast<size_t>(e.fromInput)].name},
             {"to", e.to >= 0 ? itemRefs[static_cast<size_t>(e.to)]
                              : "output:" + std::to_string(e.toOutput)},
             {"value", e.value},
             {"type", e.type}});
    }
    return {{"module", g.modulePath},
            {"method", g.method},
            {"inlined", g.inlined},
            {"expand", expand},
            {"inputs", portsJson(g.inputs)},
            {"outputs", portsJson(g.outputs)},
            {"nodes", nodes},
            {"groups", groups},
            {"edges", edges}};
}

int commandGraphDiagram(const Options& o) {
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
    auto graph = session.graphModel(o.module, o.method, o.inlined);
    if (!graph) {
        return fail(o, graph.error());
    }
    const VisibleGraph visible = visibleGraph(*graph, o.expandDepth);
    if (o.graphFormat == "svg") {
        std::vector<std::string> notes;
        GraphvizOptions graphviz;
        graphviz.program = findLayoutProgram();
        graphviz.timeoutSeconds = o.layoutTimeout;
        LayoutCache cache;
        const DiagramLayout layout = layoutDiagram(
            *graph, visible, cache,
            o.layout == "simple" ? layeredEngine() : graphvizEngine(graphviz, &notes));
        for (const std::string& note : notes) {
            std::cerr << "scriptscope-cli: " << note << "\n";
        }
        return printOrWrite(o, toSvg(*graph, visible, layout));
    }
    return printOrWrite(o, o.graphFormat == "dot"
                               ? toDot(*graph, visible)
                               : graphJson(*graph, visible, o.expand).dump(1) + "\n");
}

int commandCodeOrGraph(const Options& o) {
    if (o.command == "graph" && o.graphFormat != "text") {
        return commandGraphDiagram(o);
    }
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
    auto text = o.command == "code" ? session.code(o.module, o.method)
                                    : session.graph(o.module, o.method, o.inlined);
    if (!text) {
        return fail(o, text.error());
    }
    return printOrWrite(o, *text + "\n"); // Python's print() adds the newline
}

nlohmann::json taskJson(const TaskResult& t) {
    nlohmann::json j = {{"kind", toString(t.kind)}, {"summary", t.summary}};
    if (!t.labelSet.empty()) {
        j["labels"] = t.labelSet;
    }
    if (t.kind == TaskKind::Detection) {
        nlohmann::json images = nlohmann::json::array();
        for (const auto& objects : t.detections) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& d : objects) {
                nlohmann::json object = {{"box", {d.x0, d.y0, d.x1, d.y1}}, {"score", d.score}};
                if (d.label >= 0) {
                    object["label"] = d.label;
                    object["name"] = d.name;
                }
                if (!d.mask.empty()) {
                    object["mask_pixels"] = std::count(d.mask.begin(), d.mask.end(), 1);
                }
                if (!d.keypoints.empty()) {
                    object["keypoints"] = d.keypoints;
                }
                list.push_back(object);
            }
            images.push_back(list);
        }
        j["detections"] = images;
    } else if (t.kind == TaskKind::Segmentation) {
        nlohmann::json present = nlohmann::json::array();
        for (const auto& [index, pixels] : t.classesPresent) {
            nlohmann::json c = {{"class", index}, {"pixels", pixels}};
            if (static_cast<size_t>(index) < t.classNames.size()) {
                c["name"] = t.classNames[static_cast<size_t>(index)];
            }
            present.push_back(c);
        }
        j["size"] = {t.width, t.height};
        j["classes_present"] = present;
    } else if (t.kind == TaskKind::Classification) {
        nlohmann::json top = nlohmann::json::array();
        for (const auto& e : t.topK) {
            top.push_back({{"index", e.index}, {"score", e.score}, {"name", e.name}});
        }
        j["top_k"] = top;
        j["softmax_applied"] = t.softmaxApplied;
    } else if (t.kind == TaskKind::Page) {
        nlohmann::json corners = nlohmann::json::array();
        for (const auto& [x, y] : t.corners) {
            corners.push_back({x, y});
        }
        j["corners"] = corners;
        if (!t.pageRgb.empty()) {
            j["page_size"] = {t.pageWidth, t.pageHeight};
        }
        nlohmann::json top = nlohmann::json::array();
        for (const auto& e : t.topK) {
            top.push_back({{"index", e.index}, {"score", e.score}, {"name", e.name}});
        }
        j["kinds"] = top;
    }
    return j;
}

void printTask(const TaskResult& t, double threshold) {
    std::cout << "\nTask        " << t.summary
              << (t.labelSet.empty() ? std::string() : " (names: " + t.labelSet + ")") << "\n";
    if (t.kind == TaskKind::Detection) {
        for (size_t i = 0; i < t.detections.size(); ++i) {
            size_t shown = 0;
            for (const auto& d : t.detections[i]) {
                if (d.score < threshold) {
                    continue;
                }
                ++shown;
                std::cout << "  image " << i << "  " << std::fixed << std::setprecision(3)
                          << d.score << "  "
                          << (d.name.empty() ? (d.label >= 0 ? "class " + std::to_string(d.label)
                                                             : std::string("object"))
                                             : d.name)
                          << std::setprecision(1) << "  [" << d.x0 << ", " << d.y0 << ", " << d.x1
                          << ", " << d.y1 << "]\n"
                          << std::defaultfloat << std::setprecision(6);
            }
            std::cout << "  image " << i << ": " << shown << " of " << t.detections[i].size()
                      << " at a score of at least " << threshold << "\n";
        }
    } else if (t.kind == TaskKind::Segmentation) {
        for (const auto& [index, pixels] : t.classesPresent) {
            const std::string name = static_cast<size_t>(index) < t.classNames.size()
                                         ? t.classNames[static_cast<size_t>(index)]
                                         : std::string();
            std::cout << "  " << std::setw(3) << index << "  " << std::setw(8) << pixels
                      << " pixels  " << name << "\n";
        }
    } else if (t.kind == TaskKind::Classification || t.kind == TaskKind::Page) {
        if (t.kind == TaskKind::Page) {
            static const char* kCorners[] = {"top-left", "top-right", "bottom-right",
                                             "bottom-left"};
            std::cout << std::fixed << std::setprecision(1);
            for (size_t i = 0; i < t.corners.size(); ++i) {
                std::cout << "  " << std::setw(12) << (i < 4 ? kCorners[i] : "corner") << "  "
                          << t.corners[i].first << ", " << t.corners[i].second << "\n";
            }
            std::cout << std::defaultfloat;
        }
        for (size_t i = 0; i < t.topK.size(); ++i) {
            const auto& e = t.topK[i];
            std::cout << "  " << (i + 1) << ". " << std::fixed << std::setprecision(4) << e.score
                      << "  " << std::setw(5) << e.index << "  " << e.name << "\n"
                      << std::defaultfloat << std::setprecision(6);
        }
    }
}

// How run interprets its output: --task, --labels (else the archive's labels, which must outlive
// the options), --top-k.
TaskOptions taskOptionsFor(const Options& o, const LabelSet* labels,
                           const LabelSet& archiveLabels) {
    TaskOptions options;
    taskKindFromName(o.task, options.kind);
    options.labels = labels;
    options.archiveLabels = archiveLabels.names.empty() ? nullptr : &archiveLabels;
    options.topK = o.topK;
    return options;
}

// run --source: every frame of a video or folder through the model, drawn and written (to a
// video or a folder) with none dropped; a frame that does not decode or run is reported and
// skipped. A progress line goes to a terminal.
int commandRunSource(const Options& o, Session& session, const ModelInfo& model,
                     const LabelSet* labels) {
    RunRequest request = o.run;
    request.valuesLimit = std::max<size_t>(request.valuesLimit, size_t{16} << 20);
    const InputSpec* image = firstImageInput(request.inputs);
    if (!image || image->path != kFrameImagePath) {
        return fail(o, Error{ErrorKind::Input,
                             "--source gives frames to an input image:- (e.g. --input "
                             "'image:-,size=640x480'); this run has none"});
    }
    auto spec = parseSourceSpec(o.source);
    if (!spec) {
        return fail(o, spec.error());
    }
    auto opened = FrameSource::open(*spec);
    if (!opened) {
        return fail(o, opened.error());
    }
    FrameSource& source = **opened;
    const SourceInfo& info = source.info();
    std::unique_ptr<FrameSink> sink;
    if (!o.render.empty()) {
        auto made = FrameSink::open(o.render, info.fps > 0 ? info.fps : 10);
        if (!made) {
            return fail(o, made.error());
        }
        sink = std::move(made).value();
    }
    const LabelSet archiveLabels = labelsFromExtraFiles(model.probe.extraFiles);
    const TaskOptions taskOptions = taskOptionsFor(o, labels, archiveLabels);
    RenderOptions renderOptions;
    renderOptions.scoreThreshold = o.scoreThreshold;
    const bool terminal = ::isatty(STDERR_FILENO) != 0 && !o.json;
    std::vector<double> latencies, decodeMs;
    nlohmann::json frames = nlohmann::json::array(), errors = nlohmann::json::array();
    int64_t done = 0;
    const auto started = std::chrono::steady_clock::now();
    for (int64_t index = 0; !source.atEnd(index); ++index) {
        const auto before = std::chrono::steady_clock::now();
        auto frame = source.read(index);
        decodeMs.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before)
                .count());
        if (!frame) {
            if (source.atEnd(index)) {
                break; // a video's frame count was an estimate
            }
            errors.push_back({{"frame", index}, {"message", frame.error().message}});
            std::cerr << (terminal ? "\r\033[K" : "")
                      << "scriptscope-cli: " << frame.error().message << " (skipped)\n";
            continue;
        }
        request.frame = frameView(frame->bgr);
        // The warm-up before the first frame only: each frame is one timed run.
        request.warmup = done == 0 ? o.run.warmup : 0;
        request.iterations = 1;
        auto result = session.run(request);
        if (!result) {
            errors.push_back(
                {{"frame", index}, {"name", frame->name}, {"message", result.error().message}});
            std::cerr << (terminal ? "\r\033[K" : "") << "scriptscope-cli: " << frame->name << ": "
                      << firstLine(result.error().message) << " (skipped)\n";
            continue;
        }
        const double ms = result->samplesMs.empty() ? 0 : result->samplesMs.front();
        latencies.push_back(ms);
        const TaskResult task = interpretOutput(result->output, taskOptions);
        if (sink) {
            cv::Mat drawn = frame->bgr; // this frame is ours: drawn on in place
            renderTaskInPlace(drawn, task, renderOptions);
            if (auto error = sink->write(drawn, frame->name)) {
                return fail(o, *error);
            }
        }
        frames.push_back(
            {{"index", index}, {"name", frame->name}, {"ms", ms}, {"interpreted", taskJson(task)}});
        ++done;
        if (terminal) {
            std::cerr << "\r\033[Kframe " << index + 1;
            if (info.frames > 0) {
                std::cerr << "/" << info.frames;
            }
            std::cerr << "  " << std::fixed << std::setprecision(1) << ms << " ms  "
                      << task.summary.substr(0, 60) << std::defaultfloat << std::flush;
        }
    }
    if (terminal) {
        std::cerr << "\r\033[K";
    }
    if (sink) {
        sink->close();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const TimingStats stats = computeStats(latencies);
    const TimingStats decode = computeStats(decodeMs);
    const double fps = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    if (o.json) {
        nlohmann::json j = {
            {"source", info.description},
            {"frames", done},
            {"dropped", 0},
            {"errors", errors},
            {"latency_ms",
             {{"p50", stats.p50}, {"p90", stats.p90}, {"mean", stats.mean}, {"max", stats.max}}},
            {"decode_ms", {{"p50", decode.p50}, {"mean", decode.mean}}},
            {"pipeline_fps", fps},
            {"per_frame", frames}};
        if (sink) {
            j["rendered"] = o.render;
            j["written"] = sink->written();
        }
        std::cout << j.dump(2) << "\n";
        return done > 0 ? kExitOk : kExitError;
    }
    std::cout << "Source      " << info.description << "\n";
    for (const auto& note : info.notes) {
        std::cout << "            " << note << "\n";
    }
    std::cout << "Frames      " << done << " run, 0 dropped (every frame is run when rendering "
              << "headless), " << errors.size() << " skipped\n"
              << std::fixed << std::setprecision(2) << "Latency     p50 " << stats.p50
              << " ms, p90 " << stats.p90 << " ms (forward per frame)\nDecode      p50 "
              << decode.p50 << " ms\n"
              << std::setprecision(1) << "Pipeline    " << fps
              << " frames/s end to end (decode, preprocess, run, draw, write)\n"
              << std::defaultfloat;
    if (sink) {
        std::cout << "Rendered    " << sink->written() << " frames to " << o.render << "\n";
    }
    return done > 0 ? kExitOk : kExitError;
}

int commandRun(const Options& o) {
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }

    const bool interpret = !o.render.empty() || o.task != "auto" || !o.labels.empty() || o.json;
    RunRequest request = o.run;
    if (interpret) {
        request.valuesLimit = std::max<size_t>(request.valuesLimit, size_t{16} << 20);
    }
    const InputSpec* image = firstImageInput(request.inputs);
    if (!o.render.empty() && !image && o.source.empty()) {
        return fail(o, Error{ErrorKind::Input, "--render draws over an image input, and this "
                                               "run has none (give --input image:FILE)"});
    }
    LabelSet fileLabels;
    const LabelSet* labels = nullptr;
    if (!o.labels.empty()) {
        labels = builtinLabels(o.labels);
        if (!labels) {
            auto read = readLabelsFile(o.labels);
            if (!read) {
                return fail(o, read.error());
            }
            fileLabels = std::move(read).value();
            labels = &fileLabels;
        }
    }
    if (!o.source.empty()) {
        return commandRunSource(o, session, *model, labels);
    }
    auto result = session.run(request);
    if (!result) {
        return fail(o, result.error());
    }
    const RunResult& r = *result;
    TaskResult task;
    if (interpret) {
        const LabelSet archiveLabels = labelsFromExtraFiles(model->probe.extraFiles);
        task = interpretOutput(r.output, taskOptionsFor(o, labels, archiveLabels));
    }
    if (!o.render.empty()) {
        RenderOptions options;
        options.scoreThreshold = o.scoreThreshold;
        if (auto error = renderTaskFile(image->path, image->image.width, image->image.height, task,
                                        options, o.render)) {
            return fail(o, *error);
        }
    }
    if (o.json) {
        nlohmann::json j = {{"method", r.method},
                            {"device", r.device},
                            {"device_name", r.deviceName},
                            {"warmup", r.warmup},
                            {"synchronized", r.synchronized},
                            {"iterations", r.samplesMs.size()},
                            {"inputs", r.inputDescriptions},
                            {"samples_ms", r.samplesMs},
                            {"stats_ms",
                             {{"min", r.stats.min},
                              {"p50", r.stats.p50},
                              {"p90", r.stats.p90},
                              {"p99", r.stats.p99},
                              {"max", r.stats.max},
                              {"mean", r.stats.mean},
                              {"std", r.stats.stddev}}},
                            {"output", outputJson(r.output)},
                            {"interpreted", taskJson(task)}};
        if (!o.render.empty()) {
            j["rendered"] = o.render;
        }
        if (r.profiled) {
            nlohmann::json modules = nlohmann::json::array(), operators = nlohmann::json::array();
            for (const auto& m : r.profile.modules) {
                modules.push_back({{"path", m.path},
                                   {"self_ms", m.selfMs},
                                   {"total_ms", m.totalMs},
                                   {"calls", m.calls}});
            }
            for (const auto& op : r.profile.operators) {
                operators.push_back({{"name", op.name},
                                     {"total_ms", op.totalMs},
                                     {"self_ms", op.selfMs},
                                     {"calls", op.calls}});
            }
            j["profile"] = {{"operator_ms", r.profile.operatorMs},
                            {"wall_ms", r.profile.wallMs},
                            {"modules", modules},
                            {"operators", operators}};
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "Method      " << r.method << "\nDevice      " << r.device << " (" << r.deviceName
              << ")\n";
    for (size_t i = 0; i < r.inputDescriptions.size(); ++i) {
        std::cout << (i ? "            " : "Inputs      ") << r.inputDescriptions[i] << "\n";
    }
    std::cout << "Warm-up     " << r.warmup << "\nIterations  " << r.samplesMs.size()
              << (r.synchronized ? ", each waited for the device to finish (synchronized)" : "")
              << "\n\n";
    std::cout << std::fixed << std::setprecision(3);
    std::cout << "   min ms     p50 ms     p90 ms     p99 ms     max ms    mean ms\n";
    for (const double v :
         {r.stats.min, r.stats.p50, r.stats.p90, r.stats.p99, r.stats.max, r.stats.mean}) {
        std::cout << std::setw(9) << v << "  ";
    }
    std::cout << "\n"
              << std::setprecision(1) << "fps at p50  "
              << (r.stats.p50 > 0 ? 1000.0 / r.stats.p50 : 0.0) << "\n\nOutput\n";
    std::cout << std::defaultfloat << std::setprecision(6);
    printOutput(r.output, 1);
    if (r.profiled) {
        const double total = std::max(r.profile.operatorMs, 1e-9);
        std::cout << "\nProfile (one run: " << std::fixed << std::setprecision(3)
                  << r.profile.wallMs << " ms, operators " << r.profile.operatorMs << " ms)\n"
                  << "  total ms   share  self ms   calls  module\n";
        for (const auto& m : r.profile.modules) {
            std::cout << std::setw(10) << m.totalMs << std::setw(7) << std::setprecision(1)
                      << 100.0 * m.totalMs / total << "%" << std::setw(9) << std::setprecision(3)
                      << m.selfMs << std::setw(8) << m.calls << "  "
                      << (m.path.empty() ? "(root)" : m.path) << "\n";
        }
        std::cout << "  total ms  self ms   calls  operator\n";
        for (size_t i = 0; i < std::min<size_t>(15, r.profile.operators.size()); ++i) {
            const auto& op = r.profile.operators[i];
            std::cout << std::setw(10) << op.totalMs << std::setw(9) << op.selfMs << std::setw(8)
                      << op.calls << "  " << op.name << "\n";
        }
        std::cout << std::defaultfloat << std::setprecision(6);
    }
    if (interpret) {
        printTask(task, o.scoreThreshold);
    }
    if (!o.render.empty()) {
        std::cout << "Rendered    " << o.render << "\n";
    }
    if (!o.run.saveOutputsPath.empty()) {
        std::cout << "Saved       " << o.run.saveOutputsPath << "\n";
    }
    return kExitOk;
}

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string text;
    for (const int64_t size : shape) {
        text += (text.empty() ? "" : "x") + std::to_string(size);
    }
    return text.empty() ? "scalar" : text;
}

nlohmann::json recordJson(const ActivationRecord& r, size_t index) {
    nlohmann::json j = {
        {"index", index},
        {"node", r.node},
        {"occurrence", r.occurrence},
        {"output", r.output},
        {"value", r.value},
        {"kind", r.kind},
        {"module", r.module},
        {"module_outputs", r.moduleOutputs},
        {"source", r.source},
        {"ir_line", r.irLine},
        {"shape", r.shape},
        {"dtype", r.dtype},
        {"device", r.device},
        {"numel", r.numel},
        {"min", r.min},
        {"max", r.max},
        {"mean", r.mean},
        {"std", r.stddev},
        {"nan", r.nanCount},
        {"inf", r.infCount},
        {"histogram", {{"min", r.histogramMin}, {"max", r.histogramMax}, {"counts", r.histogram}}}};
    if (!r.note.empty()) {
        j["note"] = r.note;
    }
    if (!r.comparedWith.empty()) {
        j["compared_with"] = r.comparedWith;
        j["compared"] = r.compared;
        if (r.compared) {
            j["max_abs_diff"] = r.maxAbsDiff;
        }
        if (!r.compareNote.empty()) {
            j["compare_note"] = r.compareNote;
        }
    }
    return j;
}

void printRecord(const ActivationRecord& r, size_t index, bool compared) {
    const std::string where =
        r.kind == "input" ? std::string("input ") + r.value
                          : r.kind + (r.occurrence ? " #" + std::to_string(r.occurrence) : "");
    std::cout << std::setw(5) << index << "  " << std::left << std::setw(34) << where << " "
              << std::setw(22) << (r.module.empty() ? "(root)" : r.module) << " " << std::setw(16)
              << (r.note.empty() ? shapeText(r.shape) : "-") << std::right;
    if (r.note.empty() && r.numel > 0 && r.nanCount + r.infCount == r.numel) {
        std::cout << std::setw(48) << "(no finite value)" << std::setw(7) << r.nanCount
                  << std::setw(7) << r.infCount;
    } else if (r.note.empty()) {
        std::cout << std::setw(12) << r.min << std::setw(12) << r.max << std::setw(12) << r.mean
                  << std::setw(12) << r.stddev << std::setw(7) << r.nanCount << std::setw(7)
                  << r.infCount;
    } else {
        std::cout << "  " << r.note;
    }
    if (compared) {
        if (r.compared) {
            std::cout << std::setw(12) << r.maxAbsDiff;
        } else if (!r.compareNote.empty()) {
            std::cout << "  (" << r.compareNote << ")";
        }
    }
    std::cout << "\n";
}

int commandActivations(const Options& o) {
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
    ActivationRequest request;
    request.run = o.run;
    request.bins = o.bins;
    request.compareDevice = o.compareDevice;
    request.compareRun = o.compareRun;
    request.referenceFile = o.referenceFile;
    request.referenceModel = o.compareModel;
    request.referenceOperatorLibraries = o.opLibraries;
    request.tolerance = o.tolerance;
    auto result = session.activations(request);
    if (!result) {
        return fail(o, result.error());
    }
    const ActivationReport& r = *result;
    const bool compared = !r.comparison.empty();
    auto describe = [&](int index) -> nlohmann::json {
        if (index < 0) {
            return nullptr;
        }
        return recordJson(r.records[static_cast<size_t>(index)], static_cast<size_t>(index));
    };
    if (o.json) {
        nlohmann::json j = {{"method", r.method},
                            {"device", r.device},
                            {"values", r.records.size()},
                            {"run_ms", r.runMs},
                            {"first_nonfinite", describe(r.firstNonFinite)},
                            {"notes", r.notes}};
        nlohmann::json inputs = nlohmann::json::array();
        for (const int i : r.firstNonFiniteInputs) {
            inputs.push_back(describe(i));
        }
        j["first_nonfinite_inputs"] = inputs;
        if (compared) {
            j["comparison"] = {{"with", r.comparison},
                               {"tolerance", r.tolerance},
                               {"compared", r.comparedCount},
                               {"first_difference", describe(r.firstDifference)},
                               {"unmatched", r.unmatched}};
        }
        if (!o.firstNonFinite) {
            nlohmann::json records = nlohmann::json::array();
            for (size_t i = 0; i < r.records.size(); ++i) {
                records.push_back(recordJson(r.records[i], i));
            }
            j["records"] = records;
            j["output"] = outputJson(r.output);
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << std::setprecision(5);
    auto header = [&]() {
        std::cout << "    #  " << std::left << std::setw(34) << "node"
                  << " " << std::setw(22) << "module"
                  << " " << std::setw(16) << "shape" << std::right << std::setw(12) << "min"
                  << std::setw(12) << "max" << std::setw(12) << "mean" << std::setw(12) << "std"
                  << std::setw(7) << "NaN" << std::setw(7) << "Inf"
                  << (compared ? "   max |diff|" : "") << "\n";
    };
    auto where = [&](const ActivationRecord& rec) {
        return rec.kind +
               (rec.occurrence ? " (occurrence " + std::to_string(rec.occurrence) + ")" : "") +
               " in " + (rec.module.empty() ? std::string("the root module") : rec.module) +
               (rec.source.empty() ? "" : ", " + rec.source) +
               (rec.irLine ? ", inlined graph line " + std::to_string(rec.irLine) : "");
    };
    if (o.firstNonFinite) {
        if (r.firstNonFinite < 0) {
            std::cout << "No NaN or Inf in any of the " << r.records.size() << " values "
                      << r.method << " computed.\n";
            return kExitOk;
        }
        const auto& bad = r.records[static_cast<size_t>(r.firstNonFinite)];
        std::cout << "First non-finite value: %" << bad.value << " from " << where(bad) << "\n";
        if (!bad.sourceText.empty()) {
            std::cout << "  code: " << bad.sourceText << "\n";
        }
        std::cout << "\n";
        header();
        printRecord(bad, static_cast<size_t>(r.firstNonFinite), compared);
        if (!r.firstNonFiniteInputs.empty()) {
            std::cout << "Its inputs:\n";
            for (const int i : r.firstNonFiniteInputs) {
                printRecord(r.records[static_cast<size_t>(i)], static_cast<size_t>(i), compared);
            }
        }
        return kExitOk;
    }
    std::cout << r.records.size() << " values from " << r.method << " on " << r.device << " ("
              << std::fixed << std::setprecision(1) << r.runMs << " ms with statistics)\n"
              << std::defaultfloat << std::setprecision(5);
    header();
    for (size_t i = 0; i < r.records.size(); ++i) {
        printRecord(r.records[i], i, compared);
    }
    std::cout << "\n";
    if (r.firstNonFinite >= 0) {
        const auto& bad = r.records[static_cast<size_t>(r.firstNonFinite)];
        std::cout << "First non-finite value: #" << r.firstNonFinite << " %" << bad.value
                  << " from " << where(bad) << "\n";
    } else {
        std::cout << "No NaN or Inf.\n";
    }
    if (compared) {
        std::cout << "Compared with " << r.comparison << ": " << r.comparedCount << " values";
        if (r.firstDifference >= 0) {
            const auto& d = r.records[static_cast<size_t>(r.firstDifference)];
            std::cout << "; the first beyond " << r.tolerance << " is #" << r.firstDifference
                      << " %" << d.value << " from " << where(d) << ": max |diff| " << d.maxAbsDiff
                      << "\n";
        } else {
            std::cout << ", all within " << r.tolerance << "\n";
        }
        if (!r.unmatched.empty()) {
            std::cout << "Matched no module output:";
            for (const auto& name : r.unmatched) {
                std::cout << " " << name;
            }
            std::cout << "\n";
        }
    }
    for (const auto& note : r.notes) {
        std::cout << "Note: " << note << "\n";
    }
    return kExitOk;
}

nlohmann::json statsJson(const TimingStats& s) {
    return {{"min", s.min}, {"p50", s.p50},   {"p90", s.p90},
            {"max", s.max}, {"mean", s.mean}, {"count", s.count}};
}

int commandOptimize(const Options& o) {
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
    OptimizeRequest request;
    if (o.freeze) {
        request.passes.push_back("freeze");
    }
    if (o.forInference) {
        request.passes.push_back("optimize-for-inference");
    }
    request.passes.insert(request.passes.end(), o.passes.begin(), o.passes.end());
    request.run = o.run;
    request.savePath = o.output;
    auto result = session.optimize(request);
    if (!result) {
        return fail(o, result.error());
    }
    const OptimizeResult& r = *result;
    if (o.json) {
        nlohmann::json kinds = nlohmann::json::array();
        for (const auto& k : r.kinds) {
            kinds.push_back({{"kind", k.kind}, {"before", k.before}, {"after", k.after}});
        }
        nlohmann::json j = {
            {"method", r.method},
            {"passes", r.applied},
            {"nodes_before", r.nodesBefore},
            {"nodes_after", r.nodesAfter},
            {"kinds", kinds},
            {"timed", r.timed},
            {"notes", r.notes},
            {"saved", r.saved.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.saved)}};
        if (r.timed) {
            j["before_ms"] = statsJson(r.before);
            j["after_ms"] = statsJson(r.after);
            j["speedup"] = r.speedup;
        }
        nlohmann::json modules = nlohmann::json::array();
        for (const auto& m : r.modules) {
            modules.push_back({{"module", m.module}, {"max_abs_diff", m.maxAbsDiff}});
        }
        j["modules"] = modules;
        j["first_different_module"] = r.firstDifferentModule.empty()
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(r.firstDifferentModule);
        j["outputs_compared"] = r.outputsCompared;
        if (r.outputsCompared) {
            j["max_abs_diff"] = r.maxAbsDiff;
        }
        if (!r.compareNote.empty()) {
            j["compare_note"] = r.compareNote;
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "Passes      ";
    for (size_t i = 0; i < r.applied.size(); ++i) {
        std::cout << (i ? ", " : "") << r.applied[i];
    }
    std::cout << "\nNodes       " << r.nodesBefore << " -> " << r.nodesAfter << "\n\n"
              << "  before   after  kind\n";
    for (const auto& k : r.kinds) {
        if (k.before != k.after) {
            std::cout << std::setw(8) << k.before << std::setw(8) << k.after << "  " << k.kind
                      << "\n";
        }
    }
    int unchanged = 0;
    for (const auto& k : r.kinds) {
        unchanged += k.before == k.after ? 1 : 0;
    }
    if (unchanged) {
        std::cout << "  (" << unchanged << " kind" << (unchanged == 1 ? "" : "s")
                  << " with the same count left out; --json has all)\n";
    }
    std::cout << "\n";
    if (r.timed) {
        std::cout << std::fixed << std::setprecision(3) << "Before      p50 " << r.before.p50
                  << " ms (min " << r.before.min << ", " << r.before.count << " runs)\n"
                  << "After       p50 " << r.after.p50 << " ms (min " << r.after.min << ")\n"
                  << std::setprecision(2) << "Speed-up    " << r.speedup << "x\n"
                  << std::defaultfloat << std::setprecision(6);
    }
    if (r.outputsCompared) {
        std::cout << "Outputs     max |diff| " << r.maxAbsDiff << "\n";
    } else if (!r.compareNote.empty()) {
        std::cout << "Outputs     not compared: " << r.compareNote << "\n";
    }
    if (!r.modules.empty()) {
        std::cout << "Modules     " << r.modules.size() << " outputs compared; ";
        if (r.firstDifferentModule.empty()) {
            std::cout << "all within " << r.tolerance << "\n";
        } else {
            for (const auto& m : r.modules) {
                if (m.module == r.firstDifferentModule) {
                    std::cout << "the first beyond " << r.tolerance << ": " << m.module
                              << " (max |diff| " << m.maxAbsDiff << ")\n";
                }
            }
        }
    }
    if (!r.saved.empty()) {
        std::cout << "Saved       " << r.saved << "\n";
    }
    for (const auto& note : r.notes) {
        std::cout << "Note: " << note << "\n";
    }
    return kExitOk;
}

int commandDiff(const Options& o) {
    Session a, b;
    auto first = loadModel(a, o, false);
    if (!first) {
        return fail(o, first.error());
    }
    Options second = o;
    second.positional = {o.positional[1]};
    auto other = loadModel(b, second, false);
    if (!other) {
        return fail(o, other.error());
    }
    auto result = a.diff(b);
    if (!result) {
        return fail(o, result.error());
    }
    const ArchiveDiff& d = *result;
    if (o.json) {
        nlohmann::json modules = nlohmann::json::array(), tensors = nlohmann::json::array(),
                       attributes = nlohmann::json::array(), texts = nlohmann::json::array(),
                       extras = nlohmann::json::array();
        for (const auto& m : d.modules) {
            modules.push_back({{"path", m.path},
                               {"change", toString(m.kind)},
                               {"type_a", m.typeA},
                               {"type_b", m.typeB}});
        }
        for (const auto& t : d.tensors) {
            nlohmann::json j = {{"name", t.name},      {"change", toString(t.kind)},
                                {"buffer", t.buffer},  {"shape_a", t.shapeA},
                                {"shape_b", t.shapeB}, {"dtype_a", t.dtypeA},
                                {"dtype_b", t.dtypeB}};
            if (t.kind == TensorChange::Kind::Values) {
                j["max_abs_diff"] = t.maxAbsDiff;
                j["differing"] = t.differing;
                j["numel"] = t.numel;
            }
            tensors.push_back(j);
        }
        for (const auto& at : d.attributes) {
            attributes.push_back(
                {{"module", at.module}, {"name", at.name}, {"a", at.valueA}, {"b", at.valueB}});
        }
        for (const auto& t : d.texts) {
            texts.push_back({{"module", t.module},
                             {"method", t.method},
                             {"what", t.what},
                             {"added", t.added},
                             {"removed", t.removed},
                             {"diff", unifiedText(t.lines)}});
        }
        for (const auto& e : d.extraFiles) {
            extras.push_back({{"name", e.name}, {"change", e.change}});
        }
        std::cout << nlohmann::json({{"a", d.pathA},
                                     {"b", d.pathB},
                                     {"identical", d.identical},
                                     {"modules", modules},
                                     {"tensors", tensors},
                                     {"tensors_compared", d.tensorsCompared},
                                     {"attributes", attributes},
                                     {"texts", texts},
                                     {"extra_files", extras}})
                         .dump(2)
                  << "\n";
        return d.identical ? kExitOk : kExitError;
    }
    if (d.identical) {
        std::cout << "The same: " << d.tensorsCompared
                  << " parameters and buffers, every module, attribute, method's code and graph, "
                     "and the extra files.\n";
        return kExitOk;
    }
    std::cout << "--- " << d.pathA << "\n+++ " << d.pathB << "\n";
    if (!d.modules.empty()) {
        std::cout << "\nModules\n";
        for (const auto& m : d.modules) {
            std::cout << "  " << std::left << std::setw(8) << toString(m.kind) << std::right << " "
                      << (m.path.empty() ? "(root)" : m.path) << "  "
                      << (m.kind == ModuleChange::Kind::Retyped ? m.typeA + " -> " + m.typeB
                          : m.typeA.empty()                     ? m.typeB
                                                                : m.typeA)
                      << "\n";
        }
    }
    if (!d.tensors.empty()) {
        std::cout << "\nParameters and buffers (" << d.tensorsCompared << " compared)\n";
        for (const auto& t : d.tensors) {
            std::cout << "  " << std::left << std::setw(8) << toString(t.kind) << std::right << " "
                      << t.name;
            switch (t.kind) {
            case TensorChange::Kind::Values:
                std::cout << "  max |diff| " << t.maxAbsDiff << " in " << t.differing << " of "
                          << t.numel << " values";
                break;
            case TensorChange::Kind::Shape:
                std::cout << "  " << shapeText(t.shapeA) << " -> " << shapeText(t.shapeB);
                break;
            case TensorChange::Kind::Dtype:
                std::cout << "  " << t.dtypeA << " -> " << t.dtypeB;
                break;
            case TensorChange::Kind::Added:
                std::cout << "  " << shapeText(t.shapeB) << " " << t.dtypeB;
                break;
            case TensorChange::Kind::Removed:
                std::cout << "  " << shapeText(t.shapeA) << " " << t.dtypeA;
                break;
            }
            std::cout << "\n";
        }
    }
    if (!d.attributes.empty()) {
        std::cout << "\nAttributes\n";
        for (const auto& at : d.attributes) {
            std::cout << "  " << (at.module.empty() ? std::string() : at.module + ".") << at.name
                      << ": " << (at.valueA.empty() ? "(none)" : at.valueA) << " -> "
                      << (at.valueB.empty() ? "(none)" : at.valueB) << "\n";
        }
    }
    for (const auto& t : d.texts) {
        std::cout << "\n"
                  << (t.module.empty() ? "(root)" : t.module) << "." << t.method << " " << t.what
                  << " (+" << t.added << " -" << t.removed << ")\n"
                  << unifiedText(t.lines);
    }
    if (!d.extraFiles.empty()) {
        std::cout << "\nExtra files\n";
        for (const auto& e : d.extraFiles) {
            std::cout << "  " << std::left << std::setw(8) << e.change << std::right << " "
                      << e.name << "\n";
        }
    }
    return kExitError;
}

int commandWarp(const Options& o) {
    WarpFileRequest request;
    request.input = o.positional[0];
    request.output = o.output;
    request.interpolation = o.interpolation;
    request.border = o.border;
    request.borderValue = o.borderValue;
    request.inverse = o.inverse;
    if (!o.size.empty()) {
        auto shape = parseShape(o.size);
        if (!shape || shape->size() != 2 || (*shape)[0] < 1 || (*shape)[1] < 1) {
            return usage(o.command, "--size expects WIDTHxHEIGHT, e.g. 640x480");
        }
        request.width = static_cast<int>((*shape)[0]);
        request.height = static_cast<int>((*shape)[1]);
    }
    if (!o.matrixFile.empty()) {
        auto matrix = readMatrixFile(o.matrixFile, o.matrixNode);
        if (!matrix) {
            return fail(o, matrix.error());
        }
        request.matrix.assign(matrix->begin(), matrix->end());
    } else {
        std::array<double, 8> corners{};
        std::istringstream stream(o.corners);
        std::string part;
        size_t count = 0;
        while (std::getline(stream, part, ',')) {
            if (count < 8) {
                corners[count] = parseNumber("--corners", part);
            }
            ++count;
        }
        if (count != 8) {
            return usage(o.command, "--corners expects 8 numbers: x0,y0,x1,y1,x2,y2,x3,y3");
        }
        request.corners = corners;
    }
    if (auto error = warpImageFile(request)) {
        return fail(o, *error);
    }
    return kExitOk;
}

int commandDevices(const Options& o) {
    const auto devices = listDevices();
    if (o.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& d : devices) {
            list.push_back({{"id", d.id},
                            {"name", d.name},
                            {"memory_bytes", d.memoryBytes},
                            {"available", d.available},
                            {"reason", d.reason}});
        }
        std::cout << nlohmann::json{{"libtorch", libtorchVersion()}, {"devices", list}}.dump(2)
                  << "\n";
        return kExitOk;
    }
    for (const auto& d : devices) {
        std::cout << std::left << std::setw(8) << d.id << std::right << d.name;
        if (d.memoryBytes) {
            std::cout << ", " << formatBytes(d.memoryBytes);
        }
        if (!d.available) {
            std::cout << ": unavailable, " << d.reason;
        }
        std::cout << "\n";
    }
    return kExitOk;
}

int execute(const Options& o) {
    try {
        if (o.command == "info") {
            // Operator libraries change which operators count as registered.
            Session session;
            for (const auto& library : o.opLibraries) {
                if (auto error = session.loadOperatorLibrary(library)) {
                    return fail(o, *error);
                }
            }
            return commandInfo(o);
        }
        if (o.command == "tree") {
            return commandTree(o);
        }
        if (o.command == "code" || o.command == "graph") {
            return commandCodeOrGraph(o);
        }
        if (o.command == "run") {
            return commandRun(o);
        }
        if (o.command == "warp") {
            return commandWarp(o);
        }
        if (o.command == "activations") {
            return commandActivations(o);
        }
        if (o.command == "optimize") {
            return commandOptimize(o);
        }
        if (o.command == "diff") {
            return commandDiff(o);
        }
        return commandDevices(o);
    } catch (const UsageError& error) {
        return usage(o.command, error.message);
    } catch (const std::bad_alloc&) {
        return fail(o, Error{ErrorKind::OutOfMemory, "out of memory"});
    } catch (const std::exception& error) {
        return fail(o, Error{ErrorKind::Internal, std::string("internal error: ") + error.what()});
    }
}

int supervise(const Options& o, const std::vector<std::string>& args) {
    std::vector<std::string> childArgs = args;
    childArgs.push_back("--in-process");
    childArgs.push_back("--supervised");
    Limits limits;
    limits.timeoutSeconds = o.timeout;
    limits.memoryBytes = o.memoryLimit;
    std::cout.flush();
    const ChildOutcome outcome = runIsolated(childArgs, limits);
    const std::string what = o.command == "warp" || o.command == "devices"
                                 ? o.command
                                 : o.command + " '" + o.positional[0] + "'";
    switch (outcome.kind) {
    case ChildOutcome::Kind::Exited:
        if (outcome.exitCode == kMemoryLimitExitCode) {
            std::cerr << "scriptscope-cli: " << what << " hit the memory limit of "
                      << formatBytes(o.memoryLimit)
                      << " and was stopped (--memory-limit MB changes it)\n";
            return kExitCrashed;
        }
        if (outcome.exitCode == 127) {
            std::cerr << "scriptscope-cli: the worker process for " << what
                      << " could not start (memory limit " << formatBytes(o.memoryLimit)
                      << " too low?)\n";
            return kExitCrashed;
        }
        return outcome.exitCode;
    case ChildOutcome::Kind::Signaled:
        if (outcome.signal == SIGPIPE) {
            // The reader of our output went away (`| head`): end the same way, quietly.
            std::signal(SIGPIPE, SIG_DFL);
            std::raise(SIGPIPE);
        }
        std::cerr << "scriptscope-cli: " << what << " crashed the worker process with "
                  << describeSignal(outcome.signal)
                  << (outcome.signal == SIGKILL
                          ? ""
                          : ": the archive is damaged or hostile, or LibTorch has a bug")
                  << "; nothing else was affected\n";
        return kExitCrashed;
    case ChildOutcome::Kind::TimedOut:
        std::cerr << "scriptscope-cli: " << what << " timed out after " << o.timeout
                  << " s and was stopped (--timeout S changes the limit)\n";
        return kExitTimedOut;
    case ChildOutcome::Kind::SpawnFailed:
        std::cerr << "scriptscope-cli: cannot start the worker process: " << outcome.error << "\n";
        return kExitCrashed;
    }
    return kExitCrashed;
}

} // namespace
} // namespace scriptscope::cli

int main(int argc, char** argv) {
    using namespace scriptscope::cli;
    const std::vector<std::string> args(argv + 1, argv + argc);
    Options options;
    if (const auto status = parseArguments(args, options)) {
        return *status;
    }
    if (!options.inProcess) {
        return supervise(options, args);
    }
    // A supervised child had its limit set before exec (a resident-memory limit is taken up here);
    // in-process runs apply it themselves.
    if (options.supervised) {
        scriptscope::continueMemoryLimit();
    } else if (options.memoryLimitGiven) {
        scriptscope::applyMemoryLimit(options.memoryLimit);
    }
    return execute(options);
}
