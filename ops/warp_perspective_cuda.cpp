// The host side of my_ops::warp_perspective's CUDA kernel, and its registration for the CUDA
// dispatch key. Built only when LibTorch has CUDA (ops/CMakeLists.txt).
#include "warp_cuda.h"
#include "warp_internal.h"

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

namespace my_ops {

torch::Tensor warpOnCuda(const torch::Tensor& image, const ImageShape& shape,
                         const torch::Tensor& warp, const WarpOptions& options) {
    // The matrix's nine numbers come to the host (to check it and invert it as OpenCV does); the
    // image never does.
    const auto plan = makePlan(checkedHomography(warp), options);
    const c10::cuda::CUDAGuard guard(image.device());
    torch::Tensor output = emptyOutput(image, shape, options);

    cuda::Job job;
    job.depth = image.scalar_type() == torch::kUInt8     ? cuda::Depth::U8
                : image.scalar_type() == torch::kFloat32 ? cuda::Depth::F32
                                                         : cuda::Depth::F64;
    torch::Tensor source = image;
    if (shape.batched) {
        // N x C x H x W: N*C planes of one channel; planes may sit anywhere, rows must be packed.
        if (!(image.stride(3) == 1 && image.stride(2) >= shape.width)) {
            source = image.contiguous();
        }
        job.channels = 1;
        job.planes = image.size(0) * shape.channels;
        job.planesPerItem = shape.channels;
        job.sourceItemStride = source.stride(0);
        job.sourcePlaneStride = source.stride(1);
        job.sourceRowStride = source.stride(2);
        job.targetItemStride = output.stride(0);
        job.targetPlaneStride = output.stride(1);
        job.targetRowStride = output.stride(2);
        job.sourceHeight = static_cast<int>(image.size(2));
        job.sourceWidth = static_cast<int>(image.size(3));
        job.targetHeight = static_cast<int>(output.size(2));
        job.targetWidth = static_cast<int>(output.size(3));
    } else {
        if (!rowsArePacked(image, shape.channels)) {
            source = image.contiguous();
        }
        job.channels = static_cast<int>(shape.channels);
        job.sourceRowStride = source.stride(0);
        job.targetRowStride = output.stride(0);
        job.sourceHeight = static_cast<int>(image.size(0));
        job.sourceWidth = static_cast<int>(image.size(1));
        job.targetHeight = static_cast<int>(output.size(0));
        job.targetWidth = static_cast<int>(output.size(1));
    }
    job.source = source.data_ptr();
    job.target = output.data_ptr();
    const std::string error = cuda::launchWarp(
        job, plan, c10::cuda::getCurrentCUDAStream(image.device().index()).stream());
    TORCH_CHECK(error.empty(), "warp_perspective: the CUDA kernel failed to start: ", error);
    return output;
}

// The same two functions as for the CPU: they pick this kernel by the image's device. A CPU image
// with a matrix on the GPU arrives here too, and is warped on the CPU.
TORCH_LIBRARY_IMPL(my_ops, CUDA, m) {
    m.impl("warp_perspective", &warp_perspective_tutorial);
    m.impl("warp_perspective.options", &warpPerspectiveOp);
}

} // namespace my_ops
