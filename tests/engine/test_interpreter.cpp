// Plain exported programs (.pt2) run by ScriptScope's interpreter of their graphs, through the
// registry as every view gets them: what they compute against what PyTorch computed (the
// TorchScript twin saved beside the committed CNN; ep.module() for the programs
// make_exported.py writes with PyTorch 2.x), the checks before a run, and hostile graphs refused
// with their reasons.
#include "test_support.h"

#include "../archive/zip_fixtures.h"

#include <graph_check.h>
#include <input_spec.h>
#include <model.h>
#include <pt2_reader.h>
#include <session.h>
#include <torch_values.h>
#include <verdict.h>

#include <nlohmann/json.hpp>

#include <QFileInfo>
#include <QTemporaryDir>

#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace scriptscope;
using namespace scriptscope::test;

namespace {

std::string savedBy(const std::string& name) {
    return std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/" + name;
}

std::string built(const std::string& name) {
    return std::string(SCRIPTSCOPE_EXPORTED_DIR) + "/" + name;
}

std::unique_ptr<Model> open(const std::string& path) {
    auto model = openModel(path);
    if (!model) {
        qFatal("%s: %s", path.c_str(), model.error().message.c_str());
    }
    return std::move(model).value();
}

void flatten(const c10::IValue& value, std::vector<at::Tensor>& out) {
    if (value.isTensor()) {
        out.push_back(value.toTensor());
    } else if (value.isTuple() || value.isList()) {
        for (const auto& element :
             value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec()) {
            flatten(element, out);
        }
    } else if (value.isGenericDict()) {
        for (const auto& entry : value.toGenericDict()) {
            flatten(entry.value(), out);
        }
    }
}

// The tensors of two torch.save files, one by one, within 1e-4 relative; why says where not.
bool sameOutputs(const std::string& got, const std::string& want, std::string& why) {
    auto a = scriptscope::detail::loadValueFile(got);
    auto b = scriptscope::detail::loadValueFile(want);
    if (!a || !b) {
        why = "cannot read " + (a ? want : got);
        return false;
    }
    std::vector<at::Tensor> x, y;
    flatten(*a, x);
    flatten(*b, y);
    if (x.size() != y.size()) {
        why = std::to_string(x.size()) + " tensors, PyTorch gave " + std::to_string(y.size());
        return false;
    }
    for (size_t i = 0; i < x.size(); ++i) {
        if (x[i].sizes() != y[i].sizes() || x[i].scalar_type() != y[i].scalar_type()) {
            why = "output " + std::to_string(i) + " differs in shape or dtype";
            return false;
        }
        if (!at::allclose(x[i].to(at::kDouble), y[i].to(at::kDouble), 1e-4, 1e-5)) {
            const double worst =
                (x[i].to(at::kDouble) - y[i].to(at::kDouble)).abs().max().item<double>();
            why = "output " + std::to_string(i) + " differs by up to " + std::to_string(worst);
            return false;
        }
    }
    return true;
}

// A run of the model on the inputs file, once, its outputs written to `saved`.
Expected<RunResult> runOnce(Model& model, const std::string& inputs, const std::string& saved) {
    RunRequest request;
    request.inputsFile = inputs;
    request.saveOutputsPath = saved;
    request.warmup = 0;
    request.iterations = 1;
    return model.run(request);
}

// my_cell.pt2 with its model's JSON changed by `edit`, written to `path`.
std::string editedCell(const std::string& path,
                       const std::function<void(nlohmann::ordered_json&)>& edit,
                       const std::string& from = "my_cell.pt2") {
    auto records = recordsOf(savedBy("exported/" + from));
    std::string& program = recordNamed(records, "models/model.json");
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(program);
    edit(json);
    program = json.dump();
    std::ofstream(path, std::ios::binary) << storedZip(records);
    return path;
}

nlohmann::ordered_json& nodes(nlohmann::ordered_json& program) {
    return program["graph_module"]["graph"]["nodes"];
}

} // namespace

class TestInterpreter : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    std::string temp(const char* name) {
        return dir_.filePath(QString::fromLatin1(name)).toStdString();
    }

private Q_SLOTS:
    // The user's operators that mutate their arguments (mutating_op.pt2 calls them).
    void initTestCase() {
        const auto loaded = loadOperatorLibrary(SCRIPTSCOPE_TEST_MUTATING_OPS);
        QVERIFY2(!loaded, loaded ? loaded->message.c_str() : "");
    }

