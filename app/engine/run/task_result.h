// What a run's output means, for drawing it as the task it is: a detector's boxes with class names
// and scores (torchvision's List[Dict[str, Tensor]], the (losses, detections) tuple scripted
// detectors return, N x 4 / N x 6 box tensors), a segmentation's per-pixel classes (N x C x H x W
// logits, or a dict with "out"), a classifier's top-k (N x K, softmax applied to logits), a
// document's page (a dict with corners, the rectified page and scores per kind). Plain
// C++ on OutputValue (its `values` must be there: RunRequest::valuesLimit).
#pragma once

#include "error.h"
#include "run_types.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace scriptscope {

enum class TaskKind { Auto, None, Classification, Detection, Segmentation, Page };
const char* toString(TaskKind kind);
// "auto", "none", "classification", "detection", "segmentation", "page"; false for another name.
bool taskKindFromName(const std::string& name, TaskKind& kind);

struct LabelSet {
    std::string name;               // "ImageNet-1k", "COCO", "Pascal VOC", or the file's name
    std::vector<std::string> names; // by class index
    std::string nameOf(int64_t index) const;
};

// The sets built in (from torchvision's metadata, resources/labels/make_labels.py): "imagenet",
// "coco", "voc"; nullptr for another name.
const LabelSet* builtinLabels(const std::string& key);
// One name per line, in index order (blank lines kept as empty names; a trailing one dropped).
LabelSet labelsFromText(const std::string& name, const std::string& text);
Expected<LabelSet> readLabelsFile(const std::string& path);
// An archive's own labels: the extra file labels.txt (or classes.txt), one name per line.
// Empty names when it has none.
LabelSet labelsFromExtraFiles(const std::map<std::string, std::string>& extraFiles);

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

} // namespace scriptscope
