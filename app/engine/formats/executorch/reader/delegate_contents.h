// What the views show inside a .pte's delegate, for the backends whose blobs ScriptScope reads
// (XNNPACK, xnnpack_graph.h): its constants as the delegate's parameters (counted in the totals),
// its nodes by kind, and its graph as text. Other backends show what they are and their size.
#pragma once

#include "pte_reader.h"

#include <model_info.h>

#include <string>
#include <vector>

namespace scriptscope {

struct DelegateContents {
    bool read = false; // the blob was read (its backend's, and whole)
    std::vector<TensorInfo> constants;
    std::vector<AttributeInfo> attributes;
    std::string graphText; // its values and nodes, one a line, indented
    std::string problem;   // why a blob of a known backend could not be read
};

// The contents of `delegate`'s blob in the file at `path`; nothing read for other backends.
DelegateContents delegateContents(const std::string& path, const PteDelegate& delegate);

} // namespace scriptscope
