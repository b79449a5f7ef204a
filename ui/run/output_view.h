// Tensors drawn as images, and the view that shows them with the timing overlay on top.
#pragma once

#include <run_types.h>

#include <QImage>
#include <QStringList>
#include <QWidget>

namespace scriptscope {

enum class Colormap { Gray, Viridis, Jet };

struct TensorImageOptions {
    int batch = 0;
    int channel = -1; // -1: all channels as colour (1, 3 or 4 of them); else one, with the colormap
    Colormap colormap = Colormap::Gray;
    bool autoRange = true; // the tensor's finite min..max; else low..high
    double low = 0;
    double high = 1;
};

// How a tensor's shape reads as images: [H, W], [C, H, W], [N, C, H, W] (C = 1, 3, 4) or
// [H, W, C] (C = 3, 4). Empty (height 0) when it does not read as one.
struct ImageLayout {
    int batch = 1;
    int channels = 1;
    int height = 0;
    int width = 0;
    bool channelsLast = false;
    bool isImage() const { return height > 0; }
};
ImageLayout imageLayout(const OutputValue& tensor);

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
