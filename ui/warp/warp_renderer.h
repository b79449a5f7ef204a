// Runs my_ops::warp_perspective for the warp editor on a thread of its own. A newer request
// replaces one that has not started, so a drag never queues warps behind the mouse.
#pragma once

#include <homography.h>
#include <warp_image.h>

#include <QImage>
#include <QMutex>
#include <QObject>
#include <QPointF>
#include <QThread>

#include <optional>

namespace scriptscope {

struct WarpJob {
    quint64 id = 0;
    QImage source;       // Format_RGBA8888 (shared, not copied)
    Homography matrix{}; // maps source pixels to the pixels of the result
    QSize size;          // of the result
    // Where the result goes on the output canvas: the centre of its pixel (0,0) in output
    // coordinates, and the output pixels per result pixel (1 at full resolution).
    QPointF origin;
    double pixelSize = 1;
    my_ops::WarpOptions options;
    bool fullResolution = false;
};

struct WarpResult {
    quint64 id = 0;
    QImage image;
    QPointF origin;
    double pixelSize = 1;
    bool fullResolution = false;
    QString error; // the operator's message when it refused
    double milliseconds = 0;
};

// The warp itself, for callers that want it synchronously (export, tests, benchmarks).
WarpResult renderWarp(const WarpJob& job);

class WarpRenderer : public QObject {
    Q_OBJECT

public:
    explicit WarpRenderer(QObject* parent = nullptr);
    ~WarpRenderer() override;

    // Thread-safe; replaces a job that has not started.
    void request(WarpJob job);

Q_SIGNALS:
    void rendered(const scriptscope::WarpResult& result);

private:
    void process();

    QThread thread_;
    QObject* worker_ = nullptr; // lives in thread_
    QMutex mutex_;
    std::optional<WarpJob> pending_;
    bool scheduled_ = false;
};

} // namespace scriptscope

Q_DECLARE_METATYPE(scriptscope::WarpResult)
