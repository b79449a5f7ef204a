// run: a method timed, its outputs printed or drawn as their task, on given inputs or on every
// frame of a video, a folder or a camera.
#include "commands.h"

#include <engine.h>
#include <format.h>
#include <frame_source.h>
#include <graph_layout.h>
#include <input_spec.h>
#include <matrix_io.h>
#include <process_limits.h>
#include <stats.h>
#include <task_render.h>
#include <task_result.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace scriptscope::cli {
namespace {

nlohmann::json taskJson(const TaskResult& t) {
    nlohmann::json j = {{"kind", toString(t.kind)}, {"summary", t.summary}};
    if (!t.labelSet.empty()) {
        j["labels"] = t.labelSet;
    }
    if (t.kind == TaskKind::Detection) {
        nlohmann::json images = nlohmann::json::array();
        for (const auto& objects : t.detections) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& d : objects) {
                nlohmann::json object = {{"box", {d.x0, d.y0, d.x1, d.y1}}, {"score", d.score}};
                if (d.label >= 0) {
                    object["label"] = d.label;
                    object["name"] = d.name;
                }
                if (!d.mask.empty()) {
                    object["mask_pixels"] = std::count(d.mask.begin(), d.mask.end(), 1);
                }
                if (!d.keypoints.empty()) {
                    object["keypoints"] = d.keypoints;
                }
                list.push_back(object);
            }
            images.push_back(list);
        }
        j["detections"] = images;
    } else if (t.kind == TaskKind::Segmentation) {
        nlohmann::json present = nlohmann::json::array();
        for (const auto& [index, pixels] : t.classesPresent) {
            nlohmann::json c = {{"class", index}, {"pixels", pixels}};
            if (static_cast<size_t>(index) < t.classNames.size()) {
                c["name"] = t.classNames[static_cast<size_t>(index)];
            }
            present.push_back(c);
        }
        j["size"] = {t.width, t.height};
        j["classes_present"] = present;
    } else if (t.kind == TaskKind::Classification) {
        nlohmann::json top = nlohmann::json::array();
        for (const auto& e : t.topK) {
            top.push_back({{"index", e.index}, {"score", e.score}, {"name", e.name}});
        }
        j["top_k"] = top;
        j["softmax_applied"] = t.softmaxApplied;
    } else if (t.kind == TaskKind::Page) {
        nlohmann::json corners = nlohmann::json::array();
        for (const auto& [x, y] : t.corners) {
            corners.push_back({x, y});
        }
        j["corners"] = corners;
        if (!t.pageRgb.empty()) {
            j["page_size"] = {t.pageWidth, t.pageHeight};
        }
        nlohmann::json top = nlohmann::json::array();
        for (const auto& e : t.topK) {
            top.push_back({{"index", e.index}, {"score", e.score}, {"name", e.name}});
        }
        j["kinds"] = top;
    } else if (t.kind == TaskKind::Flow) {
        j["size"] = {t.width, t.height};
        j["max_norm"] = t.flowMaxNorm;
    }
    if (!t.where.empty()) {
        j["where"] = t.where;
    }
    return j;
}

