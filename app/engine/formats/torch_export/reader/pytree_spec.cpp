#include "pytree_spec.h"
#include "pt2_values.h"

#include <stdexcept>

namespace scriptscope {

size_t PytreeSpec::leaves() const {
    if (kind == Kind::Leaf) {
        return 1;
    }
    size_t n = 0;
    for (const PytreeSpec& child : children) {
        n += child.leaves();
    }
    return n;
}

namespace {

using pt2::json;

struct Refused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A key of a dict's context as text: a str as it is, anything else as JSON (Python's repr for
// numbers, true/false as True/False).
std::string keyText(const json& key) {
    if (key.is_string()) {
        return key.get<std::string>();
    }
    if (key.is_boolean()) {
        return key.get<bool>() ? "True" : "False";
    }
    if (key.is_null()) {
        return "None";
    }
    return key.dump();
}

struct JsonReader {
    size_t nodes = 0;

    PytreeSpec read(const json& node, int depth) {
        if (depth > kMaxPytreeDepth) {
            throw Refused("nested more than " + std::to_string(kMaxPytreeDepth) + " levels deep");
        }
        if (++nodes > kMaxPytreeNodes) {
            throw Refused("more than " + std::to_string(kMaxPytreeNodes) + " nodes");
        }
        if (!node.is_object()) {
            throw Refused("a node is not an object");
        }
        PytreeSpec spec;
        const json& type = pt2::member(node, "type");
        const json& children = pt2::member(node, "children_spec");
        if (type.is_null()) {
            spec.kind = PytreeSpec::Kind::Leaf;
            return spec;
        }
        if (!type.is_string()) {
            throw Refused("a node's type is not a string");
        }
        spec.type = type.get<std::string>();
        if (!children.is_array() && !children.is_null()) {
            throw Refused("the children of " + spec.type + " are not a list");
        }
        if (children.is_array()) {
            for (const json& child : children) {
                spec.children.push_back(read(child, depth + 1));
            }
        }
        const std::string& t = spec.type;
        if (t == "builtins.tuple" || t == "collections.namedtuple" ||
            t.rfind("torch.return_types.", 0) == 0) {
            spec.kind = PytreeSpec::Kind::Tuple;
        } else if (t == "builtins.list" || t == "torch.fx.immutable_collections.immutable_list") {
            spec.kind = PytreeSpec::Kind::List;
        } else if (t == "builtins.dict" || t == "collections.OrderedDict" ||
                   t == "collections.defaultdict" ||
                   t == "torch.fx.immutable_collections.immutable_dict") {
            spec.kind = PytreeSpec::Kind::Dict;
            readKeys(pt2::member(node, "context"), spec);
        } else if (t == "builtins.NoneType") {
            spec.kind = PytreeSpec::Kind::None;
        } else {
            spec.kind = PytreeSpec::Kind::Other;
        }
        if (spec.kind == PytreeSpec::Kind::Tuple && t == "collections.namedtuple") {
            // The context names the class ("\"module.Name\""), not its fields.
            const json& context = pt2::member(node, "context");
            if (context.is_string()) {
                std::string why;
                try {
                    const json name = json::parse(context.get<std::string>());
                    if (name.is_string()) {
                        spec.type = name.get<std::string>();
                    }
                } catch (const json::exception&) {
                }
            }
        }
        return spec;
    }

    // A dict's context: the JSON text of its keys in order; a defaultdict's holds them under
    // dict_context.
    static void readKeys(const json& context, PytreeSpec& spec) {
        if (!context.is_string()) {
            throw Refused("a dict's context is not a JSON text");
        }
        json keys;
        try {
            keys = json::parse(context.get<std::string>(), nullptr, true, false);
        } catch (const json::exception&) {
            throw Refused("a dict's context does not parse");
        }
        if (keys.is_object()) {
            keys = pt2::member(keys, "dict_context");
        }
        if (!keys.is_array() || keys.size() != spec.children.size()) {
            throw Refused("a dict's keys are not one per value");
        }
        for (const json& key : keys) {
            spec.keys.push_back(keyText(key));
        }
    }
};

} // namespace

std::optional<PytreeSpec> parseTreespecJson(const std::string& text, std::string& why) {
    json parsed;
    try {
        parsed = json::parse(
            text,
            [](int depth, json::parse_event_t event, json&) {
                if ((event == json::parse_event_t::object_start ||
                     event == json::parse_event_t::array_start) &&
                    depth >= 2 * kMaxPytreeDepth + 4) {
                    throw Refused("nested too deeply");
                }
                return true;
            },
            true, false);
    } catch (const Refused& refused) {
        why = std::string("the output spec is ") + refused.what();
        return std::nullopt;
    } catch (const json::exception& error) {
        why = std::string("the output spec does not parse: ") + error.what();
        return std::nullopt;
    }
    // [protocol, tree]
    if (!parsed.is_array() || parsed.size() != 2 || !parsed[0].is_number_integer()) {
        why = "the output spec is not [protocol, tree]";
        return std::nullopt;
    }
    if (parsed[0].get<int64_t>() != 1) {
        why = "the output spec is of pytree protocol " + parsed[0].dump() + ", not 1";
        return std::nullopt;
    }
    try {
        JsonReader reader;
        return reader.read(parsed[1], 0);
    } catch (const Refused& refused) {
        why = std::string("the output spec: ") + refused.what();
    }
    return std::nullopt;
}

std::optional<PytreeSpec> parseExecutorchSpec(const std::string& text, std::string& why) {
    if (text.empty()) {
        why = "the method keeps no output spec";
        return std::nullopt;
    }
    if (text.front() != '[') {
        // ExecuTorch's C++ pytree string ("T2#1#1($,$)"), which only builds without its Python
        // pytree write.
        why = "the method's output spec is ExecuTorch's C++ pytree string, which ScriptScope "
              "does not read";
        return std::nullopt;
    }
    return parseTreespecJson(text, why);
}

} // namespace scriptscope
