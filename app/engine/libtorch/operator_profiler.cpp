// The per-operator profile of one run (engine_internal.h): RecordFunction callbacks on this
// thread time every operator call, by operator and by the module that made the call.
#include "engine_internal.h"

#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/cuda.h>

#include <algorithm>
#include <unordered_map>

namespace scriptscope::detail {
namespace {

// One profiled run: RecordFunction callbacks on this thread time every operator call. Calls made
// by other operators (aten::linear -> aten::addmm) count towards their caller's module once, so
// the modules' shares add up to the time of all top-level calls.
struct OperatorProfiler {
    struct Open {
        std::chrono::steady_clock::time_point start;
        double childMs = 0;
        std::string name;
        std::string scope;
    };
    struct Sum {
        double totalMs = 0;
        double selfMs = 0;
        int64_t calls = 0;
    };
    std::vector<Open> open;
    // On CUDA an operator returns once its kernels are queued: the device is synchronized around
    // every top-level call so that its time is the kernels' time, not the launch's.
    int cudaDevice = -1;
    std::unordered_map<std::string, Sum> modules;
    std::unordered_map<std::string, Sum> operators;
};

thread_local OperatorProfiler* activeProfiler = nullptr;
thread_local const std::string* profileScope = nullptr;

// The interpreter's module hierarchy, one entry per frame ("TOP(Net)::forward",
// "features(Sequential)::forward", "0(Conv2d)::forward", "SELF(Conv2d)::_conv_forward",
// "::relu"), as a module path ("features.0"): the instance names, without TOP (the root), SELF (a
// method of the same module) and free functions.
std::string modulePathOf(const std::vector<std::string>& hierarchy) {
    std::string path;
    for (const auto& frame : hierarchy) {
        const auto end = std::min(frame.find('('), frame.find("::"));
        const std::string instance = frame.substr(0, end);
        if (instance.empty() || instance == "TOP" || instance == "SELF") {
            continue;
        }
        path += (path.empty() ? "" : ".") + instance;
    }
    return path;
}

std::unique_ptr<at::ObserverContext> profileStart(const at::RecordFunction& fn) {
    if (auto* profiler = activeProfiler) {
        OperatorProfiler::Open call;
        call.name = fn.name();
        if (profiler->open.empty()) {
            call.scope =
                profileScope ? *profileScope : modulePathOf(torch::jit::currentModuleHierarchy());
            if (profiler->cudaDevice >= 0) {
                torch::cuda::synchronize(profiler->cudaDevice);
            }
        }
        call.start = std::chrono::steady_clock::now();
        profiler->open.push_back(std::move(call));
    }
    return nullptr;
}

void profileEnd(const at::RecordFunction&, at::ObserverContext*) {
    auto* profiler = activeProfiler;
    if (!profiler || profiler->open.empty()) {
        return;
    }
    if (profiler->cudaDevice >= 0 && profiler->open.size() == 1) {
        torch::cuda::synchronize(profiler->cudaDevice);
    }
    const auto end = std::chrono::steady_clock::now();
    OperatorProfiler::Open call = std::move(profiler->open.back());
    profiler->open.pop_back();
    const double ms = std::chrono::duration<double, std::milli>(end - call.start).count();
    auto& op = profiler->operators[call.name];
    op.totalMs += ms;
    op.selfMs += ms - call.childMs;
    op.calls += 1;
    if (!profiler->open.empty()) {
        profiler->open.back().childMs += ms;
    } else {
        auto& module = profiler->modules[call.scope];
        module.selfMs += ms;
        module.calls += 1;
    }
}

RunProfile summarize(const OperatorProfiler& profiler, double wallMs) {
    RunProfile profile;
    profile.wallMs = wallMs;
    std::map<std::string, ModuleTime> modules; // ordered: parents before children
    for (const auto& [path, sum] : profiler.modules) {
        profile.operatorMs += sum.selfMs;
        auto& entry = modules[path];
        entry.path = path;
        entry.selfMs += sum.selfMs;
        entry.calls += sum.calls;
        // Every ancestor's total includes this module's time.
        std::string ancestor = path;
        while (true) {
            modules[ancestor].path = ancestor;
            modules[ancestor].totalMs += sum.selfMs;
            if (ancestor.empty()) {
                break;
            }
            const auto dot = ancestor.rfind('.');
            ancestor = dot == std::string::npos ? std::string() : ancestor.substr(0, dot);
        }
    }
    for (auto& [path, entry] : modules) {
        profile.modules.push_back(entry);
    }
    for (const auto& [name, sum] : profiler.operators) {
        profile.operators.push_back({name, sum.totalMs, sum.selfMs, sum.calls});
    }
    std::sort(profile.operators.begin(), profile.operators.end(),
              [](const OperatorTime& a, const OperatorTime& b) { return a.totalMs > b.totalMs; });
    return profile;
}

} // namespace

void setProfileScope(const std::string* modulePath) {
    profileScope = modulePath;
}

RunProfile profileOperators(const std::function<void()>& call, int cudaDevice) {
    OperatorProfiler profiler;
    profiler.cudaDevice = cudaDevice;
    activeProfiler = &profiler;
    const auto handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&profileStart, &profileEnd)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
    const auto start = std::chrono::steady_clock::now();
    try {
        call();
    } catch (...) {
        at::removeCallback(handle);
        activeProfiler = nullptr;
        throw;
    }
    const double wallMs = elapsedMs(start);
    at::removeCallback(handle);
    activeProfiler = nullptr;
    return summarize(profiler, wallMs);
}

} // namespace scriptscope::detail
