// my_ops::warp_perspective: OpenCV's cv::warpPerspective as a TorchScript operator.
//
// Two schemas are registered under TORCH_LIBRARY(my_ops):
//   warp_perspective(Tensor image, Tensor warp) -> Tensor
//       The PyTorch custom-operator tutorial's form, kept exactly: a 2-D float32 image warped to an
//       8x8 output with bilinear interpolation and a zero border. Archives made with the tutorial's
//       operator keep loading and keep their results.
//   warp_perspective.options(Tensor image, Tensor warp, int[]? size=None,
//                            str interpolation="linear", str border="constant",
//                            float border_value=0., bool inverse=False) -> Tensor
//       The operator for real images: H x W, H x W x C (C = 1, 3, 4) and N x C x H x W tensors of
//       uint8, float32 or float64; output size [height, width] (default: the input's); the matrix
//       maps input pixels to output pixels as in cv::warpPerspective, or output to input with
//       inverse=True.
// Each schema has a CPU kernel and, in builds against a LibTorch with CUDA, a CUDA kernel of its
// own (warp_cuda.cu): a CUDA image is warped on its GPU, the matrix may be on either device.
// This header is the C++ API for code that links the library instead of going through the
// dispatcher.
#pragma once

#include "warp_image.h"

#include <torch/types.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace my_ops {

// The full operator. Throws c10::Error (TORCH_CHECK) for any input it cannot warp correctly.
torch::Tensor warp_perspective(const torch::Tensor& image, const torch::Tensor& warp,
                               const WarpOptions& options);

// The same, written into `out`: it must have the shape and dtype warp_perspective would return
// (its height and width are the output size; options.size is ignored) and packed rows.
void warp_perspective_out(const torch::Tensor& image, const torch::Tensor& warp, torch::Tensor& out,
                          const WarpOptions& options);

// The tutorial's two-argument form: 2-D float32 image, 8x8 output.
torch::Tensor warp_perspective_tutorial(const torch::Tensor& image, const torch::Tensor& warp);

// Validates a homography and returns it row-major as doubles: 3x3, finite, not singular.
std::array<double, 9> checkedHomography(const torch::Tensor& warp);

// Makes sure the operator is registered with the dispatcher. Linking alone is not enough when the
// linker drops a library nothing refers to; calling this refers to it.
void ensureRegistered();

} // namespace my_ops
