// ExecuTorch's ETDumps read without ExecuTorch (every build): the reader's events equal what
// ExecuTorch's Inspector reads of the same dump (make_pte.py writes NAME.inspector.json), the
// profile of a dump counts each operator as the Inspector's rows do, runs recorded elsewhere open
// over their program as a run, a dump of another program is refused, and hostile dumps are
// refused with a reason, never a crash. On the committed dumps and, where the build's Python has
// executorch, on the ones it made.
#include "test_support.h"

#include <etdump_profile.h>
#include <etdump_reader.h>
#include <etrecord_reader.h>
#include <executorch_program.h>
#include <model.h>
#include <probe.h>

#include <QDir>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace scriptscope;
using scriptscope::test::readText;

namespace {

// Every program of a folder that has a dump beside it.
std::vector<std::string> dumped(const std::string& folder) {
    std::vector<std::string> names;
    for (const QString& file :
         QDir(QString::fromStdString(folder)).entryList({QStringLiteral("*.etdp")}, QDir::Files)) {
        names.push_back(file.chopped(5).toStdString());
    }
    return names;
}

ExecuTorchProgram program(const std::string& path) {
    auto opened = ExecuTorchProgram::open(path, ProbeResult{});
    if (!opened) {
        qFatal("%s: %s", path.c_str(), opened.error().message.c_str());
    }
    return std::move(opened).value();
}

Etdump dumpOf(const std::string& path) {
    auto dump = readEtdumpFile(path);
    if (!dump) {
        qFatal("%s", dump.error().message.c_str());
    }
    return std::move(dump).value();
}

// What ExecuTorch's Inspector.to_dataframe() gave of the dump: each row's block, event and times.
struct InspectorRow {
    std::string block, event;
    std::vector<double> raw;
};

std::vector<InspectorRow> inspectorRows(const std::string& path) {
    std::vector<InspectorRow> rows;
    for (const auto& row : nlohmann::json::parse(readText(path))) {
        rows.push_back({row["block"], row["event"], row["raw"].get<std::vector<double>>()});
    }
    return rows;
}

std::string committed(const std::string& name) {
    return std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/pte/" + name;
}

} // namespace

