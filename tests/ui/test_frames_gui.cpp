// The live demo through the GUI and the real worker: the trained demo model's page drawn on the
// demo photo and its corners taken by the warp editor; an image folder stepped and played with
// its unreadable image said and the rest shown; a video played with every frame shown or counted
// as dropped, recorded and read back; a missing camera explained; and nothing of it shown under
// the next model. Screenshots of the demo and the played video.
#include "gui_test_support.h"
#include "test_support.h"

#include <frame_player.h>
#include <frame_source.h>
#include <main_window.h>
#include <output_panel.h>
#include <output_view.h>
#include <run_panel.h>
#include <warp_editor.h>
#include <worker_client.h>

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>

#include <matrix_io.h>

#include <opencv2/videoio.hpp>

#include <cmath>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::saveScreenshot;

namespace {

const QString kResources = QStringLiteral(SCRIPTSCOPE_RESOURCES_DIR);

QString sources(const char* name) {
    return QString::fromStdString(fixture(std::string("sources/") + name));
}

int countFrames(const QString& path) {
    cv::VideoCapture capture(path.toStdString(), cv::CAP_FFMPEG);
    int frames = 0;
    cv::Mat frame;
    while (capture.read(frame)) {
        ++frames;
    }
    return frames;
}

} // namespace

class TestFramesGui : public QObject {
    Q_OBJECT

private:
    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;
    RunPanel* run_ = nullptr;
    FramePlayer* player_ = nullptr;

    bool waitForFrame() {
        QSignalSpy shown(player_, &FramePlayer::frameShown);
        QSignalSpy problem(player_, &FramePlayer::problem);
        return QTest::qWaitFor([&]() { return !shown.isEmpty() || !problem.isEmpty(); }, 120000) &&
               !shown.isEmpty();
    }

    bool playToTheEnd() {
        QSignalSpy changed(player_, &FramePlayer::playingChanged);
        player_->setPlaying(true);
        return QTest::qWaitFor([&]() { return !player_->playing(); }, 240000);
    }

private Q_SLOTS:
    void initTestCase() {
        window_ = scriptscope::test::openTestWindow(this, &worker_);
        run_ = window_->runPanel();
        player_ = run_->framePlayer();
        window_->restoreWarpSession(kResources + QStringLiteral("/demo.png"),
                                    kResources + QStringLiteral("/demo_warp.npy"), QSize(200, 280));
        QVERIFY(
            scriptscope::test::openModel(window_, kResources + QStringLiteral("/demo_model.pt")));
        window_->showWorkspace(QStringLiteral("run"));
    }

    void cleanupTestCase() { delete window_; }

    void theTrainedDemoFindsThePageAndTheWarpEditorTakesItsCorners() {
        QSignalSpy shown(run_, &RunPanel::runShown);
        QSignalSpy failed(run_, &RunPanel::runFailed);
        run_->runOnce();
        QVERIFY(QTest::qWaitFor([&]() { return !shown.isEmpty() || !failed.isEmpty(); }, 120000));
        QVERIFY2(failed.isEmpty(), qPrintable(run_->statusText()));
        OutputPanel* outputs = run_->outputs();
        QVERIFY2(outputs->taskSummary().startsWith(QStringLiteral("page: 4 corners")),
                 qPrintable(outputs->taskSummary()));
        QVERIFY2(outputs->taskSummary().contains(QStringLiteral("letter")),
                 qPrintable(outputs->taskSummary()));
        QCOMPARE(outputs->pageCorners().size(), size_t{4});
        QVERIFY(outputs->useCornersAction()->isEnabled());
        // At 1280 px, the demo's key action is on the bar (shown for a page), not behind its »
        // overflow menu.
        const auto onTheBar = [&]() {
            for (QObject* object : outputs->useCornersAction()->associatedObjects()) {
                if (auto* button = qobject_cast<QToolButton*>(object);
                    button && button->isVisible() && button->width() > 20) {
                    return true;
                }
            }
            return false;
        };
        QTRY_VERIFY(onTheBar());
        QTest::qWait(100);
        saveScreenshot(window_, QStringLiteral("demo-page-result"));

        // The hand-tuned warp of the demo (demo_warp.npy) and the model's: the model's corners
        // map within 3% of the diagonal of where the hand-tuned warp puts the page's corners.
        const auto tuned = readMatrixFile(kResources.toStdString() + "/demo_warp.npy");
        QVERIFY(tuned);
        const auto back = inverted(*tuned);
        QVERIFY(back);
        const Quad page = imageCorners(200, 280);
        double error = 0;
        for (size_t i = 0; i < 4; ++i) {
            const auto truth = mapPoint(*back, page[i]);
            QVERIFY(truth);
            error += std::hypot(outputs->pageCorners()[i].first - truth->x,
                                outputs->pageCorners()[i].second - truth->y);
        }
        QVERIFY2(error / 4 < 0.03 * 800, std::to_string(error / 4).c_str());

        QSignalSpy used(run_, &RunPanel::modelCornersUsed);
        outputs->useCornersAction()->trigger();
        QCOMPARE(used.count(), 1);
        WarpEditor* editor = window_->warpEditor();
        QCOMPARE(editor->state().mode, WarpMode::PlaceSource);
        QCOMPARE(editor->state().outputWidth, 200);
        QCOMPARE(editor->state().outputHeight, 280);
        const auto corner = mapPoint(editor->matrix(), Point{outputs->pageCorners()[2].first,
                                                             outputs->pageCorners()[2].second});
        QVERIFY(corner);
        QVERIFY2(std::abs(corner->x - 199) < 0.01 && std::abs(corner->y - 279) < 0.01,
                 qPrintable(QStringLiteral("%1, %2").arg(corner->x).arg(corner->y)));
        QVERIFY(editor->undoStack()->canUndo());
        QTest::qWait(200);
        saveScreenshot(window_, QStringLiteral("demo-model-corners-in-warp-editor"));
        window_->showWorkspace(QStringLiteral("run"));
    }

