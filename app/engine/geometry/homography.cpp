#include "homography.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace scriptscope {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Beyond this condition number a matrix is treated as singular: OpenCV's inversion returns zeros
// (a black image) for exactly singular ones, and nearly singular ones smear a line over the image.
constexpr double kMaxCondition = 1e10;

bool allFinite(const Homography& h) {
    return std::all_of(h.begin(), h.end(), [](double v) { return std::isfinite(v); });
}

double cross(const Point& o, const Point& a, const Point& b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

} // namespace

Homography identityHomography() {
    return {1, 0, 0, 0, 1, 0, 0, 0, 1};
}

Homography multiply(const Homography& a, const Homography& b) {
    Homography r{};
    for (size_t i = 0; i < 3; ++i) {
        for (size_t j = 0; j < 3; ++j) {
            double sum = 0;
            for (size_t k = 0; k < 3; ++k) {
                sum += a[i * 3 + k] * b[k * 3 + j];
            }
            r[i * 3 + j] = sum;
        }
    }
    return r;
}

double conditionNumber(const Homography& h) {
    if (!allFinite(h)) {
        return std::numeric_limits<double>::infinity();
    }
    Homography copy = h;
    cv::Mat singular;
    cv::SVD::compute(cv::Mat(3, 3, CV_64F, copy.data()), singular, cv::SVD::NO_UV);
    const double largest = singular.at<double>(0);
    const double smallest = singular.at<double>(2);
    if (!(largest > 0) || !(smallest > 0)) {
        return std::numeric_limits<double>::infinity();
    }
    return largest / smallest;
}

std::optional<Homography> inverted(const Homography& h) {
    if (!(conditionNumber(h) < kMaxCondition)) {
        return std::nullopt;
    }
    // Adjugate over determinant: exact for 3x3, no pivoting needed at this condition number.
    const double a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], i = h[7],
                 k = h[8];
    const double det = a * (e * k - f * i) - b * (d * k - f * g) + c * (d * i - e * g);
    if (det == 0 || !std::isfinite(det)) {
        return std::nullopt;
    }
    Homography r{(e * k - f * i),  -(b * k - c * i), (b * f - c * e),
                 -(d * k - f * g), (a * k - c * g),  -(a * f - c * d),
                 (d * i - e * g),  -(a * i - b * g), (a * e - b * d)};
    for (double& v : r) {
        v /= det;
    }
    return r;
}

std::optional<Homography> normalized(const Homography& h) {
    if (!allFinite(h)) {
        return std::nullopt;
    }
    double largest = 0;
    for (const double v : h) {
        largest = std::max(largest, std::abs(v));
    }
    if (largest == 0 || std::abs(h[8]) <= 1e-12 * largest) {
        return std::nullopt;
    }
    Homography r = h;
    for (double& v : r) {
        v /= h[8];
    }
    r[8] = 1;
    return r;
}

std::optional<Point> mapPoint(const Homography& h, Point p) {
    const double w = h[6] * p.x + h[7] * p.y + h[8];
    if (w == 0 || !std::isfinite(w)) {
        return std::nullopt;
    }
    const Point r{(h[0] * p.x + h[1] * p.y + h[2]) / w, (h[3] * p.x + h[4] * p.y + h[5]) / w};
    if (!std::isfinite(r.x) || !std::isfinite(r.y)) {
        return std::nullopt;
    }
    return r;
}

Quad imageCorners(int width, int height) {
    const double w = width - 1, h = height - 1;
    return {Point{0, 0}, Point{w, 0}, Point{w, h}, Point{0, h}};
}

// The least area of a quad, as a share of the square on its longest extent (a square has 1/2).
constexpr double kMinQuadFullness = 0.02;

std::optional<std::string> quadProblem(const Quad& quad) {
    for (const Point& p : quad) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
            return std::string("a corner is not a finite point");
        }
    }
    // Turns are compared with a tolerance relative to the quad's size, so that a quad that is a
    // line or a point in all but rounding counts as collapsed.
    double extent = 0;
    for (size_t i = 0; i < 4; ++i) {
        for (size_t j = i + 1; j < 4; ++j) {
            extent = std::max(extent, std::hypot(quad[i].x - quad[j].x, quad[i].y - quad[j].y));
        }
    }
    if (extent == 0) {
        return std::string("the corners are all at one point");
    }
    const double tolerance = 1e-9 * extent * extent;
    double sign = 0;
    for (size_t i = 0; i < 4; ++i) {
        const double turn = cross(quad[i], quad[(i + 1) % 4], quad[(i + 2) % 4]);
        if (std::abs(turn) <= tolerance) {
            return std::string("three corners lie on one line: the quad is collapsed");
        }
        if (sign != 0 && (turn > 0) != (sign > 0)) {
            return std::string("the quad is self-intersecting or not convex (the corners must go "
                               "round in order: top-left, top-right, bottom-right, bottom-left)");
        }
        sign = turn;
    }
    // A sliver (a quad thinner than 1/50 of its longest extent, as h11 = h12 = 0 makes of an
    // image) shows as a blank or a streak: it counts as collapsed too.
    double area = 0;
    for (size_t i = 0; i < 4; ++i) {
        area += quad[i].x * quad[(i + 1) % 4].y - quad[(i + 1) % 4].x * quad[i].y;
    }
    area = std::abs(area) / 2;
    if (area < kMinQuadFullness * extent * extent) {
        return std::string("the quad is nearly collapsed: a sliver ") +
               std::to_string(
                   static_cast<int>(std::lround(extent * extent / std::max(area, 1e-300)))) +
               " times longer than it is wide";
    }
    return std::nullopt;
}

