// scriptscope-cli's command line: every command's options, parsed and checked without LibTorch,
// so that the supervising parent (main.cpp) and the engine process (engine_main.cpp) read them
// alike and the parent never maps LibTorch.
#pragma once

#include <run_types.h>
#include <verdict.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope::cli {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCrashed = 3;
constexpr int kExitTimedOut = 4;
constexpr int kExitNeedsNewerLibTorch = 5;
// An --op-library that cannot be loaded (missing, built for another LibTorch, crashing).
constexpr int kExitOperatorLibrary = 6;
// compare and diff: too little could be compared to say whether the two are the same (the
// outputs' structures differ, no output could be compared, nothing matched).
constexpr int kExitCouldNotCompare = 7;

const char* const kProgram = "scriptscope-cli";

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
    Criterion criterion; // --atol, --rtol, --min-snr, --min-cosine
    int bins = 32;
    // optimize
    bool freeze = false;
    bool forInference = false;
    bool keepUnloadable = false; // optimize -o: keep a copy that does not load back
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

// Prints one line on stderr and returns kExitUsage.
int usage(const std::string& command, std::string message);

// A number given to `option`; throws UsageError naming the option when `value` is none.
double parseNumber(const std::string& option, const std::string& value);

// Parses and checks the arguments. Returns nothing when the command is to run, or the exit status
// when help or the version was printed (0) or a usage error was reported (2). printVersion prints
// --version's text (it needs LibTorch: the parent hands it to the engine process).
std::optional<int> parseArguments(const std::vector<std::string>& args, Options& o,
                                  const std::function<void()>& printVersion);

} // namespace scriptscope::cli
