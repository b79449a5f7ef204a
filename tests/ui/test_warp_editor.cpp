// The warp editor with real mouse and keyboard events, offscreen: a dragged handle sets the matrix,
// the whole drag is one undo step, the rendered pixels equal cv::warpPerspective's (and Python's
// cv2), degenerate input is refused with a word, and the session round-trips. Saves screenshots.
#include "gui_test_support.h"
#include "test_support.h"

#include <image_canvas.h>
#include <image_io.h>
#include <main_window.h>
#include <matrix_io.h>
#include <warp_editor.h>
#include <worker_client.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QMouseEvent>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QUndoStack>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::saveScreenshot;

namespace {

QString fx(const char* name) {
    return QString::fromStdString(fixture(name));
}

// cv::warpPerspective of the editor's source with its state: the reference for every pixel.
QImage referenceWarp(const QImage& source, const WarpState& state) {
    const OutputFrame frame = outputFrame(state, source.width(), source.height());
    const cv::Mat src(source.height(), source.width(), CV_8UC4,
                      const_cast<uchar*>(source.constBits()),
                      static_cast<size_t>(source.bytesPerLine()));
    const Homography h = frame.renderMatrix(state.matrix);
    cv::Mat dst;
    const int flags = state.interpolation == my_ops::Interpolation::Nearest ? cv::INTER_NEAREST
                      : state.interpolation == my_ops::Interpolation::Cubic ? cv::INTER_CUBIC
                                                                            : cv::INTER_LINEAR;
    cv::warpPerspective(src, dst, cv::Matx33d(h.data()), cv::Size(frame.width, frame.height), flags,
                        state.border == my_ops::BorderMode::Replicate ? cv::BORDER_REPLICATE
                                                                      : cv::BORDER_CONSTANT,
                        cv::Scalar::all(state.borderValue));
    QImage out(dst.cols, dst.rows, QImage::Format_RGBA8888);
    for (int y = 0; y < dst.rows; ++y) {
        std::memcpy(out.scanLine(y), dst.ptr(y), static_cast<size_t>(dst.cols) * 4);
    }
    return out;
}

bool waitForFullResolution(WarpEditor& editor) {
    if (editor.isFullResolutionCurrent()) {
        return true;
    }
    QSignalSpy ready(&editor, &WarpEditor::fullResolutionReady);
    return ready.wait(10000) && editor.isFullResolutionCurrent();
}

QPoint onScreen(ImageCanvas* view, const Point& p) {
    return view->mapFromScene(QPointF(p.x, p.y));
}

} // namespace

