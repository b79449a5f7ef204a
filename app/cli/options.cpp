// scriptscope-cli's command line (options.h): the commands, their options and help, and the checks
// that need no model.
#include "options.h"
#include "help_texts.h"

#include <file_formats.h>
#include <format.h>
#include <input_spec.h>
#include <process_limits.h>

#include <CLI/CLI.hpp>

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

namespace scriptscope::cli {

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

namespace {

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
           (command == "devices"                        ? " takes no file"
            : command == "diff" || command == "compare" ? " takes two files"
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

// What builds the commands: the parser, the options it fills, and the options several commands
// share. One add<Command> per subcommand below.
struct Commands {
    CLI::App& app;
    Options& o;
    std::string file;       // MODEL, IMAGE or A
    std::string secondFile; // diff's and compare's B
    // What MODEL may be, in every command's help: the formats' own list.
    std::string aModel = "The model: " + modelFileKinds();

    CLI::App* command(const char* name, const char* description, const char* footer,
                      const char* fileName, const std::string& fileDescription) {
        CLI::App* sub = app.add_subcommand(name, description)->group("Commands");
        sub->footer(std::string(footer) + "\n\n" + kGlobalOptionsNote);
        if (fileName) {
            sub->add_option(fileName, file, fileDescription)->type_name("")->required();
        }
        return sub;
    }
    void jsonFlag(CLI::App* sub) { sub->add_flag("--json", o.json, "Print JSON"); }
    void methodOption(CLI::App* sub) {
        sub->add_option("--method", o.method, "The method")
            ->type_name("NAME")
            ->capture_default_str();
    }
    void moduleOption(CLI::App* sub) {
        sub->add_option("--module", o.module,
                        "The submodule, by its path (e.g. loop.cell; default:\nthe root)")
            ->type_name("PATH");
    }
    // The method and its inputs, for the commands that run a model (run has its own help texts).
    void runOptions(CLI::App* sub) {
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
    }
    // When two values agree (verdict.h): the same options wherever values are compared.
    void criterionOptions(CLI::App* sub) {
        const auto atLeastZero =
            aNumber([](double t) { return t >= 0; }, "expects a number of at least 0");
        sub->add_option("--rtol", o.criterion.rtol,
                        "Largest max |diff| / max |reference| that agrees")
            ->type_name("R")
            ->check(atLeastZero)
            ->capture_default_str();
        sub->add_option("--min-snr", o.criterion.minSnrDb, "Lowest SNR in dB that agrees")
            ->type_name("DB")
            ->check(aNumber([](double) { return true; }, "expects a number"))
            ->capture_default_str();
        sub->add_option("--min-cosine", o.criterion.minCosine, "Lowest cosine that agrees")
            ->type_name("C")
            ->check(aNumber([](double c) { return c >= -1 && c <= 1; },
                            "expects a number from -1 to 1"))
            ->capture_default_str();
        sub->add_option("--atol,--tolerance", o.criterion.atol,
                        "max |diff| at most this agrees whatever else\n(--tolerance: the same)")
            ->type_name("A")
            ->check(atLeastZero)
            ->capture_default_str();
    }
};

// The options before (and, inherited, after) the command.
void addGlobalOptions(Commands& c, double& memoryLimitMb, CLI::Option*& memoryLimit,
                      const std::function<void()>& printVersion) {
    CLI::App& app = c.app;
    Options& o = c.o;
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
    memoryLimit = app.add_option("--memory-limit", memoryLimitMb,
                                 "Memory limit for the work (default: 3/4 of physical\nmemory)")
                      ->type_name("MB")
                      ->check(aNumber([](double mb) { return mb >= 64; },
                                      "is in MB and must be at least 64"));
    app.add_flag("--in-process", o.inProcess,
                 "Do the work in this process, without isolation (for\ndebugging)");
    app.add_flag("--verbose", o.verbose,
                 "Print error messages in full (LibTorch's can span many\nlines)");
    app.add_flag("--supervised", o.supervised)->group(""); // the supervising parent's child
    app.add_flag_callback(
           "--version",
           [&printVersion] {
               printVersion();
               throw CLI::Success();
           },
           "Version of scriptscope-cli and of the libraries it uses")
        ->trigger_on_parse();
}

// info: the safe preview.
void addInfo(Commands& c) {
    Options& o = c.o;
    CLI::App* info =
        c.command("info", "What the file is, read without executing it (a safe preview)",
                  kInfoFooter, "MODEL", "The file (" + modelFileKinds() + ", or any file)");
    info->add_flag("--show-code", o.showCode, "Print the code files");
    c.jsonFlag(info);
}

// tree: the module tree.
void addTree(Commands& c) {
    CLI::App* tree =
        c.command("tree", "The module tree: types, parameters, buffers, attributes, methods",
                  kTreeFooter, "MODEL", c.aModel);
    c.jsonFlag(tree);
}

// code: what Python prints for .code.
void addCode(Commands& c) {
    CLI::App* code = c.command("code", "What Python prints for model.PATH.NAME.code", kCodeFooter,
                               "MODEL", c.aModel);
    c.moduleOption(code);
    c.methodOption(code);
}

// graph: the IR or the diagram.
void addGraph(Commands& c) {
    Options& o = c.o;
    CLI::App* graph = c.command("graph", "str(model.PATH.NAME.graph), or the inlined graph",
                                kGraphFooter, "MODEL", c.aModel);
    c.moduleOption(graph);
    c.methodOption(graph);
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
}

// run: a timed run, rendered as its task.
void addRun(Commands& c) {
    Options& o = c.o;
    CLI::App* run = c.command("run", "Runs a method and times it", kRunFooter, "MODEL", c.aModel);
    c.methodOption(run);
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
    c.jsonFlag(run);
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
                    "classification, page, flow or none")
        ->check(CLI::IsMember(
            {"auto", "none", "classification", "detection", "segmentation", "page", "flow"}))
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
    run->add_option("--etdump", o.run.etdumpPath,
                    "An ExecuTorch program's runs recorded elsewhere (an ETDump\n"
                    "from a phone or a board): read instead of running, its runs\n"
                    "as the timing samples, its events as the profile")
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
}

// activations: every value of one run, and comparisons.
void addActivations(Commands& c) {
    Options& o = c.o;
    CLI::App* activations =
        c.command("activations", "Every value one run computes, the first NaN, comparisons",
                  kActivationsFooter, "MODEL", c.aModel);
    c.runOptions(activations);
    c.jsonFlag(activations);
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
    c.criterionOptions(activations);
    activations->add_option("--bins", o.bins, "Histogram bins (JSON)")
        ->type_name("N")
        ->transform(aWholeNumber(1))
        ->capture_default_str();
}

// optimize: passes on a copy.
void addOptimize(Commands& c) {
    Options& o = c.o;
    CLI::App* optimize =
        c.command("optimize", "Optimisation passes on a copy: counts, speed, |diff|",
                  kOptimizeFooter, "MODEL", "The TorchScript archive");
    c.runOptions(optimize);
    c.jsonFlag(optimize);
    optimize->add_flag("--freeze", o.freeze, "torch.jit.freeze first");
    optimize->add_flag("--for-inference", o.forInference, "torch.jit.optimize_for_inference");
    optimize->add_option("--pass", o.passes, "A pass (repeatable, applied in order)")
        ->type_name("NAME")
        ->allow_extra_args(false)
        ->take_all();
    optimize
        ->add_option("-o,--output", o.output,
                     "Write the optimised copy (an archive), then load it\nback and run it once")
        ->type_name("OUT.pt");
    optimize->add_flag("--keep-unloadable", o.keepUnloadable,
                       "Keep the copy even when it does not load back or run");
    optimize->add_option("--warmup", o.run.warmup, "Untimed runs of each first (at least 3)")
        ->type_name("N")
        ->transform(aWholeNumber(0))
        ->capture_default_str();
    optimize->add_option("--iters,--iterations", o.run.iterations, "Timed runs of each")
        ->type_name("N")
        ->transform(aWholeNumber(1))
        ->capture_default_str();
}

// diff: two models' contents.
void addDiff(Commands& c) {
    Options& o = c.o;
    CLI::App* diff = c.command("diff", "Two models compared: modules, tensors, code, graphs",
                               kDiffFooter, "A", "The first model");
    diff->add_option("B", c.secondFile, "The second model")->type_name("")->required();
    // A TorchScript archive against its torch.export twin: the outputs on the same inputs too.
    c.runOptions(diff);
    diff->add_option("--iters,--iterations", o.run.iterations,
                     "Timed runs of each (a .pt against a .pt2 with --input)")
        ->capture_default_str();
    c.criterionOptions(diff);
    c.jsonFlag(diff);
}

// compare: two models' values on the same inputs.
void addCompare(Commands& c) {
    CLI::App* compare = c.command("compare",
                                  "Two models run on the same inputs, to the first "
                                  "module output where they differ",
                                  kCompareFooter, "A", "The model compared");
    compare->add_option("B", c.secondFile, "The model it is compared with")
        ->type_name("")
        ->required();
    c.runOptions(compare);
    c.criterionOptions(compare);
    c.jsonFlag(compare);
}

// warp: an image through my_ops::warp_perspective.
void addWarp(Commands& c) {
    Options& o = c.o;
    CLI::App* warp = c.command("warp", "Warps an image with my_ops::warp_perspective", kWarpFooter,
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
}

// devices: where runs can go.
void addDevices(Commands& c) {
    CLI::App* devices =
        c.command("devices", "The devices runs can use, and why CUDA is unavailable if it is",
                  kDevicesFooter, nullptr, {});
    c.jsonFlag(devices);
}

} // namespace

// Fills `o` from the arguments. Returns an exit status when there is nothing to run: help or
// version printed (0), or a usage error reported (2).
std::optional<int> parseArguments(const std::vector<std::string>& args, Options& o,
                                  const std::function<void()>& printVersion) {
    CLI::App app("Inspect, run and warp with exported PyTorch models (TorchScript, torch.export, "
                 "ExecuTorch).",
                 kProgram);
    app.get_formatter()->column_width(34);
    app.get_formatter()->label("SUBCOMMAND", "COMMAND");
    app.footer(kTopFooter);
    app.require_subcommand(1);
    // Inherited by the commands: the global options work after them too, as they must, since the
    // supervising parent appends `--in-process --supervised` to the child's arguments.
    app.fallthrough();
    // Later occurrences win, as before; repeatable options say take_all().
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

    Commands c{app, o, {}, {}};
    double memoryLimitMb = 0;
    CLI::Option* memoryLimit = nullptr;
    addGlobalOptions(c, memoryLimitMb, memoryLimit, printVersion);
    for (void (*add)(Commands&) : {addInfo, addTree, addCode, addGraph, addRun, addActivations,
                                   addOptimize, addDiff, addCompare, addWarp, addDevices}) {
        add(c);
    }

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
    if (o.command == "diff" || o.command == "compare") {
        o.positional = {c.file, c.secondFile};
    } else if (o.command != "devices") {
        o.positional = {c.file};
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

} // namespace scriptscope::cli
