// ETDump run blocks as a RunProfile (etdump_profile.h).
#include "etdump_profile.h"

#include <algorithm>
#include <map>

namespace scriptscope {

namespace {

bool isInstructionEvent(const EtdumpProfileEvent& event) {
    return !event.delegated() && event.instruction >= 0 &&
           (event.name == "OPERATOR_CALL" || event.name == "DELEGATE_CALL");
}

// "Convolution (NHWC, F32) IGEMM #2" is the second such operator: one name for all of them.
std::string withoutOrdinal(const std::string& name) {
    const size_t hash = name.rfind(" #");
    if (hash == std::string::npos || hash + 2 >= name.size() ||
        !std::all_of(name.begin() + static_cast<std::ptrdiff_t>(hash) + 2, name.end(),
                     [](char c) { return c >= '0' && c <= '9'; })) {
        return name;
    }
    return name.substr(0, hash);
}

std::string backendOf(const std::string& kind) {
    const std::string prefix = "delegate::";
    return kind.rfind(prefix, 0) == 0 ? kind.substr(prefix.size()) : kind;
}

} // namespace

Expected<EtdumpProfile> profileOfEtdump(const Etdump& dump, const ExecuTorchProgram& program,
                                        const std::string& method, size_t lastRuns,
                                        const EtRecord* record) {
    auto found = program.calls(method);
    if (!found) {
        return found.error();
    }
    const std::vector<ExecuTorchProgram::Call>& calls = *found;
    std::map<std::pair<size_t, size_t>, size_t> callAt;
    for (size_t i = 0; i < calls.size(); ++i) {
        callAt[{calls[i].chain, calls[i].instruction}] = i;
    }
    // Why a block of events is no run of this method ("" when it is one): an instruction the
    // method lacks, a delegate call where it calls a kernel, or a kernel of another name (the
    // runtime names each kernel's own scope, "native_call_convolution.out"). A dump of a program
    // with two methods holds runs of both.
    const auto misfit = [&](const EtdumpRun& run) -> std::string {
        for (const EtdumpProfileEvent& e : run.profile) {
            if (e.delegated() || e.instruction < 0 || e.chain < 0) {
                continue;
            }
            const bool kernelScope = e.name.rfind("native_call_", 0) == 0;
            if (!kernelScope && !isInstructionEvent(e)) {
                continue;
            }
            const auto at =
                callAt.find({static_cast<size_t>(e.chain), static_cast<size_t>(e.instruction)});
            const std::string where = "instruction " + std::to_string(e.instruction) +
                                      " of chain " + std::to_string(e.chain);
            if (at == callAt.end()) {
                return "it times " + where + ", which is no kernel or delegate call of " + method;
            }
            const ExecuTorchProgram::Call& call = calls[at->second];
            if ((e.name == "DELEGATE_CALL") != call.delegate && !kernelScope) {
                return "it times " + where + " as " + e.name + ", which " + method + " runs as " +
                       call.kind;
            }
            if (kernelScope) {
                const std::string kernel = e.name.substr(12); // "convolution.out"
                const size_t colons = call.kind.rfind("::");
                const std::string name =
                    colons == std::string::npos ? call.kind : call.kind.substr(colons + 2);
                if (call.delegate || name != kernel) {
                    return "it runs " + kernel + " at " + where + ", where " + method + " calls " +
                           call.kind;
                }
            }
        }
        return {};
    };
    // The blocks that ran the method: those with instruction events or Method::execute.
    std::vector<const EtdumpRun*> runs;
    std::string why;
    size_t others = 0;
    for (const EtdumpRun& run : dump.runs) {
        const bool executed =
            std::any_of(run.profile.begin(), run.profile.end(), [](const EtdumpProfileEvent& e) {
                return e.name == "Method::execute" || isInstructionEvent(e);
            });
        if (!executed) {
            continue;
        }
        if (const std::string reason = misfit(run); !reason.empty()) {
            why = why.empty() ? reason : why;
            ++others;
            continue;
        }
        runs.push_back(&run);
    }
    if (runs.empty() && others > 0) {
        return Error{ErrorKind::Format, "the ETDump holds no run of " + method + ": " + why +
                                            " (it was recorded of another program or method)"};
    }
    if (runs.empty()) {
        return Error{ErrorKind::Format,
                     "the ETDump holds no run of a method (" + std::to_string(dump.runs.size()) +
                         " event blocks, none with instruction events or Method::execute)"};
    }
    if (lastRuns > 0 && runs.size() > lastRuns) {
        runs.erase(runs.begin(), runs.end() - static_cast<std::ptrdiff_t>(lastRuns));
    }

    EtdumpProfile result;
    result.runs = runs.size();
    if (others > 0) {
        result.notes.push_back(std::to_string(others) + " run" + (others == 1 ? "" : "s") +
                               " of another method left out");
    }
    std::vector<double> callMs(calls.size(), 0.0), innerMs(calls.size(), 0.0);
    std::vector<int64_t> callCount(calls.size(), 0);
    struct Inner {
        double ms = 0;
        int64_t calls = 0;
    };
    std::map<std::string, Inner> inner; // "XnnpackBackend: Convolution (NHWC, F32) IGEMM"
    double wallMs = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
        std::vector<const EtdumpProfileEvent*> pending; // a delegate's operators, before its call
        double runMs = 0;
        for (const EtdumpProfileEvent& event : runs[r]->profile) {
            if (event.name == "Method::execute" && !event.delegated()) {
                runMs += event.ms();
            } else if (event.delegated()) {
                pending.push_back(&event);
            } else if (isInstructionEvent(event)) {
                const auto at = callAt.find({static_cast<size_t>(std::max(0, event.chain)),
                                             static_cast<size_t>(event.instruction)});
                if (at == callAt.end()) {
                    continue; // misfit() let no such block through
                }
                const size_t i = at->second;
                callMs[i] += event.ms();
                ++callCount[i];
                if (calls[i].delegate) {
                    for (const EtdumpProfileEvent* op : pending) {
                        Inner& in = inner[backendOf(calls[i].kind) + ": " +
                                          withoutOrdinal(op->delegateDebugName.empty()
                                                             ? op->name
                                                             : op->delegateDebugName)];
                        in.ms += op->ms();
                        ++in.calls;
                        innerMs[i] += op->ms();
                    }
                } else if (!pending.empty()) {
                    result.notes.push_back(std::to_string(pending.size()) +
                                           " delegate events before a kernel call in run " +
                                           std::to_string(r) + ": left out");
                }
                pending.clear();
            }
        }
        result.runsMs.push_back(runMs);
        wallMs += runMs;
    }