    void aFolderStepsAndPlaysPastItsUnreadableImage() {
        QSignalSpy problems(player_, &FramePlayer::problem);
        player_->openSource(sources("folder"));
        // The first image in order is broken.png: said, and nothing drawn for it.
        QVERIFY(QTest::qWaitFor([&]() { return !problems.isEmpty(); }, 120000));
        QVERIFY2(problems.first().first().toString().contains(QStringLiteral("broken.png")),
                 qPrintable(problems.first().first().toString()));
        QCOMPARE(player_->info().frames, int64_t{6});
        QCOMPARE(player_->frameErrors(), qint64{1});
        // Next: the first page, drawn as a page.
        QSignalSpy shown(player_, &FramePlayer::frameShown);
        player_->step(1);
        QVERIFY(QTest::qWaitFor([&]() { return !shown.isEmpty(); }, 120000));
        QCOMPARE(player_->currentIndex(), qint64{1});
        QVERIFY2(run_->outputs()->taskSummary().startsWith(QStringLiteral("page")),
                 qPrintable(run_->outputs()->taskSummary()));
        QVERIFY(!run_->outputs()->renderedFrame().empty());
        // Play at no interval: the rest of the folder, every image shown once.
        player_->setInterval(0);
        QVERIFY(playToTheEnd());
        QCOMPARE(player_->currentIndex(), qint64{5});
        QCOMPARE(player_->framesShown(), qint64{5});
        QCOMPARE(player_->droppedFrames(), qint64{0});
        QVERIFY2(player_->statusText().contains(QStringLiteral("Frame 6 of 6")),
                 qPrintable(player_->statusText()));
        // The history has one record for the played frames, one sample per frame.
        const RunRecord& last = run_->historyModel()->runs().back();
        QCOMPARE(last.result.samplesMs.size(), size_t{4});
    }

