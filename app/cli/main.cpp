// scriptscope-cli: the engine, headless and scriptable.
#include "isolation.h"

#include <engine.h>
#include <format.h>
#include <input_spec.h>
#include <matrix_io.h>
#include <process_limits.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#ifndef SCRIPTSCOPE_VERSION
#error "SCRIPTSCOPE_VERSION comes from CMake"
#endif

namespace scriptscope::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCrashed = 3;
constexpr int kExitTimedOut = 4;

const char* const kUsage = R"(Usage: scriptscope-cli COMMAND [ARGUMENTS] [OPTIONS]

Inspect, run and warp with exported PyTorch (TorchScript) models.

Commands:
  info MODEL [--show-code] [--json]
                          What the file is, read without executing it (a safe preview): records,
                          serialization version, extra files, operators used and whether each is
                          registered, tensor storages (dtype, size, where saved; short or missing
                          data is reported as damage), and the code files (--show-code prints
                          them).
  tree MODEL [--json]     The module tree: types, parameters, buffers, attributes, methods.
  code MODEL [--module PATH] [--method NAME]
                          What Python prints for model.PATH.NAME.code (default: root, forward).
  graph MODEL [--module PATH] [--method NAME] [--inlined]
                          str(model.PATH.NAME.graph); --inlined: str(model.inlined_graph).
  run MODEL [--method NAME] [--input SPEC]... [--inputs FILE] [--device D] [--warmup N]
            [--iters N] [--json] [--save-outputs FILE] [--profile]
                          Runs a method and times it. One --input per argument:
                            random:1x3x224x224[:DTYPE[:SEED]]  zeros:2x3:int64  ones:4
                            image:photo.png[,size=224x224][,order=rgb|bgr][,layout=chw|hwc]
                                 [,batch=0|1][,dtype=float32][,scale=1/255][,mean=a/b/c]
                                 [,std=a/b/c][,gray=1][,preset=imagenet]
                            file:x.pt (a value written by torch.save)
                            matrix:h.npy[#node] (a 3x3 float32 homography from a matrix file)
                            3   3.5   true   false   none   str:TEXT   ints:1,2   floats:0.5,1
                            list:SPEC;SPEC;...  tuple:SPEC;SPEC  dict:KEY=SPEC;KEY=SPEC
                                 (each element any spec, e.g. a detector's List[Tensor]:
                                 'list:image:a.png,batch=0;image:b.png,batch=0'; [..] nests:
                                 'list:[list:ones:2;ones:3];ones:4'; 'list:' is empty)
                          --inputs FILE: every argument from one torch.save file (a tensor, or
                          a tuple/list with one value per argument; a list that fits a first
                          List[...] argument is that argument). --device: cpu, cuda,
                          cuda:N. --save-outputs: a file Python's torch.load reads.
                          --profile: one more run times every operator call and gives each
                          module's share (the timed iterations run without it).
  warp IMAGE (--matrix FILE [--matrix-node NAME] | --corners x0,y0,x1,y1,x2,y2,x3,y3) -o OUT
            [--size WxH] [--interp nearest|linear|cubic|lanczos4]
            [--border constant|replicate|reflect|reflect101|wrap] [--border-value V] [--inverse]
                          Warps an image with my_ops::warp_perspective. The matrix maps source
                          pixels to output pixels, as cv::warpPerspective (JSON, NumPy .npy,
                          OpenCV FileStorage .xml/.yml). --corners: where the image's corners
                          (top-left, top-right, bottom-right, bottom-left) go.
  devices [--json]        The devices runs can use, and why CUDA is unavailable if it is.

Options for every command:
  --op-library PATH       Load a library of operators first (repeatable), e.g. torchvision's
                          _C library for torchvision::nms.
  --timeout S             Time limit in seconds for the work (default 300).
  --memory-limit MB       Memory limit for the work (default: 3/4 of physical memory).
  --in-process            Do the work in this process, without isolation (for debugging).
  --verbose               Print error messages in full (LibTorch's can span many lines).
  -h, --help              This text.
  --version               Version of scriptscope-cli and of the libraries it uses.

Exit status: 0 success; 1 bad input or model error; 2 usage error; 3 the work crashed or hit the
memory limit; 4 the work timed out.
)";

struct Options {
    std::string command;
    std::vector<std::string> positional;
    std::vector<std::string> opLibraries;
    bool json = false;
    bool showCode = false;
    bool inProcess = false;
    bool supervised = false; // set on the child by the supervising parent
    bool verbose = false;
    double timeout = 300;
    uint64_t memoryLimit = 0;
    bool memoryLimitGiven = false;
    std::string module;
    std::string method = "forward";
    bool inlined = false;
    RunRequest run;
    std::vector<std::string> inputSpecs;
    // warp
    std::string matrixFile;
    std::string matrixNode;
    std::string corners;
    std::string output;
    std::string size;
    std::string interpolation = "linear";
    std::string border = "constant";
    double borderValue = 0;
    bool inverse = false;
};

struct UsageError {
    std::string message;
};

int usage(const std::string& message) {
    std::cerr << "scriptscope-cli: " << message << "\nTry 'scriptscope-cli --help'.\n";
    return kExitUsage;
}

double parseNumber(const std::string& option, const std::string& value) {
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') {
        throw UsageError{option + " expects a number, got '" + value + "'"};
    }
    return number;
}

