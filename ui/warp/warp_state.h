// What the warp editor edits, as a value: the matrix, how the handles work, the operator's options
// and the output size. Undo steps, the saved session and the renderer all take this value.
#pragma once

#include <homography.h>
#include <warp_image.h>

#include <QJsonObject>
#include <QRectF>
#include <QString>

namespace scriptscope {

enum class WarpMode {
    MoveCorners, // the handles are where the image's corners go (on the output)
    PlaceSource, // the handles are four points on the source that go to the output's corners
};
enum class OutputSize {
    Source, // the output is as large as the source image
    Fit,    // the bounding box of the warped image (moving corners) or the rectified quad's size
    Custom, // outputWidth x outputHeight
};

struct WarpState {
    Homography matrix = identityHomography();
    WarpMode mode = WarpMode::MoveCorners;
    my_ops::Interpolation interpolation = my_ops::Interpolation::Linear;
    my_ops::BorderMode border = my_ops::BorderMode::Constant;
    double borderValue = 0;
    OutputSize outputSize = OutputSize::Source;
    // For OutputSize::Custom, and the rectified size for OutputSize::Fit with PlaceSource.
    int outputWidth = 640;
    int outputHeight = 480;

    bool operator==(const WarpState& other) const;
    bool operator!=(const WarpState& other) const { return !(*this == other); }

    QJsonObject toJson() const;
    // Unknown or missing keys keep their defaults; a matrix that is not 9 finite numbers is
    // replaced by the identity.
    static WarpState fromJson(const QJsonObject& json);
};

// The output image's extent in output pixel coordinates (the matrix's target space), for a source
// of sourceWidth x sourceHeight. Pixel centres sit on integers: a w x h output spans x = left ..
// left + w - 1. Empty when the matrix cannot warp the image.
struct OutputFrame {
    double left = 0;
    double top = 0;
    int width = 0;
    int height = 0;
    bool isEmpty() const { return width <= 0 || height <= 0; }
    // The matrix that renders this frame into an image whose pixel (0,0) is the frame's top-left.
    Homography renderMatrix(const Homography& h) const;
};
OutputFrame outputFrame(const WarpState& state, int sourceWidth, int sourceHeight);

// The output frame's corners mapped back onto the source: the part of the source the output shows.
std::optional<Quad> frameOnSource(const WarpState& state, int sourceWidth, int sourceHeight);
// The handles' positions: on the output (MoveCorners) or on the source (PlaceSource).
std::optional<Quad> handleQuad(const WarpState& state, int sourceWidth, int sourceHeight);
// The state after the handles moved to `quad`, or the reason it cannot be applied.
Expected<WarpState> withHandles(const WarpState& state, const Quad& quad, int sourceWidth,
                                int sourceHeight);

QString matrixAsNumpy(const Homography& h);
QString matrixAsCpp(const Homography& h);

} // namespace scriptscope
