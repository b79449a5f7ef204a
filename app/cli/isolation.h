// Runs the risky part of a command (loading and running models) in a child process, so that a
// crash, a hang or a runaway allocation in LibTorch or in a model's code cannot take the CLI down.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scriptscope::cli {

struct Limits {
    double timeoutSeconds = 300;
    uint64_t memoryBytes = 0; // address-space limit of the child; 0: none
    bool quiet = false;       // the child's stdout and stderr go to /dev/null
};

struct ChildOutcome {
    enum class Kind { Exited, Signaled, TimedOut, SpawnFailed } kind = Kind::Exited;
    int exitCode = 0;
    int signal = 0;
    std::string error; // for SpawnFailed
};

// Starts `program arguments...` with the limits applied, waits for it at most
// limits.timeoutSeconds, and kills it (and so everything it started) past that. The child shares
// stdout and stderr unless limits.quiet.
ChildOutcome runIsolated(const std::string& program, const std::vector<std::string>& arguments,
                         const Limits& limits);

} // namespace scriptscope::cli