Expected<Homography> homographyBetween(const Quad& from, const Quad& to) {
    if (auto problem = quadProblem(from)) {
        return Error{ErrorKind::Input, "source quad: " + *problem};
    }
    if (auto problem = quadProblem(to)) {
        return Error{ErrorKind::Input, "target quad: " + *problem};
    }
    // The eight equations of cv::getPerspectiveTransform, solved here in double precision (its
    // Point2f input would round coordinates to float).
    cv::Matx<double, 8, 8> a;
    cv::Vec<double, 8> b;
    for (int i = 0; i < 4; ++i) {
        const Point& s = from[static_cast<size_t>(i)];
        const Point& t = to[static_cast<size_t>(i)];
        const double rowU[8] = {s.x, s.y, 1, 0, 0, 0, -s.x * t.x, -s.y * t.x};
        const double rowV[8] = {0, 0, 0, s.x, s.y, 1, -s.x * t.y, -s.y * t.y};
        for (int j = 0; j < 8; ++j) {
            a(i, j) = rowU[j];
            a(i + 4, j) = rowV[j];
        }
        b[i] = t.x;
        b[i + 4] = t.y;
    }
    cv::Vec<double, 8> x;
    if (!cv::solve(a, b, x, cv::DECOMP_LU)) {
        return Error{ErrorKind::Input, "no perspective transform maps these quads"};
    }
    cv::Matx33d m(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], 1.0);
    Homography h{};
    for (int i = 0; i < 9; ++i) {
        h[static_cast<size_t>(i)] = m(i / 3, i % 3);
    }
    if (!allFinite(h) || !(conditionNumber(h) < kMaxCondition)) {
        return Error{ErrorKind::Input, "the quads give a singular transform"};
    }
    return h;
}

std::optional<Quad> mappedCorners(const Homography& h, int width, int height) {
    Quad out{};
    const Quad corners = imageCorners(width, height);
    for (size_t i = 0; i < 4; ++i) {
        const auto p = mapPoint(h, corners[i]);
        if (!p) {
            return std::nullopt;
        }
        out[i] = *p;
    }
    return out;
}

std::optional<std::string> homographyProblem(const Homography& h, int width, int height) {
    if (!allFinite(h)) {
        return std::string("the matrix has a non-finite entry");
    }
    const double condition = conditionNumber(h);
    if (!(condition < kMaxCondition)) {
        return std::string("the matrix is singular or nearly so: it collapses the image");
    }
    if (width < 2 || height < 2) {
        return std::string("the image must be at least 2x2 pixels");
    }
    // Every corner must have w of one sign: otherwise part of the image maps through infinity (the
    // horizon crosses the image) and the output shows a mirrored, wrapped mess.
    const Quad corners = imageCorners(width, height);
    double scale = std::abs(h[6]) * width + std::abs(h[7]) * height + std::abs(h[8]);
    double sign = 0;
    for (const Point& p : corners) {
        const double w = h[6] * p.x + h[7] * p.y + h[8];
        if (std::abs(w) <= 1e-9 * scale) {
            return std::string("a corner of the image maps to infinity");
        }
        if (sign != 0 && (w > 0) != (sign > 0)) {
            return std::string("the horizon crosses the image: part of it would map through "
                               "infinity");
        }
        sign = w;
    }
    const auto quad = mappedCorners(h, width, height);
    if (!quad) {
        return std::string("a corner of the image maps to infinity");
    }
    if (auto problem = quadProblem(*quad)) {
        return "the image's corners map to a bad quad: " + *problem;
    }
    return std::nullopt;
}

Expected<Decomposition> decompose(const Homography& h) {
    const auto n = normalized(h);
    if (!n) {
        return Error{ErrorKind::Input, "h33 is zero: the matrix cannot be normalized, so it has no "
                                       "decomposition"};
    }
    const Homography& m = *n;
    Decomposition d;
    d.tx = m[2];
    d.ty = m[5];
    d.px = m[6];
    d.py = m[7];
    // The affine part, with the translation's coupling to the perspective terms taken out.
    const double a11 = m[0] - d.tx * d.px, a12 = m[1] - d.tx * d.py;
    const double a21 = m[3] - d.ty * d.px, a22 = m[4] - d.ty * d.py;
    d.sx = std::hypot(a11, a21);
    if (!(d.sx > 0)) {
        return Error{ErrorKind::Input, "the matrix's affine part is singular"};
    }
    const double theta = std::atan2(a21, a11);
    const double c = std::cos(theta), s = std::sin(theta);
    // U = R^T * A = K * S = [sx, shear*sy; 0, sy].
    const double u12 = c * a12 + s * a22;
    const double u22 = -s * a12 + c * a22;
    if (std::abs(u22) <= 1e-12 * d.sx) {
        return Error{ErrorKind::Input, "the matrix's affine part is singular"};
    }
    d.sy = u22;
    d.shear = u12 / d.sy;
    d.rotationDegrees = theta * 180.0 / kPi;
    return d;
}

