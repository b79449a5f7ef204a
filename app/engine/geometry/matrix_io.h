// Homography files. Every format holds the 3x3 matrix that maps source pixels to output pixels,
// as cv::warpPerspective takes it:
//   .json  {"matrix": [[h00, h01, h02], [h10, h11, h12], [h20, h21, h22]], ...}; also read: a bare
//          3x3 or 9-element array, or the key "homography"
//   .npy   NumPy's format, a 3x3 float32 or float64 array (np.save)
//   .xml / .yml / .yaml (optionally .gz)  OpenCV FileStorage: the node named `node`, or else the
//          first 3x3 matrix in the file (cv::FileStorage / cv2.FileStorage write these)
#pragma once

#include "error.h"
#include "homography.h"

#include <array>
#include <string>

namespace scriptscope {

enum class MatrixFormat { Json, Npy, OpenCvXml, OpenCvYaml };

// By extension; Json for anything unknown.
MatrixFormat matrixFormatForPath(const std::string& path);

Expected<Homography> readMatrixFile(const std::string& path, const std::string& node = {});
Status writeMatrixFile(const std::string& path, const Homography& matrix,
                       const std::string& node = "homography");

// From bytes, for the formats that have a parser of the project's own (used by tests and fuzzers).
Expected<Homography> parseMatrixJson(const std::string& text);
Expected<Homography> parseNpy(const std::string& bytes);
std::string encodeNpy(const Homography& matrix);
// An OpenCV FileStorage document (XML or YAML) held in memory, parsed in this process (OpenCV's
// parser can crash on hostile input), and the same parsed in a forked child, which never takes
// the caller down: readMatrixFile reads FileStorage files this way.
Expected<Homography> parseOpenCvMatrix(const std::string& text, const std::string& node = {});
Expected<Homography> parseOpenCvMatrixIsolated(const std::string& text,
                                               const std::string& node = {});
std::string encodeMatrixJson(const Homography& matrix);

// The homography that takes the image's corners (0,0), (w-1,0), (w-1,h-1), (0,h-1) to `corners`
// (x0,y0, x1,y1, x2,y2, x3,y3 in that order). Fails for a collapsed or self-intersecting quad.
Expected<Homography> homographyFromCorners(int width, int height,
                                           const std::array<double, 8>& corners);

} // namespace scriptscope
