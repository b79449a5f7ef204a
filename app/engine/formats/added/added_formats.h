// The formats that format libraries add (format_library.h): the libraries named in
// SCRIPTSCOPE_FORMAT_LIBRARIES, loaded once per process on first use, each reader kept with its
// library's path. No LibTorch.
#pragma once

#include "format_library.h"

#include <string>
#include <utility>
#include <vector>

namespace scriptscope {

struct AddedFormat {
    FormatReader reader;
    std::string library; // the path it was loaded from
};

// Every format the libraries add, in the order they are named; their patterns are added to
// modelFileFormats() as they are loaded.
const std::vector<AddedFormat>& addedFormats();

// The libraries named that were not loaded, each with why: missing, not a format library, built
// against another ScriptScope.
const std::vector<std::pair<std::string, std::string>>& refusedFormatLibraries();

// Asks the added formats about a file the probe found none of ScriptScope's own formats in. The
// first that claims it makes the probe FileKind::Added, with its name (ProbeResult::addedFormat)
// and a summary naming the library that reads it; with none, a library that was not loaded is
// noted with why.
void claimByAddedFormat(ProbeResult& probe);

// The added format a probe names; nullptr when it names none.
const AddedFormat* addedFormatOf(const ProbeResult& probe);

} // namespace scriptscope