Homography compose(const Decomposition& d) {
    const double theta = d.rotationDegrees * kPi / 180.0;
    const double c = std::cos(theta), s = std::sin(theta);
    // A = R * K * S, where K * S = [sx, shear*sy; 0, sy] is upper triangular.
    const double u11 = d.sx, u12 = d.shear * d.sy, u22 = d.sy;
    const double a11 = c * u11, a12 = c * u12 - s * u22;
    const double a21 = s * u11, a22 = s * u12 + c * u22;
    // T * A' * P with A' = [A 0; 0 1]: [A + t p^T, t; p^T, 1].
    return {a11 + d.tx * d.px,
            a12 + d.tx * d.py,
            d.tx,
            a21 + d.ty * d.px,
            a22 + d.ty * d.py,
            d.ty,
            d.px,
            d.py,
            1};
}

Homography rotationAboutCentre(double degrees, int width, int height) {
    const double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
    const double theta = degrees * kPi / 180.0;
    const double c = std::cos(theta), s = std::sin(theta);
    return {c, -s, cx - c * cx + s * cy, s, c, cy - s * cx - c * cy, 0, 0, 1};
}

Homography flipHorizontal(int width) {
    return {-1, 0, static_cast<double>(width - 1), 0, 1, 0, 0, 0, 1};
}

Homography flipVertical(int height) {
    return {1, 0, 0, 0, -1, static_cast<double>(height - 1), 0, 0, 1};
}

Homography keystone(double amount, int width, int height) {
    Quad target = imageCorners(width, height);
    const double inset = std::abs(amount) * (width - 1) / 2.0;
    const size_t left = amount >= 0 ? 0 : 3, right = amount >= 0 ? 1 : 2;
    target[left].x += inset;
    target[right].x -= inset;
    auto h = homographyBetween(imageCorners(width, height), target);
    return h ? *h : identityHomography();
}

Expected<FittedOutput> fitOutput(const Homography& h, int width, int height, int maxSide) {
    if (auto problem = homographyProblem(h, width, height)) {
        return Error{ErrorKind::Input, *problem};
    }
    const Quad quad = *mappedCorners(h, width, height);
    double minX = quad[0].x, maxX = quad[0].x, minY = quad[0].y, maxY = quad[0].y;
    for (const Point& p : quad) {
        minX = std::min(minX, p.x);
        maxX = std::max(maxX, p.x);
        minY = std::min(minY, p.y);
        maxY = std::max(maxY, p.y);
    }
    const double w = std::ceil(maxX - minX) + 1, hgt = std::ceil(maxY - minY) + 1;
    if (w > maxSide || hgt > maxSide) {
        return Error{ErrorKind::Input, "the warped image would be " + std::to_string(w) + " x " +
                                           std::to_string(hgt) + " pixels, more than " +
                                           std::to_string(maxSide) + " on a side"};
    }
    FittedOutput out;
    out.homography = multiply({1, 0, -minX, 0, 1, -minY, 0, 0, 1}, h);
    out.width = static_cast<int>(w);
    out.height = static_cast<int>(hgt);
    out.left = minX;
    out.top = minY;
    return out;
}

std::array<int, 2> rectifiedSize(const Quad& s) {
    const auto length = [](const Point& a, const Point& b) {
        return std::hypot(a.x - b.x, a.y - b.y);
    };
    const double w = std::max(length(s[0], s[1]), length(s[3], s[2]));
    const double h = std::max(length(s[0], s[3]), length(s[1], s[2]));
    return {std::max(2, static_cast<int>(std::lround(w)) + 1),
            std::max(2, static_cast<int>(std::lround(h)) + 1)};
}

void ViewMapping::zoomAround(Point viewAnchor, double factor, double minScale, double maxScale) {
    const Point anchored = toImage(viewAnchor);
    scale = std::clamp(scale * factor, minScale, maxScale);
    offsetX = viewAnchor.x - anchored.x * scale;
    offsetY = viewAnchor.y - anchored.y * scale;
}

ViewMapping ViewMapping::fit(double imageWidth, double imageHeight, double viewWidth,
                             double viewHeight, double margin) {
    ViewMapping m;
    const double usableW = std::max(1.0, viewWidth - 2 * margin);
    const double usableH = std::max(1.0, viewHeight - 2 * margin);
    m.scale = std::min(usableW / std::max(1.0, imageWidth), usableH / std::max(1.0, imageHeight));
    m.offsetX = (viewWidth - imageWidth * m.scale) / 2;
    m.offsetY = (viewHeight - imageHeight * m.scale) / 2;
    return m;
}

} // namespace scriptscope
