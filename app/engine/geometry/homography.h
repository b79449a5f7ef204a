// The math behind the warp editor, as plain values: no Qt, no LibTorch. A homography is the 3x3
// matrix, row-major, that maps source pixels to output pixels as cv::warpPerspective takes it.
// Pixel coordinates name pixel centres: the image's corners are the centres of its corner pixels,
// (0,0), (w-1,0), (w-1,h-1), (0,h-1), as in `scriptscope-cli warp --corners`.
#pragma once

#include "error.h"

#include <array>
#include <optional>
#include <string>

namespace scriptscope {

using Homography = std::array<double, 9>; // row-major

struct Point {
    double x = 0;
    double y = 0;
};
inline bool operator==(const Point& a, const Point& b) {
    return a.x == b.x && a.y == b.y;
}

// Top-left, top-right, bottom-right, bottom-left.
using Quad = std::array<Point, 4>;

Homography identityHomography();
Homography multiply(const Homography& a, const Homography& b); // a * b: b applies first
// Empty when the matrix is singular (relative to its scale) or not finite.
std::optional<Homography> inverted(const Homography& h);
// Scaled so that h33 = 1; empty when h33 is (nearly) zero, i.e. the origin maps to infinity.
std::optional<Homography> normalized(const Homography& h);
// Empty when the point maps to infinity (w = 0) or the result is not finite.
std::optional<Point> mapPoint(const Homography& h, Point p);
// Ratio of the largest to the smallest singular value; infinity for a singular matrix.
double conditionNumber(const Homography& h);

Quad imageCorners(int width, int height);

// Why a quad cannot be a warp's corners: empty when it can. A usable quad is convex and keeps the
// corners' order (every turn has the same sign; a mirrored quad turns the other way throughout).
std::optional<std::string> quadProblem(const Quad& quad);

// The homography that takes `from` to `to` (cv::getPerspectiveTransform), refused for a collapsed
// or self-intersecting quad on either side.
Expected<Homography> homographyBetween(const Quad& from, const Quad& to);

// Why `h` cannot warp a width x height image: not finite, near-singular, a corner mapped to
// infinity or behind the camera (w of mixed sign), or corners mapped to a degenerate quad.
// Empty when it can.
std::optional<std::string> homographyProblem(const Homography& h, int width, int height);

// The image's corners under h; empty when a corner maps to infinity.
std::optional<Quad> mappedCorners(const Homography& h, int width, int height);

// H = T(tx, ty) * R(rotation) * K(shear) * S(sx, sy) * P(px, py), after h33 = 1:
//   P = [1 0 0; 0 1 0; px py 1] holds the perspective terms (h31, h32 of the normalized matrix),
//   S = diag(sx, sy) with sx > 0 (a mirror image shows as sy < 0), K = [1 shear; 0 1], R rotates by
//   `rotationDegrees` (clockwise on screen, where y points down) and T translates (h13, h23).
//   compose(decompose(H)) == H up to rounding.
struct Decomposition {
    double tx = 0, ty = 0;
    double rotationDegrees = 0;
    double sx = 1, sy = 1;
    double shear = 0;
    double px = 0, py = 0;
};
Expected<Decomposition> decompose(const Homography& h);
Homography compose(const Decomposition& d);

// Presets, about the image's centre where that matters.
Homography rotationAboutCentre(double degrees, int width, int height);
Homography flipHorizontal(int width);
Homography flipVertical(int height);
// Moves the top corners inwards by `amount` (a fraction of the width; negative: the bottom ones).
Homography keystone(double amount, int width, int height);

// Output sizing. The bounding box of the warped image, and h translated so that the box starts at
// the origin: the "fit the warped quad" output size.
struct FittedOutput {
    Homography homography{}; // h, translated by (-left, -top)
    int width = 0;
    int height = 0;
    double left = 0; // the box's top-left in h's output coordinates
    double top = 0;
};
Expected<FittedOutput> fitOutput(const Homography& h, int width, int height, int maxSide = 1 << 15);
// For rectifying: an output size with the proportions of a source quad (the longer of each pair of
// opposite edges).
std::array<int, 2> rectifiedSize(const Quad& source);

// A view's zoom and pan: view = image * scale + offset. Plain math, so that mapping under zoom and
// pan is tested without widgets.
struct ViewMapping {
    double scale = 1;
    double offsetX = 0, offsetY = 0;

    Point toView(Point image) const {
        return {image.x * scale + offsetX, image.y * scale + offsetY};
    }
    Point toImage(Point view) const {
        return {(view.x - offsetX) / scale, (view.y - offsetY) / scale};
    }
    // Zooms by `factor` keeping the image point under `viewAnchor` where it is.
    void zoomAround(Point viewAnchor, double factor, double minScale = 1.0 / 64,
                    double maxScale = 64);
    // The whole image centred in the view, margins included.
    static ViewMapping fit(double imageWidth, double imageHeight, double viewWidth,
                           double viewHeight, double margin = 0);
};

} // namespace scriptscope
