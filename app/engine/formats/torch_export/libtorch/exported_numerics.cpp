// Where numbers go wrong in a plain .pt2: the interpreter shows every tensor its graph makes to
// the same recorder the TorchScript tap reports to (value_tap.h), so a .pt2 has activations, the
// first NaN or Inf, and comparisons with values saved from Python or with another model's module
// outputs, as a TorchScript archive has.
#include "engine_internal.h"
#include "exported_interpreter.h"
#include "format.h"
#include "run_memory.h"
#include "torch_values.h"
#include "value_tap.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace scriptscope::detail {

namespace {

// The values a run shows: one site per tensor the diagram draws (a node's output port, a user
// input), by the graph's name for it, with the modules each is the output of.
struct ExportedSites {
    GraphModel model;
    std::vector<Site> sites;
    std::vector<std::vector<std::string>> siteModules;
    std::map<std::string, int> byName;
};

// Whether a node is drawn inside a block (a graph torch.cond or while_loop calls).
bool inBlock(const GraphModel& g, const GraphNode& node) {
    for (int group = node.group; group >= 0 && static_cast<size_t>(group) < g.groups.size();
         group = g.groups[static_cast<size_t>(group)].parent) {
        if (g.groups[static_cast<size_t>(group)].kind == GraphGroup::Kind::Block) {
            return true;
        }
    }
    return false;
}

Expected<ExportedSites> exportedSites(const ExportedProgram& program) {
    auto model = program.graphModel("", "forward");
    if (!model) {
        return model.error();
    }
    ExportedSites out;
    out.model = std::move(model).value();
    const GraphModel& g = out.model;
    const auto add = [&](int node, int output, const std::string& name,
                         std::vector<std::string> modules) {
        if (name.empty() || out.byName.count(name)) {
            return;
        }
        out.byName[name] = static_cast<int>(out.sites.size());
        Site site;
        site.node = node;
        site.output = output;
        site.value = name;
        if (node >= 0) {
            site.operators = {name}; // the node's own name
            placeSite(site, out.model);
        }
        out.sites.push_back(std::move(site));
        out.siteModules.push_back(std::move(modules));
    };
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        add(-1, static_cast<int>(i), g.inputs[i].name, {});
    }
    // The modules each value is the output of; the graph's outputs are read outside every
    // module.
    std::set<std::string> graphOutputs;
    if (program.hasProgram()) {
        for (const Pt2Value& output : program.program().outputValues) {
            graphOutputs.insert(output.names.begin(), output.names.end());
        }
    }
    std::vector<std::string> nodeModules;
    for (const GraphNode& node : g.nodes) {
        if (node.id >= 0) {
            nodeModules.resize(std::max(nodeModules.size(), static_cast<size_t>(node.id) + 1));
            nodeModules[static_cast<size_t>(node.id)] = placedModule(g, node);
        }
    }
    const auto modules = outputModules(g, nodeModules, graphOutputs);
    for (const GraphNode& node : g.nodes) {
        if (inBlock(g, node)) {
            continue; // inside a graph control flow calls: the interpreter shows its node's values
        }
        for (size_t o = 0; node.id >= 0 && o < node.outputs.size(); ++o) {
            add(node.id, static_cast<int>(o), node.outputs[o].name,
                modules[static_cast<size_t>(node.id)][o]);
        }
    }
    return out;
}

