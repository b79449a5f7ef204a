// What is inside an XNNPACK delegate, read without ExecuTorch: every node, value, constant and
// quantization equal to what ExecuTorch's own tools read of the same blobs (the wheel's flatc on
// its schema; tests/fixtures/dump_xnnpack.py wrote NAME.xnnpack.json), the constants counted as
// the delegate's parameters in the tree, and hostile blobs refused with a reason, never followed.
#include "test_support.h"

#include <executorch_program.h>
#include <model.h>
#include <pte_reader.h>
#include <xnnpack_graph.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace scriptscope;
using scriptscope::test::readText;

namespace {

std::string committed(const std::string& name) {
    return std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/pte/" + name;
}

// The XNNPACK delegates of a program, in the order its plans list them.
std::vector<PteDelegate> xnnpackDelegates(const PteProgram& program) {
    std::vector<PteDelegate> delegates;
    for (const PtePlan& plan : program.plans) {
        for (const PteDelegate& delegate : plan.delegates) {
            if (delegate.id == "XnnpackBackend") {
                delegates.push_back(delegate);
            }
        }
    }
    return delegates;
}

std::string quantizationName(XnnQuantization::Kind kind) {
    switch (kind) {
    case XnnQuantization::Kind::None:
        return "NONE";
    case XnnQuantization::Kind::PerTensor:
        return "PerTensorQuant";
    case XnnQuantization::Kind::PerChannel:
        return "PerChannelQuant";
    case XnnQuantization::Kind::PerChannelGroup:
        return "PerChannelGroupQuant";
    case XnnQuantization::Kind::PerTokenDynamic:
        return "PerTokenDynamicQuant";
    }
    return "?";
}

// The delegates' parameters in a model's tree: the modules below a method that a backend runs.
uint64_t delegateParameters(const ModelInfo& info) {
    uint64_t count = 0;
    for (const ModuleInfo& module : info.modules) {
        if (module.path.find(".delegate_") != std::string::npos) {
            count += module.parameterCount;
        }
    }
    return count;
}

} // namespace

