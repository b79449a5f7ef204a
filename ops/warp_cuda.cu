// my_ops::warp_perspective's CUDA kernel: one thread per output pixel, each computing what
// cv::warpPerspective computes (warp_sampling.h, the code the CPU tests check against OpenCV).
#include "warp_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace my_ops::cuda {
namespace {

constexpr int kBlockWidth = 32;
constexpr int kBlockHeight = 8;
constexpr int64_t kMaxGridPlanes = 65535; // gridDim.z

template <typename T, typename Acc>
__global__ void warpKernel(Job job, const __grid_constant__ sampling::Plan plan) {
    const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= job.targetWidth || y >= job.targetHeight) {
        return;
    }
    for (int64_t p = blockIdx.z; p < job.planes; p += gridDim.z) {
        const int64_t item = p / job.planesPerItem;
        const int64_t channel = p % job.planesPerItem;
        const sampling::Image<const T> source{
            static_cast<const T*>(job.source) + item * job.sourceItemStride +
                channel * job.sourcePlaneStride,
            job.sourceWidth, job.sourceHeight, job.channels, job.sourceRowStride};
        const sampling::Image<T> target{static_cast<T*>(job.target) +
                                            item * job.targetItemStride +
                                            channel * job.targetPlaneStride,
                                        job.targetWidth, job.targetHeight, job.channels,
                                        job.targetRowStride};
        sampling::warpPixel<T, Acc>(source, target, x, y, plan);
    }
}

template <typename T, typename Acc>
cudaError_t launch(const Job& job, const sampling::Plan& plan, cudaStream_t stream) {
    const dim3 block(kBlockWidth, kBlockHeight);
    const dim3 grid((job.targetWidth + kBlockWidth - 1) / kBlockWidth,
                    (job.targetHeight + kBlockHeight - 1) / kBlockHeight,
                    static_cast<unsigned>(std::min(job.planes, kMaxGridPlanes)));
    warpKernel<T, Acc><<<grid, block, 0, stream>>>(job, plan);
    return cudaGetLastError();
}

} // namespace

std::string launchWarp(const Job& job, const sampling::Plan& plan, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    cudaError_t error = cudaSuccess;
    switch (job.depth) {
    case Depth::U8:
        error = launch<uint8_t, float>(job, plan, s);
        break;
    case Depth::F32:
        error = launch<float, float>(job, plan, s);
        break;
    case Depth::F64:
        error = launch<double, double>(job, plan, s);
        break;
    }
    return error == cudaSuccess ? std::string() : std::string(cudaGetErrorString(error));
}

} // namespace my_ops::cuda
