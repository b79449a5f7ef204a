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
// A type's structure, from either spelling LibTorch uses: schema text ("Tensor[]", "Tensor?",
// "Dict(str, Tensor)", "(int, float)") or annotations ("List[Tensor]", "Optional[Tensor]",
// "Tuple[int, float]", "Dict[str, Tensor]").
struct TypeShape {
    enum class Kind { Tensor, Int, Float, Bool, String, List, Tuple, Dict, Optional, Other };
    Kind kind = Kind::Other;
    std::string text; // as written, trimmed
    // List: the element; Tuple: one per element; Dict: key, value; Optional: the inner type.
    std::vector<TypeShape> elements;

    bool isContainer() const {
        return kind == Kind::List || kind == Kind::Tuple || kind == Kind::Dict;
    }
};
TypeShape parseTypeShape(const std::string& type);

} // namespace scriptscope
