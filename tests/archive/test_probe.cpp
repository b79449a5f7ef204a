// Probing: every kind of file is recognized and named without executing anything, and the zip and
// pickle readers survive damaged input.
#include "test_support.h"

#include <pickle_scan.h>
#include <session.h>
#include <zip_reader.h>

#include <QTemporaryDir>

#include <cstdio>
#include <fstream>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

using namespace scriptscope;
using scriptscope::test::fixture;

Q_DECLARE_METATYPE(scriptscope::FileKind)

class TestProbe : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void recognizesKinds_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<FileKind>("kind");
        QTest::addColumn<QString>("summaryPart");
        auto row = [](const char* file, FileKind kind, const char* part) {
            QTest::newRow(file) << QString::fromLatin1(file) << kind << QString::fromLatin1(part);
        };
        row("mycell_traced.pt", FileKind::TorchScript, "TorchScript archive");
        row("compute.pt", FileKind::TorchScript, "serialization version 3");
        row("missing.pt", FileKind::Missing, "no such file");
        row("", FileKind::Directory, "a directory");
        row("empty.pt", FileKind::Empty, "empty file");
        row("text.pt", FileKind::Text, "text file");
        row("random.bin", FileKind::Unknown, "match no known model format");
        row("plain.zip", FileKind::Zip, "not a PyTorch file");
        row("two_folders.zip", FileKind::Zip, "not in one top folder");
        row("state_dict.pt", FileKind::TorchSaveZip, "state_dict");
        row("eager_model.pt", FileKind::TorchSaveZip, "pickled eager model");
        row("tensor.pt", FileKind::TorchSaveZip, "a tensor int64[4] saved with torch.sav");
        row("legacy.pt", FileKind::LegacyTorchSave, "legacy (pre-zip) torch.save");
        row("model.onnx", FileKind::Onnx, "ONNX model");
        row("mobile_flatbuffer.ptl", FileKind::MobileFlatbuffer, "flatbuffer mobile archive");
        row("truncated.pt", FileKind::TruncatedZip, "truncated");
        row("version_newer.pt", FileKind::TorchScript, "written by a newer PyTorch");
        row("version_text.pt", FileKind::TorchScript, "not a number");
        row("version_overflow.pt", FileKind::TorchScript, "not a number");
        row("missing_op.pt", FileKind::TorchScript, "(1 not registered)");
        // make_real_models.py: a detector that needs torchvision::nms, quantized models, values.
        // torchvision::nms (and, in torchvision 0.29's, box_iou_rotated): not registered here.
        row("ssdlite.pt", FileKind::TorchScript, " not registered).");
        row("quantized_mobilenet.pt", FileKind::TorchScript, "TorchScript archive");
        row("dynamic_quantized.pt", FileKind::TorchScript, "TorchScript archive");
        row("value_list1.pt", FileKind::TorchSaveZip,
            "a torch.save file holding a list of 1 tensor");
        row("ssdlite.inputs.pt", FileKind::TorchSaveZip, "holding a list of 2 tensors");
        row("value_t_int64.pt", FileKind::TorchSaveZip,
            "a tensor int64[3, 2] saved with torch.save");
        row("value_tuple.pt", FileKind::TorchSaveZip,
            "holding a tuple of (tensor float32[2, 3], int 3)");
        row("value_nested_dict.pt", FileKind::TorchSaveZip, "usable as an input");
    }

    void recognizesKinds() {
        QFETCH(QString, file);
        QFETCH(FileKind, kind);
        QFETCH(QString, summaryPart);
        const auto result = probeArchive(fixture(file.toStdString()));
        QCOMPARE(toString(result.kind), toString(kind));
        QVERIFY2(result.summary.find(summaryPart.toStdString()) != std::string::npos,
                 result.summary.c_str());
    }

    // What people mistake for TorchScript, named: a torch.export archive (.pt2, committed as
    // torch 2.14 saved it) and PyTorch 1.0-preview's format (the custom-operator tutorial's own
    // example.pt; a file with the preview's magic stands for it here).
    void recognizesExportAndPreviewFormats() {
        const auto exported = probeArchive(std::string(SCRIPTSCOPE_SOURCE_DIR) +
                                           "/tests/fixtures/saved_by/exported_cnn.torch2.14.pt2");
        QCOMPARE(toString(exported.kind), toString(FileKind::ExportedProgram));
        QVERIFY2(exported.summary.find("torch.export archive (.pt2, export schema 8.20") !=
                         std::string::npos &&
                     exported.summary.find("'model': 5 operator calls, 6 parameters, 3 buffers, "
                                           "1 input") != std::string::npos,
                 exported.summary.c_str());
        QVERIFY(exported.damage.empty() && exported.notes.empty());
        // The layout of PyTorch 2.1 to 2.7 has no top folder: named all the same.
        const auto early =
            probeArchive(std::string(SCRIPTSCOPE_SOURCE_DIR) +
                         "/tests/fixtures/saved_by/exported_cnn_early.torch2.14.pt2");
        QCOMPARE(toString(early.kind), toString(FileKind::ExportedProgram));
        QVERIFY2(early.summary.find("5 operator calls") != std::string::npos,
                 early.summary.c_str());
        QTemporaryDir dir;
        const std::string preview = dir.path().toStdString() + "/example.pt";
        std::ofstream(preview, std::ios::binary) << "PYTORCH1" << std::string(64, '\x07');
        const auto old = probeArchive(preview);
        QCOMPARE(toString(old.kind), toString(FileKind::PreviewTorchScript));
        QVERIFY2(old.summary.find("1.0-preview") != std::string::npos &&
                     old.summary.find("Export the model again") != std::string::npos,
                 old.summary.c_str());
    }

    void unreadableFile() {
        // A file its reader may not open: as root (the tests run as root in CI) every file is
        // readable, so the probe runs in a child that has dropped to nobody.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                              QFileDevice::ExeOwner | QFileDevice::ReadOther |
                                              QFileDevice::ExeOther | QFileDevice::ReadGroup |
                                              QFileDevice::ExeGroup);
        const std::string path = dir.path().toStdString() + "/locked.pt";
        std::ofstream(path) << "x";
        QVERIFY(QFile::setPermissions(QString::fromStdString(path), QFileDevice::Permissions()));
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            constexpr uid_t kNobody = 65534;
            if (::geteuid() == 0 && (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) {
                _exit(3);
            }
            if (::geteuid() == 0) {
                _exit(4); // still root: the case would not be exercised
            }
            const auto result = probeArchive(path);
            const bool unreadable = result.kind == FileKind::Unreadable &&
                                    result.summary.find("ermission denied") != std::string::npos;
            if (!unreadable) {
                std::fprintf(stderr, "probe: %s: %s\n", toString(result.kind),
                             result.summary.c_str());
            }
            _exit(unreadable ? 0 : 1);
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        QVERIFY2(WEXITSTATUS(status) != 3, "could not drop to the nobody user");
        QVERIFY2(WEXITSTATUS(status) != 4, "the child is still root");
        QVERIFY2(WEXITSTATUS(status) == 0, "the probe did not call the file unreadable");
    }

    void torchScriptDetails() {
        const auto result = probeArchive(fixture("extra_files.pt"));
        QCOMPARE(result.kind, FileKind::TorchScript);
        QCOMPARE(result.archiveName, std::string("extra_files"));
        QCOMPARE(result.version, int64_t(3));
        QVERIFY(result.maxSupportedVersion >= 3);
        QCOMPARE(result.extraFiles.size(), size_t(2));
        QCOMPARE(result.extraFiles.at("notes.txt"),
                 std::string("Exported for the ScriptScope tests.\n"));
        QVERIFY(result.extraFiles.at("meta.json").find("\"classes\"") != std::string::npos);
        bool sawData = false;
        for (const auto& record : result.records) {
            sawData |= record.name == "extra_files/data.pkl" && record.size > 0;
        }
        QVERIFY(sawData);
    }

    void operatorsAndRegistration() {
        const auto compute = probeArchive(fixture("compute.pt"));
        std::map<std::string, bool> ops;
        for (const auto& op : compute.operators) {
            ops[op.name] = op.registered;
        }
        QVERIFY(ops.count("my_ops::warp_perspective") && ops["my_ops::warp_perspective"]);
        QVERIFY(ops.count("aten::eye") && ops["aten::eye"]);
        const auto missing = probeArchive(fixture("missing_op.pt"));
        bool found = false;
        for (const auto& op : missing.operators) {
            if (op.name == "scriptscope_missing::negate") {
                found = true;
                QVERIFY(!op.registered);
            } else {
                QVERIFY2(op.registered, op.name.c_str());
            }
        }
        QVERIFY(found);
        QVERIFY(isOperatorRegistered("aten::conv2d"));
        QVERIFY(!isOperatorRegistered("aten::neg_from_the_future"));
        QVERIFY(!isOperatorRegistered("no_namespace"));
    }

    void pickleGlobalsOfStateDict() {
        const auto result = probeArchive(fixture("state_dict.pt"));
        QVERIFY(!result.pickleGlobals.empty());
        QCOMPARE(result.pickleGlobals.front(), std::string("collections.OrderedDict"));
    }

    void zipBombIsNotInflated() {
        // The 64 MiB extra record is listed, not read.
        const auto result = probeArchive(fixture("zip_bomb.pt"));
        QCOMPARE(result.kind, FileKind::TorchScript);
        QVERIFY(result.extraFiles.at("bomb.bin").find("not shown") != std::string::npos);
    }

    void damagedZipsNeverCrash() {
        // Random changes to a good archive: every variant gives a result or an error, never a
        // crash.
        const std::string original = scriptscope::test::readText(fixture("mycell_scripted.pt"));
        QTemporaryDir dir;
        std::mt19937 random(1234);
        for (int variant = 0; variant < 300; ++variant) {
            std::string bytes = original;
            const int changes = 1 + static_cast<int>(random() % 8);
            for (int i = 0; i < changes; ++i) {
                bytes[random() % bytes.size()] = static_cast<char>(random() & 0xFF);
            }
            if (variant % 10 == 0) {
                bytes.resize(random() % bytes.size());
            }
            const std::string path = dir.path().toStdString() + "/variant.pt";
            std::ofstream(path, std::ios::binary | std::ios::trunc)
                .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            const auto result = probeArchive(path);
            QVERIFY(!result.summary.empty());
        }
    }

    void pickleScanner() {
        // protocol 2: GLOBAL 'collections OrderedDict', EMPTY_TUPLE, REDUCE, STOP
        const std::string pickle("\x80\x02"
                                 "ccollections\nOrderedDict\n)R.");
        const auto scan = scanPickle(pickle);
        QVERIFY(scan.complete);
        QCOMPARE(scan.globals, std::vector<std::string>{"collections.OrderedDict"});
        // protocol 4: SHORT_BINUNICODE x2, STACK_GLOBAL
        const std::string stackGlobal("\x80\x04\x8c\x08__main__\x8c\x03Net\x93.", 18);
        QCOMPARE(scanPickle(stackGlobal).globals, std::vector<std::string>{"__main__.Net"});
        QVERIFY(!scanPickle(std::string("\x80\x02\x8c\xff", 4)).complete);
        QVERIFY(!scanPickle(std::string("\xff\xfe", 2)).error.empty());
        QVERIFY(!scanPickle("").complete);
    }
};

QTEST_GUILESS_MAIN(TestProbe)
#include "test_probe.moc"
