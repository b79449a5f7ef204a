// Internal to the engine (includes LibTorch): conversions between the engine's value structs and
// LibTorch values. Only the engine's own .cpp files include this.
#pragma once

#include "error.h"
#include "run_types.h"

#include <torch/script.h>

#include <string>
#include <vector>

namespace scriptscope::detail {

std::string dtypeName(c10::ScalarType type); // "float32", as Python prints it without "torch."
Expected<c10::ScalarType> dtypeFromName(const std::string& name);

// Builds one argument. Images are read with OpenCV; files with torch::pickle_load.
Expected<c10::IValue> buildInput(const InputSpec& spec);
// Reads a torch.save file (zip format) into a value.
Expected<c10::IValue> loadValueFile(const std::string& path);

OutputValue describeOutput(const c10::IValue& value, size_t previewValues, size_t valuesLimit = 0);
// Moves every tensor in a value to the CPU, for saving.
c10::IValue toCpu(const c10::IValue& value);

// A short, single-line preview of a value, Python-like.
std::string previewValue(const c10::IValue& value, size_t maxLength = 80);

// One line from LibTorch's message: the exception at the end of an interpreter traceback, or the
// first line with the archive's file and line of a compilation error.
std::string summarizeTorchMessage(const std::string& message);

// Maps any exception LibTorch throws to an Error with a message a person can act on.
Error errorFromException(const std::exception& error, ErrorKind fallback);

} // namespace scriptscope::detail
