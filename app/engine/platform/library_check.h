// Before an operator library is loaded into a process that runs LibTorch: is it built against this
// LibTorch? A library built for another one (torchvision's _C of Debian's 1.13 in a PyTorch 2.14
// build, or the other way round) drags that LibTorch into the process beside this one, and its
// static initializers crash it (SIGBUS, SIGSEGV) before any error can be reported. This reads the
// library's ELF file, bounded, without loading it: which LibTorch libraries it needs (their
// SONAMEs carry the release: libtorch_cpu.so.1.13 against the wheel's libtorch_cpu.so), and
// whether this process defines the LibTorch symbols it uses. No LibTorch here.
#pragma once

#include "error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

// What the dynamic section and the dynamic symbol table of an ELF shared object say.
struct SharedObjectFacts {
    uint16_t machine = 0; // e_machine: 62 for x86-64
    std::string soname;
    std::vector<std::string> needed;    // DT_NEEDED, in order
    std::vector<std::string> undefined; // global (not weak) symbols it expects from others
};

// Reads `size` bytes at `offset`; nullopt past the end or on a read error.
using ByteReader = std::function<std::optional<std::string>(uint64_t offset, uint64_t size)>;

// Reads an ELF64 little-endian shared object through `read` (a file of `fileSize` bytes), every
// offset and count bounded by the file; a Format error says what is wrong and at which byte ("it is
// not a shared library ...": the caller names the file). `symbols` false reads the SONAME and
// DT_NEEDED only.
Expected<SharedObjectFacts> readSharedObject(const ByteReader& read, uint64_t fileSize,
                                             bool symbols = true);
Expected<SharedObjectFacts> readSharedObjectFile(const std::string& path, bool symbols = true);

// "libtorch_cpu.so.1.13" -> ".1.13", "libc10.so" -> "": the release a LibTorch library name
// carries; nullopt for a name that is not one of LibTorch's (libtorch*, libc10*, libshm).
std::optional<std::string> libtorchSonameRelease(const std::string& name);

struct LibraryVerdict {
    bool loadable = true; // false: loading it would bring in another LibTorch, or fail
    bool checked = false; // false: the file could not be read as ELF (dlopen will say why)
    std::string reason;   // why it is refused: "it was built for another LibTorch: ..."
};

// Checks `path` against the LibTorch this process has loaded (its SONAMEs, from the objects
// dl_iterate_phdr lists) and against the symbols it defines (dlsym). `libtorchVersion` is for the
// message ("this ScriptScope runs LibTorch 2.14.1").
LibraryVerdict checkOperatorLibrary(const std::string& path, const std::string& libtorchVersion);

} // namespace scriptscope
