// scriptscope-cli's fixed cost: `graph` on a tiny archive, supervised (the default: a LibTorch-free
// parent and the engine as its child) and --in-process, against a raw LibTorch program that loads
// the archive and prints the graph in one process. Runs are interleaved, so that the machine's
// load falls on all three alike; medians and ratios are printed side by side.
//
// bench_cli CLI RAW_GRAPH ARCHIVE [RUNS]
#include "bench_support.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <iostream>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

using scriptscope::bench::Clock;

// Runs the command with stdout to /dev/null; returns its wall time in ms, or -1 on failure.
double timedRun(const std::vector<std::string>& command) {
    std::vector<char*> argv;
    for (const auto& a : command) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    const auto start = Clock::now();
    pid_t pid = 0;
    const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
        return -1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const double ms = scriptscope::bench::milliseconds(start);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::cerr << "usage: bench_cli CLI RAW_GRAPH ARCHIVE [RUNS]\n";
        return 2;
    }
    const std::string cli = argv[1], raw = argv[2], archive = argv[3];
    const int runs = argc > 4 ? std::atoi(argv[4]) : 15;
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
        {"raw LibTorch program", {raw, archive}},
        {"scriptscope-cli graph (supervised)", {cli, "graph", archive}},
        {"scriptscope-cli graph --in-process", {cli, "graph", archive, "--in-process"}},
    };
    std::vector<std::vector<double>> samples(commands.size());
    for (size_t i = 0; i < commands.size(); ++i) {
        timedRun(commands[i].second); // warm the page cache
    }
    for (int r = 0; r < runs; ++r) {
        for (size_t i = 0; i < commands.size(); ++i) {
            const double ms = timedRun(commands[i].second);
            if (ms < 0) {
                std::cerr << commands[i].first << " failed\n";
                return 1;
            }
            samples[i].push_back(ms);
        }
    }
    const double base = scriptscope::bench::median(samples[0]);
    std::printf("CLI fixed cost, graph on %s, median of %d interleaved runs:\n", archive.c_str(),
                runs);
    for (size_t i = 0; i < commands.size(); ++i) {
        const double m = scriptscope::bench::median(samples[i]);
        std::printf("  %-38s %7.1f ms  %.2fx the raw program\n", commands[i].first.c_str(), m,
                    m / base);
    }
    return 0;
}
