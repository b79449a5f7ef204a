#include "sandbox.h"

#include <cerrno>
#include <cstddef>
#include <cstring>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace scriptscope {

std::string SandboxReport::summary() const {
    std::string text = "sandbox:";
    text += noSockets ? " no network or new sockets;" : " network NOT blocked;";
    text += writesConfined ? " writes only to " + scratch + ";" : " file writes NOT confined;";
    text += noNewPrivileges ? " no new privileges" : " privileges unchanged";
    return text;
}

#if defined(__linux__)
namespace {

#if defined(__x86_64__)
constexpr unsigned kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr unsigned kAuditArch = 0;
#endif

bool denySockets(std::string& why) {
    if (kAuditArch == 0) {
        why = "no seccomp filter for this CPU architecture";
        return false;
    }
    // socket() of any family fails with EACCES; so does io_uring_setup (io_uring can open sockets
    // without the socket system call). Every other call is allowed.
    const auto deny = static_cast<unsigned>(SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA));
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), // another ABI: leave it alone
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, deny),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    // TSYNC: every thread of the process, not only this one.
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program) != 0) {
        why = std::string("seccomp is unavailable (") + std::strerror(errno) + ")";
        return false;
    }
    return true;
}

bool confineWrites(const std::string& scratch, std::string& why) {
    const long abi =
        syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        why = std::string("Landlock is unavailable in this kernel (") + std::strerror(errno) + ")";
        return false;
    }
    __u64 writes = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                   LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                   LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                   LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                   LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
#ifdef LANDLOCK_ACCESS_FS_REFER
    if (abi >= 2) {
        writes |= LANDLOCK_ACCESS_FS_REFER;
    }
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
    if (abi >= 3) {
        writes |= LANDLOCK_ACCESS_FS_TRUNCATE;
    }
#endif
    landlock_ruleset_attr attributes{};
    attributes.handled_access_fs = writes;
    const int ruleset =
        static_cast<int>(syscall(__NR_landlock_create_ruleset, &attributes, sizeof(attributes), 0));
    if (ruleset < 0) {
        why = std::string("Landlock refused the rules (") + std::strerror(errno) + ")";
        return false;
    }
    // The scratch folder, and /dev (GPU drivers open their devices for writing; /dev/null).
    bool ok = true;
    for (const std::string& path : {scratch, std::string("/dev")}) {
        const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
        if (fd < 0) {
            ok = path != scratch; // a missing scratch folder is an error; a missing /dev is not
            continue;
        }
        landlock_path_beneath_attr rule{};
        rule.allowed_access = writes;
        rule.parent_fd = fd;
        if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
            ok = false;
        }
        close(fd);
    }
    if (!ok) {
        close(ruleset);
        why = "the scratch folder '" + scratch + "' cannot be opened";
        return false;
    }
    const bool restricted = syscall(__NR_landlock_restrict_self, ruleset, 0) == 0;
    if (!restricted) {
        why = std::string("Landlock could not restrict the process (") + std::strerror(errno) + ")";
    }
    close(ruleset);
    return restricted;
}

} // namespace

SandboxReport applySandbox(const std::string& scratchDir) {
    SandboxReport report;
    report.scratch = scratchDir;
    // Needed for seccomp and Landlock without privileges; and no setuid program run from here
    // gains any.
    report.noNewPrivileges = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
    if (!report.noNewPrivileges) {
        report.notes.push_back(std::string("no_new_privs failed: ") + std::strerror(errno));
        return report;
    }
    std::string why;
    if (!scratchDir.empty()) {
        report.writesConfined = confineWrites(scratchDir, why);
        if (!report.writesConfined) {
            report.notes.push_back(why);
        }
    } else {
        report.notes.push_back("no scratch folder given: file writes are not confined");
    }
    report.noSockets = denySockets(why);
    if (!report.noSockets) {
        report.notes.push_back(why);
    }
    return report;
}
#else
SandboxReport applySandbox(const std::string& scratchDir) {
    SandboxReport report;
    report.scratch = scratchDir;
    report.notes.push_back("the sandbox is only implemented on Linux");
    return report;
}
#endif

} // namespace scriptscope
