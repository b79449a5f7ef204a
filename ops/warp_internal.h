// Shared between the operator's CPU kernel (warp_perspective.cpp) and its CUDA kernel's host side
// (warp_perspective_cuda.cpp): the checks every input goes through, the output's allocation, and
// the plan both kernels sample by. Not installed; not part of the library's API.
#pragma once

#include "warp_perspective.h"
#include "warp_sampling.h"

#include <torch/types.h>

#include <string>
#include <vector>

namespace my_ops {

struct ImageShape {
    bool batched = false;
    int64_t height = 0;
    int64_t width = 0;
    int64_t channels = 1; // of an HxWxC image, or the C of NxCxHxW
};

// Refuses what neither kernel can warp (rank, dtype, channels, sizes), on any device.
ImageShape checkImage(const torch::Tensor& image);
void checkImageSize(int64_t height, int64_t width, const char* what);
// True when rows of an H x W (x C) tensor hold packed pixels (rows themselves may be strided).
bool rowsArePacked(const torch::Tensor& image, int64_t channels);
// The output of warping `image` with `options`, on the image's device, uninitialised.
torch::Tensor emptyOutput(const torch::Tensor& image, const ImageShape& shape,
                          const WarpOptions& options);
// Output-to-input matrix, modes and weights, as cv::warpPerspective would use them.
sampling::Plan makePlan(const std::array<double, 9>& homography, const WarpOptions& options);

// The CUDA kernel's host side: `image` is a checked CUDA tensor; `warp` may be on any device.
torch::Tensor warpOnCuda(const torch::Tensor& image, const ImageShape& shape,
                         const torch::Tensor& warp, const WarpOptions& options);

// The options form's arguments, checked, as WarpOptions.
WarpOptions optionsFrom(const c10::optional<std::vector<int64_t>>& size,
                        const std::string& interpolation, const std::string& border,
                        double borderValue, bool inverse);
// The two schemas' kernels; warp_perspective() inside picks the CPU or the CUDA code by device.
torch::Tensor warpPerspectiveOp(const torch::Tensor& image, const torch::Tensor& warp,
                                c10::optional<std::vector<int64_t>> size,
                                const std::string& interpolation, const std::string& border,
                                double borderValue, bool inverse);

} // namespace my_ops
