// ExecuTorch programs run by ExecuTorch's runtime (a build with ExecuTorch): outputs bit-equal to
// ExecuTorch's Python runtime on the same file and inputs, the profile of a traced run by the
// method's own calls, and what a run cannot take refused with its reason. The fixtures are
// make_pte.py's (its Python runtime outputs). test_etdump reads the ETDumps.
#include "test_support.h"

#include <etdump_profile.h>
#include <etdump_reader.h>
#include <executorch_program.h>
#include <model.h>
#include <probe.h>
#include <pte_runtime.h>
#include <pte_session.h>
#include <session.h>
#include <torch_values.h>

#include <QTemporaryDir>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <fstream>
#include <string>
#include <vector>

using namespace scriptscope;
using scriptscope::test::readText;

namespace {

const char* const kPrograms[] = {"cnn_portable", "cnn_xnnpack", "two_methods", "cnn_int8_xnnpack"};

std::string built(const std::string& name) {
    return std::string(SCRIPTSCOPE_PTE_DIR) + "/" + name;
}

std::unique_ptr<Model> open(const std::string& path) {
    auto model = openModel(path);
    if (!model) {
        qFatal("%s: %s", path.c_str(), model.error().message.c_str());
    }
    return std::move(model).value();
}

std::vector<at::Tensor> tensorsOf(const std::string& path) {
    auto value = scriptscope::detail::loadValueFile(path);
    if (!value) {
        qFatal("%s: %s", path.c_str(), value.error().message.c_str());
    }
    std::vector<at::Tensor> tensors;
    if (value->isTensor()) {
        tensors.push_back(value->toTensor());
    } else {
        for (const auto& element : value->toTupleRef().elements()) {
            tensors.push_back(element.toTensor());
        }
    }
    return tensors;
}

} // namespace