class TestEtdump : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyFolderHasDumps() {
        for (const std::string& folder : scriptscope::test::pteFolders()) {
            QVERIFY2(dumped(folder).size() >= 4, folder.c_str());
        }
    }

    // The reader's events, run by run, are the Inspector's rows: the same names in the same
    // order in every block, and the same times.
    void etdumpReadsAsTheInspector() {
        for (const std::string& folder : scriptscope::test::pteFolders()) {
            for (const std::string& name : dumped(folder)) {
                const std::string base = folder + "/" + name;
                const Etdump dump = dumpOf(base + ".etdp");
                QVERIFY(dump.sizePrefixed);
                std::map<std::string, std::vector<const EtdumpRun*>> blocks;
                for (const EtdumpRun& run : dump.runs) {
                    blocks[run.name].push_back(&run);
                }
                std::map<std::string, size_t> next;
                for (const InspectorRow& row : inspectorRows(base + ".inspector.json")) {
                    const auto& runs = blocks[row.block];
                    QCOMPARE(runs.size(), row.raw.size());
                    const size_t at = next[row.block]++;
                    for (size_t r = 0; r < runs.size(); ++r) {
                        QVERIFY2(at < runs[r]->profile.size(), row.event.c_str());
                        const EtdumpProfileEvent& event = runs[r]->profile[at];
                        const std::string eventName =
                            event.delegateDebugName.empty() ? event.name : event.delegateDebugName;
                        QCOMPARE(eventName, row.event);
                        QVERIFY2(std::abs(event.ms() - row.raw[r]) < 1e-6,
                                 (row.event + ": " + std::to_string(event.ms()) +
                                  " ms, Inspector " + std::to_string(row.raw[r]))
                                     .c_str());
                    }
                }
                for (const auto& [block, runs] : blocks) {
                    QCOMPARE(runs.front()->profile.size(),
                             next[block]); // no event the Inspector lacks
                }
            }
        }
    }

    // The profile of a dump counts each operator as often as the Inspector's rows name it: a
    // kernel's native_call_<op> row, a delegate's operators by name, its calls by DELEGATE_CALL.
    void profileCountsAsTheInspector() {
        for (const std::string& folder : scriptscope::test::pteFolders()) {
            for (const std::string& name : dumped(folder)) {
                const std::string base = folder + "/" + name;
                const ExecuTorchProgram p = program(base + ".pte");
                auto profiled = profileOfEtdump(dumpOf(base + ".etdp"), p, "forward");
                QVERIFY2(profiled, profiled ? "" : profiled.error().message.c_str());
                QCOMPARE(profiled->runs, size_t(3));
                QCOMPARE(profiled->runsMs.size(), size_t(3));
                // The Inspector names a kernel without its namespace (native_call_addmm.out):
                // the program's operator of that name ("aten::", "dim_order_ops::", ...).
                std::map<std::string, std::string> qualified;
                for (const PtePlan& plan : p.program().plans) {
                    for (const PteOperator& op : plan.operators) {
                        const std::string text = op.text();
                        qualified.emplace(text.substr(text.find("::") + 2), text);
                    }
                }
                std::map<std::string, int64_t> want;
                double methodMs = 0;
                for (const InspectorRow& row : inspectorRows(base + ".inspector.json")) {
                    if (row.block != "Execute") {
                        continue;
                    }
                    if (row.event.rfind("native_call_", 0) == 0) {
                        const std::string op = row.event.substr(12);
                        ++want[qualified.count(op) ? qualified[op] : "aten::" + op];
                    } else if (row.event == "DELEGATE_CALL") {
                        ++want["delegate::XnnpackBackend"];
                    } else if (row.event == "Method::execute") {
                        methodMs = row.raw.back();
                    } else if (row.event != "OPERATOR_CALL") {
                        const size_t hash = row.event.rfind(" #");
                        ++want["XnnpackBackend: " + row.event.substr(0, hash)];
                    }
                }
                std::map<std::string, int64_t> got;
                for (const OperatorTime& op : profiled->profile.operators) {
                    got[op.name] = op.calls;
                }
                std::string apart; // which operators, in which dump
                for (const auto& [op, calls] : want) {
                    if (got.count(op) == 0 || got.at(op) != calls) {
                        apart += " " + op + " " + std::to_string(got.count(op) ? got.at(op) : 0) +
                                 " (Inspector " + std::to_string(calls) + ")";
                    }
                }
                for (const auto& [op, calls] : got) {
                    if (want.count(op) == 0) {
                        apart += " " + op + " " + std::to_string(calls) + " (Inspector none)";
                    }
                }
                QVERIFY2(apart.empty(), (name + ":" + apart).c_str());
                QVERIFY(std::abs(profiled->runsMs.back() - methodMs) < 1e-6);
                // Each diagram node has its own time, and they add up to the operators' time.
                auto graph = p.graphModel("forward");
                QVERIFY(graph);
                QCOMPARE(profiled->profile.nodeMs.size(), graph->nodes.size());
                double sum = 0;
                for (const double ms : profiled->profile.nodeMs) {
                    QVERIFY(ms > 0);
                    sum += ms;
                }
                QVERIFY(std::abs(sum - profiled->profile.operatorMs) < 1e-9);
            }
        }
    }

    // Runs recorded elsewhere, opened over their program through the model interface (in every
    // build: nothing runs): the runs are the timing samples, the events the profile.
    void recordedRunsOpenAsARun() {
        auto model = openModel(committed("cnn_xnnpack.pte"));
        QVERIFY2(model, model ? "" : model.error().message.c_str());
        RunRequest request;
        request.etdumpPath = committed("cnn_xnnpack.etdp");
        const auto result = (*model)->run(request);
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QCOMPARE(result->samplesMs.size(), size_t(3));
        QCOMPARE(result->profile.runs, int64_t(3));
        QVERIFY(result->profiled);
        QCOMPARE(result->stats.count, size_t(3));
        // Another format refuses a dump; a file that is no dump says so.
        auto other = openModel(std::string(SCRIPTSCOPE_SOURCE_DIR) +
                               "/tests/fixtures/saved_by/exported/my_cell.pt2");
        QVERIFY(other);
        const auto refused = (*other)->run(request);
        QVERIFY(!refused);
        QVERIFY(refused.error().message.find("ETDump") != std::string::npos);
        request.etdumpPath = committed("cnn_xnnpack.pte");
        const auto notDump = (*model)->run(request);
        QVERIFY(!notDump);
        QVERIFY2(notDump.error().message.find("ETDump") != std::string::npos,
                 notDump.error().message.c_str());
    }

    // With the program's ETRecord, each call's time goes to the module of the model it ran in
    // (a delegate's to the module all it swallowed share), and the modules' self times still add
    // up to the operators' time.
    void groupedByTheModelsModules() {
        for (const std::string& folder : scriptscope::test::pteFolders()) {
            for (const std::string& name :
                 {std::string("cnn_portable"), std::string("cnn_xnnpack")}) {
                const std::string base = folder + "/" + name;
                const auto record = readEtRecordBeside(base + ".pte");
                QVERIFY2(record, record ? "" : record.error().message.c_str());
                const ExecuTorchProgram p = program(base + ".pte");
                auto profiled = profileOfEtdump(dumpOf(base + ".etdp"), p, "forward", 0, &*record);
                QVERIFY2(profiled, profiled ? "" : profiled.error().message.c_str());
                std::map<std::string, int64_t> calls;
                double self = 0;
                for (const ModuleTime& m : profiled->profile.modules) {
                    calls[m.path] = m.calls;
                    self += m.selfMs;
                }
                QVERIFY(std::abs(self - profiled->profile.operatorMs) < 1e-9);
                if (name == "cnn_portable") {
                    // conv1: its convolution; fc: permute_copy and addmm; the relus and the
                    // mean in the model's own forward.
                    QCOMPARE(calls["forward.conv1"], int64_t(1));
                    QCOMPARE(calls["forward.conv2"], int64_t(1));
                    QCOMPARE(calls["forward.fc"], int64_t(2));
                    QCOMPARE(calls["forward"], int64_t(3));
                } else {
                    // The first delegate swallowed conv1, conv2 and the relus: the model's own.
                    QCOMPARE(calls["forward.fc"], int64_t(1));
                    QVERIFY(!calls.count("forward.conv1"));
                    QCOMPARE(calls["forward"], int64_t(2));
                }
            }
        }
        EtRecord record;
        record.instructionModules["forward"][0] = {"a.b.c", "a.b.d"};
        record.instructionModules["forward"][1] = {"a.bc", "a.b"};
        record.instructionModules["forward"][2] = {"x", "y"};
        QCOMPARE(record.moduleOf("forward", 0), std::string("a.b"));
        QCOMPARE(record.moduleOf("forward", 1), std::string("a"));
        QCOMPARE(record.moduleOf("forward", 2), std::string());
        QCOMPARE(record.moduleOf("encode", 0), std::string());
        // What is no ETRecord says so: a .pte, a zip without the map.
        const auto notRecord = readEtRecord(committed("cnn_xnnpack.pte"));
        QVERIFY(!notRecord);
        QVERIFY2(notRecord.error().message.find("ETRecord") != std::string::npos,
                 notRecord.error().message.c_str());
        const auto archive = readEtRecord(std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                          "/tests/fixtures/saved_by/exported/my_cell.pt2");
        QVERIFY(!archive);
        QVERIFY2(archive.error().message.find("debug_handle_map") != std::string::npos,
                 archive.error().message.c_str());
    }

    // Each call's output by the export node it was lowered from: the edge node's from_node history
    // back to the first export's name (what a .pt2 of the model calls it), a delegate's its last
    // computing node's, and a node decomposed into several calls (linear: permute_copy, addmm)
    // the last call's only.
    void namesEachCallsExportNode() {
        for (const std::string& folder : scriptscope::test::pteFolders()) {
            for (const auto& [name, want] :
                 std::vector<std::pair<std::string, std::vector<std::string>>>{
                     {"cnn_portable", {"conv2d", "relu", "conv2d_1", "relu_1", "mean", "linear"}},
                     {"cnn_xnnpack", {"relu_1", "mean", "linear"}}}) {
                const auto record = readEtRecordBeside(folder + "/" + name + ".pte");
                QVERIFY2(record, record ? "" : record.error().message.c_str());
                std::vector<std::string> first;
                for (const auto& [instruction, names] :
                     record->instructionOperators.at("forward")) {
                    QVERIFY(!names.empty());
                    first.push_back(names.back());
                }
                QCOMPARE(first, want);
                // Newest first: the edge program's own name leads.
                QVERIFY2(
                    record->instructionOperators.at("forward").begin()->second.front().rfind(
                        "aten_", 0) == 0,
                    record->instructionOperators.at("forward").begin()->second.front().c_str());
            }
        }
    }

    // A dump of one program is not taken as another's: an instruction the method lacks is named.
    void refusesADumpOfAnotherProgram() {
        const ExecuTorchProgram p = program(committed("two_methods.pte"));
        auto profiled = profileOfEtdump(dumpOf(committed("cnn_portable.etdp")), p, "encode");
        QVERIFY(!profiled);
        QVERIFY2(profiled.error().message.find("another program") != std::string::npos,
                 profiled.error().message.c_str());
    }

    // Hostile dumps: cut anywhere, bytes changed anywhere, offsets that loop or leave the file,
    // a size prefix that lies. Each is an error or a dump, never a crash.
    void refusesHostileDumps() {
        const std::string bytes = readText(committed("cnn_xnnpack.etdp"));
        QVERIFY(readEtdump(bytes));
        for (size_t cut = 0; cut < bytes.size(); cut += 7) {
            (void)readEtdump(std::string_view(bytes).substr(0, cut));
        }
        auto cutOff = readEtdump(std::string_view(bytes).substr(0, bytes.size() / 2));
        QVERIFY(!cutOff);
        QVERIFY2(cutOff.error().message.find("cut off") != std::string::npos,
                 cutOff.error().message.c_str());
        auto notDump = readEtdump(readText(committed("cnn_xnnpack.pte")));
        QVERIFY(!notDump);
        QVERIFY(notDump.error().message.find("ETDump") != std::string::npos);

        std::string rootless = bytes; // the root offset (after the size prefix) at 0
        std::memset(rootless.data() + 4, 0, 4);
        auto noRoot = readEtdump(rootless);
        QVERIFY(!noRoot);
        QVERIFY2(noRoot.error().message.find("root table") != std::string::npos,
                 noRoot.error().message.c_str());
        std::string lying = bytes; // a size prefix that claims more than the file holds
        const uint32_t claimed = static_cast<uint32_t>(bytes.size()) + 100;
        std::memcpy(lying.data(), &claimed, 4);
        auto lies = readEtdump(lying);
        QVERIFY(!lies);
        QVERIFY(lies.error().message.find("size prefix") != std::string::npos);

        std::mt19937 random(7);
        for (int round = 0; round < 3000; ++round) {
            std::string changed = bytes;
            for (int k = 0; k < 4; ++k) {
                changed[random() % changed.size()] = static_cast<char>(random());
            }
            (void)readEtdump(changed);
        }
    }
};

QTEST_GUILESS_MAIN(TestEtdump)
#include "test_etdump.moc"
