// The warp operator's options and an entry point for 8-bit images in plain memory, without LibTorch
// in the header: the GUI's warp editor (which must not include torch headers) calls the operator
// through this, on its own image buffers, without copies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace my_ops {

enum class Interpolation { Nearest, Linear, Cubic, Lanczos4 };
enum class BorderMode { Constant, Replicate, Reflect, Reflect101, Wrap };

struct WarpOptions {
    // Output {height, width}; empty means the input's size.
    std::optional<std::array<int64_t, 2>> size;
    Interpolation interpolation = Interpolation::Linear;
    BorderMode border = BorderMode::Constant;
    double border_value = 0.0;
    // false: `warp` maps input pixels to output pixels (cv::warpPerspective's default).
    // true: `warp` maps output pixels to input pixels (cv::WARP_INVERSE_MAP).
    bool inverse = false;
};

// Names as they appear in the schema ("nearest", "linear", "cubic", "lanczos4"; "constant",
// "replicate", "reflect", "reflect101", "wrap"). Unknown names throw c10::Error (a std::exception)
// listing the valid ones.
Interpolation parseInterpolation(std::string_view name);
BorderMode parseBorderMode(std::string_view name);
const char* toString(Interpolation interpolation);
const char* toString(BorderMode border);

// Interleaved 8-bit pixels: `channels` bytes per pixel (1, 3 or 4), rows `bytesPerLine` apart.
struct ImageView {
    const std::uint8_t* data = nullptr;
    int width = 0;
    int height = 0;
    int channels = 4;
    std::ptrdiff_t bytesPerLine = 0;
};
struct MutableImageView {
    std::uint8_t* data = nullptr;
    int width = 0;
    int height = 0;
    int channels = 4;
    std::ptrdiff_t bytesPerLine = 0;
};

// my_ops::warp_perspective on `source`, written straight into `target` (whose size is the output
// size; options.size is ignored). The same code path as the operator, so the same checks: a
// singular or non-finite matrix, mismatched channels or empty images throw c10::Error.
void warp_image(const ImageView& source, const MutableImageView& target,
                const std::array<double, 9>& homography, const WarpOptions& options);

} // namespace my_ops
