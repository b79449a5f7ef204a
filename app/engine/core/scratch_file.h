// A file of this process in the temporary folder (the worker's is its scratch folder, TMPDIR),
// named for what it holds and removed when the ScratchFile goes: a torch.save record copied out
// of an archive to be read, example inputs written for two models to run on.
#pragma once

#include "error.h"

#include <cstddef>
#include <string>

namespace scriptscope {

class ScratchFile {
public:
    // scriptscope-PURPOSE-PID-N.pt; nothing is created yet.
    explicit ScratchFile(const std::string& purpose);
    ~ScratchFile();
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;

    const std::string& path() const { return path_; }
    // The whole file; an error (kind File) names it.
    Status write(const char* data, size_t size);

private:
    std::string path_;
};

} // namespace scriptscope
