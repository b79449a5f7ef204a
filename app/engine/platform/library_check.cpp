#include "library_check.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>

namespace scriptscope {
namespace {

// Bounds on what is read: larger tables are no shared object a person built.
constexpr uint64_t kMaxDynamicBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxSymbolBytes = uint64_t{256} << 20;
constexpr uint64_t kMaxStringBytes = uint64_t{256} << 20;
constexpr uint64_t kMaxNameBytes = 4096;

Error formatError(const std::string& what) {
    return Error{ErrorKind::Format, "it is not a shared library this machine can load: " + what};
}

template <typename T>
bool readStruct(const ByteReader& read, uint64_t offset, T& out) {
    const auto bytes = read(offset, sizeof(T));
    if (!bytes || bytes->size() != sizeof(T)) {
        return false;
    }
    std::memcpy(&out, bytes->data(), sizeof(T));
    return true;
}

struct Section {
    uint64_t offset = 0, size = 0;
    uint32_t link = 0;
};

// A section's bytes within the file, or why not.
Expected<Section> sectionAt(const std::vector<Elf64_Shdr>& sections, uint32_t index,
                            uint64_t fileSize, uint64_t limit, const char* what) {
    if (index >= sections.size()) {
        return formatError(std::string(what) + " names section " + std::to_string(index) + " of " +
                           std::to_string(sections.size()));
    }
    const Elf64_Shdr& s = sections[index];
    if (s.sh_offset > fileSize || s.sh_size > fileSize - s.sh_offset) {
        return formatError(std::string(what) + " at byte " + std::to_string(s.sh_offset) +
                           " runs past the end of the file");
    }
    if (s.sh_size > limit) {
        return formatError(std::string(what) + " of " + std::to_string(s.sh_size) +
                           " bytes is larger than any library's");
    }
    return Section{s.sh_offset, s.sh_size, s.sh_link};
}

// The NUL-terminated string at `index` of a string table, read on its own (no whole table).
std::optional<std::string> stringAt(const ByteReader& read, const Section& table, uint64_t index) {
    if (index >= table.size) {
        return std::nullopt;
    }
    const uint64_t length = std::min(kMaxNameBytes, table.size - index);
    const auto bytes = read(table.offset + index, length);
    if (!bytes) {
        return std::nullopt;
    }
    const auto end = bytes->find('\0');
    if (end == std::string::npos) {
        return std::nullopt;
    }
    return bytes->substr(0, end);
}

} // namespace

Expected<SharedObjectFacts> readSharedObject(const ByteReader& read, uint64_t fileSize,
                                             bool symbols) {
    Elf64_Ehdr header{};
    if (fileSize < sizeof header || !readStruct(read, 0, header)) {
        return formatError("the file is shorter than an ELF header");
    }
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
        return formatError("it does not start with the ELF magic number");
    }
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
        return formatError("it is not a 64-bit little-endian ELF file");
    }
    if (header.e_type != ET_DYN) {
        return formatError("it is an ELF file of type " + std::to_string(header.e_type) +
                           ", not a shared object");
    }
    SharedObjectFacts facts;
    facts.machine = header.e_machine;
    if (header.e_shnum == 0 || header.e_shoff == 0) {
        return formatError("it has no section headers");
    }
    if (header.e_shentsize != sizeof(Elf64_Shdr)) {
        return formatError("its section headers are " + std::to_string(header.e_shentsize) +
                           " bytes, not " + std::to_string(sizeof(Elf64_Shdr)));
    }
    const uint64_t tableBytes = uint64_t{header.e_shnum} * sizeof(Elf64_Shdr);
    if (header.e_shoff > fileSize || tableBytes > fileSize - header.e_shoff) {
        return formatError("its section headers at byte " + std::to_string(header.e_shoff) +
                           " run past the end of the file");
    }
    const auto table = read(header.e_shoff, tableBytes);
    if (!table || table->size() != tableBytes) {
        return formatError("its section headers cannot be read");
    }
    std::vector<Elf64_Shdr> sections(header.e_shnum);
    std::memcpy(sections.data(), table->data(), tableBytes);

    bool sawDynamic = false;
    for (uint32_t i = 0; i < sections.size(); ++i) {
        if (sections[i].sh_type == SHT_DYNAMIC && !sawDynamic) {
            sawDynamic = true;
            auto dynamic =
                sectionAt(sections, i, fileSize, kMaxDynamicBytes, "the dynamic section");
            if (!dynamic) {
                return dynamic.error();
            }
            auto strings = sectionAt(sections, dynamic->link, fileSize, kMaxStringBytes,
                                     "the dynamic section's string table");
            if (!strings) {
                return strings.error();
            }
            const auto entries = read(dynamic->offset, dynamic->size);
            if (!entries) {
                return formatError("its dynamic section cannot be read");
            }
            for (size_t at = 0; at + sizeof(Elf64_Dyn) <= entries->size();
                 at += sizeof(Elf64_Dyn)) {
                Elf64_Dyn entry{};
                std::memcpy(&entry, entries->data() + at, sizeof entry);
                if (entry.d_tag == DT_NULL) {
                    break;
                }
                if (entry.d_tag != DT_NEEDED && entry.d_tag != DT_SONAME) {
                    continue;
                }
                auto name = stringAt(read, *strings, entry.d_un.d_val);
                if (!name) {
                    return formatError("a name in its dynamic section at byte " +
                                       std::to_string(dynamic->offset + at) +
                                       " points outside its string table");
                }
                if (entry.d_tag == DT_NEEDED) {
                    facts.needed.push_back(std::move(*name));
                } else {
                    facts.soname = std::move(*name);
                }
            }
        } else if (sections[i].sh_type == SHT_DYNSYM && symbols) {
            auto dynsym = sectionAt(sections, i, fileSize, kMaxSymbolBytes, "the symbol table");
            if (!dynsym) {
                return dynsym.error();
            }
            auto strings = sectionAt(sections, dynsym->link, fileSize, kMaxStringBytes,
                                     "the symbol table's string table");
            if (!strings) {
                return strings.error();
            }
            const auto entries = read(dynsym->offset, dynsym->size);
            const auto names = read(strings->offset, strings->size);
            if (!entries || !names) {
                return formatError("its symbol table cannot be read");
            }
            for (size_t at = 0; at + sizeof(Elf64_Sym) <= entries->size();
                 at += sizeof(Elf64_Sym)) {
                Elf64_Sym symbol{};
                std::memcpy(&symbol, entries->data() + at, sizeof symbol);
                if (symbol.st_shndx != SHN_UNDEF || symbol.st_name == 0 ||
                    ELF64_ST_BIND(symbol.st_info) != STB_GLOBAL) {
                    continue;
                }
                if (symbol.st_name >= names->size()) {
                    return formatError("a symbol's name at byte " +
                                       std::to_string(dynsym->offset + at) +
                                       " points outside its string table");
                }
                const char* name = names->data() + symbol.st_name;
                const size_t length = ::strnlen(
                    name, std::min<size_t>(kMaxNameBytes, names->size() - symbol.st_name));
                facts.undefined.emplace_back(name, length);
            }
        }
    }
    if (!sawDynamic) {
        return formatError("it has no dynamic section");
    }
    return facts;
}

