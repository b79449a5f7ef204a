// The live demo's pipeline against a raw forward loop, measured side by side in one run:
//  - frames per second when the Run workspace plays a folder of frames (decoded and preprocessed
//    in the worker, sent back as raw bytes, interpreted and drawn on the Result page) against a
//    raw torch::jit::Module::forward loop in this process on the same frames already decoded and
//    preprocessed, interleaved three times (target: the pipeline costs at most 10% of forward);
//  - drawing results on a 1080p frame: detection (20 boxes with names), segmentation (21
//    classes), classification and a page (target: at most 2 ms each).
//   bench_pipeline ARCHIVE   (ResNet-18 from scripts/bench.sh)
#include "bench_support.h"
#include "bench_worker.h"

#include <frame_player.h>
#include <run_panel.h>
#include <task_render.h>
#include <worker_client.h>

#include <torch/script.h>

#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio>
#include <optional>

using namespace scriptscope;
using namespace scriptscope::bench;

namespace {

constexpr int kFrames = 60;
constexpr int kSize = 224;

cv::Mat frameImage(int i) {
    cv::Mat image(kSize, kSize, CV_8UC3);
    cv::randu(image, cv::Scalar::all(0), cv::Scalar::all(255));
    cv::GaussianBlur(image, image, {0, 0}, 3);
    cv::circle(image, {20 + 3 * i, 112}, 30, cv::Scalar(40, 200, 90), cv::FILLED);
    return image;
}

TaskResult detection() {
    TaskResult r;
    r.kind = TaskKind::Detection;
    std::vector<DetectedObject> objects;
    for (int i = 0; i < 20; ++i) {
        DetectedObject o;
        o.x0 = 80.0 * i;
        o.y0 = 40.0 * i;
        o.x1 = o.x0 + 300;
        o.y1 = o.y0 + 260;
        o.score = 0.5 + i / 50.0;
        o.label = i % 7;
        o.name = "class name " + std::to_string(i % 7);
        objects.push_back(o);
    }
    r.detections.push_back(objects);
    return r;
}

TaskResult segmentation() {
    TaskResult r;
    r.kind = TaskKind::Segmentation;
    r.width = r.height = 520;
    r.classMap.resize(520 * 520);
    for (int y = 0; y < 520; ++y) {
        for (int x = 0; x < 520; ++x) {
            r.classMap[static_cast<size_t>(y * 520 + x)] = ((x / 60) + (y / 80)) % 21;
        }
    }
    for (int c = 0; c < 21; ++c) {
        r.classesPresent.emplace_back(c, 520 * 520 / 21);
        r.classNames.push_back("class " + std::to_string(c));
    }
    return r;
}

TaskResult classification() {
    TaskResult r;
    r.kind = TaskKind::Classification;
    for (int i = 0; i < 5; ++i) {
        r.topK.push_back({i, 0.5 / (i + 1), "a class with a long name " + std::to_string(i)});
    }
    return r;
}

TaskResult page() {
    TaskResult r;
    r.kind = TaskKind::Page;
    r.corners = {{500, 100}, {1400, 160}, {1500, 1000}, {400, 950}};
    r.pageWidth = 200;
    r.pageHeight = 280;
    r.pageRgb.assign(200 * 280 * 3, 230);
    r.topK = {{0, 0.9, "letter"}, {1, 0.05, "invoice"}, {2, 0.05, "chart"}};
    return r;
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_pipeline ARCHIVE\n");
        return 2;
    }
    const QString archive = QString::fromLocal8Bit(argv[1]);

