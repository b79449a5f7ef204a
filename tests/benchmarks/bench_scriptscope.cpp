// Side-by-side benchmarks: each pair is measured interleaved in one run, so load on the shared
// machine affects both sides alike, and the ratio is what counts.
//   bench_scriptscope RESNET18_ARCHIVE
#include "bench_support.h"

#include <input_spec.h>
#include <session.h>
#include <warp_perspective.h>

#include <ATen/Parallel.h>
#include <opencv2/imgproc.hpp>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

using scriptscope::bench::Clock;
using scriptscope::bench::median;
using scriptscope::bench::milliseconds;

struct Pair {
    std::vector<double> a, b;
};

// Alternates a and b `rounds` times, `calls` calls each, recording every call.
Pair interleave(int rounds, int calls, const std::function<void()>& a,
                const std::function<void()>& b) {
    Pair p;
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < calls; ++i) {
            const auto t = Clock::now();
            a();
            p.a.push_back(milliseconds(t));
        }
        for (int i = 0; i < calls; ++i) {
            const auto t = Clock::now();
            b();
            p.b.push_back(milliseconds(t));
        }
    }
    return p;
}

void report(const char* what, const char* aName, const char* bName, const Pair& p,
            const char* target) {
    const double a = median(p.a), b = median(p.b);
    std::printf("%-46s %-22s %9.3f ms   %-22s %9.3f ms   ratio %.3f   (target %s)\n", what, aName,
                a, bName, b, a / b, target);
}

void warpBenchmark() {
    const double h[9] = {0.92, 0.08, 12.5, -0.06, 1.05, 7.25, 0.00004, -0.00002, 1.0};
    const cv::Mat homography(3, 3, CV_64F, const_cast<double*>(h));
    const auto warp = torch::from_blob(const_cast<double*>(h), {3, 3}, torch::kFloat64);
    struct Case {
        const char* name;
        torch::Tensor image;
        int type;
    };
    const Case cases[] = {
        {"warp 1920x1080 uint8 HxWx3", torch::randint(0, 256, {1080, 1920, 3}, torch::kUInt8),
         CV_8UC3},
        {"warp 1920x1080 float32 HxW", torch::rand({1080, 1920}), CV_32FC1},
    };
    for (const auto& c : cases) {
        const cv::Mat src(1080, 1920, c.type, c.image.data_ptr());
        my_ops::WarpOptions options;
        auto viaOperator = [&]() { (void)my_ops::warp_perspective(c.image, warp, options); };
        // A fresh output per call, as the operator returns a fresh tensor (and cv2 a fresh array).
        auto rawOpenCv = [&]() {
            cv::Mat dst;
            cv::warpPerspective(src, dst, homography, src.size());
        };
        viaOperator();
        rawOpenCv();
        report(c.name, "my_ops::warp", "cv::warpPerspective",
               interleave(10, 10, viaOperator, rawOpenCv), "<= 1.10");
    }
}

void forwardBenchmark(const std::string& archive) {
    scriptscope::Session session;
    if (!session.load(archive).ok()) {
        std::printf("cannot load %s\n", archive.c_str());
        std::exit(1);
    }
    scriptscope::RunRequest request;
    request.inputs.push_back(scriptscope::parseInputSpec("random:1x3x224x224").value());
    request.warmup = 0;
    request.iterations = 5;

    auto raw = torch::jit::load(archive);
    std::vector<c10::IValue> inputs{torch::randn({1, 3, 224, 224})};
    // Warm both up.
    (void)session.run(request);
    {
        c10::InferenceMode guard;
        raw.forward(inputs);
    }
    std::vector<double> engineSamples, rawSamples;
    for (int round = 0; round < 12; ++round) {
        const auto result = session.run(request);
        engineSamples.insert(engineSamples.end(), result->samplesMs.begin(),
                             result->samplesMs.end());
        c10::InferenceMode guard;
        for (int i = 0; i < request.iterations; ++i) {
            const auto t = Clock::now();
            raw.forward(inputs);
            rawSamples.push_back(milliseconds(t));
        }
    }
    report("forward p50, ResNet-18 1x3x224x224, CPU", "engine (reported)", "raw LibTorch loop",
           Pair{engineSamples, rawSamples}, "within 3%");
}

void loadBenchmark(const std::string& archive) {
    auto engineLoad = [&]() {
        scriptscope::Session session;
        if (!session.load(archive).ok()) {
            std::exit(1);
        }
    };
    auto rawLoad = [&]() { (void)torch::jit::load(archive); };
    report("load + inspect (tree, code, graphs), ResNet-18", "engine", "torch::jit::load",
           interleave(8, 2, engineLoad, rawLoad), "<= 1.25");
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_scriptscope RESNET18_ARCHIVE\n");
        return 2;
    }
    std::printf("LibTorch %s, %d intra-op threads\n", scriptscope::libtorchVersion().c_str(),
                at::get_num_threads());
    warpBenchmark();
    forwardBenchmark(argv[1]);
    loadBenchmark(argv[1]);
    return 0;
}
