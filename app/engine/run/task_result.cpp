#include "task_result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

namespace scriptscope {

// The built-in sets' text, generated from resources/labels/*.txt by CMake (builtin_labels.cpp).
extern const char* const kImagenetLabels;
extern const char* const kCocoLabels;
extern const char* const kVocLabels;

const char* toString(TaskKind kind) {
    switch (kind) {
    case TaskKind::Auto:
        return "auto";
    case TaskKind::None:
        return "none";
    case TaskKind::Classification:
        return "classification";
    case TaskKind::Detection:
        return "detection";
    case TaskKind::Segmentation:
        return "segmentation";
    case TaskKind::Page:
        return "page";
    }
    return "none";
}

bool taskKindFromName(const std::string& name, TaskKind& kind) {
    for (const TaskKind k : {TaskKind::Auto, TaskKind::None, TaskKind::Classification,
                             TaskKind::Detection, TaskKind::Segmentation, TaskKind::Page}) {
        if (name == toString(k)) {
            kind = k;
            return true;
        }
    }
    return false;
}

std::string LabelSet::nameOf(int64_t index) const {
    return index >= 0 && static_cast<size_t>(index) < names.size()
               ? names[static_cast<size_t>(index)]
               : std::string();
}

LabelSet labelsFromText(const std::string& name, const std::string& text) {
    LabelSet set;
    set.name = name;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
            line.pop_back();
        }
        set.names.push_back(line);
    }
    while (!set.names.empty() && set.names.back().empty()) {
        set.names.pop_back();
    }
    return set;
}

const LabelSet* builtinLabels(const std::string& key) {
    static const LabelSet imagenet = labelsFromText("ImageNet-1k", kImagenetLabels);
    static const LabelSet coco = labelsFromText("COCO", kCocoLabels);
    static const LabelSet voc = labelsFromText("Pascal VOC", kVocLabels);
    if (key == "imagenet") {
        return &imagenet;
    }
    if (key == "coco") {
        return &coco;
    }
    if (key == "voc") {
        return &voc;
    }
    return nullptr;
}

Expected<LabelSet> readLabelsFile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        return Error{ErrorKind::File, "cannot read the labels file '" + path + "'"};
    }
    std::stringstream text;
    text << file.rdbuf();
    const auto slash = path.find_last_of('/');
    LabelSet set =
        labelsFromText(slash == std::string::npos ? path : path.substr(slash + 1), text.str());
    if (set.names.empty()) {
        return Error{ErrorKind::Input, "the labels file '" + path + "' has no names"};
    }
    return set;
}

LabelSet labelsFromExtraFiles(const std::map<std::string, std::string>& extraFiles) {
    for (const char* name : {"labels.txt", "classes.txt"}) {
        const auto found = extraFiles.find(name);
        if (found != extraFiles.end()) {
            return labelsFromText(std::string("the archive's ") + name, found->second);
        }
    }
    return {};
}

namespace {

const OutputValue* child(const OutputValue& dict, const std::string& key) {
    // Dict keys are shown as Python prints them: 'boxes'.
    for (const auto& c : dict.children) {
        if (c.key == key || c.key == "'" + key + "'" || c.key == "\"" + key + "\"") {
            return &c;
        }
    }
    return nullptr;
}

bool isTensor(const OutputValue* v, size_t dims) {
    return v && v->kind == OutputValue::Kind::Tensor && v->shape.size() == dims;
}

bool hasValues(const OutputValue& v) {
    return v.numel == 0 || static_cast<int64_t>(v.values.size()) == v.numel;
}

// torchvision's detections: a dict with boxes N x 4 (and labels, scores, masks, keypoints).
bool isDetectionDict(const OutputValue& v) {
    if (v.kind != OutputValue::Kind::Dict) {
        return false;
    }
    const OutputValue* boxes = child(v, "boxes");
    return isTensor(boxes, 2) && boxes->shape[1] == 4;
}

// The list of per-image detection dicts in the output, or nullptr.
const OutputValue* detectionList(const OutputValue& output) {
    auto isList = [](const OutputValue& v) {
        return v.kind == OutputValue::Kind::List && !v.children.empty() &&
               std::all_of(v.children.begin(), v.children.end(), isDetectionDict);
    };
    if (isList(output)) {
        return &output;
    }
    // Scripted detectors return (losses, detections).
    if (output.kind == OutputValue::Kind::Tuple) {
        for (const auto& c : output.children) {
            if (isList(c)) {
                return &c;
            }
        }
    }
    return nullptr;
}

// Plain box tensors: N x 4 (x0, y0, x1, y1) or N x 6 (..., score, label).
bool isBoxTensor(const OutputValue& v) {
    return isTensor(&v, 2) && (v.shape[1] == 4 || v.shape[1] == 6) && v.shape[0] >= 0 &&
           v.shape[0] <= 100000;
}

const OutputValue* segmentationLogits(const OutputValue& output) {
    const OutputValue* v = &output;
    if (output.kind == OutputValue::Kind::Dict) {
        v = child(output, "out");
    }
    return isTensor(v, 4) && v->shape[1] > 1 && v->shape[2] > 1 && v->shape[3] > 1 ? v : nullptr;
}

bool isScores(const OutputValue& v) {
    return (isTensor(&v, 2) && v.shape[1] > 1) || (isTensor(&v, 1) && v.shape[0] > 1);
}

const LabelSet* chooseLabels(const TaskOptions& options, const char* fallback, size_t classes) {
    if (options.labels) {
        return options.labels;
    }
    if (options.archiveLabels && !options.archiveLabels->names.empty()) {
        return options.archiveLabels;
    }
    const LabelSet* builtin = builtinLabels(fallback);
    return builtin && classes <= builtin->names.size() ? builtin : nullptr;
}

} // namespace

