// An optical flow field drawn in the standard colour wheel (Baker et al.'s Middlebury code, as
// torchvision.utils.flow_to_image draws it): the hue is the direction, the saturation the length,
// scaled by the longest vector of the field. Plain C++: the Result page, the Image tab and the
// CLI's --render draw flows alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scriptscope {

struct FlowPicture {
    std::vector<uint8_t> rgb; // width x height x 3, row-major
    double maxNorm = 0;       // the longest finite vector, in pixels of the flow
};

// `u` and `v` are the horizontal and vertical planes (width x height each). Non-finite vectors
// are drawn black.
FlowPicture flowToRgb(const float* u, const float* v, int width, int height);

} // namespace scriptscope
