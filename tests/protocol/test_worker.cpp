// scriptscope-worker driven as the GUI drives it, over a local socket: it loads, inspects, prints
// code and runs; a crash in LibTorch ends only the worker; a new worker serves the next request.
#include "test_support.h"

#include <protocol.h>

#include <nlohmann/json.hpp>

#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace scriptscope;
using namespace scriptscope::protocol;
using scriptscope::test::fixture;

namespace {

// One worker process and its connection.
class WorkerHarness {
public:
    // scratch: the folder the worker may write to (the GUI always gives one).
    explicit WorkerHarness(const QString& scratch = {}) {
        server_.setSocketOptions(QLocalServer::UserAccessOption);
        const QString name = QStringLiteral("scriptscope-test-%1-%2")
                                 .arg(QCoreApplication::applicationPid())
                                 .arg(++counter_);
        QLocalServer::removeServer(name);
        if (!server_.listen(name)) {
            qFatal("cannot listen");
        }
        process_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QStringList arguments = {QStringLiteral("--socket"), name};
        if (!scratch.isEmpty()) {
            arguments << QStringLiteral("--scratch") << scratch;
        }
        process_.start(QStringLiteral(SCRIPTSCOPE_WORKER_PATH), arguments);
        if (!server_.waitForNewConnection(30000)) {
            qFatal("the worker did not connect");
        }
        socket_ = server_.nextPendingConnection();
        const Message ready = receive();
        if (ready.type != MessageType::Ready) {
            qFatal("the worker did not say it was ready");
        }
    }

    ~WorkerHarness() {
        if (process_.state() != QProcess::NotRunning) {
            process_.kill();
            process_.waitForFinished();
        }
    }

    void send(const Message& m) { sendRaw(encode(m)); }

    void sendRaw(const QByteArray& payload) {
        socket_->write(frame(payload));
        socket_->flush();
    }

    // The next message that is not progress; a type of Failure with "worker ended" when it died.
    Message receive() {
        for (;;) {
            while (auto payload = reader_.next()) {
                auto message = decode(*payload);
                if (!message) {
                    qFatal("undecodable reply");
                }
                if (message->type != MessageType::Progress) {
                    return message.value();
                }
            }
            if (socket_ && socket_->state() != QLocalSocket::ConnectedState &&
                socket_->bytesAvailable() == 0) {
                return make(MessageType::Failure, 0,
                            toCbor(Error(ErrorKind::Crashed, "worker ended")));
            }
            if (socket_->bytesAvailable() == 0 && !socket_->waitForReadyRead(60000) &&
                socket_->state() == QLocalSocket::ConnectedState) {
                qFatal("no reply within a minute");
            }
            reader_.append(socket_->readAll());
        }
    }

    Message request(const Message& m) {
        send(m);
        return receive();
    }

    QProcess& process() { return process_; }

private:
    static inline int counter_ = 0;
    QLocalServer server_;
    QLocalSocket* socket_ = nullptr;
    QProcess process_;
    FrameReader reader_;
};

QCborMap pathBody(const std::string& path) {
    QCborMap body;
    body.insert(QLatin1String("path"), QString::fromStdString(path));
    return body;
}

} // namespace

class TestWorker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void loadsInspectsAndRuns() {
        WorkerHarness worker;
        const Message loaded =
            worker.request(make(MessageType::Load, 1, pathBody(fixture("wrap_rnn.pt"))));
        QCOMPARE(loaded.type, MessageType::ModelInfo);
        QCOMPARE(loaded.id, quint64(1));
        const ModelInfo info = modelInfoFromCbor(loaded.body);
        const auto expected =
            nlohmann::json::parse(scriptscope::test::readText(fixture("wrap_rnn.expected.json")));
        QCOMPARE(info.modules.size(), expected["modules"].size());
        QCOMPARE(info.modules[1].path, std::string("loop"));
        QCOMPARE(info.modules[0].methods[0].code, expected["code"][":forward"].get<std::string>());

        QCborMap codeRequest;
        codeRequest.insert(QLatin1String("module"), QStringLiteral("loop.cell"));
        codeRequest.insert(QLatin1String("method"), QStringLiteral("forward"));
        const Message code = worker.request(make(MessageType::Code, 2, codeRequest));
        QCOMPARE(code.type, MessageType::Text);
        QCOMPARE(code.body.value(QLatin1String("text")).toString().toStdString(),
                 expected["code"]["loop.cell:forward"].get<std::string>());

