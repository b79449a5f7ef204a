// Probing reads a file's structure with the project's own zip and pickle readers: nothing in the
// file is executed, so it is safe on any file.
#include "probe.h"

#include "format.h"
#include "pickle_scan.h"
#include "pickle_value.h"
#include "pt2_reader.h"
#include "pte_reader.h"
#include "zip_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sys/stat.h>

namespace scriptscope {

namespace {

constexpr uint64_t kMaxExtraFileBytes = 4u << 20;
constexpr uint64_t kMaxCodeBytes = 32u << 20;
constexpr uint64_t kMaxPreviewCodeBytes = 16u << 20; // code shown by the safe preview, in all
constexpr uint64_t kMaxPickleBytes = 256u << 20;
constexpr size_t kMaxPreviewTensors = 100000;

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Valid UTF-8 (a sequence cut off by the end of `head` is fine) without control characters other
// than whitespace.
bool looksLikeText(const std::string& head) {
    if (head.empty()) {
        return false;
    }
    size_t i = 0;
    while (i < head.size()) {
        const auto c = static_cast<unsigned char>(head[i]);
        if (c < 0x80) {
            if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f') {
                return false;
            }
            ++i;
            continue;
        }
        const size_t length = (c & 0xE0) == 0xC0   ? 2
                              : (c & 0xF0) == 0xE0 ? 3
                              : (c & 0xF8) == 0xF0 ? 4
                                                   : 0;
        if (length == 0 || (length == 2 && c < 0xC2)) {
            return false;
        }
        for (size_t k = 1; k < length; ++k) {
            if (i + k >= head.size()) {
                return true;
            }
            if ((static_cast<unsigned char>(head[i + k]) & 0xC0) != 0x80) {
                return false;
            }
        }
        i += length;
    }
    return true;
}

// ONNX files are protobuf ModelProto messages: field 1 (ir_version) first, then producer_name.
bool looksLikeOnnx(const std::string& head, const std::string& path, std::string& producer) {
    if (head.size() < 4 || static_cast<unsigned char>(head[0]) != 0x08 ||
        static_cast<unsigned char>(head[1]) >= 0x80) {
        return false;
    }
    const auto tag = static_cast<unsigned char>(head[2]);
    if (tag == 0x12) { // producer_name, length-delimited
        const auto length = static_cast<unsigned char>(head[3]);
        if (length < 0x80 && head.size() >= 4u + length) {
            producer = head.substr(4, length);
        }
    }
    const bool knownTag = tag == 0x12 || tag == 0x1a || tag == 0x22 || tag == 0x2a || tag == 0x3a ||
                          tag == 0x42 || tag == 0x52;
    return knownTag &&
           (endsWith(path, ".onnx") || !producer.empty() || head.find("onnx") != std::string::npos);
}

// Legacy torch.save files start with a protocol-2 pickle of PyTorch's magic number.
bool looksLikeLegacyTorchSave(const std::string& head) {
    static const std::string magic("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14);
    return startsWith(head, magic);
}

bool looksLikePickle(const std::string& head) {
    return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x80 &&
           static_cast<unsigned char>(head[1]) >= 2 && static_cast<unsigned char>(head[1]) <= 5;
}

// Operators named in serialized TorchScript code: `ops.ns.name(` for custom and prim operators,
// `torch.name(` for ATen builtins. A scan, not a parse: names inside string literals count too,
// which only ever adds an operator to check.
void collectOperators(const std::string& code, std::set<std::string>& names) {
    auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    auto identifierAt = [&](size_t pos) {
        size_t end = pos;
        while (end < code.size() && isWord(code[end])) {
            ++end;
        }
        const bool valid = end > pos && !std::isdigit(static_cast<unsigned char>(code[pos]));
        return valid ? code.substr(pos, end - pos) : std::string();
    };
    for (const std::string prefix : {"ops.", "torch."}) {
        for (size_t at = code.find(prefix); at != std::string::npos;
             at = code.find(prefix, at + 1)) {
            if (at > 0 && (isWord(code[at - 1]) || code[at - 1] == '.')) {
                continue; // __torch__.x, self.ops.x, torch.ops.x (caught as ops.x)
            }
            const size_t nameStart = at + prefix.size();
            const std::string first = identifierAt(nameStart);
            if (first.empty()) {
                continue;
            }
            if (prefix == "ops.") {
                const size_t dot = nameStart + first.size();
                const std::string second =
                    dot < code.size() && code[dot] == '.' ? identifierAt(dot + 1) : std::string();
                if (!second.empty()) {
                    names.insert(first + "::" + second);
                }
                continue;
            }
            size_t after = nameStart + first.size();
            while (after < code.size() && code[after] == ' ') {
                ++after;
            }
            if (after < code.size() && code[after] == '(') {
                names.insert("aten::" + first);
            }
        }
    }
}

bool containsObject(const PickleValue& value, int depth = 0) {
    if (value.kind == PickleValue::Kind::Object || depth > 64) {
        return true;
    }
    for (const auto& item : value.items) {
        if (!item || containsObject(*item, depth + 1)) {
            return true;
        }
    }
    return false;
}

void describeTorchSaveZip(ProbeResult& result, const std::string& value) {
    const auto& globals = result.pickleGlobals;
    auto has = [&](const std::string& prefix) {
        return std::any_of(globals.begin(), globals.end(),
                           [&](const std::string& g) { return startsWith(g, prefix); });
    };
    if (!globals.empty() && globals.front() == "collections.OrderedDict" && !has("torch.nn.") &&
        !has("__main__.")) {
        result.summary = "a state_dict saved with torch.save: weights without code. Load it into "
                         "its model class in Python, then export with torch.jit.script or "
                         "torch.jit.trace and torch.jit.save.";
    } else if (has("torch.nn.modules.") || has("__main__.")) {
        result.summary = "a pickled eager model (torch.save(model)): it needs its Python classes "
                         "to load. Export it with torch.jit.script or torch.jit.trace and "
                         "torch.jit.save to open it here.";
    } else if (!value.empty()) {
        // What the project's own reader rebuilds: "a list of 2 tensors", "a tensor float32[4]".
        const bool tensor = value.rfind("tensor ", 0) == 0;
        const bool bare = value == "None" || value == "True" || value == "False";
        const bool vowel = std::string("aeiou").find(value.front()) != std::string::npos;
        result.summary = (tensor ? "a " + value + " saved with torch.save"
                                 : "a torch.save file holding " +
                                       std::string(bare    ? ""
                                                   : vowel ? "an "
                                                           : "a ") +
                                       value) +
                         ": not a model, but usable as an input (file:PATH or --inputs PATH).";
    } else {
        result.summary =
            "a file written by torch.save, not a TorchScript archive: export the model "
            "with torch.jit.save.";
    }
}

// A record changed after it was written (a byte flipped in its compressed code or debug info)
// inflates to garbage that LibTorch's reader unpickles as it says, allocating gigabytes: the
// archive's small records (code, pickles, debug info, version; not the tensors' data) must match
// the CRC-32 its directory gives them.
void checkSmallRecords(const ZipReader& zip, const std::string& prefix, ProbeResult& result) {
    constexpr uint64_t kMostBytes = 4u << 20; // per record; a model's code and pickles are small
    uint64_t budget = 64u << 20;              // in all
    for (const ArchiveRecord& record : result.records) {
        if (!result.damage.empty()) {
            return;
        }
        if (record.size > kMostBytes || record.size > budget ||
            startsWith(record.name, prefix + "data/")) {
            continue;
        }
        budget -= record.size;
        const auto matches = zip.matchesCrc(record, kMostBytes);
        if (!matches) {
            result.damage = record.name + " cannot be read: its bytes do not inflate to the " +
                            std::to_string(record.size) + " bytes its zip directory gives";
        } else if (!*matches) {
            result.damage = record.name +
                            " does not match its CRC-32 (its bytes were changed after it was "
                            "written)";
        }
    }
}

// Every tensor storage data.pkl and constants.pkl refer to, checked against the records that
// hold them, and the code each pickled class needs. Nothing is executed.
void readStorages(const ZipReader& zip, const std::string& prefix, ProbeResult& result) {
    std::set<std::string> locations;
    for (const auto& [pickleName, folder] :
         {std::pair<std::string, std::string>{"data.pkl", "data/"},
          {"constants.pkl", "constants/"}}) {
        const auto* record = zip.find(prefix + pickleName);
        if (!record) {
            continue;
        }
        const auto pickle = zip.read(*record, kMaxPickleBytes);
        if (!pickle) {
            continue;
        }
        const PickleScan scan = scanPickle(*pickle);
        if (!scan.complete && result.damage.empty()) {
            result.damage = pickleName + " is damaged (" + scan.error + ")";
        }
        // Every TorchScript class the pickle names needs its code: __torch__.a.b.C lives in
        // code/__torch__/a/b.py, __torch__.C in code/__torch__.py.
        for (const auto& global : scan.globals) {
            if (!startsWith(global, "__torch__.") || !result.damage.empty()) {
                continue;
            }
            const std::string module = global.substr(0, global.rfind('.'));
            std::string file = "code/" + module + ".py";
            std::replace(file.begin() + 5, file.end() - 3, '.', '/');
            if (!zip.find(prefix + file)) {
                result.damage = "the code of " + global + " (" + file + ") is missing";
            }
        }
        for (const auto& storage : scan.storages) {
            StorageInfo info;
            info.record = folder + storage.key;
            info.dtype = storage.dtype;
            info.location = storage.location;
            info.numel = storage.numel;
            info.declaredBytes = storage.numel > 0 && storage.elementSize > 0
                                     ? static_cast<uint64_t>(storage.numel) *
                                           static_cast<uint64_t>(storage.elementSize)
                                     : 0;
            if (const auto* data = zip.find(prefix + info.record)) {
                info.present = true;
                info.storedBytes = data->size;
            }
            if (result.damage.empty()) {
                if (!info.present) {
                    result.damage = "the tensor data record " + info.record + " is missing";
                } else if (info.declaredBytes > info.storedBytes) {
                    result.damage = "the tensor data record " + info.record + " holds " +
                                    std::to_string(info.storedBytes) + " bytes, but " + pickleName +
                                    " declares " + std::to_string(storage.numel) + " " +
                                    (info.dtype.empty() ? "elements" : info.dtype + " values") +
                                    " (" + std::to_string(info.declaredBytes) + " bytes)";
                }
            }
            if (!storage.location.empty() && storage.location != "cpu") {
                locations.insert(storage.location);
            }
            result.storages.push_back(std::move(info));
        }
        for (const auto& tensor : scan.tensors) {
            if (result.tensors.size() >= kMaxPreviewTensors) {
                break;
            }
            std::string shape;
            for (const auto d : tensor.shape) {
                shape += (shape.empty() ? "" : ", ") + std::to_string(d);
            }
            const auto storage =
                std::find_if(scan.storages.begin(), scan.storages.end(),
                             [&](const StorageRef& s) { return s.key == tensor.storageKey; });
            const std::string dtype = storage != scan.storages.end() && !storage->dtype.empty()
                                          ? storage->dtype
                                          : std::string("?");
            result.tensors.push_back(pickleName + ": " + dtype + "[" + shape + "] from " + folder +
                                     tensor.storageKey);
        }
    }
    if (!locations.empty()) {
        std::string where;
        for (const auto& l : locations) {
            where += (where.empty() ? "" : ", ") + l;
        }
        result.notes.push_back("tensors were saved on " + where +
                               "; ScriptScope loads them on the CPU (choose a device to run on)");
    }
}

// What a torch.export archive holds, read without running it.
void describeExportedProgram(ProbeResult& result, const Pt2Archive& archive) {
    result.kind = FileKind::ExportedProgram;
    result.archiveName = archive.root;
    std::string what;
    for (const auto& model : archive.models) {
        size_t parameters = 0, buffers = 0, user = 0;
        for (const auto& input : model.inputs) {
            parameters += input.kind == "PARAMETER" ? 1 : 0;
            buffers += input.kind == "BUFFER" ? 1 : 0;
            user += input.kind == "USER_INPUT" ? 1 : 0;
        }
        const auto count = [](size_t n, const char* one, const char* many) {
            return std::to_string(n) + " " + (n == 1 ? one : many);
        };
        what += (what.empty() ? "" : "; ") + std::string("'") + model.name +
                "': " + count(model.nodes.size(), "operator call", "operator calls") + ", " +
                count(parameters, "parameter", "parameters") + ", " +
                count(buffers, "buffer", "buffers") + ", " + count(user, "input", "inputs");
    }
    result.summary =
        "a torch.export archive (.pt2" +
        (archive.schemaMajor >= 0 ? ", export schema " + std::to_string(archive.schemaMajor) + "." +
                                        std::to_string(archive.schemaMinor)
                                  : std::string()) +
        (archive.aotInductorFiles.empty() ? std::string() : ", with an AOTInductor model") + ")" +
        (what.empty() ? std::string() : ": " + what) +
        ". ScriptScope shows its module tree, graph and printouts without running it" +
        (archive.aotInductorFiles.empty()
             ? std::string("; a run interprets its graph, calling each operator")
             : std::string("; a build on PyTorch 2.x runs its compiled model")) +
        ".";
    if (!archive.ok) {
        result.damage = archive.error;
    }
    for (const auto& note : archive.notes) {
        result.notes.push_back(note);
    }
    for (const auto& model : archive.models) {
        for (const auto& note : model.notes) {
            result.notes.push_back("'" + model.name + "': " + note);
        }
    }
}

void probeZip(ProbeResult& result, const ProbeEnvironment& environment) {
    ZipReader zip(result.path);
    if (!zip.ok()) {
        result.kind = zip.truncated() ? FileKind::TruncatedZip : FileKind::Zip;
        result.summary = zip.truncated()
                             ? "a truncated or damaged zip (" + zip.error() +
                                   "): the file was probably cut off while copying or saving."
                             : "a damaged zip: " + zip.error() + ".";
        return;
    }
    result.records = zip.records();
    if (result.records.empty()) {
        result.kind = FileKind::Zip;
        result.summary = "an empty zip archive.";
        return;
    }
    // A torch.export archive, of either layout (the early one has no top folder).
    if (isPt2Archive(zip)) {
        describeExportedProgram(result, readPt2Archive(zip));
        return;
    }
    const std::string& first = result.records.front().name;
    const auto slash = first.find('/');
    const std::string folder = slash == std::string::npos ? std::string() : first.substr(0, slash);
    const bool oneFolder =
        !folder.empty() &&
        std::all_of(result.records.begin(), result.records.end(),
                    [&](const ArchiveRecord& r) { return startsWith(r.name, folder + "/"); });
    if (!oneFolder) {
        result.kind = FileKind::Zip;
        result.summary = "a zip archive whose records are not in one top folder, so not a "
                         "PyTorch archive (PyTorch writes every record under one folder).";
        return;
    }
    result.archiveName = folder;
    const std::string prefix = folder + "/";

    for (const char* name : {"version", ".data/version"}) {
        if (const auto* record = zip.find(prefix + name)) {
            if (const auto text = zip.read(*record, 64)) {
                result.versionText = *text;
                while (!result.versionText.empty() &&
                       std::isspace(static_cast<unsigned char>(result.versionText.back()))) {
                    result.versionText.pop_back();
                }
                char* end = nullptr;
                errno = 0;
                const long long value = std::strtoll(result.versionText.c_str(), &end, 10);
                const bool numeric =
                    !result.versionText.empty() && end && *end == '\0' && errno == 0 && value >= 0;
                result.version = numeric ? value : -1;
            }
            break;
        }
    }

    const bool hasCode =
        std::any_of(result.records.begin(), result.records.end(),
                    [&](const ArchiveRecord& r) { return startsWith(r.name, prefix + "code/"); });
    const bool hasConstants = zip.find(prefix + "constants.pkl") != nullptr;
    const bool hasBytecode = zip.find(prefix + "bytecode.pkl") != nullptr;
    const ArchiveRecord* data = zip.find(prefix + "data.pkl");

    for (const auto& record : result.records) {
        if (startsWith(record.name, prefix + "extra/") && record.name.size() > prefix.size() + 6) {
            const auto content = zip.read(record, kMaxExtraFileBytes);
            result.extraFiles[record.name.substr(prefix.size() + 6)] =
                content ? *content : "(" + formatBytes(record.size) + ", not shown)";
        }
    }

    if (hasCode || hasConstants || hasBytecode) {
        result.kind = FileKind::TorchScript;
        std::set<std::string> names;
        // Each code record is read once: for the operators it calls, and (up to the preview's
        // budget) as text for the safe preview.
        uint64_t codeBytes = 0;
        for (const auto& record : result.records) {
            if (startsWith(record.name, prefix + "code/") && endsWith(record.name, ".py")) {
                if (const auto code = zip.read(record, kMaxCodeBytes)) {
                    collectOperators(*code, names);
                    if (codeBytes < kMaxPreviewCodeBytes) {
                        codeBytes += code->size();
                        result.codeFiles[record.name.substr(prefix.size())] = *code;
                    }
                }
            }
        }
        for (const auto& name : names) {
            result.operators.push_back(
                {name, environment.isRegistered && environment.isRegistered(name)});
        }
        readStorages(zip, prefix, result);
        checkSmallRecords(zip, prefix, result);
        const auto missing = std::count_if(result.operators.begin(), result.operators.end(),
                                           [](const OperatorUse& op) { return !op.registered; });
        // The verdict first: a damaged archive says so before what it would otherwise be.
        result.summary =
            (result.damage.empty()
                 ? std::string("a TorchScript archive (torch.jit.save), ")
                 : "a DAMAGED TorchScript archive (torch.jit.save): " + result.damage + "; ") +
            "serialization version " +
            (result.version >= 0 ? std::to_string(result.version)
                                 : "'" + result.versionText + "'") +
            ", " + std::to_string(result.records.size()) + " records, " +
            std::to_string(result.operators.size()) + " operators" +
            (missing ? " (" + std::to_string(missing) + " not registered)" : "") + ".";
        if (result.versionText.empty()) {
            result.summary += " It has no version record: it is damaged.";
        } else if (result.version < 0) {
            result.summary += " Its version record is not a number: it is damaged.";
        } else if (result.version > result.maxSupportedVersion) {
            result.summary += " This LibTorch reads versions up to " +
                              std::to_string(result.maxSupportedVersion) +
                              ": it was written by a newer PyTorch.";
        }
        return;
    }
    if (data) {
        result.kind = FileKind::TorchSaveZip;
        std::string value;
        if (const auto pickle = zip.read(*data, 64u << 20)) {
            result.pickleGlobals = scanPickle(*pickle).globals;
            const auto read = readPickle(*pickle);
            // Only values an input can be: a state_dict or an eager model is described above.
            if (read.value && !containsObject(*read.value)) {
                value = describePickleValue(*read.value);
            }
        }
        describeTorchSaveZip(result, value);
        return;
    }
    result.kind = FileKind::Zip;
    result.summary = "a zip archive that is not a PyTorch file (no code/, constants.pkl or "
                     "data.pkl under '" +
                     folder + "/').";
}

} // namespace

ProbeResult probeArchive(const std::string& path, const ProbeEnvironment& environment) {
    ProbeResult result;
    result.path = path;
    result.maxSupportedVersion = environment.maxSupportedVersion;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        result.kind = errno == EACCES ? FileKind::Unreadable : FileKind::Missing;
        result.summary =
            errno == EACCES ? "the file cannot be read: permission denied." : "no such file.";
        return result;
    }
    if (S_ISDIR(info.st_mode)) {
        result.kind = FileKind::Directory;
        result.summary = "a directory, not a file. An archive unzipped by hand must be zipped "
                         "again, or open the .pt file it came from.";
        return result;
    }
    result.fileSize = static_cast<uint64_t>(info.st_size);
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        result.kind = FileKind::Unreadable;
        result.summary = std::string("the file cannot be read: ") + std::strerror(errno) + ".";
        return result;
    }
    if (result.fileSize == 0) {
        result.kind = FileKind::Empty;
        result.summary = "an empty file (0 bytes): the save that wrote it probably failed.";
        return result;
    }
    std::string head(static_cast<size_t>(std::min<uint64_t>(result.fileSize, 4096)), '\0');
    file.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(file.gcount()));

    if (startsWith(head, "PK\x03\x04") || startsWith(head, "PK\x05\x06")) {
        probeZip(result, environment);
    } else if (startsWith(head, "PYTORCH1")) {
        // The 2018 preview's format (the custom-operator tutorial's example.pt is one). PyTorch
        // says only "File is an unsupported archive format from the preview release".
        result.kind = FileKind::PreviewTorchScript;
        result.summary = "a TorchScript file in PyTorch 1.0-preview's format (it begins with "
                         "PYTORCH1; archives are zips since 1.0): no LibTorch since the preview "
                         "reads it. Export the model again from its source with torch.jit.save.";
    } else if (looksLikePte(head)) {
        result.kind = FileKind::ExecuTorch;
        result.summary = "an ExecuTorch program (.pte, written by to_executorch()): its methods, "
                         "instructions, delegates and memory plan are shown and drawn.";
    } else if (head.size() >= 8 && head.compare(4, 4, "PTMF") == 0) {
        result.kind = FileKind::MobileFlatbuffer;
        result.summary = "a flatbuffer mobile archive (_save_for_lite_interpreter with "
                         "_use_flatbuffer=True): it runs on PyTorch Mobile's lite interpreter, "
                         "not with torch.jit.load. Save the model with torch.jit.save instead.";
    } else if (looksLikeLegacyTorchSave(head)) {
        result.kind = FileKind::LegacyTorchSave;
        result.summary = "a legacy (pre-zip) torch.save file: a state_dict, tensor or pickled "
                         "model, not TorchScript. Load it in Python and export the model with "
                         "torch.jit.save.";
    } else if (looksLikeOnnx(head, path, result.producer)) {
        result.kind = FileKind::Onnx;
        result.summary =
            "an ONNX model" +
            (result.producer.empty() ? std::string() : " (made by " + result.producer + ")") +
            ": open it with an ONNX tool; ScriptScope reads TorchScript (torch.jit.save).";
    } else if (looksLikePickle(head)) {
        result.kind = FileKind::Unknown;
        result.summary = "a Python pickle, not a TorchScript archive.";
    } else if (looksLikeText(head)) {
        result.kind = FileKind::Text;
        result.summary = "a text file, not a TorchScript archive (is it the model's source code? "
                         "Export the model with torch.jit.save).";
    } else {
        result.kind = FileKind::Unknown;
        result.summary = "not a TorchScript archive: its first bytes match no known model format.";
    }
    return result;
}

Error unopenedError(const ProbeResult& probe) {
    switch (probe.kind) {
    case FileKind::Missing:
    case FileKind::Directory:
    case FileKind::Unreadable:
        return Error{ErrorKind::File, "'" + probe.path + "': " + probe.summary};
    default:
        return Error{ErrorKind::Format, "'" + probe.path + "' is " + probe.summary};
    }
}

} // namespace scriptscope
