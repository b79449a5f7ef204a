// my_ops::warp_perspective against cv::warpPerspective, through the dispatcher as TorchScript
// calls it, and for every input it must refuse.
#include "test_support.h"

#include <warp_internal.h>
#include <warp_perspective.h>
#include <warp_sampling.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <opencv2/imgproc.hpp>
#include <torch/script.h>

using my_ops::WarpOptions;

namespace {

const double kH[9] = {0.92, 0.08, 12.5, -0.06, 1.05, 7.25, 0.0004, -0.0002, 1.0};

torch::Tensor homography() {
    return torch::from_blob(const_cast<double*>(kH), {3, 3}, torch::kFloat64).clone();
}

cv::Mat cvHomography() {
    return cv::Mat(3, 3, CV_64F, const_cast<double*>(kH)).clone();
}

// A deterministic image with structure: gradients and a checkerboard.
torch::Tensor testImage(int64_t height, int64_t width, int64_t channels, torch::ScalarType dtype) {
    auto y = torch::arange(height, torch::kFloat32).view({height, 1, 1});
    auto x = torch::arange(width, torch::kFloat32).view({1, width, 1});
    auto c = torch::arange(channels, torch::kFloat32).view({1, 1, channels});
    auto image =
        (x * 3 + y * 2 + c * 40 + ((x.floor_divide(8) + y.floor_divide(8)).remainder(2)) * 60)
            .remainder(256);
    return image.to(dtype).contiguous();
}

cv::Mat asMat(const torch::Tensor& t) {
    const auto c = t.contiguous();
    const int depth = c.scalar_type() == torch::kUInt8     ? CV_8U
                      : c.scalar_type() == torch::kFloat32 ? CV_32F
                                                           : CV_64F;
    const int channels = c.dim() == 3 ? static_cast<int>(c.size(2)) : 1;
    return cv::Mat(static_cast<int>(c.size(0)), static_cast<int>(c.size(1)),
                   CV_MAKETYPE(depth, channels), c.data_ptr())
        .clone();
}

cv::Mat reference(const torch::Tensor& image, cv::Size size, int flags, int border, double value) {
    cv::Mat out;
    cv::warpPerspective(asMat(image), out, cvHomography(), size, flags, border,
                        cv::Scalar::all(value));
    return out;
}

double maxDifference(const cv::Mat& a, const cv::Mat& b) {
    if (a.size() != b.size() || a.type() != b.type()) {
        return std::numeric_limits<double>::infinity();
    }
    return cv::norm(a, b, cv::NORM_INF);
}

// warp_sampling.h's per-pixel code run on the CPU over a whole image: what the CUDA kernel runs on
// the GPU, one thread per pixel.
template <typename T, typename Acc>
cv::Mat warpWithSharedCode(const cv::Mat& src, cv::Size size, const my_ops::sampling::Plan& plan) {
    cv::Mat dst(size, src.type());
    const my_ops::sampling::Image<const T> source{src.ptr<T>(), src.cols, src.rows, src.channels(),
                                                  static_cast<int64_t>(src.step1())};
    const my_ops::sampling::Image<T> target{dst.ptr<T>(), dst.cols, dst.rows, dst.channels(),
                                            static_cast<int64_t>(dst.step1())};
    for (int y = 0; y < dst.rows; ++y) {
        for (int x = 0; x < dst.cols; ++x) {
            my_ops::sampling::warpPixel<T, Acc>(source, target, x, y, plan);
        }
    }
    return dst;
}

c10::OperatorHandle optionsOp() {
    return c10::Dispatcher::singleton().findSchemaOrThrow("my_ops::warp_perspective", "options");
}

} // namespace

