// info, tree, code and graph: what an archive holds, printed as PyTorch prints it or drawn.
#include "commands.h"

#include <engine.h>
#include <format.h>
#include <frame_source.h>
#include <graph_layout.h>
#include <input_spec.h>
#include <matrix_io.h>
#include <process_limits.h>
#include <stats.h>
#include <task_render.h>
#include <task_result.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace scriptscope::cli {
namespace {

std::string groupRef(int id) {
    return "g" + std::to_string(id);
}

std::string nodeRef(int id) {
    return "n" + std::to_string(id);
}

nlohmann::json portsJson(const std::vector<GraphPort>& ports) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : ports) {
        list.push_back({{"name", p.name}, {"type", p.type}});
    }
    return list;
}

nlohmann::json graphJson(const GraphModel& g, const VisibleGraph& visible,
                         const std::string& expand) {
    nlohmann::json nodes = nlohmann::json::array(), groups = nlohmann::json::array(),
                   edges = nlohmann::json::array();
    std::vector<std::string> itemRefs;
    std::set<int> shownGroups(visible.openGroups.begin(), visible.openGroups.end());
    std::set<int> collapsed;
    for (const VisibleItem& item : visible.items) {
        if (item.isGroup) {
            itemRefs.push_back(groupRef(item.id));
            collapsed.insert(item.id);
            shownGroups.insert(item.id);
            continue;
        }
        itemRefs.push_back(nodeRef(item.id));
        const GraphNode& n = g.nodes[static_cast<size_t>(item.id)];
        nlohmann::json attributes = nlohmann::json::array();
        for (const auto& a : n.attributes) {
            attributes.push_back({{"name", a.name}, {"value", a.value}});
        }
        nodes.push_back({{"id", nodeRef(n.id)},
                         {"kind", n.kind},
                         {"module", n.module},
                         {"group", groupRef(n.group)},
                         {"schema", n.schema},
                         {"source", n.source},
                         {"source_text", n.sourceText},
                         {"ir_line", n.irLine},
                         {"attributes", attributes},
                         {"inputs", portsJson(n.inputs)},
                         {"outputs", portsJson(n.outputs)}});
    }
    for (const int id : shownGroups) {
        const GraphGroup& group = g.groups[static_cast<size_t>(id)];
        groups.push_back(
            {{"id", groupRef(group.id)},
             {"parent",
              group.parent < 0 ? nlohmann::json() : nlohmann::json(groupRef(group.parent))},
             {"kind", group.kind == GraphGroup::Kind::Module  ? "module"
                      : group.kind == GraphGroup::Kind::Block ? "block"
                                                              : "function"},
             {"module", group.module},
             {"type", group.type},
             {"label", group.label},
             {"parameters", group.parameters},
             {"repeats", group.repeats},
             {"same_as",
              group.sameAs < 0 ? nlohmann::json() : nlohmann::json(groupRef(group.sameAs))},
             {"depth", group.depth},
             {"owner", group.owner < 0 ? nlohmann::json() : nlohmann::json(nodeRef(group.owner))},
             {"collapsed", collapsed.count(id) > 0}});
    }
    for (const VisibleEdge& e : visible.edges) {
        edges.push_back(
            {{"from", e.from >= 0 ? itemRefs[static_cast<size_t>(e.from)]
                                  : "input:" + g.inputs[static_cast<size_t>(e.fromInput)].name},
             {"to", e.to >= 0 ? itemRefs[static_cast<size_t>(e.to)]
                              : "output:" + std::to_string(e.toOutput)},
             {"value", e.value},
             {"type", e.type}});
    }
    return {{"module", g.modulePath},
            {"method", g.method},
            {"inlined", g.inlined},
            {"expand", expand},
            {"inputs", portsJson(g.inputs)},
            {"outputs", portsJson(g.outputs)},
            {"nodes", nodes},
            {"groups", groups},
            {"edges", edges}};
}

int commandGraphDiagram(const Options& o) {
    auto model = openModelAt(o, 0, false);
    if (!model) {
        return fail(o, model.error());
    }
    auto graph = (*model)->graphModel(o.module, o.method, o.inlined);
    if (!graph) {
        return fail(o, graph.error());
    }
    const VisibleGraph visible = visibleGraph(*graph, o.expandDepth);
    if (o.graphFormat == "svg") {
        std::vector<std::string> notes;
        GraphvizOptions graphviz;
        graphviz.program = findLayoutProgram();
        graphviz.timeoutSeconds = o.layoutTimeout;
        LayoutCache cache;
        const DiagramLayout layout = layoutDiagram(
            *graph, visible, cache,
            o.layout == "simple" ? layeredEngine() : graphvizEngine(graphviz, &notes));
        for (const std::string& note : notes) {
            std::cerr << "scriptscope-cli: " << note << "\n";
        }
        return printOrWrite(o, toSvg(*graph, visible, layout));
    }
    return printOrWrite(o, o.graphFormat == "dot"
                               ? toDot(*graph, visible)
                               : graphJson(*graph, visible, o.expand).dump(1) + "\n");
}

} // namespace