    const double n = static_cast<double>(runs.size());
    RunProfile& profile = result.profile;
    profile.wallMs = wallMs / n;
    profile.shapesMethod = method;
    profile.nodeMs.assign(calls.size(), 0.0);
    std::map<std::string, OperatorTime> operators;
    std::map<std::string, ModuleTime> modules;
    double methodSelfMs = 0;
    int64_t methodCalls = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
        if (callCount[i] == 0) {
            continue;
        }
        const double ms = callMs[i] / n;
        profile.nodeMs[i] = ms;
        profile.operatorMs += ms;
        OperatorTime& op = operators[calls[i].kind];
        op.name = calls[i].kind;
        op.totalMs += ms;
        op.selfMs += std::max(0.0, ms - innerMs[i] / n);
        op.calls += static_cast<int64_t>(callCount[i] / static_cast<int64_t>(runs.size()));
        const int64_t perRun = callCount[i] / static_cast<int64_t>(runs.size());
        if (calls[i].delegate) {
            ModuleTime& m = modules[calls[i].module];
            m.path = calls[i].module;
            m.totalMs += ms;
            m.calls += perRun;
            m.selfMs += record ? 0.0 : ms; // with an ETRecord, the model's module has it
        }
        // The module of the model it ran in, where an ETRecord says: its self time, and its
        // ancestors' totals (the method's own modules, "forward.conv1").
        const std::string module =
            record ? record->moduleOf(method, static_cast<int>(calls[i].instruction)) : "";
        if (module.empty()) {
            if (!calls[i].delegate || record) {
                methodSelfMs += ms;
                methodCalls += perRun;
            }
            continue;
        }
        const std::string path = method + "." + module;
        modules[path].path = path;
        modules[path].selfMs += ms;
        modules[path].calls += perRun;
        for (std::string at = path; at != method;) {
            modules[at].path = at;
            modules[at].totalMs += ms;
            at = at.substr(0, at.rfind('.'));
        }
    }
    for (const auto& [name, in] : inner) {
        OperatorTime op;
        op.name = name;
        op.totalMs = op.selfMs = in.ms / n;
        op.calls = in.calls / static_cast<int64_t>(runs.size());
        operators[name] = op;
    }
    // As a TorchScript profile's: the modules' shares are of the operators' time (the method's
    // own bookkeeping between instructions is in wallMs only).
    ModuleTime root, methodTime;
    root.path = "";
    methodTime.path = method;
    root.totalMs = methodTime.totalMs = profile.operatorMs;
    methodTime.selfMs = methodSelfMs;
    methodTime.calls = methodCalls;
    profile.modules.push_back(root);
    profile.modules.push_back(methodTime);
    for (auto& [path, m] : modules) {
        profile.modules.push_back(m);
    }
    for (auto& [name, op] : operators) {
        profile.operators.push_back(op);
    }
    std::stable_sort(
        profile.operators.begin(), profile.operators.end(),
        [](const OperatorTime& a, const OperatorTime& b) { return a.totalMs > b.totalMs; });
    return result;
}

} // namespace scriptscope
