// libFuzzer: image files into the pixels the warp operator and the run inputs take (Qt's decoders,
// and OpenCV's for what Qt does not read), through the GUI's loadImage.
#include <image_io.h>

#include <QCoreApplication>

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static int argc = 1;
    static char name[] = "fuzz_image";
    static char* argv[] = {name, nullptr};
    static QCoreApplication app(argc, argv); // plugin paths for Qt's image readers
    const int fd = memfd_create("fuzz-image", MFD_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    if (write(fd, data, size) == static_cast<ssize_t>(size)) {
        (void)scriptscope::loadImage(QStringLiteral("/proc/self/fd/%1").arg(fd));
    }
    close(fd);
    return 0;
}