int commandInfo(const Options& o) {
    ProbeResult p = probeArchive(o.positional[0]);
    // What the file's format says of it beyond the probe (a .pt2's programs and weights), and
    // what its reader found damaged (a .pte's probe reads its header only).
    const FileDetails details = fileDetails(p);
    if (p.damage.empty() && !details.damage.empty()) {
        p.damage = details.damage;
        p.summary = std::string("a DAMAGED ") + toString(p.kind) + " file: " + details.damage + ".";
    }
    if (o.json) {
        nlohmann::json j = {{"path", p.path},
                            {"size", p.fileSize},
                            {"kind", toString(p.kind)},
                            {"summary", p.summary},
                            {"archive", p.archiveName},
                            {"version", p.version},
                            {"version_text", p.versionText},
                            {"max_supported_version", p.maxSupportedVersion},
                            {"libtorch", libtorchVersion()}};
        j["records"] = nlohmann::json::array();
        for (const auto& r : p.records) {
            j["records"].push_back({{"name", r.name},
                                    {"size", r.size},
                                    {"compressed_size", r.compressedSize},
                                    {"stored", r.stored}});
        }
        j["extra_files"] = p.extraFiles;
        j["operators"] = nlohmann::json::array();
        for (const auto& op : p.operators) {
            j["operators"].push_back({{"name", op.name}, {"registered", op.registered}});
        }
        if (!p.pickleGlobals.empty()) {
            j["pickle_globals"] = p.pickleGlobals;
        }
        j["code_files"] = p.codeFiles;
        j["storages"] = nlohmann::json::array();
        for (const auto& st : p.storages) {
            j["storages"].push_back({{"record", st.record},
                                     {"dtype", st.dtype},
                                     {"location", st.location},
                                     {"numel", st.numel},
                                     {"declared_bytes", st.declaredBytes},
                                     {"stored_bytes", st.storedBytes},
                                     {"present", st.present}});
        }
        j["tensors"] = p.tensors;
        j["damage"] = p.damage;
        j["notes"] = p.notes;
        if (!details.key.empty()) {
            j[details.key] = nlohmann::json::parse(details.json);
        }
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << "File        " << p.path << " (" << formatBytes(p.fileSize) << ")\n"
                  << "Kind        " << toString(p.kind) << "\n"
                  << "Summary     " << p.summary << "\n";
        // The verdict before the records that follow it (hundreds of lines for a real model).
        if (!p.damage.empty()) {
            std::cout << "DAMAGED     " << p.damage << "\n";
        }
        std::cout << details.text;
        if (!p.records.empty()) {
            std::cout << "Records     " << p.records.size() << "\n";
            for (const auto& r : p.records) {
                std::cout << "  " << std::setw(12) << r.size << "  " << r.name
                          << (r.stored ? "" : "  (compressed)") << "\n";
            }
        }
        if (!p.extraFiles.empty()) {
            std::cout << "Extra files " << p.extraFiles.size() << "\n";
            for (const auto& [name, content] : p.extraFiles) {
                std::cout << "  " << name << ": " << firstLine(content).substr(0, 100) << "\n";
            }
        }
        if (!p.operators.empty()) {
            std::cout << "Operators   " << p.operators.size() << "\n";
            for (const auto& op : p.operators) {
                std::cout << "  " << std::left << std::setw(44) << op.name << std::right
                          << (op.registered ? "registered" : "NOT REGISTERED") << "\n";
            }
        }
        if (!p.pickleGlobals.empty()) {
            std::cout << "Classes     ";
            for (size_t i = 0; i < p.pickleGlobals.size(); ++i) {
                std::cout << (i ? ", " : "") << p.pickleGlobals[i];
            }
            std::cout << "\n";
        }
        if (!p.storages.empty()) {
            std::cout << "Storages    " << p.storages.size() << "\n";
            for (const auto& st : p.storages) {
                std::cout << "  " << std::left << std::setw(16) << st.record << std::right
                          << std::setw(10) << (st.dtype.empty() ? "?" : st.dtype) << " x"
                          << std::setw(10) << st.numel << "  on " << st.location << "  "
                          << (!st.present ? "MISSING"
                              : st.storedBytes < st.declaredBytes
                                  ? "SHORT: " + std::to_string(st.storedBytes) + " of " +
                                        std::to_string(st.declaredBytes) + " bytes"
                                  : formatBytes(st.storedBytes))
                          << "\n";
            }
        }
        if (!p.tensors.empty()) {
            std::cout << "Tensors     " << p.tensors.size() << "\n";
            for (size_t i = 0; i < std::min<size_t>(p.tensors.size(), 20); ++i) {
                std::cout << "  " << p.tensors[i] << "\n";
            }
            if (p.tensors.size() > 20) {
                std::cout << "  ... (" << p.tensors.size() - 20 << " more; --json lists all)\n";
            }
        }
        if (!p.codeFiles.empty()) {
            std::cout << "Code files  " << p.codeFiles.size() << "\n";
            for (const auto& [name, code] : p.codeFiles) {
                std::cout << "  " << std::setw(10) << code.size() << "  " << name << "\n";
            }
        }
        for (const auto& note : p.notes) {
            std::cout << "Note        " << note << "\n";
        }
        if (o.showCode) {
            for (const auto& [name, code] : p.codeFiles) {
                std::cout << "\n# ---- " << name << "\n" << code;
            }
        }
    }
    // A file that cannot be opened here, or is damaged, is an error for scripts, even though
    // info described it.
    return openable(p) || !p.damage.empty() ? kExitError : kExitOk;
}