void printTask(const TaskResult& t, double threshold) {
    std::cout << "\nTask        " << t.summary
              << (t.labelSet.empty() ? std::string() : " (names: " + t.labelSet + ")") << "\n";
    if (t.kind == TaskKind::Detection) {
        for (size_t i = 0; i < t.detections.size(); ++i) {
            size_t shown = 0;
            for (const auto& d : t.detections[i]) {
                if (d.score < threshold) {
                    continue;
                }
                ++shown;
                std::cout << "  image " << i << "  " << std::fixed << std::setprecision(3)
                          << d.score << "  "
                          << (d.name.empty() ? (d.label >= 0 ? "class " + std::to_string(d.label)
                                                             : std::string("object"))
                                             : d.name)
                          << std::setprecision(1) << "  [" << d.x0 << ", " << d.y0 << ", " << d.x1
                          << ", " << d.y1 << "]\n"
                          << std::defaultfloat << std::setprecision(6);
            }
            std::cout << "  image " << i << ": " << shown << " of " << t.detections[i].size()
                      << " at a score of at least " << threshold << "\n";
        }
    } else if (t.kind == TaskKind::Segmentation) {
        for (const auto& [index, pixels] : t.classesPresent) {
            const std::string name = static_cast<size_t>(index) < t.classNames.size()
                                         ? t.classNames[static_cast<size_t>(index)]
                                         : std::string();
            std::cout << "  " << std::setw(3) << index << "  " << std::setw(8) << pixels
                      << " pixels  " << name << "\n";
        }
    } else if (t.kind == TaskKind::Classification || t.kind == TaskKind::Page) {
        if (t.kind == TaskKind::Page) {
            static const char* kCorners[] = {"top-left", "top-right", "bottom-right",
                                             "bottom-left"};
            std::cout << std::fixed << std::setprecision(1);
            for (size_t i = 0; i < t.corners.size(); ++i) {
                std::cout << "  " << std::setw(12) << (i < 4 ? kCorners[i] : "corner") << "  "
                          << t.corners[i].first << ", " << t.corners[i].second << "\n";
            }
            std::cout << std::defaultfloat;
        }
        for (size_t i = 0; i < t.topK.size(); ++i) {
            const auto& e = t.topK[i];
            std::cout << "  " << (i + 1) << ". " << std::fixed << std::setprecision(4) << e.score
                      << "  " << std::setw(5) << e.index << "  " << e.name << "\n"
                      << std::defaultfloat << std::setprecision(6);
        }
    }
}

// How run interprets its output: --task, --labels (else the archive's labels, which must outlive
// the options), --top-k.
TaskOptions taskOptionsFor(const Options& o, const LabelSet* labels,
                           const LabelSet& archiveLabels) {
    TaskOptions options;
    taskKindFromName(o.task, options.kind);
    options.labels = labels;
    options.archiveLabels = archiveLabels.names.empty() ? nullptr : &archiveLabels;
    options.topK = o.topK;
    return options;
}

