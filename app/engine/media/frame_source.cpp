#include "frame_source.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace scriptscope {

namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

std::string extension(const std::string& path) {
    return lower(fs::path(path).extension().string());
}

bool isImagePath(const std::string& path) {
    static const char* kExtensions[] = {".png",  ".jpg", ".jpeg", ".bmp", ".tif", ".tiff",
                                        ".webp", ".pgm", ".ppm",  ".pnm", ".jp2", ".exr"};
    const std::string ext = extension(path);
    return std::any_of(std::begin(kExtensions), std::end(kExtensions),
                       [&](const char* e) { return ext == e; });
}

// "img2.png" before "img10.png": runs of digits compare as numbers.
bool naturalLess(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) &&
            std::isdigit(static_cast<unsigned char>(b[j]))) {
            size_t ei = i, ej = j;
            while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) {
                ++ei;
            }
            while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) {
                ++ej;
            }
            std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
            na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
            nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
            if (na.size() != nb.size()) {
                return na.size() < nb.size();
            }
            if (na != nb) {
                return na < nb;
            }
            i = ei;
            j = ej;
            continue;
        }
        const char ca = static_cast<char>(std::tolower(static_cast<unsigned char>(a[i])));
        const char cb = static_cast<char>(std::tolower(static_cast<unsigned char>(b[j])));
        if (ca != cb) {
            return ca < cb;
        }
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

std::string fpsText(double fps) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", std::round(fps * 100) / 100);
    return buffer;
}

// Makes whatever a decoder gave (grey, BGRA, 16-bit) the 8-bit BGR the engine and the drawing
// take.
cv::Mat toBgr8(const cv::Mat& image) {
    cv::Mat out = image;
    if (out.depth() != CV_8U) {
        double scale = 1.0;
        if (out.depth() == CV_16U) {
            scale = 1.0 / 257;
        } else if (out.depth() == CV_32F || out.depth() == CV_64F) {
            scale = 255.0;
        }
        out.convertTo(out, CV_8U, scale);
    }
    if (out.channels() == 1) {
        cv::cvtColor(out, out, cv::COLOR_GRAY2BGR);
    } else if (out.channels() == 4) {
        cv::cvtColor(out, out, cv::COLOR_BGRA2BGR);
    }
    return out;
}

class FolderSource final : public FrameSource {
public:
    explicit FolderSource(const SourceSpec& spec) {
        info_.kind = spec.kind;
        info_.path = spec.path;
        std::error_code ec;
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(spec.path, ec)) {
            const std::string name = entry.path().filename().string();
            if (!entry.is_regular_file(ec)) {
                continue;
            }
            if (isImagePath(name)) {
                names.push_back(name);
            } else if (name.empty() || name[0] != '.') {
                info_.notes.push_back(name + ": not an image (by its extension), left out");
            }
        }
        std::sort(names.begin(), names.end(), naturalLess);
        for (const auto& name : names) {
            info_.files.push_back((fs::path(spec.path) / name).string());
        }
        info_.frames = static_cast<int64_t>(info_.files.size());
        info_.description = fs::path(spec.path).filename().string() + ": " +
                            std::to_string(info_.frames) +
                            (info_.frames == 1 ? " image" : " images");
    }

    Expected<Frame> read(int64_t index) override {
        if (index < 0 || index >= info_.frames) {
            return Error{ErrorKind::Input,
                         "no image " + std::to_string(index + 1) + " in " + info_.path};
        }
        const std::string& path = info_.files[static_cast<size_t>(index)];
        Frame frame;
        frame.index = index;
        frame.name = fs::path(path).filename().string();
        try {
            frame.bgr = cv::imread(path, cv::IMREAD_COLOR);
        } catch (const cv::Exception& error) {
            return Error{ErrorKind::File, frame.name + ": cannot decode it: " + error.err};
        }
        if (frame.bgr.empty()) {
            return Error{ErrorKind::File, frame.name +
                                              ": cannot read it (unreadable, or not an image its "
                                              "extension says)"};
        }
        if (info_.width == 0) {
            info_.width = frame.bgr.cols;
            info_.height = frame.bgr.rows;
        }
        return frame;
    }

    bool atEnd(int64_t index) const override { return index >= info_.frames; }

    int64_t skip(int64_t count) override { return count; }
};

