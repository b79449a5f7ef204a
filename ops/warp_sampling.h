// What cv::warpPerspective computes for one output pixel, written once for the CPU and the GPU.
//
// The CUDA kernel (warp_cuda.cu) runs this per pixel; the tests run the same code on the CPU and
// compare it with cv::warpPerspective, so the kernel's arithmetic is checked on machines without a
// GPU. It follows OpenCV 4's warpPerspective and remap step by step:
//   - the source position is computed in double and rounded to 1/32 of a pixel
//     (INTER_TAB_SIZE = 32), or to a whole pixel for nearest;
//   - the weights are OpenCV's 1-D tables at those 32 positions (linear, cubic with A = -0.75,
//     Lanczos over 8 taps), multiplied in float;
//   - taps outside the image follow cv::borderInterpolate, and take the border value for
//     BORDER_CONSTANT.
// OpenCV weighs 8-bit images with 15-bit fixed-point weights; this code uses the float weights and
// rounds once, so an 8-bit result may differ from OpenCV's by one grey level. Float images agree
// to float rounding. No LibTorch and no OpenCV here: nvcc compiles it as it is.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define MY_OPS_HOST_DEVICE __host__ __device__
#else
#define MY_OPS_HOST_DEVICE
#endif

namespace my_ops::sampling {

constexpr int kTabBits = 5;
constexpr int kTabSize = 1 << kTabBits; // sub-pixel positions per pixel
constexpr int kMaxTaps = 8;             // Lanczos4

// The same order as my_ops::Interpolation and my_ops::BorderMode.
enum Interpolation : int { kNearest = 0, kLinear = 1, kCubic = 2, kLanczos4 = 3 };
enum Border : int { kConstant = 0, kReplicate = 1, kReflect = 2, kReflect101 = 3, kWrap = 4 };

// Everything the per-pixel code needs, built once per call on the host (makePlan).
struct Plan {
    double m[9] = {}; // output pixel -> input pixel (already inverted unless inverse=True)
    int interpolation = kLinear;
    int border = kConstant;
    double borderValue = 0.0;
    int taps = 2;     // 1, 2, 4 or 8 per axis
    int firstTap = 0; // offset of the first tap from the rounded position: 0, 0, -1, -3
    float weights[kTabSize][kMaxTaps] = {}; // 1-D weights at each sub-pixel position
};

// OpenCV's 1-D interpolation weights (imgwarp.cpp: interpolateCubic, interpolateLanczos4).
inline void cubicWeights(float x, float* w) {
    const float a = -0.75f;
    w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    w[3] = 1.f - w[0] - w[1] - w[2];
}

inline void lanczos4Weights(float x, float* w) {
    constexpr double kPi = 3.14159265358979323846;
    constexpr double s45 = 0.70710678118654752440084436210485;
    constexpr double cs[8][2] = {{1, 0},  {-s45, -s45}, {0, 1},  {s45, -s45},
                                 {-1, 0}, {s45, s45},   {0, -1}, {-s45, s45}};
    float sum = 0;
    const double y0 = -static_cast<double>(x + 3) * kPi * 0.25;
    const double s0 = std::sin(y0);
    const double c0 = std::cos(y0);
    for (int i = 0; i < 8; ++i) {
        const float shifted = x + 3 - static_cast<float>(i);
        if (std::fabs(shifted) >= 1e-6f) {
            const double y = -static_cast<double>(shifted) * kPi * 0.25;
            w[i] = static_cast<float>((cs[i][0] * s0 + cs[i][1] * c0) / (y * y));
        } else {
            w[i] = 1e30f;
        }
        sum += w[i];
    }
    sum = 1.f / sum;
    for (int i = 0; i < 8; ++i) {
        w[i] *= sum;
    }
}

// Fills the modes, the tap layout and the weight table of `plan` (its matrix is the caller's).
inline void setInterpolation(Plan& plan, int interpolation, int border, double borderValue) {
    plan.interpolation = interpolation;
    plan.border = border;
    plan.borderValue = borderValue;
    const int taps[] = {1, 2, 4, 8};
    const int first[] = {0, 0, -1, -3};
    plan.taps = taps[interpolation];
    plan.firstTap = first[interpolation];
    const float scale = 1.f / kTabSize;
    for (int i = 0; i < kTabSize; ++i) {
        float* w = plan.weights[i];
        const float x = static_cast<float>(i) * scale;
        switch (interpolation) {
        case kNearest:
            w[0] = 1.f;
            break;
        case kLinear:
            w[0] = 1.f - x;
            w[1] = x;
            break;
        case kCubic:
            cubicWeights(x, w);
            break;
        default:
            lanczos4Weights(x, w);
            break;
        }
    }
}

// cvRound: to nearest, ties to even, after clamping to int as OpenCV does.
MY_OPS_HOST_DEVICE inline int roundToInt(double v) {
    v = v < static_cast<double>(INT_MIN) ? static_cast<double>(INT_MIN) : v;
    v = v > static_cast<double>(INT_MAX) ? static_cast<double>(INT_MAX) : v;
#if defined(__CUDA_ARCH__)
    return __double2int_rn(v);
#else
    return static_cast<int>(std::nearbyint(v));
#endif
}

MY_OPS_HOST_DEVICE inline int saturateShort(int v) {
    return v < -32768 ? -32768 : (v > 32767 ? 32767 : v);
}

// cv::borderInterpolate: the pixel that stands for position p on an axis of `length` pixels, or -1
// for the constant border.
MY_OPS_HOST_DEVICE inline int borderInterpolate(int p, int length, int border) {
    if (static_cast<unsigned>(p) < static_cast<unsigned>(length)) {
        return p;
    }
    switch (border) {
    case kReplicate:
        return p < 0 ? 0 : length - 1;
    case kReflect:
    case kReflect101: {
        if (length == 1) {
            return 0;
        }
        const int delta = border == kReflect101 ? 1 : 0;
        do {
            p = p < 0 ? -p - 1 + delta : length - 1 - (p - length) - delta;
        } while (static_cast<unsigned>(p) >= static_cast<unsigned>(length));
        return p;
    }
    case kWrap:
        if (p < 0) {
            p -= ((p - length + 1) / length) * length;
        }
        return p >= length ? p % length : p;
    default:
        return -1;
    }
}

// Where output pixel (x, y) samples the input: the first tap's pixel and the sub-pixel position.
struct SourcePosition {
    int x = 0;
    int y = 0;
    int fx = 0; // 0..31
    int fy = 0;
};

MY_OPS_HOST_DEVICE inline SourcePosition sourceOf(const Plan& plan, int x, int y) {
    const double* m = plan.m;
    const double x0 = m[0] * x + m[1] * y + m[2];
    const double y0 = m[3] * x + m[4] * y + m[5];
    const double w0 = m[6] * x + m[7] * y + m[8];
    SourcePosition s;
    if (plan.interpolation == kNearest) {
        const double w = w0 != 0.0 ? 1.0 / w0 : 0.0;
        s.x = saturateShort(roundToInt(x0 * w));
        s.y = saturateShort(roundToInt(y0 * w));
        return s;
    }
    const double w = w0 != 0.0 ? kTabSize / w0 : 0.0;
    const int fixedX = roundToInt(x0 * w);
    const int fixedY = roundToInt(y0 * w);
    s.x = saturateShort(fixedX >> kTabBits) + plan.firstTap;
    s.y = saturateShort(fixedY >> kTabBits) + plan.firstTap;
    s.fx = fixedX & (kTabSize - 1);
    s.fy = fixedY & (kTabSize - 1);
    return s;
}

template <typename T>
MY_OPS_HOST_DEVICE inline T castResult(double v);
template <>
MY_OPS_HOST_DEVICE inline uint8_t castResult<uint8_t>(double v) {
    const int r = roundToInt(v);
    return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}
template <>
MY_OPS_HOST_DEVICE inline float castResult<float>(double v) {
    return static_cast<float>(v);
}
template <>
MY_OPS_HOST_DEVICE inline double castResult<double>(double v) {
    return v;
}

// One input plane or interleaved image: `channels` values per pixel, rows `rowStride` elements
// apart, pixels packed.
template <typename T>
struct Image {
    T* data;
    int width;
    int height;
    int channels;
    int64_t rowStride;
};

// Writes output pixel (x, y), all its channels. Acc is float for uint8 and float32 images (as
// OpenCV sums them), double for float64 ones.
template <typename T, typename Acc>
MY_OPS_HOST_DEVICE inline void warpPixel(const Image<const T>& src, const Image<T>& dst, int x,
                                         int y, const Plan& plan) {
    const SourcePosition s = sourceOf(plan, x, y);
    const int taps = plan.taps;
    int xs[kMaxTaps];
    int ys[kMaxTaps];
    for (int i = 0; i < taps; ++i) {
        xs[i] = borderInterpolate(s.x + i, src.width, plan.border);
        ys[i] = borderInterpolate(s.y + i, src.height, plan.border);
    }
    const float* wx = plan.weights[s.fx];
    const float* wy = plan.weights[s.fy];
    const Acc border = static_cast<Acc>(castResult<T>(plan.borderValue));
    T* out =
        dst.data + static_cast<int64_t>(y) * dst.rowStride + static_cast<int64_t>(x) * dst.channels;
    for (int c = 0; c < src.channels; ++c) {
        Acc sum = 0;
        for (int i = 0; i < taps; ++i) {
            const T* row =
                ys[i] >= 0 ? src.data + static_cast<int64_t>(ys[i]) * src.rowStride : nullptr;
            for (int j = 0; j < taps; ++j) {
                const float weight = wy[i] * wx[j];
                const Acc value =
                    row && xs[j] >= 0
                        ? static_cast<Acc>(row[static_cast<int64_t>(xs[j]) * src.channels + c])
                        : border;
                sum += value * static_cast<Acc>(weight);
            }
        }
        out[c] = castResult<T>(static_cast<double>(sum));
    }
}

} // namespace my_ops::sampling
