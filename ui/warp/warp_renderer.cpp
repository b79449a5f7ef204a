#include "warp_renderer.h"

#include <QElapsedTimer>
#include <QMetaObject>

#include <exception>

namespace scriptscope {

WarpResult renderWarp(const WarpJob& job) {
    WarpResult result;
    result.id = job.id;
    result.origin = job.origin;
    result.pixelSize = job.pixelSize;
    result.fullResolution = job.fullResolution;
    QElapsedTimer clock;
    clock.start();
    if (job.source.isNull() || job.size.isEmpty()) {
        result.error = QStringLiteral("nothing to warp");
        return result;
    }
    QImage image(job.size, QImage::Format_RGBA8888);
    if (image.isNull()) {
        result.error = QStringLiteral("not enough memory for a %1 x %2 image")
                           .arg(job.size.width())
                           .arg(job.size.height());
        return result;
    }
    const QImage& source = job.source;
    my_ops::ImageView in{source.constBits(), source.width(), source.height(), 4,
                         static_cast<std::ptrdiff_t>(source.bytesPerLine())};
    my_ops::MutableImageView out{image.bits(), image.width(), image.height(), 4,
                                 static_cast<std::ptrdiff_t>(image.bytesPerLine())};
    try {
        my_ops::warp_image(in, out, job.matrix, job.options);
        result.image = std::move(image);
    } catch (const std::exception& error) {
        // c10::Error's what() carries a C++ backtrace after the first line.
        result.error = QString::fromUtf8(error.what()).section(QLatin1Char('\n'), 0, 0);
    }
    result.milliseconds = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    return result;
}

WarpRenderer::WarpRenderer(QObject* parent)
    : QObject(parent) {
    qRegisterMetaType<WarpResult>();
    thread_.setObjectName(QStringLiteral("warp renderer"));
    worker_ = new QObject;
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_.start();
}

WarpRenderer::~WarpRenderer() {
    thread_.quit();
    thread_.wait();
}

void WarpRenderer::request(WarpJob job) {
    QMutexLocker lock(&mutex_);
    pending_ = std::move(job);
    if (!scheduled_) {
        scheduled_ = true;
        QMetaObject::invokeMethod(
            worker_, [this]() { process(); }, Qt::QueuedConnection);
    }
}

void WarpRenderer::process() {
    std::optional<WarpJob> job;
    {
        QMutexLocker lock(&mutex_);
        job.swap(pending_);
        scheduled_ = false;
    }
    if (!job) {
        return;
    }
    // Emitted from the renderer's thread: a queued connection hands it to the GUI thread.
    Q_EMIT rendered(renderWarp(*job));
}

} // namespace scriptscope