class CaptureSource final : public FrameSource {
public:
    static Expected<std::unique_ptr<FrameSource>> open(const SourceSpec& spec) {
        auto source = std::unique_ptr<CaptureSource>(new CaptureSource);
        SourceInfo& info = source->info_;
        info.kind = spec.kind;
        info.path = spec.path;
        try {
            if (spec.kind == SourceSpec::Kind::Camera) {
                if (!source->capture_.open(spec.camera, cv::CAP_V4L2)) {
                    return Error{ErrorKind::File,
                                 "cannot open camera " + std::to_string(spec.camera) + " (" +
                                     (spec.path.empty() ? "/dev/video" + std::to_string(spec.camera)
                                                        : spec.path) +
                                     "): " + noCameraMessage()};
                }
                // The newest frame wins: the driver keeps one, not a queue of old ones.
                source->capture_.set(cv::CAP_PROP_BUFFERSIZE, 1);
            } else if (!source->capture_.open(spec.path, cv::CAP_FFMPEG)) {
                std::error_code ec;
                if (!fs::exists(spec.path, ec)) {
                    return Error{ErrorKind::File, "no such video file: " + spec.path};
                }
                return Error{ErrorKind::Format,
                             "cannot open the video '" + spec.path +
                                 "': FFmpeg does not read it (a damaged file, or not a video)"};
            }
        } catch (const cv::Exception& error) {
            return Error{ErrorKind::Format, "cannot open '" + spec.path + "': " + error.err};
        }
        cv::VideoCapture& c = source->capture_;
        info.fps = c.get(cv::CAP_PROP_FPS);
        if (!(info.fps > 0 && info.fps < 1000)) {
            info.fps = spec.kind == SourceSpec::Kind::Camera ? 30 : 25;
            info.notes.push_back("no frame rate given: played at " + fpsText(info.fps) + " fps");
        }
        info.width = static_cast<int>(c.get(cv::CAP_PROP_FRAME_WIDTH));
        info.height = static_cast<int>(c.get(cv::CAP_PROP_FRAME_HEIGHT));
        const double count = c.get(cv::CAP_PROP_FRAME_COUNT);
        info.frames = spec.kind == SourceSpec::Kind::Camera || !(count > 0)
                          ? -1
                          : static_cast<int64_t>(std::llround(count));
        const std::string name = spec.kind == SourceSpec::Kind::Camera
                                     ? "camera " + std::to_string(spec.camera)
                                     : fs::path(spec.path).filename().string();
        info.description = name + ": " +
                           (info.frames >= 0 ? std::to_string(info.frames) + " frames, " : "") +
                           std::to_string(info.width) + "x" + std::to_string(info.height) + " at " +
                           fpsText(info.fps) + " fps (" + c.getBackendName() + ")";
        return std::unique_ptr<FrameSource>(std::move(source));
    }

    Expected<Frame> read(int64_t index) override {
        const bool camera = info_.kind == SourceSpec::Kind::Camera;
        try {
            if (!camera && index != next_) {
                if (index > next_ && index - next_ < 64) {
                    skip(index - next_);
                } else {
                    capture_.set(cv::CAP_PROP_POS_FRAMES, static_cast<double>(index));
                    next_ = index;
                }
            }
            Frame frame;
            frame.index = camera ? next_ : index;
            frame.name = "frame " + std::to_string(frame.index + 1);
            cv::Mat image;
            const bool ok = capture_.read(image);
            ++next_;
            if (!ok || image.empty()) {
                if (!camera && (info_.frames < 0 || index >= info_.frames - 1)) {
                    ended_ = true;
                    if (info_.frames < 0 || index >= info_.frames) {
                        info_.frames = index;
                    }
                }
                return Error{ErrorKind::Format, camera
                                                    ? "the camera gave no frame"
                                                    : frame.name + " of " +
                                                          fs::path(info_.path).filename().string() +
                                                          " does not decode"};
            }
            frame.bgr = toBgr8(image);
            return frame;
        } catch (const cv::Exception& error) {
            ++next_;
            return Error{ErrorKind::Format,
                         "cannot decode frame " + std::to_string(index + 1) + ": " + error.err};
        }
    }

