#include "warp_perspective.h"

#include "warp_internal.h"

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

} // namespace

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

namespace {

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
    TORCH_CHECK(warp.dim() == 2 && warp.size(0) == 3 && warp.size(1) == 3,
                "warp_perspective: the warp matrix must be 3x3, got shape ", warp.sizes());
    TORCH_CHECK(warp.is_floating_point() && !warp.is_complex(),
                "warp_perspective: the warp matrix must be float32 or float64, got ",
                warp.scalar_type());
    // Nine numbers: a matrix on the GPU is copied here, which waits for the work that makes it.
    const auto values = warp.to(torch::kCPU, torch::kFloat64).contiguous();
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

ImageShape checkImage(const torch::Tensor& image) {
    TORCH_CHECK(image.defined(), "warp_perspective: the image is undefined");
    TORCH_CHECK(image.device().is_cpu() || image.device().is_cuda(),
                "warp_perspective: the image is on ", image.device(),
                "; this operator runs on the CPU and on CUDA");
    TORCH_CHECK(image.layout() == torch::kStrided, "warp_perspective: sparse images are not "
                                                   "supported");
    TORCH_CHECK(image.dim() >= 2 && image.dim() <= 4,
                "warp_perspective: expected an image of shape HxW, HxWxC or NxCxHxW, got ",
                image.dim(), " dimension(s) ", image.sizes());
    ImageShape shape;
    TORCH_CHECK(image.scalar_type() == torch::kUInt8 || image.scalar_type() == torch::kFloat32 ||
                    image.scalar_type() == torch::kFloat64,
                "warp_perspective: unsupported image dtype ", image.scalar_type(),
                "; use uint8, float32 or float64");
    shape.batched = image.dim() == 4;
    shape.height = shape.batched ? image.size(2) : image.size(0);
    shape.width = shape.batched ? image.size(3) : image.size(1);
    checkImageSize(shape.height, shape.width, "the input image");
    if (shape.batched) {
        shape.channels = image.size(1);
        TORCH_CHECK(image.size(0) > 0 && shape.channels > 0, "warp_perspective: the batch ",
                    image.sizes(), " is empty");
    } else {
        shape.channels = image.dim() == 3 ? image.size(2) : 1;
        TORCH_CHECK(shape.channels == 1 || shape.channels == 3 || shape.channels == 4,
                    "warp_perspective: an HxWxC image needs 1, 3 or 4 channels, got ",
                    shape.channels, " (for channels-first images use NxCxHxW)");
    }
    return shape;
}

torch::Tensor emptyOutput(const torch::Tensor& image, const ImageShape& shape,
                          const WarpOptions& options) {
    const int64_t height = options.size ? (*options.size)[0] : shape.height;
    const int64_t width = options.size ? (*options.size)[1] : shape.width;
    checkImageSize(height, width, "the output size");
    if (shape.batched) {
        return torch::empty({image.size(0), shape.channels, height, width}, image.options());
    }
    if (image.dim() == 3) {
        return torch::empty({height, width, shape.channels}, image.options());
    }
    return torch::empty({height, width}, image.options());
}

sampling::Plan makePlan(const std::array<double, 9>& homography, const WarpOptions& options) {
    sampling::Plan plan;
    cv::Mat m(3, 3, CV_64F, plan.m);
    cv::Mat(3, 3, CV_64F, const_cast<double*>(homography.data())).copyTo(m); // NOLINT
    if (!options.inverse) {
        // What cv::warpPerspective does with a forward matrix, so both kernels sample alike.
        cv::invert(m, m);
    }
    sampling::setInterpolation(plan, static_cast<int>(options.interpolation),
                               static_cast<int>(options.border), options.border_value);
    return plan;
}

namespace {

// Warps a checked image into `output`, whose rows (or planes' rows) are packed.
void warpChecked(const torch::Tensor& image, const ImageShape& shape, const cv::Mat& homography,
                 torch::Tensor& output, const WarpOptions& options) {
    const int depth = cvDepth(image.scalar_type());
    if (!shape.batched) {
        // Strided rows are fine; anything else (channels-first views, stride-0 expansions) is
        // made contiguous once.
        const auto source = rowsArePacked(image, shape.channels) ? image : image.contiguous();
        const cv::Mat src = matView(source, shape.channels, depth);
        cv::Mat dst = matView(output, shape.channels, depth);
        warpInto(src, dst, homography, options);
        return;
    }
    // N x C x H x W: every plane is warped on its own, straight into the output's planes.
    const bool planesPacked = image.stride(3) == 1 && image.stride(2) >= shape.width;
    const auto source = planesPacked ? image : image.contiguous();
    for (int64_t n = 0; n < image.size(0); ++n) {
        for (int64_t c = 0; c < shape.channels; ++c) {
            const cv::Mat src = matView(source[n][c], 1, depth);
            auto plane = output[n][c];
            cv::Mat dst = matView(plane, 1, depth);
            warpInto(src, dst, homography, options);
        }
    }
}

} // namespace

torch::Tensor warp_perspective(const torch::Tensor& image, const torch::Tensor& warp,
                               const WarpOptions& options) {
    const ImageShape shape = checkImage(image);
    if (image.is_cuda()) {
        return warpOnCuda(image, shape, warp, options);
    }
    auto h = checkedHomography(warp);
    const cv::Mat homography(3, 3, CV_64F, h.data());
    torch::Tensor output = emptyOutput(image, shape, options);
    warpChecked(image, shape, homography, output, options);
    return output;
}

void warp_perspective_out(const torch::Tensor& image, const torch::Tensor& warp, torch::Tensor& out,
                          const WarpOptions& options) {
    const ImageShape shape = checkImage(image);
    TORCH_CHECK(image.device().is_cpu(),
                "warp_perspective: the output variant runs on the CPU; "
                "the image is on ",
                image.device());
    auto h = checkedHomography(warp);
    const cv::Mat homography(3, 3, CV_64F, h.data());
    TORCH_CHECK(out.defined() && out.device().is_cpu() && out.layout() == torch::kStrided,
                "warp_perspective: the output must be a CPU tensor");
    TORCH_CHECK(out.scalar_type() == image.scalar_type(), "warp_perspective: the output is ",
                out.scalar_type(), " but the image is ", image.scalar_type());
    TORCH_CHECK(out.dim() == image.dim(), "warp_perspective: the output has ", out.dim(),
                " dimension(s), the image ", image.dim());
    if (shape.batched) {
        TORCH_CHECK(out.size(0) == image.size(0) && out.size(1) == shape.channels,
                    "warp_perspective: the output ", out.sizes(), " does not match the batch ",
                    image.sizes());
        checkImageSize(out.size(2), out.size(3), "the output");
        TORCH_CHECK(out.stride(3) == 1 && out.stride(2) >= out.size(3),
                    "warp_perspective: the output's rows must be packed");
    } else {
        checkImageSize(out.size(0), out.size(1), "the output");
        TORCH_CHECK(image.dim() == 2 || out.size(2) == shape.channels,
                    "warp_perspective: the output has ", out.size(2), " channel(s), the image ",
                    shape.channels);
        TORCH_CHECK(rowsArePacked(out, shape.channels),
                    "warp_perspective: the output's rows must be packed");
    }
    warpChecked(image, shape, homography, out, options);
}

void warp_image(const ImageView& source, const MutableImageView& target,
                const std::array<double, 9>& homography, const WarpOptions& options) {
    TORCH_CHECK(source.data && target.data, "warp_image: an image has no pixels");
    TORCH_CHECK(source.channels == target.channels, "warp_image: the source has ", source.channels,
                " channel(s), the target ", target.channels);
    TORCH_CHECK(source.bytesPerLine >= int64_t{source.width} * source.channels &&
                    target.bytesPerLine >= int64_t{target.width} * target.channels,
                "warp_image: a row is shorter than its pixels");
    const auto bytes = torch::TensorOptions().dtype(torch::kUInt8);
    // The operator only reads the source; from_blob wants a non-const pointer.
    const auto image = torch::from_blob(
        const_cast<std::uint8_t*>(source.data), // NOLINT(cppcoreguidelines-pro-type-const-cast)
        {source.height, source.width, source.channels}, {source.bytesPerLine, source.channels, 1},
        bytes);
    auto out = torch::from_blob(target.data, {target.height, target.width, target.channels},
                                {target.bytesPerLine, target.channels, 1}, bytes);
    auto h = homography;
    const auto warp =
        torch::from_blob(h.data(), {3, 3}, torch::TensorOptions().dtype(torch::kFloat64));
    warp_perspective_out(image, warp, out, options);
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

#ifndef MY_OPS_WITH_CUDA
torch::Tensor warpOnCuda(const torch::Tensor& image, const ImageShape& /*shape*/,
                         const torch::Tensor& /*warp*/, const WarpOptions& /*options*/) {
    TORCH_CHECK(false, "warp_perspective: the image is on ", image.device(),
                ", but this build of the operator has no CUDA kernel: it was built against a "
                "LibTorch without CUDA (build against PyTorch 2.x from PyPI for CUDA)");
    return {};
}
#endif

torch::Tensor warpPerspectiveOp(const torch::Tensor& image, const torch::Tensor& warp,
                                c10::optional<std::vector<int64_t>> size,
                                const std::string& interpolation, const std::string& border,
                                double borderValue, bool inverse) {
    return warp_perspective(image, warp,
                            optionsFrom(size, interpolation, border, borderValue, inverse));
}

WarpOptions optionsFrom(const c10::optional<std::vector<int64_t>>& size,
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
    return options;
}

TORCH_LIBRARY(my_ops, m) {
    // Registration order matters: a two-argument call resolves to the tutorial's schema first.
    m.def("warp_perspective(Tensor image, Tensor warp) -> Tensor");
    m.def("warp_perspective.options(Tensor image, Tensor warp, int[]? size=None, "
          "str interpolation=\"linear\", str border=\"constant\", float border_value=0., "
          "bool inverse=False) -> Tensor");
}

// The kernels per device: this one for CPU tensors; warp_perspective_cuda.cpp registers the CUDA
// kernel in builds whose LibTorch has CUDA. Both are the same functions: warp_perspective() picks
// the kernel by the image's device, so C++ callers that skip the dispatcher get the same result.
TORCH_LIBRARY_IMPL(my_ops, CPU, m) {
    m.impl("warp_perspective", &warp_perspective_tutorial);
    m.impl("warp_perspective.options", &warpPerspectiveOp);
}

} // namespace my_ops
