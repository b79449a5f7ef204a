// Internal to the engine (includes LibTorch): conversions between the engine's value structs and
// LibTorch values. Only the engine's own .cpp files include this.
#pragma once

#include "error.h"
#include "pytree_spec.h"
#include "run_types.h"

#include <torch/script.h>

#include <string>
#include <vector>

namespace scriptscope::detail {

std::string dtypeName(c10::ScalarType type); // "float32", as Python prints it without "torch."
Expected<c10::ScalarType> dtypeFromName(const std::string& name);

// Builds one argument. Images are read with OpenCV; files with torch::pickle_load.
// frame: what an "image:-" input reads (a source's current frame); nullptr when there is none.
Expected<c10::IValue> buildInput(const InputSpec& spec, const ImageFrame* frame = nullptr);
// Reads a torch.save file (zip format) into a value, with the project's own pickle reader (see
// pickle_value.h). Lists and dicts get their elements' common type (Any when none).
Expected<c10::IValue> loadValueFile(const std::string& path);
constexpr uint64_t kMaxValuePickleBytes = 256u << 20;
// The value as a torch.save file that Python's torch.load reads with its default weights_only=True
// (PyTorch >= 2.6): torch::pickle_save tags lists and dicts with their TorchScript type through a
// function (torch.jit._pickle.restore_type_tag) that weights_only refuses; this writes them plain.
std::vector<char> saveValueBytes(const c10::IValue& value);
// saveValueBytes of the value (on the CPU) written to a file: RunRequest::saveOutputsPath.
Status saveValueFile(const c10::IValue& value, const std::string& path);

// The value as the type wants it: lists, tuples and dicts rebuilt with the type's element types
// (a List[Any] read from a file becomes the List[Tensor] an argument takes), ints widened to
// float. On a mismatch the error names the place: "images[1] is int, not Tensor".
Expected<c10::IValue> conformToType(const c10::IValue& value, const c10::TypePtr& type,
                                    const std::string& where, int depth = 0);

// A program's flat outputs nested as Python returns them (a .pt2's out_spec, a .pte's output
// spec): tuples (NamedTuples as tuples), lists, dicts with their keys (str keys as str, others as
// int where they read as one), None. An error when the spec does not hold as many values.
Expected<c10::IValue> nestOutputs(const PytreeSpec& spec, const std::vector<c10::IValue>& flat);

OutputValue describeOutput(const c10::IValue& value, size_t previewValues, size_t valuesLimit = 0);
// Moves every tensor in a value (through lists, tuples and dicts) to a device: inputs to the run's
// device, outputs to the CPU for saving.
c10::IValue toDevice(const c10::IValue& value, const c10::Device& device);
c10::IValue toCpu(const c10::IValue& value);

// A short, single-line preview of a value, Python-like.
std::string previewValue(const c10::IValue& value, size_t maxLength = 80);

// One line from LibTorch's message: the exception at the end of an interpreter traceback, or the
// first line with the archive's file and line of a compilation error.
std::string summarizeTorchMessage(const std::string& message);

// Maps any exception LibTorch throws to an Error with a message a person can act on.
Error errorFromException(const std::exception& error, ErrorKind fallback);

} // namespace scriptscope::detail
