#include "exported_program.h"

#include <format.h>
#include <parameter_counts.h>
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

// A size as a number; -1 where it is a symbol's expression ("s0", "2*s0").
int64_t staticSize(const std::string& size) {
    try {
        size_t used = 0;
        const long long value = std::stoll(size, &used);
        return used == size.size() ? value : -1;
    } catch (const std::exception&) {
        return -1;
    }
}

std::vector<int64_t> staticShape(const Pt2TensorMeta& meta, bool& symbolic) {
    std::vector<int64_t> shape;
    for (const std::string& size : meta.sizes) {
        shape.push_back(staticSize(size));
        symbolic = symbolic || shape.back() < 0;
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
    // The modules the graphs of control flow call are called too (torch.cond's branches, a
    // while_loop's body): their nodes' stacks count, else those modules would read "(not
    // called)".
    const auto addStacks = [&](const Pt2Model& graph, int depth, const auto& self) -> void {
        for (const Pt2Node& node : graph.nodes) {
            for (const Pt2ModuleFrame& frame : node.moduleStack) {
                add(exported::modulePathOf(frame), frame.type, add);
            }
        }
        for (const Pt2Model& subgraph : graph.subgraphs) {
            if (depth < 16) {
                self(subgraph, depth + 1, self);
            }
        }
    };
    addStacks(model, 0, addStacks);
    // torch.export records no nn_module_stack inside those graphs: a module whose weights a
    // control flow operator takes as operands (lifted into its graphs) is called there.
    std::map<std::string, std::string> weightModules; // placeholder -> its module
    for (const Pt2SignatureEntry& entry : model.inputs) {
        if (!entry.target.empty() && entry.kind != "USER_INPUT") {
            weightModules[entry.name] = parentOf(entry.target);
        }
    }
    std::map<std::string, std::string> calledIn; // module -> the operator its weights went to
    for (const Pt2Node& node : model.nodes) {
        if (node.subgraphs.empty()) {
            continue;
        }
        for (const Pt2Argument& argument : node.inputs) {
            for (const std::string& value : argument.values) {
                if (const auto found = weightModules.find(value); found != weightModules.end()) {
                    calledIn.emplace(found->second, exported::kindOf(node.target));
                }
            }
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
        const auto inside = calledIn.find(path);
        m.type = !types[path].empty() ? types[path]
                 : path.empty()       ? "ExportedProgram"
                 : inside != calledIn.end()
                     ? "(called inside " + inside->second + "; its type is not recorded there)"
                     : "(not called)";
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
            module.parameterCount += elementCount(t);
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
            if (forward.inputAnnotations.size() == 1 && meta != model.tensors.end()) {
                bool symbolic = false;
                forward.setImageInput(staticShape(meta->second, symbolic));
            }
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

} // namespace scriptscope
