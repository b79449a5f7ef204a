// The weights inside a quantized module's packed parameters (session_internal.h), unpacked by the
// operators PyTorch registers for them, under the names PyTorch's modules give them.
#include "session_internal.h"

#include <ATen/core/dispatch/Dispatcher.h>

namespace scriptscope::detail {
namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Calls an unpacking operator (quantized::linear_unpack and friends) through the dispatcher;
// nullopt where the operator is missing or refuses the object (an fp16 packing, say).
std::optional<std::vector<c10::IValue>> callUnpack(const char* op, const c10::IValue& packed) {
    const auto handle = c10::Dispatcher::singleton().findSchema({op, ""});
    if (!handle) {
        return std::nullopt;
    }
    try {
        torch::jit::Stack stack{packed};
        handle->callBoxed(&stack);
        return stack;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void addWeightBias(const std::vector<c10::IValue>& unpacked, const std::string& weightName,
                   const std::string& biasName, std::vector<PackedTensor>& out) {
    if (!unpacked.empty() && unpacked[0].isTensor()) {
        out.push_back({weightName, unpacked[0].toTensor()});
    }
    if (unpacked.size() > 1 && unpacked[1].isTensor() && unpacked[1].toTensor().defined()) {
        out.push_back({biasName, unpacked[1].toTensor()});
    }
}

std::string customClassName(const c10::IValue& value) {
    if (!value.isObject()) {
        return {};
    }
    const auto type = value.toObjectRef().type();
    if (!type || !type->name()) {
        return {};
    }
    const std::string name = type->name()->qualifiedName();
    return name.rfind("__torch__.torch.classes.", 0) == 0 ? name : std::string();
}

void unpackLinear(const c10::IValue& packed, const std::string& weightName,
                  const std::string& biasName, std::vector<PackedTensor>& out) {
    if (auto unpacked = callUnpack("quantized::linear_unpack", packed)) {
        addWeightBias(*unpacked, weightName, biasName, out);
    } else if (auto fp16 = callUnpack("quantized::linear_unpack_fp16", packed)) {
        addWeightBias(*fp16, weightName, biasName, out);
    }
}

// The weights a packed-parameters object holds, by the names PyTorch's modules give them.
std::vector<PackedTensor> unpackPacked(const c10::IValue& value, const std::string& moduleType) {
    std::vector<PackedTensor> out;
    const std::string cls = customClassName(value);
    if (cls.empty()) {
        return out;
    }
    try {
        if (endsWith(cls, ".Conv2dPackedParamsBase")) {
            // Conv1d packs as a 2-D convolution; conv1d_unpack gives back its 3-D weight.
            const bool conv1d =
                endsWith(moduleType, "Conv1d") || endsWith(moduleType, "ConvReLU1d");
            auto unpacked = conv1d ? callUnpack("quantized::conv1d_unpack", value) : std::nullopt;
            if (!unpacked) {
                unpacked = callUnpack("quantized::conv2d_unpack", value);
            }
            if (unpacked) {
                addWeightBias(*unpacked, "weight", "bias", out);
            }
        } else if (endsWith(cls, ".Conv3dPackedParamsBase")) {
            if (auto unpacked = callUnpack("quantized::conv3d_unpack", value)) {
                addWeightBias(*unpacked, "weight", "bias", out);
            }
        } else if (endsWith(cls, ".LinearPackedParamsBase")) {
            unpackLinear(value, "weight", "bias", out);
        } else if (endsWith(cls, ".CellParamsBase")) {
            // (kind, tensors, doubles, longs, packed linear params), as RNN.cpp serializes it: for
            // the dynamic kinds the tensors are the biases and the packed params the weights.
            const auto type = value.toObjectRef().type();
            auto* getstate = type->findMethod("__getstate__");
            if (!getstate) {
                return out;
            }
            const auto state = (*getstate)({value});
            if (!state.isTuple() || state.toTupleRef().elements().size() < 5) {
                return out;
            }
            const auto& items = state.toTupleRef().elements();
            const std::string kind = items[0].isString() ? items[0].toStringRef() : "";
            const bool dynamic = kind.rfind("quantized_dynamic", 0) == 0;
            static const char* weights[] = {"weight_ih", "weight_hh"};
            static const char* biases[] = {"bias_ih", "bias_hh"};
            if (items[4].isList()) {
                const auto packed = items[4].toListRef();
                for (size_t i = 0; i < packed.size(); ++i) {
                    const std::string suffix = i < 2 ? "" : std::to_string(i);
                    unpackLinear(packed[i], (i < 2 ? weights[i] : "weight") + suffix,
                                 (i < 2 ? biases[i] : "bias") + suffix, out);
                }
            }
            if (items[1].isList()) {
                const auto tensors = items[1].toListRef();
                for (size_t i = 0; i < tensors.size(); ++i) {
                    if (!tensors[i].isTensor() || !tensors[i].toTensor().defined()) {
                        continue;
                    }
                    const std::string name =
                        dynamic && i < 2 ? std::string(biases[i]) : "tensor" + std::to_string(i);
                    const bool duplicate = std::any_of(
                        out.begin(), out.end(), [&](const auto& t) { return t.name == name; });
                    if (!duplicate) {
                        out.push_back({name, tensors[i].toTensor()});
                    }
                }
            }
        }
    } catch (const std::exception&) {
        // A packing this LibTorch cannot unpack: the attribute still shows as an object.
    }
    return out;
}

} // namespace

// Every packed tensor of one module: its own attributes that hold packed parameters, directly or
// in a list. The attribute's name goes with each.
std::vector<std::pair<std::string, PackedTensor>> packedTensors(const torch::jit::Module& module) {
    std::vector<std::pair<std::string, PackedTensor>> found;
    const auto& type = module.type();
    const auto object = module._ivalue();
    const std::string moduleType = type->name() ? type->name()->qualifiedName() : type->str();
    for (size_t slot = 0; slot < type->numAttributes(); ++slot) {
        if (type->is_parameter(slot) || type->is_buffer(slot)) {
            continue;
        }
        const auto value = object->getSlot(slot);
        const std::string attribute = type->getAttributeName(slot);
        if (value.isObject()) {
            for (auto& t : unpackPacked(value, moduleType)) {
                found.emplace_back(attribute, std::move(t));
            }
        } else if (value.isList()) {
            const auto items = value.toListRef();
            for (size_t i = 0; i < items.size(); ++i) {
                for (auto& t : unpackPacked(items[i], moduleType)) {
                    t.name += "_l" + std::to_string(i);
                    found.emplace_back(attribute + "." + std::to_string(i), std::move(t));
                }
            }
        }
    }
    return found;
}

} // namespace scriptscope::detail
