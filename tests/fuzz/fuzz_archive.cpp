// libFuzzer: what reads archives without running them: the zip reader (every record read back),
// the pickle walker (storages, tensors, classes), the value-building pickle reader (torch.save
// files), the torch.export (.pt2) reader, its printouts and its graph check, the ExecuTorch
// (.pte) reader and its views, ExecuTorch's ETDump reader, and the whole probe, on the fuzzer's
// bytes as a file.
#include <etdump_reader.h>
#include <executorch_program.h>
#include <exported_text.h>
#include <graph_check.h>
#include <pickle_scan.h>
#include <pickle_value.h>
#include <probe.h>
#include <pt2_reader.h>
#include <pte_reader.h>
#include <zip_reader.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    (void)scriptscope::scanPickle(bytes);
    (void)scriptscope::readPte(bytes, size);
    (void)scriptscope::readEtdump(bytes);
    if (const auto read = scriptscope::readPickle(bytes); read.value) {
        (void)scriptscope::describePickleValue(*read.value);
    }
    // The zip reader reads a path: an in-memory file.
    const int fd = memfd_create("fuzz-archive", MFD_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    if (write(fd, data, size) == static_cast<ssize_t>(size)) {
        const scriptscope::ZipReader zip("/proc/self/fd/" + std::to_string(fd));
        for (const auto& record : zip.records()) {
            if (const auto content = zip.read(record, 1u << 20)) {
                if (record.name.size() > 4 &&
                    record.name.compare(record.name.size() - 4, 4, ".pkl") == 0) {
                    (void)scriptscope::scanPickle(*content);
                    if (const auto read = scriptscope::readPickle(*content); read.value) {
                        (void)scriptscope::describePickleValue(*read.value);
                    }
                }
            }
        }
        scriptscope::Pt2Limits limits;
        limits.maxJsonBytes = 1u << 20;
        const scriptscope::Pt2Archive archive = scriptscope::readPt2Archive(zip, limits);
        // What the views make of it: Python's printouts and node list, untrusted text throughout.
        for (const auto& model : archive.models) {
            (void)scriptscope::exportedProgramText(model);
            (void)scriptscope::exportedGraphText(model);
            // The check the interpreter makes before it runs anything.
            (void)scriptscope::checkExportedGraph(model);
        }
        // An ExecuTorch program as the views get it: its tree, texts and diagram.
        if (const auto program = scriptscope::ExecuTorchProgram::open(
                "/proc/self/fd/" + std::to_string(fd), scriptscope::ProbeResult{})) {
            for (const auto& plan : program->program().plans) {
                (void)program->code(plan.name);
                (void)program->graph(plan.name);
                (void)program->graphModel(plan.name);
            }
        }
        scriptscope::ProbeEnvironment environment;
        environment.maxSupportedVersion = 10;
        environment.isRegistered = [](const std::string& name) { return name.size() % 2 == 0; };
        (void)scriptscope::probeArchive("/proc/self/fd/" + std::to_string(fd), environment);
    }
    close(fd);
    return 0;
}
