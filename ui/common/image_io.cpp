#include "image_io.h"

#include <QFileInfo>
#include <QImageReader>
#include <QImageWriter>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace scriptscope {
namespace {

constexpr int kMaxSide = 1 << 15;

Error fileError(const QString& message) {
    return Error{ErrorKind::File, message.toStdString()};
}

Expected<QImage> loadWithOpenCv(const QString& path) {
    cv::Mat image;
    try {
        image = cv::imread(QFile::encodeName(path).toStdString(), cv::IMREAD_COLOR);
    } catch (const cv::Exception& error) {
        return fileError(
            QStringLiteral("cannot read '%1': %2").arg(path, QString::fromUtf8(error.what())));
    }
    if (image.empty()) {
        return fileError(QStringLiteral("'%1' is not an image this program can read (PNG, JPEG, "
                                        "BMP, TIFF, ...)")
                             .arg(QFileInfo(path).fileName()));
    }
    if (image.cols > kMaxSide || image.rows > kMaxSide) {
        return fileError(QStringLiteral("'%1' is %2 x %3 pixels; at most %4 on a side is supported")
                             .arg(QFileInfo(path).fileName())
                             .arg(image.cols)
                             .arg(image.rows)
                             .arg(kMaxSide));
    }
    QImage out(image.cols, image.rows, QImage::Format_RGBA8888);
    cv::Mat target(image.rows, image.cols, CV_8UC4, out.bits(),
                   static_cast<size_t>(out.bytesPerLine()));
    cv::cvtColor(image, target, cv::COLOR_BGR2RGBA);
    return out;
}

} // namespace

Expected<QImage> loadImage(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists()) {
        return fileError(QStringLiteral("'%1' does not exist").arg(path));
    }
    if (!info.isFile() || !info.isReadable()) {
        return fileError(QStringLiteral("'%1' is not a readable file").arg(path));
    }
    QImageReader reader(path);
    reader.setAutoTransform(true);
    if (reader.canRead()) {
        const QSize size = reader.size();
        if (size.width() > kMaxSide || size.height() > kMaxSide) {
            return fileError(
                QStringLiteral("'%1' is %2 x %3 pixels; at most %4 on a side is supported")
                    .arg(info.fileName())
                    .arg(size.width())
                    .arg(size.height())
                    .arg(kMaxSide));
        }
        QImage image = reader.read();
        if (image.isNull()) {
            return fileError(
                QStringLiteral("cannot read '%1': %2").arg(info.fileName(), reader.errorString()));
        }
        return image.convertToFormat(QImage::Format_RGBA8888);
    }
    return loadWithOpenCv(path);
}

Status saveImage(const QImage& image, const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (QImageWriter::supportedImageFormats().contains(suffix.toLatin1())) {
        QImageWriter writer(path);
        if (!writer.write(image)) {
            return fileError(
                QStringLiteral("cannot write '%1': %2").arg(path, writer.errorString()));
        }
        return std::nullopt;
    }
    const QImage rgba = image.convertToFormat(QImage::Format_RGBA8888);
    const cv::Mat view(rgba.height(), rgba.width(), CV_8UC4, const_cast<uchar*>(rgba.constBits()),
                       static_cast<size_t>(rgba.bytesPerLine()));
    cv::Mat bgra;
    cv::cvtColor(view, bgra, cv::COLOR_RGBA2BGRA);
    try {
        if (cv::imwrite(QFile::encodeName(path).toStdString(), bgra)) {
            return std::nullopt;
        }
    } catch (const cv::Exception&) {
    }
    return fileError(QStringLiteral("cannot write '%1' (use .png, .jpg, .bmp or .tif)").arg(path));
}

QString imageFileFilter() {
    return QStringLiteral("Images (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp *.ppm *.pgm);;"
                          "All files (*)");
}

} // namespace scriptscope