    // ---- Drawing on 1080p ----
    const cv::Mat hd(1080, 1920, CV_8UC3, cv::Scalar(90, 120, 150));
    std::printf("Drawing results on a 1920x1080 frame (median of 40; target <= 2 ms added):\n"
                "  %-28s %9s %11s\n",
                "", "in place", "on a copy");
    for (const auto& [name, result] : {std::pair{"detection, 20 boxes", detection()},
                                       std::pair{"segmentation, 21 classes", segmentation()},
                                       std::pair{"classification, top 5", classification()},
                                       std::pair{"page, corners and inset", page()}}) {
        std::vector<double> inPlace, copied;
        for (int i = 0; i < 40; ++i) {
            cv::Mat frame = hd.clone(); // a decoded frame the pipeline owns
            auto start = Clock::now();
            renderTaskInPlace(frame, result, {});
            inPlace.push_back(milliseconds(start));
            start = Clock::now();
            const cv::Mat drawn = renderTask(hd, result, {});
            copied.push_back(milliseconds(start));
        }
        std::printf("  %-28s %6.2f ms %8.2f ms\n", name, median(inPlace), median(copied));
    }

    // ---- The frames, as files (the Play path decodes them) and as tensors (the raw loop) ----
    QTemporaryDir dir;
    std::vector<torch::Tensor> tensors;
    for (int i = 0; i < kFrames; ++i) {
        const cv::Mat image = frameImage(i);
        cv::imwrite(QDir(dir.path())
                        .filePath(QStringLiteral("frame_%1.jpg").arg(i, 3, 10, QLatin1Char('0')))
                        .toStdString(),
                    image);
        cv::Mat rgb;
        cv::cvtColor(image, rgb, cv::COLOR_BGR2RGB);
        tensors.push_back(torch::from_blob(rgb.data, {kSize, kSize, 3}, torch::kUInt8)
                              .to(torch::kFloat32)
                              .div(255)
                              .permute({2, 0, 1})
                              .unsqueeze(0)
                              .contiguous());
    }
    torch::jit::Module raw = torch::jit::load(archive.toStdString());
    raw.eval();
    c10::InferenceMode guard;
    auto rawFps = [&]() {
        for (int i = 0; i < 5; ++i) {
            raw.forward({tensors[static_cast<size_t>(i)]});
        }
        const auto start = Clock::now();
        for (const auto& t : tensors) {
            raw.forward({t});
        }
        return kFrames / (milliseconds(start) / 1000);
    };

    WorkerClient worker;
    worker.setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
    RunPanel panel(&worker, nullptr);
    const auto model = loadInWorker(worker, archive);
    if (!model) {
        return 1;
    }
    panel.setModel(*model);
    panel.setInput(0, QStringLiteral("image"),
                   QDir(dir.path()).filePath(QStringLiteral("frame_000.jpg")));
    FramePlayer* player = panel.framePlayer();
    player->setInterval(0);
    {
        QSignalSpy changed(player, &FramePlayer::sourceChanged);
        QSignalSpy shown(player, &FramePlayer::frameShown);
        player->openSource(dir.path());
        if (!shown.wait(600000)) {
            std::fprintf(stderr, "the folder did not play: %s\n", qPrintable(player->statusText()));
            return 1;
        }
    }
    auto playFps = [&]() {
        player->showFrame(0);
        QSignalSpy first(player, &FramePlayer::frameShown);
        first.wait(600000);
        QSignalSpy stopped(player, &FramePlayer::playingChanged);
        const qint64 before = player->framesShown();
        const auto start = Clock::now();
        player->setPlaying(true);
        while (player->playing()) {
            stopped.wait(600000);
        }
        const double seconds = milliseconds(start) / 1000;
        return static_cast<double>(player->framesShown() - before) / seconds;
    };
    std::printf("\nResNet-18 on %d frames of %dx%d (Play: JPEG decode, preprocess, transfer, "
                "interpret, draw; raw: forward on tensors ready in this process):\n",
                kFrames, kSize, kSize);
    std::printf("  round   raw fps   Play fps   pipeline overhead\n");
    std::vector<double> overheads;
    for (int round = 1; round <= 3; ++round) {
        const double r = rawFps();
        const double p = playFps();
        overheads.push_back(r / p - 1);
        std::printf("  %5d  %8.1f  %9.1f   %+6.1f%% of forward\n", round, r, p, 100 * (r / p - 1));
    }
    std::printf("  median overhead %+.1f%% (target <= 10%%)\n", 100 * median(overheads));
    return 0;
}
