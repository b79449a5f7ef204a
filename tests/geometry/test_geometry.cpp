// The warp editor's math, table-driven and without widgets: corners -> matrix -> corners,
// decomposition -> composition, degenerate quads and matrices, output fitting, and view <-> image
// mapping under zoom and pan.
#include <homography.h>

#include "test_support.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>

using namespace scriptscope;

Q_DECLARE_METATYPE(scriptscope::Quad)
Q_DECLARE_METATYPE(scriptscope::Homography)
Q_DECLARE_METATYPE(scriptscope::Decomposition)

namespace {

Quad quad(std::initializer_list<double> v) {
    Quad q{};
    auto it = v.begin();
    for (Point& p : q) {
        p.x = *it++;
        p.y = *it++;
    }
    return q;
}

double maxDifference(const Homography& a, const Homography& b) {
    double d = 0;
    for (size_t i = 0; i < 9; ++i) {
        d = std::max(d, std::abs(a[i] - b[i]));
    }
    return d;
}

} // namespace

class TestGeometry : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cornersMatrixEqualsOpenCv() {
        // The matrix that maps an image's corners onto four points equals the one
        // cv2.getPerspectiveTransform gave the fixture script (scaled so that h33 is 1).
        const auto cases =
            QJsonDocument::fromJson(QByteArray::fromStdString(scriptscope::test::readText(
                                        scriptscope::test::fixture("perspective_transforms.json"))))
                .array();
        QVERIFY(cases.size() >= 5);
        for (const auto& value : cases) {
            const QJsonObject c = value.toObject();
            const QJsonArray target = c[QStringLiteral("target")].toArray();
            Quad q{};
            for (int i = 0; i < 4; ++i) {
                q[static_cast<size_t>(i)] = {target[i].toArray()[0].toDouble(),
                                             target[i].toArray()[1].toDouble()};
            }
            const int width = c[QStringLiteral("width")].toInt();
            const int height = c[QStringLiteral("height")].toInt();
            const auto h = homographyBetween(imageCorners(width, height), q);
            QVERIFY2(h.ok(), h.ok() ? "" : h.error().message.c_str());
            const QJsonArray matrix = c[QStringLiteral("matrix")].toArray();
            for (size_t i = 0; i < 9; ++i) {
                const double python = matrix[static_cast<int>(i)].toDouble();
                const double ours = (*h)[i] / (*h)[8];
                QVERIFY2(std::abs(ours - python) <= 1e-9 + 1e-7 * std::abs(python),
                         qPrintable(QStringLiteral("%1x%2, element %3: %4 vs OpenCV's %5")
                                        .arg(width)
                                        .arg(height)
                                        .arg(i)
                                        .arg(ours, 0, 'g', 17)
                                        .arg(python, 0, 'g', 17)));
            }
        }
    }

    void cornersRoundTrip_data() {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::addColumn<Quad>("target");
        QTest::newRow("identity") << 640 << 480 << imageCorners(640, 480);
        QTest::newRow("keystone") << 640 << 480 << quad({100, 0, 539, 0, 639, 479, 0, 479});
        QTest::newRow("document") << 1920 << 1080
                                  << quad({212.5, 97.25, 1700, 140, 1810.75, 1020, 90, 960.5});
        QTest::newRow("mirrored") << 100 << 50 << quad({99, 0, 0, 0, 0, 49, 99, 49});
        QTest::newRow("rotated 90") << 100 << 50 << quad({49, 0, 49, 99, 0, 99, 0, 0});
        QTest::newRow("far outside")
            << 64 << 64 << quad({-5000, -4000, 9000, -3000, 8000, 7000, -6000, 8000});
        QTest::newRow("tiny image") << 2 << 2 << quad({0.1, 0.2, 1.3, 0.1, 1.1, 1.4, 0, 0.9});
    }
    void cornersRoundTrip() {
        QFETCH(int, width);
        QFETCH(int, height);
        QFETCH(Quad, target);
        const auto h = homographyBetween(imageCorners(width, height), target);
        QVERIFY2(h.ok(), h.ok() ? "" : h.error().message.c_str());
        QVERIFY(!homographyProblem(*h, width, height));
        const auto back = mappedCorners(*h, width, height);
        QVERIFY(back.has_value());
        const double scale = std::max(1.0, std::abs(target[0].x) + std::abs(target[2].y));
        for (size_t i = 0; i < 4; ++i) {
            QVERIFY2(std::abs((*back)[i].x - target[i].x) < 1e-9 * scale &&
                         std::abs((*back)[i].y - target[i].y) < 1e-9 * scale,
                     qPrintable(QStringLiteral("corner %1: %2,%3 vs %4,%5")
                                    .arg(i)
                                    .arg((*back)[i].x)
                                    .arg((*back)[i].y)
                                    .arg(target[i].x)
                                    .arg(target[i].y)));
        }
        // And the inverse takes them back to the image's corners.
        const auto inverse = inverted(*h);
        QVERIFY(inverse.has_value());
        const auto corner = mapPoint(*inverse, target[2]);
        QVERIFY(corner && std::abs(corner->x - (width - 1)) < 1e-6 &&
                std::abs(corner->y - (height - 1)) < 1e-6);
    }

    void decompositionRoundTrip_data() {
        QTest::addColumn<Homography>("h");
        QTest::newRow("identity") << identityHomography();
        QTest::newRow("translation") << Homography{1, 0, 12.5, 0, 1, -7, 0, 0, 1};
        QTest::newRow("rotation") << rotationAboutCentre(33, 640, 480);
        QTest::newRow("rotation 180") << rotationAboutCentre(180, 640, 480);
        QTest::newRow("flip") << flipHorizontal(640);
        QTest::newRow("flip vertical") << flipVertical(480);
        QTest::newRow("keystone") << keystone(0.3, 640, 480);
        QTest::newRow("python fixture")
            << Homography{0.92, 0.08, 12.5, -0.06, 1.05, 7.25, 0.0004, -0.0002, 1.0};
        QTest::newRow("unnormalized")
            << Homography{1.84, 0.16, 25, -0.12, 2.1, 14.5, 0.0008, -0.0004, 2};
        QTest::newRow("shear and scale") << Homography{2, 0.7, 3, 0, 0.5, 4, 0, 0, 1};
    }
    void decompositionRoundTrip() {
        QFETCH(Homography, h);
        const auto d = decompose(h);
        QVERIFY(d.ok());
        QVERIFY(d->sx > 0);
        const Homography back = compose(*d);
        const auto n = normalized(h);
        QVERIFY(n.has_value());
        QVERIFY2(maxDifference(back, *n) < 1e-9,
                 qPrintable(QString::number(maxDifference(back, *n))));
    }

    void decompositionMeansWhatItSays() {
        Decomposition d;
        d.tx = 10;
        d.ty = -4;
        d.rotationDegrees = 90;
        d.sx = 2;
        d.sy = 3;
        const Homography h = compose(d);
        // (1, 0): scaled to (2, 0), rotated 90 degrees clockwise on screen to (0, 2), moved.
        const auto p = mapPoint(h, Point{1, 0});
        QVERIFY(p && std::abs(p->x - 10) < 1e-12 && std::abs(p->y - (-4 + 2)) < 1e-12);
        // The perspective terms are h31 and h32.
        d.px = 1e-3;
        d.py = -2e-3;
        const Homography withPerspective = compose(d);
        QCOMPARE(withPerspective[6], 1e-3);
        QCOMPARE(withPerspective[7], -2e-3);
        const auto back = decompose(withPerspective);
        QVERIFY(back.ok());
        QVERIFY(std::abs(back->rotationDegrees - 90) < 1e-9);
        QVERIFY(std::abs(back->sy - 3) < 1e-9);
    }

    void degenerateQuads_data() {
        QTest::addColumn<Quad>("target");
        QTest::newRow("self-intersecting") << quad({0, 0, 100, 100, 100, 0, 0, 100});
        QTest::newRow("bow tie") << quad({0, 0, 100, 0, 0, 100, 100, 100});
        QTest::newRow("collapsed to a line") << quad({0, 0, 50, 50, 100, 100, 150, 150});
        QTest::newRow("two corners equal") << quad({0, 0, 0, 0, 100, 100, 0, 100});
        QTest::newRow("all at one point") << quad({5, 5, 5, 5, 5, 5, 5, 5});
        QTest::newRow("concave") << quad({0, 0, 100, 0, 30, 30, 0, 100});
        QTest::newRow("nearly flat") << quad({0, 0, 100, 0, 100, 1e-9, 0, 1e-9});
        QTest::newRow("not finite") << quad({0, 0, qInf(), 0, 100, 100, 0, 100});
        QTest::newRow("nan") << quad({0, 0, 100, 0, 100, qQNaN(), 0, 100});
        // 100 long, 1 wide: a streak, not a picture.
        QTest::newRow("sliver") << quad({0, 0, 100, 0, 100, 1, 0, 1});
    }
    void degenerateQuads() {
        QFETCH(Quad, target);
        QVERIFY(quadProblem(target).has_value());
        const auto h = homographyBetween(imageCorners(160, 120), target);
        QVERIFY(!h.ok());
        QCOMPARE(h.error().kind, ErrorKind::Input);
    }

    void degenerateMatrices_data() {
        QTest::addColumn<Homography>("h");
        QTest::addColumn<QString>("why");
        QTest::newRow("zero") << Homography{} << QStringLiteral("singular");
        QTest::newRow("rank 2") << Homography{1, 2, 3, 2, 4, 6, 0, 0, 1}
                                << QStringLiteral("singular");
        QTest::newRow("nearly singular")
            << Homography{1, 0, 0, 0, 1e-14, 0, 0, 0, 1} << QStringLiteral("singular");
        QTest::newRow("nan") << Homography{1, 0, 0, 0, qQNaN(), 0, 0, 0, 1}
                             << QStringLiteral("finite");
        QTest::newRow("infinity") << Homography{1, 0, qInf(), 0, 1, 0, 0, 0, 1}
                                  << QStringLiteral("finite");
        // w = 1 - x/100 is zero at x = 100 and negative beyond: the horizon crosses the image.
        QTest::newRow("horizon inside")
            << Homography{1, 0, 0, 0, 1, 0, -0.01, 0, 1} << QStringLiteral("horizon");
        QTest::newRow("corner at infinity")
            << Homography{1, 0, 0, 0, 1, 0, -1.0 / 159, 0, 1} << QStringLiteral("infinity");
        // The demo's matrix with h11 = h12 = 0 (typed one after the other): a sliver.
        QTest::newRow("h11 = h12 = 0")
            << Homography{0,          0,           -113.940803,     -0.123459034,
                          1.08369596, -18.7109025, -2.36843824e-04, 1.23346447e-03,
                          1}
            << QStringLiteral("nearly collapsed");
    }
    void degenerateMatrices() {
        QFETCH(Homography, h);
        QFETCH(QString, why);
        const int width = QByteArray(QTest::currentDataTag()) == "h11 = h12 = 0" ? 640 : 160;
        const int height = width == 640 ? 480 : 120;
        const auto problem = homographyProblem(h, width, height);
        QVERIFY(problem.has_value());
        QVERIFY2(QString::fromStdString(*problem).contains(why), problem->c_str());
    }

    void goodMatricesPass() {
        QVERIFY(!homographyProblem(identityHomography(), 160, 120));
        QVERIFY(!homographyProblem(flipHorizontal(160), 160, 120));
        QVERIFY(!homographyProblem(rotationAboutCentre(45, 160, 120), 160, 120));
        // The same matrix scaled by -1 is the same warp (every w negative).
        Homography negated = keystone(0.2, 160, 120);
        for (double& v : negated) {
            v = -v;
        }
        QVERIFY(!homographyProblem(negated, 160, 120));
    }

    void normalizeAndInvert() {
        const Homography h{2, 0, 4, 0, 2, 6, 0, 0, 2};
        const auto n = normalized(h);
        QVERIFY(n.has_value());
        QCOMPARE((*n)[8], 1.0);
        QCOMPARE((*n)[2], 2.0);
        QVERIFY(!normalized(Homography{1, 0, 0, 0, 1, 0, 1, 0, 0}).has_value());
        const auto inverse = inverted(h);
        QVERIFY(inverse.has_value());
        QVERIFY(maxDifference(multiply(h, *inverse), identityHomography()) < 1e-12);
        QVERIFY(!inverted(Homography{}).has_value());
        QVERIFY(std::isinf(conditionNumber(Homography{})));
    }

    void presets() {
        // 90 degrees about the centre of a square image swaps its corners around.
        const Homography r = rotationAboutCentre(90, 101, 101);
        const auto p = mapPoint(r, Point{0, 0});
        QVERIFY(p && std::abs(p->x - 100) < 1e-9 && std::abs(p->y - 0) < 1e-9);
        const auto f = mapPoint(flipHorizontal(160), Point{0, 10});
        QVERIFY(f && f->x == 159 && f->y == 10);
        const auto k = mappedCorners(keystone(0.5, 101, 51), 101, 51);
        QVERIFY(k && std::abs((*k)[0].x - 25) < 1e-9 && std::abs((*k)[1].x - 75) < 1e-9 &&
                std::abs((*k)[2].x - 100) < 1e-9);
    }

    void fitOutputBoundsTheWarpedImage() {
        const Homography rotate = rotationAboutCentre(45, 101, 101);
        const auto fitted = fitOutput(rotate, 101, 101);
        QVERIFY(fitted.ok());
        // A 100-pixel square turned 45 degrees spans 100 * sqrt(2) pixels.
        QCOMPARE(fitted->width, static_cast<int>(std::ceil(100 * std::sqrt(2.0))) + 1);
        QCOMPARE(fitted->width, fitted->height);
        const auto corners = mappedCorners(fitted->homography, 101, 101);
        double minX = 1e9, minY = 1e9;
        for (const Point& c : *corners) {
            minX = std::min(minX, c.x);
            minY = std::min(minY, c.y);
        }
        QVERIFY(std::abs(minX) < 1e-9 && std::abs(minY) < 1e-9);
        QVERIFY(std::abs(fitted->left - (50 - 50 * std::sqrt(2.0))) < 1e-9);
        // Too large an output is refused with the size in words.
        const auto huge = fitOutput(Homography{1000, 0, 0, 0, 1000, 0, 0, 0, 1}, 100, 100);
        QVERIFY(!huge.ok());
        QVERIFY(huge.error().message.find("more than") != std::string::npos);
    }

    void rectifiedSizeFollowsTheQuad() {
        const auto size = rectifiedSize(quad({10, 10, 210, 20, 205, 110, 12, 100}));
        QCOMPARE(size[0], 201); // the longer of the top (200.2) and bottom (193) edges, + 1
        QCOMPARE(size[1], 91);  // the longer of the left (90) and right (90.1) edges, + 1
    }

    void viewMapping_data() {
        QTest::addColumn<double>("scale");
        QTest::addColumn<double>("offsetX");
        QTest::addColumn<double>("offsetY");
        QTest::addColumn<double>("factor");
        QTest::addColumn<double>("anchorX");
        QTest::addColumn<double>("anchorY");
        QTest::newRow("1:1 zoom in at the corner") << 1.0 << 0.0 << 0.0 << 2.0 << 0.0 << 0.0;
        QTest::newRow("zoom in off centre") << 0.5 << 30.0 << -12.0 << 1.25 << 317.0 << 205.0;
        QTest::newRow("zoom out") << 4.0 << -800.0 << -600.0 << 0.8 << 10.0 << 700.0;
        QTest::newRow("panned far") << 2.0 << 5000.0 << -7000.0 << 3.0 << 640.0 << 360.0;
    }
    void viewMapping() {
        QFETCH(double, scale);
        QFETCH(double, offsetX);
        QFETCH(double, offsetY);
        QFETCH(double, factor);
        QFETCH(double, anchorX);
        QFETCH(double, anchorY);
        ViewMapping m{scale, offsetX, offsetY};
        // view -> image -> view is the identity.
        const Point image{123.25, -45.5};
        const Point view = m.toView(image);
        const Point back = m.toImage(view);
        QVERIFY(std::abs(back.x - image.x) < 1e-9 && std::abs(back.y - image.y) < 1e-9);
        // Zooming keeps the image point under the anchor where it is.
        const Point under = m.toImage(Point{anchorX, anchorY});
        m.zoomAround(Point{anchorX, anchorY}, factor);
        QVERIFY(std::abs(m.scale - scale * factor) < 1e-12);
        const Point still = m.toView(under);
        QVERIFY(std::abs(still.x - anchorX) < 1e-9 && std::abs(still.y - anchorY) < 1e-9);
    }

    void zoomIsClamped() {
        ViewMapping m;
        m.zoomAround(Point{10, 10}, 1e6);
        QCOMPARE(m.scale, 64.0);
        m.zoomAround(Point{10, 10}, 1e-9);
        QCOMPARE(m.scale, 1.0 / 64);
    }

    void fitCentresTheImage() {
        const ViewMapping m = ViewMapping::fit(1920, 1080, 960, 700, 10);
        QCOMPARE(m.scale, 940.0 / 1920);
        const Point centre = m.toView(Point{960, 540});
        QVERIFY(std::abs(centre.x - 480) < 1e-9 && std::abs(centre.y - 350) < 1e-9);
    }
};

QTEST_APPLESS_MAIN(TestGeometry)
#include "test_geometry.moc"
