#include "error.h"

namespace scriptscope {

const char* toString(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::File:
        return "file";
    case ErrorKind::Format:
        return "format";
    case ErrorKind::Version:
        return "version";
    case ErrorKind::MissingOperator:
        return "missing-operator";
    case ErrorKind::Input:
        return "input";
    case ErrorKind::Device:
        return "device";
    case ErrorKind::OutOfMemory:
        return "out-of-memory";
    case ErrorKind::Crashed:
        return "crashed";
    case ErrorKind::TimedOut:
        return "timed-out";
    case ErrorKind::Model:
        return "model";
    case ErrorKind::Internal:
        return "internal";
    }
    return "internal";
}

} // namespace scriptscope