// run --source: every frame of a video or folder through the model, drawn and written (to a
// video or a folder) with none dropped; a frame that does not decode or run is reported and
// skipped. A progress line goes to a terminal.
int commandRunSource(const Options& o, Model& model, const ModelInfo& modelInfo,
                     const LabelSet* labels) {
    RunRequest request = o.run;
    request.valuesLimit = std::max<size_t>(request.valuesLimit, size_t{16} << 20);
    const InputSpec* image = firstImageInput(request.inputs);
    if (!image || image->path != kFrameImagePath) {
        return fail(o, Error{ErrorKind::Input,
                             "--source gives frames to an input image:- (e.g. --input "
                             "'image:-,size=640x480'); this run has none"});
    }
    auto spec = parseSourceSpec(o.source);
    if (!spec) {
        return fail(o, spec.error());
    }
    auto opened = FrameSource::open(*spec);
    if (!opened) {
        return fail(o, opened.error());
    }
    FrameSource& source = **opened;
    const SourceInfo& info = source.info();
    std::unique_ptr<FrameSink> sink;
    if (!o.render.empty()) {
        auto made = FrameSink::open(o.render, info.fps > 0 ? info.fps : 10);
        if (!made) {
            return fail(o, made.error());
        }
        sink = std::move(made).value();
    }
    const LabelSet archiveLabels = labelsFromExtraFiles(modelInfo.probe.extraFiles);
    const TaskOptions taskOptions = taskOptionsFor(o, labels, archiveLabels);
    RenderOptions renderOptions;
    renderOptions.scoreThreshold = o.scoreThreshold;
    // Drawn on each frame at its own size, the result scaled from the size the model saw.
    renderOptions.inputWidth = image->image.width;
    renderOptions.inputHeight = image->image.height;
    const bool terminal = ::isatty(STDERR_FILENO) != 0 && !o.json;
    std::vector<double> latencies, decodeMs;
    nlohmann::json frames = nlohmann::json::array(), errors = nlohmann::json::array();
    int64_t done = 0;
    const auto started = std::chrono::steady_clock::now();
    for (int64_t index = 0; !source.atEnd(index); ++index) {
        const auto before = std::chrono::steady_clock::now();
        auto frame = source.read(index);
        decodeMs.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before)
                .count());
        if (!frame) {
            if (source.atEnd(index)) {
                break; // a video's frame count was an estimate
            }
            errors.push_back({{"frame", index}, {"message", frame.error().message}});
            std::cerr << (terminal ? "\r\033[K" : "")
                      << "scriptscope-cli: " << frame.error().message << " (skipped)\n";
            continue;
        }
        request.frame = frameView(frame->bgr);
        // The warm-up before the first frame only: each frame is one timed run.
        request.warmup = done == 0 ? o.run.warmup : 0;
        request.iterations = 1;
        auto result = model.run(request);
        if (!result) {
            errors.push_back(
                {{"frame", index}, {"name", frame->name}, {"message", result.error().message}});
            std::cerr << (terminal ? "\r\033[K" : "") << "scriptscope-cli: " << frame->name << ": "
                      << firstLine(result.error().message) << " (skipped)\n";
            continue;
        }
        const double ms = result->samplesMs.empty() ? 0 : result->samplesMs.front();
        latencies.push_back(ms);
        const TaskResult task = interpretOutput(result->output, taskOptions);
        if (sink) {
            cv::Mat drawn = frame->bgr; // this frame is ours: drawn on in place
            renderTaskInPlace(drawn, task, renderOptions);
            if (auto error = sink->write(drawn, frame->name)) {
                return fail(o, *error);
            }
        }
        frames.push_back(
            {{"index", index}, {"name", frame->name}, {"ms", ms}, {"interpreted", taskJson(task)}});
        ++done;
        if (terminal) {
            std::cerr << "\r\033[Kframe " << index + 1;
            if (info.frames > 0) {
                std::cerr << "/" << info.frames;
            }
            std::cerr << "  " << std::fixed << std::setprecision(1) << ms << " ms  "
                      << task.summary.substr(0, 60) << std::defaultfloat << std::flush;
        }
    }
    if (terminal) {
        std::cerr << "\r\033[K";
    }
    if (sink) {
        sink->close();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const TimingStats stats = computeStats(latencies);
    const TimingStats decode = computeStats(decodeMs);
    const double fps = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    if (o.json) {
        nlohmann::json j = {
            {"source", info.description},
            {"frames", done},
            {"dropped", 0},
            {"errors", errors},
            {"latency_ms",
             {{"p50", stats.p50}, {"p90", stats.p90}, {"mean", stats.mean}, {"max", stats.max}}},
            {"decode_ms", {{"p50", decode.p50}, {"mean", decode.mean}}},
            {"pipeline_fps", fps},
            {"per_frame", frames}};
        if (sink) {
            j["rendered"] = o.render;
            j["written"] = sink->written();
        }
        std::cout << j.dump(2) << "\n";
        return done > 0 ? kExitOk : kExitError;
    }
    std::cout << "Source      " << info.description << "\n";
    for (const auto& note : info.notes) {
        std::cout << "            " << note << "\n";
    }
    std::cout << "Frames      " << done << " run, 0 dropped (every frame is run when rendering "
              << "headless), " << errors.size() << " skipped\n"
              << std::fixed << std::setprecision(2) << "Latency     p50 " << stats.p50
              << " ms, p90 " << stats.p90 << " ms (forward per frame)\nDecode      p50 "
              << decode.p50 << " ms\n"
              << std::setprecision(1) << "Pipeline    " << fps
              << " frames/s end to end (decode, preprocess, run, draw, write)\n"
              << std::defaultfloat;
    if (sink) {
        std::cout << "Rendered    " << sink->written() << " frames to " << o.render << "\n";
    }
    return done > 0 ? kExitOk : kExitError;
}

} // namespace

