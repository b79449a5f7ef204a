// Probing: what a file is, read with the project's own zip and pickle readers without executing
// anything and without LibTorch (the engine gives what only LibTorch knows).
#pragma once

#include "error.h"
#include "model_info.h"

#include <cstdint>
#include <functional>
#include <string>

namespace scriptscope {

// What the probe asks of the LibTorch beside it.
struct ProbeEnvironment {
    int64_t maxSupportedVersion = 0; // the newest serialization version it reads
    std::function<bool(const std::string&)> isRegistered; // "ns::name" has an implementation
};

ProbeResult probeArchive(const std::string& path, const ProbeEnvironment& environment);

// Why no format opens a file the probe found to be `probe.kind`: it is missing (ErrorKind::File),
// or it is something else (ErrorKind::Format), the probe's summary saying what and what to do.
Error unopenedError(const ProbeResult& probe);

} // namespace scriptscope
