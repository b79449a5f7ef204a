// The worker's sandbox, applied in a forked child (it cannot be undone): no sockets of any family
// and no io_uring, file writes only in the scratch folder (required wherever the kernel has
// Landlock; a kernel without it fails the test unless SCRIPTSCOPE_NO_LANDLOCK=1 declares the
// machine unsupported), reading still allowed, and no new privileges.
#include <sandbox.h>

#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace scriptscope;

namespace {

// Bits the child sets in its exit status.
enum : int {
    kInetRefused = 1 << 0,
    kUnixRefused = 1 << 1,
    kOutsideWriteRefused = 1 << 2,
    kScratchWriteAllowed = 1 << 3,
    kReadAllowed = 1 << 4,
    kNoNewPrivs = 1 << 5,
    kReportedConfined = 1 << 6,
    kIoUringRefused = 1 << 7,
};

// Whether this kernel offers Landlock at all (ABI version 1 or later), asked outside any sandbox.
bool kernelHasLandlock() {
    const long abi =
        syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi >= 1;
}

} // namespace

class TestSandbox : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void childIsConfined() {
        QTemporaryDir scratch;
        QTemporaryDir outside;
        QVERIFY(scratch.isValid() && outside.isValid());
        const std::string scratchPath = scratch.path().toStdString();
        const std::string outsidePath =
            outside.filePath(QStringLiteral("escaped.txt")).toStdString();
        const std::string insidePath =
            scratch.filePath(QStringLiteral("allowed.txt")).toStdString();
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            const SandboxReport report = applySandbox(scratchPath);
            int bits = 0;
            const int inet = socket(AF_INET, SOCK_STREAM, 0);
            bits |= (inet < 0 && errno == EACCES) ? kInetRefused : 0;
            const int unixSocket = socket(AF_UNIX, SOCK_STREAM, 0);
            bits |= (unixSocket < 0 && errno == EACCES) ? kUnixRefused : 0;
            const int out = open(outsidePath.c_str(), O_CREAT | O_WRONLY, 0600);
            bits |= out < 0 ? kOutsideWriteRefused : 0;
            const int in = open(insidePath.c_str(), O_CREAT | O_WRONLY, 0600);
            bits |= in >= 0 ? kScratchWriteAllowed : 0;
            const int read = open("/proc/self/status", O_RDONLY);
            bits |= read >= 0 ? kReadAllowed : 0;
            bits |= prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? kNoNewPrivs : 0;
            bits |= report.writesConfined ? kReportedConfined : 0;
            // io_uring can open sockets without socket(): its setup is refused too.
            io_uring_params params;
            std::memset(&params, 0, sizeof params);
            const long ring = syscall(__NR_io_uring_setup, 4, &params);
            bits |= (ring < 0 && errno == EACCES) ? kIoUringRefused : 0;
            _exit(bits);
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        const int bits = WEXITSTATUS(status);
        QVERIFY2(bits & kInetRefused, "an IPv4 socket was created");
        QVERIFY2(bits & kUnixRefused, "a Unix socket was created");
        QVERIFY(bits & kScratchWriteAllowed);
        QVERIFY(bits & kReadAllowed);
        QVERIFY(bits & kNoNewPrivs);
        QVERIFY2(bits & kIoUringRefused, "io_uring_setup was not refused");
        // Where the kernel has Landlock, writes must be confined: a sandbox that silently stopped
        // confining them fails here. A machine without it must say so explicitly.
        if (kernelHasLandlock()) {
            QVERIFY2(bits & kReportedConfined,
                     "the kernel has Landlock, but the sandbox did not confine writes");
            QVERIFY2(bits & kOutsideWriteRefused, "a write outside the scratch folder escaped");
        } else {
            QVERIFY2(qgetenv("SCRIPTSCOPE_NO_LANDLOCK") == "1",
                     "this kernel has no Landlock, so file writes are not confined; set "
                     "SCRIPTSCOPE_NO_LANDLOCK=1 to declare the machine unsupported");
            QVERIFY2(!(bits & kReportedConfined), "the report claims confinement without Landlock");
        }
    }

    void reportSaysWhatItDid() {
        SandboxReport report;
        report.noSockets = true;
        report.writesConfined = false;
        report.scratch = "/tmp/x";
        QVERIFY(QString::fromStdString(report.summary()).contains(QStringLiteral("NOT confined")));
        report.writesConfined = true;
        QVERIFY(QString::fromStdString(report.summary())
                    .contains(QStringLiteral("writes only to /tmp/x")));
    }
};

QTEST_APPLESS_MAIN(TestSandbox)
#include "test_sandbox.moc"
