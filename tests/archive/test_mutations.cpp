// A few hundred mutated archives (tests/fixtures/make_mutations.py): every one ends in a message,
// a handled crash or a handled time-out.
//  - All of them through the engine, each in a forked child with a time and memory limit, as the
//    CLI and the worker run them: a load that fails must say why in one line.
//  - Every tenth through scriptscope-cli: it exits 0, 1, 3 or 4 with a one-line message and is
//    never killed by a signal itself.
#include "test_support.h"

#include <process_limits.h>
#include <session.h>

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <csignal>
#include <map>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace scriptscope;

namespace {

enum class Outcome { Loaded, Message, Crashed, TimedOut, Waited, Broken };

struct Result {
    Outcome outcome = Outcome::Broken;
    std::string text;
};

// What a variant may use before it counts as hung: CPU time (a busy machine does not use it up;
// the kernel ends the child with SIGXCPU), and a far longer wall-clock limit for a child that
// sleeps or waits instead. Both scale with the tests' time factor (3x under the sanitizers).
constexpr int kCpuSeconds = 30;
constexpr int kWallSeconds = 120;

// Loads (and prints the code of) one archive in a child process.
Result loadIsolated(const std::string& path) {
    int pipeFds[2];
    if (pipe(pipeFds) != 0) {
        return {Outcome::Broken, "pipe failed"};
    }
    const pid_t child = fork();
    if (child == 0) {
        close(pipeFds[0]);
        applyMemoryLimit(4ull << 30);
        const rlim_t cpu = static_cast<rlim_t>(scriptscope::test::scaled(kCpuSeconds));
        const rlimit cpuLimit{cpu, cpu + 5}; // SIGXCPU at the soft limit, SIGKILL 5 s later
        setrlimit(RLIMIT_CPU, &cpuLimit);
        alarm(static_cast<unsigned>(scriptscope::test::scaled(kWallSeconds)));
        Session session;
        auto model = session.load(path);
        std::string text;
        int code = 0;
        if (model) {
            auto code_ = session.code("", "forward");
            text = code_ ? "loaded" : "loaded; code: " + code_.error().message;
        } else {
            text = model.error().message;
            code = 1;
        }
        (void)!write(pipeFds[1], text.data(), text.size());
        _exit(code);
    }
    close(pipeFds[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) > 0;) {
        text.append(buffer, static_cast<size_t>(n));
    }
    close(pipeFds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) {
        const int signal = WTERMSIG(status);
        if (signal == SIGXCPU || signal == SIGKILL) {
            return {Outcome::TimedOut,
                    "used its " + std::to_string(test::scaled(kCpuSeconds)) + " s of CPU time"};
        }
        if (signal == SIGALRM) {
            return {Outcome::Waited, "waited " + std::to_string(test::scaled(kWallSeconds)) +
                                         " s without using its CPU time"};
        }
        return {Outcome::Crashed, strsignal(signal)};
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return {Outcome::Loaded, text};
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
        return {Outcome::Message, text};
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kMemoryLimitExitCode) {
        // A CUDA build's resident-memory limit (process_limits.h): the limit did its work.
        return {Outcome::Message, "hit the memory limit"};
    }
    return {Outcome::Broken, "exit status " + std::to_string(status) + ": " + text};
}

// Today's run (LibTorch 1.13, these 300 variants): the probe refuses what would crash LibTorch,
// so none crashes it or times out. A weaker probe lets some through: more than this fails.
constexpr int kMaxLibTorchFailures = 0;

QStringList mutations() {
    const QDir dir(QStringLiteral(SCRIPTSCOPE_FIXTURES_DIR "/mutations"));
    const QStringList names = dir.entryList({QStringLiteral("*.pt")}, QDir::Files, QDir::Name);
    QStringList paths;
    for (const QString& name : names) {
        paths << dir.filePath(name);
    }
    return paths;
}

} // namespace