int parseCount(const std::string& option, const std::string& value, int minimum) {
    const double number = parseNumber(option, value);
    if (number != static_cast<int>(number) || number < minimum || number > 1e8) {
        throw UsageError{option + " expects a whole number of at least " + std::to_string(minimum) +
                         ", got '" + value + "'"};
    }
    return static_cast<int>(number);
}

Options parseArguments(const std::vector<std::string>& args) {
    Options o;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) {
                throw UsageError{a + " needs a value"};
            }
            return args[++i];
        };
        if (a == "--json") {
            o.json = true;
        } else if (a == "--in-process") {
            o.inProcess = true;
        } else if (a == "--supervised") {
            o.supervised = true;
        } else if (a == "--verbose") {
            o.verbose = true;
        } else if (a == "--inlined") {
            o.inlined = true;
        } else if (a == "--inverse") {
            o.inverse = true;
        } else if (a == "--op-library") {
            o.opLibraries.push_back(value());
        } else if (a == "--timeout") {
            o.timeout = parseNumber(a, value());
            if (!(o.timeout > 0)) {
                throw UsageError{"--timeout must be positive"};
            }
        } else if (a == "--memory-limit") {
            const double mb = parseNumber(a, value());
            if (!(mb >= 64)) {
                throw UsageError{"--memory-limit is in MB and must be at least 64"};
            }
            o.memoryLimit = static_cast<uint64_t>(mb * 1024 * 1024);
            o.memoryLimitGiven = true;
        } else if (a == "--module") {
            o.module = value();
        } else if (a == "--method") {
            o.method = value();
        } else if (a == "--input") {
            o.inputSpecs.push_back(value());
        } else if (a == "--inputs") {
            o.run.inputsFile = value();
        } else if (a == "--device") {
            o.run.device = value();
        } else if (a == "--warmup") {
            o.run.warmup = parseCount(a, value(), 0);
        } else if (a == "--iters" || a == "--iterations") {
            o.run.iterations = parseCount(a, value(), 1);
        } else if (a == "--save-outputs") {
            o.run.saveOutputsPath = value();
        } else if (a == "--show-code") {
            o.showCode = true;
        } else if (a == "--profile") {
            o.run.profile = true;
        } else if (a == "--matrix") {
            o.matrixFile = value();
        } else if (a == "--matrix-node") {
            o.matrixNode = value();
        } else if (a == "--corners") {
            o.corners = value();
        } else if (a == "-o" || a == "--output") {
            o.output = value();
        } else if (a == "--size") {
            o.size = value();
        } else if (a == "--interp" || a == "--interpolation") {
            o.interpolation = value();
        } else if (a == "--border") {
            o.border = value();
        } else if (a == "--border-value") {
            o.borderValue = parseNumber(a, value());
        } else if (a.size() > 1 && a[0] == '-') {
            throw UsageError{"unknown option '" + a + "'"};
        } else if (o.command.empty()) {
            o.command = a;
        } else {
            o.positional.push_back(a);
        }
    }
    if (!o.memoryLimitGiven) {
        o.memoryLimit = defaultMemoryLimit();
    }
    static const char* const commands[] = {"info", "tree", "code",   "graph",
                                           "run",  "warp", "devices"};
    if (o.command.empty()) {
        throw UsageError{"no command given"};
    }
    if (std::find(std::begin(commands), std::end(commands), o.command) == std::end(commands)) {
        throw UsageError{"unknown command '" + o.command + "'"};
    }
    const size_t wanted = o.command == "devices" ? 0 : 1;
    if (o.positional.size() != wanted) {
        throw UsageError{o.command + (wanted ? " takes one file" : " takes no file") +
                         (o.positional.size() > wanted ? ", got more" : ", got none")};
    }
    for (const auto& spec : o.inputSpecs) {
        auto parsed = parseInputSpec(spec);
        if (!parsed) {
            throw UsageError{"--input " + parsed.error().message};
        }
        o.run.inputs.push_back(parsed.value());
    }
    o.run.method = o.method;
    if (o.command == "warp") {
        if (o.output.empty()) {
            throw UsageError{"warp needs -o OUTPUT"};
        }
        if (o.matrixFile.empty() == o.corners.empty()) {
            throw UsageError{"warp needs either --matrix FILE or --corners x0,y0,...,x3,y3"};
        }
    }
    return o;
}