private:
    // Opened, then refused when it runs, with words the message must have.
    void refused(const std::string& path, ErrorKind kind, const std::string& words) {
        auto model = openModel(path);
        QVERIFY2(model, model ? "" : model.error().message.c_str());
        RunRequest request;
        const auto result = (*model)->run(request);
        QVERIFY(!result);
        QVERIFY2(
            result.error().kind == kind && result.error().message.find(words) != std::string::npos,
            (path + ": " + toString(result.error().kind) + ": " + result.error().message).c_str());
    }

private Q_SLOTS:
    // The CNN exported and traced from one module by PyTorch 2.14: the program's run equals what
    // the TorchScript twin computed, in either archive layout, in both builds.
    void runsLikeItsTorchScriptTwin_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("pt2") << QStringLiteral("exported_cnn.torch2.14.pt2");
        QTest::newRow("early layout") << QStringLiteral("exported_cnn_early.torch2.14.pt2");
    }

    void runsLikeItsTorchScriptTwin() {
        QFETCH(QString, file);
        auto model = open(savedBy(file.toStdString()));
        QVERIFY(model->info().lacks(Capability::Run).empty());
        QVERIFY(model->info().lacks(Capability::Profile).empty());
        const auto result =
            runOnce(*model, savedBy("traced_cnn.torch2.14.inputs.pt"), temp("cnn.pt"));
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        std::string why;
        QVERIFY2(sameOutputs(temp("cnn.pt"), savedBy("traced_cnn.torch2.14.outputs.pt"), why),
                 why.c_str());
    }

    // Timed runs, the archive's sample inputs when none are given, and the per-operator profile
    // by the modules of the program's nodes.
    void timesAndProfiles() {
        auto model = open(savedBy("exported_cnn.torch2.14.pt2"));
        RunRequest request;
        request.iterations = 5;
        request.profile = true;
        const auto result = model->run(request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QCOMPARE(result->samplesMs.size(), size_t(5));
        QCOMPARE(result->inputDescriptions,
                 std::vector<std::string>{"the archive's sample inputs"});
        QVERIFY(result->profiled);
        bool conv = false, convModule = false;
        for (const auto& op : result->profile.operators) {
            conv = conv || op.name.find("conv") != std::string::npos;
        }
        for (const auto& module : result->profile.modules) {
            convModule = convModule || module.path == "conv";
        }
        QVERIFY(conv);
        QVERIFY(convModule);
    }

    // A dynamic batch dimension: any size in its range runs, one outside it is refused first.
    void dynamicShapesInTheirRange() {
        auto model = open(savedBy("exported_dynamic.torch2.14.pt2"));
        RunRequest request;
        request.iterations = 1;
        request.inputs = {parseInputSpec("random:5x3x8x8").value()};
        const auto five = model->run(request);
        QVERIFY2(five, five ? "" : five.error().message.c_str());
        QCOMPARE(five->output.shape, (std::vector<int64_t>{5, 2}));
        request.inputs = {parseInputSpec("random:1x3x8x8").value()};
        const auto one = model->run(request);
        QVERIFY(!one);
        QVERIFY2(one.error().kind == ErrorKind::Input &&
                     one.error().message.find("in [2, 64]") != std::string::npos,
                 one.error().message.c_str());
    }

    // torch.cond's branch by its predicate; a buffer mutated in place is written back, as
    // ep.module() writes it, so the second run sees the first one's update.
    void controlFlowAndMutations() {
        auto gate = open(savedBy("exported/my_decision_gate.pt2"));
        RunRequest request;
        request.iterations = 1;
        request.inputs = {parseInputSpec("ones:3x4").value(), parseInputSpec("zeros:3x4").value()};
        const auto positive = gate->run(request);
        QVERIFY2(positive, positive ? "" : positive.error().message.c_str());
        QCOMPARE(positive->output.children.size(), size_t(2));
        // Buffers mutated in place are written back (what each call returns: accumulator).
        auto counter = open(savedBy("exported/counter.pt2"));
        request.inputs = {parseInputSpec("ones:3x4").value()};
        const auto counted = counter->run(request);
        QVERIFY2(counted, counted ? "" : counted.error().message.c_str());
    }

    // The higher-order operators besides cond, saved by PyTorch 2.14 (committed: both builds):
    // while_loop, map, a no_grad block, an autocast block and auto_functionalized_v2 (a user's
    // operators mutating an intermediate, views of it, and a list of it and a buffer) run as
    // ep.module() ran them. The
    // autocast block's graph asserts a tensor's device, which LibTorch 1.13's
    // _assert_tensor_metadata cannot take: that build says the program needs a newer one.
    void higherOrderOperators_data() {
        QTest::addColumn<QString>("name");
        for (const char* name :
             {"while_loop", "map_rows", "no_grad_block", "autocast_block", "mutating_op"}) {
            QTest::newRow(name) << QString::fromLatin1(name);
        }
    }

    void higherOrderOperators() {
        QFETCH(QString, name);
        const std::string base = savedBy("exported/" + name.toStdString());
        auto model = open(base + ".pt2");
        const std::string saved = temp((name.toStdString() + ".out.pt").c_str());
        const auto result = runOnce(*model, base + ".inputs.pt", saved);
#if TORCH_VERSION_MAJOR < 2
        if (name == QLatin1String("autocast_block")) {
            QVERIFY(!result);
            QVERIFY2(result.error().kind == ErrorKind::NeedsNewerLibTorch &&
                         result.error().message.find("_assert_tensor_metadata") !=
                             std::string::npos,
                     result.error().message.c_str());
            return;
        }
#endif
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        std::string why;
        QVERIFY2(sameOutputs(saved, base + ".outputs.pt", why), why.c_str());
    }

    // A view, transpose or reshape of a value recorded before has the same elements and takes its
    // statistics instead of reading them; after an in-place write it reads them again. With every
    // node pinned, each record's statistics are those of its own values.
    void viewsTakeTheirBaseStatistics_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("in_place_views") << QStringLiteral("in_place_views");
#if TORCH_VERSION_MAJOR >= 2 // LibTorch 1.13 has no scaled_dot_product_attention
        QTest::newRow("transformer_encoder") << QStringLiteral("transformer_encoder");
#endif
    }

    void viewsTakeTheirBaseStatistics() {
        QFETCH(QString, name);
        const std::string base = savedBy("exported/" + name.toStdString());
        auto model = open(base + ".pt2");
        ActivationRequest request;
        if (QFileInfo::exists(QString::fromStdString(base + ".inputs.pt"))) {
            request.run.inputsFile = base + ".inputs.pt";
        }
        const auto first = model->activations(request);
        QVERIFY2(first, first ? "" : first.error().message.c_str());
        for (const ActivationRecord& r : first->records) {
            request.pinNodes.push_back(r.node);
        }
        const auto report = model->activations(request);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        std::map<std::string, const ActivationRecord*> byValue;
        int checked = 0;
        for (const ActivationRecord& r : report->records) {
            byValue[r.value] = &r;
            if (r.values.empty() || r.nanCount > 0 || r.infCount > 0) {
                continue;
            }
            double lo = INFINITY, hi = -INFINITY, sum = 0;
            for (const float v : r.values) {
                lo = std::min(lo, double(v));
                hi = std::max(hi, double(v));
                sum += double(v);
            }
            const double mean = sum / double(r.values.size());
            QVERIFY2(lo == r.min && hi == r.max && std::abs(mean - r.mean) <= 1e-5 * (1 + hi - lo),
                     r.value.c_str());
            ++checked;
        }
        QVERIFY(checked == static_cast<int>(report->records.size()));
        if (name == QLatin1String("in_place_views")) {
            // transpose is mul's elements before add_, transpose_1 after it.
            const ActivationRecord* mul = byValue.at("mul");
            QCOMPARE(byValue.at("transpose")->mean, mul->mean);
            QVERIFY(std::abs(byValue.at("transpose_1")->mean - (mul->mean + 1)) < 1e-5);
            QCOMPARE(byValue.at("transpose_1")->histogram, byValue.at("add_")->histogram);
        }
    }

    // Every program make_exported.py wrote (PyTorch 2.x builds): the run equals ep.module().
    void runsLikeEpModule_data() {
        QTest::addColumn<QString>("name");
        if (std::string(SCRIPTSCOPE_EXPORTED_DIR).empty()) {
            return;
        }
        const auto reference =
            nlohmann::ordered_json::parse(readText(built("exported.reference.json")));
        for (auto it = reference["runs"].begin(); it != reference["runs"].end(); ++it) {
            QTest::newRow(it.key().c_str()) << QString::fromStdString(it.key());
        }
    }

    void runsLikeEpModule() {
        if (std::string(SCRIPTSCOPE_EXPORTED_DIR).empty()) {
            QSKIP("the 2.x programs are made where SCRIPTSCOPE_PYTHON has torch.export");
        }
        QFETCH(QString, name);
        const std::string base = name.toStdString();
        auto model = open(built(base + ".pt2"));
        const std::string saved = temp((base + ".out.pt").c_str());
        const auto result = runOnce(*model, built(base + ".inputs.pt"), saved);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        std::string why;
        QVERIFY2(sameOutputs(saved, built(base + ".outputs.pt"), why), why.c_str());
        // Nested as ep.module() returns them (a segmenter's dict, a pair, a tensor alone).
        const auto reference =
            nlohmann::ordered_json::parse(readText(built("exported.reference.json")));
        QCOMPARE(structureText(result->output),
                 reference["runs"][base]["structure"].get<std::string>());
        auto reread = scriptscope::detail::loadValueFile(saved);
        QVERIFY(reread);
        QCOMPARE(structureText(scriptscope::detail::describeOutput(*reread, 0)),
                 structureText(result->output));
    }

    // A buffer mutated in place is written back, as ep.module() writes it: the second call sees
    // the first one's update.
    void mutatedBuffersPersist() {
        if (std::string(SCRIPTSCOPE_EXPORTED_DIR).empty()) {
            QSKIP("the 2.x programs are made where SCRIPTSCOPE_PYTHON has torch.export");
        }
        auto model = open(built("accumulator.pt2"));
        RunRequest request;
        request.iterations = 1;
        request.warmup = 0;
        request.inputs = {parseInputSpec("ones:4x3").value()};
        request.valuesLimit = 10;
        const auto first = model->run(request);
        QVERIFY2(first, first ? "" : first.error().message.c_str());
        QCOMPARE(first->output.values, (std::vector<float>{8, 8, 8}));
        const auto second = model->run(request);
        QVERIFY(second);
        QCOMPARE(second->output.values, (std::vector<float>{16, 16, 16}));
    }

    // Refused before anything runs, each with its reason.
    void hostileGraphsAreRefused() {
        refused(editedCell(temp("undefined.pt2"),
                           [](nlohmann::ordered_json& p) {
                               nodes(p)[0]["inputs"][0]["arg"]["as_tensor"]["name"] = "nowhere";
                           }),
                ErrorKind::Format, "reads 'nowhere', which no input or earlier node defines");
        // A cycle: the first node reads what the last one makes.
        refused(editedCell(temp("cycle.pt2"),
                           [](nlohmann::ordered_json& p) {
                               auto& n = nodes(p);
                               const std::string last = n.back()["outputs"][0]["as_tensor"]["name"];
                               n[0]["inputs"][0]["arg"]["as_tensor"]["name"] = last;
                           }),
                ErrorKind::Format, "before it is made");
        refused(editedCell(temp("twice.pt2"),
                           [](nlohmann::ordered_json& p) {
                               auto& n = nodes(p);
                               n[1]["outputs"] = n[0]["outputs"];
                           }),
                ErrorKind::Format, "is defined twice");
        // Saved by this very PyTorch (an argument a newer one added would say so instead).
        refused(editedCell(temp("arity.pt2"),
                           [](nlohmann::ordered_json& p) {
                               p["torch_version"] = libtorchVersion();
                               nodes(p)[0]["inputs"].push_back(
                                   {{"name", "bogus"}, {"arg", {{"as_int", 1}}}, {"kind", 2}});
                           }),
                ErrorKind::Format, "has no argument 'bogus'");
        refused(editedCell(temp("type.pt2"),
                           [](nlohmann::ordered_json& p) {
                               nodes(p)[0]["inputs"][0]["arg"] = {{"as_string", "x"}};
                           }),
                ErrorKind::Format, "takes Tensor, but the graph gives a string");
        refused(editedCell(temp("unknown.pt2"),
                           [](nlohmann::ordered_json& p) {
                               nodes(p)[0]["target"] = "torch.ops.nolib.frobnicate.default";
                           }),
                ErrorKind::MissingOperator, "nolib::frobnicate is not registered");
        refused(editedCell(temp("newer.pt2"),
                           [](nlohmann::ordered_json& p) {
                               nodes(p)[0]["target"] = "torch.ops.aten.not_yet_invented.default";
                           }),
                ErrorKind::NeedsNewerLibTorch, "has no aten::not_yet_invented");
        // Nesting bombs: cond inside cond, deeper than the reader follows, and deeper than its
        // JSON reader takes.
        const auto bomb = [](int levels) {
            return [levels](nlohmann::ordered_json& p) {
                for (auto& node : nodes(p)) {
                    if (node["target"] != "torch.ops.higher_order.cond") {
                        continue;
                    }
                    nlohmann::ordered_json nested = node;
                    for (int i = 0; i < levels; ++i) {
                        // Inside a branch, its predicate is the branch's input.
                        nested["inputs"][0]["arg"]["as_tensor"]["name"] = "linear";
                        nlohmann::ordered_json outer = node;
                        outer["inputs"][1]["arg"]["as_graph"]["graph"]["nodes"] =
                            nlohmann::ordered_json::array({nested});
                        nested = outer;
                    }
                    node = nested;
                    return;
                }
            };
        };
        // auto_functionalized_v2 that names no operator, an operator nobody registered, a base
        // it does not have, or a view without its numbers.
        const auto functionalized = [](const std::function<void(nlohmann::ordered_json&)>& edit) {
            return [edit](nlohmann::ordered_json& p) {
                for (auto& node : nodes(p)) {
                    if (node["target"] == "torch.ops.higher_order.auto_functionalized_v2") {
                        edit(node);
                        return;
                    }
                }
            };
        };
        const auto input = [](nlohmann::ordered_json& node,
                              const std::string& name) -> nlohmann::ordered_json& {
            for (auto& in : node["inputs"]) {
                if (in["name"] == name) {
                    return in;
                }
            }
            QTest::qFail(("no input " + name).c_str(), __FILE__, __LINE__);
            return node;
        };
        refused(editedCell(temp("no_op.pt2"), functionalized([](nlohmann::ordered_json& node) {
                               node["inputs"][0]["arg"] = {{"as_int", 1}};
                           }),
                           "mutating_op.pt2"),
                ErrorKind::Format, "does not name the operator it calls first");
        refused(editedCell(temp("no_lib.pt2"), functionalized([](nlohmann::ordered_json& node) {
                               node["inputs"][0]["arg"]["as_operator"] =
                                   "torch.ops.nolib.frobnicate_.default";
                           }),
                           "mutating_op.pt2"),
                ErrorKind::MissingOperator, "nolib::frobnicate_ is not registered");
        refused(editedCell(temp("no_base.pt2"), functionalized([&](nlohmann::ordered_json& node) {
                               input(node, "_x_base_index")["arg"] = {{"as_int", 3}};
                           }),
                           "mutating_op.pt2"),
                ErrorKind::Format, "_x_base_index is not the index of one of its 1 bases");
        refused(editedCell(temp("no_bases.pt2"), functionalized([&](nlohmann::ordered_json& node) {
                               input(node, "_all_bases")["name"] = "_some_bases";
                           }),
                           "mutating_op.pt2"),
                ErrorKind::Format, "takes _all_bases, a list of tensors");
        refused(editedCell(
                    temp("no_end.pt2"),
                    [&](nlohmann::ordered_json& p) {
                        for (auto& node : nodes(p)) {
                            for (auto& in : node["inputs"]) {
                                if (in["name"] == "_x_slice_end") {
                                    in["name"] = "_x_slice_stop";
                                }
                            }
                        }
                    },
                    "mutating_op.pt2"),
                ErrorKind::Format, "_x_slice_end is not");
        refused(editedCell(temp("bomb.pt2"), bomb(20), "my_decision_gate.pt2"), ErrorKind::Format,
                "nests deeper than the reader follows");
        refused(editedCell(temp("deep.pt2"), bomb(60), "my_decision_gate.pt2"), ErrorKind::Format,
                "nested more than 256 levels deep");
    }

    // The torch-free check alone, on graphs made here.
    void graphCheckNamesTheValue() {
        Pt2Model model;
        model.name = "m";
        Pt2Value x;
        x.kind = Pt2Value::Kind::Tensor;
        x.names = {"x"};
        model.inputs = {{"USER_INPUT", "x", "", true}};
        model.inputValues = {x};
        Pt2Node node;
        node.name = "relu";
        node.target = "torch.ops.aten.relu.default";
        Pt2Argument argument;
        argument.name = "self";
        argument.value = x;
        argument.value.names = {"y"};
        node.inputs = {argument};
        Pt2Value out = x;
        out.names = {"relu"};
        node.returns = {out};
        model.nodes = {node};
        model.outputs = {{"USER_OUTPUT", "relu", "", true}};
        model.outputValues = {out};
        const auto error = checkExportedGraph(model);
        QVERIFY(error);
        QVERIFY2(error->message.find("reads 'y'") != std::string::npos, error->message.c_str());
        model.nodes[0].inputs[0].value.names = {"x"};
        QVERIFY(!checkExportedGraph(model));
        model.outputs.clear();
        QVERIFY(checkExportedGraph(model));
    }
};

QTEST_GUILESS_MAIN(TestInterpreter)
#include "test_interpreter.moc"