Expected<SharedObjectFacts> readSharedObjectFile(const std::string& path, bool symbols) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error{ErrorKind::File, std::string("it cannot be read: ") + std::strerror(errno)};
    }
    const std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* f) {
        ::close(*f);
        delete f;
    });
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        return Error{ErrorKind::File, "it is not a regular file"};
    }
    const auto fileSize = static_cast<uint64_t>(info.st_size);
    const ByteReader read = [fd, fileSize](uint64_t offset,
                                           uint64_t size) -> std::optional<std::string> {
        if (offset > fileSize || size > fileSize - offset) {
            return std::nullopt;
        }
        std::string bytes(size, '\0');
        uint64_t done = 0;
        while (done < size) {
            const ssize_t n =
                ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
            if (n <= 0) {
                return std::nullopt;
            }
            done += static_cast<uint64_t>(n);
        }
        return bytes;
    };
    return readSharedObject(read, fileSize, symbols);
}

std::optional<std::string> libtorchSonameRelease(const std::string& name) {
    static const char* const kLibraries[] = {"libtorch.so",
                                             "libtorch_cpu.so",
                                             "libtorch_cuda.so",
                                             "libtorch_python.so",
                                             "libtorch_global_deps.so",
                                             "libc10.so",
                                             "libc10_cuda.so",
                                             "libshm.so"};
    for (const char* library : kLibraries) {
        const size_t length = std::strlen(library);
        if (name.compare(0, length, library) == 0 &&
            (name.size() == length || name[length] == '.')) {
            return name.substr(length);
        }
    }
    return std::nullopt;
}

