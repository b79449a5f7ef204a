#include "task_result.h"

#include "flow_colour.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace scriptscope {

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
    case TaskKind::Flow:
        return "flow";
    }
    return "none";
}

bool taskKindFromName(const std::string& name, TaskKind& kind) {
    for (const TaskKind k :
         {TaskKind::Auto, TaskKind::None, TaskKind::Classification, TaskKind::Detection,
          TaskKind::Segmentation, TaskKind::Page, TaskKind::Flow}) {
        if (name == toString(k)) {
            kind = k;
            return true;
        }
    }
    return false;
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

bool isContainer(const OutputValue& v) {
    return v.kind == OutputValue::Kind::Tuple || v.kind == OutputValue::Kind::List ||
           v.kind == OutputValue::Kind::Dict;
}

// "[0]", "['out']": how Python indexes the element.
std::string indexText(const OutputValue& element) {
    return "[" + element.key + "]";
}

// The first value, depth first from the output itself, that `accept` takes; `where` says how to
// reach it from the output ("[0]['out']").
template <typename Accept>
const OutputValue* findValue(const OutputValue& value, const Accept& accept, std::string& where) {
    if (accept(value)) {
        return &value;
    }
    if (!isContainer(value)) {
        return nullptr;
    }
    for (const auto& element : value.children) {
        std::string inner;
        if (const OutputValue* found = findValue(element, accept, inner)) {
            where = indexText(element) + inner;
            return found;
        }
    }
    return nullptr;
}

// NaN and Inf counted, for "the scores hold 4 NaN".
std::string nonFiniteText(const OutputValue& v) {
    std::string text;
    if (v.nanCount) {
        text = std::to_string(v.nanCount) + " NaN";
    }
    if (v.infCount) {
        text += (text.empty() ? "" : " and ") + std::to_string(v.infCount) + " Inf";
    }
    return text;
}

bool finite(const OutputValue& v) {
    return v.nanCount == 0 && v.infCount == 0;
}

// The sentence for a value found but not interpreted because it is not finite.
std::string notFinite(const char* what, const OutputValue& v, const std::string& where) {
    return std::string("not drawn as ") + what + ": " +
           (where.empty() ? std::string("the output") : "the output's " + where) + " holds " +
           nonFiniteText(v) + " of " + std::to_string(v.numel) +
           " values (the Numerics workspace finds the first operator that made one)";
}

// torchvision's detections: a dict with boxes N x 4 (and labels, scores, masks, keypoints).
bool isDetectionDict(const OutputValue& v) {
    if (v.kind != OutputValue::Kind::Dict) {
        return false;
    }
    const OutputValue* boxes = child(v, "boxes");
    return isTensor(boxes, 2) && boxes->shape[1] == 4;
}

// A list of per-image detection dicts (scripted detectors return them in (losses, detections)).
bool isDetectionList(const OutputValue& v) {
    return v.kind == OutputValue::Kind::List && !v.children.empty() &&
           std::all_of(v.children.begin(), v.children.end(), isDetectionDict);
}

// Plain box tensors: N x 4 (x0, y0, x1, y1) or N x 6 (..., score, label).
bool isBoxTensor(const OutputValue& v) {
    return isTensor(&v, 2) && (v.shape[1] == 4 || v.shape[1] == 6) && v.shape[0] >= 0 &&
           v.shape[0] <= 100000;
}

bool isPlanes(const OutputValue& v) {
    return isTensor(&v, 4) && v.shape[0] >= 1 && v.shape[2] > 1 && v.shape[3] > 1;
}

bool isFlowTensor(const OutputValue& v) {
    return isPlanes(v) && v.shape[1] == 2;
}

// RAFT's output: the flow after each refinement, all N x 2 x H x W (a person who forces Flow may
// also mean one such tensor).
bool isFlowList(const OutputValue& v) {
    return (v.kind == OutputValue::Kind::List || v.kind == OutputValue::Kind::Tuple) &&
           v.children.size() >= 2 &&
           std::all_of(v.children.begin(), v.children.end(), [&](const OutputValue& c) {
               return isFlowTensor(c) && c.shape == v.children.front().shape;
           });
}

bool isSegmentationLogits(const OutputValue& v) {
    return isPlanes(v) && v.shape[1] > 1;
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

// " (the output's [0])" after a summary, where the value was found inside the output.
std::string foundAt(const std::string& where) {
    return where.empty() ? std::string() : " (the output's " + where + ")";
}

// Ranks the first row of N x K scores (K scores). False when the value is not scores; true with
// kind None and the reason when they are not finite.
bool classify(const OutputValue& output, const TaskOptions& options, TaskResult& r) {
    if (!isScores(output) || !hasValues(output)) {
        return false;
    }
    if (!finite(output)) {
        r.kind = TaskKind::None;
        r.summary = notFinite("a classification", output, r.where);
        return true;
    }
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
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    const LabelSet* labels = scoreLabels(options, k);
    for (size_t i = 0; i < n; ++i) {
        r.topK.push_back({static_cast<int64_t>(order[i]), scores[order[i]],
                          labels ? labels->nameOf(static_cast<int64_t>(order[i])) : ""});
    }
    r.labelSet = labels ? labels->name : std::string();
    r.kind = TaskKind::Classification;
    r.summary = "classification: " + plural(k, "class", "classes") +
                (r.softmaxApplied ? ", softmax applied (the values are logits)"
                                  : ", the values are probabilities") +
                foundAt(r.where);
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
    if (!finite(*corners)) {
        r.kind = TaskKind::None;
        r.summary = notFinite("a page", *corners, "['corners']");
        return true;
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
                const double v = std::isfinite(plane[i]) ? double(plane[i]) * scale : 0.0;
                r.pageRgb[i * 3 + c] = static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
            }
        }
    }
    std::string kind;
    if (const OutputValue* scores = child(output, "scores")) {
        TaskResult scored;
        if (classify(*scores, options, scored) && scored.kind == TaskKind::Classification) {
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
        } else if (!scored.summary.empty()) {
            kind = ", its kind not ranked (the scores hold " + nonFiniteText(*scores) + ")";
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

bool detect(const OutputValue& output, const TaskOptions& options, TaskResult& r) {
    std::string where;
    if (const OutputValue* list = findValue(output, isDetectionList, where)) {
        const LabelSet* labels = chooseLabels(options, "coco", 0);
        size_t total = 0;
        r.where = where;
        for (size_t i = 0; i < list->children.size(); ++i) {
            const OutputValue& image = list->children[i];
            const OutputValue& boxes = *child(image, "boxes");
            if (!hasValues(boxes)) {
                r.summary = "detections too large to draw";
                return true;
            }
            for (const char* key : {"boxes", "scores"}) {
                const OutputValue* v = child(image, key);
                if (v && !finite(*v)) {
                    r.detections.clear();
                    r.summary = notFinite("a detection", *v,
                                          where + "[" + std::to_string(i) + "]['" + key + "']");
                    return true;
                }
            }
            r.detections.push_back(objectsOf(image, labels));
            total += r.detections.back().size();
        }
        r.kind = TaskKind::Detection;
        r.labelSet = labels ? labels->name : std::string();
        r.summary = "detection: " + plural(total, "object", "objects") + " in " +
                    plural(r.detections.size(), "image", "images") + foundAt(where);
        return true;
    }
    if (isBoxTensor(output) && hasValues(output) &&
        (options.kind == TaskKind::Detection || output.shape[1] == 6)) {
        if (!finite(output)) {
            r.summary = notFinite("a detection", output, "");
            return true;
        }
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
        return true;
    }
    return false;
}

// An optical flow: RAFT's list of estimates (the last is the final one), a dict's "flow", or
// (forced) the first N x 2 x H x W tensor.
bool readFlow(const OutputValue& output, const TaskOptions& options, TaskResult& r) {
    std::string where;
    const OutputValue* flow = nullptr;
    size_t estimates = 1;
    if (const OutputValue* list = findValue(output, isFlowList, where)) {
        flow = &list->children.back();
        estimates = list->children.size();
        where += indexText(*flow);
    } else {
        flow = findValue(
            output,
            [&](const OutputValue& v) {
                if (v.kind == OutputValue::Kind::Dict) {
                    const OutputValue* f = child(v, "flow");
                    return f && isFlowTensor(*f);
                }
                return false;
            },
            where);
        if (flow) {
            flow = child(*flow, "flow");
            where += "['flow']";
        } else if (options.kind == TaskKind::Flow) {
            flow = findValue(output, isFlowTensor, where);
        }
    }
    if (!flow) {
        return false;
    }
    r.where = where;
    if (!hasValues(*flow)) {
        r.summary = "flow too large to draw";
        return true;
    }
    r.height = static_cast<int>(flow->shape[2]);
    r.width = static_cast<int>(flow->shape[3]);
    const size_t area = static_cast<size_t>(r.width) * static_cast<size_t>(r.height);
    const FlowPicture picture =
        flowToRgb(flow->values.data(), flow->values.data() + area, r.width, r.height);
    r.flowRgb = picture.rgb;
    r.flowMaxNorm = picture.maxNorm;
    r.kind = TaskKind::Flow;
    char longest[32];
    std::snprintf(longest, sizeof longest, "%.3g", picture.maxNorm);
    r.summary = "optical flow: " + std::to_string(r.width) + "x" + std::to_string(r.height) +
                ", longest vector " + longest + " px" +
                (estimates > 1 ? ", the last of " + std::to_string(estimates) + " estimates"
                               : std::string()) +
                (finite(*flow) ? std::string() : ", " + nonFiniteText(*flow) + " drawn black") +
                foundAt(where);
    return true;
}

bool segment(const OutputValue& output, const TaskOptions& options, TaskResult& r) {
    std::string where;
    // torchvision's segmenters return {"out": ..., "aux": ...}: "out" first, else any N x C x H x
    // W.
    const OutputValue* logits = findValue(
        output,
        [](const OutputValue& v) {
            if (v.kind != OutputValue::Kind::Dict) {
                return false;
            }
            const OutputValue* out = child(v, "out");
            return out && isSegmentationLogits(*out);
        },
        where);
    if (logits) {
        logits = child(*logits, "out");
        where += "['out']";
    } else {
        logits = findValue(output, isSegmentationLogits, where);
    }
    if (!logits) {
        return false;
    }
    r.where = where;
    if (!hasValues(*logits)) {
        r.summary = "segmentation too large to draw";
        return true;
    }
    if (logits->nanCount > 0) {
        r.summary = notFinite("a segmentation", *logits, where);
        return true;
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
                std::to_string(r.classesPresent.size()) + " present in " + std::to_string(r.width) +
                "x" + std::to_string(r.height) + foundAt(where);
    return true;
}

// Scores: a dict's "scores" / "logits" / "probs" entry (the demo's classify_page returns the page
// and its scores) wherever it is, else the first N x K or K tensor (GoogLeNet's (logits, None,
// None)).
bool rank(const OutputValue& output, const TaskOptions& options, TaskResult& r) {
    static const char* const kKeys[] = {"scores", "logits", "probs", "probabilities"};
    std::string where;
    const OutputValue* scores = findValue(
        output,
        [](const OutputValue& v) {
            if (v.kind != OutputValue::Kind::Dict) {
                return false;
            }
            for (const char* key : kKeys) {
                const OutputValue* s = child(v, key);
                if (s && isScores(*s) && hasValues(*s)) {
                    return true;
                }
            }
            return false;
        },
        where);
    if (scores) {
        for (const char* key : kKeys) {
            const OutputValue* s = child(*scores, key);
            if (s && isScores(*s) && hasValues(*s)) {
                r.where = where + "['" + key + "']";
                return classify(*s, options, r);
            }
        }
    }
    scores = findValue(
        output, [](const OutputValue& v) { return isScores(v) && hasValues(v); }, where);
    if (!scores) {
        return false;
    }
    r.where = where;
    return classify(*scores, options, r);
}

} // namespace

TaskResult interpretOutput(const OutputValue& output, const TaskOptions& options) {
    TaskResult r;
    const TaskKind wanted = options.kind;
    if (wanted == TaskKind::None) {
        r.summary = "drawn as values (the task is set to none)";
        return r;
    }
    const auto tries = [&](TaskKind kind) { return wanted == TaskKind::Auto || wanted == kind; };
    // In the order that tells them apart: a page's dict has scores too, a detector's dicts hold
    // N x 4 boxes, a flow is N x 2 x H x W as a two-class segmentation is.
    if (tries(TaskKind::Page)) {
        std::string where;
        TaskResult page;
        const auto read = [&](const OutputValue& v) {
            page = TaskResult{};
            return readPage(v, options, page);
        };
        if (findValue(output, read, where)) {
            r = std::move(page);
            r.where = where;
            return r;
        }
        if (wanted == TaskKind::Page) {
            r.summary = "not a page: the output holds no dict with corners (N x 2)";
            return r;
        }
    }
    if (tries(TaskKind::Detection)) {
        if (detect(output, options, r)) {
            return r;
        }
        if (wanted == TaskKind::Detection) {
            r.summary = "not a detection: the output holds neither a list of dicts with boxes "
                        "nor an N x 4 / N x 6 tensor";
            return r;
        }
    }
    if (tries(TaskKind::Flow)) {
        if (readFlow(output, options, r)) {
            return r;
        }
        if (wanted == TaskKind::Flow) {
            r.summary = "not an optical flow: the output holds no N x 2 x H x W tensor";
            return r;
        }
    }
    if (tries(TaskKind::Segmentation)) {
        if (segment(output, options, r)) {
            return r;
        }
        if (wanted == TaskKind::Segmentation) {
            r.summary = "not a segmentation: the output holds no N x C x H x W tensor (or a dict "
                        "with out)";
            return r;
        }
    }
    if (rank(output, options, r)) {
        return r;
    }
    r.summary = wanted == TaskKind::Classification
                    ? "not a classification: the output holds no N x K scores"
                    : "none of detection, segmentation, flow, classification, page: drawn as "
                      "values";
    return r;
}

namespace {

void collectNonFinite(const OutputValue& v, const std::string& where,
                      std::vector<NonFiniteTensor>& out) {
    if (v.kind == OutputValue::Kind::Tensor && (v.nanCount > 0 || v.infCount > 0)) {
        out.push_back({where, v.nanCount, v.infCount, v.numel});
    }
    if (isContainer(v)) {
        for (const auto& element : v.children) {
            collectNonFinite(element, where + indexText(element), out);
        }
    }
}

} // namespace

std::vector<NonFiniteTensor> nonFiniteTensors(const OutputValue& output) {
    std::vector<NonFiniteTensor> found;
    collectNonFinite(output, "", found);
    return found;
}

std::string nonFiniteSummary(const OutputValue& output) {
    const auto found = nonFiniteTensors(output);
    std::string text;
    for (size_t i = 0; i < found.size() && i < 4; ++i) {
        const auto& t = found[i];
        OutputValue counts;
        counts.nanCount = t.nanCount;
        counts.infCount = t.infCount;
        const bool all = t.nanCount + t.infCount == t.numel;
        text += (i == 0 ? (t.where.empty() ? "the output" : "the output's " + t.where)
                        : ", " + t.where) +
                (i == 0 ? " holds " : " ") + nonFiniteText(counts) +
                (all ? (t.numel == 1 ? " (its only value)"
                                     : " (all " + std::to_string(t.numel) + " of its values)")
                     : " of " + std::to_string(t.numel) + " values");
    }
    if (found.size() > 4) {
        text += ", and " + std::to_string(found.size() - 4) + " more tensors";
    }
    return text;
}

} // namespace scriptscope
