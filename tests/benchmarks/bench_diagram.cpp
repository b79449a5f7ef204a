// The diagram's targets, measured in one run through the GUI and the real worker (offscreen):
//  - first picture of each model's inlined forward, opened collapsed: from the model shown to the
//    diagram drawn (target: at most 1 s), beside the time the worker took to open the model;
//  - expanding each of the root's groups on its own (target: the slowest at most 200 ms);
//  - expanding everything (the largest model's thousands of nodes): it finishes, and the longest
//    gap between ticks of a 5 ms timer on the GUI thread meanwhile (target: at most 50 ms);
//  - pan and zoom over the fully expanded diagram: the time to paint each 1280x800 frame
//    offscreen (target: p90 at most 16 ms);
//  - a graph with a 2,000-way fan-out: ends in a picture within the layout time limit.
//   bench_diagram [--op-library PATH] MODEL.pt...
// (scripts/bench.sh passes torchvision's operator library, ResNet-50 and Faster R-CNN)
#include "graph/graph_samples.h"

#include <graph_diagram.h>
#include <main_window.h>
#include <model_workspace.h>
#include <worker_client.h>

#include <QApplication>
#include <QCheckBox>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <cstdio>

using namespace scriptscope;

namespace {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

double ms(const QElapsedTimer& t) {
    return static_cast<double>(t.nsecsElapsed()) / 1e6;
}

struct Ticker {
    QElapsedTimer since;
    double longest = 0;
    QTimer timer;
    Ticker() {
        timer.setInterval(5);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            longest = std::max(longest, ms(since));
            since.restart();
        });
    }
    void start() {
        longest = 0;
        since.start();
        timer.start();
    }
    double stop() {
        timer.stop();
        return longest;
    }
};

bool waitForPicture(GraphDiagram* diagram, int timeoutMs) {
    return QTest::qWaitFor(
               [&] {
                   return (diagram->hasGraph() && diagram->picture() &&
                           !diagram->layoutPending()) ||
                          diagram->statusText().startsWith(QStringLiteral("The diagram could not"));
               },
               timeoutMs) &&
           diagram->hasGraph();
}

