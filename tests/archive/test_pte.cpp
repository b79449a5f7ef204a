// ExecuTorch programs (.pte) read without ExecuTorch: every operator, instruction, value and
// delegate equal to what ExecuTorch's own Python reads of the same files
// (tests/fixtures/make_pte.py writes pte.reference.json), and hostile files refused with a reason
// that says what is wrong and where.
#include "test_support.h"

#include <pte_reader.h>

#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace scriptscope;
using scriptscope::test::readText;

namespace {

std::string committed(const std::string& name) {
    return readText(std::string(SCRIPTSCOPE_SOURCE_DIR) + "/tests/fixtures/saved_by/pte/" + name);
}

template <typename T>
std::vector<T> numbers(const nlohmann::json& items) {
    return items.get<std::vector<T>>();
}

uint32_t u32(const std::string& bytes, uint64_t at) {
    uint32_t value = 0;
    std::memcpy(&value, bytes.data() + at, 4);
    return value;
}

void putU32(std::string& bytes, uint64_t at, uint32_t value) {
    std::memcpy(bytes.data() + at, &value, 4);
}

// Where field `id` of the table at `table` is stored (0 when absent): the walk a hostile file is
// made with.
uint64_t fieldOf(const std::string& bytes, uint64_t table, int id) {
    int32_t soffset = 0;
    std::memcpy(&soffset, bytes.data() + table, 4);
    const uint64_t vtable = table - static_cast<uint64_t>(static_cast<int64_t>(soffset));
    uint16_t entry = 0;
    std::memcpy(&entry, bytes.data() + vtable + 4 + 2 * id, 2);
    return entry ? table + entry : 0;
}

// The program's execution plan vector: where the offset to it is stored, and the vector itself.
struct PlanVector {
    uint64_t field = 0;
    uint64_t vector = 0;
};
PlanVector planVector(const std::string& bytes) {
    const uint64_t root = u32(bytes, 0);
    PlanVector found;
    found.field = fieldOf(bytes, root, 1);
    found.vector = found.field + u32(bytes, found.field);
    return found;
}

std::string refusal(const std::string& bytes) {
    const auto read = readPte(bytes, bytes.size());
    if (read) {
        return "(read)";
    }
    return read.error().message;
}

} // namespace