const LabelSet* scoreLabels(const TaskOptions& options, size_t classes) {
    const LabelSet* labels = chooseLabels(options, "imagenet", classes);
    // The built-in set only when it has exactly this many classes; a set given stands.
    const bool builtin = labels && labels != options.labels && labels != options.archiveLabels;
    return builtin && labels->names.size() != classes ? nullptr : labels;
}

namespace {

std::vector<DetectedObject> objectsOf(const OutputValue& dict, const LabelSet* labels) {
    std::vector<DetectedObject> objects;
    const OutputValue* boxes = child(dict, "boxes");
    const OutputValue* labelValues = child(dict, "labels");
    const OutputValue* scores = child(dict, "scores");
    const OutputValue* masks = child(dict, "masks");
    const OutputValue* keypoints = child(dict, "keypoints");
    const auto n = static_cast<size_t>(boxes->shape[0]);
    for (size_t i = 0; i < n && 4 * i + 3 < boxes->values.size(); ++i) {
        DetectedObject o;
        o.x0 = boxes->values[4 * i];
        o.y0 = boxes->values[4 * i + 1];
        o.x1 = boxes->values[4 * i + 2];
        o.y1 = boxes->values[4 * i + 3];
        if (labelValues && i < labelValues->values.size()) {
            o.label = static_cast<int64_t>(std::lround(labelValues->values[i]));
            o.name = labels ? labels->nameOf(o.label) : std::string();
        }
        if (scores && i < scores->values.size()) {
            o.score = scores->values[i];
        }
        if (masks && masks->shape.size() == 4 && masks->shape[0] == static_cast<int64_t>(n)) {
            o.maskHeight = static_cast<int>(masks->shape[2]);
            o.maskWidth = static_cast<int>(masks->shape[3]);
            const size_t area =
                static_cast<size_t>(o.maskWidth) * static_cast<size_t>(o.maskHeight);
            if ((i + 1) * area <= masks->values.size()) {
                o.mask.resize(area);
                for (size_t p = 0; p < area; ++p) {
                    o.mask[p] = masks->values[i * area + p] > 0.5F ? 1 : 0;
                }
            }
        }
        if (keypoints && keypoints->shape.size() == 3 &&
            keypoints->shape[0] == static_cast<int64_t>(n)) {
            const size_t per = static_cast<size_t>(keypoints->shape[1] * keypoints->shape[2]);
            for (size_t k = 0; k < per && i * per + k < keypoints->values.size(); ++k) {
                o.keypoints.push_back(keypoints->values[i * per + k]);
            }
        }
        objects.push_back(std::move(o));
    }
    return objects;
}

std::string plural(size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool classify(const OutputValue& output, const TaskOptions& options, TaskResult& r) {
    if (!isScores(output) || !hasValues(output)) {
        return false;
    }
    {
        const auto k = static_cast<size_t>(output.shape.back());
        std::vector<double> scores(output.values.begin(),
                                   output.values.begin() + static_cast<std::ptrdiff_t>(k));
        const double sum = std::accumulate(scores.begin(), scores.end(), 0.0);
        const bool probabilities =
            std::all_of(scores.begin(), scores.end(), [](double v) { return v >= 0 && v <= 1; }) &&
            std::abs(sum - 1.0) < 1e-3;
        if (!probabilities) {
            const double top = *std::max_element(scores.begin(), scores.end());
            double total = 0;
            for (double& v : scores) {
                v = std::exp(v - top);
                total += v;
            }
            for (double& v : scores) {
                v /= total;
            }
            r.softmaxApplied = true;
        }
        std::vector<size_t> order(k);
        std::iota(order.begin(), order.end(), size_t{0});
        const size_t n = std::min(k, static_cast<size_t>(std::max(1, options.topK)));
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n),
                          order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
        const LabelSet* labels = scoreLabels(options, k);
        for (size_t i = 0; i < n; ++i) {
            r.topK.push_back({static_cast<int64_t>(order[i]), scores[order[i]],
                              labels ? labels->nameOf(static_cast<int64_t>(order[i])) : ""});
        }
        r.labelSet = labels ? labels->name : std::string();
        r.kind = TaskKind::Classification;
        r.summary = "classification: " + plural(k, "class", "classes") +
                    (r.softmaxApplied ? ", softmax applied (the values are logits)"
                                      : ", the values are probabilities");
    }
    return true;
}

// A document's page: corners (TL, TR, BR, BL) in pixels of the photo, the rectified page as an
// image, and scores per kind of page.
bool readPage(const OutputValue& output, const TaskOptions& options, TaskResult& r) {
    const OutputValue* corners =
        output.kind == OutputValue::Kind::Dict ? child(output, "corners") : nullptr;
    if (!isTensor(corners, 2) || corners->shape[1] != 2 || corners->shape[0] < 3 ||
        corners->shape[0] > 64 || !hasValues(*corners)) {
        return false;
    }
    r.kind = TaskKind::Page;
    for (size_t i = 0; i + 1 < corners->values.size(); i += 2) {
        r.corners.emplace_back(corners->values[i], corners->values[i + 1]);
    }
    const OutputValue* page = child(output, "page");
    if (isTensor(page, 4) && page->shape[0] >= 1 && (page->shape[1] == 3 || page->shape[1] == 1) &&
        hasValues(*page) && page->numel > 0) {
        const auto channels = static_cast<size_t>(page->shape[1]);
        r.pageHeight = static_cast<int>(page->shape[2]);
        r.pageWidth = static_cast<int>(page->shape[3]);
        const size_t area = static_cast<size_t>(r.pageWidth) * static_cast<size_t>(r.pageHeight);
        // Photos in [0, 1] (as the model took them), or 0..255.
        const double scale = page->max > 1.5 ? 1.0 : 255.0;
        r.pageRgb.resize(area * 3);
        for (size_t c = 0; c < 3; ++c) {
            const float* plane = page->values.data() + (channels == 3 ? c : 0) * area;
            for (size_t i = 0; i < area; ++i) {
                r.pageRgb[i * 3 + c] = static_cast<uint8_t>(
                    std::clamp(std::lround(double(plane[i]) * scale), 0L, 255L));
            }
        }
    }
    std::string kind;
    if (const OutputValue* scores = child(output, "scores")) {
        TaskResult scored;
        if (classify(*scores, options, scored)) {
            r.topK = std::move(scored.topK);
            r.softmaxApplied = scored.softmaxApplied;
            r.labelSet = scored.labelSet;
            if (!r.topK.empty()) {
                const TopEntry& best = r.topK.front();
                char score[32];
                std::snprintf(score, sizeof score, "%.2f", best.score);
                kind = ", " +
                       (best.name.empty() ? "kind " + std::to_string(best.index) : best.name) +
                       " " + score;
            }
        }
    }
    r.kind = TaskKind::Page;
    r.summary = "page: " + plural(r.corners.size(), "corner", "corners") +
                (r.pageRgb.empty() ? std::string()
                                   : ", rectified " + std::to_string(r.pageWidth) + "x" +
                                         std::to_string(r.pageHeight)) +
                kind;
    return true;
}

} // namespace

