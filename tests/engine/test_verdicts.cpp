// The verdicts of a comparison, where they must pass and where they must fail: the criterion on
// values made to sit on either side of it, the outputs' structures, and real models made by the
// fixture scripts: a module called more than once (ResNet-18's block ReLU, a shared activation in
// a loop) with a weight changed after it; a .pt2 against its own XNNPACK .pte in both orders; two
// different networks; a float export against its int8 program; exports that return a dict.
#include "test_support.h"

#include <model.h>
#include <side_by_side.h>
#include <verdict.h>

#include <QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace scriptscope;
using namespace scriptscope::test;

namespace {

std::unique_ptr<Model> open(const std::string& path) {
    auto model = openModel(path);
    if (!model) {
        qFatal("%s: %s", path.c_str(), model.error().message.c_str());
    }
    return std::move(model).value();
}

// `a` against `b` (the reference), on `inputs` (none: the samples one of them keeps), as the
// CLI's compare does.
ActivationReport compared(const std::string& a, const std::string& b, const std::string& inputs,
                          const Criterion& criterion = Criterion()) {
    auto model = open(a);
    ActivationRequest request;
    request.run.inputsFile = inputs;
    request.bins = 1;
    request.referenceModel = b;
    request.criterion = criterion;
    auto report = activationsOrOutputs(*model, request);
    if (!report) {
        qFatal("%s against %s: %s", a.c_str(), b.c_str(), report.error().message.c_str());
    }
    return std::move(report).value();
}

std::string reference(const ActivationRecord& r) {
    return r.comparedWith.substr(0, r.comparedWith.find(" in "));
}

bool recordAgrees(const ActivationRecord& r, const Criterion& c = Criterion()) {
    return agrees(r.maxAbsDiff, r.maxRelDiff, r.cosine, r.snrDb, c);
}

OutputValue tensor(std::vector<float> values, std::vector<int64_t> shape = {}) {
    OutputValue v;
    v.kind = OutputValue::Kind::Tensor;
    v.shape = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(values.size())} : shape;
    v.numel = static_cast<int64_t>(values.size());
    v.values = std::move(values);
    return v;
}

OutputValue container(OutputValue::Kind kind, std::vector<std::pair<std::string, OutputValue>> c) {
    OutputValue v;
    v.kind = kind;
    for (auto& [key, child] : c) {
        child.key = key;
        v.children.push_back(std::move(child));
    }
    return v;
}

// Everything before the first divergence agrees, and the first divergence is `expected`.
void divergesFirstAt(const ActivationReport& report, const std::string& expected) {
    QVERIFY2(report.firstDifference >= 0, report.model.c_str());
    const ActivationRecord& first = report.records.at(static_cast<size_t>(report.firstDifference));
    QVERIFY2(reference(first) == expected, reference(first).c_str());
    for (int i = 0; i < report.firstDifference; ++i) {
        const ActivationRecord& r = report.records[static_cast<size_t>(i)];
        QVERIFY2(!r.compared || recordAgrees(r), reference(r).c_str());
    }
    QCOMPARE(verdictOf(report).verdict, Verdict::Differ);
}

} // namespace

