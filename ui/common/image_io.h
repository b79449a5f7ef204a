// Images in and out of the warp editor. Qt reads PNG, JPEG and BMP; OpenCV's codecs add TIFF (and
// the other formats it knows), so no Qt image-format plugin is needed.
#pragma once

#include <error.h>

#include <QImage>
#include <QString>

namespace scriptscope {

// The image as Format_RGBA8888, EXIF orientation applied; refused past 32768 pixels on a side
// (the operator's limit) or when it cannot be decoded, with the reason.
Expected<QImage> loadImage(const QString& path);
Status saveImage(const QImage& image, const QString& path);
// The filter for file dialogs.
QString imageFileFilter();

} // namespace scriptscope
