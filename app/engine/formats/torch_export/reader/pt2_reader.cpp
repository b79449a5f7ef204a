#include "pt2_reader.h"
#include "pt2_values.h"

#include "format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>

namespace scriptscope {
namespace {

using namespace pt2;

struct TooDeep : std::runtime_error {
    TooDeep()
        : std::runtime_error("nested too deeply") {}
};

// A JSON text parsed with its nesting bounded (a nesting bomb stops at the limit, before a deep
// tree is built); nullopt with why.
std::optional<json> parseBounded(const std::string& text, int maxDepth, std::string& why) {
    try {
        json parsed = json::parse(
            text,
            [maxDepth](int depth, json::parse_event_t event, json&) {
                if ((event == json::parse_event_t::object_start ||
                     event == json::parse_event_t::array_start) &&
                    depth >= maxDepth) {
                    throw TooDeep();
                }
                return true;
            },
            /*allow_exceptions=*/true, /*ignore_comments=*/false);
        return parsed;
    } catch (const TooDeep&) {
        why = "its JSON is nested more than " + std::to_string(maxDepth) + " levels deep";
    } catch (const json::exception& error) {
        why = std::string("its JSON does not parse: ") + error.what();
    }
    return std::nullopt;
}

// "key,path,type;key,path,type": commas inside brackets belong to the path.
std::vector<Pt2ModuleFrame> moduleStack(const std::string& text) {
    std::vector<Pt2ModuleFrame> frames;
    size_t start = 0;
    while (start <= text.size() && !text.empty()) {
        const size_t end = std::min(text.find(';', start), text.size());
        const std::string item = text.substr(start, end - start);
        std::vector<std::string> parts;
        int nesting = 0;
        size_t from = 0;
        for (size_t i = 0; i < item.size(); ++i) {
            const char c = item[i];
            nesting += (c == '[' || c == '(') ? 1 : (c == ']' || c == ')') ? -1 : 0;
            if (c == ',' && nesting == 0) {
                parts.push_back(item.substr(from, i - from));
                from = i + 1;
            }
        }
        parts.push_back(item.substr(from));
        if (parts.size() == 3) {
            frames.push_back({parts[0], parts[1], parts[2]});
        }
        start = end + 1;
    }
    return frames;
}

const char* inputKind(const std::string& kind) {
    if (kind == "user_input")
        return "USER_INPUT";
    if (kind == "parameter")
        return "PARAMETER";
    if (kind == "buffer")
        return "BUFFER";
    if (kind == "tensor_constant")
        return "CONSTANT_TENSOR";
    if (kind == "custom_obj")
        return "CUSTOM_OBJ";
    if (kind == "token")
        return "TOKEN";
    if (kind == "constant_input")
        return "USER_INPUT";
    return nullptr;
}

const char* outputKind(const std::string& kind) {
    if (kind == "user_output")
        return "USER_OUTPUT";
    if (kind == "loss_output")
        return "LOSS_OUTPUT";
    if (kind == "buffer_mutation")
        return "BUFFER_MUTATION";
    if (kind == "gradient_to_parameter")
        return "GRADIENT_TO_PARAMETER";
    if (kind == "gradient_to_user_input")
        return "GRADIENT_TO_USER_INPUT";
    if (kind == "user_input_mutation")
        return "USER_INPUT_MUTATION";
    if (kind == "token")
        return "TOKEN";
    if (kind == "parameter_mutation")
        return "PARAMETER_MUTATION";
    return nullptr;
}

// The value a signature entry names: arg.name, or arg.as_tensor.name (a user value).
std::string specValue(const json& spec) {
    const json& arg = member(spec, "arg");
    if (const std::string name = stringOf(member(arg, "name")); !name.empty()) {
        return name;
    }
    const auto [kind, inner] = unionOf(arg);
    if (inner) {
        if (kind == "as_constant") {
            return "constant";
        }
        const std::string name = stringOf(member(*inner, "name"));
        return name.empty() ? argumentText(arg, 0) : name;
    }
    return stringOf(member(spec, "name"));
}

std::string specTarget(const json& spec) {
    for (const char* key : {"parameter_name", "buffer_name", "tensor_constant_name",
                            "custom_obj_name", "user_input_name"}) {
        if (const std::string target = stringOf(member(spec, key)); !target.empty()) {
            return target;
        }
    }
    return {};
}

void readSignature(const json& signature, Pt2Model& model) {
    for (const json& spec : member(signature, "input_specs")) {
        const auto [kind, inner] = unionOf(spec);
        if (!inner) {
            continue;
        }
        const char* name = inputKind(kind);
        Pt2SignatureEntry entry{name ? name : kind, specValue(*inner), specTarget(*inner), true};
        if (member(*inner, "persistent").is_boolean()) {
            entry.persistent = member(*inner, "persistent").get<bool>();
        }
        model.inputs.push_back(std::move(entry));
    }
    for (const json& spec : member(signature, "output_specs")) {
        const auto [kind, inner] = unionOf(spec);
        if (!inner) {
            continue;
        }
        const char* name = outputKind(kind);
        model.outputs.push_back({name ? name : kind, specValue(*inner), specTarget(*inner), true});
    }
}

void readGraph(const json& graph, const Pt2Limits& limits, Pt2Model& model, int depth = 0) {
    const json& tensors = member(graph, "tensor_values");
    if (tensors.is_object()) {
        for (auto it = tensors.begin(); it != tensors.end(); ++it) {
            model.tensors.emplace(it.key(), tensorMeta(it.value()));
        }
    }
    const json& symbols = member(graph, "sym_int_values");
    if (symbols.is_object()) {
        for (auto it = symbols.begin(); it != symbols.end(); ++it) {
            model.symbols.emplace(it.key(), symIntText(it.value()));
        }
    }
    for (const json& input : member(graph, "inputs")) {
        model.graphInputs.push_back(argumentText(input, 0));
        model.inputValues.push_back(argumentValue(input));
    }
    for (const json& output : member(graph, "outputs")) {
        model.graphOutputs.push_back(argumentText(output, 0));
        model.outputValues.push_back(argumentValue(output));
    }
    const json& single = member(graph, "is_single_tensor_return");
    model.singleTensorReturn =
        single.is_boolean() && single.get<bool>() && model.graphOutputs.size() == 1;
    const json& nodes = member(graph, "nodes");
    if (!nodes.is_array()) {
        model.notes.push_back("its graph has no nodes list");
        return;
    }
    if (nodes.size() > limits.maxNodes) {
        model.notes.push_back("its graph has " + std::to_string(nodes.size()) +
                              " nodes: only the first " + std::to_string(limits.maxNodes) +
                              " are read");
    }
    for (size_t i = 0; i < nodes.size() && i < limits.maxNodes; ++i) {
        const json& n = nodes[i];
        Pt2Node node;
        node.target = stringOf(member(n, "target"));
        for (const json& input : member(n, "inputs")) {
            const json& kind = member(input, "kind");
            const json& arg = member(input, "arg");
            Pt2Argument argument{stringOf(member(input, "name")),
                                 argumentText(arg, 0),
                                 argumentText(arg, 0, ArgumentStyle::Str),
                                 {},
                                 kind.is_number_integer() && kind.get<int>() == 2,
                                 {}};
            argumentValues(arg, argument.values);
            argument.value = argumentValue(arg);
            node.inputs.push_back(std::move(argument));
            const auto [argKind, inner] = unionOf(arg);
            if (argKind == "as_graph" && inner && depth < 16) {
                Pt2Model subgraph;
                subgraph.name = stringOf(member(*inner, "name"));
                readGraph(member(*inner, "graph"), limits, subgraph, depth + 1);
                node.subgraphs.push_back(subgraph.name);
                model.subgraphs.push_back(std::move(subgraph));
            }
        }
        for (const json& output : member(n, "outputs")) {
            node.returns.push_back(argumentValue(output));
            const auto [kind, inner] = unionOf(output);
            std::string name;
            if (inner && (kind == "as_tensor" || kind == "as_sym_int" || kind == "as_sym_float" ||
                          kind == "as_sym_bool")) {
                name = kind == "as_tensor" ? tensorName(*inner) : symText(*inner);
            } else if (inner && kind == "as_tensors") {
                node.multipleOutputs = true;
                for (const json& t : *inner) {
                    node.outputs.push_back(tensorName(t));
                }
                continue;
            }
            node.outputs.push_back(name);
        }
        node.multipleOutputs = node.multipleOutputs || node.outputs.size() > 1;
        // A control flow operator returns a tuple even of one value, unless the archive says it
        // returns the value itself (serialize.py's is_hop_single_tensor_return).
        const json& oneValue = member(n, "is_hop_single_tensor_return");
        if (node.target.rfind("torch.ops.higher_order.", 0) == 0 && node.outputs.size() == 1 &&
            !node.outputs.front().empty() && !(oneValue.is_boolean() && oneValue.get<bool>())) {
            node.multipleOutputs = true;
        }
        node.name = stringOf(member(n, "name"));
        if (node.name.empty() && !node.outputs.empty()) {
            node.name = node.outputs.front();
        }
        const json& metadata = member(n, "metadata");
        node.moduleStack = moduleStack(stringOf(member(metadata, "nn_module_stack")));
        node.stackTrace = stringOf(member(metadata, "stack_trace"));
        model.nodes.push_back(std::move(node));
    }
}

void readRangeConstraints(const json& constraints, Pt2Model& model) {
    if (!constraints.is_object()) {
        return;
    }
    for (auto it = constraints.begin(); it != constraints.end(); ++it) {
        const auto bound = [](const json& value) {
            return value.is_number() ? numberText(value) : std::string("int_oo");
        };
        model.rangeConstraints.emplace_back(it.key(),
                                            "VR[" + bound(member(it.value(), "min_val")) + ", " +
                                                bound(member(it.value(), "max_val")) + "]");
    }
}

// The exported program's JSON (a model of the archive, or the early layout's one program).
// The root's entry of the module call graph: its out_spec, how ep.module() nests the user outputs.
// A NamedTuple's fields by name, where the archive says them (treespec_namedtuple_fields).
void nameFields(const json& fields, PytreeSpec& spec, int depth) {
    if (depth > kMaxPytreeDepth) {
        return;
    }
    if (spec.kind == PytreeSpec::Kind::Tuple && spec.type != "builtins.tuple") {
        const json& names = member(member(fields, spec.type.c_str()), "field_names");
        if (names.is_array() && names.size() == spec.children.size()) {
            for (const json& name : names) {
                spec.keys.push_back(stringOf(name));
            }
        }
    }
    for (PytreeSpec& child : spec.children) {
        nameFields(fields, child, depth + 1);
    }
}

void readOutputSpec(const json& callGraph, const json& namedTupleFields, Pt2Model& model) {
    if (!callGraph.is_array()) {
        model.outputSpecNote = "the archive keeps no module call graph";
        return;
    }
    for (const json& entry : callGraph) {
        if (!member(entry, "fqn").is_string() || !stringOf(member(entry, "fqn")).empty()) {
            continue;
        }
        const json& spec = member(member(entry, "signature"), "out_spec");
        if (!spec.is_string()) {
            model.outputSpecNote = "the module call graph keeps no output spec for the root";
            return;
        }
        std::string why;
        model.outputSpec = parseTreespecJson(spec.get<std::string>(), why);
        if (!model.outputSpec) {
            model.outputSpecNote = why;
        } else {
            nameFields(namedTupleFields, *model.outputSpec, 0);
        }
        return;
    }
    model.outputSpecNote = "the module call graph has no entry for the root";
}

void readProgram(const json& program, const Pt2Limits& limits, Pt2Model& model) {
    const json& graphModule = member(program, "graph_module");
    readGraph(member(graphModule, "graph"), limits, model);
    readSignature(member(graphModule, "signature"), model);
    // GraphModule.module_call_graph (torch/_export/serde/schema.py).
    readOutputSpec(member(graphModule, "module_call_graph"),
                   member(graphModule, "treespec_namedtuple_fields"), model);
    readRangeConstraints(member(program, "range_constraints"), model);
    model.torchVersion = stringOf(member(program, "torch_version"));
}

void schemaOf(const json& program, Pt2Archive& archive) {
    const json& version = member(program, "schema_version");
    if (member(version, "major").is_number_integer()) {
        archive.schemaMajor = member(version, "major").get<int>();
        archive.schemaMinor =
            member(version, "minor").is_number_integer() ? member(version, "minor").get<int>() : 0;
    }
}

// A weights or constants config: name -> {path_name, tensor_meta, is_param}.
std::vector<Pt2Weight> readConfig(const json& config, const ZipReader& zip, const std::string& dir,
                                  std::vector<std::string>& notes) {
    std::vector<Pt2Weight> out;
    const json& entries = member(config, "config");
    if (!entries.is_object()) {
        return out;
    }
    for (auto it = entries.begin(); it != entries.end(); ++it) {
        Pt2Weight weight;
        weight.name = it.key();
        const json& meta = member(it.value(), "tensor_meta");
        weight.meta = tensorMeta(meta);
        for (const json& stride : member(meta, "strides")) {
            const json& value = member(stride, "as_int");
            weight.strides.push_back(value.is_number_integer() ? value.get<int64_t>() : -1);
        }
        const json& offset = member(member(meta, "storage_offset"), "as_int");
        weight.storageOffset = offset.is_number_integer() ? offset.get<int64_t>() : 0;
        weight.pickled = member(it.value(), "use_pickle").is_boolean() &&
                         member(it.value(), "use_pickle").get<bool>();
        weight.parameter = member(it.value(), "is_param").is_boolean() &&
                           member(it.value(), "is_param").get<bool>();
        const std::string file = stringOf(member(it.value(), "path_name"));
        // A plain file name in the config's folder: a path that climbs out, or names a record
        // that is not there, is refused.
        if (file.empty() || file.find('/') != std::string::npos ||
            file.find('\\') != std::string::npos || file == "." || file == "..") {
            notes.push_back("'" + weight.name + "' names '" + file +
                            "', which is not a file of the archive's " + dir + " folder");
        } else if (const ArchiveRecord* record = zip.find(dir + file)) {
            weight.record = record->name;
            weight.bytes = record->size;
        } else {
            notes.push_back("'" + weight.name + "' is in " + dir + file +
                            ", which the archive does not hold");
        }
        out.push_back(std::move(weight));
    }
    return out;
}

std::optional<json> readJson(const ZipReader& zip, const std::string& name, const Pt2Limits& limits,
                             std::vector<std::string>& notes) {
    const ArchiveRecord* record = zip.find(name);
    if (!record) {
        return std::nullopt;
    }
    if (record->size > limits.maxJsonBytes) {
        notes.push_back(name + " is " + std::to_string(record->size) +
                        " bytes, more than the reader takes");
        return std::nullopt;
    }
    const auto text = zip.read(*record, limits.maxJsonBytes);
    if (!text) {
        notes.push_back(name + " cannot be read (compressed, or outside the file)");
        return std::nullopt;
    }
    std::string why;
    auto parsed = parseBounded(*text, limits.maxDepth, why);
    if (!parsed) {
        notes.push_back(name + ": " + why);
    }
    return parsed;
}

// The records' top folder, when they all share one.
std::string rootOf(const ZipReader& zip) {
    std::string root;
    for (const auto& record : zip.records()) {
        const auto slash = record.name.find('/');
        const std::string top =
            slash == std::string::npos ? std::string() : record.name.substr(0, slash);
        if (top.empty()) {
            return {};
        }
        if (root.empty()) {
            root = top;
        } else if (root != top) {
            return {};
        }
    }
    return root;
}

std::string readSmall(const ZipReader& zip, const std::string& name) {
    const ArchiveRecord* record = zip.find(name);
    const auto text = record ? zip.read(*record, 256) : std::nullopt;
    std::string out = text.value_or("");
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) {
        out.pop_back();
    }
    return out;
}

bool startsWith(const std::string& text, const std::string& prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

bool endsWith(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void checkSchema(Pt2Archive& archive) {
    if (archive.schemaMajor > kPt2SchemaMajor ||
        (archive.schemaMajor == kPt2SchemaMajor && archive.schemaMinor > kPt2SchemaMinor)) {
        archive.notes.push_back(
            "written with export schema " + std::to_string(archive.schemaMajor) + "." +
            std::to_string(archive.schemaMinor) + ", newer than the " +
            std::to_string(kPt2SchemaMajor) + "." + std::to_string(kPt2SchemaMinor) +
            " this reader knows: what it shows may be incomplete");
    }
}

// data/aotinductor/<name>/: each compiled model with its metadata (the device and CPU it was
// compiled for).
void readCompiled(const ZipReader& zip, const std::string& prefix, const Pt2Limits& limits,
                  Pt2Archive& archive) {
    const std::string base = prefix + "data/aotinductor/";
    for (const auto& record : zip.records()) {
        if (!startsWith(record.name, base)) {
            continue;
        }
        const std::string rest = record.name.substr(base.size());
        const size_t slash = rest.find('/');
        if (slash == std::string::npos || slash == 0) {
            continue;
        }
        const std::string name = rest.substr(0, slash);
        auto it = std::find_if(archive.compiled.begin(), archive.compiled.end(),
                               [&name](const Pt2CompiledModel& m) { return m.name == name; });
        if (it == archive.compiled.end()) {
            archive.compiled.push_back({name, {}, {}, 0});
            it = archive.compiled.end() - 1;
        }
        if (endsWith(rest, ".so")) {
            it->libraryBytes += record.size;
        } else if (endsWith(rest, ".wrapper.cpp")) {
            it->wrapperSource = record.name;
        } else if (endsWith(rest, ".wrapper_metadata.json")) {
            std::vector<std::string> notes;
            if (const auto metadata = readJson(zip, record.name, limits, notes)) {
                if (metadata->is_object()) {
                    for (auto m = metadata->begin(); m != metadata->end(); ++m) {
                        it->metadata[m.key()] =
                            m.value().is_string() ? m.value().get<std::string>() : m.value().dump();
                    }
                }
            }
        }
    }
}

} // namespace

const Pt2CompiledModel* findCompiled(const Pt2Archive& archive, const std::string& name) {
    for (const Pt2CompiledModel& model : archive.compiled) {
        if (model.name == name) {
            return &model;
        }
    }
    return nullptr;
}

std::string Pt2TensorMeta::text() const {
    std::string out = shortDtype + "[";
    for (size_t i = 0; i < sizes.size(); ++i) {
        out += (i ? ", " : "") + sizes[i];
    }
    return out + "]";
}

std::vector<std::string> signatureLines(const Pt2Model& model) {
    std::vector<std::string> lines{"# inputs"};
    const auto line = [](const Pt2SignatureEntry& e) {
        std::string text = e.name + ": " + e.kind;
        if (!e.target.empty()) {
            text += " target=" + pythonString(e.target);
        }
        if (e.kind == "BUFFER") {
            text += e.persistent ? " persistent=True" : " persistent=False";
        }
        return text;
    };
    for (const auto& entry : model.inputs) {
        lines.push_back(line(entry));
    }
    lines.emplace_back();
    lines.emplace_back("# outputs");
    for (const auto& entry : model.outputs) {
        lines.push_back(line(entry));
    }
    return lines;
}

bool isPt2Archive(const ZipReader& zip) {
    if (!zip.ok()) {
        return false;
    }
    const std::string root = rootOf(zip);
    const std::string prefix = root.empty() ? std::string() : root + "/";
    if (const std::string format = readSmall(zip, prefix + "archive_format");
        startsWith(format, "pt2")) {
        return true;
    }
    return zip.find("serialized_exported_program.json") != nullptr ||
           zip.find(prefix + "serialized_exported_program.json") != nullptr;
}

Pt2Archive readPt2Archive(const ZipReader& zip, const Pt2Limits& limits) {
    Pt2Archive archive;
    if (!zip.ok()) {
        archive.error = zip.error();
        return archive;
    }
    archive.root = rootOf(zip);
    const std::string prefix = archive.root.empty() ? std::string() : archive.root + "/";
    const bool modern = startsWith(readSmall(zip, prefix + "archive_format"), "pt2");
    if (!modern) {
        // The early layout: one program, its version as "major.minor".
        std::string base = zip.find("serialized_exported_program.json") ? "" : prefix;
        const auto program =
            readJson(zip, base + "serialized_exported_program.json", limits, archive.notes);
        if (!zip.find(base + "serialized_exported_program.json")) {
            archive.error = "not a torch.export archive: no archive_format record and no "
                            "serialized_exported_program.json";
            return archive;
        }
        archive.layout = "serialized_exported_program (PyTorch 2.1 to 2.7)";
        archive.root = base.empty() ? "" : archive.root;
        const std::string version = readSmall(zip, base + "version");
        archive.archiveVersion = version;
        if (const auto dot = version.find('.'); dot != std::string::npos) {
            archive.schemaMajor = std::atoi(version.substr(0, dot).c_str());
            archive.schemaMinor = std::atoi(version.substr(dot + 1).c_str());
        }
        if (!program) {
            archive.error =
                archive.notes.empty() ? "its program does not read" : archive.notes.back();
            return archive;
        }
        Pt2Model model;
        model.name = "model";
        readProgram(*program, limits, model);
        if (archive.schemaMajor < 0) {
            schemaOf(*program, archive);
        }
        model.sampleInputs = zip.find(base + "serialized_example_inputs.pt") != nullptr;
        if (model.sampleInputs) {
            model.sampleInputsRecord = base + "serialized_example_inputs.pt";
        }
        for (const char* part : {"serialized_state_dict.pt", "serialized_constants.pt"}) {
            if (zip.find(base + part)) {
                model.pickledWeights.push_back(base + part);
            }
            if (!zip.find(base + part)) {
                model.notes.push_back(std::string("it has no ") + part);
            }
        }
        archive.models.push_back(std::move(model));
        for (const auto& record : zip.records()) {
            if (startsWith(record.name, base + "extra_files/")) {
                archive.extraFiles.push_back(record.name.substr(base.size() + 12));
            }
        }
        checkSchema(archive);
        archive.ok = true;
        return archive;
    }
    archive.layout = "pt2 archive (PyTorch 2.8 and later)";
    archive.archiveVersion = readSmall(zip, prefix + "archive_version");
    std::vector<std::string> modelNames;
    for (const auto& record : zip.records()) {
        const std::string& name = record.name;
        if (startsWith(name, prefix + "models/") && endsWith(name, ".json")) {
            const std::string model =
                name.substr(prefix.size() + 7, name.size() - prefix.size() - 12);
            if (!model.empty() && model.find('/') == std::string::npos) {
                modelNames.push_back(model);
            }
        } else if (startsWith(name, prefix + "data/aotinductor/")) {
            archive.aotInductorFiles.push_back(name.substr(prefix.size()));
        } else if (startsWith(name, prefix + "extra/")) {
            archive.extraFiles.push_back(name.substr(prefix.size() + 6));
        }
    }
    std::sort(modelNames.begin(), modelNames.end());
    for (const std::string& name : modelNames) {
        Pt2Model model;
        model.name = name;
        const auto program =
            readJson(zip, prefix + "models/" + name + ".json", limits, model.notes);
        if (program) {
            readProgram(*program, limits, model);
            if (archive.schemaMajor < 0) {
                schemaOf(*program, archive);
            }
        }
        if (const auto weights =
                readJson(zip, prefix + "data/weights/" + name + "_weights_config.json", limits,
                         model.notes)) {
            model.weights = readConfig(*weights, zip, prefix + "data/weights/", model.notes);
        }
        if (const auto constants =
                readJson(zip, prefix + "data/constants/" + name + "_constants_config.json", limits,
                         model.notes)) {
            model.constants = readConfig(*constants, zip, prefix + "data/constants/", model.notes);
        }
        model.sampleInputs = zip.find(prefix + "data/sample_inputs/" + name + ".pt") != nullptr;
        if (model.sampleInputs) {
            model.sampleInputsRecord = prefix + "data/sample_inputs/" + name + ".pt";
        }
        archive.models.push_back(std::move(model));
    }
    readCompiled(zip, prefix, limits, archive);
    if (archive.models.empty() && archive.aotInductorFiles.empty()) {
        archive.notes.push_back("it holds no models/<name>.json and no compiled model");
    }
    checkSchema(archive);
    archive.ok = true;
    return archive;
}

} // namespace scriptscope
