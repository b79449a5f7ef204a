// Frames for a live demo in the Run workspace: an image folder (previous, next, play at an
// interval), a video file or a camera (play: the newest frame wins, frames that came while the
// model ran are dropped and counted), and recording what is drawn to a video. The frames are
// decoded in the worker (they are untrusted input to FFmpeg and the image codecs); each comes back
// with the model's run on it, and the Run workspace draws it.
#pragma once

#include <run_types.h>

#include <opencv2/core/mat.hpp>

#include <QElapsedTimer>
#include <QGroupBox>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTimer;

namespace scriptscope {

class FrameSink;
class WorkerClient;

class FramePlayer : public QGroupBox {
    Q_OBJECT

public:
    // Builds the run request from the workspace's settings, or says why it cannot.
    using RequestBuilder = std::function<std::optional<RunRequest>(QString* why)>;
    FramePlayer(WorkerClient* worker, RequestBuilder build, QWidget* parent = nullptr);
    ~FramePlayer() override;

    // An image folder, a video file or "camera:N"; opened in the worker, then the first frame
    // is run.
    void openSource(const QString& source);
    void closeSource();
    bool active() const { return !source_.isEmpty(); }
    QString source() const { return source_; }
    const SourceInfo& info() const { return info_; }
    // The bundled demo video, offered in the list.
    void setDemoVideo(const QString& path);

    void step(int delta); // the previous or next frame
    void showFrame(qint64 index);
    void setPlaying(bool on);
    bool playing() const { return playing_; }
    // A source being opened or a frame being run in the worker.
    bool busy() const { return openRequest_ != 0 || frameRequest_ != 0; }
    void setInterval(int milliseconds); // between a folder's images when playing

    // Writes every frame drawn from now on (record()) to a video file.
    bool startRecording(const QString& path, QString* why);
    void stopRecording();
    bool recording() const { return sink_ != nullptr; }
    // The annotated frame as shown; written when recording (repeated for frames dropped before
    // it, so that the video keeps the stream's timing).
    void record(const cv::Mat& bgr, qint64 dropped);
    qint64 recordedFrames() const { return recorded_; }

    qint64 currentIndex() const { return index_; }
    qint64 framesShown() const { return shown_; }
    qint64 droppedFrames() const { return dropped_; }
    qint64 frameErrors() const { return errors_; }
    double shownFps() const;
    QString statusText() const;

    QComboBox* sourceBox() const { return sourceBox_; }
    QPushButton* playButton() const { return play_; }
    QPushButton* recordButton() const { return record_; }

Q_SIGNALS:
    void frameShown(const scriptscope::FrameResult& frame);
    void problem(const QString& message);
    void sourceChanged();
    void playingChanged(bool playing);

private:
    void requestFrame(qint64 index, bool live, bool restart);
    void onFrame(quint64 id, const FrameResult& frame);
    void onSourceChosen(int row);
    void fillSources();
    void updateStatus();
    void updateButtons();

    WorkerClient* worker_;
    RequestBuilder build_;
    QString source_;
    QString demoVideo_;
    SourceInfo info_;
    quint64 openRequest_ = 0;
    quint64 frameRequest_ = 0;
    bool playing_ = false;
    bool restartClock_ = false;
    qint64 index_ = -1;
    qint64 shown_ = 0;
    qint64 dropped_ = 0;
    qint64 errors_ = 0;
    qint64 recorded_ = 0;
    QString lastError_;
    QElapsedTimer clock_;
    std::deque<qint64> shownAt_; // when recent frames were shown (ms on clock_), for the fps
    std::unique_ptr<FrameSink> sink_;
    cv::Mat lastRecorded_; // held for the frames dropped after it when the stream ends
    QString recordPath_;

    QComboBox* sourceBox_ = nullptr;
    QLabel* description_ = nullptr;
    QPushButton* previous_ = nullptr;
    QPushButton* play_ = nullptr;
    QPushButton* next_ = nullptr;
    QPushButton* record_ = nullptr;
    QSpinBox* interval_ = nullptr;
    QLabel* status_ = nullptr;
    QTimer* folderTimer_ = nullptr;
};

// The run request with its first image input taking the source's frames (image:-), or why not.
std::optional<RunRequest> frameRequest(const RunRequest& request, QString* why);

} // namespace scriptscope
