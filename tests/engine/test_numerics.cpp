// Where numbers go wrong: the activation inspector finds the first NaN where make_numerics.py put
// it (nested module, loop iteration, if branch), sees in-place ops when they happen, gives
// Python's statistics, and compares with a device, saved values and another archive; the pass
// explorer keeps the outputs and saves archives Python loads; the archive diff names what
// differs.
#include "test_support.h"

#include <float_stats.h>

#include <model.h>
#include <session.h>
#include <task_result.h>
#include <text_diff.h>

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>

using namespace scriptscope;
using scriptscope::test::cudaExpected;
using scriptscope::test::fixture;

namespace {

nlohmann::json readJson(const std::string& name) {
    return nlohmann::json::parse(scriptscope::test::readText(fixture(name)));
}

std::unique_ptr<Session> loaded(const std::string& model) {
    auto session = std::make_unique<Session>();
    auto info = session->load(fixture(model));
    if (!info) {
        qFatal("cannot load %s: %s", model.c_str(), info.error().message.c_str());
    }
    return session;
}

ActivationRequest requestFor(const std::string& model) {
    ActivationRequest request;
    request.run.inputsFile = fixture(model + ".inputs.pt");
    return request;
}

ActivationReport activations(const std::string& model, ActivationRequest request) {
    Session session;
    if (!session.load(fixture(model + ".pt"))) {
        qFatal("cannot load %s", model.c_str());
    }
    auto report = session.activations(request);
    if (!report) {
        qFatal("activations of %s: %s", model.c_str(), report.error().message.c_str());
    }
    return std::move(report).value();
}

const ActivationRecord* moduleOutput(const ActivationReport& report, const std::string& path) {
    const ActivationRecord* found = nullptr;
    for (const auto& record : report.records) {
        for (const auto& m : record.moduleOutputs) {
            if (m == path) {
                found = &record; // the last occurrence, as a forward hook keeps
            }
        }
    }
    return found;
}

bool close(double a, double b, double relative = 1e-5, double absolute = 1e-6) {
    return std::abs(a - b) <= absolute + relative * std::abs(b);
}

} // namespace

