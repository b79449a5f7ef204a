// The model formats' names and file patterns, in one place: every File dialog's filter, the CLI's
// help and the MIME package (packaging/scriptscope-mime.xml, checked against this by a test) read
// them from here. No LibTorch, no Qt.
#pragma once

#include <string>
#include <vector>

namespace scriptscope {

struct FileFormatPatterns {
    std::string name;                  // "TorchScript archives"
    std::string one;                   // "a TorchScript archive"
    std::vector<std::string> patterns; // "*.pt", ...
    std::string mimeType;              // "application/x-torchscript"
};

// TorchScript (torch.jit.save), torch.export (.pt2: programs and AOTInductor packages) and
// ExecuTorch (.pte), in that order, then what format libraries add (formats/added/).
const std::vector<FileFormatPatterns>& modelFileFormats();

// Adds a format after those: one a format library reads, in the process that loaded it or (the
// GUI) that its worker named. One of a name already listed is not added again. Called on the
// thread that reads the list.
void addModelFileFormat(const FileFormatPatterns& format);

// Every model format's patterns, space-separated: "*.pt *.pth *.ptl *.zip *.pt2 *.pte".
std::string modelFilePatterns();

// One format as a person reads it: "a TorchScript archive (*.pt *.pth *.ptl *.zip)".
std::string describe(const FileFormatPatterns& format);

// What a model file may be, for help texts and messages: "a TorchScript archive (*.pt ...), a
// torch.export program (*.pt2) or an ExecuTorch program (*.pte)".
std::string modelFileKinds();

// A file dialog's filter: "PyTorch models (...);;TorchScript archives (...);;...;;All files (*)".
std::string modelFileFilter();

} // namespace scriptscope