int commandRun(const Options& o) {
    auto opened = openModelAt(o, 0, false);
    if (!opened) {
        return fail(o, opened.error());
    }
    Model& model = **opened;
    const ModelInfo* info = &model.info();

    const bool interpret = !o.render.empty() || o.task != "auto" || !o.labels.empty() || o.json;
    RunRequest request = o.run;
    if (interpret) {
        request.valuesLimit = std::max<size_t>(request.valuesLimit, size_t{16} << 20);
    }
    const InputSpec* image = firstImageInput(request.inputs);
    if (!o.render.empty() && !image && o.source.empty()) {
        return fail(o, Error{ErrorKind::Input, "--render draws over an image input, and this "
                                               "run has none (give --input image:FILE)"});
    }
    LabelSet fileLabels;
    const LabelSet* labels = nullptr;
    if (!o.labels.empty()) {
        labels = builtinLabels(o.labels);
        if (!labels) {
            auto read = readLabelsFile(o.labels);
            if (!read) {
                return fail(o, read.error());
            }
            fileLabels = std::move(read).value();
            labels = &fileLabels;
        }
    }
    if (!o.source.empty()) {
        return commandRunSource(o, model, *info, labels);
    }
    auto result = model.run(request);
    if (!result) {
        return fail(o, result.error());
    }
    const RunResult& r = *result;
    TaskResult task;
    if (interpret) {
        const LabelSet archiveLabels = labelsFromExtraFiles(info->probe.extraFiles);
        task = interpretOutput(r.output, taskOptionsFor(o, labels, archiveLabels));
    }
    if (!o.render.empty()) {
        RenderOptions options;
        options.scoreThreshold = o.scoreThreshold;
        if (auto error = renderTaskFile(image->path, image->image.width, image->image.height, task,
                                        options, o.render)) {
            return fail(o, *error);
        }
    }
    if (o.json) {
        nlohmann::json j = {{"method", r.method},
                            {"device", r.device},
                            {"device_name", r.deviceName},
                            {"warmup", r.warmup},
                            {"synchronized", r.synchronized},
                            {"iterations", r.samplesMs.size()},
                            {"inputs", r.inputDescriptions},
                            {"samples_ms", r.samplesMs},
                            {"stats_ms",
                             {{"min", r.stats.min},
                              {"p50", r.stats.p50},
                              {"p90", r.stats.p90},
                              {"p99", r.stats.p99},
                              {"max", r.stats.max},
                              {"mean", r.stats.mean},
                              {"std", r.stats.stddev}}},
                            {"output", outputJson(r.output)},
                            {"interpreted", taskJson(task)}};
        nlohmann::json nonFinite = nlohmann::json::array();
        for (const auto& t : nonFiniteTensors(r.output)) {
            nonFinite.push_back(
                {{"where", t.where}, {"nan", t.nanCount}, {"inf", t.infCount}, {"numel", t.numel}});
        }
        j["non_finite"] = nonFinite;
        if (!o.render.empty()) {
            j["rendered"] = o.render;
        }
        nlohmann::json flow = nlohmann::json::array();
        for (const ControlFlowRun& f : r.controlFlow) {
            nlohmann::json entry = {
                {"node", f.node}, {"graph_node", f.graphNode}, {"kind", f.kind}};
            if (f.branch >= 0) {
                entry["branch"] = f.branch == 0 ? "true" : "false";
            }
            if (f.iterations >= 0) {
                entry["iterations"] = f.iterations;
            }
            flow.push_back(std::move(entry));
        }
        j["control_flow"] = flow;
        if (r.profiled) {
            nlohmann::json modules = nlohmann::json::array(), operators = nlohmann::json::array();
            for (const auto& m : r.profile.modules) {
                modules.push_back({{"path", m.path},
                                   {"self_ms", m.selfMs},
                                   {"total_ms", m.totalMs},
                                   {"calls", m.calls}});
            }
            for (const auto& op : r.profile.operators) {
                operators.push_back({{"name", op.name},
                                     {"total_ms", op.totalMs},
                                     {"self_ms", op.selfMs},
                                     {"calls", op.calls}});
            }
            j["profile"] = {{"operator_ms", r.profile.operatorMs},
                            {"wall_ms", r.profile.wallMs},
                            {"runs", r.profile.runs},
                            {"modules", modules},
                            {"operators", operators}};
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "Method      " << r.method << "\nDevice      " << r.device << " (" << r.deviceName
              << ")\n";
    for (size_t i = 0; i < r.inputDescriptions.size(); ++i) {
        std::cout << (i ? "            " : "Inputs      ") << r.inputDescriptions[i] << "\n";
    }
    std::cout << "Warm-up     " << r.warmup << "\nIterations  " << r.samplesMs.size()
              << (r.synchronized ? ", each waited for the device to finish (synchronized)" : "")
              << "\n\n";
    std::cout << std::fixed << std::setprecision(3);
    std::cout << "   min ms     p50 ms     p90 ms     p99 ms     max ms    mean ms\n";
    for (const double v :
         {r.stats.min, r.stats.p50, r.stats.p90, r.stats.p99, r.stats.max, r.stats.mean}) {
        std::cout << std::setw(9) << v << "  ";
    }
    std::cout << "\n"
              << std::setprecision(1) << "fps at p50  "
              << (r.stats.p50 > 0 ? 1000.0 / r.stats.p50 : 0.0) << "\n\nOutput\n";
    std::cout << std::defaultfloat << std::setprecision(6);
    printOutput(r.output, 1);
    for (const ControlFlowRun& f : r.controlFlow) {
        std::cout << (&f == &r.controlFlow.front() ? "\nControl flow " : "             ") << f.node
                  << " (" << f.kind << "): "
                  << (f.branch >= 0 ? std::string(f.branch == 0 ? "the true branch ran"
                                                                : "the false branch ran")
                                    : "its body ran " + std::to_string(f.iterations) +
                                          (f.iterations == 1 ? " time" : " times"))
                  << "\n";
    }
    if (const std::string nonFinite = nonFiniteSummary(r.output); !nonFinite.empty()) {
        std::cout << "\nNot finite  " << nonFinite << ": 'scriptscope-cli activations "
                  << o.positional[0] << "' finds the operator that made the first one\n";
    }
    if (r.profiled) {
        const double total = std::max(r.profile.operatorMs, 1e-9);
        std::cout << "\nProfile ("
                  << (r.profile.runs > 1 ? "the mean of " + std::to_string(r.profile.runs) + " runs"
                                         : std::string("one run"))
                  << ": " << std::fixed << std::setprecision(3) << r.profile.wallMs
                  << " ms, operators " << r.profile.operatorMs << " ms";
        if (r.device != "recorded" && r.stats.p50 > 0) {
            // What profiling costs: the profiled run's time against the timed runs' p50.
            std::cout << "; unprofiled p50 " << r.stats.p50 << " ms";
        }
        std::cout << ")\n"
                  << "  total ms   share  self ms   calls  module\n";
        for (const auto& m : r.profile.modules) {
            std::cout << std::setw(10) << m.totalMs << std::setw(7) << std::setprecision(1)
                      << 100.0 * m.totalMs / total << "%" << std::setw(9) << std::setprecision(3)
                      << m.selfMs << std::setw(8) << m.calls << "  "
                      << (m.path.empty() ? "(root)" : m.path) << "\n";
        }
        std::cout << "  total ms  self ms   calls  operator\n";
        for (size_t i = 0; i < std::min<size_t>(15, r.profile.operators.size()); ++i) {
            const auto& op = r.profile.operators[i];
            std::cout << std::setw(10) << op.totalMs << std::setw(9) << op.selfMs << std::setw(8)
                      << op.calls << "  " << op.name << "\n";
        }
        std::cout << std::defaultfloat << std::setprecision(6);
    }
    if (interpret) {
        printTask(task, o.scoreThreshold);
    }
    if (!o.render.empty()) {
        std::cout << "Rendered    " << o.render << "\n";
    }
    if (!o.run.saveOutputsPath.empty()) {
        std::cout << "Saved       " << o.run.saveOutputsPath << "\n";
    }
    return kExitOk;
}

} // namespace scriptscope::cli
