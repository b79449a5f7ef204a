#include "isolation.h"

#include <process_limits.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace scriptscope::cli {

ChildOutcome runIsolated(const std::string& program, const std::vector<std::string>& arguments,
                         const Limits& limits) {
    ChildOutcome outcome;
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& argument : arguments) {
        argv.push_back(const_cast<char*>(argument.c_str()));
    }
    argv.push_back(nullptr);

    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child < 0) {
        outcome.kind = ChildOutcome::Kind::SpawnFailed;
        outcome.error = std::strerror(errno);
        return outcome;
    }
    if (child == 0) {
        // Own process group, so a time-out kills whatever the model started too; and die with the
        // CLI if it is killed.
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(127);
        }
        if (limits.quiet) {
            const int null = ::open("/dev/null", O_WRONLY);
            if (null >= 0) {
                ::dup2(null, STDOUT_FILENO);
                ::dup2(null, STDERR_FILENO);
                ::close(null);
            }
        }
        applyMemoryLimit(limits.memoryBytes);
        if (const std::string options = sanitizerMemoryOptions(limits.memoryBytes);
            !options.empty()) {
            const char* inherited = std::getenv("ASAN_OPTIONS");
            const std::string all =
                (inherited ? std::string(inherited) + ":" : std::string()) + options;
            ::setenv("ASAN_OPTIONS", all.c_str(), 1);
        }
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::setpgid(child, child);

    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(limits.timeoutSeconds));
    auto pause = std::chrono::microseconds(200);
    for (;;) {
        int status = 0;
        const pid_t done = ::waitpid(child, &status, WNOHANG);
        if (done == child) {
            if (WIFSIGNALED(status)) {
                outcome.kind = ChildOutcome::Kind::Signaled;
                outcome.signal = WTERMSIG(status);
            } else {
                outcome.kind = ChildOutcome::Kind::Exited;
                outcome.exitCode = WEXITSTATUS(status);
            }
            ::kill(-child, SIGKILL); // anything the child left running
            return outcome;
        }
        if (done < 0 && errno != EINTR) {
            outcome.kind = ChildOutcome::Kind::SpawnFailed;
            outcome.error = std::strerror(errno);
            return outcome;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(-child, SIGKILL);
            ::waitpid(child, &status, 0);
            outcome.kind = ChildOutcome::Kind::TimedOut;
            return outcome;
        }
        // Short waits at first, so quick commands return at once; longer ones later.
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
}

} // namespace scriptscope::cli
