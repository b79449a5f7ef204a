// Homography files: every format round-trips, files written by NumPy and OpenCV's Python bindings
// are read, damaged files give errors, and corners map to the matrix cv2 computes.
#include "test_support.h"

#include <matrix_io.h>

#include <nlohmann/json.hpp>

#include <QFileInfo>
#include <QTemporaryDir>

using namespace scriptscope;
using scriptscope::test::fixture;

namespace {

Homography expectedMatrix() {
    const auto json =
        nlohmann::json::parse(scriptscope::test::readText(fixture("homography.expected.json")));
    Homography h{};
    for (size_t r = 0; r < 3; ++r) {
        for (size_t c = 0; c < 3; ++c) {
            h[r * 3 + c] = json["matrix"][r][c].get<double>();
        }
    }
    return h;
}

bool near(const Homography& a, const Homography& b, double tolerance) {
    for (size_t i = 0; i < 9; ++i) {
        if (std::abs(a[i] - b[i]) > tolerance * std::max(1.0, std::abs(b[i]))) {
            return false;
        }
    }
    return true;
}

} // namespace

class TestMatrixIo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("json") << QStringLiteral("h.json");
        QTest::newRow("npy") << QStringLiteral("h.npy");
        QTest::newRow("xml") << QStringLiteral("h.xml");
        QTest::newRow("yml") << QStringLiteral("h.yml");
        QTest::newRow("yaml.gz") << QStringLiteral("h.yaml.gz");
    }

    void roundTrip() {
        QFETCH(QString, file);
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/" + file.toStdString();
        const Homography h{
            1.0 / 3.0, -2.5e-7, 1234.5678901234567, 0.1, 0.9999999999999999, -7, 1e-9, -3e-5, 1};
        QVERIFY(!writeMatrixFile(path, h));
        const auto back = readMatrixFile(path);
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
        // JSON and NPY keep every bit; OpenCV writes 17 significant digits, which is also exact.
        QVERIFY(back.value() == h);
    }

    void readsNumPyAndOpenCvFiles_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("node");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("np.save float64")
            << QStringLiteral("homography_f64.npy") << QString() << 0.0;
        QTest::newRow("np.save float32")
            << QStringLiteral("homography_f32.npy") << QString() << 1e-7;
        QTest::newRow("np.save Fortran order")
            << QStringLiteral("homography_fortran.npy") << QString() << 0.0;
        QTest::newRow("cv2.FileStorage XML, first matrix")
            << QStringLiteral("homography.xml") << QString() << 1e-15;
        QTest::newRow("cv2.FileStorage YAML, by name")
            << QStringLiteral("homography.yml") << QStringLiteral("warp") << 1e-15;
        QTest::newRow("JSON") << QStringLiteral("homography.expected.json") << QString() << 0.0;
    }

    void readsNumPyAndOpenCvFiles() {
        QFETCH(QString, file);
        QFETCH(QString, node);
        QFETCH(double, tolerance);
        const auto h = readMatrixFile(fixture(file.toStdString()), node.toStdString());
        QVERIFY2(h.ok(), h.ok() ? "" : h.error().message.c_str());
        QVERIFY(near(h.value(), expectedMatrix(), tolerance));
    }

    void firstMatrixIsTheFirst3x3() {
        // homography.yml holds a 2x2 "other" before the 3x3 "warp": the first 3x3 is taken.
        const auto h = readMatrixFile(fixture("homography.yml"));
        QVERIFY(h.ok());
        QVERIFY(near(h.value(), expectedMatrix(), 1e-15));
        const auto missing = readMatrixFile(fixture("homography.yml"), "nope");
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("no node named 'nope'") != std::string::npos);
        const auto small = readMatrixFile(fixture("homography.yml"), "other");
        QVERIFY(!small.ok());
        QVERIFY(small.error().message.find("2x2, not 3x3") != std::string::npos);
    }

    void jsonForms_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::newRow("object") << QStringLiteral("{\"matrix\": [[1,0,0],[0,1,0],[0,0,1]]}")
                                << true;
        QTest::newRow("homography key")
            << QStringLiteral("{\"homography\": [1,0,0,0,1,0,0,0,1]}") << true;
        QTest::newRow("bare 3x3") << QStringLiteral("[[1,0,0],[0,1,0],[0,0,1]]") << true;
        QTest::newRow("bare 9") << QStringLiteral("[1,0,0,0,1,0,0,0,1]") << true;
        QTest::newRow("2x2") << QStringLiteral("[[1,0],[0,1]]") << false;
        QTest::newRow("strings") << QStringLiteral("[[\"1\",0,0],[0,1,0],[0,0,1]]") << false;
        QTest::newRow("no matrix") << QStringLiteral("{\"m\": 1}") << false;
        QTest::newRow("not json") << QStringLiteral("[[1,0,0],") << false;
        QTest::newRow("empty") << QString() << false;
    }

    void jsonForms() {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        const auto h = parseMatrixJson(text.toStdString());
        QCOMPARE(h.ok(), valid);
        if (valid) {
            QVERIFY((h.value() == Homography{1, 0, 0, 0, 1, 0, 0, 0, 1}));
        } else {
            QCOMPARE(h.error().kind, ErrorKind::Format);
        }
    }

    void damagedNpy() {
        const std::string good = encodeNpy(expectedMatrix());
        QVERIFY(parseNpy(good).ok());
        QVERIFY(!parseNpy(good.substr(0, good.size() - 1)).ok()); // data cut short
        QVERIFY(!parseNpy(good.substr(0, 20)).ok());              // header cut short
        QVERIFY(!parseNpy("not npy at all").ok());
        std::string wrongShape = good;
        wrongShape.replace(wrongShape.find("(3, 3)"), 6, "(9,)  ");
        QVERIFY(!parseNpy(wrongShape).ok());
        std::string integers = good;
        integers.replace(integers.find("<f8"), 3, "<i8");
        QVERIFY(parseNpy(integers).error().message.find("float32 or float64") != std::string::npos);
        QCOMPARE(good.size() % 64,
                 size_t(72 % 64)); // header padded to 64 bytes, then 72 data bytes
    }

    void hostileNpyHeaders() {
        // Found by fuzz_matrix: a dtype width too long for an int threw out of the parser.
        const std::string huge = scriptscope::test::readText(
            std::string(SCRIPTSCOPE_SOURCE_DIR) +
            "/tests/fuzz/regressions/fuzz_matrix/npy-huge-dtype-width.npy");
        const auto h = parseNpy(huge);
        QVERIFY(!h.ok());
        QCOMPARE(h.error().kind, ErrorKind::Format);
        // A header far longer than a 3x3 array needs is refused before any regex sees it.
        std::string longHeader = encodeNpy(identityHomography());
        longHeader[8] = '\x00';
        longHeader[9] = '\x7f';
        longHeader.resize(10 + 0x7f00, ' ');
        QVERIFY(parseNpy(longHeader).error().message.find("far more") != std::string::npos);
    }

    void openCvCrashStaysInAChild() {
        // Found by fuzz_matrix: this XML makes OpenCV 4.6's FileStorage parser crash. Matrix files
        // are read in the GUI's process, so the parse runs in a child and only a message returns.
        const std::string path = std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                 "/tests/fuzz/regressions/fuzz_matrix/xml-crashes-opencv.xml";
        const auto h = readMatrixFile(path);
        QVERIFY(!h.ok());
        QCOMPARE(h.error().kind, ErrorKind::Format);
        qInfo("%s", h.error().message.c_str());
        // A node claiming a huge matrix is not allocated.
        const std::string hugePath = std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                     "/tests/fuzz/regressions/fuzz_matrix/yaml-huge-matrix.yml";
        QVERIFY2(QFileInfo::exists(QString::fromStdString(hugePath)), hugePath.c_str());
        const auto huge = readMatrixFile(hugePath);
        QVERIFY(!huge.ok());
        QCOMPARE(huge.error().kind, ErrorKind::Format);
        // Good files still read the same way.
        QVERIFY(readMatrixFile(fixture("homography.xml")).ok());
    }

    void missingFile() {
        const auto h = readMatrixFile(fixture("no-such-matrix.json"));
        QVERIFY(!h.ok());
        QCOMPARE(h.error().kind, ErrorKind::File);
        QVERIFY(!readMatrixFile(fixture("no-such-matrix.xml")).ok());
        QCOMPARE(readMatrixFile(fixture("text.pt")).error().kind, ErrorKind::Format);
    }

    void corners() {
        // The same corners make_fixtures.py gave cv2.getPerspectiveTransform.
        const std::array<double, 8> c{10, 5, 150, 12, 140, 110, 4, 100};
        const auto h = homographyFromCorners(160, 120, c);
        QVERIFY(h.ok());
        // The matrix takes the image's corners to the given ones.
        const double source[4][2] = {{0, 0}, {159, 0}, {159, 119}, {0, 119}};
        for (size_t i = 0; i < 4; ++i) {
            const auto& m = h.value();
            const double w = m[6] * source[i][0] + m[7] * source[i][1] + m[8];
            const double x = (m[0] * source[i][0] + m[1] * source[i][1] + m[2]) / w;
            const double y = (m[3] * source[i][0] + m[4] * source[i][1] + m[5]) / w;
            QVERIFY(std::abs(x - c[2 * i]) < 1e-3 && std::abs(y - c[2 * i + 1]) < 1e-3);
        }
    }

    void degenerateCorners_data() {
        QTest::addColumn<QVector<double>>("corners");
        QTest::newRow("self-intersecting") << QVector<double>{0, 0, 100, 100, 100, 0, 0, 100};
        QTest::newRow("collapsed") << QVector<double>{0, 0, 50, 50, 100, 100, 150, 150};
        QTest::newRow("two corners equal") << QVector<double>{0, 0, 0, 0, 100, 100, 0, 100};
        QTest::newRow("concave") << QVector<double>{0, 0, 100, 0, 30, 30, 0, 100};
        QTest::newRow("not finite") << QVector<double>{0, 0, qInf(), 0, 100, 100, 0, 100};
    }

    void degenerateCorners() {
        QFETCH(QVector<double>, corners);
        std::array<double, 8> c{};
        std::copy(corners.begin(), corners.end(), c.begin());
        const auto h = homographyFromCorners(160, 120, c);
        QVERIFY(!h.ok());
        QCOMPARE(h.error().kind, ErrorKind::Input);
    }
};

QTEST_GUILESS_MAIN(TestMatrixIo)
#include "test_matrix_io.moc"