        codeRequest.insert(QLatin1String("module"), QString());
        codeRequest.insert(QLatin1String("inlined"), true);
        const Message inlined = worker.request(make(MessageType::Graph, 3, codeRequest));
        QCOMPARE(inlined.body.value(QLatin1String("text")).toString().toStdString(),
                 expected["inlined"].get<std::string>());

        RunRequest run;
        run.inputsFile = fixture("wrap_rnn.inputs.pt");
        run.iterations = 4;
        run.valuesLimit = 1000;
        const Message result = worker.request(make(MessageType::Run, 4, toCbor(run)));
        QCOMPARE(result.type, MessageType::RunResult);
        const RunResult r = runResultFromCbor(result.body);
        QCOMPARE(r.samplesMs.size(), size_t(4));
        // The values that came over the protocol are Python's, every one.
        const auto python =
            nlohmann::json::parse(scriptscope::test::readText(fixture("wrap_rnn.outputs.json")));
        QCOMPARE(r.output.shape, python["shape"].get<std::vector<int64_t>>());
        const auto values = python["values"].get<std::vector<double>>();
        QCOMPARE(r.output.values.size(), values.size());
        for (size_t i = 0; i < values.size(); ++i) {
            QVERIFY2(std::abs(double(r.output.values[i]) - values[i]) < 1e-5,
                     qPrintable(QStringLiteral("value %1: %2 vs Python's %3")
                                    .arg(i)
                                    .arg(r.output.values[i])
                                    .arg(values[i])));
        }
    }

    void buildsTheDiagram() {
        WorkerHarness worker;
        QCOMPARE(worker.request(make(MessageType::Load, 1, pathBody(fixture("wrap_rnn.pt")))).type,
                 MessageType::ModelInfo);
        QCborMap request;
        request.insert(QLatin1String("module"), QString());
        request.insert(QLatin1String("method"), QStringLiteral("forward"));
        request.insert(QLatin1String("inlined"), true);
        const Message reply = worker.request(make(MessageType::Diagram, 2, request));
        QCOMPARE(reply.type, MessageType::DiagramModel);
        const GraphModel graph = graphModelFromCbor(reply.body);
        const auto expected = nlohmann::json::parse(
            scriptscope::test::readText(fixture("wrap_rnn.expected.json")))["inlined_nodes"];
        QCOMPARE(graph.nodes.size(), expected.size());
        for (size_t i = 0; i < graph.nodes.size(); ++i) {
            QCOMPARE(graph.nodes[i].kind, expected[i][0].get<std::string>());
            QCOMPARE(graph.nodes[i].module, expected[i][1].get<std::string>());
        }
        // A method that is not there is a failure reply, and the worker goes on.
        request.insert(QLatin1String("method"), QStringLiteral("nope"));
        QCOMPARE(worker.request(make(MessageType::Diagram, 3, request)).type, MessageType::Failure);
        request.insert(QLatin1String("method"), QStringLiteral("forward"));
        request.insert(QLatin1String("inlined"), false);
        QCOMPARE(worker.request(make(MessageType::Diagram, 4, request)).type,
                 MessageType::DiagramModel);
    }

    // A torch.export archive opens as a model (read, never run), its views come from it, runs
    // are refused with why, and a TorchScript model opened next is itself again.
    void opensExportedPrograms() {
        WorkerHarness worker;
        const std::string exported =
            std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/exported/lstm.pt2";
        const Message loaded = worker.request(make(MessageType::Load, 1, pathBody(exported)));
        QCOMPARE(loaded.type, MessageType::ModelInfo);
        const ModelInfo info = modelInfoFromCbor(loaded.body);
        QCOMPARE(info.probe.kind, FileKind::ExportedProgram);
        QCOMPARE(info.modules.size(), size_t{3});
        QVERIFY(info.findModule("lstm") && info.findModule("head"));
        QCOMPARE(info.modules[0].methods.size(), size_t{1});
        QVERIFY(info.modules[0].methods[0].code.rfind("ExportedProgram:\n", 0) == 0);

        QCborMap request;
        request.insert(QLatin1String("module"), QString());
        request.insert(QLatin1String("method"), QStringLiteral("forward"));
        const Message graph = worker.request(make(MessageType::Graph, 2, request));
        QCOMPARE(graph.type, MessageType::Text);
        QVERIFY(graph.body.value(QLatin1String("text"))
                    .toString()
                    .startsWith(QStringLiteral("graph():")));
        const Message diagram = worker.request(make(MessageType::Diagram, 3, request));
        QCOMPARE(diagram.type, MessageType::DiagramModel);
        const GraphModel model = graphModelFromCbor(diagram.body);
        QVERIFY(!model.nodes.empty());
        QCOMPARE(model.inputs.size(), size_t{1});

        // It runs, its graph interpreted, on the inputs it was exported with.
        RunRequest run;
        run.iterations = 2;
        const Message ran = worker.request(make(MessageType::Run, 4, toCbor(run)));
        QVERIFY2(ran.type == MessageType::RunResult,
                 ran.type == MessageType::Failure ? errorFromCbor(ran.body).message.c_str() : "");
        const RunResult result = runResultFromCbor(ran.body);
        QCOMPARE(result.samplesMs.size(), size_t{2});
        QCOMPARE(result.output.children.size(), size_t{2});

        // Compared with a TorchScript archive, the open .pt2 is side A: its LSTM's weights are
        // what B lacks.
        QCborMap other;
        other.insert(QLatin1String("path"), QString::fromStdString(fixture("wrap_rnn.pt")));
        const Message compared = worker.request(make(MessageType::Diff, 10, other));
        QVERIFY2(compared.type == MessageType::ArchiveDiff,
                 compared.type == MessageType::Failure
                     ? errorFromCbor(compared.body).message.c_str()
                     : "");
        const ArchiveDiff diff = archiveDiffFromCbor(compared.body);
        QCOMPARE(diff.pathA, exported);
        QVERIFY(!diff.identical);
        const auto head =
            std::find_if(diff.tensors.begin(), diff.tensors.end(),
                         [](const TensorChange& t) { return t.name == "head.weight"; });
        QVERIFY(head != diff.tensors.end());
        QCOMPARE(head->kind, TensorChange::Kind::Removed);
        QCOMPARE(head->shapeA, (std::vector<int64_t>{3, 10}));
        const auto loop = std::find_if(diff.modules.begin(), diff.modules.end(),
                                       [](const ModuleChange& m) { return m.path == "loop"; });
        QVERIFY(loop != diff.modules.end());
        QCOMPARE(loop->kind, ModuleChange::Kind::Added);
        QCOMPARE(loop->typeB, std::string("__torch__.MyRNNLoop"));

        const Message next =
            worker.request(make(MessageType::Load, 5, pathBody(fixture("wrap_rnn.pt"))));
        QCOMPARE(next.type, MessageType::ModelInfo);
        QCOMPARE(modelInfoFromCbor(next.body).probe.kind, FileKind::TorchScript);
        run.inputsFile = fixture("wrap_rnn.inputs.pt");
        QCOMPARE(worker.request(make(MessageType::Run, 6, toCbor(run))).type,
                 MessageType::RunResult);
    }

    // An AOTInductor package runs in the sandboxed worker: LibTorch unpacks its compiled model
    // into the scratch folder, the one place the worker may write.
    void runsCompiledPackages() {
        const std::string package = std::string(SCRIPTSCOPE_EXPORTED_DIR) + "/resnet18_aoti.pt2";
        // AOTInductor's package loader came with PyTorch 2.6; the 2.x builds have it.
        const bool loader = std::atoi(SCRIPTSCOPE_TEST_LIBTORCH_VERSION) >= 2;
        if (!loader || std::string(SCRIPTSCOPE_EXPORTED_DIR).empty() ||
            !QFileInfo::exists(QString::fromStdString(package))) {
            QSKIP("needs a LibTorch with AOTInductor's package loader (PyTorch 2.x builds)");
        }
        QTemporaryDir scratch;
        WorkerHarness worker(scratch.path());
        QCOMPARE(worker.request(make(MessageType::Load, 1, pathBody(package))).type,
                 MessageType::ModelInfo);
        RunRequest run;
        run.inputsFile = std::string(SCRIPTSCOPE_EXPORTED_DIR) + "/resnet18_aoti.inputs.pt";
        run.iterations = 3;
        const Message result = worker.request(make(MessageType::Run, 2, toCbor(run)));
        QVERIFY2(result.type == MessageType::RunResult, errorFromCbor(result.body).message.c_str());
        QCOMPARE(runResultFromCbor(result.body).output.shape, (std::vector<int64_t>{1, 10}));
        // With no inputs it runs on the ones the archive keeps.
        const Message sampled = worker.request(make(MessageType::Run, 3, toCbor(RunRequest{})));
        QVERIFY2(sampled.type == MessageType::RunResult,
                 errorFromCbor(sampled.body).message.c_str());
        QCOMPARE(runResultFromCbor(sampled.body).inputDescriptions,
                 std::vector<std::string>{"the archive's sample inputs"});
        // Compared from either side: the open model is A.
        QCborMap changed;
        changed.insert(QLatin1String("path"),
                       QString::fromStdString(std::string(SCRIPTSCOPE_EXPORTED_DIR) +
                                              "/resnet18_aoti.changed.pt"));
        const Message fromExported = worker.request(make(MessageType::Diff, 4, changed));
        QVERIFY2(fromExported.type == MessageType::ArchiveDiff,
                 errorFromCbor(fromExported.body).message.c_str());
        const ArchiveDiff a = archiveDiffFromCbor(fromExported.body);
        QCOMPARE(a.pathA, package);
        QCOMPARE(a.tensors.size(), size_t{1});
        QCOMPARE(a.tensors[0].name, std::string("fc.bias"));
        QCOMPARE(a.tensors[0].kind, TensorChange::Kind::Values);
        QCOMPARE(worker.request(make(MessageType::Load, 5, changed)).type, MessageType::ModelInfo);
        const Message fromScripted = worker.request(make(MessageType::Diff, 6, pathBody(package)));
        QVERIFY2(fromScripted.type == MessageType::ArchiveDiff,
                 errorFromCbor(fromScripted.body).message.c_str());
        const ArchiveDiff b = archiveDiffFromCbor(fromScripted.body);
        QCOMPARE(b.pathB, package);
        QCOMPARE(b.tensors.size(), size_t{1});
        QCOMPARE(b.tensors[0].name, std::string("fc.bias"));
    }

    void errorsAreReplies() {
        WorkerHarness worker;
        const Message missing =
            worker.request(make(MessageType::Load, 5, pathBody(fixture("missing_op.pt"))));
        QCOMPARE(missing.type, MessageType::Failure);
        QCOMPARE(missing.id, quint64(5));
        QCOMPARE(errorFromCbor(missing.body).operatorName,
                 std::string("scriptscope_missing::negate"));
        const Message probe =
            worker.request(make(MessageType::Probe, 6, pathBody(fixture("state_dict.pt"))));
        QCOMPARE(probe.type, MessageType::ProbeResult);
        QCOMPARE(probeResultFromCbor(probe.body).kind, FileKind::TorchSaveZip);
        // A message from another protocol version gets a refusal, and the worker goes on.
        QCborMap stale;
        stale.insert(QLatin1String("v"), kVersion + 1);
        stale.insert(QLatin1String("type"), 1);
        stale.insert(QLatin1String("id"), 9);
        stale.insert(QLatin1String("body"), QCborMap());
        worker.sendRaw(stale.toCborValue().toCbor());
        const Message refused = worker.receive();
        QCOMPARE(refused.type, MessageType::Failure);
        QVERIFY(errorFromCbor(refused.body).message.find("different builds") != std::string::npos);
        const Message ok =
            worker.request(make(MessageType::Load, 7, pathBody(fixture("compute.pt"))));
        QCOMPARE(ok.type, MessageType::ModelInfo);
    }

    void crashEndsOnlyTheWorker() {
        {
            WorkerHarness worker;
            QVERIFY(
                worker.request(make(MessageType::Load, 1, pathBody(fixture("compute.pt")))).type ==
                MessageType::ModelInfo);
            const Message crashed =
                worker.request(make(MessageType::Load, 2, pathBody(fixture("crash.pt"))));
            QCOMPARE(errorFromCbor(crashed.body).message, std::string("worker ended"));
            QVERIFY(worker.process().waitForFinished(scriptscope::test::scaled(30000)));
            QCOMPARE(worker.process().exitStatus(), QProcess::CrashExit);
        }
        // The next worker serves the next request.
        WorkerHarness next;
        QCOMPARE(next.request(make(MessageType::Load, 3, pathBody(fixture("compute.pt")))).type,
                 MessageType::ModelInfo);
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "test_worker.moc"
