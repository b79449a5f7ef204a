// A .pt2's details for scriptscope-cli info (exported_details.cpp); the registry's row for
// torch.export archives names it.
#pragma once

#include "model.h"

namespace scriptscope::formats {

FileDetails exportedDetails(const ProbeResult& probe);

} // namespace scriptscope::formats
