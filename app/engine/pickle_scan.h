// Walks a pickle's opcodes without executing them, to name the classes it refers to. This is how
// the probe tells a state_dict from a pickled eager model without unpickling anything.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace scriptscope {

struct PickleScan {
    bool complete = false;            // reached STOP
    std::string error;                // why the walk stopped early
    std::vector<std::string> globals; // "module.name", in order of first appearance
};

PickleScan scanPickle(std::string_view data);

} // namespace scriptscope