TaskResult interpretOutput(const OutputValue& output, const TaskOptions& options) {
    TaskResult r;
    const TaskKind wanted = options.kind;
    if (wanted == TaskKind::None) {
        r.summary = "drawn as values (the task is set to none)";
        return r;
    }
    // A page: a dict with corners (and the rectified page, and scores per kind)
    if (wanted == TaskKind::Auto || wanted == TaskKind::Page) {
        if (readPage(output, options, r)) {
            return r;
        }
        if (wanted == TaskKind::Page) {
            r.summary = "not a page: the output is not a dict with corners (N x 2)";
            return r;
        }
    }
    // Detection
    if (wanted == TaskKind::Auto || wanted == TaskKind::Detection) {
        const OutputValue* list = detectionList(output);
        if (list) {
            const LabelSet* labels = chooseLabels(options, "coco", 0);
            size_t total = 0;
            for (const auto& image : list->children) {
                if (!hasValues(*child(image, "boxes"))) {
                    r.summary = "detections too large to draw";
                    return r;
                }
                r.detections.push_back(objectsOf(image, labels));
                total += r.detections.back().size();
            }
            r.kind = TaskKind::Detection;
            r.labelSet = labels ? labels->name : std::string();
            r.summary = "detection: " + plural(total, "object", "objects") + " in " +
                        plural(r.detections.size(), "image", "images");
            return r;
        }
        if (isBoxTensor(output) && hasValues(output) &&
            (wanted == TaskKind::Detection || output.shape[1] == 6)) {
            const LabelSet* labels = chooseLabels(options, "coco", 0);
            std::vector<DetectedObject> objects;
            const auto columns = static_cast<size_t>(output.shape[1]);
            for (size_t i = 0; i < static_cast<size_t>(output.shape[0]); ++i) {
                const float* row = output.values.data() + i * columns;
                DetectedObject o;
                o.x0 = row[0];
                o.y0 = row[1];
                o.x1 = row[2];
                o.y1 = row[3];
                if (columns == 6) {
                    o.score = row[4];
                    o.label = static_cast<int64_t>(std::lround(row[5]));
                    o.name = labels ? labels->nameOf(o.label) : std::string();
                }
                objects.push_back(std::move(o));
            }
            r.kind = TaskKind::Detection;
            r.labelSet = labels && columns == 6 ? labels->name : std::string();
            r.summary = "detection: " + plural(objects.size(), "box", "boxes");
            r.detections.push_back(std::move(objects));
            return r;
        }
        if (wanted == TaskKind::Detection) {
            r.summary = "not a detection: the output is neither a list of dicts with boxes nor an "
                        "N x 4 / N x 6 tensor";
            return r;
        }
    }
    // Segmentation
    if (wanted == TaskKind::Auto || wanted == TaskKind::Segmentation) {
        if (const OutputValue* logits = segmentationLogits(output)) {
            if (!hasValues(*logits)) {
                r.summary = "segmentation too large to draw";
                return r;
            }
            const auto classes = static_cast<size_t>(logits->shape[1]);
            r.height = static_cast<int>(logits->shape[2]);
            r.width = static_cast<int>(logits->shape[3]);
            const size_t area = static_cast<size_t>(r.width) * static_cast<size_t>(r.height);
            r.classMap.assign(area, 0);
            std::vector<int64_t> pixels(classes, 0);
            for (size_t p = 0; p < area; ++p) {
                size_t best = 0;
                for (size_t c = 1; c < classes; ++c) {
                    if (logits->values[c * area + p] > logits->values[best * area + p]) {
                        best = c;
                    }
                }
                r.classMap[p] = static_cast<int32_t>(best);
                ++pixels[best];
            }
            for (size_t c = 0; c < classes; ++c) {
                if (pixels[c] > 0) {
                    r.classesPresent.emplace_back(static_cast<int>(c), pixels[c]);
                }
            }
            std::sort(r.classesPresent.begin(), r.classesPresent.end(),
                      [](const auto& a, const auto& b) { return a.second > b.second; });
            const LabelSet* labels = chooseLabels(options, "voc", classes);
            if (labels) {
                r.labelSet = labels->name;
                for (size_t c = 0; c < classes; ++c) {
                    r.classNames.push_back(labels->nameOf(static_cast<int64_t>(c)));
                }
            }
            r.kind = TaskKind::Segmentation;
            r.summary = "segmentation: " + plural(classes, "class", "classes") + ", " +
                        std::to_string(r.classesPresent.size()) + " present in " +
                        std::to_string(r.width) + "x" + std::to_string(r.height);
            return r;
        }
        if (wanted == TaskKind::Segmentation) {
            r.summary = "not a segmentation: the output is not N x C x H x W (or a dict with out)";
            return r;
        }
    }
    // Classification: N x K scores, or a dict's "scores" / "logits" / "probs" entry (the demo's
    // classify_page returns the page and its scores)
    if (classify(output, options, r)) {
        return r;
    }
    if (output.kind == OutputValue::Kind::Dict) {
        for (const char* key : {"scores", "logits", "probs", "probabilities"}) {
            const OutputValue* scores = child(output, key);
            if (scores && classify(*scores, options, r)) {
                r.summary += std::string(" (the output's '") + key + "')";
                return r;
            }
        }
    }
    r.summary = wanted == TaskKind::Classification
                    ? "not a classification: the output is not N x K scores"
                    : "none of detection, segmentation, classification, page: drawn as values";
    return r;
}

} // namespace scriptscope
