#include "added_formats.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <sstream>

namespace scriptscope {

namespace {

struct Loaded {
    std::vector<AddedFormat> formats;
    std::vector<std::pair<std::string, std::string>> refused;
};

// Why the library at `path` adds no format; empty when its readers were taken into `loaded`.
std::string load(const std::string& path, Loaded& loaded) {
    // Its own symbols stay its own (RTLD_LOCAL): two format libraries may both define a helper.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        return why ? why : "it cannot be loaded";
    }
    using Entry = const FormatLibrary* (*)();
    const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "scriptscope_format_library"));
    if (!entry) {
        return "it defines no scriptscope_format_library(): it is not a format library "
               "(format_library.h)";
    }
    const FormatLibrary* library = entry();
    if (!library || library->abi != kFormatLibraryAbi ||
        library->modelInfoSize != sizeof(ModelInfo)) {
        return "it was built against the headers of another ScriptScope (format library ABI " +
               std::to_string(library ? library->abi : 0) + ", this ScriptScope's is " +
               std::to_string(kFormatLibraryAbi) + "): build it again against these";
    }
    size_t taken = 0;
    for (size_t i = 0; i < library->count; ++i) {
        const FormatReader& reader = library->readers[i];
        if (reader.claims && reader.read && !reader.patterns.name.empty()) {
            loaded.formats.push_back({reader, path});
            ++taken;
        }
    }
    return taken ? std::string() : "it names no format with both a claims() and a read()";
}

const Loaded& loaded() {
    static Loaded formats;
    static std::once_flag once;
    std::call_once(once, [] {
        const char* named = std::getenv("SCRIPTSCOPE_FORMAT_LIBRARIES");
        std::istringstream paths(named ? named : "");
        for (std::string path; std::getline(paths, path, ':');) {
            if (path.empty()) {
                continue;
            }
            if (const std::string why = load(path, formats); !why.empty()) {
                formats.refused.emplace_back(path, why);
            }
        }
        for (const AddedFormat& format : formats.formats) {
            addModelFileFormat(format.reader.patterns);
        }
    });
    return formats;
}

// Kinds an added format is asked about: what no format of ScriptScope's own opens, and that is a
// file there to read (not missing, empty or cut off).
bool askable(FileKind kind) {
    switch (kind) {
    case FileKind::TorchSaveZip:
    case FileKind::LegacyTorchSave:
    case FileKind::MobileFlatbuffer:
    case FileKind::Onnx:
    case FileKind::PreviewTorchScript:
    case FileKind::Zip:
    case FileKind::Text:
    case FileKind::Unknown:
        return true;
    default:
        return false;
    }
}

} // namespace

const std::vector<AddedFormat>& addedFormats() {
    return loaded().formats;
}

const std::vector<std::pair<std::string, std::string>>& refusedFormatLibraries() {
    return loaded().refused;
}

void claimByAddedFormat(ProbeResult& probe) {
    if (!askable(probe.kind)) {
        return;
    }
    for (const AddedFormat& format : addedFormats()) {
        bool claimed = false;
        try { // the library's code: what it throws is its refusal, not this process's end
            claimed = format.reader.claims(probe.path);
        } catch (...) {
            probe.notes.push_back(format.library + " threw on being asked whether it reads this");
        }
        if (claimed) {
            probe.kind = FileKind::Added;
            probe.addedFormat = format.reader.patterns.name;
            probe.summary =
                format.reader.patterns.one + ", read by the format library " + format.library + ".";
            return;
        }
    }
    for (const auto& [library, why] : refusedFormatLibraries()) {
        probe.notes.push_back("SCRIPTSCOPE_FORMAT_LIBRARIES names " + library +
                              ", which was not loaded: " + why + ".");
    }
}

const AddedFormat* addedFormatOf(const ProbeResult& probe) {
    if (probe.kind != FileKind::Added) {
        return nullptr;
    }
    for (const AddedFormat& format : addedFormats()) {
        if (format.reader.patterns.name == probe.addedFormat) {
            return &format;
        }
    }
    return nullptr;
}

} // namespace scriptscope
