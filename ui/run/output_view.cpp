#include "output_view.h"

#include <flow_colour.h>
#include <task_render.h>

#include <QPainter>

#include <algorithm>
#include <array>
#include <cmath>

namespace scriptscope {
namespace {

// A few stops of each colormap, interpolated linearly.
QRgb colormapped(Colormap map, double t) {
    t = std::clamp(t, 0.0, 1.0);
    if (map == Colormap::Gray) {
        const int v = static_cast<int>(std::lround(t * 255));
        return qRgb(v, v, v);
    }
    static const std::array<std::array<double, 3>, 5> viridis{
        {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
    static const std::array<std::array<double, 3>, 5> jet{
        {{0, 0, 143}, {0, 128, 255}, {128, 255, 128}, {255, 128, 0}, {128, 0, 0}}};
    const auto& stops = map == Colormap::Viridis ? viridis : jet;
    const double at = t * 4;
    const auto i = std::min<size_t>(3, static_cast<size_t>(at));
    const double f = at - static_cast<double>(i);
    auto mix = [&](size_t c) {
        return static_cast<int>(std::lround(stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f));
    };
    return qRgb(mix(0), mix(1), mix(2));
}

} // namespace

ImageLayout imageLayout(const OutputValue& t) {
    ImageLayout layout;
    if (t.kind != OutputValue::Kind::Tensor) {
        return layout;
    }
    const auto& s = t.shape;
    auto big = [](int64_t v) { return v >= 4 && v <= (1 << 16); };
    if (s.size() == 2 && big(s[0]) && big(s[1])) {
        layout.height = static_cast<int>(s[0]);
        layout.width = static_cast<int>(s[1]);
    } else if (s.size() == 3 && s[0] >= 1 && s[0] <= 4 && big(s[1]) && big(s[2])) {
        layout.channels = static_cast<int>(s[0]);
        layout.height = static_cast<int>(s[1]);
        layout.width = static_cast<int>(s[2]);
    } else if (s.size() == 3 && (s[2] == 3 || s[2] == 4) && big(s[0]) && big(s[1])) {
        layout.channels = static_cast<int>(s[2]);
        layout.height = static_cast<int>(s[0]);
        layout.width = static_cast<int>(s[1]);
        layout.channelsLast = true;
    } else if (s.size() == 4 && s[0] >= 1 && s[1] >= 1 && s[1] <= (1 << 16) && big(s[2]) &&
               big(s[3])) {
        layout.batch = static_cast<int>(s[0]);
        layout.channels = static_cast<int>(s[1]);
        layout.height = static_cast<int>(s[2]);
        layout.width = static_cast<int>(s[3]);
    }
    return layout;
}

QString whyNotDrawn(const OutputValue& value, size_t valuesLimit) {
    if (value.kind != OutputValue::Kind::Tensor) {
        return QObject::tr("Not drawn: only tensors are drawn as images; this is %1.")
            .arg(QString::fromStdString(value.text));
    }
    if (!imageLayout(value).isImage()) {
        return QObject::tr("Not drawn: %1 is not image-like. Images are H x W, C x H x W (C up "
                           "to 4), N x C x H x W or H x W x C, with H and W of at least 4.")
            .arg(QString::fromStdString(value.text));
    }
    if (value.values.empty() && value.numel > 0) {
        return value.dtype.rfind("complex", 0) == 0 || value.dtype.rfind("q", 0) == 0
                   ? QObject::tr("Not drawn: %1 values are not kept for drawing.")
                         .arg(QString::fromStdString(value.dtype))
                   : QObject::tr("Not drawn: its %1 values are more than the %2 kept for drawing.")
                         .arg(value.numel)
                         .arg(static_cast<qulonglong>(valuesLimit));
    }
    return {};
}

std::vector<ChannelView> channelViews(const ImageLayout& layout) {
    std::vector<ChannelView> views;
    if (layout.channels == 3 || layout.channels == 4) {
        views.push_back(ChannelView::Colour);
    } else if (layout.channels == 2) {
        views.push_back(ChannelView::Flow);
        views.push_back(ChannelView::Argmax);
    } else if (layout.channels > 4) {
        views.push_back(ChannelView::Argmax);
    }
    views.push_back(ChannelView::Channel);
    return views;
}

QImage tensorToImage(const OutputValue& t, const TensorImageOptions& o) {
    const ImageLayout layout = imageLayout(t);
    if (!layout.isImage() || t.values.empty()) {
        return {};
    }
    const size_t plane = static_cast<size_t>(layout.height) * static_cast<size_t>(layout.width);
    const size_t item = plane * static_cast<size_t>(layout.channels);
    const int batch = std::clamp(o.batch, 0, layout.batch - 1);
    if (t.values.size() < item * static_cast<size_t>(batch + 1)) {
        return {};
    }
    const float* base = t.values.data() + item * static_cast<size_t>(batch);
    QImage image(layout.width, layout.height, QImage::Format_ARGB32);
    if (o.view == ChannelView::Flow && layout.channels == 2 && !layout.channelsLast) {
        const FlowPicture flow = flowToRgb(base, base + plane, layout.width, layout.height);
        for (int y = 0; y < layout.height; ++y) {
            auto* row = reinterpret_cast<QRgb*>(image.scanLine(y));
            const uint8_t* rgb = flow.rgb.data() + static_cast<size_t>(y) * layout.width * 3;
            for (int x = 0; x < layout.width; ++x) {
                row[x] = qRgb(rgb[3 * x], rgb[3 * x + 1], rgb[3 * x + 2]);
            }
        }
        return image;
    }
    if (o.view == ChannelView::Argmax && layout.channels > 1 && !layout.channelsLast) {
        std::vector<QRgb> palette(static_cast<size_t>(layout.channels));
        for (int c = 0; c < layout.channels; ++c) {
            const cv::Scalar bgr = classColour(c, true);
            palette[static_cast<size_t>(c)] =
                qRgb(static_cast<int>(bgr[2]), static_cast<int>(bgr[1]), static_cast<int>(bgr[0]));
        }
        for (int y = 0; y < layout.height; ++y) {
            auto* row = reinterpret_cast<QRgb*>(image.scanLine(y));
            for (int x = 0; x < layout.width; ++x) {
                const size_t pixel = static_cast<size_t>(y) * layout.width + x;
                int best = -1;
                float top = 0;
                for (int c = 0; c < layout.channels; ++c) {
                    const float v = base[static_cast<size_t>(c) * plane + pixel];
                    if (std::isfinite(v) && (best < 0 || v > top)) {
                        best = c;
                        top = v;
                    }
                }
                row[x] = best < 0 ? qRgb(255, 0, 255) : palette[static_cast<size_t>(best)];
            }
        }
        return image;
    }
    auto at = [&](int c, int y, int x) -> double {
        const size_t pixel =
            static_cast<size_t>(y) * static_cast<size_t>(layout.width) + static_cast<size_t>(x);
        return layout.channelsLast
                   ? base[pixel * static_cast<size_t>(layout.channels) + static_cast<size_t>(c)]
                   : base[static_cast<size_t>(c) * plane + pixel];
    };
    double low = o.low, high = o.high;
    if (o.autoRange) {
        low = t.min;
        high = t.max;
    }
    const double span = high > low ? high - low : 1.0;
    const bool colour = o.view == ChannelView::Colour && layout.channels >= 3;
    const int channel = colour ? 0 : std::clamp(o.channel, 0, layout.channels - 1);
    auto scaled = [&](double v) {
        if (!std::isfinite(v)) {
            return 0;
        }
        return static_cast<int>(std::lround(std::clamp((v - low) / span, 0.0, 1.0) * 255));
    };
    for (int y = 0; y < layout.height; ++y) {
        auto* row = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < layout.width; ++x) {
            if (colour) {
                const int alpha = layout.channels == 4 ? scaled(at(3, y, x)) : 255;
                row[x] =
                    qRgba(scaled(at(0, y, x)), scaled(at(1, y, x)), scaled(at(2, y, x)), alpha);
            } else {
                const double v = at(channel, y, x);
                row[x] = std::isfinite(v) ? colormapped(o.colormap, (v - low) / span)
                                          : qRgb(255, 0, 255); // NaN and Inf stand out
            }
        }
    }
    return image;
}

Difference compareTensors(const OutputValue& current, const OutputValue& kept) {
    Difference d;
    if (current.kind != OutputValue::Kind::Tensor || kept.kind != OutputValue::Kind::Tensor) {
        d.why = QStringLiteral("only tensors are compared");
        return d;
    }
    if (current.shape != kept.shape) {
        d.why = QStringLiteral("the shapes differ");
        return d;
    }
    if (current.values.empty() || current.values.size() != kept.values.size()) {
        d.why = QStringLiteral("the values are too many to keep (shown: statistics only)");
        return d;
    }
    d.comparable = true;
    OutputValue diff = current;
    double largest = 0;
    for (size_t i = 0; i < current.values.size(); ++i) {
        const double a = current.values[i], b = kept.values[i];
        const double abs = std::abs(a - b);
        diff.values[i] = static_cast<float>(abs);
        if (std::isfinite(abs)) {
            d.maxAbs = std::max(d.maxAbs, abs);
            d.maxRel = std::max(d.maxRel, abs / std::max(std::abs(b), 1e-12));
        }
        largest = std::max(largest, std::abs(b));
    }
    if (imageLayout(diff).isImage()) {
        TensorImageOptions options;
        options.view = ChannelView::Channel;
        options.colormap = Colormap::Viridis;
        options.autoRange = false;
        options.low = 0;
        options.high = d.maxAbs > 0 ? d.maxAbs : 1;
        // The largest difference over all channels, per pixel.
        const ImageLayout layout = imageLayout(diff);
        if (layout.channels > 1 && !layout.channelsLast) {
            const size_t plane =
                static_cast<size_t>(layout.height) * static_cast<size_t>(layout.width);
            for (size_t p = 0; p < plane; ++p) {
                float m = 0;
                for (int c = 0; c < layout.channels; ++c) {
                    m = std::max(m, diff.values[static_cast<size_t>(c) * plane + p]);
                }
                diff.values[p] = m;
            }
        }
        d.image = tensorToImage(diff, options);
    }
    return d;
}

OutputImageView::OutputImageView(QWidget* parent)
    : QWidget(parent) {
    setMinimumSize(120, 80);
    setAutoFillBackground(false);
}

void OutputImageView::setImage(const QImage& image) {
    image_ = image;
    update();
}

void OutputImageView::setOverlay(const QStringList& lines) {
    overlay_ = lines;
    update();
}

void OutputImageView::setOverlayVisible(bool visible) {
    overlayVisible_ = visible;
    update();
}

QImage OutputImageView::render() {
    return grab().toImage();
}

void OutputImageView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), QColor(0x30, 0x30, 0x30));
    QRect target = rect();
    if (!image_.isNull()) {
        const QSize fitted = image_.size().scaled(size(), Qt::KeepAspectRatio);
        target =
            QRect(QPoint((width() - fitted.width()) / 2, (height() - fitted.height()) / 2), fitted);
        // Enlarged pixels stay pixels; shrunk images are smoothed.
        painter.setRenderHint(QPainter::SmoothPixmapTransform, fitted.width() < image_.width());
        painter.drawImage(target, image_);
    }
    if (overlayVisible_ && !overlay_.isEmpty()) {
        QFont font = painter.font();
        font.setBold(true);
        painter.setFont(font);
        const QFontMetrics metrics(font);
        const int lineHeight = metrics.height();
        QStringList lines = overlay_;
        const auto boxFor = [&](const QStringList& text) {
            int textWidth = 0;
            for (const QString& line : text) {
                textWidth = std::max(textWidth, metrics.horizontalAdvance(line));
            }
            return QRect(0, 0, textWidth + 16, lineHeight * static_cast<int>(text.size()) + 10);
        };
        QRect box = boxFor(lines);
        // Beside the picture where the letterbox has room (the result's boxes stay in view);
        // over it, the timing in one line when the whole key would hide much of it.
        const int below = height() - target.bottom() - 1;
        const int above = target.top();
        const bool room = (overlayBottom_ ? below : above) >= box.height() + 8;
        const bool side = !room && !image_.isNull() && target.left() >= box.width() + 16;
        if (!room && !side && !image_.isNull() && lines.size() > 2 &&
            box.width() * box.height() * 8 > target.width() * target.height()) {
            lines = {lines.at(1) + QStringLiteral(" \u00b7 ") + lines.at(2)};
            box = boxFor(lines);
        }
        box.moveLeft(side || image_.isNull() ? 8 : target.left() + 8);
        // Never past the view's right edge (a narrow picture in a wide key).
        box.moveLeft(std::max(8, std::min(box.left(), width() - 8 - box.width())));
        if (side) {
            overlayBottom_ ? box.moveBottom(height() - 8) : box.moveTop(8);
        } else if (overlayBottom_) { // where a drawn result's own labels (top left) stay visible
            box.moveBottom(room ? height() - (below - box.height()) / 2 - 1
                                : (image_.isNull() ? height() : target.bottom()) - 8);
        } else {
            box.moveTop(room ? (above - box.height()) / 2
                             : (image_.isNull() ? 0 : target.top()) + 8);
        }
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(Qt::NoPen);
        painter.setBrush(QColor(0, 0, 0, 170));
        painter.drawRoundedRect(box, 6, 6);
        painter.setPen(Qt::white);
        for (int i = 0; i < lines.size(); ++i) {
            painter.drawText(box.left() + 8, box.top() + 5 + metrics.ascent() + i * lineHeight,
                             lines.at(i));
        }
    }
}

} // namespace scriptscope