class TestNumerics : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void firstNonFiniteInNestedModule() {
        const auto expected = readJson("numerics.expected.json")["nan_nested"];
        const auto report = activations("nan_nested", requestFor("nan_nested"));
        QVERIFY(report.firstNonFinite >= 0);
        const auto& bad = report.records[static_cast<size_t>(report.firstNonFinite)];
        QCOMPARE(bad.kind, expected["kind"].get<std::string>());
        QCOMPARE(bad.module, expected["module"].get<std::string>());
        QCOMPARE(bad.nanCount, expected["nan"].get<int64_t>());
        QCOMPARE(bad.numel, expected["numel"].get<int64_t>());
        QVERIFY(bad.irLine > 0);
        QVERIFY(!bad.source.empty());
        // Every value before it is finite, and values after it carry the NaN on.
        for (int i = 0; i < report.firstNonFinite; ++i) {
            QVERIFY(!report.records[static_cast<size_t>(i)].nonFinite());
        }
        QCOMPARE(report.records.back().nanCount, expected["output_nan"].get<int64_t>());
        // The node's input is named, with its (finite) statistics.
        QCOMPARE(report.firstNonFiniteInputs.size(), size_t{1});
        const auto& input = report.records[static_cast<size_t>(report.firstNonFiniteInputs[0])];
        QVERIFY(!input.nonFinite());
        QVERIFY(input.min < 0); // log of a negative value
    }

    void firstNonFiniteInLoopIteration() {
        const auto expected = readJson("numerics.expected.json")["nan_loop"];
        const auto report = activations("nan_loop", requestFor("nan_loop"));
        QVERIFY(report.firstNonFinite >= 0);
        const auto& bad = report.records[static_cast<size_t>(report.firstNonFinite)];
        QCOMPARE(bad.kind, expected["kind"].get<std::string>());
        QCOMPARE(bad.module, expected["module"].get<std::string>());
        QCOMPARE(bad.occurrence, expected["iteration"].get<int>());
        QCOMPARE(bad.nanCount, expected["nan"].get<int64_t>());
        // One record per iteration of the node in the loop.
        int occurrences = 0;
        for (const auto& record : report.records) {
            occurrences += record.node == bad.node ? 1 : 0;
        }
        QCOMPARE(occurrences, expected["trip_count"].get<int>());
    }

    void firstNonFiniteInIfBranch() {
        const auto expected = readJson("numerics.expected.json")["nan_if"];
        const auto report = activations("nan_if", requestFor("nan_if"));
        QVERIFY(report.firstNonFinite >= 0);
        const auto& bad = report.records[static_cast<size_t>(report.firstNonFinite)];
        QCOMPARE(bad.kind, expected["kind"].get<std::string>());
        QCOMPARE(bad.module, expected["module"].get<std::string>());
        QCOMPARE(bad.nanCount, expected["nan"].get<int64_t>());
        // div(a, a) reads one value: named once.
        QCOMPARE(report.firstNonFiniteInputs.size(), size_t{1});
    }

    void inPlaceOpsAreReadWhenTheyHappen() {
        const auto expected = readJson("numerics.expected.json")["inplace"];
        const auto report = activations("inplace", requestFor("inplace"));
        const ActivationRecord* mul = nullptr;
        const ActivationRecord* relu = nullptr;
        for (const auto& record : report.records) {
            if (record.kind == expected["mul_kind"].get<std::string>()) {
                mul = &record;
            }
            if (record.kind == expected["relu_kind"].get<std::string>()) {
                relu = &record;
            }
        }
        QVERIFY(mul && relu);
        // Graph outputs would read the tensor after relu_ for both.
        QVERIFY(close(mul->min, expected["mul_min"].get<double>()));
        QVERIFY(close(mul->max, expected["mul_max"].get<double>()));
        QCOMPARE(relu->min, 0.0);
        QVERIFY(close(relu->max, expected["relu_max"].get<double>()));
        QCOMPARE(report.records.front().kind, std::string("input"));
        QVERIFY(close(report.records.front().min, expected["input_min"].get<double>()));
        QCOMPARE(report.firstNonFinite, -1);
    }

    void statisticsEqualPythons() {
        const auto expected = readJson("stats_model.stats.json");
        ActivationRequest request = requestFor("stats_model");
        request.bins = 16;
        const auto report = activations("stats_model", request);
        QCOMPARE(static_cast<int>(expected.size()), 10);
        for (const auto& [path, stats] : expected.items()) {
            const ActivationRecord* record = moduleOutput(report, path);
            QVERIFY2(record, path.c_str());
            QCOMPARE(record->shape, stats["shape"].get<std::vector<int64_t>>());
            QCOMPARE(record->dtype, stats["dtype"].get<std::string>());
            QVERIFY2(close(record->min, stats["min"].get<double>()), path.c_str());
            QVERIFY2(close(record->max, stats["max"].get<double>()), path.c_str());
            QVERIFY2(close(record->mean, stats["mean"].get<double>(), 1e-4, 1e-6), path.c_str());
            // The fixture holds the population std; ScriptScope shows torch.std()'s (unbiased).
            int64_t finite = -stats["nan"].get<int64_t>() - stats["inf"].get<int64_t>();
            finite += std::accumulate(record->shape.begin(), record->shape.end(), int64_t{1},
                                      std::multiplies<>());
            const double unbiased =
                stats["std"].get<double>() *
                std::sqrt(double(finite) / double(std::max<int64_t>(finite - 1, 1)));
            QVERIFY2(close(record->stddev, unbiased, 1e-4), path.c_str());
            QCOMPARE(record->nanCount, stats["nan"].get<int64_t>());
            QCOMPARE(record->infCount, stats["inf"].get<int64_t>());
            // The histogram counts every finite value once, in equal bins from min to max.
            QCOMPARE(record->histogram.size(), size_t{16});
            int64_t counted = 0;
            for (const int64_t c : record->histogram) {
                counted += c;
            }
            QCOMPARE(counted, record->numel);
            QCOMPARE(record->histogramMin, record->min);
            QCOMPARE(record->histogramMax, record->max);
        }
        // Module paths and source lines are attributed.
        const ActivationRecord* conv = moduleOutput(report, "features.3");
        QCOMPARE(conv->kind, std::string("aten::conv2d"));
        QCOMPARE(conv->module, std::string("features.3"));
    }

    // The vectorized passes against a plain one, at lengths around their lane and block sizes,
    // clean and with a NaN or an Inf in the vector part or in the tail.
    void floatStatisticsMatchAPlainPass() {
        std::mt19937 random(7);
        std::normal_distribution<float> normal(0.5F, 2.0F);
        for (const int64_t n : {0, 1, 15, 16, 17, 511, 512, 513, 1000, 40000}) {
            for (const int poison : {-1, 0, 1}) { // none, a NaN early, an Inf last
                std::vector<float> data(static_cast<size_t>(n));
                for (float& v : data) {
                    v = normal(random);
                }
                if (poison == 0 && n > 3) {
                    data[3] = std::numeric_limits<float>::quiet_NaN();
                } else if (poison == 1 && n > 0) {
                    data.back() = -std::numeric_limits<float>::infinity();
                }
                double lo = INFINITY, hi = -INFINITY, sum = 0;
                int64_t finite = 0, nan = 0;
                for (const float v : data) {
                    if (std::isfinite(v)) {
                        lo = std::min(lo, double(v));
                        hi = std::max(hi, double(v));
                        sum += double(v);
                        ++finite;
                    } else {
                        nan += std::isnan(v) ? 1 : 0;
                    }
                }
                const FloatSummary s = summarizeFloats(data.data(), n);
                const QByteArray at =
                    QByteArray::number(qlonglong(n)) + " poison " + QByteArray::number(poison);
                QVERIFY2(s.finite == finite && s.nan == nan && s.inf == n - finite - nan, at);
                if (finite == 0) {
                    continue;
                }
                QVERIFY2(s.min == float(lo) && s.max == float(hi), at);
                QVERIFY2(std::abs(s.sum - sum) <= 1e-4 * (1 + std::abs(sum)), at);
                constexpr int kBins = 7;
                const float mean = static_cast<float>(sum / double(finite));
                const float scale = hi > lo ? float(kBins / (hi - lo)) : 0.0F;
                std::vector<int64_t> counts(kBins, 0), expected(kBins, 0);
                double squares = 0;
                for (const float v : data) {
                    if (std::isfinite(v)) {
                        const int bin = static_cast<int>((v - float(lo)) * scale);
                        ++expected[static_cast<size_t>(std::clamp(bin, 0, kBins - 1))];
                        squares += double(v - mean) * double(v - mean);
                    }
                }
                const double sq = histogramFloats(data.data(), n, float(lo), scale, kBins, mean,
                                                  s.nan + s.inf == 0, counts.data());
                QVERIFY2(counts == expected, at);
                QVERIFY2(std::abs(sq - squares) <= 1e-3 * (1 + squares), at);
            }
        }
    }

    void comparedWithValuesSavedFromPython() {
        ActivationRequest request = requestFor("stats_model");
        request.referenceFile = fixture("stats_model.activations.pt");
        auto report = activations("stats_model", request);
        QCOMPARE(report.firstDifference, -1);
        QVERIFY(report.unmatched.empty());
        QVERIFY(report.comparedCount >= 9);
        // One where features.3 (and what follows) was changed by 0.5.
        request.referenceFile = fixture("stats_model.activations_perturbed.pt");
        report = activations("stats_model", request);
        QVERIFY(report.firstDifference >= 0);
        const auto& first = report.records[static_cast<size_t>(report.firstDifference)];
        QCOMPARE(first.module, std::string("features.3"));
        QVERIFY(close(first.maxAbsDiff, 0.5, 1e-4));
        for (int i = 0; i < report.firstDifference; ++i) {
            const ActivationRecord& r = report.records[static_cast<size_t>(i)];
            QVERIFY(agrees(r.maxAbsDiff, r.maxRelDiff, r.cosine, r.snrDb, request.criterion));
        }
        // A file that is not a dict is refused with a reason.
        auto session = loaded("stats_model.pt");
        request.referenceFile = fixture("stats_model.inputs.pt");
        const auto refused = session->activations(request);
        QVERIFY(!refused);
        QVERIFY(refused.error().message.find("dict") != std::string::npos);
    }

    void comparedWithAnotherDeviceAndArchive() {
        ActivationRequest request = requestFor("stats_model");
        request.compareDevice = "cpu";
        const auto report = activations("stats_model", request);
        QCOMPARE(report.comparedCount, static_cast<int>(report.records.size()));
        QCOMPARE(report.firstDifference, -1);
        request.compareDevice = "cuda";
        auto session = loaded("stats_model.pt");
        const auto cuda = session->activations(request);
        if (!cudaExpected()) {
            QVERIFY(!cuda);
            QCOMPARE(cuda.error().kind, ErrorKind::Device);
        } else {
            QVERIFY(cuda);
            QCOMPARE(cuda->comparedCount, static_cast<int>(cuda->records.size()));
        }
        // Other inputs: the first node after the input that differs.
        ActivationRequest inputs = requestFor("stats_model");
        inputs.compareRun = RunRequest{};
        inputs.compareRun->inputs = {InputSpec{}};
        inputs.compareRun->inputs[0].kind = InputSpec::Kind::Zeros;
        inputs.compareRun->inputs[0].shape = {1, 3, 32, 32};
        const auto changed = activations("stats_model", inputs);
        QVERIFY(changed.firstDifference > 0);
        QCOMPARE(changed.records[static_cast<size_t>(changed.firstDifference)].kind,
                 std::string("aten::conv2d"));
        QVERIFY(changed.records.front().compared && changed.records.front().maxAbsDiff > 0);
        // Another archive on the same inputs, module output by module output: act is a Tanh
        // there, not a ReLU, so act is the first module whose output differs. The model layer
        // opens the reference (of any format) and runs it first.
        auto opened = openModel(fixture("diff_base.pt"));
        QVERIFY2(opened, opened ? "" : opened.error().message.c_str());
        auto& base = *opened;
        ActivationRequest against = requestFor("diff_base");
        against.referenceModel = fixture("diff_retyped.pt");
        const auto other = base->activations(against);
        QVERIFY2(other, other ? "" : other.error().message.c_str());
        QVERIFY(other->comparedCount >= 3);
        QVERIFY(other->firstDifference >= 0);
        const auto& first = other->records[static_cast<size_t>(other->firstDifference)];
        QCOMPARE(first.module, std::string("act"));
        QVERIFY(other->unmatched.empty());
        against.referenceModel = fixture("diff_same.pt");
        const auto same = base->activations(against);
        QVERIFY(same);
        QCOMPARE(same->firstDifference, -1);
    }

    void pinnedValuesAreKeptWhole() {
        ActivationRequest request = requestFor("nan_nested");
        const auto first = activations("nan_nested", request);
        const int node = first.records[static_cast<size_t>(first.firstNonFinite)].node;
        request.pinNodes = {node};
        const auto pinned = activations("nan_nested", request);
        const auto& bad = pinned.records[static_cast<size_t>(pinned.firstNonFinite)];
        QCOMPARE(static_cast<int64_t>(bad.values.size()), bad.numel);
        QCOMPARE(std::count_if(bad.values.begin(), bad.values.end(),
                               [](float v) { return std::isnan(v); }),
                 bad.nanCount);
        QCOMPARE(pinned.pinnedBytes, static_cast<uint64_t>(bad.numel) * sizeof(float));
        for (const auto& record : pinned.records) {
            QVERIFY(record.node == node || record.values.empty());
        }
        // Beyond the budget: not kept, and said.
        request.pinBytes = 4;
        const auto over = activations("nan_nested", request);
        QVERIFY(over.records[static_cast<size_t>(over.firstNonFinite)].values.empty());
        QVERIFY(!over.notes.empty());
    }

    void aFailingRunLeavesTheSessionUsable() {
        auto session = loaded("raises.pt");
        ActivationRequest request;
        request.run.inputs = {InputSpec{}};
        request.run.inputs[0].kind = InputSpec::Kind::Random;
        request.run.inputs[0].shape = {2, 3};
        const auto failed = session->activations(request);
        QVERIFY(!failed);
        QCOMPARE(failed.error().kind, ErrorKind::Model);
        auto good = loaded("inplace.pt");
        QVERIFY(good->activations(requestFor("inplace")));
    }

    void freezeAndFoldKeepTheOutputs() {
        auto session = loaded("stats_model.pt");
        RunRequest plain;
        plain.inputsFile = fixture("stats_model.inputs.pt");
        plain.iterations = 1;
        plain.valuesLimit = 100;
        const auto before = session->run(plain);
        QVERIFY(before);
        QTemporaryDir dir;
        OptimizeRequest request;
        request.passes = {"freeze", "fold-conv-bn", "remove-dropout"};
        request.run.inputsFile = fixture("stats_model.inputs.pt");
        request.run.iterations = 3;
        request.savePath = dir.filePath(QStringLiteral("frozen.pt")).toStdString();
        const auto result = session->optimize(request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QVERIFY(result->timed);
        QVERIFY(result->outputsCompared);
        QVERIFY(result->maxAbsDiff < 1e-5);
        QVERIFY(result->speedup > 0);
        // Original against frozen, module by module: within tolerance everywhere.
        // A folded BatchNorm has no nodes left: the convolution's output stands for its output.
        QVERIFY(result->modules.size() >= 4);
        QVERIFY(result->firstDifferentModule.empty());
        QCOMPARE(result->modules.front().module, std::string("features.0 + features.1 (folded)"));
        QVERIFY(result->nodesAfter < result->nodesBefore);
        auto count = [&](const std::string& kind, bool after) {
            for (const auto& k : result->kinds) {
                if (k.kind == kind) {
                    return after ? k.after : k.before;
                }
            }
            return 0;
        };
        QCOMPARE(count("aten::batch_norm", false), 2);
        QCOMPARE(count("aten::batch_norm", true), 0); // folded into the convolutions
        QCOMPARE(count("prim::GetAttr", true), 0);
        QVERIFY(!result->graphDiff.empty());
        QCOMPARE(result->saved, request.savePath);
        // The loaded model is unchanged.
        const auto again = session->run(plain);
        QCOMPARE(again->output.values, before->output.values);
        // Python loads the saved archive, and it computes what the original does.
        QProcess python;
        python.start(QStringLiteral(SCRIPTSCOPE_PYTHON),
                     {QStringLiteral("-c"),
                      QStringLiteral("import sys, torch\n"
                                     "m = torch.jit.load(sys.argv[1])\n"
                                     "o = torch.jit.load(sys.argv[2])\n"
                                     "x = torch.load(sys.argv[3])\n"
                                     "print(float((m(*x) - o(*x)).abs().max()))\n"),
                      QString::fromStdString(request.savePath),
                      QString::fromStdString(fixture("stats_model.pt")),
                      QString::fromStdString(fixture("stats_model.inputs.pt"))});
        QVERIFY(python.waitForFinished(scriptscope::test::scaled(120000)));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        QVERIFY(python.readAllStandardOutput().trimmed().toDouble() < 1e-5);
    }

    void singlePassesAndForInference() {
        auto session = loaded("stats_model.pt");
        OptimizeRequest request;
        request.passes = {"fold-conv-bn",
                          "remove-dropout",
                          "constant-propagation",
                          "common-subexpression-elimination",
                          "peephole",
                          "dead-code-elimination",
                          "fuse-linear"};
        request.run.inputsFile = fixture("stats_model.inputs.pt");
        request.run.iterations = 2;
        auto result = session->optimize(request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QCOMPARE(result->applied.size(), request.passes.size());
        QVERIFY(result->maxAbsDiff < 1e-5);
        request.passes = {"optimize-for-inference"};
        result = session->optimize(request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QVERIFY(result->maxAbsDiff < 1e-4);
        // Without inputs: counts and graphs, not timed, and said why.
        request.run.inputsFile.clear();
        request.passes = {"freeze"};
        result = session->optimize(request);
        QVERIFY(result);
        QVERIFY(!result->timed);
        QVERIFY(!result->notes.empty());
        // An unknown pass names the known ones.
        request.passes = {"fold-everything"};
        const auto unknown = session->optimize(request);
        QVERIFY(!unknown);
        QVERIFY(unknown.error().message.find("fold-conv-bn") != std::string::npos);
    }

    // optimize_for_inference turns convolutions into MKLDNN ones with MKLDNN constants, which
    // PyTorch saves without their values: the file it writes does not load ("required keyword
    // attribute 'value' is undefined"). A saved copy is loaded back and run before it is called
    // saved; the MKLDNN conversion is left out of the saved copy.
    void savedCopiesLoadBackAndRun() {
        auto session = loaded("stats_model.pt");
        QTemporaryDir dir;
        OptimizeRequest request;
        request.passes = {"freeze", "optimize-for-inference"};
        request.run.inputsFile = fixture("stats_model.inputs.pt");
        request.run.iterations = 2;
        request.savePath = dir.filePath(QStringLiteral("inference.pt")).toStdString();
        auto result = session->optimize(request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QVERIFY2(result->saveError.empty(), result->saveError.c_str());
        QVERIFY(result->savedVerified);
        QCOMPARE(result->saved, request.savePath);
        Session copy;
        const auto info = copy.load(request.savePath);
        QVERIFY2(info, info ? "" : info.error().message.c_str());
        RunRequest run;
        run.inputsFile = fixture("stats_model.inputs.pt");
        run.iterations = 1;
        QVERIFY(copy.run(run));

        // A copy that cannot be written is an error, not "saved".
        request.savePath = dir.filePath(QStringLiteral("missing/folder/copy.pt")).toStdString();
        result = session->optimize(request);
        QVERIFY(result);
        QVERIFY(result->saved.empty());
        QVERIFY(!result->savedVerified);
        QVERIFY2(result->saveError.find("cannot save") != std::string::npos,
                 result->saveError.c_str());
    }

    void aModuleFreezingRejectsEndsInAMessage() {
        std::string expected = scriptscope::test::readText(fixture("mutating.freeze_error.txt"));
        expected = expected.substr(0, expected.find('\n'));
        auto session = loaded("mutating.pt");
        OptimizeRequest request;
        request.passes = {"freeze"};
        const auto result = session->optimize(request);
        QVERIFY(!result);
        QVERIFY2(result.error().message.find(expected) != std::string::npos,
                 result.error().message.c_str());
        QVERIFY(result.error().message.rfind("freeze failed", 0) == 0);
    }

    void diffOfArchives() {
        const auto expected = readJson("diff.expected.json")["pairs"];
        auto base = loaded("diff_base.pt");
        auto against = [&](const std::string& other) {
            auto b = loaded(other);
            auto d = base->diff(*b);
            if (!d) {
                qFatal("diff: %s", d.error().message.c_str());
            }
            return std::move(d).value();
        };
        const ArchiveDiff same = against("diff_same.pt");
        QVERIFY(same.identical);
        QVERIFY(same.tensorsCompared > 0);
        const ArchiveDiff self = against("diff_base.pt");
        QVERIFY(self.identical);

        const ArchiveDiff weight = against("diff_weight.pt");
        QVERIFY(!weight.identical);
        QCOMPARE(weight.tensors.size(), size_t{1});
        const auto& changed = expected["diff_weight"]["parameters_changed"][0];
        QCOMPARE(weight.tensors[0].name, changed["name"].get<std::string>());
        QCOMPARE(weight.tensors[0].kind, TensorChange::Kind::Values);
        QVERIFY(close(weight.tensors[0].maxAbsDiff, changed["max_abs_delta"].get<double>()));
        QCOMPARE(weight.tensors[0].differing, int64_t{1});
        QVERIFY(weight.modules.empty());
        QVERIFY(weight.texts.empty());

        const ArchiveDiff added = against("diff_added.pt");
        QCOMPARE(added.modules.size(), size_t{1});
        QCOMPARE(added.modules[0].path, std::string("extra"));
        QCOMPARE(added.modules[0].kind, ModuleChange::Kind::Added);
        std::set<std::string> addedTensors;
        for (const auto& t : added.tensors) {
            QCOMPARE(t.kind, TensorChange::Kind::Added);
            addedTensors.insert(t.name);
        }
        const auto names =
            expected["diff_added"]["parameters_added"].get<std::vector<std::string>>();
        QVERIFY(addedTensors == std::set<std::string>(names.begin(), names.end()));
        bool rootCode = false;
        for (const auto& t : added.texts) {
            rootCode |= t.module.empty() && t.what == "code" && t.added > 0;
        }
        QVERIFY(rootCode);

        const ArchiveDiff retyped = against("diff_retyped.pt");
        QCOMPARE(retyped.modules.size(), size_t{1});
        QCOMPARE(retyped.modules[0].kind, ModuleChange::Kind::Retyped);
        QCOMPARE(retyped.modules[0].path, std::string("act"));
        QVERIFY(retyped.modules[0].typeB.find("Tanh") != std::string::npos);
        QVERIFY(retyped.tensors.empty());
    }

    void lineDiffs() {
        const auto lines = diffLines("a\nb\nc\nd\n", "a\nc\nd\ne\n");
        std::string ops;
        for (const auto& line : lines) {
            ops += line.op == DiffLine::Op::Same ? '=' : line.op == DiffLine::Op::Added ? '+' : '-';
        }
        QCOMPARE(ops, std::string("=-==+"));
        QCOMPARE(lines[1].text, std::string("b"));
        QCOMPARE(lines[1].lineA, 2);
        QCOMPARE(lines[4].lineB, 4);
        // Context: a long unchanged run becomes one Skipped line.
        std::string a, b;
        for (int i = 0; i < 50; ++i) {
            a += std::to_string(i) + "\n";
            b += (i == 25 ? std::string("x") : std::to_string(i)) + "\n";
        }
        const auto hunks = withContext(diffLines(a, b), 2);
        QCOMPARE(hunks.size(), size_t{1 + 2 + 2 + 2 + 1});
        QCOMPARE(hunks.front().op, DiffLine::Op::Skipped);
        QCOMPARE(hunks.front().count, 23);
        QVERIFY(diffLines("same\n", "same\n").size() == 1);
        // Beyond the edit limit: all of a removed, all of b added, still correct.
        const auto capped = diffLines("1\n2\n3\n", "4\n5\n6\n", 1);
        QCOMPARE(capped.size(), size_t{6});
    }

    void taskInterpretation() {
        auto tensor = [](std::vector<int64_t> shape, std::vector<float> values) {
            OutputValue v;
            v.kind = OutputValue::Kind::Tensor;
            v.shape = std::move(shape);
            v.numel = static_cast<int64_t>(values.size());
            v.values = std::move(values);
            return v;
        };
        TaskOptions options;
        // N x 6 boxes: x0, y0, x1, y1, score, label, with COCO's names.
        auto boxes = tensor({2, 6}, {1, 2, 30, 40, 0.9F, 1, 5, 5, 9, 9, 0.2F, 3});
        auto r = interpretOutput(boxes, options);
        QCOMPARE(r.kind, TaskKind::Detection);
        QCOMPARE(r.detections.at(0).size(), size_t{2});
        QCOMPARE(r.detections[0][0].name, std::string("person"));
        QCOMPARE(r.detections[0][1].name, std::string("car"));
        QCOMPARE(r.detections[0][0].x1, 30.0);
        // N x 4 is a detection only when asked for (it may be anything).
        auto four = tensor({1, 4}, {0, 0, 1, 1});
        QVERIFY(interpretOutput(four, options).kind != TaskKind::Detection);
        options.kind = TaskKind::Detection;
        QCOMPARE(interpretOutput(four, options).kind, TaskKind::Detection);
        options.kind = TaskKind::Auto;
        // Logits get a softmax (and say so); probabilities do not.
        auto logits = tensor({1, 3}, {2, 0, 1});
        r = interpretOutput(logits, options);
        QCOMPARE(r.kind, TaskKind::Classification);
        QVERIFY(r.softmaxApplied);
        QCOMPARE(r.topK.size(), size_t{3});
        QCOMPARE(r.topK[0].index, int64_t{0});
        QVERIFY(std::abs(r.topK[0].score - std::exp(2.0) / (std::exp(2.0) + 1 + std::exp(1.0))) <
                1e-6);
        QVERIFY(r.labelSet.empty()); // no built-in set has 3 classes
        auto probabilities = tensor({1, 3}, {0.2F, 0.5F, 0.3F});
        r = interpretOutput(probabilities, options);
        QVERIFY(!r.softmaxApplied);
        QCOMPARE(r.topK[0].index, int64_t{1});
        // The archive's labels come first.
        const LabelSet own = labelsFromExtraFiles({{"labels.txt", "cat\ndog\nbird\n"}});
        QCOMPARE(own.names.size(), size_t{3});
        options.archiveLabels = &own;
        r = interpretOutput(probabilities, options);
        QCOMPARE(r.topK[0].name, std::string("dog"));
        options.archiveLabels = nullptr;
        // A dict with "out": a segmentation, argmax per pixel.
        OutputValue dict;
        dict.kind = OutputValue::Kind::Dict;
        dict.children.push_back(tensor({1, 2, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0}));
        dict.children.back().key = "'out'";
        r = interpretOutput(dict, options);
        QCOMPARE(r.kind, TaskKind::Segmentation);
        QCOMPARE(r.classMap, (std::vector<int32_t>{0, 1, 1, 0}));
        QCOMPARE(r.classesPresent.size(), size_t{2});
        // Values missing (above the run's valuesLimit): said, not guessed.
        auto empty = tensor({1, 3}, {});
        empty.numel = 3;
        QCOMPARE(interpretOutput(empty, options).kind, TaskKind::None);
        QCOMPARE(builtinLabels("imagenet")->names.size(), size_t{1000});
        QCOMPARE(builtinLabels("coco")->names.size(), size_t{91});
        QCOMPARE(builtinLabels("voc")->names.size(), size_t{21});
        QVERIFY(!builtinLabels("other"));
    }
};

QTEST_GUILESS_MAIN(TestNumerics)
#include "test_numerics.moc"
