// Formatting shared by the CLI and the GUI (no LibTorch).
#pragma once

#include <cstdint>
#include <string>

namespace scriptscope {

// "3.4 KiB": sizes as people read them.
std::string formatBytes(uint64_t bytes);

// "SIGSEGV (segmentation fault)": what ended a process, for messages.
std::string describeSignal(int signal);

} // namespace scriptscope
