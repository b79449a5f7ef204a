// Draws an interpreted result (task_result.h) over the model's input image with OpenCV: boxes
// with class name and score, one colour per class, masks and keypoints; a segmentation's classes
// blended over the image with a legend of the classes present; a classifier's top-k. What the CLI's
// `run --render` writes; no Qt, no LibTorch.
#pragma once

#include "error.h"
#include "task_result.h"

#include <opencv2/core.hpp>

#include <string>

namespace scriptscope {

// Results are drawn on the source image at its own size: a frame or photo that the preprocessing
// resized (image:…,size=WxH, a preset) gets the boxes, keypoints and corners scaled from the
// model's pixels to its own. One rule for the GUI's Result page and recordings and the CLI's
// --render.
struct RenderOptions {
    double scoreThreshold = 0.5; // detections below it are not drawn
    double maskOpacity = 0.45;
    int image = 0; // which image of a batch of detections
    // The size of the image the model saw (the result's pixels); 0: the drawn image's own size.
    int inputWidth = 0, inputHeight = 0;
};

// The colour of class `index` (BGR): the same everywhere it is drawn; Pascal VOC's palette for
// segmentations, well-spread hues for detections.
cv::Scalar classColour(int64_t index, bool segmentation);

// `image` is 8-bit BGR, the source at its own size (the result's pixels are scaled to it from
// options.inputWidth x inputHeight). Returns the annotated copy.
cv::Mat renderTask(const cv::Mat& image, const TaskResult& result, const RenderOptions& options);
// The same, drawn on the image itself (a frame the caller owns: no copy).
void renderTaskInPlace(cv::Mat& image, const TaskResult& result, const RenderOptions& options);

// Reads the image and draws the result on it at its own size (width x height, when given, is the
// size the preprocessing resized it to: the result's pixels), then writes it (the format from the
// extension).
Status renderTaskFile(const std::string& imagePath, int width, int height, const TaskResult& result,
                      const RenderOptions& options, const std::string& outPath);

} // namespace scriptscope
