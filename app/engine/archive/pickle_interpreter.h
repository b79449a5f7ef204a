// The one interpreter of pickle opcodes in the archive readers: it builds plain values (None,
// bool, int, float, str, bytes, list, tuple, dict), the tensors and storages torch.save and
// torch.jit.save refer to, and Object values that name any other class (with the arguments and
// state they were given, so that nothing inside them is lost). Nothing is imported or called.
//
// Two policies over the same opcodes and bounds:
//   Strict  (readPickle, pickle_value.h): what a torch.save file must be; anything else is an
//           error that says what and at which byte.
//   Lenient (scanPickle, pickle_scan.h): what a probe can still learn from a pickle it does not
//           fully understand (a set, an extension code, a malformed tensor): those become
//           opaque values and the walk goes on. Running out of bytes or past a bound still stops
//           it, with the same "at byte N" error.
#pragma once

#include "pickle_value.h"

#include <string>
#include <string_view>
#include <vector>

namespace scriptscope {

enum class PicklePolicy { Strict, Lenient };

struct PickleInterpretation {
    PickleValuePtr value; // what STOP returns; null on error
    std::string error;    // "... at byte N"
    bool stopped = false; // the walk reached STOP (even if what it returns is refused)
    // Every class or function the pickle names (GLOBAL, STACK_GLOBAL, INST), in order of first
    // appearance, as far as the walk went.
    std::vector<std::string> globals;
    // On error: what the walk had built (the stack and the memo), for a pass to read what it can.
    std::vector<PickleValuePtr> built;
};

PickleInterpretation interpretPickle(std::string_view data, PicklePolicy policy);

} // namespace scriptscope
