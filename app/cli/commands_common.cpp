// What the commands share (printing values, errors, loading), the small commands, and the
// dispatch of a parsed command line to its command.
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
    switch (error.kind) {
    case ErrorKind::OutOfMemory:
        return kExitCrashed;
    case ErrorKind::NeedsNewerLibTorch:
        return kExitNeedsNewerLibTorch;
    case ErrorKind::OperatorLibrary:
        return kExitOperatorLibrary;
    default:
        return kExitError;
    }
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
        // Over the finite values; null where there are none (all NaN or Inf).
        const bool anyFinite = v.numel > v.nanCount + v.infCount;
        j["min"] = anyFinite ? nlohmann::json(v.min) : nlohmann::json();
        j["max"] = anyFinite ? nlohmann::json(v.max) : nlohmann::json();
        j["mean"] = anyFinite ? nlohmann::json(v.mean) : nlohmann::json();
        j["std"] = anyFinite ? nlohmann::json(v.stddev) : nlohmann::json();
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
        if (v.numel > v.nanCount + v.infCount) {
            std::cout << "  min " << v.min << "  max " << v.max << "  mean " << v.mean << "  std "
                      << v.stddev;
        } else if (v.numel > 0) {
            std::cout << "  no finite value";
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

Expected<std::unique_ptr<Model>> openModelAt(const Options& o, size_t index, bool includeCode) {
    OpenOptions options;
    options.includeCode = includeCode;
    return openModel(o.positional.at(index), options);
}

// The command's text on stdout, or in the -o file.
int printOrWrite(const Options& o, const std::string& text) {
    if (o.output.empty()) {
        std::cout << text;
        return kExitOk;
    }
    std::ofstream file(o.output, std::ios::binary | std::ios::trunc);
    if (!file || !file.write(text.data(), static_cast<std::streamsize>(text.size())) ||
        !file.flush()) {
        return fail(o, Error{ErrorKind::File, "cannot write '" + o.output + "'"});
    }
    return kExitOk;
}

nlohmann::json statsJson(const TimingStats& s) {
    return {{"min", s.min}, {"p50", s.p50},   {"p90", s.p90},
            {"max", s.max}, {"mean", s.mean}, {"count", s.count}};
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
            return usage(o.command, "--size expects WIDTHxHEIGHT, e.g. 640x480");
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
            return usage(o.command, "--corners expects 8 numbers: x0,y0,x1,y1,x2,y2,x3,y3");
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
        // Every command loads the libraries first, each checked against this LibTorch (they
        // change which operators count as registered); one that cannot be loaded is an error of
        // its own (kExitOperatorLibrary), naming it.
        if (o.command != "warp") {
            for (const auto& library : o.opLibraries) {
                if (auto error = loadOperatorLibrary(library)) {
                    return fail(o, *error);
                }
            }
        }
        if (o.command == "info") {
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
        if (o.command == "activations") {
            return commandActivations(o);
        }
        if (o.command == "optimize") {
            return commandOptimize(o);
        }
        if (o.command == "diff") {
            return commandDiff(o);
        }
        if (o.command == "compare") {
            return commandCompare(o);
        }
        return commandDevices(o);
    } catch (const UsageError& error) {
        return usage(o.command, error.message);
    } catch (const std::bad_alloc&) {
        return fail(o, Error{ErrorKind::OutOfMemory, "out of memory"});
    } catch (const std::exception& error) {
        return fail(o, Error{ErrorKind::Internal, std::string("internal error: ") + error.what()});
    }
}

void printVersion() {
    std::cout << kProgram << " " SCRIPTSCOPE_VERSION "\n";
    for (const auto& line : buildDescription()) {
        std::cout << line << "\n";
    }
    std::cout << "Qt " SCRIPTSCOPE_QT_VERSION " (the GUI's and the worker's)\n";
}

} // namespace scriptscope::cli