    bool atEnd(int64_t index) const override {
        return info_.kind != SourceSpec::Kind::Camera &&
               (ended_ ? index >= info_.frames : (info_.frames >= 0 && index >= info_.frames));
    }

    int64_t skip(int64_t count) override {
        int64_t skipped = 0;
        try {
            while (skipped < count && capture_.grab()) {
                ++skipped;
                ++next_;
            }
        } catch (const cv::Exception&) {
        }
        return skipped;
    }

private:
    cv::VideoCapture capture_;
    int64_t next_ = 0;
    bool ended_ = false;
};

} // namespace

Expected<SourceSpec> parseSourceSpec(const std::string& text) {
    SourceSpec spec;
    if (text == "camera" || text.rfind("camera:", 0) == 0) {
        spec.kind = SourceSpec::Kind::Camera;
        const std::string number = text.size() > 7 ? text.substr(7) : "0";
        if (number.empty() || !std::all_of(number.begin(), number.end(),
                                           [](unsigned char c) { return std::isdigit(c); })) {
            return Error{ErrorKind::Input, "a camera is camera:N (N from 0), not '" + text + "'"};
        }
        spec.camera = std::stoi(number);
        spec.path = "/dev/video" + number;
        return spec;
    }
    std::error_code ec;
    if (fs::is_directory(text, ec)) {
        spec.kind = SourceSpec::Kind::Folder;
    } else if (fs::exists(text, ec)) {
        spec.kind = SourceSpec::Kind::Video;
    } else {
        return Error{ErrorKind::File, "no such file or folder: " + text};
    }
    spec.path = text;
    return spec;
}

Expected<std::unique_ptr<FrameSource>> FrameSource::open(const SourceSpec& spec) {
    if (spec.kind == SourceSpec::Kind::Folder) {
        std::error_code ec;
        if (!fs::is_directory(spec.path, ec)) {
            return Error{ErrorKind::File, "no such folder: " + spec.path};
        }
        auto source = std::make_unique<FolderSource>(spec);
        if (source->info().frames == 0) {
            return Error{ErrorKind::Input,
                         "no images in " + spec.path + " (PNG, JPEG, BMP, TIFF, WebP, PNM)"};
        }
        return std::unique_ptr<FrameSource>(std::move(source));
    }
    if (spec.kind == SourceSpec::Kind::Camera && listCameras().empty()) {
        return Error{ErrorKind::File, noCameraMessage()};
    }
    return CaptureSource::open(spec);
}

std::vector<CameraInfo> listCameras() {
    std::vector<CameraInfo> cameras;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/sys/class/video4linux", ec)) {
        const std::string node = entry.path().filename().string();
        if (node.rfind("video", 0) != 0) {
            continue;
        }
        CameraInfo camera;
        try {
            camera.index = std::stoi(node.substr(5));
        } catch (const std::exception&) {
            continue;
        }
        camera.device = "/dev/" + node;
        std::ifstream name(entry.path() / "name");
        std::getline(name, camera.name);
        // A capture device's first node has index 0; metadata nodes of the same camera have
        // other indexes.
        std::ifstream indexFile(entry.path() / "index");
        int nodeIndex = 0;
        if (indexFile >> nodeIndex && nodeIndex != 0) {
            continue;
        }
        cameras.push_back(camera);
    }
    std::sort(cameras.begin(), cameras.end(),
              [](const CameraInfo& a, const CameraInfo& b) { return a.index < b.index; });
    return cameras;
}