class TestVerdicts : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The criterion on values made to pass and to fail it.
    void criterion() {
        const Criterion c;
        // Equal, NaN where NaN is: the same.
        const std::vector<float> a = {1, -2, std::nanf(""), 4};
        QVERIFY(agrees(measure(a.data(), a.data(), a.size()), c));
        // A tiny relative difference agrees; one of 1% does not.
        std::vector<float> close = {1.00001f, -2, std::nanf(""), 4};
        QVERIFY(agrees(measure(close.data(), a.data(), a.size()), c));
        std::vector<float> far = {1.04f, -2, std::nanf(""), 4};
        const ValueDifference apart = measure(far.data(), a.data(), a.size());
        QVERIFY(!agrees(apart, c));
        QVERIFY(failedMeasures(apart, c).find("max rel") != std::string::npos);
        // A NaN against a number: infinitely far, whatever the floor.
        std::vector<float> nan = {1, -2, 3, 4};
        Criterion loose;
        loose.atol = 1e6;
        QVERIFY(!agrees(measure(nan.data(), a.data(), a.size()), loose));
        // The float-against-int8 case: outputs of about 1e-9 against all zeros. An absolute
        // 1e-4 called them equal; cosine 0 and SNR 0 dB do not.
        const std::vector<float> tiny = {1e-9f, -2e-9f, 3e-9f, 5e-10f};
        const std::vector<float> zeros(4, 0.0f);
        const ValueDifference d = measure(zeros.data(), tiny.data(), tiny.size());
        QVERIFY(d.maxAbsDiff < 1e-8);
        QCOMPARE(d.cosine, 0.0);
        QVERIFY(std::abs(d.snrDb) < 1e-9);
        QVERIFY(!agrees(d, c));
        // Only a floor given on purpose calls them equal.
        Criterion floor;
        floor.atol = 1e-4;
        QVERIFY(agrees(d, floor));
        // A reference of zeros against something else: infinitely far relatively.
        const ValueDifference fromZero = measure(tiny.data(), zeros.data(), tiny.size());
        QVERIFY(std::isinf(fromZero.maxRelDiff));
        QVERIFY(!agrees(fromZero, c));
    }

    // Outputs are compared at the same places of both structures; when the structures differ,
    // nothing is compared and the verdict is "could not compare".
    void outputStructures() {
        const Criterion c;
        const OutputValue one = tensor({1, 2, 3});
        const OutputValue dictA =
            container(OutputValue::Kind::Dict, {{"'out'", tensor({1, 2})}, {"'aux'", one}});
        OutputValue dictB =
            container(OutputValue::Kind::Dict, {{"'aux'", one}, {"'out'", tensor({1, 2})}});
        OutputComparison same = compareOutputs(dictA, dictB, c); // keys by name, any order
        QVERIFY2(same.compared && same.agrees, same.note.c_str());
        QCOMPARE(same.leaves.size(), size_t(2));
        QCOMPARE(same.leaves[0].where, std::string("output['out']"));
        QCOMPARE(same.structure, std::string("{'out': T, 'aux': T}"));
        // A missing key, a tensor against a dict, two values against three: not compared.
        dictB.children[0].key = "'other'";
        OutputComparison keys = compareOutputs(dictA, dictB, c);
        QVERIFY2(!keys.compared && keys.note.find("'aux'") != std::string::npos, keys.note.c_str());
        OutputComparison kinds = compareOutputs(one, dictA, c);
        QVERIFY(!kinds.compared && kinds.note.find("structures differ") != std::string::npos);
        const OutputValue pair = container(OutputValue::Kind::Tuple, {{"0", one}, {"1", one}});
        const OutputValue triple =
            container(OutputValue::Kind::List, {{"0", one}, {"1", one}, {"2", one}});
        QVERIFY(!compareOutputs(pair, triple, c).compared);
        // A tuple against a list of the same values: alike.
        const OutputValue list = container(OutputValue::Kind::List, {{"0", one}, {"1", one}});
        QVERIFY(compareOutputs(pair, list, c).agrees);
        // Shapes that differ: not compared either.
        QVERIFY(
            !compareOutputs(tensor({1, 2, 3, 4}, {2, 2}), tensor({1, 2, 3, 4}, {4}), c).compared);
        // The verdict of a report whose outputs were not compared.
        ActivationReport report;
        report.comparison = "the module outputs of b.pt";
        report.outputs = kinds;
        QCOMPARE(verdictOf(report).verdict, Verdict::CouldNotCompare);
        report.outputs = same;
        QCOMPARE(verdictOf(report).verdict, Verdict::Same);
        report.outputs = compareOutputs(tensor({1, 2, 3}), tensor({1, 2, 4}), c);
        QCOMPARE(verdictOf(report).verdict, Verdict::Differ);
    }

    // A module called more than once gives a value per call on both sides, matched in call
    // order: ResNet-18's block ReLU (twice per block, of one shape) agrees call by call up to the
    // changed convolution of a later block, which is the first divergence. Both orders.
    void callsNotPaths() {
        const std::string base = fixture("resnet18_traced.pt");
        const std::string changed = fixture("resnet18_changed_traced.pt");
        const std::string inputs = fixture("resnet18_traced.inputs.pt");
        for (const bool forward : {true, false}) {
            const ActivationReport r =
                forward ? compared(base, changed, inputs) : compared(changed, base, inputs);
            divergesFirstAt(r, "layer3.1.conv2");
            QVERIFY(r.unmatched.empty());
            int reluCalls = 0;
            for (const ActivationRecord& record : r.records) {
                const std::string name = reference(record);
                if (name == "layer1.0.relu (call 1 of 2)" ||
                    name == "layer1.0.relu (call 2 of 2)") {
                    ++reluCalls;
                    QVERIFY2(record.compared && recordAgrees(record), name.c_str());
                }
            }
            QCOMPARE(reluCalls, 2);
            QVERIFY(!r.outputs.agrees && r.outputs.compared);
        }
        // A shared activation called in a loop (prim::Loop) and after it, a block called three
        // times in the loop, a head tied to the embedding: the changed mix is the first value
        // apart, the activation's fourth call after it, its first three agree.
        const ActivationReport reuse =
            compared(fixture("reuse.pt"), fixture("reuse_changed.pt"), fixture("reuse.inputs.pt"));
        divergesFirstAt(reuse, "mix");
        QCOMPARE(reuse.referenceCount, 10); // embed, block x3, act x4, mix, head
        QVERIFY(reuse.unmatched.empty());
        for (const ActivationRecord& record : reuse.records) {
            const std::string name = reference(record);
            if (name == "act (call 4 of 4)" || name == "head") {
                QVERIFY2(!recordAgrees(record), name.c_str());
            } else if (name.rfind("act (call", 0) == 0 || name.rfind("block", 0) == 0) {
                QVERIFY2(recordAgrees(record), name.c_str());
            }
        }
        // Against itself: the same, every call matched.
        const ActivationReport same =
            compared(fixture("reuse.pt"), fixture("reuse.pt"), fixture("reuse.inputs.pt"));
        QCOMPARE(verdictOf(same).verdict, Verdict::Same);
        QCOMPARE(same.comparedCount, 10);
    }

    // Outputs of another structure (a pair against one tensor): could not compare, whatever
    // matched inside.
    void otherStructureCannotBeCompared() {
        const ActivationReport r = compared(fixture("reuse_pair.pt"), fixture("reuse_changed.pt"),
                                            fixture("reuse.inputs.pt"));
        QVERIFY(!r.outputs.compared);
        QCOMPARE(r.outputs.structure, std::string("(T, T)"));
        QCOMPARE(r.outputs.referenceStructure, std::string("T"));
        const ComparisonVerdict v = verdictOf(r);
        QCOMPARE(v.verdict, Verdict::CouldNotCompare);
        QVERIFY2(v.why.find("structures differ") != std::string::npos, v.why.c_str());
    }

    // The 2.x build's exports (make_exported.py): the ResNet-18 pair as .pt2 files, both orders;
    // ResNet-50's TorchScript twin against its export, every ReLU call compared now (their
    // shapes differ by call, which hid them before); two different networks; a segmenter's dict.
    void exports() {
        const std::string built = SCRIPTSCOPE_EXPORTED_DIR;
        if (built.empty()) {
            QSKIP("the 2.x programs are made where SCRIPTSCOPE_PYTHON has torch.export");
        }
        const std::string inputs = built + "/resnet18.inputs.pt";
        for (const bool forward : {true, false}) {
            const std::string a = built + (forward ? "/resnet18.pt2" : "/resnet18_changed.pt2");
            const std::string b = built + (forward ? "/resnet18_changed.pt2" : "/resnet18.pt2");
            divergesFirstAt(compared(a, b, inputs), "layer3.1.conv2");
        }
        const ActivationReport twin = compared(built + "/resnet50.twin.pt", built + "/resnet50.pt2",
                                               built + "/resnet50.inputs.pt");
        QVERIFY2(twin.firstDifference < 0, verdictOf(twin).why.c_str());
        QCOMPARE(verdictOf(twin).verdict, Verdict::Same);
        int reluCalls = 0;
        for (const ActivationRecord& r : twin.records) {
            reluCalls +=
                r.compared && reference(r).find(".relu (call 3 of 3)") != std::string::npos;
        }
        QCOMPARE(reluCalls, 16); // every Bottleneck's third ReLU call

        // Two networks of one input and output: nothing inside matches, and the outputs differ.
        const ActivationReport other =
            compared(built + "/resnet18.pt2", built + "/mobilenet_v3_small.pt2", inputs);
        QCOMPARE(verdictOf(other).verdict, Verdict::Differ);
        QVERIFY(other.outputs.compared && !other.outputs.agrees);

        // A segmenter returns {'out': ...}: compared as that, against itself the same.
        // A module called only inside a cond branch (torch.export records no module stack
        // there) is not "(not called)": its weights go to the cond.
        auto branch = open(built + "/branch_module.pt2");
        const ModuleInfo* inner = branch->info().findModule("inner");
        QVERIFY(inner);
        QVERIFY2(inner->type.find("called inside higher_order::cond") != std::string::npos,
                 inner->type.c_str());
        const ActivationReport segmenter = compared(
            built + "/deeplabv3.pt2", built + "/deeplabv3.pt2", built + "/deeplabv3.inputs.pt");
        QCOMPARE(segmenter.outputs.structure, std::string("{'out': T}"));
        QCOMPARE(verdictOf(segmenter).verdict, Verdict::Same);
    }

    // ExecuTorch programs (make_pte.py): MobileNetV3's export against its own XNNPACK program,
    // in both orders, compares the same outputs and agrees; against its int8 program it differs;
    // against another network it differs; a dict-returning program is nested by its output spec.
    void programs() {
        const std::string built = SCRIPTSCOPE_PTE_DIR;
        if (built.empty() || !SCRIPTSCOPE_TEST_EXECUTORCH) {
            QSKIP("the .pte programs are made and run where the build has the pinned executorch");
        }
        const std::string image = built + "/image.inputs.pt";
        const std::string floatExport = built + "/mobilenet_v3_small.pt2";
        const std::string xnnpack = built + "/mobilenet_v3_small_xnnpack.pte";
        std::vector<int> comparedLeaves;
        for (const bool exportFirst : {true, false}) {
            const ActivationReport r = exportFirst ? compared(floatExport, xnnpack, image)
                                                   : compared(xnnpack, floatExport, image);
            QVERIFY2(r.outputs.compared, r.outputs.note.c_str());
            QVERIFY2(verdictOf(r).verdict == Verdict::Same, verdictOf(r).why.c_str());
            comparedLeaves.push_back(static_cast<int>(r.outputs.leaves.size()));
        }
        QCOMPARE(comparedLeaves[0], comparedLeaves[1]);
        QCOMPARE(comparedLeaves[0], 1);

        const ActivationReport int8 =
            compared(built + "/mobilenet_v3_small_int8_xnnpack.pte", floatExport, image);
        QVERIFY(int8.outputs.compared);
        QCOMPARE(verdictOf(int8).verdict, Verdict::Differ);
        QVERIFY(!int8.outputs.agrees);

        const ActivationReport networks = compared(xnnpack, built + "/shufflenet_v2.pt2", image);
        QCOMPARE(verdictOf(networks).verdict, Verdict::Differ);

        const ActivationReport dict = compared(built + "/dict_outputs.pte",
                                               built + "/dict_outputs.pt2", built + "/inputs.pt");
        QCOMPARE(dict.outputs.structure, std::string("{'out': T, 'aux': T}"));
        QCOMPARE(dict.outputs.referenceStructure, dict.outputs.structure);
        QVERIFY2(verdictOf(dict).verdict == Verdict::Same, verdictOf(dict).why.c_str());
        // A .pte whose ETRecord names each call's module: the shared ReLU's four calls and the
        // Linear's three are matched call by call with the export's.
        const ActivationReport reuse = compared(built + "/reuse_portable.pte", built + "/reuse.pt2",
                                                built + "/tokens.inputs.pt");
        QVERIFY2(verdictOf(reuse).verdict == Verdict::Same, verdictOf(reuse).why.c_str());
        int calls = 0;
        for (const ActivationRecord& r : reuse.records) {
            const std::string name = reference(r);
            calls += r.compared &&
                     (name.rfind("act (call ", 0) == 0 || name.rfind("block (call ", 0) == 0);
        }
        QCOMPARE(calls, 7);
        // A dict against one tensor: could not compare.
        const ActivationReport apart =
            compared(built + "/dict_outputs.pt2", built + "/cnn.pt2", built + "/inputs.pt");
        QCOMPARE(verdictOf(apart).verdict, Verdict::CouldNotCompare);
    }
};

QTEST_GUILESS_MAIN(TestVerdicts)
#include "test_verdicts.moc"
