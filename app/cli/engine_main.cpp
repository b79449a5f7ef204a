// scriptscope-cli-engine: the process that does scriptscope-cli's work. scriptscope-cli starts it
// as a supervised child (or becomes it with --in-process); it links LibTorch, the parent does not.
// Run directly, it does the work in-process, with the same command line as scriptscope-cli.
#include "commands.h"

#include <process_limits.h>

#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace scriptscope::cli;
    const std::vector<std::string> args(argv + 1, argv + argc);
    Options options;
    if (const auto status = parseArguments(args, options, printVersion)) {
        return *status;
    }
    // A supervised child had its limit set before exec (a resident-memory limit is taken up here);
    // otherwise the limit given is applied here.
    if (options.supervised) {
        scriptscope::continueMemoryLimit();
    } else if (options.memoryLimitGiven) {
        scriptscope::applyMemoryLimit(options.memoryLimit);
    }
    return execute(options);
}