class TestExecuTorchRun : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private Q_SLOTS:
    void initTestCase() {
        if (std::string(SCRIPTSCOPE_PTE_DIR).empty()) {
            QSKIP("this build's Python has no executorch: no programs were made to run");
        }
    }

    // Every method of every program, on the same inputs as ExecuTorch's Python runtime: the same
    // kernels give the same bits.
    void outputsEqualPythonRuntime() {
        for (const char* name : kPrograms) {
            auto model = open(built(std::string(name) + ".pte"));
            QVERIFY(model->info().lacks(Capability::Run).empty());
            for (const MethodInfo& method : model->info().modules.front().methods) {
                RunRequest request;
                request.method = method.name;
                request.inputsFile = built("inputs.pt");
                request.saveOutputsPath =
                    dir_.filePath(QString::fromStdString(method.name + ".pt")).toStdString();
                request.iterations = 3;
                const auto result = model->run(request);
                QVERIFY2(result, result ? "" : result.error().message.c_str());
                QCOMPARE(result->samplesMs.size(), size_t(3));
                QVERIFY(result->deviceName.find("ExecuTorch") != std::string::npos);
                const auto got = tensorsOf(request.saveOutputsPath);
                const auto want =
                    tensorsOf(built(std::string(name) + "." + method.name + ".outputs.pt"));
                QCOMPARE(got.size(), want.size());
                for (size_t i = 0; i < got.size(); ++i) {
                    QVERIFY2(at::equal(got[i], want[i]),
                             (std::string(name) + "." + method.name + " output " +
                              std::to_string(i) + " differs from ExecuTorch's Python runtime")
                                 .c_str());
                }
            }
        }
    }

    // A run with its profile: the traced runs' instructions, by the method's own calls, the mean
    // of the traced iterations (the warm-ups left out), their p50 the profile's wall time.
    void runsWithProfile() {
        auto model = open(built("two_methods.pte"));
        RunRequest request;
        request.method = "encode";
        request.warmup = 2;
        request.iterations = 3;
        request.profile = true;
        const auto result = model->run(request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QVERIFY(result->profiled);
        QCOMPARE(result->samplesMs.size(), size_t(3));
        QCOMPARE(result->profile.runs, int64_t(3));
        QVERIFY(result->profile.wallMs > 0);
        QCOMPARE(result->inputDescriptions.size(), size_t(1));
        QVERIFY(result->inputDescriptions.front().find("f32[1, 3, 32, 32]") != std::string::npos);
        auto graph = model->graphModel("", "encode", false);
        QVERIFY(graph);
        QCOMPARE(result->profile.nodeMs.size(), graph->nodes.size());
        QVERIFY(!result->profile.operators.empty());
        QVERIFY(result->profile.operatorMs > 0);

        auto xnnpack = open(built("cnn_xnnpack.pte"));
        request = RunRequest();
        request.profile = true;
        const auto delegated = xnnpack->run(request);
        QVERIFY2(delegated, delegated ? "" : delegated.error().message.c_str());
        bool delegateModule = false;
        for (const ModuleTime& m : delegated->profile.modules) {
            delegateModule = delegateModule || m.path == "forward.delegate_0";
        }
        QVERIFY(delegateModule);
    }

    // A dump that holds runs of both methods (as a program's own dump does when both ran): each
    // method's profile takes its own runs and says it left the others out.
    void aDumpOfTwoMethods() {
        const std::string path = built("two_methods.pte");
        auto opened = ExecuTorchProgram::open(path, probeArchive(path));
        QVERIFY(opened);
        PteSession session(*opened, nullptr);
        Etdump both;
        for (const char* method : {"forward", "encode"}) {
            RunRequest request;
            request.method = method;
            auto trace = session.trace(request, 0);
            QVERIFY2(trace, trace ? "" : trace.error().message.c_str());
            auto dump = readEtdump(std::string_view(
                reinterpret_cast<const char*>(trace->etdump.data()), trace->etdump.size()));
            QVERIFY2(dump, dump ? "" : dump.error().message.c_str());
            both.runs.insert(both.runs.end(), dump->runs.begin(), dump->runs.end());
        }
        for (const char* method : {"forward", "encode"}) {
            auto profiled = profileOfEtdump(both, *opened, method);
            QVERIFY2(profiled, profiled ? "" : profiled.error().message.c_str());
            QCOMPARE(profiled->runs, size_t(2)); // the warm-up and the traced run
            QCOMPARE(profiled->notes.size(), size_t(1));
            QVERIFY2(profiled->notes.front().find("2 runs of another method") != std::string::npos,
                     profiled->notes.front().c_str());
            auto graph = opened->graphModel(method);
            QVERIFY(graph);
            QCOMPARE(profiled->profile.nodeMs.size(), graph->nodes.size());
        }
    }

    // Every value of a traced run, from ExecuTorch's intermediate outputs: one per call the
    // diagram draws, by node, with the ETRecord's modules.
    void activationsOfAProgram() {
        auto model = open(built("cnn_portable.pte"));
        QVERIFY(model->info().lacks(Capability::Activations).empty());
        ActivationRequest request;
        request.run.inputsFile = built("inputs.pt");
        const auto report = model->activations(request);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const auto graph = model->graphModel("", "forward", false);
        QVERIFY(graph);
        QCOMPARE(report->records.size(), graph->nodes.size());
        for (size_t i = 0; i < report->records.size(); ++i) {
            QCOMPARE(report->records[i].node, static_cast<int>(i));
            QCOMPARE(report->records[i].kind, graph->nodes[i].kind);
        }
        QCOMPARE(report->records.front().moduleOutputs, std::vector<std::string>{"conv1"});
        QCOMPARE(report->records.back().moduleOutputs, std::vector<std::string>{"fc"});
        QCOMPARE(report->firstNonFinite, -1);
        // The last value is the program's output: ExecuTorch's Python runtime's, bit for bit.
        const auto want = tensorsOf(built("cnn_portable.forward.outputs.pt")).front();
        QCOMPARE(report->records.back().max, static_cast<double>(want.max().item<float>()));
    }

    // A .pte against the export it was lowered from, node by node on the same inputs: module
    // outputs by the ETRecord's modules, every other call by the export node it was lowered from
    // (the ETRecord's debug handles and from_node). The portable kernels agree with ATen's at
    // 1e-5; the int8 copy parts ways at its first quantized operator's output that can be seen,
    // the output of the delegate that holds conv1 to the second relu.
    void comparesWithItsExport() {
        auto portable = open(built("cnn_portable.pte"));
        ActivationRequest request;
        request.run.inputsFile = built("inputs.pt");
        request.referenceModel = built("cnn.pt2");
        const auto same = portable->activations(request);
        QVERIFY2(same, same ? "" : same.error().message.c_str());
        QCOMPARE(same->referenceCount, 3); // conv1, conv2, fc
        QVERIFY2(same->unmatched.empty(),
                 same->unmatched.empty() ? "" : same->unmatched.front().c_str());
        // And the relus and the mean by name; the permute of the decomposed linear is nobody's.
        QCOMPARE(same->operatorsMatched, 3);
        QCOMPARE(same->comparedCount, 6);
        QCOMPARE(same->firstDifference, -1);
        std::vector<std::string> names;
        for (const ActivationRecord& r : same->records) {
            if (!r.comparedWith.empty()) {
                names.push_back(r.comparedWith.substr(0, r.comparedWith.find(" in ")));
            }
        }
        QCOMPARE(names,
                 (std::vector<std::string>{"conv1", "%relu", "conv2", "%relu_1", "%mean", "fc"}));

        // XNNPACK: a delegate is one node, compared at its boundary. The first delegate swallowed
        // conv1 and conv2 and the relus of the model's own forward: its output is the second
        // relu's; the second delegate's is fc's.
        auto xnnpack = open(built("cnn_xnnpack.pte"));
        const auto delegated = xnnpack->activations(request);
        QVERIFY2(delegated, delegated ? "" : delegated.error().message.c_str());
        QCOMPARE(delegated->comparedCount, 3);
        QCOMPARE(delegated->operatorsMatched, 2);
        QCOMPARE(delegated->firstDifference, -1);

        // The int8 copy: the quantization error shows at the first quantized value that can be
        // compared, the first delegate's output (%relu_1), apart by the default criterion; fc
        // too.
        auto int8 = open(built("cnn_int8_xnnpack.pte"));
        const auto quantized = int8->activations(request);
        QVERIFY2(quantized, quantized ? "" : quantized.error().message.c_str());
        QCOMPARE(quantized->comparedCount, 3);
        QVERIFY(quantized->firstDifference >= 0);
        const ActivationRecord& first =
            quantized->records.at(static_cast<size_t>(quantized->firstDifference));
        QVERIFY2(first.comparedWith.rfind("%relu_1 in ", 0) == 0, first.comparedWith.c_str());
        QCOMPARE(first.kind, std::string("delegate::XnnpackBackend"));
        QVERIFY2(first.maxAbsDiff > 1e-3 && first.cosine > 0.99,
                 std::to_string(first.maxAbsDiff).c_str());
        const ActivationRecord& last = quantized->records.back();
        QCOMPARE(last.moduleOutputs, std::vector<std::string>{"fc"});
        QVERIFY2(last.compared && last.maxAbsDiff > 1e-3, std::to_string(last.maxAbsDiff).c_str());

        // With no inputs given, both take the inputs the program's plan gives.
        ActivationRequest planned;
        planned.referenceModel = built("cnn.pt2");
        const auto fromPlan = portable->activations(planned);
        QVERIFY2(fromPlan, fromPlan ? "" : fromPlan.error().message.c_str());
        QCOMPARE(fromPlan->comparedCount, 6);
        QCOMPARE(fromPlan->firstDifference, -1);
        // 'sample' (the Run workspace's source for a .pte) is each model's own example: both
        // take the open program's, not the .pt2 its own.
        InputSpec sample;
        sample.kind = InputSpec::Kind::Sample;
        sample.intValue = -1;
        planned.run.inputs = {sample};
        const auto sampled = portable->activations(planned);
        QVERIFY2(sampled, sampled ? "" : sampled.error().message.c_str());
        QCOMPARE(sampled->comparedCount, 6);
        QCOMPARE(sampled->firstDifference, -1);
        InputSpec ones;
        ones.kind = InputSpec::Kind::Ones;
        ones.shape = {1, 3, 32, 32};
        planned.run.inputs = {sample, ones};
        const auto mixed = portable->activations(planned);
        QVERIFY(!mixed);
        QVERIFY2(mixed.error().message.find("'sample' for all") != std::string::npos,
                 mixed.error().message.c_str());
    }

    // What a run cannot take is refused with the shapes, the method or the device named.
    void refusesWhatItCannotRun() {
        auto model = open(built("cnn_portable.pte"));
        RunRequest request;
        InputSpec input;
        input.kind = InputSpec::Kind::Random;
        input.shape = {1, 3, 16, 16};
        request.inputs = {input};
        auto result = model->run(request);
        QVERIFY(!result);
        QCOMPARE(result.error().kind, ErrorKind::Input);
        QVERIFY2(result.error().message.find("f32[1, 3, 16, 16]") != std::string::npos &&
                     result.error().message.find("f32[1, 3, 32, 32]") != std::string::npos,
                 result.error().message.c_str());
        request.inputs.clear();
        request.method = "encode";
        result = model->run(request);
        QVERIFY(!result);
        QVERIFY(result.error().message.find("encode") != std::string::npos);
        request.method = "forward";
        request.device = "cuda:0";
        result = model->run(request);
        QVERIFY(!result);
        QCOMPARE(result.error().kind, ErrorKind::Device);
        // And the model runs again after each refusal.
        request.device = "cpu";
        QVERIFY(model->run(request));
    }

    // A program that calls an operator the runtime has no kernel for (the reader takes it: the
    // file is sound) is refused with the operator named; the next program runs.
    void namesAMissingKernel() {
        std::string bytes = readText(built("cnn_portable.pte"));
        const size_t at = bytes.find("aten::relu");
        QVERIFY(at != std::string::npos);
        bytes.replace(at, 10, "aten::relx");
        const std::string path = dir_.filePath(QStringLiteral("relx.pte")).toStdString();
        std::ofstream(path, std::ios::binary) << bytes;
        auto model = open(path);
        const auto result = model->run(RunRequest{});
        QVERIFY(!result);
        QVERIFY2(result.error().message.find("aten::relx.out") != std::string::npos,
                 result.error().message.c_str());
        QVERIFY(!result.error().details.empty()); // what ExecuTorch logged
        QVERIFY(open(built("cnn_portable.pte"))->run(RunRequest{}));
    }
};

QTEST_GUILESS_MAIN(TestExecuTorchRun)
#include "test_executorch_run.moc"
