// libFuzzer: the matrix file parsers (JSON, NumPy .npy, OpenCV FileStorage XML/YAML).
#include <matrix_io.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)scriptscope::parseMatrixJson(text);
    (void)scriptscope::parseNpy(text);
    (void)scriptscope::parseOpenCvMatrix(text);
    return 0;
}
