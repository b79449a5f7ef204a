// The warp editor's speed, measured in one run (ratios side by side; the machine is noisy):
//  - from a mouse move on a corner handle to the painted preview, for a 1920x1080 and a 3840x2160
//    image in a 1920x1080 window (targets: median at most 16 ms and 33 ms);
//  - a full-resolution warp through the editor's path (QImage + my_ops::warp_perspective) against
//    raw cv::warpPerspective on the same image, interleaved (target: at most 1.10x).
//   bench_warp
#include <image_canvas.h>
#include <warp_editor.h>
#include <warp_renderer.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMouseEvent>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace scriptscope;

namespace {

double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double at = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(at));
    const auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

// A photo-like test image: gradients, a checkerboard and some noise (no flat areas to flatter
// the warp).
QImage makeImage(int width, int height) {
    QImage image(width, height, QImage::Format_RGBA8888);
    cv::Mat view(height, width, CV_8UC4, image.bits(), static_cast<size_t>(image.bytesPerLine()));
    cv::randu(view, cv::Scalar::all(0), cv::Scalar::all(40));
    for (int y = 0; y < height; ++y) {
        auto* row = image.scanLine(y);
        for (int x = 0; x < width; ++x) {
            const bool check = ((x / 64) + (y / 64)) % 2 == 0;
            row[4 * x + 0] = static_cast<uchar>(row[4 * x] + x * 200 / width);
            row[4 * x + 1] = static_cast<uchar>(row[4 * x + 1] + y * 200 / height);
            row[4 * x + 2] = static_cast<uchar>(row[4 * x + 2] + (check ? 200 : 0));
            row[4 * x + 3] = 255;
        }
    }
    return image;
}

void measureLatency(WarpEditor& editor, const QImage& image, const char* label, double target) {
    editor.setImage(image, QString());
    editor.fitViews();
    QApplication::processEvents();
    ImageCanvas* view = editor.outputView();
    QWidget* viewport = view->viewport();
    const auto quad = view->handles();
    const QPoint start = view->mapFromScene(QPointF((*quad)[2].x, (*quad)[2].y));
    QMouseEvent press(QEvent::MouseButtonPress, start, viewport->mapToGlobal(start), Qt::LeftButton,
                      Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(viewport, &press);

    std::vector<double> samples;
    QElapsedTimer clock;
    quint64 wanted = 0;
    bool done = false;
    QEventLoop loop;
    QObject::connect(view, &ImageCanvas::painted, &loop, [&]() {
        if (!done && wanted != 0 && editor.shownRender() >= wanted) {
            samples.push_back(static_cast<double>(clock.nsecsElapsed()) / 1e6);
            done = true;
            loop.quit();
        }
    });
    constexpr int kMoves = 120;
    for (int i = 0; i < kMoves + 10; ++i) {
        // The corner circles about its start, 40 screen pixels out: the warp changes every move.
        const double angle = i * 0.21;
        const QPoint at =
            start - QPoint(60, 40) +
            QPoint(static_cast<int>(40 * std::cos(angle)), static_cast<int>(40 * std::sin(angle)));
        done = false;
        clock.start();
        QMouseEvent move(QEvent::MouseMove, at, viewport->mapToGlobal(at), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(viewport, &move);
        wanted = editor.lastRequestedRender();
        QTimer::singleShot(2000, &loop, &QEventLoop::quit);
        if (!done) {
            loop.exec();
        }
        if (i < 10) {
            samples.clear(); // warm-up: first paints allocate caches
        }
    }
    QMouseEvent release(QEvent::MouseButtonRelease, start, viewport->mapToGlobal(start),
                        Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(viewport, &release);
    const double p50 = percentile(samples, 0.5), p90 = percentile(samples, 0.9);
    std::printf("mouse move -> painted preview, %s: median %.2f ms, p90 %.2f ms, max %.2f ms "
                "(%zu moves, preview %dx%d); median / target %.0f ms = %.2f\n",
                label, p50, p90, percentile(samples, 1.0), samples.size(), view->picture().width(),
                view->picture().height(), target, p50 / target);
}

void measureFullResolution(const QImage& image, const char* label) {
    const Homography h = {0.92, 0.08, 12.5, -0.06, 1.05, 7.25, 0.00004, -0.00002, 1.0};
    WarpJob job;
    job.source = image;
    job.matrix = h;
    job.size = image.size();
    job.fullResolution = true;
    const cv::Mat src(image.height(), image.width(), CV_8UC4, const_cast<uchar*>(image.constBits()),
                      static_cast<size_t>(image.bytesPerLine()));
    std::vector<double> editorTimes, rawTimes;
    for (int i = 0; i < 23; ++i) {
        QElapsedTimer clock;
        clock.start();
        const WarpResult result = renderWarp(job);
        const double editorMs = static_cast<double>(clock.nsecsElapsed()) / 1e6;
        if (!result.error.isEmpty()) {
            std::fprintf(stderr, "warp failed: %s\n", qPrintable(result.error));
            std::exit(1);
        }
        clock.restart();
        cv::Mat dst;
        cv::warpPerspective(src, dst, cv::Matx33d(h.data()), src.size(), cv::INTER_LINEAR,
                            cv::BORDER_CONSTANT, cv::Scalar());
        const double rawMs = static_cast<double>(clock.nsecsElapsed()) / 1e6;
        if (i >= 3) {
            editorTimes.push_back(editorMs);
            rawTimes.push_back(rawMs);
        }
    }
    const double editor = percentile(editorTimes, 0.5), raw = percentile(rawTimes, 0.5);
    std::printf("full-resolution warp, %s: editor %.2f ms, raw cv::warpPerspective %.2f ms, ratio "
                "%.3f (target at most 1.10)\n",
                label, editor, raw, editor / raw);
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    WarpEditor editor;
    editor.resize(1920, 1080);
    editor.show();
    const QImage hd = makeImage(1920, 1080);
    const QImage uhd = makeImage(3840, 2160);
    std::printf("threads: OpenCV %d\n", cv::getNumThreads());
    measureLatency(editor, hd, "1920x1080", 16);
    measureLatency(editor, uhd, "3840x2160", 33);
    measureFullResolution(hd, "1920x1080");
    measureFullResolution(uhd, "3840x2160");
    return 0;
}
