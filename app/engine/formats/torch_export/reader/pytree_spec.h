// How a model's flat outputs nest in what Python returns: the pytree spec torch.export keeps for
// a program's outputs (module_call_graph's out_spec, torch.utils._pytree.treespec_dumps) and the
// one an ExecuTorch method keeps (container_meta_type.encoded_out_str, the same JSON). Read without
// LibTorch, bounded: the texts come from untrusted files.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

struct PytreeSpec {
    enum class Kind {
        Leaf,  // one of the flat values
        Tuple, // a tuple, a NamedTuple or a torch.return_types structseq
        List,
        Dict, // dict, OrderedDict, defaultdict: keys in order
        None, // None: no flat value
        Other // a registered class (a dataclass): its children in order
    };
    Kind kind = Kind::Leaf;
    std::string type; // Python's name for it: "builtins.dict", "torchvision.models.x.Output"
    // Dict keys, as text: a str key as it is, other keys as Python's repr() writes them. A
    // NamedTuple's field names, where the file names them (a .pt2's treespec_namedtuple_fields).
    std::vector<std::string> keys;
    std::vector<PytreeSpec> children;

    // How many flat values it holds.
    size_t leaves() const;
};

// Limits on what a spec may hold.
constexpr size_t kMaxPytreeNodes = 1'000'000;
constexpr int kMaxPytreeDepth = 64;

// torch.utils._pytree.treespec_dumps's JSON ([1, {"type": ..., "context": ..., "children_spec":
// [...]}]); nullopt with why.
std::optional<PytreeSpec> parseTreespecJson(const std::string& text, std::string& why);

// An ExecuTorch method's output spec: what its Python exporter writes (executorch.extension.
// pytree, the same JSON as torch's in the wheels); nullopt with why.
std::optional<PytreeSpec> parseExecutorchSpec(const std::string& text, std::string& why);

} // namespace scriptscope