class TestXnnpack : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void readsWhatExecuTorchReads_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("float") << QStringLiteral("cnn_xnnpack");
        QTest::newRow("int8") << QStringLiteral("cnn_int8_xnnpack");
    }

    void readsWhatExecuTorchReads() {
        QFETCH(QString, name);
        const std::string path = committed(name.toStdString() + ".pte");
        const auto reference =
            nlohmann::json::parse(readText(committed(name.toStdString() + ".xnnpack.json")));
        const auto program = readPteFile(path);
        QVERIFY2(program, program ? "" : program.error().message.c_str());
        const std::vector<PteDelegate> delegates = xnnpackDelegates(*program);
        QCOMPARE(delegates.size(), reference["delegates"].size());
        for (size_t d = 0; d < delegates.size(); ++d) {
            const auto& want = reference["delegates"][d];
            const auto graph =
                readXnnpackBlobAt(path, delegates[d].blobOffset, delegates[d].blobBytes);
            QVERIFY2(graph, graph ? "" : graph.error().message.c_str());
            QCOMPARE(graph->version, want["version"].get<std::string>());
            QCOMPARE(graph->inputs, want["inputs"].get<std::vector<uint32_t>>());
            QCOMPARE(graph->outputs, want["outputs"].get<std::vector<uint32_t>>());
            QCOMPARE(graph->constantDataBytes, want["constant_data_size"].get<uint64_t>());
            QCOMPARE(graph->nodes.size(), want["nodes"].size());
            for (size_t i = 0; i < graph->nodes.size(); ++i) {
                QCOMPARE(graph->nodes[i].kind, want["nodes"][i]["kind"].get<std::string>());
                QCOMPARE(graph->nodes[i].debugHandle,
                         want["nodes"][i]["debug_handle"].get<uint32_t>());
                QCOMPARE(graph->nodes[i].inputs,
                         want["nodes"][i]["inputs"].get<std::vector<uint32_t>>());
                QCOMPARE(graph->nodes[i].outputs,
                         want["nodes"][i]["outputs"].get<std::vector<uint32_t>>());
            }
            QCOMPARE(graph->values.size(), want["values"].size());
            for (size_t i = 0; i < graph->values.size(); ++i) {
                const XnnValue& value = graph->values[i];
                const auto& v = want["values"][i];
                QCOMPARE(value.id, v["id"].get<uint32_t>());
                QCOMPARE("xnn_datatype_" + xnnDatatype(value.datatype),
                         v["datatype"].get<std::string>());
                QCOMPARE(value.dims, v["dims"].get<std::vector<uint32_t>>());
                QCOMPARE(value.constant, v["constant"].get<uint32_t>());
                QCOMPARE(value.flags, v["flags"].get<uint32_t>());
                QCOMPARE(quantizationName(value.quantization.kind),
                         v["quantization"].get<std::string>());
                if (v.contains("constant_bytes")) {
                    QCOMPARE(value.constantBytes, v["constant_bytes"].get<uint64_t>());
                }
            }
        }
    }

    // The delegates' constants are the program's weights: as the tree's parameters they add up
    // to the float model's (the CNN of make_pte.py: 1,562), float or int8, and the graph text
    // shows each node with its parameters.
    void weightsAreTheDelegatesParameters() {
        for (const char* name : {"cnn_xnnpack.pte", "cnn_int8_xnnpack.pte"}) {
            const std::string path = committed(name);
            ProbeResult probe;
            probe.path = path;
            const auto program = ExecuTorchProgram::open(path, probe);
            QVERIFY2(program, program ? "" : program.error().message.c_str());
            QCOMPARE(delegateParameters(program->info()), uint64_t{1562});
            const ModuleInfo* delegate = program->info().findModule("forward.delegate_0");
            QVERIFY(delegate);
            bool described = false;
            for (const AttributeInfo& attribute : delegate->attributes) {
                described = described || (attribute.name == "xnnpack graph" &&
                                          attribute.preview.find("nodes") != std::string::npos);
            }
            QVERIFY(described);
            const auto graph = program->graph("forward");
            QVERIFY(graph);
            QVERIFY2(graph->find("delegate 0 (XnnpackBackend):") != std::string::npos,
                     graph->c_str());
            QVERIFY2(graph->find("= Conv2d(") != std::string::npos, graph->c_str());
            QVERIFY2(graph->find("kernel 3x3") != std::string::npos, graph->c_str());
        }
        // int8: the weights are qint8 with their scales, the biases qint32.
        ProbeResult probe;
        const auto int8 = ExecuTorchProgram::open(committed("cnn_int8_xnnpack.pte"), probe);
        QVERIFY(int8);
        const ModuleInfo* delegate = int8->info().findModule("forward.delegate_0");
        QVERIFY(delegate && !delegate->parameters.empty());
        const TensorInfo& filter = delegate->parameters.front();
        QCOMPARE(filter.name, std::string("conv2d_0.filter"));
        QCOMPARE(filter.dtype, std::string("qint8"));
        QCOMPARE(filter.shape, (std::vector<int64_t>{8, 3, 3, 3}));
        QCOMPARE(filter.bytes, uint64_t{216});
        QCOMPARE(filter.qscheme, std::string("per_tensor_affine"));
        QVERIFY(filter.scale > 0);
    }

    // A real network quantized to int8 and lowered whole: its delegates hold its weights, within
    // 1% of the float export's parameters (batch norms are folded into the convolutions).
    void aQuantizedNetworksWeightsAreCounted() {
        const std::string dir = SCRIPTSCOPE_PTE_DIR;
        if (dir.empty()) {
            QSKIP("no ExecuTorch fixtures in this build (make_pte.py needs the pinned executorch)");
        }
        const auto exported = openModel(dir + "/mobilenet_v3_small.pt2");
        QVERIFY2(exported, exported ? "" : exported.error().message.c_str());
        const auto program = openModel(dir + "/mobilenet_v3_small_int8_xnnpack.pte");
        QVERIFY2(program, program ? "" : program.error().message.c_str());
        const double want = static_cast<double>((*exported)->info().parameterCount);
        const double counted = static_cast<double>(delegateParameters((*program)->info()));
        qInfo("float export: %.0f parameters; int8 delegates: %.0f", want, counted);
        QVERIFY2(std::abs(counted - want) <= 0.01 * want,
                 qPrintable(QStringLiteral("%1 of %2").arg(counted).arg(want)));
    }

    // A blob that lies is refused with where, never followed: its header's offsets, its root,
    // a node of a type no schema has, and every prefix and flipped byte (the fuzzer goes further).
    void hostileBlobsAreRefused() {
        const std::string path = committed("cnn_xnnpack.pte");
        const auto program = readPteFile(path);
        QVERIFY(program);
        const PteDelegate delegate = xnnpackDelegates(*program).front();
        std::string blob(delegate.blobBytes, '\0');
        std::ifstream in(path, std::ios::binary);
        in.seekg(static_cast<std::streamoff>(delegate.blobOffset));
        in.read(blob.data(), static_cast<std::streamsize>(blob.size()));
        QVERIFY(readXnnpackBlob(blob));
        std::string outside = blob;
        const uint32_t far = 0x7fffffff;
        std::memcpy(outside.data() + 10, &far, 4); // the graph's offset
        const auto refused = readXnnpackBlob(outside);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("outside the blob") != std::string::npos,
                 refused.error().message.c_str());
        QVERIFY(!readXnnpackBlob(std::string(64, '\0')));
        QVERIFY(!readXnnpackBlob({}));
        for (size_t size = 0; size < blob.size(); size += 5) {
            (void)readXnnpackBlob(blob.substr(0, size));
        }
        for (size_t at = 0; at < blob.size() && at < 3000; ++at) {
            std::string flipped = blob;
            flipped[at] = static_cast<char>(flipped[at] ^ 0x41);
            if (const auto graph = readXnnpackBlob(flipped)) {
                (void)xnnpackGraphText(*graph, "");
                (void)xnnpackConstants(*graph);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestXnnpack)
#include "test_xnnpack.moc"