// One run of the interpreter with every tensor recorded into `run` (each value once: a getitem
// names again what its node already made), each record with its bytes, the step that made it and
// its last reader; `storages` gets each record's storage.
c10::IValue observedRun(const ExportedProgram& program, ExportedInterpreter& interpreter,
                        const std::vector<c10::IValue>& inputs, const ExportedSites& sites,
                        TapRun& run, std::vector<HeldStorage>* storages = nullptr) {
    run.sites = sites.sites;
    run.siteModules = sites.siteModules;
    run.occurrences.assign(run.sites.size(), 0);
    std::vector<bool> seen(run.sites.size(), false);
    // The dense values recorded, by where their elements lie: a later view, transpose or reshape
    // of one (the same elements, on the same live storage, nothing written in place since) takes
    // its statistics instead of reading them again. Attention makes many such views.
    struct Elements {
        const void* storage;
        c10::weak_intrusive_ptr<c10::StorageImpl> keep;
        uint64_t writes;
        size_t record;
    };
    std::map<std::tuple<const void*, int64_t, int>, Elements> byElements;
    const ExportedInterpreter::Observer observer = [&](const ExportedInterpreter::Observed& v) {
        const auto site = sites.byName.find(v.name);
        if (site == sites.byName.end() || seen[static_cast<size_t>(site->second)]) {
            return;
        }
        seen[static_cast<size_t>(site->second)] = true;
        const at::Tensor& t = v.tensor;
        const bool spans = t.defined() && t.layout() == at::kStrided && t.has_storage() &&
                           !t.is_quantized() && !t.is_complex() && t.numel() > 0 &&
                           t.is_non_overlapping_and_dense();
        const ActivationRecord* same = nullptr;
        std::tuple<const void*, int64_t, int> key;
        if (spans) {
            key = {t.data_ptr(), t.numel(), static_cast<int>(t.scalar_type())};
            const auto found = byElements.find(key);
            // Alive, its StorageImpl's address is not another's.
            if (found != byElements.end() && !found->second.keep.expired() &&
                found->second.storage == t.storage().unsafeGetStorageImpl() &&
                found->second.writes == v.writes) {
                same = &run.records[found->second.record];
            }
        }
        recordValue(run, site->second, v.tensor, same);
        if (spans && !same) {
            byElements.insert_or_assign(key, Elements{t.storage().unsafeGetStorageImpl(),
                                                      t.storage().getWeakStorageImpl(), v.writes,
                                                      run.records.size() - 1});
        }
        if (!storages) {
            return;
        }
        ActivationRecord& r = run.records.back();
        r.madeAt = v.step;
        r.lastUseAt = std::max(v.lastUse, v.step); // one nothing reads is held while it is made
        const bool owned = v.tensor.defined() && v.tensor.has_storage() &&
                           v.tensor.layout() == at::kStrided && !interpreter.holdsStorage(v.tensor);
        r.bytes = owned ? static_cast<uint64_t>(v.tensor.numel()) * v.tensor.element_size() : 0;
        storages->push_back(owned && v.step >= 0 ? heldStorage(v.tensor) : HeldStorage{});
    };
    c10::InferenceMode inferenceMode;
    std::vector<c10::IValue> outputs = interpreter.run(inputs, observer);
    synchronize(interpreter.device());
    return program.hasProgram() ? programOutput(program.program(), std::move(outputs))
                                : c10::IValue(c10::ivalue::Tuple::create(std::move(outputs)));
}

} // namespace

Expected<ActivationReport> interpretedActivations(const ExportedProgram& program,
                                                  ExportedInterpreter& interpreter,
                                                  const std::vector<c10::IValue>& inputs,
                                                  const ActivationRequest& request) {
    if (request.bins < 1 || request.bins > 4096) {
        return Error{ErrorKind::Input, "the histogram takes 1 to 4096 bins"};
    }
    if (!request.compareDevice.empty() || request.compareRun) {
        return Error{ErrorKind::Input,
                     "a torch.export program is compared with values saved from Python or with "
                     "another model; a second run on another device or other inputs is "
                     "TorchScript's only so far"};
    }
    if (!request.referenceFile.empty() && request.referenceValues) {
        return Error{ErrorKind::Input,
                     "compare with one thing at a time: a file of values or a model"};
    }
    auto made = exportedSites(program);
    if (!made) {
        return made.error();
    }
    ExportedSites sites = std::move(made).value();
    ActivationReport report;
    report.model = program.info().path;
    report.method = "forward";
    report.device = interpreter.device().str();
    try {
        std::shared_ptr<const ModuleValues> reference;
        if (auto error =
                prepareRecording(request, sites.sites, sites.siteModules, report, reference)) {
            return *error;
        }
        TapRun run;
        run.reference = reference.get();
        run.bins = request.bins;
        run.pinBudget = request.pinBytes;
        std::vector<HeldStorage> storages;
        const auto start = std::chrono::steady_clock::now();
        const c10::IValue output = observedRun(program, interpreter, inputs, sites, run, &storages);
        report.runMs = elapsedMs(start);
        if (run.pinOverflow) {
            report.notes.push_back("pinned values beyond " + formatBytes(request.pinBytes) +
                                   " were not kept");
        }
        report.pinnedBytes = run.pinnedBytes;
        report.memory = memoryOf(run.records, storages, interpreter.steps());
        finishReport(run, sites.model, sites.siteModules, reference.get(), output, request, report);
    } catch (const std::exception& error) {
        Error e = errorFromException(error, ErrorKind::Model);
        e.message = "the exported program failed: " + e.message;
        return e;
    }
    return report;
}

Expected<std::shared_ptr<const ModuleValues>>
interpretedModuleOutputs(const ExportedProgram& program, ExportedInterpreter& interpreter,
                         const std::vector<c10::IValue>& inputs) {
    auto sites = exportedSites(program);
    if (!sites) {
        return sites.error();
    }
    try {
        TapRun run;
        run.bins = 1;
        run.keepModuleOutputs = true;
        run.keepOperatorOutputs = true;
        const c10::IValue output = observedRun(program, interpreter, inputs, *sites, run);
        auto values = std::make_shared<ModuleValues>();
        keepInto(run, output, *values);
        values->model = program.info().path;
        return std::shared_ptr<const ModuleValues>(std::move(values));
    } catch (const std::exception& error) {
        Error e = errorFromException(error, ErrorKind::Model);
        e.message = "the exported program failed: " + e.message;
        return e;
    }
}

} // namespace scriptscope::detail
