// The ETRecord reader (etrecord_reader.h).
#include "etrecord_reader.h"

#include "zip_reader.h"

#include <nlohmann/json.hpp>

#include <iterator>
#include <set>
#include <utility>

namespace scriptscope {

namespace {

constexpr uint64_t kMaxJsonBytes = 64u << 20;

std::vector<int> handlesOf(const nlohmann::json& value) {
    std::vector<int> handles;
    if (value.is_number_integer()) {
        handles.push_back(value.get<int>());
    } else if (value.is_array()) {
        for (const auto& item : value) {
            if (item.is_number_integer()) {
                handles.push_back(item.get<int>());
            }
        }
    }
    return handles;
}

// nn_module_stack as torch.export serializes it: "key,path,type;key,path,type", outermost first.
// Each entry's (path, class), "" for the model itself and for what an entry leaves out.
std::vector<std::pair<std::string, std::string>> stackModules(const std::string& stack) {
    std::vector<std::pair<std::string, std::string>> modules;
    size_t start = 0;
    while (start < stack.size()) {
        size_t end = stack.find(';', start);
        end = end == std::string::npos ? stack.size() : end;
        const std::string entry = stack.substr(start, end - start);
        start = end + 1;
        const size_t first = entry.find(',');
        if (first == std::string::npos) {
            modules.emplace_back();
            continue;
        }
        const size_t second = entry.find(',', first + 1);
        modules.emplace_back(
            entry.substr(first + 1,
                         second == std::string::npos ? std::string::npos : second - first - 1),
            second == std::string::npos ? std::string() : entry.substr(second + 1));
    }
    return modules;
}

// A node's names, newest first: its own, then each node it was made from (from_node, which
// torch.export serializes as a JSON string of nested {"name", "from_node"} entries), back to the
// first export's. Repeats in a row are one.
std::vector<std::string> namesOf(const nlohmann::json& node) {
    std::vector<std::string> names;
    const auto add = [&](const nlohmann::json& object) {
        const auto name = object.find("name");
        if (name != object.end() && name->is_string() && !name->get<std::string>().empty() &&
            (names.empty() || names.back() != name->get<std::string>())) {
            names.push_back(name->get<std::string>());
        }
    };
    add(node);
    const auto metadata = node.find("metadata");
    if (metadata == node.end() || !metadata->is_object()) {
        return names;
    }
    const auto from = metadata->find("from_node");
    if (from == metadata->end()) {
        return names;
    }
    nlohmann::json chain;
    try {
        chain = from->is_string() ? nlohmann::json::parse(from->get<std::string>()) : *from;
    } catch (const std::exception&) {
        return names;
    }
    // The first origin of each step (a node made from several names the first); bounded, as a
    // hostile file may nest without end.
    const nlohmann::json* at = &chain;
    for (int depth = 0; depth < 256 && at->is_array() && !at->empty(); ++depth) {
        const nlohmann::json& entry = at->front();
        if (!entry.is_object()) {
            break;
        }
        add(entry);
        const auto next = entry.find("from_node");
        if (next == entry.end()) {
            break;
        }
        at = &*next;
    }
    return names;
}

} // namespace

std::string EtRecord::moduleOf(const std::string& method, int instruction) const {
    const auto m = instructionModules.find(method);
    if (m == instructionModules.end()) {
        return {};
    }
    const auto i = m->second.find(instruction);
    if (i == m->second.end() || i->second.empty()) {
        return {};
    }
    // The deepest module every one of them is in: their paths' common leading components.
    const auto split = [](const std::string& path) {
        std::vector<std::string> parts;
        size_t start = 0;
        while (!path.empty() && start <= path.size()) {
            const size_t dot = path.find('.', start);
            parts.push_back(
                path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
            if (dot == std::string::npos) {
                break;
            }
            start = dot + 1;
        }
        return parts;
    };
    std::vector<std::string> shared = split(i->second.front());
    for (const std::string& path : i->second) {
        const std::vector<std::string> parts = split(path);
        size_t k = 0;
        while (k < shared.size() && k < parts.size() && shared[k] == parts[k]) {
            ++k;
        }
        shared.resize(k);
    }
    std::string common;
    for (const std::string& part : shared) {
        common += (common.empty() ? "" : ".") + part;
    }
    return common;
}

Expected<EtRecord> readEtRecord(const std::string& path) {
    const ZipReader zip(path);
    if (!zip.ok()) {
        return Error{ErrorKind::Format, "'" + path + "' is no ETRecord: " + zip.error()};
    }
    const auto json = [&](const std::string& name) -> Expected<nlohmann::json> {
        const ArchiveRecord* record = zip.find(name);
        if (!record) {
            return Error{ErrorKind::Format, "'" + path + "' has no " + name + ": not an ETRecord"};
        }
        const auto text = zip.read(*record, kMaxJsonBytes);
        if (!text) {
            return Error{ErrorKind::Format,
                         "'" + path + "': " + name + " cannot be read (or is over 64 MiB)"};
        }
        try {
            return nlohmann::json::parse(*text);
        } catch (const std::exception& error) {
            return Error{ErrorKind::Format,
                         "'" + path + "': " + name + " is no JSON: " + std::string(error.what())};
        }
    };
    auto handleMap = json("debug_handle_map");
    if (!handleMap) {
        return handleMap.error();
    }
    EtRecord record;
    if (!handleMap->is_object()) {
        return Error{ErrorKind::Format, "'" + path + "': debug_handle_map is not an object"};
    }
    for (const auto& [method, instructions] : handleMap->items()) {
        auto program = json("edge_dialect_exported_program/" + method);
        if (!program) {
            return program.error();
        }
        // Each node's debug handle and innermost module; the quantize and dequantize nodes PT2E
        // puts between modules apart (they sit in the model's own forward, and would pull
        // every quantized delegate up to it).
        std::map<int, std::set<std::string>> modulesOf, conversionsOf;
        // Each handle's nodes that compute (not quantize or dequantize), in the graph's order,
        // with their names.
        std::map<int, std::vector<std::pair<size_t, std::vector<std::string>>>> computedBy;
        size_t order = 0;
        const nlohmann::json* nodes = nullptr;
        if (program->is_object() && program->contains("graph_module") &&
            (*program)["graph_module"].is_object() &&
            (*program)["graph_module"].contains("graph") &&
            (*program)["graph_module"]["graph"].is_object() &&
            (*program)["graph_module"]["graph"].contains("nodes")) {
            nodes = &(*program)["graph_module"]["graph"]["nodes"];
        }
        if (!nodes || !nodes->is_array()) {
            return Error{ErrorKind::Format,
                         "'" + path + "': the edge program of " + method + " has no graph nodes"};
        }
        for (const auto& node : *nodes) {
            if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object()) {
                continue;
            }
            const auto& metadata = node["metadata"];
            const auto handle = metadata.find("debug_handle");
            const auto stack = metadata.find("nn_module_stack");
            if (handle == metadata.end() || stack == metadata.end() || !stack->is_string()) {
                continue;
            }
            int value = 0;
            if (handle->is_number_integer()) {
                value = handle->get<int>();
            } else if (handle->is_string()) {
                try {
                    value = std::stoi(handle->get<std::string>());
                } catch (const std::exception&) {
                    continue;
                }
            } else {
                continue;
            }
            const auto target = node.find("target");
            const bool conversion =
                target != node.end() && target->is_string() &&
                target->get<std::string>().find("quantized_decomposed") != std::string::npos;
            auto modules = stackModules(stack->get<std::string>());
            // The innermost module's path ("" for the model itself).
            (conversion ? conversionsOf : modulesOf)[value].insert(
                modules.empty() ? std::string() : modules.back().first);
            if (!conversion) {
                computedBy[value].emplace_back(order, namesOf(node));
            }
            for (auto& [module, type] : modules) {
                if (!module.empty()) {
                    record.moduleTypes[method].emplace(std::move(module), std::move(type));
                }
            }
            ++order;
        }
        auto& byInstruction = record.instructionModules[method];
        auto& operators = record.instructionOperators[method];
        if (!instructions.is_object()) {
            continue;
        }
        // A handle several instructions name (a quantize between a kernel and the delegate after
        // it carries the kernel's handle) says where it came from, not where this one ran: an
        // instruction with handles of its own goes by those.
        std::map<int, int> claims;
        for (const auto& [id, value] : instructions.items()) {
            const std::vector<int> handles = handlesOf(value);
            for (const int handle : std::set<int>(handles.begin(), handles.end())) {
                ++claims[handle];
            }
        }
        for (const auto& [id, value] : instructions.items()) {
            int instruction = 0;
            try {
                instruction = std::stoi(id);
            } catch (const std::exception&) {
                continue;
            }
            std::vector<int> handles = handlesOf(value);
            std::vector<int> own;
            for (const int handle : handles) {
                if (claims[handle] == 1) {
                    own.push_back(handle);
                }
            }
            if (!own.empty()) {
                handles = own;
            }
            std::set<std::string> modules, conversions;
            // The instruction's output: its last computing node's.
            const std::pair<size_t, std::vector<std::string>>* last = nullptr;
            for (const int handle : handles) {
                if (const auto found = computedBy.find(handle); found != computedBy.end()) {
                    for (const auto& computed : found->second) {
                        last = !last || computed.first > last->first ? &computed : last;
                    }
                }
                if (const auto found = modulesOf.find(handle); found != modulesOf.end()) {
                    modules.insert(found->second.begin(), found->second.end());
                }
                if (const auto found = conversionsOf.find(handle); found != conversionsOf.end()) {
                    conversions.insert(found->second.begin(), found->second.end());
                }
            }
            if (modules.empty()) {
                modules = conversions; // an instruction that only converts
            }
            byInstruction[instruction].assign(modules.begin(), modules.end());
            if (last && !last->second.empty()) {
                operators[instruction] = last->second;
            }
        }
        // A node several instructions come from (a linear decomposed into a permute and an
        // addmm) made the last one's output only.
        std::set<std::string> taken;
        for (auto it = operators.rbegin(); it != operators.rend(); ++it) {
            std::vector<std::string> kept;
            for (const std::string& name : it->second) {
                if (taken.insert(name).second) {
                    kept.push_back(name);
                }
            }
            it->second = std::move(kept);
        }
        for (auto it = operators.begin(); it != operators.end();) {
            it = it->second.empty() ? operators.erase(it) : std::next(it);
        }
    }
    return record;
}

Expected<EtRecord> readEtRecordBeside(const std::string& ptePath) {
    const size_t dot = ptePath.rfind('.');
    const size_t slash = ptePath.rfind('/');
    const std::string base = dot != std::string::npos && (slash == std::string::npos || dot > slash)
                                 ? ptePath.substr(0, dot)
                                 : ptePath;
    return readEtRecord(base + ".etrecord");
}

} // namespace scriptscope
