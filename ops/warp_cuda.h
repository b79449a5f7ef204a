// The CUDA kernel's launcher, declared without LibTorch or CUDA headers, so that the operator's C++
// (built by the host compiler) and the kernel (built by nvcc) share only plain types.
#pragma once

#include "warp_sampling.h"

#include <cstdint>
#include <string>

namespace my_ops::cuda {

enum class Depth { U8, F32, F64 };

// A batch of planes (N x C x H x W: N*C planes of one channel) or one interleaved image
// (H x W x C: one plane of C channels), in device memory. Strides count elements.
struct Job {
    Depth depth = Depth::F32;
    const void* source = nullptr;
    void* target = nullptr;
    int sourceWidth = 0;
    int sourceHeight = 0;
    int targetWidth = 0;
    int targetHeight = 0;
    int channels = 1; // interleaved channels per pixel
    int64_t sourceRowStride = 0;
    int64_t targetRowStride = 0;
    int64_t planes = 1;        // N * C for a batch, 1 for an interleaved image
    int64_t planesPerItem = 1; // C for a batch: plane p is item p / C, channel p % C
    int64_t sourceItemStride = 0;
    int64_t sourcePlaneStride = 0;
    int64_t targetItemStride = 0;
    int64_t targetPlaneStride = 0;
};

// Enqueues the warp on `stream` (a cudaStream_t) of the current device. Returns an empty string,
// or CUDA's error for the launch.
std::string launchWarp(const Job& job, const sampling::Plan& plan, void* stream);

} // namespace my_ops::cuda