    void aVideoPlaysLiveAndIsRecorded() {
        // The model sees the frames at half their size; the result is drawn, and recorded, on the
        // frame at its own size (as the CLI's --render), scaled from the model's pixels.
        auto* size = run_->findChild<QLineEdit*>(QStringLiteral("imageSize"));
        QVERIFY(size);
        size->setText(QStringLiteral("320x240"));
        player_->openSource(sources("clip.mp4"));
        QVERIFY(waitForFrame());
        const cv::Mat& drawn = run_->outputs()->renderedFrame();
        QCOMPARE(drawn.cols, 640);
        QCOMPARE(drawn.rows, 480);
        QCOMPARE(run_->outputs()->pageCorners().size(), size_t{4});
        for (const auto& [x, y] : run_->outputs()->pageCorners()) {
            // The outline's corner dots, green, where the model's corners are on the full frame
            // (but under the rectified page's inset at the top right).
            if (x > 0.6 * 640 && y < 0.5 * 480) {
                continue;
            }
            const cv::Vec3b dot = drawn.at<cv::Vec3b>(std::clamp(int(std::lround(y)), 0, 479),
                                                      std::clamp(int(std::lround(x)), 0, 639));
            QVERIFY2(dot[1] > 150 && dot[0] < 120 && dot[2] < 120,
                     qPrintable(QStringLiteral("%1, %2: %3 %4 %5")
                                    .arg(x)
                                    .arg(y)
                                    .arg(dot[0])
                                    .arg(dot[1])
                                    .arg(dot[2])));
        }
        QCOMPARE(player_->info().frames, int64_t{20});
        QCOMPARE(player_->info().fps, 10.0);
        QTemporaryDir dir;
        const QString recording = dir.filePath(QStringLiteral("recording.mp4"));
        QString why;
        QVERIFY2(player_->startRecording(recording, &why), qPrintable(why));
        QVERIFY(playToTheEnd());
        // Every frame of the video was either shown or dropped (counted), none queued.
        QCOMPARE(player_->framesShown() + player_->droppedFrames(), qint64{20});
        QVERIFY(player_->framesShown() >= 2);
        // One count of dropped frames: the overlay says what the player's label says, the frames
        // dropped after the last one shown included.
        const QStringList overlay = run_->outputs()->imageView()->overlay();
        QVERIFY(!overlay.isEmpty());
        QVERIFY2(
            overlay.back().contains(QStringLiteral("· %1 dropped").arg(player_->droppedFrames())),
            qPrintable(overlay.back()));
        QTest::qWait(100);
        saveScreenshot(window_, QStringLiteral("frames-video-played"));
        const qint64 recorded = player_->recordedFrames();
        player_->stopRecording();
        // Frames 1 to 19 (0 was shown before recording began): each shown frame is written for as
        // long as the frames dropped before it, and the last for those dropped after it, so the
        // count does not depend on how fast the model ran.
        QCOMPARE(recorded, qint64{19});
        QCOMPARE(countFrames(recording), static_cast<int>(recorded));
        cv::VideoCapture written(recording.toStdString(), cv::CAP_FFMPEG);
        QCOMPARE(written.get(cv::CAP_PROP_FRAME_WIDTH), 640.0);
        QCOMPARE(written.get(cv::CAP_PROP_FRAME_HEIGHT), 480.0);
        size->clear();
        QVERIFY(run_->outputs()->imageView() != nullptr);
    }

    void aCorruptVideoIsAMessageAndTheWindowGoesOn() {
        QSignalSpy problems(player_, &FramePlayer::problem);
        player_->openSource(sources("corrupt.mp4"));
        QVERIFY(QTest::qWaitFor([&]() { return !problems.isEmpty(); }, 120000));
        QVERIFY(!problems.first().first().toString().isEmpty());
        QVERIFY(!player_->playing());
        // The worker and the window are fine: the next source plays.
        player_->openSource(sources("clip.mp4"));
        QVERIFY(waitForFrame());
        QCOMPARE(player_->currentIndex(), qint64{0});
    }

    void aMissingCameraIsExplained() {
        if (!listCameras().empty()) {
            QSKIP("this machine has a camera");
        }
        QComboBox* box = player_->sourceBox();
        const int row = box->findData(QStringLiteral("camera:0"));
        QVERIFY(row >= 0);
        QVERIFY(box->itemText(row).contains(QStringLiteral("none found")));
        QSignalSpy problems(player_, &FramePlayer::problem);
        box->setCurrentIndex(row);
        Q_EMIT box->activated(row);
        QCOMPARE(problems.count(), 1);
        QCOMPARE(problems.first().first().toString(), QString::fromStdString(noCameraMessage()));
        QVERIFY(!player_->active());
    }

    void theDemoInADarkTheme() {
        const QPalette light = QApplication::palette();
        QApplication::setPalette(scriptscope::test::darkPalette());
        QSignalSpy shown(run_, &RunPanel::runShown);
        run_->runOnce();
        QVERIFY(QTest::qWaitFor([&]() { return !shown.isEmpty(); }, 120000));
        QTest::qWait(100);
        saveScreenshot(window_, QStringLiteral("demo-page-result-dark"));
        QApplication::setPalette(light);
    }

    void theNextModelShowsNoneOfIt() {
        player_->openSource(sources("clip.mp4"));
        QVERIFY(waitForFrame());
        player_->setPlaying(true);
        QVERIFY(
            scriptscope::test::openModel(window_, QString::fromStdString(fixture("compute.pt"))));
        QVERIFY(!player_->playing());
        QVERIFY(run_->outputs()->pageCorners().empty());
        QVERIFY(run_->outputs()->renderedFrame().empty());
        QVERIFY(!run_->lastResult());
    }
};

QTEST_MAIN(TestFramesGui)
#include "test_frames_gui.moc"
