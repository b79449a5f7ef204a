// The engine-wide calls: what the worker, the CLI and the About dialog ask of the engine whatever
// the model's format (probing, versions, devices, the warp of an image file).
// LibTorch stays behind this header, so code that includes it compiles fast. Each format's own
// LibTorch part is in app/engine/formats/<format>/, its Model in the registry (model.h).
#pragma once

#include "error.h"
#include "model_info.h"
#include "run_types.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

// Reads a file's structure without executing anything: what kind of file it is, its records, its
// serialization version, extra files and the operators its code calls (and whether each is
// registered in this process now).
ProbeResult probeArchive(const std::string& path);

// True when the operator ("ns::name") has a registered implementation in this process.
bool isOperatorRegistered(const std::string& qualifiedName);

std::string libtorchVersion();

// What this program was built with and what it finds: "LibTorch 2.14.1", whether CUDA is compiled
// in and usable (or why not), "OpenCV 4.6.0". For --version, the About dialog and bug reports.
std::vector<std::string> buildDescription();

std::vector<DeviceInfo> listDevices();

// Warps an image file with my_ops::warp_perspective and writes the result.
struct WarpFileRequest {
    std::string input;
    std::string output;
    std::vector<double> matrix; // 9 values, row-major, source -> output pixels
    // Or: where the image's corners (TL, TR, BR, BL) go, x0,y0,...,x3,y3.
    std::optional<std::array<double, 8>> corners;
    int width = 0; // 0: the input's size
    int height = 0;
    std::string interpolation = "linear";
    std::string border = "constant";
    double borderValue = 0;
    bool inverse = false;
};
Status warpImageFile(const WarpFileRequest& request);

} // namespace scriptscope
