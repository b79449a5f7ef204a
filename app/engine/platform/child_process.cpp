#include "child_process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

namespace scriptscope {

namespace {

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

} // namespace

ChildResult runChild(const std::vector<std::string>& argv, const std::string& input,
                     double timeoutSeconds, const std::atomic<bool>* cancel) {
    ChildResult result;
    if (argv.empty()) {
        result.error = "no program given";
        return result;
    }
    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 ||
        ::pipe2(err, O_CLOEXEC) != 0) {
        result.error = std::string("pipe: ") + std::strerror(errno);
        for (int* p : {in, out, err}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
        return result;
    }
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    const pid_t child = ::fork();
    if (child < 0) {
        result.error = std::string("fork: ") + std::strerror(errno);
        for (int* p : {in, out, err}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
        return result;
    }
    if (child == 0) {
        ::dup2(in[0], STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        ::execv(args[0], args.data());
        const char message[] = "cannot execute the program\n";
        [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, message, sizeof message - 1);
        ::_exit(127);
    }
    closeFd(in[0]);
    closeFd(out[1]);
    closeFd(err[1]);
    ::fcntl(in[1], F_SETFL, O_NONBLOCK);
    result.started = true;

    using Clock = std::chrono::steady_clock;
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                           timeoutSeconds > 0 ? timeoutSeconds : 1e9));
    size_t written = 0;
    if (input.empty()) {
        closeFd(in[1]);
    }
    char buffer[65536];
    while (out[0] >= 0 || err[0] >= 0) {
        if (Clock::now() >= deadline) {
            result.timedOut = true;
            break;
        }
        if (cancel && cancel->load()) {
            result.cancelled = true;
            break;
        }
        pollfd fds[3];
        int count = 0;
        int outIndex = -1, errIndex = -1, inIndex = -1;
        if (out[0] >= 0) {
            outIndex = count;
            fds[count++] = {out[0], POLLIN, 0};
        }
        if (err[0] >= 0) {
            errIndex = count;
            fds[count++] = {err[0], POLLIN, 0};
        }
        if (in[1] >= 0) {
            inIndex = count;
            fds[count++] = {in[1], POLLOUT, 0};
        }
        const int ready = ::poll(fds, static_cast<nfds_t>(count), 50);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready <= 0) {
            continue;
        }
        if (inIndex >= 0 && (fds[inIndex].revents & (POLLOUT | POLLERR | POLLHUP))) {
            // A child that exits before reading everything must not kill us with SIGPIPE: block
            // it in this thread for the write and take the pending one back afterwards.
            sigset_t pipeSignal, previous;
            sigemptyset(&pipeSignal);
            sigaddset(&pipeSignal, SIGPIPE);
            ::pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous);
            const ssize_t n = ::write(in[1], input.data() + written, input.size() - written);
            const int writeError = n < 0 ? errno : 0;
            if (writeError == EPIPE) {
                const timespec zero{0, 0};
                ::sigtimedwait(&pipeSignal, nullptr, &zero);
            }
            ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
            if (n > 0) {
                written += static_cast<size_t>(n);
            }
            if ((n < 0 && writeError != EAGAIN && writeError != EINTR) || written == input.size()) {
                closeFd(in[1]);
            }
        }
        for (const auto& [index, fd, sink] :
             {std::tuple<int, int*, std::string*>{outIndex, &out[0], &result.output},
              std::tuple<int, int*, std::string*>{errIndex, &err[0], &result.errors}}) {
            if (index < 0 || !(fds[index].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            const ssize_t n = ::read(*fd, buffer, sizeof buffer);
            if (n > 0) {
                if (sink != &result.errors || sink->size() < 65536) {
                    sink->append(buffer, static_cast<size_t>(n));
                }
            } else if (n == 0 || errno != EINTR) {
                closeFd(*fd);
            }
        }
    }
    for (int* fd : {&in[1], &out[0], &err[0]}) {
        closeFd(*fd);
    }
    if (result.timedOut || result.cancelled) {
        ::kill(child, SIGKILL);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) {
        result.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status) && !result.timedOut && !result.cancelled) {
        result.signal = WTERMSIG(status);
    }
    return result;
}

} // namespace scriptscope
