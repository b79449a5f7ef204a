// ExecuTorch's runtime behind PteRuntime: the only file that includes ExecuTorch's headers (they
// bring c10 headers of their own, so no LibTorch header may be included here).
#include "pte_runtime.h"

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/platform/platform.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <mutex>

#ifndef SCRIPTSCOPE_EXECUTORCH_VERSION
#define SCRIPTSCOPE_EXECUTORCH_VERSION "unknown"
#endif

namespace scriptscope {

namespace et = ::executorch;
using et::extension::Module;
using EtError = et::runtime::Error;

namespace {

// ExecuTorch's log: its errors kept (the last few, to say why a load or a run failed), the rest
// (cpuinfo's notes on every load) dropped instead of written to stderr over the CLI's output.
std::mutex logMutex;
std::deque<std::string> loggedErrors;

void keepLog(et_timestamp_t, et_pal_log_level_t level, const char* filename, const char*,
             size_t line, const char* message, size_t length) {
    const char severity = static_cast<char>(level);
    if (severity != 'E' && severity != 'F') {
        return;
    }
    std::string text = std::string(filename ? filename : "?") + ":" + std::to_string(line) + ": " +
                       std::string(message, length);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.pop_back();
    }
    const std::lock_guard<std::mutex> lock(logMutex);
    loggedErrors.push_back(std::move(text));
    if (loggedErrors.size() > 16) {
        loggedErrors.pop_front();
    }
}

void takeOverLog() {
    static const bool registered = [] {
        return et::runtime::register_pal(et::runtime::PalImpl::create(keepLog, __FILE__));
    }();
    (void)registered;
}

// What ExecuTorch logged as errors since the last call: the details behind an error code.
std::string drainLog() {
    const std::lock_guard<std::mutex> lock(logMutex);
    std::string text;
    for (const std::string& line : loggedErrors) {
        text += line + "\n";
    }
    loggedErrors.clear();
    return text;
}

std::string describe(EtError error) {
    return std::string(et::runtime::to_string(error)) + " (ExecuTorch error " +
           std::to_string(static_cast<int>(error)) + ")";
}

// An error with what ExecuTorch logged behind it: its last line in the message, all in details.
Error failure(ErrorKind kind, std::string message) {
    std::string details = drainLog();
    if (!details.empty()) {
        const size_t end = details.size() - 1;
        const size_t start = details.rfind('\n', end - 1);
        message += " (" +
                   details.substr(start == std::string::npos ? 0 : start + 1,
                                  end - (start == std::string::npos ? 0 : start + 1)) +
                   ")";
    }
    return Error{kind, std::move(message), std::move(details)};
}

const char* dtypeName(int type) {
    static const char* const kNames[] = {"u8",  "i8",  "i16",  "i32", "i64", "f16", "f32",  "f64",
                                         "c32", "c64", "c128", "b8",  "qi8", "qu8", "qi32", "bf16"};
    return type >= 0 && type < static_cast<int>(std::size(kNames)) ? kNames[type] : "?";
}

template <typename Sizes>
std::string shapeText(int type, const Sizes& sizes) {
    std::string text = dtypeName(type);
    text += "[";
    bool first = true;
    for (const auto size : sizes) {
        text += (first ? "" : ", ") + std::to_string(size);
        first = false;
    }
    return text + "]";
}

} // namespace

struct PteRuntime::Impl {
    std::string path;
    std::unique_ptr<Module> module;
    et::etdump::ETDumpGen* tracer = nullptr; // owned by module
    std::vector<uint8_t> debugBuffer;
};