std::string firstLine(const std::string& text) {
    const auto start = text.find_first_not_of("\n ");
    if (start == std::string::npos) {
        return text;
    }
    const auto end = text.find('\n', start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

int fail(const Options& o, const Error& error) {
    const std::string message = o.verbose && !error.details.empty()
                                    ? error.message + "\n" + error.details
                                    : firstLine(error.message);
    std::cerr << "scriptscope-cli: " << message;
    if (error.kind == ErrorKind::OutOfMemory && o.supervised) {
        std::cerr << " (memory limit " << formatBytes(o.memoryLimit)
                  << "; --memory-limit MB changes it)";
    }
    std::cerr << "\n";
    return error.kind == ErrorKind::OutOfMemory ? kExitCrashed : kExitError;
}

nlohmann::json tensorJson(const TensorInfo& t) {
    nlohmann::json j{{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype}, {"bytes", t.bytes}};
    if (t.packed) {
        j["packed"] = true;
        j["packed_in"] = t.packedIn;
    }
    if (!t.qscheme.empty()) {
        j["qscheme"] = t.qscheme;
        if (t.axis >= 0) {
            j["scales"] = t.scales;
            j["zero_points"] = t.zeroPoints;
            j["axis"] = t.axis;
        } else {
            j["scale"] = t.scale;
            j["zero_point"] = t.zeroPoint;
        }
    }
    return j;
}

nlohmann::json outputJson(const OutputValue& v) {
    static const char* const kinds[] = {"none",   "tensor", "int",  "float", "bool",
                                        "string", "tuple",  "list", "dict",  "other"};
    nlohmann::json j = {{"kind", kinds[static_cast<int>(v.kind)]}};
    if (!v.key.empty()) {
        j["key"] = v.key;
    }
    if (v.kind == OutputValue::Kind::Tensor) {
        j["shape"] = v.shape;
        j["dtype"] = v.dtype;
        j["device"] = v.device;
        j["min"] = v.min;
        j["max"] = v.max;
        j["mean"] = v.mean;
        j["std"] = v.stddev;
        j["nan"] = v.nanCount;
        j["inf"] = v.infCount;
        j["preview"] = v.preview;
    } else if (!v.children.empty() || v.kind == OutputValue::Kind::Tuple ||
               v.kind == OutputValue::Kind::List || v.kind == OutputValue::Kind::Dict) {
        j["items"] = nlohmann::json::array();
        for (const auto& child : v.children) {
            j["items"].push_back(outputJson(child));
        }
    } else {
        j["value"] = v.text;
    }
    return j;
}

void printOutput(const OutputValue& v, int depth) {
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    const std::string key = v.key.empty() ? std::string() : "[" + v.key + "] ";
    std::cout << indent << key;
    if (v.kind == OutputValue::Kind::Tensor) {
        std::cout << "Tensor" << formatShape(v.shape) << " " << v.dtype << " on " << v.device;
        if (v.numel > 0) {
            std::cout << "  min " << v.min << "  max " << v.max << "  mean " << v.mean << "  std "
                      << v.stddev;
        }
        if (v.nanCount || v.infCount) {
            std::cout << "  NaN " << v.nanCount << "  Inf " << v.infCount;
        }
        std::cout << "\n";
        if (!v.preview.empty()) {
            std::cout << indent << "  first values:";
            for (const double value : v.preview) {
                std::cout << " " << value;
            }
            std::cout << (static_cast<int64_t>(v.preview.size()) < v.numel ? " ..." : "") << "\n";
        }
    } else {
        std::cout << v.text << "\n";
    }
    for (const auto& child : v.children) {
        printOutput(child, depth + 1);
    }
}

int commandInfo(const Options& o) {
    const ProbeResult p = probeArchive(o.positional[0]);
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
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << "File        " << p.path << " (" << formatBytes(p.fileSize) << ")\n"
                  << "Kind        " << toString(p.kind) << "\n"
                  << "Summary     " << p.summary << "\n";
        if (p.kind == FileKind::TorchScript) {
            std::cout << "Archive     " << p.archiveName << "/\n"
                      << "Version     " << (p.versionText.empty() ? "(missing)" : p.versionText)
                      << " (this LibTorch " << libtorchVersion() << " reads up to "
                      << p.maxSupportedVersion << ")\n";
        }
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
        if (!p.damage.empty()) {
            std::cout << "DAMAGED     " << p.damage << "\n";
        }
        if (o.showCode) {
            for (const auto& [name, code] : p.codeFiles) {
                std::cout << "\n# ---- " << name << "\n" << code;
            }
        }
    }
    // A file that cannot be opened here is an error for scripts, even though info described it.
    const bool operatorsRegistered =
        std::all_of(p.operators.begin(), p.operators.end(),
                    [](const OperatorUse& op) { return op.registered; });
    const bool usable = p.kind == FileKind::TorchScript && p.version >= 0 &&
                        p.version <= p.maxSupportedVersion && operatorsRegistered &&
                        p.damage.empty();
    return usable ? kExitOk : kExitError;
}

Expected<ModelInfo> loadModel(Session& session, const Options& o, bool includeCode) {
    for (const auto& library : o.opLibraries) {
        if (auto error = session.loadOperatorLibrary(library)) {
            return *error;
        }
    }
    LoadOptions options;
    options.includeCode = includeCode;
    return session.load(o.positional[0], options);
}

int commandTree(const Options& o) {
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
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
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
    auto text = o.command == "code" ? session.code(o.module, o.method)
                                    : session.graph(o.module, o.method, o.inlined);
    if (!text) {
        return fail(o, text.error());
    }
    std::cout << *text << "\n"; // Python's print() adds the newline
    return kExitOk;
}

int commandRun(const Options& o) {
    Session session;
    auto model = loadModel(session, o, false);
    if (!model) {
        return fail(o, model.error());
    }
    auto result = session.run(o.run);
    if (!result) {
        return fail(o, result.error());
    }
    const RunResult& r = *result;
    if (o.json) {
        nlohmann::json j = {{"method", r.method},
                            {"device", r.device},
                            {"device_name", r.deviceName},
                            {"warmup", r.warmup},
                            {"iterations", r.samplesMs.size()},
                            {"inputs", r.inputDescriptions},
                            {"samples_ms", r.samplesMs},
                            {"stats_ms",
                             {{"min", r.stats.min},
                              {"p50", r.stats.p50},
                              {"p90", r.stats.p90},
                              {"p99", r.stats.p99},
                              {"max", r.stats.max},
                              {"mean", r.stats.mean},
                              {"std", r.stats.stddev}}},
                            {"output", outputJson(r.output)}};
        if (r.profiled) {
            nlohmann::json modules = nlohmann::json::array(), operators = nlohmann::json::array();
            for (const auto& m : r.profile.modules) {
                modules.push_back({{"path", m.path},
                                   {"self_ms", m.selfMs},
                                   {"total_ms", m.totalMs},
                                   {"calls", m.calls}});
            }
            for (const auto& op : r.profile.operators) {
                operators.push_back({{"name", op.name},
                                     {"total_ms", op.totalMs},
                                     {"self_ms", op.selfMs},
                                     {"calls", op.calls}});
            }
            j["profile"] = {{"operator_ms", r.profile.operatorMs},
                            {"wall_ms", r.profile.wallMs},
                            {"modules", modules},
                            {"operators", operators}};
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "Method      " << r.method << "\nDevice      " << r.device << " (" << r.deviceName
              << ")\n";
    for (size_t i = 0; i < r.inputDescriptions.size(); ++i) {
        std::cout << (i ? "            " : "Inputs      ") << r.inputDescriptions[i] << "\n";
    }
    std::cout << "Warm-up     " << r.warmup << "\nIterations  " << r.samplesMs.size() << "\n\n";
    std::cout << std::fixed << std::setprecision(3);
    std::cout << "   min ms     p50 ms     p90 ms     p99 ms     max ms    mean ms\n";
    for (const double v :
         {r.stats.min, r.stats.p50, r.stats.p90, r.stats.p99, r.stats.max, r.stats.mean}) {
        std::cout << std::setw(9) << v << "  ";
    }
    std::cout << "\n"
              << std::setprecision(1) << "fps at p50  "
              << (r.stats.p50 > 0 ? 1000.0 / r.stats.p50 : 0.0) << "\n\nOutput\n";
    std::cout << std::defaultfloat << std::setprecision(6);
    printOutput(r.output, 1);
    if (r.profiled) {
        const double total = std::max(r.profile.operatorMs, 1e-9);
        std::cout << "\nProfile (one run: " << std::fixed << std::setprecision(3)
                  << r.profile.wallMs << " ms, operators " << r.profile.operatorMs << " ms)\n"
                  << "  total ms   share  self ms   calls  module\n";
        for (const auto& m : r.profile.modules) {
            std::cout << std::setw(10) << m.totalMs << std::setw(7) << std::setprecision(1)
                      << 100.0 * m.totalMs / total << "%" << std::setw(9) << std::setprecision(3)
                      << m.selfMs << std::setw(8) << m.calls << "  "
                      << (m.path.empty() ? "(root)" : m.path) << "\n";
        }
        std::cout << "  total ms  self ms   calls  operator\n";
        for (size_t i = 0; i < std::min<size_t>(15, r.profile.operators.size()); ++i) {
            const auto& op = r.profile.operators[i];
            std::cout << std::setw(10) << op.totalMs << std::setw(9) << op.selfMs << std::setw(8)
                      << op.calls << "  " << op.name << "\n";
        }
        std::cout << std::defaultfloat << std::setprecision(6);
    }
    if (!o.run.saveOutputsPath.empty()) {
        std::cout << "Saved       " << o.run.saveOutputsPath << "\n";
    }
    return kExitOk;
}

int commandWarp(const Options& o) {
    WarpFileRequest request;
    request.input = o.positional[0];
    request.output = o.output;
    request.interpolation = o.interpolation;
    request.border = o.border;
    request.borderValue = o.borderValue;
    request.inverse = o.inverse;
    if (!o.size.empty()) {
        auto shape = parseShape(o.size);
        if (!shape || shape->size() != 2 || (*shape)[0] < 1 || (*shape)[1] < 1) {
            return usage("--size expects WIDTHxHEIGHT, e.g. 640x480");
        }
        request.width = static_cast<int>((*shape)[0]);
        request.height = static_cast<int>((*shape)[1]);
    }
    if (!o.matrixFile.empty()) {
        auto matrix = readMatrixFile(o.matrixFile, o.matrixNode);
        if (!matrix) {
            return fail(o, matrix.error());
        }
        request.matrix.assign(matrix->begin(), matrix->end());
    } else {
        std::array<double, 8> corners{};
        std::istringstream stream(o.corners);
        std::string part;
        size_t count = 0;
        while (std::getline(stream, part, ',')) {
            if (count < 8) {
                corners[count] = parseNumber("--corners", part);
            }
            ++count;
        }
        if (count != 8) {
            return usage("--corners expects 8 numbers: x0,y0,x1,y1,x2,y2,x3,y3");
        }
        request.corners = corners;
    }
    if (auto error = warpImageFile(request)) {
        return fail(o, *error);
    }
    return kExitOk;
}

int commandDevices(const Options& o) {
    const auto devices = listDevices();
    if (o.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& d : devices) {
            list.push_back({{"id", d.id},
                            {"name", d.name},
                            {"memory_bytes", d.memoryBytes},
                            {"available", d.available},
                            {"reason", d.reason}});
        }
        std::cout << nlohmann::json{{"libtorch", libtorchVersion()}, {"devices", list}}.dump(2)
                  << "\n";
        return kExitOk;
    }
    for (const auto& d : devices) {
        std::cout << std::left << std::setw(8) << d.id << std::right << d.name;
        if (d.memoryBytes) {
            std::cout << ", " << formatBytes(d.memoryBytes);
        }
        if (!d.available) {
            std::cout << ": unavailable, " << d.reason;
        }
        std::cout << "\n";
    }
    return kExitOk;
}

int execute(const Options& o) {
    try {
        if (o.command == "info") {
            // Operator libraries change which operators count as registered.
            Session session;
            for (const auto& library : o.opLibraries) {
                if (auto error = session.loadOperatorLibrary(library)) {
                    return fail(o, *error);
                }
            }
            return commandInfo(o);
        }
        if (o.command == "tree") {
            return commandTree(o);
        }
        if (o.command == "code" || o.command == "graph") {
            return commandCodeOrGraph(o);
        }
        if (o.command == "run") {
            return commandRun(o);
        }
        if (o.command == "warp") {
            return commandWarp(o);
        }
        return commandDevices(o);
    } catch (const UsageError& error) {
        return usage(error.message);
    } catch (const std::bad_alloc&) {
        return fail(o, Error{ErrorKind::OutOfMemory, "out of memory"});
    } catch (const std::exception& error) {
        return fail(o, Error{ErrorKind::Internal, std::string("internal error: ") + error.what()});
    }
}

int supervise(const Options& o, const std::vector<std::string>& args) {
    std::vector<std::string> childArgs = args;
    childArgs.push_back("--in-process");
    childArgs.push_back("--supervised");
    Limits limits;
    limits.timeoutSeconds = o.timeout;
    limits.memoryBytes = o.memoryLimit;
    std::cout.flush();
    const ChildOutcome outcome = runIsolated(childArgs, limits);
    const std::string what = o.command == "warp" || o.command == "devices"
                                 ? o.command
                                 : o.command + " '" + o.positional[0] + "'";
    switch (outcome.kind) {
    case ChildOutcome::Kind::Exited:
        if (outcome.exitCode == 127) {
            std::cerr << "scriptscope-cli: the worker process for " << what
                      << " could not start (memory limit " << formatBytes(o.memoryLimit)
                      << " too low?)\n";
            return kExitCrashed;
        }
        return outcome.exitCode;
    case ChildOutcome::Kind::Signaled:
        if (outcome.signal == SIGPIPE) {
            // The reader of our output went away (`| head`): end the same way, quietly.
            std::signal(SIGPIPE, SIG_DFL);
            std::raise(SIGPIPE);
        }
        std::cerr << "scriptscope-cli: " << what << " crashed the worker process with "
                  << describeSignal(outcome.signal)
                  << (outcome.signal == SIGKILL
                          ? ""
                          : ": the archive is damaged or hostile, or LibTorch has a bug")
                  << "; nothing else was affected\n";
        return kExitCrashed;
    case ChildOutcome::Kind::TimedOut:
        std::cerr << "scriptscope-cli: " << what << " timed out after " << o.timeout
                  << " s and was stopped (--timeout S changes the limit)\n";
        return kExitTimedOut;
    case ChildOutcome::Kind::SpawnFailed:
        std::cerr << "scriptscope-cli: cannot start the worker process: " << outcome.error << "\n";
        return kExitCrashed;
    }
    return kExitCrashed;
}

} // namespace
} // namespace scriptscope::cli

int main(int argc, char** argv) {
    using namespace scriptscope::cli;
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (const auto& a : args) {
        if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return kExitOk;
        }
        if (a == "--version") {
            std::cout << "scriptscope-cli " SCRIPTSCOPE_VERSION " (LibTorch "
                      << scriptscope::libtorchVersion() << ")\n";
            return kExitOk;
        }
    }
    if (args.empty()) {
        std::cerr << kUsage;
        return kExitUsage;
    }
    Options options;
    try {
        options = parseArguments(args);
    } catch (const UsageError& error) {
        return usage(error.message);
    }
    if (!options.inProcess) {
        return supervise(options, args);
    }
    // A supervised child had its limit set before exec; in-process runs apply it themselves.
    if (!options.supervised && options.memoryLimitGiven) {
        scriptscope::applyMemoryLimit(options.memoryLimit);
    }
    return execute(options);
}
