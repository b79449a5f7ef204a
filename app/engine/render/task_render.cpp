#include "task_render.h"

#include <opencv2/core/utility.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace scriptscope {

cv::Scalar classColour(int64_t index, bool segmentation) {
    if (segmentation) {
        // Pascal VOC's palette (the bit-interleaved colour map), as RGB -> BGR.
        int r = 0, g = 0, b = 0;
        int64_t c = index;
        for (int bit = 7; bit >= 0 && c > 0; --bit, c >>= 3) {
            r |= static_cast<int>((c >> 0) & 1) << bit;
            g |= static_cast<int>((c >> 1) & 1) << bit;
            b |= static_cast<int>((c >> 2) & 1) << bit;
        }
        return {static_cast<double>(b), static_cast<double>(g), static_cast<double>(r)};
    }
    // Golden-angle hues, bright and saturated: neighbouring class ids look different.
    const double hue = std::fmod(static_cast<double>(index < 0 ? 0 : index) * 137.508, 360.0);
    const cv::Mat hsv(1, 1, CV_8UC3, cv::Scalar(hue / 2.0, 200, 235));
    cv::Mat bgr;
    cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
    const cv::Vec3b p = bgr.at<cv::Vec3b>(0, 0);
    return {static_cast<double>(p[0]), static_cast<double>(p[1]), static_cast<double>(p[2])};
}

namespace {

// A text label on a filled box, kept inside the image.
void drawTag(cv::Mat& image, const std::string& text, cv::Point at, const cv::Scalar& colour,
             double scale) {
    int baseline = 0;
    const int thickness = std::max(1, static_cast<int>(std::lround(scale * 1.5)));
    const cv::Size size =
        cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, scale, thickness, &baseline);
    at.x = std::clamp(at.x, 0, std::max(0, image.cols - size.width - 4));
    at.y = std::clamp(at.y, size.height + 4, std::max(size.height + 4, image.rows));
    cv::rectangle(image, {at.x, at.y - size.height - 4},
                  {at.x + size.width + 4, at.y + baseline - 2}, colour, cv::FILLED);
    const double luma = 0.114 * colour[0] + 0.587 * colour[1] + 0.299 * colour[2];
    cv::putText(image, text, {at.x + 2, at.y - 3}, cv::FONT_HERSHEY_SIMPLEX, scale,
                luma > 140 ? cv::Scalar(20, 20, 20) : cv::Scalar(255, 255, 255), thickness,
                cv::LINE_AA);
}

std::string percent(double score) {
    char text[32];
    std::snprintf(text, sizeof text, score < 0.1 ? "%.1f%%" : "%.0f%%", score * 100.0);
    return text;
}

// A column of tags from the top left; what does not fit is counted in a last one.
class TagColumn {
public:
    TagColumn(cv::Mat& image, double scale)
        : image_(image)
        , scale_(scale)
        , step_(static_cast<int>(std::lround(26 * scale + 8)))
        , y_(step_) {}
    bool add(const std::string& text, const cv::Scalar& colour, size_t left) {
        if (y_ + 2 * step_ > image_.rows && left > 1) {
            drawTag(image_, "+" + std::to_string(left) + " more", {8, y_}, cv::Scalar(60, 60, 60),
                    0.5 * scale_ + 0.15);
            return false;
        }
        drawTag(image_, text, {8, y_}, colour, 0.5 * scale_ + 0.15);
        y_ += step_;
        return true;
    }

private:
    cv::Mat& image_;
    double scale_;
    int step_;
    int y_;
};

// p = (p * weight + add) / 256 per byte: a form GCC and Clang vectorise.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
void blendRow(uint8_t* __restrict pixels, const uint16_t* __restrict weight,
              const uint16_t* __restrict add, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) {
        pixels[i] = static_cast<uint8_t>((pixels[i] * weight[i] + add[i]) >> 8);
    }
}

} // namespace

