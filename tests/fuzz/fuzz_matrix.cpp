// libFuzzer: the project's own matrix file parsers (JSON, NumPy .npy). OpenCV FileStorage files
// are parsed by OpenCV, which crashes on some inputs: the project reads them in a child process
// (tests/test_matrix_io covers that with the inputs fuzzing found).
#include <matrix_io.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)scriptscope::parseMatrixJson(text);
    (void)scriptscope::parseNpy(text);
    return 0;
}
