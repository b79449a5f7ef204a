// A method's profile from ExecuTorch's event tracer (an ETDump): every instruction's time, named
// by the program's own calls, and the operators a delegate timed inside its call. The dump may
// come from this process's run or from a phone or a board (scriptscope-cli run --etdump).
#pragma once

#include <error.h>
#include <etdump_reader.h>
#include <etrecord_reader.h>
#include <executorch_program.h>
#include <run_types.h>

#include <string>
#include <vector>

namespace scriptscope {

struct EtdumpProfile {
    RunProfile profile;         // the mean over the runs taken
    std::vector<double> runsMs; // each run's Method::execute time, in order
    size_t runs = 0;
    std::vector<std::string> notes; // events that were left out, and why
};

// The profile of `method` over the dump's run blocks (the last `lastRuns` of them; 0: all). An
// error when no block is a run of the method, or a block names an instruction the method does not
// have (a dump of another program). The modules are the method's (self: its kernel calls) and
// its delegates (self: each call); with the program's ETRecord, each call's time goes to the
// module of the model it ran in instead ("forward.conv1"; a delegate that swallowed several, to
// the module they share), so the modules' self times add up to the operators' time either way.
Expected<EtdumpProfile> profileOfEtdump(const Etdump& dump, const ExecuTorchProgram& program,
                                        const std::string& method, size_t lastRuns = 0,
                                        const EtRecord* record = nullptr);

} // namespace scriptscope