namespace {

// The SONAMEs (and file names) of every object loaded into this process.
std::set<std::string> loadedNames() {
    std::set<std::string> names;
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto& out = *static_cast<std::set<std::string>*>(data);
            if (info->dlpi_name && *info->dlpi_name) {
                const std::string path = info->dlpi_name;
                out.insert(path.substr(path.find_last_of('/') + 1));
                if (auto facts = readSharedObjectFile(path, false);
                    facts && !facts->soname.empty()) {
                    out.insert(facts->soname);
                }
            }
            return 0;
        },
        &names);
    return names;
}

// LibTorch's own symbols: in the c10, at, torch and caffe2 namespaces (functions, typeinfo,
// vtables), as the Itanium ABI mangles them.
bool isLibtorchSymbol(const std::string& name) {
    for (const char* space : {"3c10", "2at", "5torch", "6caffe2"}) {
        for (const char* prefix : {"_ZN", "_ZNK", "_ZTIN", "_ZTVN", "_ZTSN"}) {
            if (name.rfind(std::string(prefix) + space, 0) == 0) {
                return true;
            }
        }
    }
    return false;
}

std::string demangle(const std::string& name) {
    int status = 0;
    char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    std::string readable = status == 0 && text ? text : name;
    std::free(text);
    if (readable.size() > 120) {
        readable = readable.substr(0, 117) + "...";
    }
    return readable;
}

} // namespace

LibraryVerdict checkOperatorLibrary(const std::string& path, const std::string& libtorchVersion) {
    LibraryVerdict verdict;
    auto facts = readSharedObjectFile(path);
    if (!facts) {
        if (facts.error().kind == ErrorKind::File) {
            verdict.loadable = false;
            verdict.checked = true;
            verdict.reason = facts.error().message;
        }
        return verdict; // not ELF as this reads it: dlopen says why, or loads it on its own
    }
    verdict.checked = true;
    const std::set<std::string> loaded = loadedNames();
    // The release this process's LibTorch names its libraries with.
    std::optional<std::string> ours;
    std::string ourName;
    for (const auto& name : loaded) {
        if (name.rfind("libc10.so", 0) == 0 || name.rfind("libtorch_cpu.so", 0) == 0) {
            if (auto release = libtorchSonameRelease(name);
                release && (!ours || release->size() < ours->size())) {
                ours = release; // the SONAME, shorter than the file's full version
                ourName = name;
            }
        }
    }
    bool libtorchLoaded = true; // every LibTorch library it needs is here already
    for (const auto& needed : facts->needed) {
        const auto release = libtorchSonameRelease(needed);
        if (!release || loaded.count(needed)) {
            continue;
        }
        libtorchLoaded = false;
        if (!ours || *release == *ours) {
            continue; // this LibTorch's own (libtorch_python.so): the loader finds it or says so
        }
        verdict.loadable = false;
        verdict.reason = "it was built for another LibTorch (it needs " + needed +
                         (release->empty() ? std::string(", a PyTorch wheel's")
                                           : ", of LibTorch " + release->substr(1)) +
                         "; this is LibTorch " + libtorchVersion + ", " + ourName +
                         "), and loading it would crash. Use the one built for LibTorch " +
                         libtorchVersion + ", or the ScriptScope built on the other";
        return verdict;
    }
    if (!libtorchLoaded) {
        return verdict; // some of its symbols come with the libraries it brings
    }
    size_t uses = 0, missing = 0;
    std::string example;
    for (const auto& symbol : facts->undefined) {
        if (!isLibtorchSymbol(symbol)) {
            continue;
        }
        ++uses;
        if (!::dlsym(RTLD_DEFAULT, symbol.c_str())) {
            if (missing++ == 0) {
                example = demangle(symbol);
            }
        }
    }
    if (missing > 0) {
        verdict.loadable = false;
        verdict.reason = "it was built for another LibTorch: " + std::to_string(missing) +
                         " of the " + std::to_string(uses) +
                         " LibTorch functions it calls are not in LibTorch " + libtorchVersion +
                         " (the first: " + example + ")";
    }
    return verdict;
}

} // namespace scriptscope