class TestWarpEditor : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<WarpEditor> editor_;

    void dragHandle(ImageCanvas* view, int index, QPoint to, Qt::KeyboardModifiers modifiers = {}) {
        const auto quad = view->handles();
        QVERIFY(quad.has_value());
        const QPoint from = onScreen(view, (*quad)[static_cast<size_t>(index)]);
        QTest::mousePress(view->viewport(), Qt::LeftButton, modifiers, from);
        // Several steps, as a hand would: each asks for a preview.
        for (int step = 1; step <= 4; ++step) {
            // QTest::mouseMove carries no modifiers; a real move does.
            const QPoint at = from + (to - from) * step / 4;
            QMouseEvent move(QEvent::MouseMove, at, view->viewport()->mapToGlobal(at), Qt::NoButton,
                             Qt::LeftButton, modifiers);
            QApplication::sendEvent(view->viewport(), &move);
        }
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, modifiers, to);
    }

    static QImage rgb(const QImage& image) { return image.convertToFormat(QImage::Format_RGB888); }

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void init() {
        editor_ = std::make_unique<WarpEditor>();
        editor_->resize(1300, 760);
        editor_->show();
        QVERIFY(QTest::qWaitForWindowExposed(editor_.get()));
        QVERIFY(editor_->openImage(fx("warp_source.png")));
        editor_->fitViews();
        QVERIFY(waitForFullResolution(*editor_));
    }

    void cleanup() { editor_.reset(); }

    void dragSetsTheMatrixAndUndoesAsOneStep() {
        ImageCanvas* view = editor_->outputView();
        const QPoint from = onScreen(view, Point{159, 119});
        const QPoint target = from - QPoint(60, 35);
        // The handle keeps its offset from the mouse: it moves by the mouse's movement.
        const QPointF expected =
            QPointF(159, 119) + view->mapToScene(target) - view->mapToScene(from);
        dragHandle(view, 2, target);
        QCOMPARE(editor_->undoStack()->count(), 1);
        // The bottom-right corner goes where the mouse let go; the others stay.
        const auto corners = mappedCorners(editor_->matrix(), 160, 120);
        QVERIFY(corners.has_value());
        QVERIFY(std::abs((*corners)[2].x - expected.x()) < 1e-6);
        QVERIFY(std::abs((*corners)[2].y - expected.y()) < 1e-6);
        QVERIFY(std::abs((*corners)[0].x) < 1e-9 && std::abs((*corners)[1].x - 159) < 1e-9);
        // The rendered pixels are cv::warpPerspective's, exactly.
        QVERIFY(waitForFullResolution(*editor_));
        QCOMPARE(editor_->fullResolutionImage(),
                 referenceWarp(editor_->sourceImage(), editor_->state()));
        saveScreenshot(editor_.get(), QStringLiteral("warp-editor-drag"));

        editor_->undoStack()->undo();
        QCOMPARE(editor_->matrix(), identityHomography());
        QVERIFY(waitForFullResolution(*editor_));
        QCOMPARE(editor_->fullResolutionImage(), editor_->sourceImage());
        editor_->undoStack()->redo();
        QVERIFY(std::abs((*mappedCorners(editor_->matrix(), 160, 120))[2].x - expected.x()) < 1e-6);
    }

    void shiftConstrainsToOneAxis() {
        ImageCanvas* view = editor_->outputView();
        const QPoint from = onScreen(view, Point{0, 0});
        dragHandle(view, 0, from + QPoint(50, 8), Qt::ShiftModifier);
        const auto corners = mappedCorners(editor_->matrix(), 160, 120);
        QVERIFY(corners && std::abs((*corners)[0].y) < 1e-9 && (*corners)[0].x > 5);
    }

    void arrowKeysNudge() {
        ImageCanvas* view = editor_->outputView();
        view->setFocus();
        view->selectHandle(1);
        QTest::keyClick(view, Qt::Key_Left);
        QTest::keyClick(view, Qt::Key_Down, Qt::ShiftModifier);
        const auto corners = mappedCorners(editor_->matrix(), 160, 120);
        QVERIFY(corners && std::abs((*corners)[1].x - 158) < 1e-9 &&
                std::abs((*corners)[1].y - 10) < 1e-9);
        QCOMPARE(editor_->undoStack()->count(), 2);
        QVERIFY(editor_->matrixNote().isEmpty()); // an applied edit clears the note
    }

    void slivers() {
        // With h11 = 0 every x maps to 5 / w: the image becomes a streak a few pixels wide,
        // refused like a collapsed quad (it would show a blank output).
        WarpState state = editor_->state();
        state.matrix = Homography{1, 0, 5, 0, 1, 0, 0.002, 0, 1};
        QVERIFY(editor_->applyState(state, QStringLiteral("perspective")));
        auto* h11 = editor_->findChild<QLineEdit*>(QStringLiteral("h11"));
        h11->setText(QStringLiteral("0"));
        Q_EMIT h11->editingFinished();
        QCOMPARE(editor_->matrix()[0], 1.0);
        QVERIFY2(editor_->matrixNote().contains(QStringLiteral("nearly collapsed")),
                 qPrintable(editor_->matrixNote()));
    }

    void newImageDropsTheOldCustomSize() {
        WarpState state = editor_->state();
        state.outputSize = OutputSize::Custom;
        state.outputWidth = 40;
        state.outputHeight = 30;
        editor_->applyState(state, QStringLiteral("custom"));
        QImage other(333, 222, QImage::Format_RGBA8888);
        other.fill(Qt::darkCyan);
        editor_->setImage(other, QStringLiteral("other.png"));
        QCOMPARE(editor_->state().outputSize, OutputSize::Source);
        QCOMPARE(editor_->state().outputWidth, 333);
        QCOMPARE(editor_->state().outputHeight, 222);
        QVERIFY2(editor_->message().contains(QStringLiteral("previous image")),
                 qPrintable(editor_->message()));
    }

    void degenerateDragIsRefusedVisibly() {
        ImageCanvas* view = editor_->outputView();
        const Homography before = editor_->matrix();
        // The top-left corner dragged past the bottom-right one: a self-intersecting quad.
        const QPoint far = onScreen(view, Point{200, 160});
        const auto quad = view->handles();
        const QPoint from = onScreen(view, (*quad)[0]);
        QTest::mousePress(view->viewport(), Qt::LeftButton, {}, from);
        QTest::mouseMove(view->viewport(), far);
        QVERIFY(editor_->message().startsWith(QStringLiteral("Not applied")));
        saveScreenshot(editor_.get(), QStringLiteral("warp-editor-refused"));
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, far);
        QCOMPARE(editor_->matrix(), before);
        QCOMPARE(editor_->undoStack()->count(), 0);
        QVERIFY(editor_->message().contains(QStringLiteral("self-intersecting")) ||
                editor_->message().contains(QStringLiteral("collapsed")));
        // The handles went back to the applied matrix.
        const auto after = view->handles();
        QVERIFY(after && std::abs((*after)[0].x) < 1e-9 && std::abs((*after)[0].y) < 1e-9);
    }

    void numericEditing() {
        auto* h13 = editor_->findChild<QLineEdit*>(QStringLiteral("h13"));
        QVERIFY(h13);
        h13->setText(QStringLiteral("12.5"));
        Q_EMIT h13->editingFinished();
        QCOMPARE(editor_->matrix()[2], 12.5);
        // A singular matrix is refused: the field turns red and nothing changes.
        auto* h22 = editor_->findChild<QLineEdit*>(QStringLiteral("h22"));
        h22->setText(QStringLiteral("0"));
        auto* h21 = editor_->findChild<QLineEdit*>(QStringLiteral("h21"));
        Q_EMIT h22->editingFinished();
        QCOMPARE(editor_->matrix()[4], 1.0);
        QVERIFY(editor_->message().contains(QStringLiteral("singular")));
        QVERIFY(!h22->styleSheet().isEmpty());
        // The reason shows next to the matrix, not only in the field's tooltip.
        QVERIFY2(editor_->matrixNote().contains(QStringLiteral("h22")) &&
                     editor_->matrixNote().contains(QStringLiteral("singular")),
                 qPrintable(editor_->matrixNote()));
        Q_UNUSED(h21);
        // The decomposition: rotate by 90 degrees; the other values stay exact.
        auto* rotation = editor_->findChild<QLineEdit*>(QStringLiteral("rotation"));
        QVERIFY(rotation);
        rotation->setText(QStringLiteral("90"));
        Q_EMIT rotation->editingFinished();
        const auto d = decompose(editor_->matrix());
        QVERIFY(d.ok());
        QVERIFY(std::abs(d->rotationDegrees - 90) < 1e-9);
        QVERIFY(std::abs(d->tx - 12.5) < 1e-9 && std::abs(d->sx - 1) < 1e-9);
        QCOMPARE(editor_->undoStack()->count(), 2);
    }

    void matchesPythonsCv2() {
        // The matrix from OpenCV's FileStorage, the warp from Python's cv2.warpPerspective.
        QVERIFY(editor_->loadMatrix(fx("homography.xml")));
        QVERIFY(waitForFullResolution(*editor_));
        // Python warped the 3-channel image; the editor warps RGBA, so compare the colours.
        const QImage full = editor_->fullResolutionImage();
        QImage colours(full.size(), QImage::Format_RGB888);
        for (int y = 0; y < full.height(); ++y) {
            const uchar* in = full.constScanLine(y);
            uchar* out = colours.scanLine(y);
            for (int x = 0; x < full.width(); ++x) {
                std::memcpy(out + 3 * x, in + 4 * x, 3);
            }
        }
        QCOMPARE(colours, rgb(QImage(fx("warp_expected_linear.png"))));
    }

    void optionsReachTheOperator() {
        WarpState state = editor_->state();
        state.matrix = rotationAboutCentre(20, 160, 120);
        state.interpolation = my_ops::Interpolation::Cubic;
        state.border = my_ops::BorderMode::Replicate;
        state.outputSize = OutputSize::Fit;
        QVERIFY(editor_->applyState(state, QStringLiteral("options")));
        QVERIFY(waitForFullResolution(*editor_));
        const QImage full = editor_->fullResolutionImage();
        QVERIFY(full.width() > 160 && full.height() > 120);
        QCOMPARE(full, referenceWarp(editor_->sourceImage(), editor_->state()));
        auto* compare = editor_->findChild<QComboBox*>();
        Q_UNUSED(compare);
    }

    void placeSourcePointsRectifies() {
        WarpState state = editor_->state();
        state.mode = WarpMode::PlaceSource;
        state.outputSize = OutputSize::Fit;
        QVERIFY(editor_->applyState(state, QStringLiteral("mode")));
        ImageCanvas* source = editor_->sourceView();
        QVERIFY(source->handles().has_value());
        QVERIFY(!editor_->outputView()->handles().has_value());
        const QPoint to = onScreen(source, Point{30, 20});
        dragHandle(source, 0, to);
        // The source point now maps to the output's top-left corner.
        const QPointF placed = source->mapToScene(to);
        const auto p = mapPoint(editor_->matrix(), Point{placed.x(), placed.y()});
        QVERIFY(p && std::abs(p->x) < 1e-6 && std::abs(p->y) < 1e-6);
        QVERIFY(waitForFullResolution(*editor_));
        QCOMPARE(editor_->fullResolutionImage(),
                 referenceWarp(editor_->sourceImage(), editor_->state()));
        saveScreenshot(editor_.get(), QStringLiteral("warp-editor-rectify"));
    }

    void matrixFilesRoundTrip_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("json") << QStringLiteral("h.json");
        QTest::newRow("npy") << QStringLiteral("h.npy");
        QTest::newRow("xml") << QStringLiteral("h.xml");
        QTest::newRow("yaml") << QStringLiteral("h.yml");
    }
    void matrixFilesRoundTrip() {
        QFETCH(QString, name);
        QTemporaryDir dir;
        const Homography h = keystone(0.25, 160, 120);
        QVERIFY(editor_->setMatrix(h));
        QVERIFY(editor_->saveMatrix(dir.filePath(name)));
        QVERIFY(editor_->setMatrix(identityHomography()));
        QVERIFY(editor_->loadMatrix(dir.filePath(name)));
        QCOMPARE(editor_->matrix(), h);
        // What the editor writes is what the CLI and the engine read.
        const auto read = readMatrixFile(QFile::encodeName(dir.filePath(name)).toStdString());
        QVERIFY(read.ok());
        QCOMPARE(*read, h);
    }

    void badFilesAreRefusedWithAWord() {
        const Homography before = editor_->matrix();
        QVERIFY(!editor_->loadMatrix(fx("text.pt")));
        QVERIFY(editor_->message().startsWith(QStringLiteral("Matrix not loaded")));
        QVERIFY(!editor_->openImage(fx("text.pt")));
        QVERIFY(editor_->message().startsWith(QStringLiteral("Image not opened")));
        QVERIFY(!editor_->openImage(fx("no-such-image.png")));
        QCOMPARE(editor_->matrix(), before);
        QCOMPARE(editor_->sourceImage().size(), QSize(160, 120));
    }

    void readsTiffThroughOpenCv() {
        QVERIFY(editor_->openImage(fx("warp_source.tif")));
        QCOMPARE(editor_->sourceImage(),
                 QImage(fx("warp_source.png")).convertToFormat(QImage::Format_RGBA8888));
    }

    void exportWritesFullResolution() {
        QTemporaryDir dir;
        QVERIFY(editor_->setMatrix(rotationAboutCentre(10, 160, 120)));
        const QString path = dir.filePath(QStringLiteral("warped.png"));
        editor_->exportImage(path);
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(path), 10000);
        QCOMPARE(QImage(path).convertToFormat(QImage::Format_RGBA8888),
                 referenceWarp(editor_->sourceImage(), editor_->state()));
        const QString tiff = dir.filePath(QStringLiteral("warped.tif"));
        editor_->exportImage(tiff);
        QVERIFY(QFileInfo::exists(tiff));
        QCOMPARE(loadImage(tiff)->size(), QSize(160, 120));
    }

    void sessionSurvivesARestart() {
        WarpState state = editor_->state();
        state.matrix = keystone(0.2, 160, 120);
        state.interpolation = my_ops::Interpolation::Nearest;
        state.outputSize = OutputSize::Custom;
        state.outputWidth = 200;
        state.outputHeight = 150;
        QVERIFY(editor_->applyState(state, QStringLiteral("state")));
        const QJsonObject session = editor_->session();
        WarpEditor restored;
        restored.restoreSession(session, fx("warp_source.tif"));
        QCOMPARE(restored.imagePath(), editor_->imagePath());
        QVERIFY(restored.state() == editor_->state());
        // A session whose image is gone falls back to the given one and says so.
        QJsonObject gone = session;
        gone.insert(QStringLiteral("image"), QStringLiteral("/nonexistent/photo.png"));
        WarpEditor fallback;
        fallback.restoreSession(gone, fx("warp_source.tif"));
        QVERIFY(fallback.imagePath().endsWith(QStringLiteral("warp_source.tif")));
        QVERIFY(fallback.message().contains(QStringLiteral("/nonexistent/photo.png")));
    }

    void inTheMainWindow() {
        // A first start: no saved session, so the demo photo with the matrix that rectifies it.
        QSettings().remove(QStringLiteral("warp/session"));
        WorkerClient worker;
        worker.setWorkerPath(QStringLiteral(SCRIPTSCOPE_WORKER_PATH));
        MainWindow window(&worker);
        window.resize(1400, 820);
        const QString resources = QStringLiteral(SCRIPTSCOPE_RESOURCES_DIR);
        window.restoreWarpSession(resources + QStringLiteral("/demo.png"),
                                  resources + QStringLiteral("/demo_warp.npy"), QSize(200, 280));
        window.show();
        QVERIFY(window.showWorkspace(QStringLiteral("warp")));
        WarpEditor* editor = window.warpEditor();
        QCOMPARE(editor->state().outputSize, OutputSize::Custom);
        QCOMPARE(editor->undoStack()->count(), 0);
        const auto demo =
            readMatrixFile(QString(resources + QStringLiteral("/demo_warp.npy")).toStdString());
        QVERIFY(demo.ok());
        QCOMPARE(editor->matrix(), *demo);
        QVERIFY(waitForFullResolution(*editor));
        QCOMPARE(editor->fullResolutionImage().size(), QSize(200, 280));
        saveScreenshot(&window, QStringLiteral("warp-editor"));
        // The session is saved as it changes: a new window (a restart) gets it back.
        QVERIFY(editor->setMatrix(keystone(0.1, 640, 480), QStringLiteral("keystone")));
        MainWindow restarted(&worker);
        restarted.restoreWarpSession(resources + QStringLiteral("/demo.png"),
                                     resources + QStringLiteral("/demo_warp.npy"), QSize(200, 280));
        QCOMPARE(restarted.warpEditor()->matrix(), keystone(0.1, 640, 480));
        QVERIFY(!window.showWorkspace(QStringLiteral("nonsense")));
    }
};

QTEST_MAIN(TestWarpEditor)
#include "test_warp_editor.moc"
