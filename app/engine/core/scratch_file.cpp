#include "scratch_file.h"

#include <atomic>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace scriptscope {

ScratchFile::ScratchFile(const std::string& purpose) {
    static std::atomic<int> count{0};
    std::error_code ignored;
    path_ = (std::filesystem::temp_directory_path(ignored) /
             ("scriptscope-" + purpose + "-" + std::to_string(::getpid()) + "-" +
              std::to_string(++count) + ".pt"))
                .string();
}

ScratchFile::~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
}

Status ScratchFile::write(const char* data, size_t size) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(data, static_cast<std::streamsize>(size));
    if (!out.flush()) {
        return Error{ErrorKind::File, "cannot write '" + path_ + "'"};
    }
    return std::nullopt;
}

} // namespace scriptscope
