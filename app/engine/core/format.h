// Formatting shared by the CLI and the GUI (no LibTorch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scriptscope {

// "3.4 KiB": sizes as people read them.
std::string formatBytes(uint64_t bytes);

// "3,440,060": a count with thousands separators.
std::string formatCount(int64_t n);

// A float as Python's repr() writes it: the shortest digits that read back, positional from 1e-4
// to 1e16 ("0.0001", "100000.0"), scientific outside ("1e-05", "1e+16"), "nan", "inf".
std::string formatPythonFloat(double value);

// "[1, 3, 224, 224]": a tensor's shape as PyTorch prints a list of sizes.
std::string formatShape(const std::vector<int64_t>& shape);
// "1x3x224x224" ("scalar" for no sizes): a shape in a line of text or a table cell.
std::string formatDims(const std::vector<int64_t>& shape);

struct TensorInfo;
// "per_channel_affine, axis 0, scales 0.0021..0.0153, zero points 0" or "per_tensor_affine, scale
// 0.05, zero point 128"; empty for tensors that are not quantized.
std::string describeQuantization(const TensorInfo& tensor);

// "SIGSEGV (segmentation fault)": what ended a process, for messages.
std::string describeSignal(int signal);

} // namespace scriptscope