// Paints frames of the viewport's size along a path over the picture: pans at two scales, then
// a zoom from fit to 1:1 about the centre. Returns the frame times.
std::vector<double> panAndZoom(const GraphDiagram* diagram) {
    const DiagramPicture* pic = diagram->picture();
    const double w = 1280, h = 800;
    QImage frame(static_cast<int>(w), static_cast<int>(h), QImage::Format_ARGB32_Premultiplied);
    std::vector<double> times;
    auto paintAt = [&](double x, double y, double scale) {
        QElapsedTimer t;
        t.start();
        frame.fill(Qt::white);
        QPainter p(&frame);
        p.scale(scale, scale);
        p.translate(-x, -y);
        diagram->paint(p, {x, y, w / scale, h / scale}, scale);
        p.end();
        times.push_back(ms(t));
    };
    for (const double scale : {1.0, 0.5}) {
        const int steps = 60;
        for (int i = 0; i < steps; ++i) { // down the diagram, zig-zagging across it
            const double y = (pic->layout.height - h / scale) * i / (steps - 1);
            const double x = (pic->layout.width - w / scale) * ((i % 10) / 9.0);
            paintAt(std::max(0.0, x), std::max(0.0, y), scale);
        }
    }
    const double fit = std::min(w / pic->layout.width, h / pic->layout.height);
    for (int i = 0; i < 60; ++i) {
        const double scale = fit * std::pow(1.0 / fit, i / 59.0);
        const double cx = pic->layout.width / 2, cy = pic->layout.height / 2;
        paintAt(cx - w / scale / 2, cy - h / scale / 2, scale);
    }
    return times;
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    QStandardPaths::setTestModeEnabled(true); // the person's settings stay untouched
    QSettings().clear();
    int firstModel = 1;
    if (argc > 2 && std::string(argv[1]) == "--op-library") { // torchvision's, for detectors
        QSettings().setValue(QStringLiteral("operatorLibraries"),
                             QStringList{QString::fromLocal8Bit(argv[2])});
        firstModel = 3;
    }
    if (argc <= firstModel) {
        std::fprintf(stderr, "usage: bench_diagram [--op-library PATH] MODEL.pt...\n");
        return 2;
    }
    WorkerClient worker;
    worker.setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
    MainWindow window(&worker);
    window.resize(1280, 800);
    window.show();
    GraphDiagram* diagram = window.modelWorkspace()->diagram();
    Ticker ticker;
    int failures = 0;
    std::printf("%-14s %10s %10s %8s %10s %10s %9s %9s %10s %9s\n", "model", "open ms",
                "picture ms", "/1 s", "expand max", "/200 ms", "all ms", "gap ms", "frame p90",
                "/16 ms");

    for (int a = firstModel; a < argc; ++a) {
        const QString path = QString::fromLocal8Bit(argv[a]);
        QSignalSpy shown(&window, &MainWindow::modelShown);
        QElapsedTimer open;
        open.start();
        window.openFile(path);
        if (!shown.wait(600000)) {
            std::fprintf(stderr, "%s did not open\n", argv[a]);
            return 1;
        }
        const double openMs = ms(open);
        // The Graph tab on the inlined forward: the diagram is asked for now.
        QElapsedTimer first;
        first.start();
        ticker.start();
        auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("inspectorTabs"));
        tabs->setCurrentIndex(2);
        window.findChild<QCheckBox*>(QStringLiteral("inlinedGraph"))->setChecked(true);
        if (!waitForPicture(diagram, 120000)) {
            std::fprintf(stderr, "no picture of %s: %s\n", argv[a],
                         qPrintable(diagram->statusText()));
            return 1;
        }
        const double pictureMs = ms(first);
        // Each of the root's groups, expanded on its own and collapsed again.
        std::vector<int> groups;
        for (const VisibleItem& item : diagram->picture()->visible.items) {
            if (item.isGroup) {
                groups.push_back(item.id);
            }
        }
        double expandMax = 0;
        for (const int g : groups) {
            QElapsedTimer t;
            t.start();
            diagram->setExpanded(g, true);
            waitForPicture(diagram, 120000);
            expandMax = std::max(expandMax, ms(t));
            diagram->setExpanded(g, false);
            waitForPicture(diagram, 120000);
        }
        // Everything open.
        QElapsedTimer all;
        all.start();
        ticker.start();
        diagram->expandAll();
        const bool finished = waitForPicture(diagram, 300000);
        const double allMs = ms(all);
        const double gap = ticker.stop();
        const size_t items = diagram->picture()->visible.items.size();
        const std::vector<double> frames = panAndZoom(diagram);
        const double p90 = percentile(frames, 0.9);
        const QString name = QFileInfo(path).completeBaseName();
        std::printf("%-14s %10.0f %10.0f %8.2f %10.0f %10.2f %9.0f %9.1f %10.2f %9.2f\n",
                    qPrintable(name), openMs, pictureMs, pictureMs / 1000, expandMax,
                    expandMax / 200, allMs, gap, p90, p90 / 16);
        std::printf("%-14s %zu nodes, %zu groups; collapsed: %zu root groups; expanded: %zu items, "
                    "%zu edges, %zu open groups, %zu by the simple layout%s\n",
                    "", diagram->graph().nodes.size(), diagram->graph().groups.size(),
                    groups.size(), items, diagram->picture()->layout.edges.size(),
                    diagram->picture()->layout.scenes, diagram->picture()->layout.simpleScenes,
                    finished ? "" : " (DID NOT FINISH)");
        if (!diagram->statusText().isEmpty()) {
            std::printf("%-14s %s\n", "",
                        qPrintable(diagram->statusText().replace(QLatin1Char('\n'),
                                                                 QStringLiteral(" | "))));
        }
        failures += !finished;
    }

    // A 2,000-way fan-out.
    const GraphModel g = scriptscope::test::fanOutGraph(2000);
    const double limit = 8;
    diagram->setLayoutTimeout(limit);
    QElapsedTimer fan;
    fan.start();
    ticker.start();
    diagram->setGraph(g);
    const bool drawn = waitForPicture(diagram, 120000);
    const double fanMs = ms(fan);
    const double fanGap = ticker.stop();
    std::printf(
        "fan-out 2000: %s in %.0f ms (limit %.0f s, ratio %.2f), longest GUI gap %.1f ms; %s\n",
        drawn ? "drawn" : "NOT DRAWN", fanMs, limit, fanMs / (limit * 1000), fanGap,
        qPrintable(diagram->statusText().replace(QLatin1Char('\n'), QStringLiteral(" | "))));
    return failures + !drawn;
}
