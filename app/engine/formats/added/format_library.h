// A format library: a shared library that adds a model format ScriptScope reads, and the one ABI
// between it and ScriptScope. Every process that opens models (the CLI's engine, the GUI's
// worker) loads each library named in SCRIPTSCOPE_FORMAT_LIBRARIES (paths separated by ':') once,
// before it probes its first file; the GUI learns the formats from its worker. A library's format
// is described, not run: its modules, parameters and buffers, and each method's code and graph
// text, shown in the tree, the code views, `info`, `tree`, `code` and `graph`, and offered by every
// File dialog.
//
// The library is built against these headers, of the same ScriptScope, and exports
//
//     extern "C" const scriptscope::FormatLibrary* scriptscope_format_library();
//
// ScriptScope refuses one built against other headers (FormatLibrary::abi and modelInfoSize), with
// the reason in the probe's notes. tests/format_library/toy_format.cpp is one.
#pragma once

#include <file_formats.h>
#include <model_info.h>

#include <cstddef>
#include <string>

namespace scriptscope {

struct FormatReader {
    // How dialogs, the start page and messages name it, its patterns and its MIME type.
    FileFormatPatterns patterns;
    // Whether the file at `path` is one of this format's, read from its content (not its name).
    // Asked only of files that no format ScriptScope has claims.
    bool (*claims)(const std::string& path) = nullptr;
    // Reads the file into `info`: its format's name (as a person says it, "Toy"), its modules in
    // pre-order (the root first) with their own parameters and buffers, and their methods with
    // code and graph text. ScriptScope counts the parameters and sums the totals. False, with
    // `error` saying why, when the file cannot be read.
    bool (*read)(const std::string& path, ModelInfo& info, std::string& error) = nullptr;
};

// Changes whenever FormatReader, FormatLibrary or what they carry changes in a way that a library
// built before would misread.
constexpr int kFormatLibraryAbi = 1;

struct FormatLibrary {
    int abi = kFormatLibraryAbi;
    size_t modelInfoSize = sizeof(ModelInfo); // as the library was built
    const FormatReader* readers = nullptr;
    size_t count = 0;
};

} // namespace scriptscope

// What a format library defines (the name ScriptScope looks up).
extern "C" const scriptscope::FormatLibrary* scriptscope_format_library();
