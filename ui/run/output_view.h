// Tensors drawn as images, and the view that shows them with the timing overlay on top.
#pragma once

#include <run_types.h>

#include <QImage>
#include <QStringList>
#include <QWidget>

#include <vector>

namespace scriptscope {

enum class Colormap { Gray, Viridis, Jet };

// How the channels of an image-like tensor are drawn.
enum class ChannelView {
    Colour,  // all channels as colour (1, 3 or 4 of them)
    Channel, // one channel, with the colormap
    Flow,    // two channels as an optical flow (u, v), in the colour wheel
    Argmax,  // the channel with the largest value per pixel, in the classes' palette (logits)
};

struct TensorImageOptions {
    int batch = 0;
    ChannelView view = ChannelView::Colour;
    int channel = 0; // for ChannelView::Channel
    Colormap colormap = Colormap::Gray;
    bool autoRange = true; // the tensor's finite min..max; else low..high
    double low = 0;
    double high = 1;
};

// How a tensor's shape reads as images: [H, W], [C, H, W] (C = 1 to 4), [N, C, H, W] (any C:
// images, flows, logits, feature maps) or [H, W, C] (C = 3, 4). Empty (height 0) when it does not
// read as one.
struct ImageLayout {
    int batch = 1;
    int channels = 1;
    int height = 0;
    int width = 0;
    bool channelsLast = false;
    bool isImage() const { return height > 0; }
};
ImageLayout imageLayout(const OutputValue& tensor);
// Why the Image tab draws nothing for this value (empty when it draws it): not a tensor, not
// image-like, or its values not kept.
QString whyNotDrawn(const OutputValue& value, size_t valuesLimit);
// The views that fit this layout, the one a person most likely wants first: colour for 3 or 4
// channels, flow for 2, the classes' argmax for more than 4.
std::vector<ChannelView> channelViews(const ImageLayout& layout);

// The tensor as an image (needs its values); a null image when it is not image-like.
QImage tensorToImage(const OutputValue& tensor, const TensorImageOptions& options);

// The difference of two results of the same shape: max |a - b|, max |a - b| / max(|b|, eps), and
// |a - b| as a heat map when the tensors are images.
struct Difference {
    bool comparable = false;
    QString why; // when not comparable
    double maxAbs = 0;
    double maxRel = 0;
    QImage image;
};
Difference compareTensors(const OutputValue& current, const OutputValue& kept);

// An image scaled to fit, with lines of text drawn over its top-left corner.
class OutputImageView : public QWidget {
    Q_OBJECT

public:
    explicit OutputImageView(QWidget* parent = nullptr);
    void setImage(const QImage& image);
    const QImage& image() const { return image_; }
    void setOverlay(const QStringList& lines);
    void setOverlayVisible(bool visible);
    bool overlayVisible() const { return overlayVisible_; }
    // The overlay in the bottom-left corner instead of the top-left one.
    void setOverlayAtBottom(bool bottom) {
        overlayBottom_ = bottom;
        update();
    }
    QStringList overlay() const { return overlay_; }
    // What is on screen, overlay included, as an image to save.
    QImage render();

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QImage image_;
    QStringList overlay_;
    bool overlayVisible_ = true;
    bool overlayBottom_ = false;
};

} // namespace scriptscope
