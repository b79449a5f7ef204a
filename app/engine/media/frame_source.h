// Frames for a live demo: an image folder, a video file (OpenCV's FFmpeg backend) or a camera
// (V4L2). No LibTorch, no Qt. Files here are untrusted input to FFmpeg's and the image codecs'
// parsers: only the worker (sandboxed) and the CLI's isolated child open them, never the GUI.
#pragma once

#include "error.h"
#include "run_types.h"

#include <opencv2/core.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace scriptscope {

// "camera:N" (or "camera" for the first), a folder of images, or a video file.
Expected<SourceSpec> parseSourceSpec(const std::string& text);

struct Frame {
    cv::Mat bgr; // 8-bit, 3 channels
    int64_t index = 0;
    std::string name; // a folder's file name, "frame N" otherwise
};

class FrameSource {
public:
    static Expected<std::unique_ptr<FrameSource>> open(const SourceSpec& spec);
    virtual ~FrameSource() = default;

    const SourceInfo& info() const { return info_; }

    // The frame at index. A folder reads any index; a video reads forward and seeks when asked
    // for another one; a camera gives its newest frame whatever the index. An unreadable image
    // or a frame that does not decode is an error for that index only: the caller may go on.
    virtual Expected<Frame> read(int64_t index) = 0;
    // Past the last frame of a folder or a video (a camera never ends).
    virtual bool atEnd(int64_t index) const = 0;
    // Moves past count frames without decoding them where the format allows (newest frame wins:
    // frames that arrived while the model ran are dropped, not queued). Returns how many it
    // skipped.
    virtual int64_t skip(int64_t count) = 0;

protected:
    SourceInfo info_;
};

// Cameras that V4L2 lists (/sys/class/video4linux), with their names. Opens nothing.
std::vector<CameraInfo> listCameras();
// Why there is no camera to open, in words a person can act on.
std::string noCameraMessage();

// Which frame of a live stream is due: a video plays at its own rate, and a frame whose time has
// passed while the model ran is dropped.
class LivePacer {
public:
    void start(double fps, int64_t firstIndex);
    // The index due now (at least the next one after `last`).
    int64_t due(int64_t last) const;
    // How long to wait before `index` is due (0 when it is due or late).
    double waitMs(int64_t index) const;

private:
    std::chrono::steady_clock::time_point start_;
    double fps_ = 0;
    int64_t first_ = 0;
};

// Writes annotated frames: a video file (.mp4, .avi, .mkv; every frame at the source's rate) or a
// folder of PNGs. Frames of another size are scaled to the first one's for a video.
class FrameSink {
public:
    static Expected<std::unique_ptr<FrameSink>> open(const std::string& path, double fps);
    ~FrameSink();
    Status write(const cv::Mat& bgr, const std::string& name);
    Status close();
    int64_t written() const { return written_; }
    bool isVideo() const { return video_ != nullptr; }

private:
    struct Video;
    std::string path_;
    double fps_ = 0;
    std::unique_ptr<Video> video_;
    int64_t written_ = 0;
};

// True when the path names a video file by its extension (what --render OUT writes as a video).
bool isVideoPath(const std::string& path);

// The frame's pixels as a view the engine builds an image input from (no copy).
ImageFrame frameView(const cv::Mat& bgr);

} // namespace scriptscope
