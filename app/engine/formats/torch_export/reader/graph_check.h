// What an exported program's graph must be before anything of it runs, checked without LibTorch
// (and fuzzed with the archive readers): every value a node reads is defined before it, by a
// placeholder or an earlier node (so a cycle is refused); no value is defined twice; every graph a
// node calls was read (a nesting bomb of torch.cond stops at the reader's depth); the signature
// names one entry per placeholder and per output; the graph is not larger than a run takes.
#pragma once

#include <error.h>
#include <pt2_reader.h>

namespace scriptscope {

// Most nodes a graph (with its subgraphs) may have to be run.
constexpr size_t kMaxRunNodes = 1'000'000;

// The program's graph (its subgraphs too); the error says which node and which value.
Status checkExportedGraph(const Pt2Model& model);

} // namespace scriptscope
