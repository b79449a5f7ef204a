#include "warp_perspective.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <torch/library.h>

#include <cmath>
#include <sstream>

namespace my_ops {
namespace {

constexpr std::array<std::pair<const char*, Interpolation>, 4> kInterpolations{{
    {"nearest", Interpolation::Nearest},
    {"linear", Interpolation::Linear},
    {"cubic", Interpolation::Cubic},
    {"lanczos4", Interpolation::Lanczos4},
}};

constexpr std::array<std::pair<const char*, BorderMode>, 5> kBorders{{
    {"constant", BorderMode::Constant},
    {"replicate", BorderMode::Replicate},
    {"reflect", BorderMode::Reflect},
    {"reflect101", BorderMode::Reflect101},
    {"wrap", BorderMode::Wrap},
}};

template <typename Table>
std::string namesOf(const Table& table) {
    std::string names;
    for (const auto& entry : table) {
        names += names.empty() ? "" : ", ";
        names += entry.first;
    }
    return names;
}

int cvInterpolation(Interpolation interpolation) {
    switch (interpolation) {
    case Interpolation::Nearest:
        return cv::INTER_NEAREST;
    case Interpolation::Linear:
        return cv::INTER_LINEAR;
    case Interpolation::Cubic:
        return cv::INTER_CUBIC;
    case Interpolation::Lanczos4:
        return cv::INTER_LANCZOS4;
    }
    return cv::INTER_LINEAR;
}

int cvBorder(BorderMode border) {
    switch (border) {
    case BorderMode::Constant:
        return cv::BORDER_CONSTANT;
    case BorderMode::Replicate:
        return cv::BORDER_REPLICATE;
    case BorderMode::Reflect:
        return cv::BORDER_REFLECT;
    case BorderMode::Reflect101:
        return cv::BORDER_REFLECT_101;
    case BorderMode::Wrap:
        return cv::BORDER_WRAP;
    }
    return cv::BORDER_CONSTANT;
}

int cvDepth(c10::ScalarType dtype) {
    switch (dtype) {
    case torch::kUInt8:
        return CV_8U;
    case torch::kFloat32:
        return CV_32F;
    case torch::kFloat64:
        return CV_64F;
    default:
        TORCH_CHECK(false, "warp_perspective: unsupported image dtype ", dtype,
                    "; use uint8, float32 or float64");
    }
    return -1;
}

// A cv::Mat header over rows of `tensor` without copying: rows may be strided (a crop or a view of
// a larger image), but the pixels of a row must be packed.
cv::Mat matView(const torch::Tensor& plane, int64_t channels, int depth) {
    const auto rows = plane.size(0);
    const auto cols = plane.size(1);
    const auto elementSize = static_cast<size_t>(plane.element_size());
    const auto rowStep = static_cast<size_t>(plane.stride(0)) * elementSize;
    return cv::Mat(static_cast<int>(rows), static_cast<int>(cols),
                   CV_MAKETYPE(depth, static_cast<int>(channels)), plane.data_ptr(), rowStep);
}

// True when rows of an H x W (x C) tensor can be handed to OpenCV as they are.
bool rowsArePacked(const torch::Tensor& image, int64_t channels) {
    if (image.dim() == 3 && image.stride(2) != 1) {
        return false;
    }
    if (image.stride(1) != channels) {
        return false;
    }
    return image.stride(0) >= image.size(1) * channels && image.stride(0) > 0;
}

void checkImageSize(int64_t height, int64_t width, const char* what) {
    constexpr int64_t kMaxSide = 1 << 15; // OpenCV's remap works with short coordinates.
    TORCH_CHECK(height > 0 && width > 0, "warp_perspective: ", what, " is empty (", height, "x",
                width, ")");
    TORCH_CHECK(height <= kMaxSide && width <= kMaxSide, "warp_perspective: ", what, " of ", height,
                "x", width, " exceeds the largest supported side of ", kMaxSide);
}

// Runs cv::warpPerspective into `dst`, which already holds the output tensor's memory. Any
// cv::Exception becomes a c10::Error so it never escapes the operator.
void warpInto(const cv::Mat& src, cv::Mat& dst, const cv::Mat& homography,
              const WarpOptions& options) {
    const void* const allocated = dst.data;
    int flags = cvInterpolation(options.interpolation);
    if (options.inverse) {
        flags |= cv::WARP_INVERSE_MAP;
    }
    try {
        cv::warpPerspective(src, dst, homography, dst.size(), flags, cvBorder(options.border),
                            cv::Scalar::all(options.border_value));
    } catch (const cv::Exception& error) {
        TORCH_CHECK(false, "warp_perspective: OpenCV failed: ", error.what());
    }
    // OpenCV reallocates dst if size or type disagree; that would silently lose the result.
    TORCH_INTERNAL_ASSERT(dst.data == allocated, "warp_perspective: OpenCV reallocated the output");
}

} // namespace

Interpolation parseInterpolation(std::string_view name) {
    for (const auto& [key, value] : kInterpolations) {
        if (name == key) {
            return value;
        }
    }
    TORCH_CHECK(false, "warp_perspective: unknown interpolation '", std::string(name),
                "'; expected one of: ", namesOf(kInterpolations));
    return Interpolation::Linear;
}

BorderMode parseBorderMode(std::string_view name) {
    for (const auto& [key, value] : kBorders) {
        if (name == key) {
            return value;
        }
    }
    TORCH_CHECK(false, "warp_perspective: unknown border mode '", std::string(name),
                "'; expected one of: ", namesOf(kBorders));
    return BorderMode::Constant;
}

const char* toString(Interpolation interpolation) {
    for (const auto& [key, value] : kInterpolations) {
        if (value == interpolation) {
            return key;
        }
    }
    return "linear";
}

const char* toString(BorderMode border) {
    for (const auto& [key, value] : kBorders) {
        if (value == border) {
            return key;
        }
    }
    return "constant";
}

std::array<double, 9> checkedHomography(const torch::Tensor& warp) {
    TORCH_CHECK(warp.defined(), "warp_perspective: the warp matrix is undefined");
    TORCH_CHECK(warp.device().is_cpu(), "warp_perspective: the warp matrix is on ", warp.device(),
                "; it must be a CPU tensor");
    TORCH_CHECK(warp.dim() == 2 && warp.size(0) == 3 && warp.size(1) == 3,
                "warp_perspective: the warp matrix must be 3x3, got shape ", warp.sizes());
    TORCH_CHECK(warp.is_floating_point() && !warp.is_complex(),
                "warp_perspective: the warp matrix must be float32 or float64, got ",
                warp.scalar_type());
    const auto values = warp.to(torch::kFloat64).contiguous();
    std::array<double, 9> h{};
    std::copy_n(values.data_ptr<double>(), 9, h.begin());
    for (const double v : h) {
        TORCH_CHECK(std::isfinite(v), "warp_perspective: the warp matrix has a non-finite entry (",
                    v, ")");
    }
    // Singular matrices make OpenCV's internal inversion return zeros: a black image without a
    // word. Refuse them by the ratio of the extreme singular values, which does not depend on the
    // matrix's scale.
    cv::Mat singular;
    cv::SVD::compute(cv::Mat(3, 3, CV_64F, h.data()), singular, cv::SVD::NO_UV);
    const double largest = singular.at<double>(0);
    const double smallest = singular.at<double>(2);
    TORCH_CHECK(largest > 0.0 && smallest > 1e-12 * largest,
                "warp_perspective: the warp matrix is singular (condition number ",
                largest / std::max(smallest, 1e-300), "); it does not map the image to an image");
    return h;
}

torch::Tensor warp_perspective(const torch::Tensor& image, const torch::Tensor& warp,
                               const WarpOptions& options) {
    TORCH_CHECK(image.defined(), "warp_perspective: the image is undefined");
    TORCH_CHECK(image.device().is_cpu(), "warp_perspective: the image is on ", image.device(),
                "; this operator runs on the CPU (call .cpu() first)");
    TORCH_CHECK(image.layout() == torch::kStrided, "warp_perspective: sparse images are not "
                                                   "supported");
    TORCH_CHECK(image.dim() >= 2 && image.dim() <= 4,
                "warp_perspective: expected an image of shape HxW, HxWxC or NxCxHxW, got ",
                image.dim(), " dimension(s) ", image.sizes());
    const int depth = cvDepth(image.scalar_type());
    auto h = checkedHomography(warp);
    const cv::Mat homography(3, 3, CV_64F, h.data());

    const bool batched = image.dim() == 4;
    const int64_t inHeight = batched ? image.size(2) : image.size(0);
    const int64_t inWidth = batched ? image.size(3) : image.size(1);
    checkImageSize(inHeight, inWidth, "the input image");
    const int64_t outHeight = options.size ? (*options.size)[0] : inHeight;
    const int64_t outWidth = options.size ? (*options.size)[1] : inWidth;
    checkImageSize(outHeight, outWidth, "the output size");

    if (!batched) {
        const int64_t channels = image.dim() == 3 ? image.size(2) : 1;
        TORCH_CHECK(channels == 1 || channels == 3 || channels == 4,
                    "warp_perspective: an HxWxC image needs 1, 3 or 4 channels, got ", channels,
                    " (for channels-first images use NxCxHxW)");
        // Strided rows are fine; anything else (channels-first views, stride-0 expansions) is
        // made contiguous once.
        const auto source = rowsArePacked(image, channels) ? image : image.contiguous();
        auto output = image.dim() == 3
                          ? torch::empty({outHeight, outWidth, channels}, image.options())
                          : torch::empty({outHeight, outWidth}, image.options());
        const cv::Mat src = matView(source, channels, depth);
        cv::Mat dst = matView(output, channels, depth);
        warpInto(src, dst, homography, options);
        return output;
    }

    // N x C x H x W: every plane is warped on its own, straight into the output's planes.
    const int64_t batch = image.size(0);
    const int64_t channels = image.size(1);
    TORCH_CHECK(batch > 0 && channels > 0, "warp_perspective: the batch ", image.sizes(),
                " is empty");
    const bool planesPacked = image.stride(3) == 1 && image.stride(2) >= inWidth;
    const auto source = planesPacked ? image : image.contiguous();
    auto output = torch::empty({batch, channels, outHeight, outWidth}, image.options());
    for (int64_t n = 0; n < batch; ++n) {
        for (int64_t c = 0; c < channels; ++c) {
            const cv::Mat src = matView(source[n][c], 1, depth);
            cv::Mat dst = matView(output[n][c], 1, depth);
            warpInto(src, dst, homography, options);
        }
    }
    return output;
}

torch::Tensor warp_perspective_tutorial(const torch::Tensor& image, const torch::Tensor& warp) {
    TORCH_CHECK(image.defined() && image.dim() == 2 && image.scalar_type() == torch::kFloat32,
                "warp_perspective(image, warp) is the tutorial's form: a 2-D float32 image warped "
                "to 8x8. For other images give the output size, e.g. "
                "warp_perspective(image, warp, size=[height, width]); got ",
                image.defined() ? image.dim() : 0, "-D ",
                image.defined() ? c10::toString(image.scalar_type()) : "undefined", " tensor");
    WarpOptions options;
    options.size = std::array<int64_t, 2>{8, 8};
    return warp_perspective(image, warp, options);
}

void ensureRegistered() {
    // The registration below runs when the library is loaded; calling this from another library
    // makes the linker keep this one, and the check catches a build that lost it anyway.
    const auto schema = c10::Dispatcher::singleton().findSchema({"my_ops::warp_perspective", ""});
    TORCH_CHECK(schema.has_value(), "my_ops::warp_perspective is not registered");
}

namespace {

torch::Tensor warpPerspectiveOp(const torch::Tensor& image, const torch::Tensor& warp,
                                c10::optional<std::vector<int64_t>> size,
                                const std::string& interpolation, const std::string& border,
                                double borderValue, bool inverse) {
    WarpOptions options;
    if (size) {
        TORCH_CHECK(size->size() == 2, "warp_perspective: size must be [height, width], got ",
                    size->size(), " value(s)");
        options.size = std::array<int64_t, 2>{(*size)[0], (*size)[1]};
    }
    options.interpolation = parseInterpolation(interpolation);
    options.border = parseBorderMode(border);
    options.border_value = borderValue;
    options.inverse = inverse;
    return warp_perspective(image, warp, options);
}

} // namespace

TORCH_LIBRARY(my_ops, m) {
    // Registration order matters: a two-argument call resolves to the tutorial's schema first.
    m.def("warp_perspective(Tensor image, Tensor warp) -> Tensor", &warp_perspective_tutorial);
    m.def("warp_perspective.options(Tensor image, Tensor warp, int[]? size=None, "
          "str interpolation=\"linear\", str border=\"constant\", float border_value=0., "
          "bool inverse=False) -> Tensor",
          &warpPerspectiveOp);
}

} // namespace my_ops
