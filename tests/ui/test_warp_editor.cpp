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

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QGuiApplication>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>
#include <QWheelEvent>

#include <cmath>
#include <map>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::saveScreenshot;

namespace {

QString fx(const char* name) {
    return QString::fromStdString(fixture(name));
}

// cv::warpPerspective of the editor's source with its state: the reference for every pixel. Built
// from the matrix, the options and the source's size alone (none of the editor's own geometry): the
// output's extent for "fit" is the bounding box of the corners mapped here.
QImage referenceWarp(const QImage& source, const WarpState& state) {
    const Homography& h = state.matrix;
    const int width = source.width(), height = source.height();
    double left = 0, top = 0;
    int outWidth = width, outHeight = height;
    if (state.outputSize == OutputSize::Custom ||
        (state.outputSize == OutputSize::Fit && state.mode == WarpMode::PlaceSource)) {
        outWidth = state.outputWidth;
        outHeight = state.outputHeight;
    } else if (state.outputSize == OutputSize::Fit) {
        double minX = 1e300, minY = 1e300, maxX = -1e300, maxY = -1e300;
        for (const auto& [x, y] : {std::pair<double, double>{0, 0},
                                   {width - 1.0, 0},
                                   {width - 1.0, height - 1.0},
                                   {0, height - 1.0}}) {
            const double w = h[6] * x + h[7] * y + h[8];
            const double u = (h[0] * x + h[1] * y + h[2]) / w;
            const double v = (h[3] * x + h[4] * y + h[5]) / w;
            minX = std::min(minX, u);
            maxX = std::max(maxX, u);
            minY = std::min(minY, v);
            maxY = std::max(maxY, v);
        }
        left = minX;
        top = minY;
        outWidth = static_cast<int>(std::ceil(maxX - minX)) + 1;
        outHeight = static_cast<int>(std::ceil(maxY - minY)) + 1;
    }
    // The output pixel (0,0) is the point (left, top) of the matrix's target space.
    const cv::Matx33d shifted =
        cv::Matx33d(1, 0, -left, 0, 1, -top, 0, 0, 1) * cv::Matx33d(h.data());
    const cv::Mat src(height, width, CV_8UC4, const_cast<uchar*>(source.constBits()),
                      static_cast<size_t>(source.bytesPerLine()));
    static const std::map<my_ops::Interpolation, int> interpolations = {
        {my_ops::Interpolation::Nearest, cv::INTER_NEAREST},
        {my_ops::Interpolation::Linear, cv::INTER_LINEAR},
        {my_ops::Interpolation::Cubic, cv::INTER_CUBIC},
        {my_ops::Interpolation::Lanczos4, cv::INTER_LANCZOS4}};
    static const std::map<my_ops::BorderMode, int> borders = {
        {my_ops::BorderMode::Constant, cv::BORDER_CONSTANT},
        {my_ops::BorderMode::Replicate, cv::BORDER_REPLICATE},
        {my_ops::BorderMode::Reflect, cv::BORDER_REFLECT},
        {my_ops::BorderMode::Reflect101, cv::BORDER_REFLECT_101},
        {my_ops::BorderMode::Wrap, cv::BORDER_WRAP}};
    cv::Mat dst;
    cv::warpPerspective(src, dst, shifted, cv::Size(outWidth, outHeight),
                        interpolations.at(state.interpolation), borders.at(state.border),
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
    return ready.wait(scriptscope::test::scaled(10000)) && editor.isFullResolutionCurrent();
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
        // The reason is over the picture too, where the person is looking while dragging.
        QVERIFY2(view->notice().startsWith(QStringLiteral("Not applied")),
                 qPrintable(view->notice()));
        saveScreenshot(editor_.get(), QStringLiteral("warp-editor-refused"));
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, far);
        // The snap back is said, with the reason, until the next drag.
        QVERIFY2(view->notice().startsWith(QStringLiteral("Back to the last corner that warps")) &&
                     (view->notice().contains(QStringLiteral("self-intersecting")) ||
                      view->notice().contains(QStringLiteral("collapsed"))),
                 qPrintable(view->notice()));
        saveScreenshot(editor_.get(), QStringLiteral("warp-editor-snapped-back"));
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
        Q_EMIT h22->editingFinished();
        QCOMPARE(editor_->matrix()[4], 1.0);
        QVERIFY(editor_->message().contains(QStringLiteral("singular")));
        QVERIFY(!h22->styleSheet().isEmpty());
        // The reason shows next to the matrix, not only in the field's tooltip.
        QVERIFY2(editor_->matrixNote().contains(QStringLiteral("h22")) &&
                     editor_->matrixNote().contains(QStringLiteral("singular")),
                 qPrintable(editor_->matrixNote()));
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
    }

