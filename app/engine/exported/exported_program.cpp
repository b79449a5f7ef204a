#include "exported_program.h"

#include <format.h>
#include <zip_reader.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace scriptscope {
namespace {

std::string parentOf(const std::string& path) {
    const size_t dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string lastPart(const std::string& path) {
    const size_t dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
}

// A module called more than once is "relu@1" on its second call: the same module.
std::string modulePathOf(const Pt2ModuleFrame& frame) {
    return frame.path.substr(0, frame.path.find('@'));
}

std::vector<int64_t> staticShape(const Pt2TensorMeta& meta, bool& symbolic) {
    std::vector<int64_t> shape;
    for (const std::string& size : meta.sizes) {
        try {
            size_t used = 0;
            shape.push_back(std::stoll(size, &used));
            symbolic = symbolic || used != size.size();
        } catch (const std::exception&) {
            shape.push_back(-1);
            symbolic = true;
        }
    }
    return shape;
}

TensorInfo tensorInfo(const std::string& name, const Pt2TensorMeta& meta, uint64_t storedBytes) {
    TensorInfo t;
    t.name = name;
    bool symbolic = false;
    t.shape = staticShape(meta, symbolic);
    t.dtype = meta.dtype;
    t.device = meta.device;
    t.requiresGrad = meta.requiresGrad;
    uint64_t numel = 1;
    for (const int64_t size : t.shape) {
        numel *= static_cast<uint64_t>(std::max<int64_t>(size, 0));
    }
    const uint64_t declared = symbolic ? 0 : numel * static_cast<uint64_t>(dtypeBytes(t.dtype));
    t.bytes = declared ? declared : storedBytes;
    return t;
}

uint64_t numelOf(const TensorInfo& t) {
    uint64_t numel = 1;
    for (const int64_t size : t.shape) {
        numel *= static_cast<uint64_t>(std::max<int64_t>(size, 0));
    }
    return numel;
}

// The module tree: every module a node's stack names (with its ancestors), and every module a
// parameter or buffer belongs to, in pre-order with children in the order they were first met.
std::vector<ModuleInfo> moduleTree(const Pt2Model& model) {
    std::map<std::string, std::string> types;
    std::map<std::string, std::vector<std::string>> children;
    std::vector<std::string> order;
    const auto add = [&](const std::string& path, const std::string& type,
                         const auto& self) -> void {
        if (!types.count(path)) {
            types[path] = type;
            if (!path.empty()) {
                const std::string parent = parentOf(path);
                self(parent, std::string(), self);
                children[parent].push_back(path);
            }
            order.push_back(path);
        } else if (types[path].empty() && !type.empty()) {
            types[path] = type;
        }
    };
    add("", std::string(), add);
    for (const Pt2Node& node : model.nodes) {
        for (const Pt2ModuleFrame& frame : node.moduleStack) {
            add(modulePathOf(frame), frame.type, add);
        }
    }
    for (const Pt2SignatureEntry& entry : model.inputs) {
        if (!entry.target.empty() && entry.kind != "USER_INPUT") {
            add(parentOf(entry.target), std::string(), add);
        }
    }
    std::vector<ModuleInfo> modules;
    const auto visit = [&](const std::string& path, const auto& self) -> void {
        ModuleInfo m;
        m.path = path;
        m.name = lastPart(path);
        m.type =
            types[path].empty() ? (path.empty() ? "ExportedProgram" : "(not called)") : types[path];
        m.children = children[path];
        modules.push_back(std::move(m));
        for (const std::string& child : children[path]) {
            self(child, self);
        }
    };
    visit("", visit);
    return modules;
}

// "forward(Tensor x) -> Tensor": the user inputs and outputs as TorchScript's schemas write them,
// so that the run panel reads them as it reads a TorchScript method's.
std::string forwardSchema(const Pt2Model& model) {
    const auto typeOf = [&model](const std::string& value) {
        if (model.tensors.count(value)) {
            return std::string("Tensor");
        }
        return std::string(model.symbols.count(value) ? "int" : "Any");
    };
    std::string schema = "forward(";
    bool firstInput = true;
    for (const Pt2SignatureEntry& entry : model.inputs) {
        if (entry.kind == "USER_INPUT") {
            schema += (firstInput ? "" : ", ") + typeOf(entry.name) + " " + entry.name;
            firstInput = false;
        }
    }
    std::vector<std::string> outputs;
    for (const Pt2SignatureEntry& entry : model.outputs) {
        if (entry.kind == "USER_OUTPUT") {
            outputs.push_back(typeOf(entry.name));
        }
    }
    std::string returns;
    for (size_t i = 0; i < outputs.size(); ++i) {
        returns += (i ? ", " : "") + outputs[i];
    }
    return schema + ") -> " + (outputs.size() == 1 ? returns : "(" + returns + ")");
}

// "aten::conv2d" for "torch.ops.aten.conv2d.default": the kind TorchScript graphs name it by.
std::string kindOf(const std::string& target) {
    const std::string ops = "torch.ops.";
    if (target.compare(0, ops.size(), ops) != 0) {
        return target;
    }
    const std::string rest = target.substr(ops.size());
    const size_t dot = rest.find('.');
    if (dot == std::string::npos) {
        return rest;
    }
    const std::string ns = rest.substr(0, dot);
    const std::string name = rest.substr(dot + 1);
    return ns + "::" + name.substr(0, name.find('.'));
}

std::string shortType(const std::string& type) {
    return lastPart(type);
}

} // namespace

int dtypeBytes(const std::string& dtype) {
    static const std::map<std::string, int> sizes = {
        {"float32", 4},       {"float64", 8},     {"float16", 2},         {"bfloat16", 2},
        {"int64", 8},         {"int32", 4},       {"int16", 2},           {"int8", 1},
        {"uint8", 1},         {"bool", 1},        {"uint16", 2},          {"uint32", 4},
        {"uint64", 8},        {"complex64", 8},   {"complex128", 16},     {"complex32", 4},
        {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"float8_e4m3fnuz", 1}, {"float8_e5m2fnuz", 1}};
    const auto found = sizes.find(dtype);
    return found == sizes.end() ? 0 : found->second;
}

// An AOTInductor package without its exported program: one module, whose forward takes the
// compiled model's flat inputs (named in its generated wrapper) and whose code is that wrapper.
static ModelInfo compiledOnlyInfo(const ZipReader& zip, const Pt2CompiledModel& compiled) {
    ModelInfo info;
    ModuleInfo root;
    root.type = "AOTInductor package";
    for (const auto& [key, value] : compiled.metadata) {
        root.attributes.push_back({key, "str", value});
    }
    MethodInfo forward;
    forward.name = "forward";
    std::string wrapper;
    if (const ArchiveRecord* record = zip.find(compiled.wrapperSource)) {
        wrapper = zip.read(*record, 16u << 20).value_or(std::string());
    }
    // Lines such as `inputs_info_[0].name = "arg2_1";`: read as text, never compiled or run.
    const auto names = [&wrapper](const std::string& array) {
        std::vector<std::string> found;
        const std::string key = array + "[";
        for (size_t at = wrapper.find(key); at != std::string::npos;
             at = wrapper.find(key, at + 1)) {
            const size_t close = wrapper.find("].name = \"", at);
            const size_t end = close == std::string::npos ? close : wrapper.find('"', close + 10);
            if (close == std::string::npos || end == std::string::npos || close - at > 24) {
                continue;
            }
            const std::string name = wrapper.substr(close + 10, end - close - 10);
            if (std::find(found.begin(), found.end(), name) == found.end()) {
                found.push_back(name);
            }
        }
        return found;
    };
    const std::vector<std::string> inputs = names("inputs_info_");
    const std::vector<std::string> outputs = names("outputs_info_");
    forward.schema = "forward(";
    for (size_t i = 0; i < inputs.size(); ++i) {
        forward.schema += (i ? ", Tensor " : "Tensor ") + inputs[i];
    }
    std::string returns;
    for (size_t i = 0; i < outputs.size(); ++i) {
        returns += i ? ", Tensor" : "Tensor";
    }
    forward.schema += ") -> " + (outputs.size() == 1 ? returns : "(" + returns + ")");
    forward.code = wrapper;
    root.methods.push_back(std::move(forward));
    info.modules.push_back(std::move(root));
    info.methodCount = 1;
    return info;
}

Expected<ExportedProgram> ExportedProgram::open(const std::string& path, ProbeResult probe) {
    const auto start = std::chrono::steady_clock::now();
    ZipReader zip(path);
    ExportedProgram exported;
    exported.archive_ = readPt2Archive(zip);
    const Pt2Archive& archive = exported.archive_;
    if (archive.ok && archive.models.empty() && !archive.compiled.empty()) {
        exported.info_ = compiledOnlyInfo(zip, archive.compiled.front());
        exported.info_.path = path;
        exported.info_.probe = std::move(probe);
        exported.info_.probe.notes.push_back(
            "an AOTInductor package without its exported program: ScriptScope shows the compiled "
            "model's generated code and runs it, but has no graph to show (package the program "
            "with it, torch.export.pt2_archive._package.package_pt2, to see one)");
        return exported;
    }
    if (!archive.ok || archive.models.empty()) {
        return Error{ErrorKind::Format,
                     "'" + path + "' is not a torch.export archive ScriptScope can read: " +
                         (archive.error.empty() ? "it holds no exported program" : archive.error)};
    }
    const Pt2Model& model = archive.models.front();
    ModelInfo& info = exported.info_;
    info.path = path;
    info.probe = std::move(probe);
    for (const std::string& note : archive.notes) {
        info.probe.notes.push_back(note);
    }
    for (const std::string& note : model.notes) {
        info.probe.notes.push_back("model '" + model.name + "': " + note);
    }
    if (archive.models.size() > 1) {
        info.probe.notes.push_back("the archive holds " + std::to_string(archive.models.size()) +
                                   " exported programs: ScriptScope shows the first, '" +
                                   model.name + "'");
    }
    info.torchVersion = model.torchVersion;
    info.modules = moduleTree(model);
    std::map<std::string, const Pt2Weight*> stored;
    for (const auto* list : {&model.weights, &model.constants}) {
        for (const Pt2Weight& weight : *list) {
            stored[weight.name] = &weight;
        }
    }
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < info.modules.size(); ++i) {
        index[info.modules[i].path] = i;
    }
    for (const Pt2SignatureEntry& entry : model.inputs) {
        const bool parameter = entry.kind == "PARAMETER";
        const bool buffer = entry.kind == "BUFFER";
        const bool constant = entry.kind == "CONSTANT_TENSOR";
        if ((!parameter && !buffer && !constant) || entry.target.empty()) {
            continue;
        }
        ModuleInfo& module = info.modules[index[parentOf(entry.target)]];
        const auto meta = model.tensors.find(entry.name);
        const auto weight = stored.find(entry.target);
        const Pt2TensorMeta tensorMeta = meta != model.tensors.end() ? meta->second
                                         : weight != stored.end()    ? weight->second->meta
                                                                     : Pt2TensorMeta{};
        TensorInfo t = tensorInfo(lastPart(entry.target), tensorMeta,
                                  weight != stored.end() ? weight->second->bytes : 0);
        if (parameter) {
            module.parameterCount += numelOf(t);
            module.parameterBytes += t.bytes;
            module.parameters.push_back(std::move(t));
        } else if (buffer) {
            if (!entry.persistent) {
                module.attributes.push_back(
                    {t.name, "Tensor (non-persistent buffer)", tensorMeta.text()});
            }
            module.buffers.push_back(std::move(t));
        } else {
            module.attributes.push_back({t.name, "Tensor (constant)", tensorMeta.text()});
        }
    }
    info.sumTotals();
    if (const Pt2CompiledModel* compiled = exported.compiled()) {
        const auto device = compiled->metadata.find("AOTI_DEVICE_KEY");
        info.modules.front().attributes.push_back(
            {"(compiled model)", "AOTInductor",
             "'" + compiled->name + "' for " +
                 (device == compiled->metadata.end() ? std::string("?") : device->second) + ", " +
                 formatBytes(compiled->libraryBytes)});
    }
    MethodInfo forward;
    forward.name = "forward";
    forward.schema = forwardSchema(model);
    for (const Pt2SignatureEntry& entry : model.inputs) {
        if (entry.kind == "USER_INPUT") {
            const auto meta = model.tensors.find(entry.name);
            forward.inputAnnotations.push_back(meta == model.tensors.end() ? std::string()
                                                                           : meta->second.text());
        }
    }
    forward.sampleInputs = model.sampleInputs;
    forward.code = exportedProgramText(model);
    forward.graph = exportedGraphText(model);
    info.modules.front().methods.push_back(std::move(forward));
    info.methodCount = 1;
    info.loadMilliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return exported;
}

