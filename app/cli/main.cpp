// scriptscope-cli: the engine, headless and scriptable.
//
// This process parses the command line and supervises; it never maps LibTorch, so that a command
// costs little more than the work itself. The work runs in scriptscope-cli-engine (engine_main.cpp,
// beside this program), a child with time and memory limits, so that a crash, a hang or a runaway
// allocation in LibTorch or a model's code cannot take the CLI down; --in-process replaces this
// process with the engine instead (no isolation, for debugging).
#include "isolation.h"
#include "options.h"

#include <format.h>
#include <process_limits.h>

#include <climits>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace scriptscope::cli {
namespace {

// scriptscope-cli-engine, in this program's folder (the build's bin/, or /usr/bin).
std::string enginePath() {
    char self[PATH_MAX] = {};
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
    dir = dir.substr(0, dir.find_last_of('/') + 1);
    return (dir.empty() ? std::string("./") : dir) + "scriptscope-cli-engine";
}

// Becomes the engine with `arguments` (the same process: no isolation); returns only on failure.
int becomeEngine(const std::string& engine, const std::vector<std::string>& arguments) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(engine.c_str()));
    for (const auto& argument : arguments) {
        argv.push_back(const_cast<char*>(argument.c_str()));
    }
    argv.push_back(nullptr);
    std::cout.flush();
    ::execv(engine.c_str(), argv.data());
    std::cerr << kProgram << ": cannot start " << engine << ": " << std::strerror(errno) << "\n";
    return kExitCrashed;
}

// After a crash of a command given operator libraries: each library loaded alone, in a quiet child
// of its own; the first that crashes that child too is the culprit (empty: none did).
std::string crashingLibrary(const std::string& engine, const Options& o, int* signal) {
    for (const auto& library : o.opLibraries) {
        Limits limits;
        limits.timeoutSeconds = 60;
        limits.memoryBytes = o.memoryLimit;
        limits.quiet = true;
        const ChildOutcome alone = runIsolated(
            engine, {"devices", "--op-library", library, "--in-process", "--supervised"}, limits);
        if (alone.kind == ChildOutcome::Kind::Signaled) {
            *signal = alone.signal;
            return library;
        }
    }
    return {};
}

int supervise(const std::string& engine, const Options& o, const std::vector<std::string>& args) {
    std::vector<std::string> childArgs = args;
    childArgs.push_back("--in-process");
    childArgs.push_back("--supervised");
    Limits limits;
    limits.timeoutSeconds = o.timeout;
    limits.memoryBytes = o.memoryLimit;
    std::cout.flush();
    const ChildOutcome outcome = runIsolated(engine, childArgs, limits);
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
        if (outcome.signal != SIGKILL) {
            int signal = 0;
            if (const std::string library = crashingLibrary(engine, o, &signal); !library.empty()) {
                std::cerr << "scriptscope-cli: " << what << " crashed the worker process with "
                          << describeSignal(outcome.signal)
                          << " while loading the operator library '" << library
                          << "' (loaded alone, it crashes too with " << describeSignal(signal)
                          << "): it is damaged or was built for another LibTorch\n";
                return kExitOperatorLibrary;
            }
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
    const std::string engine = enginePath();
    Options options;
    // --version names the LibTorch, which only the engine links: it prints it.
    if (const auto status = parseArguments(
            args, options, [&engine] { std::exit(becomeEngine(engine, {"--version"})); })) {
        return *status;
    }
    if (options.inProcess) {
        return becomeEngine(engine, args);
    }
    return supervise(engine, options, args);
}
