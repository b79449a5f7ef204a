#include "task_render.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
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

} // namespace

cv::Mat renderTask(const cv::Mat& input, const TaskResult& result, const RenderOptions& options) {
    cv::Mat image = input.clone();
    const double scale = std::clamp(std::min(image.cols, image.rows) / 800.0, 0.4, 1.2);
    const int line = std::max(2, static_cast<int>(std::lround(scale * 3)));
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
            const cv::Point p0(static_cast<int>(std::lround(o->x0)),
                               static_cast<int>(std::lround(o->y0)));
            const cv::Point p1(static_cast<int>(std::lround(o->x1)),
                               static_cast<int>(std::lround(o->y1)));
            cv::rectangle(image, p0, p1, colour, line, cv::LINE_AA);
            for (size_t k = 0; k + 2 < o->keypoints.size(); k += 3) {
                if (o->keypoints[k + 2] > 0) {
                    cv::circle(image,
                               {static_cast<int>(std::lround(o->keypoints[k])),
                                static_cast<int>(std::lround(o->keypoints[k + 1]))},
                               line + 1, colour, cv::FILLED, cv::LINE_AA);
                }
            }
            std::string tag = !o->name.empty() ? o->name
                              : o->label >= 0  ? "class " + std::to_string(o->label)
                                               : std::string();
            tag += (tag.empty() ? "" : " ") + percent(o->score);
            drawTag(image, tag, {p0.x, p0.y}, colour, 0.55 * scale + 0.15);
        }
    } else if (result.kind == TaskKind::Segmentation && !result.classMap.empty()) {
        cv::Mat classes(result.height, result.width, CV_32S,
                        const_cast<int32_t*>(result.classMap.data()));
        cv::Mat resized;
        cv::resize(classes, resized, image.size(), 0, 0, cv::INTER_NEAREST);
        cv::Mat colour(image.size(), image.type());
        for (int y = 0; y < colour.rows; ++y) {
            for (int x = 0; x < colour.cols; ++x) {
                const cv::Scalar c = classColour(resized.at<int32_t>(y, x), true);
                colour.at<cv::Vec3b>(y, x) = {static_cast<uint8_t>(c[0]),
                                              static_cast<uint8_t>(c[1]),
                                              static_cast<uint8_t>(c[2])};
            }
        }
        // The background (class 0) stays as it is; every other class is blended in.
        cv::Mat blended;
        cv::addWeighted(image, 1.0 - options.maskOpacity, colour, options.maskOpacity, 0, blended);
        blended.copyTo(image, resized != 0);
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
    return image;
}

Status renderTaskFile(const std::string& imagePath, int width, int height, const TaskResult& result,
                      const RenderOptions& options, const std::string& outPath) {
    cv::Mat image = cv::imread(imagePath, cv::IMREAD_COLOR);
    if (image.empty()) {
        return Error{ErrorKind::File, "cannot read the image '" + imagePath + "'"};
    }
    if (width > 0 && height > 0 && (image.cols != width || image.rows != height)) {
        cv::resize(image, image, {width, height}, 0, 0, cv::INTER_AREA);
    }
    const cv::Mat drawn = renderTask(image, result, options);
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