class TestWarpOp : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { my_ops::ensureRegistered(); }

    void matchesOpenCv_data() {
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("interpolation");
        QTest::addColumn<QString>("border");
        QTest::addColumn<bool>("inverse");
        QTest::addColumn<int>("outWidth");
        QTest::addColumn<int>("outHeight");
        const int u8 = static_cast<int>(torch::kUInt8), f32 = static_cast<int>(torch::kFloat32),
                  f64 = static_cast<int>(torch::kFloat64);
        QTest::newRow("HxW float32 linear") << 0 << f32 << QStringLiteral("linear")
                                            << QStringLiteral("constant") << false << 64 << 48;
        QTest::newRow("HxWx3 uint8 linear") << 3 << u8 << QStringLiteral("linear")
                                            << QStringLiteral("constant") << false << 64 << 48;
        QTest::newRow("HxWx1 uint8 nearest") << 1 << u8 << QStringLiteral("nearest")
                                             << QStringLiteral("replicate") << false << 64 << 48;
        QTest::newRow("HxWx4 uint8 cubic")
            << 4 << u8 << QStringLiteral("cubic") << QStringLiteral("reflect") << false << 80 << 40;
        QTest::newRow("HxWx3 float32 cubic wrap")
            << 3 << f32 << QStringLiteral("cubic") << QStringLiteral("wrap") << false << 64 << 48;
        QTest::newRow("HxW float64 lanczos") << 0 << f64 << QStringLiteral("lanczos4")
                                             << QStringLiteral("reflect101") << false << 30 << 70;
        QTest::newRow("HxWx3 uint8 inverse") << 3 << u8 << QStringLiteral("linear")
                                             << QStringLiteral("constant") << true << 64 << 48;
    }

    void matchesOpenCv() {
        QFETCH(int, channels);
        QFETCH(int, dtype);
        QFETCH(QString, interpolation);
        QFETCH(QString, border);
        QFETCH(bool, inverse);
        QFETCH(int, outWidth);
        QFETCH(int, outHeight);
        auto image =
            testImage(48, 64, std::max(channels, 1), static_cast<torch::ScalarType>(dtype));
        if (channels == 0) {
            image = image.squeeze(2).contiguous();
        }
        WarpOptions options;
        options.size = std::array<int64_t, 2>{outHeight, outWidth};
        options.interpolation = my_ops::parseInterpolation(interpolation.toStdString());
        options.border = my_ops::parseBorderMode(border.toStdString());
        options.border_value = 17;
        options.inverse = inverse;
        const auto result = my_ops::warp_perspective(image, homography(), options);
        QCOMPARE(result.scalar_type(), image.scalar_type());
        QCOMPARE(result.size(0), int64_t(outHeight));
        QCOMPARE(result.size(1), int64_t(outWidth));
        QCOMPARE(result.dim(), image.dim());

        const int cvInterp[] = {cv::INTER_NEAREST, cv::INTER_LINEAR, cv::INTER_CUBIC,
                                cv::INTER_LANCZOS4};
        const int cvBorder[] = {cv::BORDER_CONSTANT, cv::BORDER_REPLICATE, cv::BORDER_REFLECT,
                                cv::BORDER_REFLECT_101, cv::BORDER_WRAP};
        const int flags = cvInterp[static_cast<int>(options.interpolation)] |
                          (inverse ? cv::WARP_INVERSE_MAP : 0);
        const auto expected = reference(image, cv::Size(outWidth, outHeight), flags,
                                        cvBorder[static_cast<int>(options.border)], 17);
        QCOMPARE(maxDifference(asMat(result), expected), 0.0);
    }

    // The CUDA kernel's arithmetic, checked without a GPU: every dtype, interpolation and border,
    // over an output larger than the input so that every border rule is used, against OpenCV.
    void sharedSamplingMatchesOpenCv_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("interpolation");
        QTest::addColumn<int>("border");
        QTest::addColumn<bool>("inverse");
        const std::pair<const char*, torch::ScalarType> dtypes[] = {
            {"uint8", torch::kUInt8}, {"float32", torch::kFloat32}, {"float64", torch::kFloat64}};
        for (const auto& [dtypeName, dtype] : dtypes) {
            for (int interpolation = 0; interpolation < 4; ++interpolation) {
                for (int border = 0; border < 5; ++border) {
                    const auto name = std::string(dtypeName) + " " +
                                      my_ops::toString(my_ops::Interpolation(interpolation)) + " " +
                                      my_ops::toString(my_ops::BorderMode(border));
                    QTest::newRow(name.c_str())
                        << static_cast<int>(dtype) << interpolation << border << false;
                }
            }
            QTest::newRow((std::string(dtypeName) + " linear inverse").c_str())
                << static_cast<int>(dtype) << 1 << 0 << true;
        }
    }

    void sharedSamplingMatchesOpenCv() {
        QFETCH(int, dtype);
        QFETCH(int, interpolation);
        QFETCH(int, border);
        QFETCH(bool, inverse);
        const auto type = static_cast<torch::ScalarType>(dtype);
        // A strong perspective and an output twice the input: much of it samples outside.
        const double strong[9] = {0.7, 0.25, 20.0, -0.2, 0.9, 15.0, 0.0015, 0.0008, 1.0};
        auto image = testImage(37, 53, 3, type);
        if (type != torch::kUInt8) {
            image = image / 255.0 + 0.001 * testImage(37, 53, 3, torch::kFloat64).to(type);
        }
        const cv::Mat src = asMat(image);
        const cv::Size size(106, 74);
        std::array<double, 9> h{};
        std::copy(std::begin(strong), std::end(strong), h.begin());
        WarpOptions options;
        options.interpolation = my_ops::Interpolation(interpolation);
        options.border = my_ops::BorderMode(border);
        options.border_value = type == torch::kUInt8 ? 201.4 : 0.375;
        options.inverse = inverse;
        const auto plan = my_ops::makePlan(h, options);
        const cv::Mat ours =
            type == torch::kUInt8     ? warpWithSharedCode<uint8_t, float>(src, size, plan)
            : type == torch::kFloat32 ? warpWithSharedCode<float, float>(src, size, plan)
                                      : warpWithSharedCode<double, double>(src, size, plan);
        const int cvInterp[] = {cv::INTER_NEAREST, cv::INTER_LINEAR, cv::INTER_CUBIC,
                                cv::INTER_LANCZOS4};
        const int cvBorder[] = {cv::BORDER_CONSTANT, cv::BORDER_REPLICATE, cv::BORDER_REFLECT,
                                cv::BORDER_REFLECT_101, cv::BORDER_WRAP};
        cv::Mat expected;
        cv::warpPerspective(src, expected, cv::Mat(3, 3, CV_64F, h.data()), size,
                            cvInterp[interpolation] | (inverse ? cv::WARP_INVERSE_MAP : 0),
                            cvBorder[border], cv::Scalar::all(options.border_value));
        // 8-bit: OpenCV sums with 15-bit fixed-point weights, the shared code with float weights.
        // Float and double: both use float weights; OpenCV's cubic and Lanczos sums for double
        // images differ in the weights' last bits (2e-8 and 9e-8 seen).
        const double tolerance = type == torch::kUInt8     ? 1.0
                                 : type == torch::kFloat32 ? 1e-5
                                                           : 1e-6;
        const double difference = maxDifference(ours, expected);
        QVERIFY2(
            difference <= tolerance,
            qPrintable(
                QStringLiteral("max difference %1 (tolerance %2)").arg(difference).arg(tolerance)));
        // Nothing trivially equal: the warp moved the pixels and used the border.
        QVERIFY(maxDifference(ours(cv::Rect(0, 0, 53, 37)), src) > 0.1);
    }

    // The registration: the CPU kernel always; the CUDA kernel exactly when LibTorch has CUDA.
    void kernelsPerDevice() {
        const auto op = optionsOp();
        QVERIFY(op.hasKernelForDispatchKey(c10::DispatchKey::CPU));
        QCOMPARE(op.hasKernelForDispatchKey(c10::DispatchKey::CUDA),
                 bool(SCRIPTSCOPE_TEST_CUDA_BUILD));
    }

    void defaultSizeIsTheInputs() {
        const auto image = testImage(30, 50, 3, torch::kUInt8);
        const auto result = my_ops::warp_perspective(image, homography(), WarpOptions{});
        QCOMPARE(result.sizes().vec(), image.sizes().vec());
    }

    void batchedChannelsFirst() {
        // N x C x H x W: every plane is warped like a single-channel image.
        const auto hwc = testImage(40, 56, 3, torch::kFloat32);
        const auto batch = torch::stack({hwc.permute({2, 0, 1}), (255 - hwc).permute({2, 0, 1})});
        WarpOptions options;
        options.size = std::array<int64_t, 2>{36, 60};
        const auto result = my_ops::warp_perspective(batch, homography(), options);
        QCOMPARE(result.sizes().vec(), (std::vector<int64_t>{2, 3, 36, 60}));
        for (int64_t n = 0; n < 2; ++n) {
            for (int64_t c = 0; c < 3; ++c) {
                const auto expected = reference(batch[n][c], cv::Size(60, 36), cv::INTER_LINEAR,
                                                cv::BORDER_CONSTANT, 0);
                QCOMPARE(maxDifference(asMat(result[n][c]), expected), 0.0);
            }
        }
    }

    void nonContiguousInputs_data() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("cropped rows") << QStringLiteral("crop");
        QTest::newRow("channels-last view of CHW") << QStringLiteral("permuted");
        QTest::newRow("every other column") << QStringLiteral("stepped");
        QTest::newRow("expanded (stride 0)") << QStringLiteral("expanded");
        QTest::newRow("batched, transposed planes") << QStringLiteral("transposed");
    }

    void nonContiguousInputs() {
        QFETCH(QString, kind);
        const auto big = testImage(60, 80, 3, torch::kUInt8);
        torch::Tensor view;
        if (kind == QStringLiteral("crop")) {
            view = big.slice(0, 5, 45).slice(1, 7, 70); // strided rows, packed pixels
        } else if (kind == QStringLiteral("permuted")) {
            view = big.permute({2, 0, 1}).contiguous().permute({1, 2, 0});
        } else if (kind == QStringLiteral("stepped")) {
            view = big.slice(1, 0, 80, 2);
        } else if (kind == QStringLiteral("expanded")) {
            view = big[0][0].view({1, 1, 3}).expand({40, 50, 3});
        } else {
            view = big.permute({2, 1, 0}).unsqueeze(0); // N x C x W x H with strided planes
        }
        QVERIFY(!view.is_contiguous());
        const auto result = my_ops::warp_perspective(view, homography(), WarpOptions{});
        const auto expected =
            my_ops::warp_perspective(view.contiguous(), homography(), WarpOptions{});
        QVERIFY(torch::equal(result, expected));
    }

    void tutorialForm() {
        // The tutorial: 2-D float32 image, 8x8 output, bilinear, zero border.
        const auto image = torch::randn({4, 8});
        const auto eye = torch::eye(3);
        const auto result = my_ops::warp_perspective_tutorial(image, eye);
        QCOMPARE(result.sizes().vec(), (std::vector<int64_t>{8, 8}));
        cv::Mat expected;
        cv::warpPerspective(asMat(image), expected, cv::Mat::eye(3, 3, CV_32F), cv::Size(8, 8));
        QCOMPARE(maxDifference(asMat(result), expected), 0.0);
        // Through the dispatcher, by the name TorchScript uses.
        const auto tutorial =
            c10::Dispatcher::singleton().findSchemaOrThrow("my_ops::warp_perspective", "");
        const auto viaDispatcher =
            tutorial.typed<torch::Tensor(const torch::Tensor&, const torch::Tensor&)>().call(image,
                                                                                             eye);
        QVERIFY(torch::equal(viaDispatcher, result));
    }

    void schemaNamesItsArguments() {
        const auto& schema = optionsOp().schema();
        std::vector<std::string> names;
        for (const auto& argument : schema.arguments()) {
            names.push_back(argument.name());
        }
        QCOMPARE(names, (std::vector<std::string>{"image", "warp", "size", "interpolation",
                                                  "border", "border_value", "inverse"}));
    }

    void refusesBadInput_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("rank 1") << QStringLiteral("rank1")
                                << QStringLiteral("HxW, HxWxC or NxCxHxW");
        QTest::newRow("rank 5") << QStringLiteral("rank5")
                                << QStringLiteral("HxW, HxWxC or NxCxHxW");
        QTest::newRow("empty") << QStringLiteral("empty") << QStringLiteral("is empty");
        QTest::newRow("empty batch") << QStringLiteral("emptybatch") << QStringLiteral("is empty");
        QTest::newRow("int32 image")
            << QStringLiteral("int32") << QStringLiteral("unsupported image dtype");
        QTest::newRow("5 channels HWC")
            << QStringLiteral("channels5") << QStringLiteral("1, 3 or 4 channels");
        QTest::newRow("2x3 matrix") << QStringLiteral("matrix2x3") << QStringLiteral("must be 3x3");
        QTest::newRow("int matrix")
            << QStringLiteral("matrixint") << QStringLiteral("float32 or float64");
        QTest::newRow("NaN matrix") << QStringLiteral("nan") << QStringLiteral("non-finite");
        QTest::newRow("Inf matrix") << QStringLiteral("inf") << QStringLiteral("non-finite");
        QTest::newRow("singular") << QStringLiteral("singular") << QStringLiteral("singular");
        QTest::newRow("zero matrix") << QStringLiteral("zero") << QStringLiteral("singular");
        QTest::newRow("unknown interpolation")
            << QStringLiteral("interp") << QStringLiteral("unknown interpolation");
        QTest::newRow("unknown border")
            << QStringLiteral("border") << QStringLiteral("unknown border mode");
        QTest::newRow("size of 3 values")
            << QStringLiteral("size3") << QStringLiteral("[height, width]");
        QTest::newRow("negative size") << QStringLiteral("sizeneg") << QStringLiteral("is empty");
        QTest::newRow("huge size")
            << QStringLiteral("sizehuge") << QStringLiteral("largest supported side");
        QTest::newRow("tutorial form with uint8")
            << QStringLiteral("tutorialuint8") << QStringLiteral("tutorial's form");
        QTest::newRow("undefined") << QStringLiteral("undefined") << QStringLiteral("undefined");
    }

    void refusesBadInput() {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        auto image = testImage(20, 30, 3, torch::kUInt8);
        auto warp = homography();
        c10::optional<std::vector<int64_t>> size;
        std::string interpolation = "linear", border = "constant";
        bool tutorial = false;
        const std::string k = kind.toStdString();
        if (k == "rank1")
            image = torch::zeros({10});
        if (k == "rank5")
            image = torch::zeros({1, 1, 1, 4, 4});
        if (k == "empty")
            image = torch::zeros({0, 4, 3}, torch::kUInt8);
        if (k == "emptybatch")
            image = torch::zeros({0, 3, 4, 4});
        if (k == "int32")
            image = torch::zeros({4, 4}, torch::kInt32);
        if (k == "channels5")
            image = torch::zeros({4, 4, 5}, torch::kUInt8);
        if (k == "matrix2x3")
            warp = torch::zeros({2, 3});
        if (k == "matrixint")
            warp = torch::eye(3, torch::kInt64);
        if (k == "nan")
            warp[0][0] = std::numeric_limits<double>::quiet_NaN();
        if (k == "inf")
            warp[2][1] = std::numeric_limits<double>::infinity();
        if (k == "singular")
            warp = torch::tensor({1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 0.0, 1.0}).view({3, 3});
        if (k == "zero")
            warp = torch::zeros({3, 3});
        if (k == "interp")
            interpolation = "bilinear-ish";
        if (k == "border")
            border = "mirror";
        if (k == "size3")
            size = std::vector<int64_t>{1, 2, 3};
        if (k == "sizeneg")
            size = std::vector<int64_t>{-4, 10};
        if (k == "sizehuge")
            size = std::vector<int64_t>{100000, 10};
        if (k == "tutorialuint8")
            tutorial = true;
        if (k == "undefined")
            image = torch::Tensor();
        try {
            if (tutorial) {
                my_ops::warp_perspective_tutorial(image, warp);
            } else {
                optionsOp()
                    .typed<torch::Tensor(const torch::Tensor&, const torch::Tensor&,
                                         c10::optional<std::vector<int64_t>>, const std::string&,
                                         const std::string&, double, bool)>()
                    .call(image, warp, size, interpolation, border, 0.0, false);
            }
            QFAIL("the operator accepted bad input");
        } catch (const c10::Error& error) {
            const std::string message = error.what_without_backtrace();
            QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());
        } catch (const std::exception& error) {
            QFAIL((std::string("not a c10::Error: ") + error.what()).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestWarpOp)
#include "test_warp_op.moc"