std::string noCameraMessage() {
    std::error_code ec;
    if (!fs::exists("/sys/class/video4linux", ec)) {
        return "no camera: this machine has no V4L2 video devices (/dev/video*). Connect a camera, "
               "or play a video file or an image folder instead";
    }
    return "no camera could be opened: check that one is connected, that no other program holds "
           "it, and that you may read /dev/video* (the 'video' group)";
}

void LivePacer::start(double fps, int64_t firstIndex) {
    start_ = std::chrono::steady_clock::now();
    fps_ = fps;
    first_ = firstIndex;
}

int64_t LivePacer::due(int64_t last) const {
    if (fps_ <= 0) {
        return last + 1;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const auto byClock = first_ + static_cast<int64_t>(std::floor(elapsed * fps_));
    return std::max(last + 1, byClock);
}

double LivePacer::waitMs(int64_t index) const {
    if (fps_ <= 0) {
        return 0;
    }
    const double at = static_cast<double>(index - first_) / fps_;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return std::max(0.0, (at - elapsed) * 1000);
}

struct FrameSink::Video {
    cv::VideoWriter writer;
    cv::Size size;
};

bool isVideoPath(const std::string& path) {
    const std::string ext = extension(path);
    return ext == ".mp4" || ext == ".avi" || ext == ".mkv" || ext == ".mov" || ext == ".m4v";
}

Expected<std::unique_ptr<FrameSink>> FrameSink::open(const std::string& path, double fps) {
    auto sink = std::unique_ptr<FrameSink>(new FrameSink);
    sink->path_ = path;
    sink->fps_ = fps > 0 ? fps : 10;
    if (isVideoPath(path)) {
        sink->video_ = std::make_unique<Video>(); // opened at the first frame, at its size
        return sink;
    }
    std::error_code ec;
    fs::create_directories(path, ec);
    if (!fs::is_directory(path, ec)) {
        return Error{ErrorKind::File,
                     "cannot make the folder " + path + (ec ? ": " + ec.message() : std::string())};
    }
    return sink;
}

FrameSink::~FrameSink() {
    close();
}

Status FrameSink::write(const cv::Mat& bgr, const std::string& name) {
    try {
        if (video_) {
            if (!video_->writer.isOpened()) {
                const std::string ext = extension(path_);
                const int fourcc = ext == ".avi" ? cv::VideoWriter::fourcc('M', 'J', 'P', 'G')
                                                 : cv::VideoWriter::fourcc('m', 'p', '4', 'v');
                video_->size = bgr.size();
                if (!video_->writer.open(path_, cv::CAP_FFMPEG, fourcc, fps_, video_->size)) {
                    return Error{ErrorKind::File, "cannot write the video " + path_ +
                                                      " (the folder, or FFmpeg's encoder)"};
                }
            }
            if (bgr.size() == video_->size) {
                video_->writer.write(bgr);
            } else {
                cv::Mat scaled;
                cv::resize(bgr, scaled, video_->size, 0, 0, cv::INTER_AREA);
                video_->writer.write(scaled);
            }
        } else {
            std::string stem = fs::path(name).stem().string();
            if (stem.empty()) {
                char buffer[32];
                std::snprintf(buffer, sizeof buffer, "frame_%06lld",
                              static_cast<long long>(written_ + 1));
                stem = buffer;
            }
            const std::string file = (fs::path(path_) / (stem + ".png")).string();
            if (!cv::imwrite(file, bgr)) {
                return Error{ErrorKind::File, "cannot write " + file};
            }
        }
    } catch (const cv::Exception& error) {
        return Error{ErrorKind::File, "cannot write to " + path_ + ": " + error.err};
    }
    ++written_;
    return std::nullopt;
}

Status FrameSink::close() {
    if (video_ && video_->writer.isOpened()) {
        video_->writer.release();
    }
    return std::nullopt;
}

ImageFrame frameView(const cv::Mat& bgr) {
    ImageFrame frame;
    frame.data = bgr.data;
    frame.width = bgr.cols;
    frame.height = bgr.rows;
    frame.step = bgr.step;
    return frame;
}

} // namespace scriptscope