class TestMutations : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyVariantEndsInAMessageACrashOrATimeout() {
        const QStringList paths = mutations();
        QVERIFY2(paths.size() >= 300, "the mutated archives are missing (make_mutations.py)");
        std::map<Outcome, int> counts;
        QStringList crashed;
        for (const QString& path : paths) {
            const Result r = loadIsolated(path.toStdString());
            ++counts[r.outcome];
            QVERIFY2(r.outcome != Outcome::Broken,
                     qPrintable(path + QStringLiteral(": ") + QString::fromStdString(r.text)));
            if (r.outcome == Outcome::Message) {
                // A message a person can read: one line, not empty.
                QVERIFY2(!r.text.empty() && r.text.find('\n') == std::string::npos,
                         qPrintable(path + QStringLiteral(": '") + QString::fromStdString(r.text) +
                                    QLatin1Char('\'')));
            }
            if (r.outcome == Outcome::Crashed || r.outcome == Outcome::TimedOut ||
                r.outcome == Outcome::Waited) {
                crashed << QFileInfo(path).fileName() + QStringLiteral(" (") +
                               QString::fromStdString(r.text) + QLatin1Char(')');
            }
        }
        qInfo("%d variants: %d loaded, %d refused with a message, %d crashed LibTorch, %d used "
              "their CPU time, %d waited",
              static_cast<int>(paths.size()), counts[Outcome::Loaded], counts[Outcome::Message],
              counts[Outcome::Crashed], counts[Outcome::TimedOut], counts[Outcome::Waited]);
        for (const QString& c : crashed) {
            qInfo("  handled: %s", qPrintable(c));
        }
        const int failures =
            counts[Outcome::Crashed] + counts[Outcome::TimedOut] + counts[Outcome::Waited];
        QVERIFY2(failures <= kMaxLibTorchFailures,
                 qPrintable(QStringLiteral("%1 variants crashed LibTorch, used up their CPU time "
                                           "or hung (at most %2): the probe lets damage through")
                                .arg(failures)
                                .arg(kMaxLibTorchFailures)));
    }

    // The damage the probe must find before LibTorch reads anything: a cut file, tensor data
    // missing or short, a pickle cut short. Each such variant is refused by the probe itself.
    void theProbeRefusesWhatItMust() {
        QFile file(QStringLiteral(SCRIPTSCOPE_FIXTURES_DIR "/mutations/manifest.json"));
        QVERIFY2(file.open(QIODevice::ReadOnly), "mutations/manifest.json is missing");
        const QJsonObject manifest = QJsonDocument::fromJson(file.readAll()).object();
        QVERIFY(manifest.size() >= 300);
        std::map<std::string, int> pinned;
        for (auto it = manifest.begin(); it != manifest.end(); ++it) {
            const QString kind = it.value().toObject().value(QStringLiteral("kind")).toString();
            const QString record = it.value().toObject().value(QStringLiteral("record")).toString();
            const bool data = record.startsWith(QStringLiteral("data/"));
            const bool pickle = record.endsWith(QStringLiteral(".pkl"));
            const bool mustRefuse = kind == QStringLiteral("cut") ||
                                    (kind == QStringLiteral("drop") && data) ||
                                    (kind == QStringLiteral("truncrec") && (data || pickle));
            if (!mustRefuse) {
                continue;
            }
            const auto probe = probeArchive(std::string(SCRIPTSCOPE_FIXTURES_DIR "/mutations/") +
                                            it.key().toStdString());
            const bool refused = probe.kind != FileKind::TorchScript || !probe.damage.empty();
            QVERIFY2(refused,
                     qPrintable(it.key() + QStringLiteral(" (") + kind + QStringLiteral(" ") +
                                record + QStringLiteral(") passed the probe")));
            ++pinned[kind.toStdString()];
        }
        // Every class is there to be checked.
        QVERIFY(pinned["cut"] >= 40);
        QVERIFY(pinned["drop"] >= 3 && pinned["truncrec"] >= 10);
    }

    void theCliHandlesThem() {
        const QStringList paths = mutations();
        int checked = 0;
        for (int i = 0; i < paths.size(); i += 10) {
            QProcess cli;
            cli.start(QStringLiteral(SCRIPTSCOPE_CLI_PATH),
                      {QStringLiteral("tree"), paths[i], QStringLiteral("--timeout"),
                       QString::number(test::scaled(30))});
            QVERIFY(cli.waitForFinished(test::scaled(120000)));
            QCOMPARE(cli.exitStatus(), QProcess::NormalExit); // never killed by a signal itself
            const int code = cli.exitCode();
            const QString err = QString::fromUtf8(cli.readAllStandardError()).trimmed();
            QVERIFY2(code == 0 || code == 1 || code == 3 || code == 4,
                     qPrintable(paths[i] + QStringLiteral(": exit ") + QString::number(code)));
            if (code != 0) {
                QVERIFY2(!err.isEmpty() && !err.contains(QLatin1Char('\n')),
                         qPrintable(paths[i] + QStringLiteral(": ") + err));
            }
            if (code == 3) {
                QVERIFY(err.contains(QStringLiteral("crashed")));
            }
            ++checked;
        }
        QVERIFY(checked >= 30);
    }
};

QTEST_GUILESS_MAIN(TestMutations)
#include "test_mutations.moc"
