// Shared helpers for the tests: fixture paths and file reading.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTest>

#include <string>

namespace scriptscope::test {

inline std::string fixture(const std::string& name) {
    return std::string(SCRIPTSCOPE_FIXTURES_DIR) + "/" + name;
}

struct ProgramResult {
    int exitCode = -1; // -1: it crashed; -2: it did not finish in time (and was killed)
    std::string out;
    std::string err;
};

inline ProgramResult runProgram(const QString& program, const QStringList& arguments,
                                int timeoutMs = 120000) {
    QProcess process;
    process.start(program, arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return {-2, {}, "did not finish"};
    }
    ProgramResult r;
    r.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    r.out = process.readAllStandardOutput().toStdString();
    r.err = process.readAllStandardError().toStdString();
    return r;
}

inline std::string readText(const std::string& path) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly)) {
        // A missing fixture fails the test; it never skips it.
        qFatal("missing fixture %s", path.c_str());
    }
    return file.readAll().toStdString();
}

// Whether this machine must offer CUDA: the LibTorch built against has it (CMake says) and the
// NVIDIA driver's device node is there. Decided without asking the product, so that a test checks
// "disabled, with the reason" on one kind of machine and "listed, runs equal to the CPU" on the
// other instead of believing whatever the device list says.
inline bool cudaExpected() {
    return SCRIPTSCOPE_TEST_CUDA_BUILD && QFile::exists(QStringLiteral("/dev/nvidiactl"));
}

} // namespace scriptscope::test
