#include "graph_check.h"

#include <set>

namespace scriptscope {
namespace {

const Pt2Model* findSubgraph(const Pt2Model& model, const std::string& name) {
    for (const Pt2Model& subgraph : model.subgraphs) {
        if (subgraph.name == name) {
            return &subgraph;
        }
    }
    return nullptr;
}

// The names a value reads or defines ("" where an element is a constant or None).
void namesOf(const Pt2Value& value, std::vector<std::string>& out) {
    for (const std::string& name : value.names) {
        if (!name.empty()) {
            out.push_back(name);
        }
    }
}

Status checkGraph(const Pt2Model& graph, const Pt2Model& owner, const std::string& where,
                  size_t& nodes) {
    std::set<std::string> defined;
    const auto define = [&](const std::string& name, const std::string& by) -> Status {
        if (!defined.insert(name).second) {
            return Error{ErrorKind::Format, where + ": the value '" + name +
                                                "' is defined twice (again by " + by +
                                                "): the graph is not a program that runs"};
        }
        return std::nullopt;
    };
    for (size_t i = 0; i < graph.inputValues.size(); ++i) {
        std::vector<std::string> names;
        namesOf(graph.inputValues[i], names);
        for (const std::string& name : names) {
            if (auto error = define(name, "input " + std::to_string(i))) {
                return error;
            }
        }
    }
    for (const Pt2Node& node : graph.nodes) {
        if (++nodes > kMaxRunNodes) {
            return Error{ErrorKind::Format, where + " has more than " +
                                                std::to_string(kMaxRunNodes) +
                                                " nodes with its subgraphs: too many to run"};
        }
        const std::string what = "node '" + node.name + "' (" + node.target + ")";
        for (const Pt2Argument& argument : node.inputs) {
            if (argument.value.kind == Pt2Value::Kind::Graph) {
                const Pt2Model* subgraph = findSubgraph(owner, argument.value.text);
                if (!subgraph) {
                    return Error{ErrorKind::Format,
                                 where + ": " + what + " calls the graph '" + argument.value.text +
                                     "', which the archive does not hold (or nests deeper than "
                                     "the reader follows)"};
                }
                if (auto error = checkGraph(*subgraph, *subgraph,
                                            where + " > " + argument.value.text, nodes)) {
                    return error;
                }
                continue;
            }
            std::vector<std::string> names;
            namesOf(argument.value, names);
            for (const std::string& name : names) {
                if (!defined.count(name)) {
                    return Error{ErrorKind::Format,
                                 where + ": " + what + " reads '" + name +
                                     "', which no input or earlier node defines (a value used "
                                     "before it is made, or never made)"};
                }
            }
        }
        for (const Pt2Value& value : node.returns) {
            std::vector<std::string> names;
            namesOf(value, names);
            for (const std::string& name : names) {
                if (auto error = define(name, what)) {
                    return error;
                }
            }
        }
    }
    for (size_t i = 0; i < graph.outputValues.size(); ++i) {
        std::vector<std::string> names;
        namesOf(graph.outputValues[i], names);
        for (const std::string& name : names) {
            if (!defined.count(name)) {
                return Error{ErrorKind::Format, where + ": output " + std::to_string(i) + " is '" +
                                                    name + "', which nothing in the graph defines"};
            }
        }
    }
    return std::nullopt;
}

} // namespace

Status checkExportedGraph(const Pt2Model& model) {
    if (model.nodes.empty() && model.inputValues.empty() && model.outputValues.empty()) {
        std::string why;
        for (const std::string& note : model.notes) {
            why += (why.empty() ? ": " : "; ") + note;
        }
        return Error{ErrorKind::Format, "the program '" + model.name + "' has no graph" + why};
    }
    for (const std::string& note : model.notes) {
        if (note.find("only the first") != std::string::npos) {
            return Error{ErrorKind::Format, "the program '" + model.name +
                                                "' was read only in part (" + note +
                                                "): it cannot run"};
        }
    }
    if (model.inputs.size() != model.inputValues.size()) {
        return Error{ErrorKind::Format, "the program '" + model.name + "' has " +
                                            std::to_string(model.inputValues.size()) +
                                            " inputs, but its signature names " +
                                            std::to_string(model.inputs.size())};
    }
    if (model.outputs.size() != model.outputValues.size()) {
        return Error{ErrorKind::Format, "the program '" + model.name + "' returns " +
                                            std::to_string(model.outputValues.size()) +
                                            " values, but its signature names " +
                                            std::to_string(model.outputs.size())};
    }
    size_t nodes = 0;
    return checkGraph(model, model, "the graph of '" + model.name + "'", nodes);
}

} // namespace scriptscope