PteRuntime::PteRuntime(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

PteRuntime::~PteRuntime() = default;

std::string PteRuntime::version() {
    return SCRIPTSCOPE_EXECUTORCH_VERSION;
}

Expected<std::unique_ptr<PteRuntime>> PteRuntime::open(const std::string& path,
                                                       const PteTraceOptions* trace) {
    takeOverLog();
    (void)drainLog();
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    std::unique_ptr<et::runtime::EventTracer> tracer;
    if (trace) {
        auto etdump = std::make_unique<et::etdump::ETDumpGen>();
        if (trace->debugBufferBytes > 0) {
            impl->debugBuffer.assign(trace->debugBufferBytes, 0);
            etdump->set_debug_buffer(
                et::runtime::Span<uint8_t>(impl->debugBuffer.data(), impl->debugBuffer.size()));
            etdump->set_event_tracer_debug_level(
                et::runtime::EventTracerDebugLogLevel::kIntermediateOutputs);
        }
        impl->tracer = etdump.get();
        tracer = std::move(etdump);
    }
    impl->module = std::make_unique<Module>(path, Module::LoadMode::Mmap, std::move(tracer));
    if (const EtError error = impl->module->load(); error != EtError::Ok) {
        return failure(ErrorKind::Format, "ExecuTorch " + version() + " could not load '" + path +
                                              "': " + describe(error));
    }
    return std::unique_ptr<PteRuntime>(new PteRuntime(std::move(impl)));
}

Status PteRuntime::load(const std::string& method) {
    if (impl_->module->is_method_loaded(method)) {
        return std::nullopt;
    }
    const EtError error = impl_->module->load_method(method);
    if (error == EtError::Ok) {
        return std::nullopt;
    }
    std::string why = describe(error);
    if (error == EtError::OperatorMissing) {
        // The runtime logs each operator it has no kernel for ("Missing operator: [1]
        // aten::relu.out"): named in the message, as a TorchScript archive's missing operator is.
        const std::string details = drainLog();
        std::vector<std::string> missing;
        const std::string marker = "Missing operator: [";
        for (size_t at = details.find(marker); at != std::string::npos;
             at = details.find(marker, at + 1)) {
            const size_t name = details.find("] ", at);
            const size_t end = details.find('\n', at);
            if (name != std::string::npos && name < end) {
                const std::string op = details.substr(name + 2, end - name - 2);
                if (std::find(missing.begin(), missing.end(), op) == missing.end()) {
                    missing.push_back(op);
                }
            }
        }
        std::string names;
        for (const std::string& op : missing) {
            names += (names.empty() ? "" : ", ") + op;
        }
        Error failed{ErrorKind::Model,
                     "ExecuTorch " + version() + " could not load method '" + method + "': " + why +
                         ": the program calls " +
                         (names.empty() ? std::string("operators") : names) +
                         ", which this runtime has no kernel for (kernels come from the "
                         "libraries it links: portable, optimized and quantized, and XNNPACK)",
                     details};
        return failed;
    }
    if (error == EtError::NotFound) {
        why += ": no method of that name, or a delegate this runtime does not have";
    }
    return failure(ErrorKind::Model,
                   "ExecuTorch " + version() + " could not load method '" + method + "': " + why);
}

Expected<std::vector<PlainValue>> PteRuntime::execute(const std::string& method,
                                                      const std::vector<PlainValue>& inputs) {
    if (auto error = load(method)) {
        return *error;
    }
    auto meta = impl_->module->method_meta(method);
    if (!meta.ok()) {
        return Error{ErrorKind::Model, "ExecuTorch has no metadata for method '" + method +
                                           "': " + describe(meta.error())};
    }
    if (meta->num_inputs() != inputs.size()) {
        return Error{ErrorKind::Input, method + " takes " + std::to_string(meta->num_inputs()) +
                                           " inputs, not " + std::to_string(inputs.size())};
    }
    std::vector<et::extension::TensorPtr> tensors; // alive until the run is over
    std::string mismatches; // inputs smaller than the plan's, which only a dynamic one takes
    std::vector<et::runtime::EValue> values;
    values.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        const PlainValue& input = inputs[i];
        switch (input.kind) {
        case PlainValue::Kind::Tensor: {
            const PlainTensor& t = input.tensor;
            auto info = meta->input_tensor_meta(i);
            if (info.ok()) {
                // The dtype and rank must be the plan's, each size at most its (a dynamic
                // input's sizes are upper bounds); a static input that is smaller is refused by
                // the runtime, and said as this is.
                const auto want = info->sizes();
                bool fits = static_cast<int>(info->scalar_type()) == t.scalarType &&
                            want.size() == t.sizes.size();
                bool same = fits;
                for (size_t d = 0; fits && d < want.size(); ++d) {
                    fits = t.sizes[d] <= want[d];
                    same = same && t.sizes[d] == want[d];
                }
                const std::string mismatch = "input " + std::to_string(i) + " is " +
                                             shapeText(t.scalarType, t.sizes) + ", " + method +
                                             " takes " +
                                             shapeText(static_cast<int>(info->scalar_type()), want);
                if (!fits) {
                    return Error{ErrorKind::Input, mismatch};
                }
                if (!same) {
                    mismatches += (mismatches.empty() ? "" : "; ") + mismatch;
                }
            }
            std::vector<et::aten::SizesType> sizes(t.sizes.begin(), t.sizes.end());
            std::vector<et::aten::StridesType> strides(t.strides.begin(), t.strides.end());
            tensors.push_back(
                et::extension::from_blob(t.data, std::move(sizes), std::move(strides),
                                         static_cast<et::aten::ScalarType>(t.scalarType)));
            values.emplace_back(*tensors.back());
            break;
        }
        case PlainValue::Kind::Int:
            values.emplace_back(input.intValue);
            break;
        case PlainValue::Kind::Double:
            values.emplace_back(input.doubleValue);
            break;
        case PlainValue::Kind::Bool:
            values.emplace_back(input.boolValue);
            break;
        case PlainValue::Kind::None:
            values.emplace_back();
            break;
        default:
            return Error{ErrorKind::Input, "input " + std::to_string(i) +
                                               ": an ExecuTorch method takes tensors and scalars"};
        }
    }
    auto outputs = impl_->module->execute(method, values);
    if (!outputs.ok()) {
        if (!mismatches.empty()) {
            return failure(ErrorKind::Input, mismatches + " (ExecuTorch refused it: " +
                                                 describe(outputs.error()) + ")");
        }
        return failure(ErrorKind::Model,
                       "ExecuTorch failed to run " + method + ": " + describe(outputs.error()));
    }
    std::vector<PlainValue> result;
    result.reserve(outputs->size());
    for (const et::runtime::EValue& value : *outputs) {
        PlainValue out;
        if (value.isTensor()) {
            const et::aten::Tensor tensor = value.toTensor();
            out.kind = PlainValue::Kind::Tensor;
            out.tensor.scalarType = static_cast<int>(tensor.scalar_type());
            out.tensor.sizes.assign(tensor.sizes().begin(), tensor.sizes().end());
            out.tensor.strides.assign(tensor.strides().begin(), tensor.strides().end());
            out.tensor.data = tensor.mutable_data_ptr();
            out.tensor.nbytes = tensor.nbytes();
        } else if (value.isInt()) {
            out.kind = PlainValue::Kind::Int;
            out.intValue = value.toInt();
        } else if (value.isDouble()) {
            out.kind = PlainValue::Kind::Double;
            out.doubleValue = value.toDouble();
        } else if (value.isBool()) {
            out.kind = PlainValue::Kind::Bool;
            out.boolValue = value.toBool();
        } else if (value.isString()) {
            out.kind = PlainValue::Kind::String;
            const auto text = value.toString();
            out.text.assign(text.data(), text.size());
        } else if (!value.isNone()) {
            out.kind = PlainValue::Kind::Other;
            out.text = "an ExecuTorch value of tag " + std::to_string(static_cast<int>(value.tag));
        }
        result.push_back(std::move(out));
    }
    return result;
}

Expected<PteTrace> PteRuntime::takeTrace() {
    if (!impl_->tracer) {
        return Error{ErrorKind::Internal, "this runtime was opened without a tracer"};
    }
    const et::etdump::ETDumpResult dump = impl_->tracer->get_etdump_data();
    PteTrace trace;
    if (dump.buf && dump.size > 0) {
        const auto* bytes = static_cast<const uint8_t*>(dump.buf);
        trace.etdump.assign(bytes, bytes + dump.size);
    }
    std::free(dump.buf);
    if (trace.etdump.empty()) {
        return Error{ErrorKind::Model, "ExecuTorch's event tracer recorded nothing"};
    }
    trace.debugBuffer = impl_->debugBuffer;
    return trace;
}

} // namespace scriptscope
