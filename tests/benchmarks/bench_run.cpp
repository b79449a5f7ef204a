// Runs through the GUI against a raw LibTorch loop, measured in one run (ratios side by side):
//  - the forward p50 the run panel reports (worker process, the GUI's own request) against a raw
//    torch::jit::Module::forward loop in this process over the same model and input shape,
//    interleaved three times (target: within 3%);
//  - the profiled run's wall time against the plain p50 (the profiling overhead), and plain runs
//    before and after profiled ones (profiling leaves no cost behind).
//   bench_run ARCHIVE   (ResNet-18 from scripts/bench.sh)
#include "bench_worker.h"

#include <run_panel.h>
#include <worker_client.h>

#include <torch/script.h>

#include <QApplication>
#include <QCheckBox>
#include <QEventLoop>
#include <QSignalSpy>
#include <QSpinBox>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

using namespace scriptscope;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

constexpr int kWarmup = 10;
constexpr int kIterations = 40;

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_run ARCHIVE\n");
        return 2;
    }
    const QString archive = QString::fromLocal8Bit(argv[1]);
    WorkerClient worker;
    worker.setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
    RunPanel panel(&worker, nullptr);
    const auto model = bench::loadInWorker(worker, archive);
    if (!model) {
        return 1;
    }
    panel.setModel(*model);
    panel.setInput(0, QStringLiteral("random"), QStringLiteral("1x3x224x224:float32:7"));
    panel.warmupBox()->setValue(kWarmup);
    panel.iterationsBox()->setValue(kIterations);

    auto guiRun = [&](bool profile) -> RunResult {
        panel.profileBox()->setChecked(profile);
        QSignalSpy shown(&panel, &RunPanel::runShown);
        QSignalSpy failed(&panel, &RunPanel::runFailed);
        panel.runOnce();
        while (shown.isEmpty() && failed.isEmpty()) {
            shown.wait(600000);
        }
        if (!failed.isEmpty()) {
            std::fprintf(stderr, "run failed: %s\n", qPrintable(panel.statusText()));
            std::exit(1);
        }
        return *panel.lastResult();
    };

    torch::jit::Module module = torch::jit::load(archive.toStdString());
    module.eval();
    const auto input = torch::randn({1, 3, 224, 224});
    auto rawRun = [&]() {
        c10::InferenceMode guard;
        std::vector<c10::IValue> inputs{input};
        for (int i = 0; i < kWarmup; ++i) {
            module.forward(inputs);
        }
        std::vector<double> samples;
        for (int i = 0; i < kIterations; ++i) {
            const auto start = std::chrono::steady_clock::now();
            module.forward(inputs);
            samples.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
        }
        return median(samples);
    };

    std::vector<double> gui, raw;
    for (int round = 0; round < 3; ++round) {
        gui.push_back(guiRun(false).stats.p50);
        raw.push_back(rawRun());
        std::printf("round %d: GUI-reported p50 %.3f ms, raw LibTorch loop p50 %.3f ms\n",
                    round + 1, gui.back(), raw.back());
    }
    std::printf("forward p50, GUI / raw LibTorch: %.3f ms / %.3f ms = %.3f (target 0.97 .. 1.03)\n",
                median(gui), median(raw), median(gui) / median(raw));

    std::vector<double> before, overhead, after;
    for (int round = 0; round < 3; ++round) {
        before.push_back(guiRun(false).stats.p50);
        const RunResult profiled = guiRun(true);
        overhead.push_back(profiled.profile.wallMs / profiled.stats.p50);
        after.push_back(guiRun(false).stats.p50);
    }
    std::printf("profiling overhead, profiled run / plain p50 of the same request: %.3f\n",
                median(overhead));
    std::printf("plain runs after profiled ones / before: %.3f ms / %.3f ms = %.3f (no cost left "
                "behind: ~1.00)\n",
                median(after), median(before), median(after) / median(before));
    return 0;
}
