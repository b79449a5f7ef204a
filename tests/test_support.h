// Shared helpers for the tests: fixture paths and file reading.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTest>

#include <string>
#include <vector>

namespace scriptscope::test {

// The ExecuTorch fixtures: the programs (and their dumps) committed under saved_by/pte (every
// build), and the set the build made when its Python has the pinned executorch (make_pte.py).
inline std::vector<std::string> pteFolders() {
    std::vector<std::string> folders = {std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                        "/tests/fixtures/saved_by/pte"};
    const std::string built = SCRIPTSCOPE_PTE_DIR;
    if (!built.empty()) {
        folders.push_back(built);
    }
    return folders;
}

inline std::string fixture(const std::string& name) {
    return std::string(SCRIPTSCOPE_FIXTURES_DIR) + "/" + name;
}

// Slow is not broken: every time limit a test sets is multiplied by one factor,
// SCRIPTSCOPE_TEST_TIME_FACTOR from the environment, else the build's default (1, and 3 in a
// sanitizer build: tests/CMakeLists.txt), so that a busy or slow machine does not fail a test.
inline double timeFactor() {
    const QByteArray text = qgetenv("SCRIPTSCOPE_TEST_TIME_FACTOR");
    bool ok = false;
    const double factor = text.toDouble(&ok);
    return ok && factor >= 1 ? factor : double(SCRIPTSCOPE_TEST_DEFAULT_TIME_FACTOR);
}

// A limit in milliseconds (or seconds), scaled by timeFactor().
inline int scaled(int limit) {
    return static_cast<int>(limit * timeFactor());
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
    if (!process.waitForFinished(scaled(timeoutMs))) {
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

// scriptscope-cli with these arguments, waited for.
inline ProgramResult cli(const QStringList& arguments, int timeoutMs = 120000) {
    return runProgram(QStringLiteral(SCRIPTSCOPE_CLI_PATH), arguments, timeoutMs);
}

// A fixture's path, for an argument.
inline QString fx(const char* name) {
    return QString::fromStdString(fixture(name));
}

// aten::warn nodes carry a warn_id that a process-wide counter hands out as code is compiled: the
// same archive prints warn_id=1 in a fresh Python and warn_id=14 after other models were scripted.
// Graph texts are compared with those numbers as N; everything else must be identical.
inline std::string withoutWarnIds(std::string text) {
    const std::string key = "[warn_id=";
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
        const size_t digits = at + key.size();
        size_t end = digits;
        while (end < text.size() && text[end] >= '0' && text[end] <= '9') {
            ++end;
        }
        text.replace(digits, end - digits, "N");
    }
    return text;
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
