// Formatting shared by the CLI and the GUI (no LibTorch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scriptscope {

// "3.4 KiB": sizes as people read them.
std::string formatBytes(uint64_t bytes);

// "[1, 3, 224, 224]": a tensor's shape as PyTorch prints a list of sizes.
std::string formatShape(const std::vector<int64_t>& shape);

// "SIGSEGV (segmentation fault)": what ended a process, for messages.
std::string describeSignal(int signal);

} // namespace scriptscope
