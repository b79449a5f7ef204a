// Running a helper program under a time limit: its standard input written, its output read, and
// the program killed when it runs over or when the caller cancels. Used for the Graphviz layout
// process, which can hang or crash on some graphs.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace scriptscope {

struct ChildResult {
    bool started = false;  // false: the program could not be started (error says why)
    bool timedOut = false; // killed at the time limit
    bool cancelled = false;
    int exitCode = -1; // when it exited
    int signal = 0;    // when a signal ended it (other than our kill)
    std::string output;
    std::string errors; // its standard error (the first 64 KiB)
    std::string error;  // why it could not be started
};

// Runs argv[0] (a path) with `input` on its standard input. Returns when it ends, when
// `timeoutSeconds` have passed (then it is killed), or soon after `*cancel` becomes true.
ChildResult runChild(const std::vector<std::string>& argv, const std::string& input,
                     double timeoutSeconds, const std::atomic<bool>* cancel = nullptr);

} // namespace scriptscope
