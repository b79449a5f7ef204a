#include "file_formats.h"

#include <algorithm>

namespace scriptscope {

namespace {

std::vector<FileFormatPatterns>& formatList() {
    static std::vector<FileFormatPatterns> formats = {
        {"TorchScript archives",
         "a TorchScript archive",
         {"*.pt", "*.pth", "*.ptl", "*.zip"},
         "application/x-torchscript"},
        {"torch.export programs",
         "a torch.export program",
         {"*.pt2"},
         "application/x-pytorch-exported-program"},
        {"ExecuTorch programs",
         "an ExecuTorch program",
         {"*.pte"},
         "application/x-executorch-program"},
    };
    return formats;
}

std::string joined(const std::vector<std::string>& patterns) {
    std::string text;
    for (const std::string& pattern : patterns) {
        text += (text.empty() ? "" : " ") + pattern;
    }
    return text;
}

} // namespace

const std::vector<FileFormatPatterns>& modelFileFormats() {
    return formatList();
}

void addModelFileFormat(const FileFormatPatterns& format) {
    std::vector<FileFormatPatterns>& formats = formatList();
    if (std::none_of(formats.begin(), formats.end(),
                     [&format](const FileFormatPatterns& f) { return f.name == format.name; })) {
        formats.push_back(format);
    }
}

std::string modelFilePatterns() {
    std::vector<std::string> all;
    for (const FileFormatPatterns& format : modelFileFormats()) {
        all.insert(all.end(), format.patterns.begin(), format.patterns.end());
    }
    return joined(all);
}

std::string describe(const FileFormatPatterns& format) {
    return format.one + " (" + joined(format.patterns) + ")";
}

std::string modelFileKinds() {
    const auto& formats = modelFileFormats();
    std::string text;
    for (size_t i = 0; i < formats.size(); ++i) {
        if (i > 0) {
            text.append(i + 1 == formats.size() ? " or " : ", ");
        }
        text.append(describe(formats[i]));
    }
    return text;
}

std::string modelFileFilter() {
    std::string filter = "PyTorch models (" + modelFilePatterns() + ")";
    for (const FileFormatPatterns& format : modelFileFormats()) {
        filter += ";;" + format.name + " (" + joined(format.patterns) + ")";
    }
    return filter + ";;All files (*)";
}

} // namespace scriptscope
