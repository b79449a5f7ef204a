// What scriptscope-cli info says of a .pt2 beyond the probe: its programs, signatures, range
// constraints and weights, read without running anything.
#include "exported_details.h"

#include <format.h>
#include <pt2_reader.h>
#include <zip_reader.h>

#include <nlohmann/json.hpp>

#include <sstream>

namespace scriptscope::formats {

namespace {

nlohmann::json exportedJson(const Pt2Archive& archive) {
    nlohmann::json j = {
        {"layout", archive.layout},
        {"archive_version", archive.archiveVersion},
        {"schema", std::to_string(archive.schemaMajor) + "." + std::to_string(archive.schemaMinor)},
        {"aotinductor_files", archive.aotInductorFiles},
        {"extra_files", archive.extraFiles},
        {"notes", archive.notes}};
    j["models"] = nlohmann::json::array();
    for (const auto& model : archive.models) {
        nlohmann::json m = {{"name", model.name},
                            {"torch_version", model.torchVersion},
                            {"signature", signatureLines(model)},
                            {"range_constraints", nlohmann::json::object()},
                            {"sample_inputs", model.sampleInputs},
                            {"notes", model.notes}};
        for (const auto& [symbol, range] : model.rangeConstraints) {
            m["range_constraints"][symbol] = range;
        }
        m["nodes"] = nlohmann::json::array();
        for (const auto& node : model.nodes) {
            nlohmann::json args = nlohmann::json::array();
            for (const auto& input : node.inputs) {
                args.push_back({{"name", input.name}, {"value", input.text}});
            }
            m["nodes"].push_back(
                {{"name", node.name},
                 {"target", node.target},
                 {"args", args},
                 {"outputs", node.outputs},
                 {"module",
                  node.moduleStack.empty() ? std::string() : node.moduleStack.back().path}});
        }
        m["weights"] = nlohmann::json::array();
        for (const auto* list : {&model.weights, &model.constants}) {
            for (const auto& weight : *list) {
                m[list == &model.weights ? "weights" : "constants"].push_back(
                    {{"name", weight.name},
                     {"record", weight.record},
                     {"tensor", weight.meta.text()},
                     {"parameter", weight.parameter},
                     {"bytes", weight.bytes}});
            }
        }
        j["models"].push_back(std::move(m));
    }
    return j;
}

std::string exportedText(const Pt2Archive& archive) {
    std::ostringstream out;
    out << "Layout      " << archive.layout
        << (archive.archiveVersion.empty() ? "" : ", version " + archive.archiveVersion) << "\n"
        << "Schema      " << archive.schemaMajor << "." << archive.schemaMinor
        << " (this reader knows up to " << kPt2SchemaMajor << "." << kPt2SchemaMinor << ")\n";
    for (const auto& model : archive.models) {
        uint64_t bytes = 0;
        for (const auto& weight : model.weights) {
            bytes += weight.bytes;
        }
        out << "Model       " << model.name
            << (model.torchVersion.empty() ? "" : " (PyTorch " + model.torchVersion + ")") << ": "
            << model.nodes.size() << " operator calls, " << model.weights.size() << " weights ("
            << formatBytes(bytes) << "), " << model.constants.size() << " constants"
            << (model.sampleInputs ? ", sample inputs" : "") << "\n";
        for (const auto& line : signatureLines(model)) {
            out << (line.empty() ? "" : "    " + line) << "\n";
        }
        if (!model.rangeConstraints.empty()) {
            out << "\n    # range constraints\n";
        }
        for (const auto& [symbol, range] : model.rangeConstraints) {
            out << "    " << symbol << ": " << range << "\n";
        }
    }
    if (!archive.aotInductorFiles.empty()) {
        out << "AOTInductor " << archive.aotInductorFiles.size() << " files (a compiled model)\n";
    }
    return out.str();
}

} // namespace

FileDetails exportedDetails(const ProbeResult& probe) {
    const Pt2Archive archive = readPt2Archive(ZipReader(probe.path));
    return {"exported_program", exportedText(archive), exportedJson(archive).dump(), {}};
}

} // namespace scriptscope::formats