class TestPte : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void readsWhatExecuTorchReads_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("name");
        for (const std::string& folder : scriptscope::test::pteFolders()) {
            const auto reference = nlohmann::json::parse(readText(folder + "/pte.reference.json"));
            for (const auto& [name, file] : reference["files"].items()) {
                QTest::newRow((folder.substr(folder.rfind('/') + 1) + ": " + name).c_str())
                    << QString::fromStdString(folder) << QString::fromStdString(name);
            }
        }
    }

    void readsWhatExecuTorchReads() {
        QFETCH(QString, folder);
        QFETCH(QString, name);
        const std::string dir = folder.toStdString();
        const auto reference = nlohmann::json::parse(readText(dir + "/pte.reference.json"));
        const auto& expected = reference["files"][name.toStdString()];
        const auto read = readPteFile(dir + "/" + name.toStdString() + ".pte");
        QVERIFY2(read.ok(), read.ok() ? "" : read.error().message.c_str());
        const PteProgram& program = read.value();
        QVERIFY2(program.notes.empty(), program.notes.empty() ? "" : program.notes[0].c_str());
        QCOMPARE(program.version, expected["version"].get<uint32_t>());
        QCOMPARE(program.programSize, expected["program_size"].get<uint64_t>());
        QCOMPARE(program.segmentBaseOffset, expected["segment_base_offset"].get<uint64_t>());
        QCOMPARE(program.constantBufferSizes, numbers<uint64_t>(expected["constant_buffer_sizes"]));
        std::vector<std::vector<uint64_t>> segments;
        for (const PteSegment& s : program.segments) {
            segments.push_back({s.offset, s.size});
        }
        QCOMPARE(segments, expected["segments"].get<std::vector<std::vector<uint64_t>>>());
        QCOMPARE(program.constantSegmentIndex,
                 expected["constant_segment"]["segment_index"].get<uint32_t>());
        QCOMPARE(program.constantOffsets,
                 numbers<uint64_t>(expected["constant_segment"]["offsets"]));

        QCOMPARE(program.plans.size(), expected["plans"].size());
        for (size_t p = 0; p < program.plans.size(); ++p) {
            const PtePlan& plan = program.plans[p];
            const auto& want = expected["plans"][p];
            QCOMPARE(plan.name, want["name"].get<std::string>());
            QCOMPARE(plan.inputs, numbers<int32_t>(want["inputs"]));
            QCOMPARE(plan.outputs, numbers<int32_t>(want["outputs"]));
            std::vector<std::string> operators, values, delegates;
            for (const PteOperator& op : plan.operators) {
                operators.push_back(op.text());
            }
            for (const PteValue& v : plan.values) {
                values.push_back(pteValueLine(v));
            }
            for (const PteDelegate& d : plan.delegates) {
                delegates.push_back(pteDelegateLine(d));
            }
            QCOMPARE(operators, want["operators"].get<std::vector<std::string>>());
            QCOMPARE(values, want["values"].get<std::vector<std::string>>());
            QCOMPARE(delegates, want["delegates"].get<std::vector<std::string>>());
            QCOMPARE(plan.nonConstBufferSizes, numbers<int64_t>(want["non_const_buffer_sizes"]));
            QCOMPARE(plan.chains.size(), want["chains"].size());
            for (size_t c = 0; c < plan.chains.size(); ++c) {
                const auto& chain = want["chains"][c];
                QCOMPARE(plan.chains[c].inputs, numbers<int32_t>(chain["inputs"]));
                QCOMPARE(plan.chains[c].outputs, numbers<int32_t>(chain["outputs"]));
                std::vector<std::string> instructions;
                for (const PteInstruction& i : plan.chains[c].instructions) {
                    instructions.push_back(pteInstructionLine(i));
                }
                QCOMPARE(instructions, chain["instructions"].get<std::vector<std::string>>());
            }
            // Each delegate's blob is found, in a segment or inline.
            for (const PteDelegate& d : plan.delegates) {
                QVERIFY(d.blobBytes > 0);
            }
        }
    }

    // A portable program's constants are the CNN's weights: each has its bytes in the constant
    // segment, and the planned tensors fit their buffers.
    void constantsAndThePlanAddUp() {
        const auto read = readPteFile(std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                      "/tests/fixtures/saved_by/pte/cnn_portable.pte");
        QVERIFY(read.ok());
        const PtePlan& plan = read->plans.at(0);
        int constants = 0;
        for (const PteValue& v : plan.values) {
            if (v.kind == PteValue::Kind::Tensor && v.tensor.dataBuffer > 0) {
                ++constants;
                QCOMPARE(read->constantBytes(v.tensor.dataBuffer), v.tensor.bytes());
            }
            if (v.kind == PteValue::Kind::Tensor && v.tensor.allocated) {
                QVERIFY(v.tensor.memoryOffset + v.tensor.bytes() <=
                        static_cast<uint64_t>(plan.nonConstBufferSizes.at(v.tensor.memoryId)));
            }
        }
        QCOMPARE(constants, 6); // two convolutions' and the linear layer's weights and biases
    }

    void refusesATruncatedFile() {
        const std::string bytes = committed("cnn_portable.pte");
        QVERIFY(refusal(bytes.substr(0, 6)).find("cut off") != std::string::npos);
        // The header says how long the program is: a file cut inside it says both sizes.
        const std::string half = bytes.substr(0, bytes.size() / 2);
        const std::string message = refusal(half);
        QVERIFY2(message.find("cut off") != std::string::npos, message.c_str());
        QVERIFY2(message.find(std::to_string(half.size())) != std::string::npos, message.c_str());
        // And so does the file on disk.
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("cut.pte")).toStdString();
        std::ofstream(path, std::ios::binary) << half;
        const auto read = readPteFile(path);
        QVERIFY(!read.ok());
        QVERIFY2(read.error().message.find("cut off") != std::string::npos,
                 read.error().message.c_str());
    }

    void refusesABadIdentifier() {
        std::string bytes = committed("cnn_portable.pte");
        bytes.replace(4, 4, "XY99");
        const std::string message = refusal(bytes);
        QVERIFY2(message.find("'XY99', not ExecuTorch's 'ET12'") != std::string::npos,
                 message.c_str());
        bytes.replace(4, 4, "ET11");
        QVERIFY(refusal(bytes).find("another release of ExecuTorch") != std::string::npos);
        QVERIFY(!looksLikePte("1234XY99"));
        QVERIFY(looksLikePte(committed("cnn_xnnpack.pte")));
    }

    void refusesAnOffsetOutsideTheFile() {
        std::string bytes = committed("cnn_portable.pte");
        const PlanVector plans = planVector(bytes);
        putU32(bytes, plans.field, 0x7fff0000);
        const std::string message = refusal(bytes);
        QVERIFY2(message.find("outside the program") != std::string::npos, message.c_str());
        QVERIFY2(message.find("at byte " + std::to_string(plans.field)) != std::string::npos,
                 message.c_str());
        std::string root = committed("cnn_portable.pte");
        putU32(root, 0, 0xfffffff0u);
        QVERIFY(refusal(root).find("root offset") != std::string::npos);
    }

    void refusesAVectorOfTwoToThe31Items() {
        std::string bytes = committed("cnn_portable.pte");
        const PlanVector plans = planVector(bytes);
        putU32(bytes, plans.vector, 0x80000000u);
        const std::string message = refusal(bytes);
        QVERIFY2(message.find("claims 2147483648 items") != std::string::npos, message.c_str());
    }

    void refusesANestingLoop() {
        // The first plan's offset wrapped around 32 bits back onto the program's own table: a
        // reader adding 32-bit offsets would walk the program again, and again.
        std::string bytes = committed("two_methods.pte");
        const PlanVector plans = planVector(bytes);
        const uint64_t root = u32(bytes, 0);
        const uint64_t element = plans.vector + 4;
        putU32(bytes, element, static_cast<uint32_t>((1ull << 32) - (element - root)));
        std::string message = refusal(bytes);
        QVERIFY2(message.find("nesting loop") != std::string::npos, message.c_str());
        QVERIFY2(message.find("byte " + std::to_string(root)) != std::string::npos,
                 message.c_str());
        // An offset of 0 points at itself.
        std::string self = committed("two_methods.pte");
        putU32(self, element, 0);
        message = refusal(self);
        QVERIFY2(message.find("points at itself") != std::string::npos, message.c_str());
    }

    // N plans that are all one table, holding M values that are all one table: each reference
    // is legal, but reading them costs N x M for a file of N + M words. The budget that a file
    // of this size can hold stops it, as quadratic work a hostile file must not buy.
    void refusesSharedTablesBeyondWhatTheFileHolds() {
        const uint32_t n = 2000, m = 2000;
        std::string bytes(8, '\0');
        bytes.replace(4, 4, "ET12");
        const auto u16 = [&](uint16_t v) { bytes.append(reinterpret_cast<const char*>(&v), 2); };
        const auto u32 = [&](uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
        const auto i32 = [&](int32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
        putU32(bytes, 0, 8);
        i32(-8); // the program's table at 8, its vtable at 16
        u32(12); // field 1, execution_plan: the vector at 24
        u16(8);
        u16(8);
        u16(0);
        u16(4);
        const uint32_t plan = 28 + 4 * n;
        u32(n);
        for (uint32_t i = 0; i < n; ++i) {
            u32(plan - (28 + 4 * i)); // every plan is the one at `plan`
        }
        i32(-8); // the plan's table, its vtable 8 bytes on
        u32(16); // field 2, values: the vector at plan + 20
        u16(10); // the plan's vtable: fields 0 and 1 absent, 2 at 4
        u16(8);
        u16(0);
        u16(0);
        u16(4);
        u16(0); // padding to plan + 20
        const uint32_t values = plan + 20;
        QCOMPARE(static_cast<uint32_t>(bytes.size()), values);
        const uint32_t value = values + 4 + 4 * m;
        u32(m);
        for (uint32_t j = 0; j < m; ++j) {
            u32(value - (values + 4 + 4 * j)); // every value is the one at `value`
        }
        i32(-4); // an empty value table, its vtable right after it
        u16(4);
        u16(4);
        const std::string message = refusal(bytes);
        QVERIFY2(message.find("more objects than its " + std::to_string(bytes.size()) +
                              " bytes can hold") != std::string::npos,
                 message.c_str());
        // One plan of the same shape reads: the budget is no limit on honest files.
        std::string one = bytes;
        putU32(one, 24, 1);
        QVERIFY2(refusal(one) == "(read)", refusal(one).c_str());
    }

    // Every prefix and every single-byte change of a real program reads or is refused; none
    // crashes (the fuzzer goes further).
    void everyPrefixAndFlipIsReadOrRefused() {
        const std::string bytes = committed("cnn_xnnpack.pte");
        for (size_t size = 0; size < bytes.size(); size += 7) {
            (void)readPte(bytes.substr(0, size), size);
        }
        for (size_t at = 0; at < 2200; ++at) {
            std::string flipped = bytes;
            flipped[at] = static_cast<char>(flipped[at] ^ 0x80);
            (void)readPte(flipped, flipped.size());
        }
    }
};

QTEST_GUILESS_MAIN(TestPte)
#include "test_pte.moc"
