// Frame sources for a live demo: image folders, video files and cameras (media/frame_source), the
// protocol's frame messages, and the CLI's headless run --source ... --render OUT.mp4|DIR on the
// bundled trained demo. The video is made by the fixtures with cv2.VideoWriter.
#include "test_support.h"

#include <frame_source.h>
#include <protocol.h>
#include <task_render.h>
#include <task_result.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

using namespace scriptscope;
using scriptscope::test::fixture;

namespace {

test::ProgramResult cli(const QStringList& arguments) {
    return test::runProgram(QStringLiteral(SCRIPTSCOPE_CLI_PATH), arguments, 240000);
}

QString sources(const char* name) {
    return QString::fromStdString(fixture(std::string("sources/") + name));
}

const QString kDemo = QStringLiteral(SCRIPTSCOPE_SOURCE_DIR "/resources/demo_model.pt");

int countFrames(const std::string& video, cv::Size* size = nullptr) {
    cv::VideoCapture capture(video, cv::CAP_FFMPEG);
    int frames = 0;
    cv::Mat frame;
    while (capture.read(frame)) {
        if (size) {
            *size = frame.size();
        }
        ++frames;
    }
    return frames;
}

} // namespace

class TestSources : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void folderListsImagesInNaturalOrderAndSaysWhatItLeftOut() {
        auto spec = parseSourceSpec(fixture("sources/folder"));
        QVERIFY(spec);
        QCOMPARE(spec->kind, SourceSpec::Kind::Folder);
        auto source = FrameSource::open(*spec);
        QVERIFY2(source, source ? "" : source.error().message.c_str());
        const SourceInfo& info = (*source)->info();
        QCOMPARE(info.frames, int64_t{6}); // five pages and broken.png; notes.txt left out
        QVERIFY(QString::fromStdString(info.files.front()).endsWith(QLatin1String("broken.png")));
        QVERIFY(QString::fromStdString(info.files[1]).endsWith(QLatin1String("page_01.png")));
        QCOMPARE(info.notes.size(), size_t{1});
        QVERIFY(QString::fromStdString(info.notes[0]).contains(QLatin1String("notes.txt")));
        // The unreadable image is an error for its index only; the next one reads.
        auto broken = (*source)->read(0);
        QVERIFY(!broken);
        QVERIFY(
            QString::fromStdString(broken.error().message).contains(QLatin1String("broken.png")));
        auto page = (*source)->read(1);
        QVERIFY(page);
        QCOMPARE(page->bgr.cols, 640);
        QCOMPARE(page->bgr.type(), CV_8UC3);
        QVERIFY((*source)->atEnd(6));
        QVERIFY(!(*source)->atEnd(5));
    }

    void videoReadsForwardSkipsAndEnds() {
        auto spec = parseSourceSpec(fixture("sources/clip.mp4"));
        QVERIFY(spec);
        QCOMPARE(spec->kind, SourceSpec::Kind::Video);
        auto source = FrameSource::open(*spec);
        QVERIFY2(source, source ? "" : source.error().message.c_str());
        FrameSource& s = **source;
        QCOMPARE(s.info().frames, int64_t{20});
        QCOMPARE(s.info().fps, 10.0);
        QCOMPARE(s.info().width, 640);
        QVERIFY(QString::fromStdString(s.info().description).contains(QLatin1String("20 frames")));
        auto first = s.read(0);
        QVERIFY(first);
        // Newest frame wins: frames are skipped without decoding them, then read on.
        QCOMPARE(s.skip(4), int64_t{4});
        auto sixth = s.read(5);
        QVERIFY(sixth);
        QCOMPARE(sixth->index, int64_t{5});
        // Asking for a later frame skips to it; an earlier one seeks back.
        QVERIFY(s.read(12));
        auto again = s.read(2);
        QVERIFY(again);
        QCOMPARE(again->index, int64_t{2});
        QVERIFY(s.atEnd(20));
    }

    void corruptVideoAndMissingFilesAreMessages() {
        auto spec = parseSourceSpec(fixture("sources/corrupt.mp4"));
        QVERIFY(spec);
        auto source = FrameSource::open(*spec);
        if (source) {
            // FFmpeg may accept the header it recognises: then no frame decodes, and that is
            // said per frame, never a crash.
            auto frame = (*source)->read(0);
            QVERIFY(!frame);
            QVERIFY(!frame.error().message.empty());
        } else {
            QVERIFY2(
                QString::fromStdString(source.error().message).contains(QLatin1String("FFmpeg")),
                source.error().message.c_str());
        }
        auto missing = parseSourceSpec("/nonexistent/clip.mp4");
        QVERIFY(!missing);
        QVERIFY(QString::fromStdString(missing.error().message).contains(QLatin1String("no such")));
        QVERIFY(!parseSourceSpec("camera:x"));
    }

    void aMissingCameraIsExplained() {
        if (!listCameras().empty()) {
            QSKIP("this machine has a camera");
        }
        auto spec = parseSourceSpec("camera:0");
        QVERIFY(spec);
        QCOMPARE(spec->kind, SourceSpec::Kind::Camera);
        auto source = FrameSource::open(*spec);
        QVERIFY(!source);
        const QString message = QString::fromStdString(source.error().message);
        QVERIFY2(message.contains(QLatin1String("camera")), qPrintable(message));
        QVERIFY2(message.contains(QLatin1String("/dev/video")), qPrintable(message));
        QCOMPARE(QString::fromStdString(noCameraMessage()), message);
    }

    void livePacerDropsWhatCameWhileTheModelRan() {
        LivePacer pacer;
        pacer.start(100, 0); // 10 ms per frame
        QCOMPARE(pacer.due(-1), int64_t{0});
        QVERIFY(pacer.waitMs(5) > 0);
        QTest::qSleep(55);
        const int64_t due = pacer.due(0);
        QVERIFY2(due >= 5, std::to_string(due).c_str()); // frames 1..4 dropped
        QCOMPARE(pacer.waitMs(due), 0.0);
        LivePacer folder;
        folder.start(0, 3);
        QCOMPARE(folder.due(3), int64_t{4}); // a folder is never dropped from
    }

    void sinkWritesVideoAndFolder() {
        QTemporaryDir dir;
        const std::string video = dir.filePath(QStringLiteral("out.mp4")).toStdString();
        auto sink = FrameSink::open(video, 12);
        QVERIFY(sink);
        QVERIFY((*sink)->isVideo());
        const cv::Mat red(120, 160, CV_8UC3, cv::Scalar(0, 0, 255));
        const cv::Mat bigger(240, 320, CV_8UC3, cv::Scalar(0, 255, 0));
        for (int i = 0; i < 7; ++i) {
            QVERIFY(!(*sink)->write(i == 3 ? bigger : red, {}));
        }
        (*sink)->close();
        cv::Size size;
        QCOMPARE(countFrames(video, &size), 7);
        QCOMPARE(size, cv::Size(160, 120)); // another size is scaled to the first one's
        const std::string folder = dir.filePath(QStringLiteral("frames")).toStdString();
        auto pngs = FrameSink::open(folder, 0);
        QVERIFY(pngs);
        QVERIFY(!(*pngs)->write(red, "page_01.jpg"));
        QVERIFY(!(*pngs)->write(red, {}));
        QVERIFY(QFile::exists(QString::fromStdString(folder + "/page_01.png")));
        QVERIFY(QFile::exists(QString::fromStdString(folder + "/frame_000002.png")));
    }

    void frameResultsTravelAsRawBytes() {
        FrameResult f;
        f.index = 7;
        f.name = "frame 8";
        f.dropped = 3;
        f.width = 4;
        f.height = 2;
        f.bgr.resize(4 * 2 * 3);
        for (size_t i = 0; i < f.bgr.size(); ++i) {
            f.bgr[i] = static_cast<unsigned char>(i * 7);
        }
        f.hasRun = true;
        f.run.samplesMs = {1.5};
        f.run.method = "forward";
        const auto back = protocol::frameResultFromCbor(protocol::toCbor(f));
        QCOMPARE(back.index, int64_t{7});
        QCOMPARE(back.dropped, int64_t{3});
        QCOMPARE(back.bgr, f.bgr);
        QVERIFY(back.hasRun);
        QCOMPARE(back.run.samplesMs, f.run.samplesMs);
        // Bytes that do not match the size are refused, not read past.
        QCborMap wrong = protocol::toCbor(f);
        wrong.insert(QLatin1String("width"), 400);
        const auto refused = protocol::frameResultFromCbor(wrong);
        QVERIFY(refused.bgr.empty());
        QCOMPARE(refused.width, 0);
        SourceInfo info;
        info.kind = SourceSpec::Kind::Folder;
        info.frames = 6;
        info.files = {"a.png", "b.png"};
        info.notes = {"notes.txt: not an image"};
        const auto infoBack = protocol::sourceInfoFromCbor(protocol::toCbor(info));
        QCOMPARE(infoBack.kind, SourceSpec::Kind::Folder);
        QCOMPARE(infoBack.files, info.files);
        QCOMPARE(infoBack.notes, info.notes);
    }

    void pagesAreInterpretedAndDrawn() {
        auto tensor = [](std::vector<int64_t> shape, std::vector<float> values, const char* key) {
            OutputValue v;
            v.kind = OutputValue::Kind::Tensor;
            v.key = std::string("'") + key + "'";
            v.shape = std::move(shape);
            v.numel = static_cast<int64_t>(values.size());
            v.values = std::move(values);
            v.max = v.values.empty() ? 0 : *std::max_element(v.values.begin(), v.values.end());
            return v;
        };
        OutputValue dict;
        dict.kind = OutputValue::Kind::Dict;
        dict.children.push_back(tensor({4, 2}, {10, 20, 90, 22, 88, 70, 12, 68}, "corners"));
        dict.children.push_back(tensor({1, 3, 2, 2}, std::vector<float>(12, 0.5F), "page"));
        dict.children.push_back(tensor({3}, {0.1F, 0.7F, 0.2F}, "scores"));
        const LabelSet kinds = labelsFromExtraFiles({{"labels.txt", "letter\ninvoice\nchart\n"}});
        TaskOptions options;
        options.archiveLabels = &kinds;
        const TaskResult r = interpretOutput(dict, options);
        QCOMPARE(r.kind, TaskKind::Page);
        QCOMPARE(r.corners.size(), size_t{4});
        QCOMPARE(r.corners[2], (std::pair<double, double>{88, 70}));
        QCOMPARE(r.pageWidth, 2);
        QCOMPARE(r.pageRgb, std::vector<uint8_t>(12, 128));
        QCOMPARE(r.topK.front().name, std::string("invoice"));
        QVERIFY2(r.summary == "page: 4 corners, rectified 2x2, invoice 0.70", r.summary.c_str());
        // Asked for as a page, something else says why it is not one.
        options.kind = TaskKind::Page;
        OutputValue plain = tensor({1, 3}, {1, 2, 3}, "x");
        QCOMPARE(interpretOutput(plain, options).kind, TaskKind::None);
        // Drawn: the outline's corner in green, the page's inset at the top right.
        const cv::Mat photo(100, 120, CV_8UC3, cv::Scalar(0, 0, 0));
        const cv::Mat drawn = renderTask(photo, r, {});
        QCOMPARE(drawn.size(), photo.size());
        const cv::Vec3b corner = drawn.at<cv::Vec3b>(70, 88);
        QVERIFY(corner[1] > 150 && corner[0] < 100);
    }

    // The result is drawn on the source at its own size: boxes and corners in the pixels of the
    // image the model saw (here 100 x 50) are scaled to the picture (200 x 200).
    void resultsAreScaledToTheSourceSize() {
        TaskResult r;
        r.kind = TaskKind::Detection;
        DetectedObject box;
        box.x0 = 10;
        box.y0 = 10;
        box.x1 = 40;
        box.y1 = 40;
        box.score = 0.9;
        box.label = 3;
        r.detections = {{box}};
        RenderOptions options;
        options.inputWidth = 100;
        options.inputHeight = 50;
        const cv::Mat black(200, 200, CV_8UC3, cv::Scalar(0, 0, 0));
        const cv::Mat drawn = renderTask(black, r, options);
        QCOMPARE(drawn.size(), black.size());
        const auto lit = [&](int x, int y) { return cv::norm(drawn.at<cv::Vec3b>(y, x)) > 100; };
        QVERIFY(lit(20, 100) && lit(80, 100)); // the left and right edges at x 20 and 80: 2x
        QVERIFY(lit(50, 40) && lit(50, 160));  // the top and bottom at y 40 and 160: 4x
        // Where the unscaled box would be: nothing.
        QVERIFY(!lit(10, 100) && !lit(40, 100) && !lit(50, 10) && !lit(100, 100));
        // A page's corners too; and with no input size, the picture's own pixels.
        TaskResult page;
        page.kind = TaskKind::Page;
        page.corners = {{20, 10}, {80, 10}, {80, 40}, {20, 40}};
        const cv::Mat outlined = renderTask(black, page, options);
        const cv::Vec3b corner = outlined.at<cv::Vec3b>(160, 40); // (20, 40) scaled
        QVERIFY(corner[1] > 150 && corner[0] < 100);
        QVERIFY(cv::norm(outlined.at<cv::Vec3b>(100, 100)) < 1); // inside the page, not drawn
        const cv::Mat unscaled = renderTask(black, page, {});
        QVERIFY(unscaled.at<cv::Vec3b>(40, 20)[1] > 150);
    }

    void segmentationBlendsEveryClassButTheBackground() {
        TaskResult r;
        r.kind = TaskKind::Segmentation;
        r.width = 3;
        r.height = 2;
        r.classMap = {0, 1, 2, 2, 1, 0};
        r.classesPresent = {{0, 2}, {1, 2}, {2, 2}};
        RenderOptions options;
        options.maskOpacity = 0.5;
        // The legend is drawn at the top left: the pixels compared are away from it.
        const cv::Mat big(400, 600, CV_8UC3, cv::Scalar(100, 50, 200));
        const cv::Mat drawn = renderTask(big, r, options);
        auto expected = [&](int cls) {
            const cv::Scalar c = classColour(cls, true);
            cv::Vec3b v;
            for (int k = 0; k < 3; ++k) {
                v[k] = cv::saturate_cast<uint8_t>(big.at<cv::Vec3b>(0, 0)[k] * 0.5 + c[k] * 0.5);
            }
            return v;
        };
        QCOMPARE(drawn.at<cv::Vec3b>(350, 550), big.at<cv::Vec3b>(350, 550)); // class 0 kept
        QCOMPARE(drawn.at<cv::Vec3b>(350, 50), expected(2));              // bottom left: class 2
        QCOMPARE(drawn.at<cv::Vec3b>(350, 300), expected(1));             // bottom middle: class 1
        QCOMPARE(drawn.at<cv::Vec3b>(50, 550), expected(2));              // top right: class 2
        QCOMPARE(drawn.at<cv::Vec3b>(399, 599), big.at<cv::Vec3b>(0, 0)); // bottom right: 0
    }

    void cliRendersEveryFrameOfAVideo() {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("annotated.mp4"));
        const auto r =
            cli({QStringLiteral("run"), kDemo, QStringLiteral("--source"), sources("clip.mp4"),
                 QStringLiteral("--input"), QStringLiteral("image:-"), QStringLiteral("--render"),
                 out, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["frames"].get<int>(), 20);
        QCOMPARE(j["dropped"].get<int>(), 0);
        QCOMPARE(j["written"].get<int>(), 20);
        QVERIFY(j["errors"].empty());
        QVERIFY(j["pipeline_fps"].get<double>() > 0);
        // Each frame interpreted as the page it is: four corners near the truth.
        const auto truth = nlohmann::json::parse(test::readText(fixture("sources/clip.json")));
        double error = 0;
        for (int f = 0; f < 20; ++f) {
            const auto& frame = j["per_frame"][static_cast<size_t>(f)];
            QCOMPARE(frame["interpreted"]["kind"].get<std::string>(), std::string("page"));
            for (int c = 0; c < 4; ++c) {
                const auto& p = frame["interpreted"]["corners"][static_cast<size_t>(c)];
                const auto& t = truth["corners"][static_cast<size_t>(f)][static_cast<size_t>(c)];
                error += std::hypot(p[0].get<double>() - t[0].get<double>(),
                                    p[1].get<double>() - t[1].get<double>());
            }
        }
        error /= 80;
        QVERIFY2(error < 0.03 * 800, std::to_string(error).c_str());
        // The file reads back with every frame.
        cv::Size size;
        QCOMPARE(countFrames(out.toStdString(), &size), 20);
        QCOMPARE(size, cv::Size(640, 480));
    }

    void cliFolderSkipsTheUnreadableImageAndGoesOn() {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("pages"));
        const auto r =
            cli({QStringLiteral("run"), kDemo, QStringLiteral("--source"), sources("folder"),
                 QStringLiteral("--input"), QStringLiteral("image:-,size=640x480"),
                 QStringLiteral("--render"), out});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QVERIFY2(r.err.find("broken.png") != std::string::npos, r.err.c_str());
        QVERIFY2(r.out.find("Frames      5 run, 0 dropped") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("1 skipped") != std::string::npos, r.out.c_str());
        const QStringList written = QDir(out).entryList({QStringLiteral("*.png")}, QDir::Files);
        QCOMPARE(written.size(), 5);
        QVERIFY(written.contains(QStringLiteral("page_02.png"))); // named after the input
        const cv::Mat drawn =
            cv::imread(QDir(out).filePath(QStringLiteral("page_01.png")).toStdString());
        QCOMPARE(drawn.cols, 640);
    }

    // One rule for the GUI and the CLI: the result is drawn on the frame at its own size, scaled
    // from the size the model saw.
    void cliRendersOnTheFrameAtItsOwnSize() {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("pages"));
        const auto r =
            cli({QStringLiteral("run"), kDemo, QStringLiteral("--source"), sources("folder"),
                 QStringLiteral("--input"), QStringLiteral("image:-,size=320x240"),
                 QStringLiteral("--render"), out, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        const auto& first = j["per_frame"][0];
        const std::string name = first["name"].get<std::string>();
        const cv::Mat drawn =
            cv::imread(QDir(out).filePath(QString::fromStdString(name)).toStdString());
        const cv::Mat source = cv::imread(
            QDir(sources("folder")).filePath(QString::fromStdString(name)).toStdString());
        QVERIFY2(!drawn.empty() && !source.empty(), name.c_str());
        QCOMPARE(drawn.size(), source.size());
        // Each corner (in the model's 320 x 240 pixels) has its green dot at twice its place,
        // but where the rectified page's inset covers the top right.
        int dots = 0;
        for (const auto& c : first["interpreted"]["corners"]) {
            const double x = c[0].get<double>() * source.cols / 320.0;
            const double y = c[1].get<double>() * source.rows / 240.0;
            if (x > 0.6 * source.cols && y < 0.5 * source.rows) {
                continue;
            }
            const cv::Vec3b dot = drawn.at<cv::Vec3b>(
                std::clamp(static_cast<int>(std::lround(y)), 0, drawn.rows - 1),
                std::clamp(static_cast<int>(std::lround(x)), 0, drawn.cols - 1));
            QVERIFY2(dot[1] > 150 && dot[0] < 120 && dot[2] < 120,
                     (std::to_string(x) + ", " + std::to_string(y)).c_str());
            ++dots;
        }
        QVERIFY(dots >= 2);
    }

    void cliSourceRefusalsSayWhy() {
        const auto noFrameInput =
            cli({QStringLiteral("run"), kDemo, QStringLiteral("--source"), sources("clip.mp4"),
                 QStringLiteral("--input"), QStringLiteral("random:1x3x480x640")});
        QCOMPARE(noFrameInput.exitCode, 1);
        QVERIFY2(noFrameInput.err.find("image:-") != std::string::npos, noFrameInput.err.c_str());
        const auto corrupt =
            cli({QStringLiteral("run"), kDemo, QStringLiteral("--source"), sources("corrupt.mp4"),
                 QStringLiteral("--input"), QStringLiteral("image:-")});
        QCOMPARE(corrupt.exitCode, 1);
        QVERIFY2(!corrupt.err.empty(), corrupt.out.c_str());
        const auto frameWithoutSource = cli(
            {QStringLiteral("run"), kDemo, QStringLiteral("--input"), QStringLiteral("image:-")});
        QCOMPARE(frameWithoutSource.exitCode, 1);
        QVERIFY2(frameWithoutSource.err.find("takes each frame of a source") != std::string::npos,
                 frameWithoutSource.err.c_str());
        if (listCameras().empty()) {
            const auto camera = cli({QStringLiteral("run"), kDemo, QStringLiteral("--source"),
                                     QStringLiteral("camera:0"), QStringLiteral("--input"),
                                     QStringLiteral("image:-")});
            QCOMPARE(camera.exitCode, 1);
            QVERIFY2(camera.err.find("no camera") != std::string::npos, camera.err.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestSources)
#include "test_sources.moc"