cv::Mat renderTask(const cv::Mat& input, const TaskResult& result, const RenderOptions& options) {
    cv::Mat image = input.clone();
    renderTaskInPlace(image, result, options);
    return image;
}

void renderTaskInPlace(cv::Mat& image, const TaskResult& result, const RenderOptions& options) {
    const double scale = std::clamp(std::min(image.cols, image.rows) / 800.0, 0.4, 1.2);
    const int line = std::max(2, static_cast<int>(std::lround(scale * 3)));
    // From the model's pixels to the drawn image's.
    const double sx = options.inputWidth > 0 ? double(image.cols) / options.inputWidth : 1.0;
    const double sy = options.inputHeight > 0 ? double(image.rows) / options.inputHeight : 1.0;
    const auto scaled = [&](double x, double y) {
        return cv::Point(static_cast<int>(std::lround(x * sx)),
                         static_cast<int>(std::lround(y * sy)));
    };
    if (result.kind == TaskKind::Detection && options.image >= 0 &&
        static_cast<size_t>(options.image) < result.detections.size()) {
        const auto& objects = result.detections[static_cast<size_t>(options.image)];
        // Masks first, boxes and tags over them; the best scores drawn last (on top).
        std::vector<const DetectedObject*> shown;
        for (const auto& o : objects) {
            if (o.score >= options.scoreThreshold) {
                shown.push_back(&o);
            }
        }
        std::sort(shown.begin(), shown.end(),
                  [](const auto* a, const auto* b) { return a->score < b->score; });
        for (const auto* o : shown) {
            if (o->mask.empty()) {
                continue;
            }
            cv::Mat mask(o->maskHeight, o->maskWidth, CV_8U, const_cast<uint8_t*>(o->mask.data()));
            cv::Mat resized;
            cv::resize(mask, resized, image.size(), 0, 0, cv::INTER_NEAREST);
            cv::Mat colour(image.size(), image.type(), classColour(o->label, false));
            cv::Mat blended;
            cv::addWeighted(image, 1.0 - options.maskOpacity, colour, options.maskOpacity, 0,
                            blended);
            blended.copyTo(image, resized);
        }
        for (const auto* o : shown) {
            const cv::Scalar colour = classColour(o->label, false);
            const cv::Point p0 = scaled(o->x0, o->y0);
            const cv::Point p1 = scaled(o->x1, o->y1);
            cv::rectangle(image, p0, p1, colour, line, cv::LINE_8); // axis-aligned: no AA needed
            for (size_t k = 0; k + 2 < o->keypoints.size(); k += 3) {
                if (o->keypoints[k + 2] > 0) {
                    cv::circle(image, scaled(o->keypoints[k], o->keypoints[k + 1]), line + 1,
                               colour, cv::FILLED, cv::LINE_AA);
                }
            }
            std::string tag = !o->name.empty() ? o->name
                              : o->label >= 0  ? "class " + std::to_string(o->label)
                                               : std::string();
            tag += (tag.empty() ? "" : " ") + percent(o->score);
            drawTag(image, tag, {p0.x, p0.y}, colour, 0.55 * scale + 0.15);
        }
    } else if (result.kind == TaskKind::Segmentation && !result.classMap.empty()) {
        // One pass over the picture, no picture-sized buffers (their page faults cost more than
        // the blend): each row reads its class-map row by nearest neighbour, in runs of pixels
        // that share a class-map column; a background run (class 0) is skipped, any other is
        // blended with its class's colour premultiplied by the opacity. Rows in parallel.
        int32_t classes = 1;
        for (const auto& present : result.classesPresent) {
            classes = std::max(classes, present.first + 1);
        }
        const int alpha =
            std::clamp(static_cast<int>(std::lround(options.maskOpacity * 256)), 0, 256);
        std::vector<std::array<int, 3>> tint(static_cast<size_t>(classes));
        for (int32_t c = 0; c < classes; ++c) {
            const cv::Scalar colour = classColour(c, true);
            for (int k = 0; k < 3; ++k) {
                tint[static_cast<size_t>(c)][static_cast<size_t>(k)] =
                    static_cast<int>(colour[k]) * alpha + 128;
            }
        }
        // Where each class-map column starts on the picture's row.
        std::vector<int> runStart(static_cast<size_t>(result.width) + 1);
        for (int x = 0; x <= result.width; ++x) {
            runStart[static_cast<size_t>(x)] = static_cast<int>(
                (static_cast<int64_t>(x) * image.cols + result.width - 1) / result.width);
        }
        const int keep = 256 - alpha;
        cv::parallel_for_(cv::Range(0, image.rows), [&](const cv::Range& rows) {
            // Per picture row, a weight and a premultiplied colour per byte (the background's
            // leave the byte as it is), made once for the rows that share a class-map row; then
            // one branch-free pass the compiler vectorises.
            const size_t bytes = static_cast<size_t>(image.cols) * 3;
            std::vector<uint16_t> weight(bytes), add(bytes);
            int madeFor = -1;
            for (int y = rows.start; y < rows.end; ++y) {
                const int sourceRow =
                    std::min(result.height - 1, static_cast<int>(static_cast<int64_t>(y) *
                                                                 result.height / image.rows));
                if (sourceRow != madeFor) {
                    madeFor = sourceRow;
                    const int32_t* classRow =
                        result.classMap.data() + static_cast<size_t>(sourceRow) * result.width;
                    for (int column = 0; column < result.width; ++column) {
                        const int32_t c = classRow[column];
                        const bool shown = c > 0 && c < classes;
                        const size_t from =
                            3 * static_cast<size_t>(runStart[static_cast<size_t>(column)]);
                        const size_t to =
                            3 * static_cast<size_t>(runStart[static_cast<size_t>(column) + 1]);
                        const uint16_t w = static_cast<uint16_t>(shown ? keep : 256);
                        const std::array<int, 3> none{0, 0, 0};
                        const auto& t = shown ? tint[static_cast<size_t>(c)] : none;
                        for (size_t i = from; i < to; i += 3) {
                            weight[i] = weight[i + 1] = weight[i + 2] = w;
                            add[i] = static_cast<uint16_t>(t[0]);
                            add[i + 1] = static_cast<uint16_t>(t[1]);
                            add[i + 2] = static_cast<uint16_t>(t[2]);
                        }
                    }
                }
                blendRow(image.ptr<uint8_t>(y), weight.data(), add.data(), bytes);
            }
        });
        TagColumn legend(image, scale);
        for (size_t i = 0; i < result.classesPresent.size(); ++i) {
            const auto& [index, pixels] = result.classesPresent[i];
            const std::string name = static_cast<size_t>(index) < result.classNames.size() &&
                                             !result.classNames[static_cast<size_t>(index)].empty()
                                         ? result.classNames[static_cast<size_t>(index)]
                                         : "class " + std::to_string(index);
            const double share =
                static_cast<double>(pixels) / static_cast<double>(result.classMap.size());
            if (!legend.add(name + " " + percent(share), classColour(index, true),
                            result.classesPresent.size() - i)) {
                break;
            }
        }
    } else if (result.kind == TaskKind::Page && !result.corners.empty()) {
        // The page's outline with its corners numbered in the model's order (TL, TR, BR, BL),
        // the page as the model rectified it in the top right corner, its kind at the top left.
        std::vector<cv::Point> outline;
        for (const auto& [x, y] : result.corners) {
            outline.push_back(scaled(x, y));
        }
        const cv::Scalar green(60, 200, 60);
        cv::polylines(image, outline, true, green, line, cv::LINE_AA);
        static const char* kCornerNames[] = {"TL", "TR", "BR", "BL"};
        for (size_t i = 0; i < outline.size(); ++i) {
            cv::circle(image, outline[i], line * 2 + 2, green, cv::FILLED, cv::LINE_AA);
            drawTag(image, i < 4 ? kCornerNames[i] : std::to_string(i + 1),
                    outline[i] + cv::Point(line * 2 + 4, -line * 2), green, 0.45 * scale + 0.15);
        }
        if (!result.pageRgb.empty() && result.pageWidth > 0 && result.pageHeight > 0) {
            cv::Mat page(result.pageHeight, result.pageWidth, CV_8UC3,
                         const_cast<uint8_t*>(result.pageRgb.data()));
            const double fit = std::min(0.45 * image.rows / result.pageHeight,
                                        0.3 * image.cols / result.pageWidth);
            const cv::Size size(std::max(1, static_cast<int>(result.pageWidth * fit)),
                                std::max(1, static_cast<int>(result.pageHeight * fit)));
            cv::Mat inset;
            cv::resize(page, inset, size, 0, 0, fit < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
            cv::cvtColor(inset, inset, cv::COLOR_RGB2BGR);
            const int margin = 8;
            const cv::Rect at(image.cols - size.width - margin, margin, size.width, size.height);
            if (at.x >= 0 && at.y + at.height <= image.rows) {
                inset.copyTo(image(at));
                cv::rectangle(image, at, green, 2);
            }
        }
        TagColumn column(image, scale);
        for (size_t i = 0; i < std::min<size_t>(3, result.topK.size()); ++i) {
            const auto& e = result.topK[i];
            const std::string name = e.name.empty() ? "kind " + std::to_string(e.index) : e.name;
            if (!column.add(name + " " + percent(e.score),
                            i == 0 ? cv::Scalar(40, 160, 40) : cv::Scalar(60, 60, 60),
                            result.topK.size() - i)) {
                break;
            }
        }
    } else if (result.kind == TaskKind::Flow && !result.flowRgb.empty()) {
        // The flow in the colour wheel over the whole picture (it is the model's picture of the
        // motion), with its longest vector named.
        cv::Mat flow(result.height, result.width, CV_8UC3,
                     const_cast<uint8_t*>(result.flowRgb.data()));
        cv::Mat bgr;
        cv::cvtColor(flow, bgr, cv::COLOR_RGB2BGR);
        cv::resize(bgr, image, image.size(), 0, 0,
                   bgr.cols > image.cols ? cv::INTER_AREA : cv::INTER_NEAREST);
        char longest[48];
        std::snprintf(longest, sizeof longest, "longest %.3g px", result.flowMaxNorm);
        TagColumn column(image, scale);
        column.add(longest, cv::Scalar(60, 60, 60), 1);
    } else if (result.kind == TaskKind::Classification) {
        TagColumn column(image, scale);
        for (size_t i = 0; i < result.topK.size(); ++i) {
            const auto& e = result.topK[i];
            const std::string name = e.name.empty() ? "class " + std::to_string(e.index) : e.name;
            if (!column.add(std::to_string(i + 1) + ". " + name + " " + percent(e.score),
                            i == 0 ? cv::Scalar(40, 160, 40) : cv::Scalar(60, 60, 60),
                            result.topK.size() - i)) {
                break;
            }
        }
    }
}

Status renderTaskFile(const std::string& imagePath, int width, int height, const TaskResult& result,
                      const RenderOptions& options, const std::string& outPath) {
    cv::Mat image = cv::imread(imagePath, cv::IMREAD_COLOR);
    if (image.empty()) {
        return Error{ErrorKind::File, "cannot read the image '" + imagePath + "'"};
    }
    RenderOptions drawing = options;
    if (width > 0 && height > 0) {
        drawing.inputWidth = width;
        drawing.inputHeight = height;
    }
    const cv::Mat drawn = renderTask(image, result, drawing);
    try {
        if (!cv::imwrite(outPath, drawn)) {
            return Error{ErrorKind::File, "cannot write '" + outPath + "'"};
        }
    } catch (const cv::Exception& error) {
        return Error{ErrorKind::File, "cannot write '" + outPath + "': " + error.msg};
    }
    return std::nullopt;
}

} // namespace scriptscope
