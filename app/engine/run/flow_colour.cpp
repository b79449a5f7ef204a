#include "flow_colour.h"

#include <array>
#include <cmath>
#include <limits>

namespace scriptscope {
namespace {

// The wheel's 55 colours: red to yellow (15), yellow to green (6), green to cyan (4), cyan to blue
// (11), blue to magenta (13), magenta to red (6).
std::vector<std::array<double, 3>> colourWheel() {
    std::vector<std::array<double, 3>> wheel;
    const auto ramp = [](int i, int n) { return std::floor(255.0 * i / n); };
    for (int i = 0; i < 15; ++i) {
        wheel.push_back({255, ramp(i, 15), 0});
    }
    for (int i = 0; i < 6; ++i) {
        wheel.push_back({255 - ramp(i, 6), 255, 0});
    }
    for (int i = 0; i < 4; ++i) {
        wheel.push_back({0, 255, ramp(i, 4)});
    }
    for (int i = 0; i < 11; ++i) {
        wheel.push_back({0, 255 - ramp(i, 11), 255});
    }
    for (int i = 0; i < 13; ++i) {
        wheel.push_back({ramp(i, 13), 0, 255});
    }
    for (int i = 0; i < 6; ++i) {
        wheel.push_back({255, 0, 255 - ramp(i, 6)});
    }
    return wheel;
}

} // namespace

FlowPicture flowToRgb(const float* u, const float* v, int width, int height) {
    FlowPicture picture;
    if (width <= 0 || height <= 0) {
        return picture;
    }
    const size_t area = static_cast<size_t>(width) * static_cast<size_t>(height);
    picture.rgb.assign(area * 3, 0);
    // torchvision computes in the flow's dtype (float32): so does this, for the same bytes.
    float largest = 0;
    for (size_t i = 0; i < area; ++i) {
        const float norm = std::sqrt(u[i] * u[i] + v[i] * v[i]);
        if (std::isfinite(norm) && norm > largest) {
            largest = norm;
        }
    }
    picture.maxNorm = largest;
    static const std::vector<std::array<double, 3>> wheel = colourWheel();
    const int colours = static_cast<int>(wheel.size());
    const float divisor = largest + std::numeric_limits<float>::epsilon();
    for (size_t i = 0; i < area; ++i) {
        const float x = u[i] / divisor;
        const float y = v[i] / divisor;
        if (!std::isfinite(x) || !std::isfinite(y)) {
            continue;
        }
        const float norm = std::sqrt(x * x + y * y);
        const float angle = std::atan2(-y, -x) / static_cast<float>(M_PI);
        const float position = (angle + 1) / 2 * static_cast<float>(colours - 1);
        const int k0 = static_cast<int>(std::floor(position));
        const int k1 = k0 + 1 == colours ? 0 : k0 + 1;
        const float f = position - static_cast<float>(k0);
        for (size_t c = 0; c < 3; ++c) {
            const float low = static_cast<float>(wheel[static_cast<size_t>(k0)][c]) / 255.0F;
            const float high = static_cast<float>(wheel[static_cast<size_t>(k1)][c]) / 255.0F;
            const float colour = 1 - norm * (1 - ((1 - f) * low + f * high));
            picture.rgb[i * 3 + c] = static_cast<uint8_t>(std::floor(255 * colour));
        }
    }
    return picture;
}

} // namespace scriptscope