Status ExportedProgram::check(const std::string& modulePath, const std::string& method) const {
    if (!modulePath.empty() || method != "forward") {
        return Error{ErrorKind::Input,
                     "an exported program has one method, the root's forward: " +
                         (modulePath.empty() ? std::string("(root)") : modulePath) + "." + method +
                         " is inlined into it"};
    }
    return std::nullopt;
}

Expected<std::string> ExportedProgram::code(const std::string& modulePath,
                                            const std::string& method) const {
    if (auto error = check(modulePath, method)) {
        return *error;
    }
    return info_.modules.front().methods.front().code;
}

Status ExportedProgram::checkGraph(const std::string& modulePath, const std::string& method) const {
    if (auto error = check(modulePath, method)) {
        return error;
    }
    if (archive_.models.empty()) {
        return Error{ErrorKind::Input,
                     "'" + info_.path +
                         "' holds a compiled model without its exported program: it has no graph "
                         "to show"};
    }
    return std::nullopt;
}

Expected<std::string> ExportedProgram::graph(const std::string& modulePath,
                                             const std::string& method) const {
    if (auto error = checkGraph(modulePath, method)) {
        return *error;
    }
    return info_.modules.front().methods.front().graph;
}

Expected<GraphModel> ExportedProgram::graphModel(const std::string& modulePath,
                                                 const std::string& method) const {
    if (auto error = checkGraph(modulePath, method)) {
        return *error;
    }
    const Pt2Model& model = program();
    GraphModel g;
    g.method = "forward";
    g.inlined = true;
    const auto annotation = [&model](const std::string& value) {
        if (const auto t = model.tensors.find(value); t != model.tensors.end()) {
            return t->second.text();
        }
        if (const auto s = model.symbols.find(value); s != model.symbols.end()) {
            return "Sym(" + s->second + ")";
        }
        return std::string();
    };
    // Parameters, buffers and constants are drawn as their users' attributes, as a TorchScript
    // graph's GetAttr values are: "4x3x3x3 float32 (conv.weight)".
    std::map<std::string, std::string> folded;
    std::map<std::string, int> graphInputs;
    for (const Pt2SignatureEntry& entry : model.inputs) {
        if (entry.kind == "USER_INPUT" || entry.target.empty()) {
            graphInputs[entry.name] = static_cast<int>(g.inputs.size());
            g.inputs.push_back({entry.name, annotation(entry.name)});
            continue;
        }
        std::string shape;
        if (const auto t = model.tensors.find(entry.name); t != model.tensors.end()) {
            for (size_t i = 0; i < t->second.sizes.size(); ++i) {
                shape += (i ? "x" : "") + t->second.sizes[i];
            }
            shape = (shape.empty() ? std::string("scalar") : shape) + " " + t->second.dtype;
        }
        folded[entry.name] =
            (shape.empty() ? std::string() : shape + " ") + "(" + entry.target + ")";
    }
    for (const Pt2Model& subgraph : model.subgraphs) {
        folded[subgraph.name] =
            "graph " + subgraph.name + " (" + std::to_string(subgraph.nodes.size()) + " calls)";
    }
    GraphGroup root;
    root.label = "(root)";
    root.type = shortType(info_.modules.front().type);
    root.parameters = static_cast<int64_t>(info_.modules.front().totalParameterCount);
    g.groups.push_back(root);
    std::map<std::string, int> groups{{"", 0}};
    const auto groupOf = [&](const std::vector<Pt2ModuleFrame>& stack) {
        int group = 0;
        for (const Pt2ModuleFrame& frame : stack) {
            const std::string path = modulePathOf(frame);
            if (path.empty()) {
                continue;
            }
            auto found = groups.find(path);
            if (found == groups.end()) {
                GraphGroup added;
                added.id = static_cast<int>(g.groups.size());
                added.parent = group;
                added.module = path;
                added.type = shortType(frame.type);
                const std::string& parent = g.groups[static_cast<size_t>(group)].module;
                added.label = parent.empty() || path.compare(0, parent.size() + 1, parent + ".")
                                  ? path
                                  : path.substr(parent.size() + 1);
                if (const ModuleInfo* module = info_.findModule(path)) {
                    added.parameters = static_cast<int64_t>(module->totalParameterCount);
                }
                added.depth = g.groups[static_cast<size_t>(group)].depth + 1;
                g.groups.push_back(added);
                found = groups.emplace(path, added.id).first;
            }
            group = found->second;
        }
        return group;
    };
    const std::vector<FxNode> fx = fxNodes(model);
    std::map<std::string, int> producers; // value -> node id
    for (size_t line = 0; line < fx.size(); ++line) {
        const FxNode& node = fx[line];
        if (node.op != "call_function" || node.source < 0) {
            continue;
        }
        const Pt2Node& source = model.nodes[static_cast<size_t>(node.source)];
        if (node.callable == "operator.getitem") {
            continue; // a value of the call before it: an output port of that node
        }
        GraphNode n;
        n.id = static_cast<int>(g.nodes.size());
        n.kind = kindOf(source.target);
        n.schema = source.target;
        n.module =
            source.moduleStack.empty() ? std::string() : modulePathOf(source.moduleStack.back());
        n.group = groupOf(source.moduleStack);
        n.irLine = static_cast<int>(line) + 2; // after "graph():"
        const std::string summary = stackTraceSummary(source.stackTrace);
        if (!summary.empty()) {
            // "File: FILE:LINE in NAME, code: CODE"
            const size_t in = summary.find(" in ");
            const size_t code = summary.find(", code: ");
            n.source = summary.substr(6, in - 6);
            const size_t colon = n.source.rfind(':');
            n.sourceLine = colon == std::string::npos ? 0 : std::atoi(n.source.c_str() + colon + 1);
            n.sourceText = code == std::string::npos ? "" : summary.substr(code + 8);
        }
        for (const Pt2Argument& argument : source.inputs) {
            const bool drawn =
                std::any_of(argument.values.begin(), argument.values.end(),
                            [&folded](const std::string& value) { return !folded.count(value); });
            if (argument.values.size() == 1 && folded.count(argument.values.front())) {
                n.attributes.push_back({argument.name, folded[argument.values.front()]});
            } else if (!drawn) {
                n.attributes.push_back({argument.name, argument.text});
            }
            for (const std::string& value : argument.values) {
                if (!folded.count(value)) {
                    n.inputs.push_back({value, annotation(value)});
                }
            }
        }
        for (const std::string& value : source.outputs) {
            if (!value.empty()) {
                n.outputs.push_back({value, annotation(value)});
                producers[value] = n.id;
            }
        }
        g.nodes.push_back(std::move(n));
    }
    const auto connect = [&](const std::string& value, int to, int toOutput) {
        GraphEdge e;
        e.to = to;
        e.toOutput = toOutput;
        e.value = value;
        e.type = annotation(value);
        if (const auto p = producers.find(value); p != producers.end()) {
            e.from = p->second;
        } else if (const auto i = graphInputs.find(value); i != graphInputs.end()) {
            e.fromInput = i->second;
        } else {
            return; // folded, or not a value
        }
        g.edges.push_back(std::move(e));
    };
    for (const GraphNode& node : g.nodes) {
        std::set<std::string> seen;
        for (const GraphPort& input : node.inputs) {
            if (seen.insert(input.name).second) {
                connect(input.name, node.id, -1);
            }
        }
    }
    for (size_t i = 0; i < model.graphOutputs.size(); ++i) {
        g.outputs.push_back({model.graphOutputs[i], annotation(model.graphOutputs[i])});
        connect(model.graphOutputs[i], -1, static_cast<int>(i));
    }
    markRepeatedGroups(g);
    return g;
}

} // namespace scriptscope
