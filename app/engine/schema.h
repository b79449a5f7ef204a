// A method's arguments, read from the schema text LibTorch prints
// ("forward(__torch__.Net self, Tensor image, Tensor warp, int k=5) -> (Tensor, Tensor)"), so that
// the GUI can offer one input row per argument without LibTorch.
#pragma once

#include <string>
#include <vector>

namespace scriptscope {

struct SchemaArgument {
    std::string name;
    std::string type;         // "Tensor", "int", "List[int]", "Optional[Tensor]", "Tensor?" ...
    std::string defaultValue; // as written after '=', empty when there is none
    bool hasDefault = false;
};

// The arguments after `self` (a first argument named self is left out).
std::vector<SchemaArgument> schemaArguments(const std::string& schema);

// What kind of value a type takes, for choosing an input source.
enum class ArgumentClass { Tensor, Int, Float, Bool, String, IntList, FloatList, Optional, Other };
ArgumentClass argumentClass(const std::string& type);

} // namespace scriptscope