    void everyInterpolationAndBorder_data() {
        QTest::addColumn<int>("interpolation");
        QTest::addColumn<int>("border");
        QTest::addColumn<int>("outputSize");
        const char* interpolations[] = {"nearest", "linear", "cubic", "lanczos4"};
        const char* borders[] = {"constant", "replicate", "reflect", "reflect101", "wrap"};
        for (int i = 0; i < 4; ++i) {
            for (int b = 0; b < 5; ++b) {
                // Alternate the output size so that each border is seen around a fitted and a
                // fixed frame.
                const int size = (i + b) % 3;
                QTest::addRow("%s %s %s", interpolations[i], borders[b],
                              size == 0   ? "source"
                              : size == 1 ? "fit"
                                          : "custom")
                    << i << b << size;
            }
        }
    }
    void everyInterpolationAndBorder() {
        QFETCH(int, interpolation);
        QFETCH(int, border);
        QFETCH(int, outputSize);
        WarpState state = editor_->state();
        state.mode = WarpMode::MoveCorners;
        // Rotated, scaled down and keystoned: every border shows around the image.
        state.matrix = multiply(keystone(0.15, 160, 120), rotationAboutCentre(17, 160, 120));
        state.matrix = multiply({0.8, 0, 16, 0, 0.8, 12, 0, 0, 1}, state.matrix);
        state.interpolation = static_cast<my_ops::Interpolation>(interpolation);
        state.border = static_cast<my_ops::BorderMode>(border);
        state.borderValue = 77;
        state.outputSize = static_cast<OutputSize>(outputSize);
        state.outputWidth = 190;
        state.outputHeight = 101;
        QVERIFY(editor_->applyState(state, QStringLiteral("options")));
        QVERIFY(waitForFullResolution(*editor_));
        const QImage full = editor_->fullResolutionImage();
        const QImage reference = referenceWarp(editor_->sourceImage(), editor_->state());
        QCOMPARE(full.size(), reference.size());
        QCOMPARE(full, reference);
    }

