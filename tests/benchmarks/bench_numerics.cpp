// Side-by-side benchmarks of the activation inspector and the archive diff, each pair measured in
// one run (interleaved, so load on the shared machine affects both alike):
//   bench_numerics RESNET18 RESNET50 RESNET50_OTHER
// - every value's statistics (one instrumented forward) against a plain forward: time and peak
//   memory (each measured in a child process of its own, the resident peak as the kernel counts it)
// - diff of two ResNet-50 archives against loading both.
#include "bench_support.h"

#include <session.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace scriptscope;

namespace {

using scriptscope::bench::Clock;
using scriptscope::bench::median;
using scriptscope::bench::milliseconds;

InputSpec image() {
    InputSpec spec;
    spec.kind = InputSpec::Kind::Random;
    spec.shape = {1, 3, 224, 224};
    spec.seed = 1;
    return spec;
}

// Runs `work` in a child process and returns its peak resident memory in bytes (and what it
// printed, a number, in `value`).
long peakInChild(const std::function<double()>& work, double& value) {
    int pipes[2];
    if (::pipe(pipes) != 0) {
        return -1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(pipes[0]);
        const double result = work();
        struct rusage usage {};
        ::getrusage(RUSAGE_SELF, &usage);
        const double out[2] = {static_cast<double>(usage.ru_maxrss) * 1024.0, result};
        if (::write(pipes[1], out, sizeof out) != static_cast<ssize_t>(sizeof out)) {
            std::_Exit(2);
        }
        std::_Exit(0);
    }
    ::close(pipes[1]);
    double in[2] = {-1, 0};
    if (::read(pipes[0], in, sizeof in) != static_cast<ssize_t>(sizeof in)) {
        in[0] = -1;
    }
    ::close(pipes[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    value = in[1];
    return static_cast<long>(in[0]);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: bench_numerics RESNET18 RESNET50 RESNET50_OTHER\n");
        return 2;
    }
    const std::string resnet18 = argv[1], resnetA = argv[2], resnetB = argv[3];

    // Memory first, in children, before this process has touched LibTorch.
    auto loadOnly = [&]() {
        Session session;
        return session.load(resnet18) ? 0.0 : -1.0;
    };
    auto plainRuns = [&]() {
        Session session;
        if (!session.load(resnet18)) {
            return -1.0;
        }
        RunRequest run;
        run.inputs = {image()};
        run.warmup = 2;
        run.iterations = 3;
        return session.run(run) ? 0.0 : -1.0;
    };
    auto statisticsRuns = [&]() {
        Session session;
        if (!session.load(resnet18)) {
            return -1.0;
        }
        ActivationRequest request;
        request.run.inputs = {image()};
        for (int i = 0; i < 3; ++i) {
            auto report = session.activations(request);
            if (!report) {
                return -1.0;
            }
            if (i == 0) {
                std::printf("ResNet-18: %zu values recorded per forward\n", report->records.size());
                std::fflush(stdout);
            }
        }
        return 0.0;
    };
    double ignored = 0;
    const long base = peakInChild(loadOnly, ignored);
    const long plain = peakInChild(plainRuns, ignored);
    const long stats = peakInChild(statisticsRuns, ignored);
    std::printf("%-46s %-22s %9.1f MB   %-22s %9.1f MB   ratio %.3f   (target <= 1.2)\n",
                "peak memory, ResNet-18 (loaded: ", "with statistics", stats / 1048576.0,
                "plain forward", plain / 1048576.0, static_cast<double>(stats) / plain);
    std::printf(
        "  (the loaded model alone: %.1f MB; above it: statistics %.1f MB, plain %.1f MB)\n",
        base / 1048576.0, (stats - base) / 1048576.0, (plain - base) / 1048576.0);

    // Time: interleaved, one call each per round after warming both up.
    Session session;
    if (!session.load(resnet18)) {
        std::fprintf(stderr, "cannot load %s\n", resnet18.c_str());
        return 1;
    }
    RunRequest run;
    run.inputs = {image()};
    run.warmup = 0;
    run.iterations = 1;
    ActivationRequest request;
    request.run.inputs = {image()};
    std::vector<double> plainMs, statsMs;
    for (int i = 0; i < 3; ++i) {
        (void)session.run(run);
        (void)session.activations(request);
    }
    for (int round = 0; round < 15; ++round) {
        auto result = session.run(run);
        plainMs.push_back(result->samplesMs.front());
        auto t = Clock::now();
        (void)session.activations(request);
        statsMs.push_back(milliseconds(t));
    }
    const double p = median(plainMs), s = median(statsMs);
    std::printf("%-46s %-22s %9.3f ms   %-22s %9.3f ms   ratio %.3f   (target <= 2)\n",
                "ResNet-18 forward, every value's statistics", "with statistics", s,
                "plain forward", p, s / p);

    // Diff of two ResNet-50 archives against loading both.
    std::vector<double> loadMs, diffMs;
    for (int round = 0; round < 3; ++round) {
        LoadOptions options;
        options.includeCode = false;
        auto t = Clock::now();
        {
            Session a, b;
            (void)a.load(resnetA, options);
            (void)b.load(resnetB, options);
        }
        loadMs.push_back(milliseconds(t));
        t = Clock::now();
        Session a, b;
        (void)a.load(resnetA, options);
        (void)b.load(resnetB, options);
        auto d = a.diff(b);
        diffMs.push_back(milliseconds(t));
        if (round == 0 && d) {
            std::printf("ResNet-50 diff: %zu tensors differ of %d compared, %zu text changes\n",
                        d->tensors.size(), d->tensorsCompared, d->texts.size());
        }
    }
    const double l = median(loadMs), d = median(diffMs);
    std::printf("%-46s %-22s %9.3f ms   %-22s %9.3f ms   ratio %.3f   (target <= 1.5)\n",
                "diff of two ResNet-50 archives", "load both + diff", d, "load both", l, d / l);
    return 0;
}
