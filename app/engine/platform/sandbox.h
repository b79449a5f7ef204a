// What the worker process (the one that loads and runs models) may do, tightened with what Linux
// allows without privileges. A TorchScript archive is a program: PyTorch's own guidance is to
// load only archives one trusts. This does not make a hostile archive safe; it takes away what a
// model has no need for.
//   - no new privileges (PR_SET_NO_NEW_PRIVS);
//   - no new sockets of any family (seccomp): no network, and no connecting to local services
//     (D-Bus, X11) either; the connection to the GUI is made before this applies;
//   - no writing, creating or removing files outside a scratch folder and /dev (Landlock, where
//     the kernel has it; the report says when it does not);
// The memory and time limits are applied separately (process_limits.h, the GUI's timers).
// It does not stop reading files the user can read, or using CPU until the time limit.
#pragma once

#include <string>
#include <vector>

namespace scriptscope {

struct SandboxReport {
    bool noNewPrivileges = false;
    bool noSockets = false;
    bool writesConfined = false;
    std::string scratch;            // the one folder the process may write to
    std::vector<std::string> notes; // what could not be applied, and why
    std::string summary() const;    // one line for a status bar or a log
};

// Applies to the calling process (all its threads must be started after, or be this one: seccomp
// and Landlock apply to the calling thread and the threads it creates later). Irreversible.
SandboxReport applySandbox(const std::string& scratchDir);

} // namespace scriptscope