    void zoomPanFitAndActualSize() {
        ImageCanvas* view = editor_->outputView();
        const QRectF image(-0.5, -0.5, 160, 120);
        // Fit (the state after init): the whole output is in view.
        QVERIFY(view->visibleSceneRect().contains(image));
        const ViewMapping fitted = view->mapping();
        // The wheel zooms by 1.25 a notch, about the mouse: the scene point under it stays.
        const QPointF at(view->viewport()->width() / 3.0, view->viewport()->height() / 2.0);
        const QPointF before = view->mapToScene(at.toPoint());
        QWheelEvent wheel(at, view->viewport()->mapToGlobal(at), {}, {0, 480}, Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(view->viewport(), &wheel);
        QVERIFY(std::abs(view->mapping().scale - fitted.scale * std::pow(1.25, 4)) < 1e-9);
        const QPointF after = view->mapToScene(at.toPoint());
        QVERIFY2(std::hypot(after.x() - before.x(), after.y() - before.y()) < 1.0 / fitted.scale,
                 "the point under the mouse moved");
        // A drag on the background pans: the scene moves with the mouse.
        const QPoint start = view->viewport()->rect().center();
        const QPoint end = start + QPoint(-40, -30);
        const QPointF sceneAtStart = view->mapToScene(start);
        QTest::mousePress(view->viewport(), Qt::LeftButton, {}, start);
        for (int step = 1; step <= 4; ++step) {
            // With the button held (QTest::mouseMove sends none).
            const QPoint to = start + (end - start) * step / 4;
            QMouseEvent move(QEvent::MouseMove, to, view->viewport()->mapToGlobal(to), Qt::NoButton,
                             Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &move);
        }
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, end);
        const QPointF moved = view->mapToScene(end);
        QVERIFY2(std::hypot(moved.x() - sceneAtStart.x(), moved.y() - sceneAtStart.y()) <
                     2.0 / view->mapping().scale,
                 "the view did not pan with the mouse");
        // 1:1 (Ctrl+1) and Fit (Ctrl+0) from the editor's actions.
        QAction* actual = nullptr;
        QAction* fit = nullptr;
        for (QAction* action : editor_->findChildren<QAction*>()) {
            if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_1)) {
                actual = action;
            } else if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_0)) {
                fit = action;
            }
        }
        QVERIFY(actual && fit);
        actual->trigger();
        QCOMPARE(view->mapping().scale, 1.0);
        QCOMPARE(editor_->sourceView()->mapping().scale, 1.0);
        fit->trigger();
        QVERIFY(std::abs(view->mapping().scale - fitted.scale) < 1e-9);
        QVERIFY(view->visibleSceneRect().contains(image));
        // A fitted view stays fitted when it is resized.
        editor_->resize(900, 600);
        QTRY_VERIFY(view->visibleSceneRect().contains(image));
        QVERIFY(view->mapping().scale < fitted.scale);
    }

    void tabSelectsTheNextHandle() {
        ImageCanvas* view = editor_->outputView();
        view->setFocus();
        view->selectHandle(0);
        for (int expected : {1, 2, 3, 0}) {
            QTest::keyClick(view, Qt::Key_Tab);
            QCOMPARE(view->selectedHandle(), expected);
        }
        QTest::keyClick(view, Qt::Key_Backtab, Qt::ShiftModifier);
        QCOMPARE(view->selectedHandle(), 3);
        QTest::keyClick(view, Qt::Key_Tab);
        QCOMPARE(view->selectedHandle(), 0);
        // The arrow keys then nudge that handle (the top-left one) and nothing else.
        QTest::keyClick(view, Qt::Key_Right, Qt::ShiftModifier);
        const auto corners = mappedCorners(editor_->matrix(), 160, 120);
        QVERIFY(corners && std::abs((*corners)[0].x - 10) < 1e-9 &&
                std::abs((*corners)[2].x - 159) < 1e-9);
    }

    void matrixButtonsAndPresets() {
        auto button = [&](const QString& text) {
            for (auto* b : editor_->findChildren<QPushButton*>()) {
                if (b->text() == text) {
                    return b;
                }
            }
            return static_cast<QPushButton*>(nullptr);
        };
        QPushButton* invert = button(QStringLiteral("Invert"));
        QPushButton* normalize = button(QStringLiteral("Normalize"));
        QPushButton* reset = button(QStringLiteral("Reset"));
        QPushButton* presets = button(QStringLiteral("Presets"));
        QVERIFY(invert && normalize && reset && presets && presets->menu());
        // Every preset sets the matrix it names, for this image's size.
        const std::map<QString, Homography> expected = {
            {QStringLiteral("Identity"), identityHomography()},
            {QStringLiteral("Rotate 90° clockwise"), rotationAboutCentre(90, 160, 120)},
            {QStringLiteral("Rotate 90° anticlockwise"), rotationAboutCentre(-90, 160, 120)},
            {QStringLiteral("Rotate 15°"), rotationAboutCentre(15, 160, 120)},
            {QStringLiteral("Rotate 180°"), rotationAboutCentre(180, 160, 120)},
            {QStringLiteral("Flip horizontally"), Homography{-1, 0, 159, 0, 1, 0, 0, 0, 1}},
            {QStringLiteral("Flip vertically"), Homography{1, 0, 0, 0, -1, 119, 0, 0, 1}},
            {QStringLiteral("Keystone (top narrower)"), keystone(0.3, 160, 120)},
            {QStringLiteral("Keystone (bottom narrower)"), keystone(-0.3, 160, 120)}};
        QCOMPARE(presets->menu()->actions().size(), int(expected.size()));
        for (QAction* action : presets->menu()->actions()) {
            QVERIFY2(expected.count(action->text()), qPrintable(action->text()));
            action->trigger();
            const Homography& want = expected.at(action->text());
            for (size_t i = 0; i < 9; ++i) {
                QVERIFY2(std::abs(editor_->matrix()[i] - want[i]) < 1e-9,
                         qPrintable(action->text()));
            }
        }
        // The 90-degree rotation moves the image's centre nowhere and its corner (0,0) onto
        // the other side.
        presets->menu()->actions().at(1)->trigger();
        const auto centre = mapPoint(editor_->matrix(), Point{79.5, 59.5});
        QVERIFY(centre && std::abs(centre->x - 79.5) < 1e-9 && std::abs(centre->y - 59.5) < 1e-9);
        // Invert: the product with the matrix before is the identity.
        const Homography k = keystone(0.2, 160, 120);
        QVERIFY(editor_->setMatrix(k));
        invert->click();
        const Homography product = multiply(editor_->matrix(), k);
        for (size_t i = 0; i < 9; ++i) {
            QVERIFY(std::abs(product[i] / product[8] - identityHomography()[i]) < 1e-9);
        }
        // Normalize: the same warp with h33 = 1.
        Homography scaled = k;
        for (double& v : scaled) {
            v *= 2.5;
        }
        QVERIFY(editor_->setMatrix(scaled));
        normalize->click();
        for (size_t i = 0; i < 9; ++i) {
            QVERIFY(std::abs(editor_->matrix()[i] - k[i] / k[8]) < 1e-12);
        }
        // Reset: the identity and the default options; one undo step each.
        WarpState state = editor_->state();
        state.interpolation = my_ops::Interpolation::Cubic;
        state.border = my_ops::BorderMode::Wrap;
        QVERIFY(editor_->applyState(state, QStringLiteral("options")));
        const int steps = editor_->undoStack()->count();
        reset->click();
        // The identity and the default options; the handle mode stays, a custom size becomes
        // the image's.
        WarpState fresh;
        fresh.outputWidth = 160;
        fresh.outputHeight = 120;
        QVERIFY(editor_->state() == fresh);
        QCOMPARE(editor_->undoStack()->count(), steps + 1);
        editor_->undoStack()->undo();
        QCOMPARE(editor_->state().border, my_ops::BorderMode::Wrap);
    }

    void copyAsPythonAndCpp() {
        const Homography k = keystone(0.2, 160, 120);
        QVERIFY(editor_->setMatrix(k));
        auto* copy = [&]() {
            for (auto* b : editor_->findChildren<QToolButton*>()) {
                if (b->text() == QStringLiteral("Copy As")) {
                    return b;
                }
            }
            return static_cast<QToolButton*>(nullptr);
        }();
        QVERIFY(copy && copy->menu() && copy->menu()->actions().size() == 2);
        // Each literal holds the nine values exactly (17 significant digits read back equal).
        auto numbersIn = [](const QString& text) {
            std::vector<double> values;
            static const QRegularExpression number(
                QStringLiteral("-?\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?"));
            // The values only: not the "64" of dtype=np.float64.
            const QString literal = text.section(QStringLiteral("dtype"), 0, 0);
            auto it = number.globalMatch(literal.mid(literal.indexOf(QLatin1Char('['))));
            while (it.hasNext()) {
                values.push_back(it.next().captured().toDouble());
            }
            return values;
        };
        copy->menu()->actions().at(0)->trigger();
        const QString numpy = QGuiApplication::clipboard()->text();
        QVERIFY2(numpy.startsWith(QStringLiteral("np.array([[")), qPrintable(numpy));
        QCOMPARE(numpy, matrixAsNumpy(k));
        copy->menu()->actions().at(1)->trigger();
        const QString cpp = QGuiApplication::clipboard()->text();
        QVERIFY2(cpp.contains(QStringLiteral("cv::Matx33d")), qPrintable(cpp));
        QCOMPARE(cpp, matrixAsCpp(k));
        const auto fromNumpy = numbersIn(numpy);
        QCOMPARE(fromNumpy.size(), size_t(9));
        for (size_t i = 0; i < 9; ++i) {
            QCOMPARE(fromNumpy[i], k[i]);
        }
        QVERIFY(editor_->message().contains(QStringLiteral("NumPy")) ||
                editor_->message().contains(QStringLiteral("C++")));
    }

    void gridSplitAndBlendAreDrawn() {
        // Flipped, so that the source and the output differ at every point off the centre line.
        QVERIFY(editor_->setMatrix(flipHorizontal(160)));
        QVERIFY(waitForFullResolution(*editor_));
        ImageCanvas* view = editor_->outputView();
        QCheckBox* grid = nullptr;
        QCheckBox* outline = nullptr;
        for (auto* box : editor_->findChildren<QCheckBox*>()) {
            if (box->text() == QStringLiteral("Grid on the output")) {
                grid = box;
            } else if (box->text() == QStringLiteral("Quad outlines")) {
                outline = box;
            }
        }
        QComboBox* compare = nullptr;
        for (auto* combo : editor_->findChildren<QComboBox*>()) {
            if (combo->findData(QStringLiteral("blend")) >= 0) {
                compare = combo;
            }
        }
        QSlider* amount = editor_->findChild<QSlider*>();
        QVERIFY(grid && outline && compare && amount);
        outline->setChecked(false);
        auto shot = [&]() {
            QApplication::processEvents();
            return view->viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
        };
        // The colour drawn at an image point, as on screen.
        auto drawnAt = [&](const QImage& image, Point p) {
            const QPoint at = view->mapFromScene(QPointF(p.x, p.y)) * view->devicePixelRatioF();
            return QColor(image.pixel(at));
        };
        auto near = [](QColor a, QColor b, int tolerance) {
            return std::abs(a.red() - b.red()) <= tolerance &&
                   std::abs(a.green() - b.green()) <= tolerance &&
                   std::abs(a.blue() - b.blue()) <= tolerance;
        };
        const QImage& source = editor_->sourceImage();
        const QImage output = editor_->fullResolutionImage();
        const Point left{20, 60}, right{140, 60};
        const QImage plain = shot();
        QVERIFY(near(drawnAt(plain, left), output.pixelColor(20, 60), 2));
        // Grid: lines over the output change pixels, and only while it is on.
        grid->setChecked(true);
        const QImage withGrid = shot();
        QVERIFY(withGrid != plain);
        grid->setChecked(false);
        QCOMPARE(shot(), plain);
        // Split at 50%: the source left of the line, the warped image right of it.
        compare->setCurrentIndex(compare->findData(QStringLiteral("split")));
        amount->setValue(50);
        const QImage split = shot();
        QVERIFY(near(drawnAt(split, left), source.pixelColor(20, 60), 2));
        QVERIFY(near(drawnAt(split, right), output.pixelColor(140, 60), 2));
        // Blend at 25%: a quarter of the source over the output.
        compare->setCurrentIndex(compare->findData(QStringLiteral("blend")));
        amount->setValue(25);
        const QImage blend = shot();
        for (const Point& p : {left, right}) {
            const QColor s = source.pixelColor(int(p.x), int(p.y));
            const QColor o = output.pixelColor(int(p.x), int(p.y));
            const QColor mixed((s.red() + 3 * o.red()) / 4, (s.green() + 3 * o.green()) / 4,
                               (s.blue() + 3 * o.blue()) / 4);
            QVERIFY2(near(drawnAt(blend, p), mixed, 3),
                     qPrintable(drawnAt(blend, p).name() + QStringLiteral(" vs ") + mixed.name()));
        }
        compare->setCurrentIndex(compare->findData(QStringLiteral("off")));
        QCOMPARE(shot(), plain);
        outline->setChecked(true);
    }

    void dragPreviewShowsTheWarp() {
        // At 1:1 the preview samples the output's own pixel centres: every pixel it shows during a
        // drag equals cv::warpPerspective of the quad the handles are at.
        ImageCanvas* view = editor_->outputView();
        view->actualSize();
        QApplication::processEvents();
        const auto quad = view->handles();
        QVERIFY(quad.has_value());
        const QPoint from = onScreen(view, (*quad)[2]);
        const QPoint to = from - QPoint(30, 20);
        QSignalSpy previews(editor_.get(), &WarpEditor::previewShown);
        QTest::mousePress(view->viewport(), Qt::LeftButton, {}, from);
        QTest::mouseMove(view->viewport(), to);
        QVERIFY(QTest::qWaitFor(
            [&]() { return editor_->shownRender() == editor_->lastRequestedRender(); }, 10000));
        QVERIFY(!previews.isEmpty());
        const auto dragged = view->handles();
        QVERIFY(dragged.has_value());
        QVERIFY(std::abs((*dragged)[2].x - (*quad)[2].x) > 10); // the handle moved with the mouse
        const auto h = homographyBetween(imageCorners(160, 120), *dragged);
        QVERIFY(h.ok());
        WarpState shown = editor_->state();
        shown.matrix = *h;
        const QImage reference = referenceWarp(editor_->sourceImage(), shown);
        const QRectF visible = view->visibleSceneRect();
        int compared = 0;
        for (int y = 0; y < 120; ++y) {
            for (int x = 0; x < 160; ++x) {
                if (!visible.contains(QPointF(x, y))) {
                    continue;
                }
                const auto colour = view->pixelAt(QPointF(x, y));
                QVERIFY2(colour.has_value(), qPrintable(QStringLiteral("%1,%2").arg(x).arg(y)));
                QVERIFY2(colour->rgba() == reference.pixelColor(x, y).rgba(),
                         qPrintable(QStringLiteral("preview pixel %1,%2: %3 vs %4")
                                        .arg(x)
                                        .arg(y)
                                        .arg(colour->name(QColor::HexArgb),
                                             reference.pixelColor(x, y).name(QColor::HexArgb))));
                ++compared;
            }
        }
        QVERIFY(compared > 5000);
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, to);
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
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(path), scriptscope::test::scaled(10000));
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
