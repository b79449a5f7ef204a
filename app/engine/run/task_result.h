// What a run's output means, for drawing it as the task it is: a detector's boxes with class names
// and scores (torchvision's List[Dict[str, Tensor]], the (losses, detections) tuple scripted
// detectors return, N x 4 / N x 6 box tensors), a segmentation's per-pixel classes (N x C x H x W
// logits, or a dict with "out"), a classifier's top-k (N x K, softmax applied to logits), a
// document's page (a dict with corners, the rectified page and scores per kind), an optical flow
// (RAFT's list of N x 2 x H x W estimates). The tensor is found wherever it sits in the output (a
// classifier's (logits, None, None), a segmenter's dict, a detector's (losses, detections)); scores
// that hold NaN or Inf are not interpreted. Plain C++ on OutputValue (its `values` must be there:
// RunRequest::valuesLimit).
#pragma once

#include "error.h"
#include "labels.h"
#include "run_types.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace scriptscope {

enum class TaskKind { Auto, None, Classification, Detection, Segmentation, Page, Flow };
const char* toString(TaskKind kind);
// "auto", "none", "classification", "detection", "segmentation", "page", "flow"; false for
// another name.
bool taskKindFromName(const std::string& name, TaskKind& kind);

struct DetectedObject {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0; // pixels of the model's input image
    double score = 1;
    int64_t label = -1; // -1: none given
    std::string name;
    std::vector<double> keypoints; // x, y, visibility per keypoint
    int maskWidth = 0, maskHeight = 0;
    std::vector<uint8_t> mask; // 1 where the instance's mask is above 0.5 (maskWidth x maskHeight)
};

struct TopEntry {
    int64_t index = 0;
    double score = 0;
    std::string name;
};

struct TaskResult {
    TaskKind kind = TaskKind::None;
    std::string summary;  // one line: what was found, or why the output is none of the tasks
    std::string labelSet; // the labels' name, when names were given
    // Detection: per image of the batch
    std::vector<std::vector<DetectedObject>> detections;
    // Segmentation: the first image's class per pixel
    int width = 0, height = 0;
    std::vector<int32_t> classMap;
    std::vector<std::pair<int, int64_t>> classesPresent; // class, pixels; most pixels first
    std::vector<std::string> classNames;                 // by class index, when labels are known
    // Classification (and a page's kind): the first row's best entries
    std::vector<TopEntry> topK;
    // Page: a photographed document's corners (top-left, top-right, bottom-right, bottom-left) in
    // pixels of the input, and the page rectified by the model (8-bit RGB, row-major)
    std::vector<std::pair<double, double>> corners;
    int pageWidth = 0, pageHeight = 0;
    std::vector<uint8_t> pageRgb;
    bool softmaxApplied = false; // the values were logits
    // Flow: the (last) estimate drawn in the colour wheel (width x height x 3, RGB) and its
    // longest vector in pixels
    std::vector<uint8_t> flowRgb;
    double flowMaxNorm = 0;
    // Where in the output the interpreted value sits ("[0]", "['out']", "[3]"), empty for the
    // output itself.
    std::string where;
};

struct TaskOptions {
    TaskKind kind = TaskKind::Auto;
    const LabelSet* labels = nullptr; // else the archive's, else a built-in one that fits
    const LabelSet* archiveLabels = nullptr;
    int topK = 5;
};

// The names for a vector of scores over this many classes, as classification picks them: the
// labels given, else the archive's, else ImageNet-1k when it has exactly this many; nullptr: none.
// Given labels with no names (a person's "None") give no names.
const LabelSet* scoreLabels(const TaskOptions& options, size_t classes);

TaskResult interpretOutput(const OutputValue& output, const TaskOptions& options);

// The tensors of an output that hold NaN or Inf, in the output's order: where each sits ("" for
// the output itself, "[0]", "['out']") and how many of each.
struct NonFiniteTensor {
    std::string where;
    int64_t nanCount = 0, infCount = 0, numel = 0;
};
std::vector<NonFiniteTensor> nonFiniteTensors(const OutputValue& output);
// One line for a warning: "the output holds 4 NaN (all 4 of its values)", "[0] holds 2 NaN and 1
// Inf of 1000 values, ['aux'] 3 NaN of 1000"; empty when every value is finite.
std::string nonFiniteSummary(const OutputValue& output);

} // namespace scriptscope
