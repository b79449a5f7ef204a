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

struct RenderOptions {
    double scoreThreshold = 0.5; // detections below it are not drawn
    double maskOpacity = 0.45;
    int image = 0; // which image of a batch of detections
};

// The colour of class `index` (BGR): the same everywhere it is drawn; Pascal VOC's palette for
// segmentations, well-spread hues for detections.
cv::Scalar classColour(int64_t index, bool segmentation);

// `image` is 8-bit BGR at the size the model saw (the boxes' pixels). Returns the annotated copy.
cv::Mat renderTask(const cv::Mat& image, const TaskResult& result, const RenderOptions& options);
// The same, drawn on the image itself (a frame the caller owns: no copy).
void renderTaskInPlace(cv::Mat& image, const TaskResult& result, const RenderOptions& options);

// Reads the image, resizes it to width x height when given (the preprocessing's size), draws and
// writes the result (the format from the extension).
Status renderTaskFile(const std::string& imagePath, int width, int height, const TaskResult& result,
                      const RenderOptions& options, const std::string& outPath);

} // namespace scriptscope