int commandTree(const Options& o) {
    auto opened = openModelAt(o, 0, false);
    if (!opened) {
        return fail(o, opened.error());
    }
    const ModelInfo* model = &(*opened)->info();
    if (o.json) {
        nlohmann::json modules = nlohmann::json::array();
        for (const auto& m : model->modules) {
            nlohmann::json j = {{"path", m.path}, {"type", m.type}};
            j["parameters"] = nlohmann::json::array();
            for (const auto& t : m.parameters) {
                j["parameters"].push_back(tensorJson(t));
            }
            j["buffers"] = nlohmann::json::array();
            for (const auto& t : m.buffers) {
                j["buffers"].push_back(tensorJson(t));
            }
            j["attributes"] = nlohmann::json::array();
            for (const auto& a : m.attributes) {
                j["attributes"].push_back(
                    {{"name", a.name}, {"type", a.type}, {"value", a.preview}});
            }
            j["methods"] = nlohmann::json::array();
            j["schemas"] = nlohmann::json::object();
            for (const auto& method : m.methods) {
                j["methods"].push_back(method.name);
                j["schemas"][method.name] = method.schema;
            }
            modules.push_back(j);
        }
        std::cout << nlohmann::json{{"modules", modules},
                                    {"parameter_count", model->parameterCount},
                                    {"parameter_bytes", model->parameterBytes},
                                    {"buffer_bytes", model->bufferBytes}}
                         .dump(2)
                  << "\n";
        return kExitOk;
    }
    for (const auto& m : model->modules) {
        const auto depth = m.path.empty() ? 0 : std::count(m.path.begin(), m.path.end(), '.') + 1;
        const std::string indent(static_cast<size_t>(depth) * 2, ' ');
        std::cout << indent << (m.path.empty() ? "(root)" : m.name) << "  " << m.type << "  "
                  << m.totalParameterCount << " parameters, " << formatBytes(m.totalBytes) << "\n";
        for (const auto& t : m.parameters) {
            std::cout << indent << "    param  " << t.name << " " << formatShape(t.shape) << " "
                      << t.dtype;
            if (t.packed) {
                std::cout << " (packed in " << t.packedIn << ")";
            }
            if (!t.qscheme.empty()) {
                std::cout << " " << describeQuantization(t);
            }
            std::cout << "\n";
        }
        for (const auto& t : m.buffers) {
            std::cout << indent << "    buffer " << t.name << " " << formatShape(t.shape) << " "
                      << t.dtype << "\n";
        }
        for (const auto& a : m.attributes) {
            std::cout << indent << "    attr   " << a.name << ": " << a.type << " = " << a.preview
                      << "\n";
        }
        for (const auto& method : m.methods) {
            std::cout << indent << "    def    " << method.schema << "\n";
        }
    }
    std::cout << "Total: " << model->parameterCount << " parameters ("
              << formatBytes(model->parameterBytes) << "), buffers "
              << formatBytes(model->bufferBytes) << ", " << model->methodCount << " methods\n";
    return kExitOk;
}

int commandCodeOrGraph(const Options& o) {
    if (o.command == "graph" && o.graphFormat != "text") {
        return commandGraphDiagram(o);
    }
    auto model = openModelAt(o, 0, false);
    if (!model) {
        return fail(o, model.error());
    }
    auto text = o.command == "code" ? (*model)->code(o.module, o.method)
                                    : (*model)->graph(o.module, o.method, o.inlined);
    if (!text) {
        return fail(o, text.error());
    }
    return printOrWrite(o, *text + "\n"); // Python's print() adds the newline
}

} // namespace scriptscope::cli
