// ExecuTorch's ETRecord (what to_edge_transform_and_lower(..., generate_etrecord=True) saves): a
// zip whose debug_handle_map says which debug handles each instruction of a method carries, and
// whose edge dialect program gives each handle's node and the module it was called in
// (nn_module_stack). Read without ExecuTorch or LibTorch, bounded: what groups a .pte's profile
// by the modules of the model it was exported from.
#pragma once

#include <error.h>

#include <map>
#include <string>
#include <vector>

namespace scriptscope {

struct EtRecord {
    // For each method, each instruction id (as an ETDump names it): the modules (dotted paths,
    // "" for the model itself) of the nodes its debug handles name.
    std::map<std::string, std::map<int, std::vector<std::string>>> instructionModules;
    // The module each instruction ran in: the deepest module all of its nodes share ("conv1" for
    // a convolution, "" for a delegate that swallowed conv1 and conv2).
    std::string moduleOf(const std::string& method, int instruction) const;
};

// NAME.etrecord beside NAME.pte; an error when there is none or it cannot be read.
Expected<EtRecord> readEtRecordBeside(const std::string& ptePath);
Expected<EtRecord> readEtRecord(const std::string& path);

} // namespace scriptscope
