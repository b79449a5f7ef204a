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
    // For each method, each instruction with one output that a node of the exported program made
    // (the last kernel a delegate runs, the kernel itself otherwise; quantize and dequantize
    // nodes aside): that node's names, newest first, from the edge program's node back through
    // from_node to the node of the first torch.export ("aten_relu_default_1", "relu_1"). Where
    // several instructions come from one node (a decomposed linear), the last has its names.
    std::map<std::string, std::map<int, std::vector<std::string>>> instructionOperators;
    // For each method, the modules of the model its nodes were called in (nn_module_stack), by
    // dotted path, with their Python classes ("torch.nn.modules.conv.Conv2d"); the model itself
    // ("") aside.
    std::map<std::string, std::map<std::string, std::string>> moduleTypes;
};

// NAME.etrecord beside NAME.pte; an error when there is none or it cannot be read.
Expected<EtRecord> readEtRecordBeside(const std::string& ptePath);
Expected<EtRecord> readEtRecord(const std::string& path);

} // namespace scriptscope
