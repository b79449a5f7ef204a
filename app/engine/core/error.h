// Errors cross every boundary as values: a kind the caller can branch on, and a message a person
// can act on.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace scriptscope {

enum class ErrorKind {
    File,            // missing, unreadable, a directory, ...
    Format,          // not a TorchScript archive, or a damaged one
    Version,         // written by a PyTorch this LibTorch cannot read
    MissingOperator, // the archive calls an operator nobody registered
    Input,           // the inputs do not fit the method
    Device,          // CUDA asked for where there is none
    OutOfMemory,     // an allocation failed (or the memory limit was hit)
    Crashed,         // the process doing the work died by a signal
    TimedOut,        // the work did not finish within its time limit
    Model,           // the model's own code raised
    Internal,        // a bug in ScriptScope
    // The archive calls a PyTorch operator (aten::, prim::) this LibTorch does not have: it was
    // saved by a newer PyTorch, and a ScriptScope built on one opens it.
    NeedsNewerLibTorch,
    // An operator library that cannot be loaded here: missing, not a library, built for another
    // LibTorch, or its own initialisers failed. Error::library names it.
    OperatorLibrary,
};

const char* toString(ErrorKind kind);

struct Error {
    Error() = default;
    Error(ErrorKind kind_, std::string message_, std::string details_ = {})
        : kind(kind_)
        , message(std::move(message_))
        , details(std::move(details_)) {}

    ErrorKind kind = ErrorKind::Internal;
    std::string message; // one line
    std::string details; // the full text behind it (LibTorch's tracebacks), when there is more
    // The operator behind a MissingOperator error ("torchvision::nms"), so a GUI can offer a fix.
    std::string operatorName;
    // For a MissingOperator error: a library on this machine known to define it, or empty; for
    // an OperatorLibrary error, the library that could not be loaded.
    std::string library;
};

// A value or an Error. Small on purpose: the engine's results are plain structs.
template <typename T>
class Expected {
public:
    Expected(T value)
        : state_(std::move(value)) {}
    Expected(Error error)
        : state_(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(state_); }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<T>(state_); }
    T& value() & { return std::get<T>(state_); }
    T&& value() && { return std::get<T>(std::move(state_)); }
    const T* operator->() const { return &value(); }
    const T& operator*() const& { return value(); }
    const Error& error() const { return std::get<Error>(state_); }

private:
    std::variant<T, Error> state_;
};

// For operations that produce nothing but may fail.
using Status = std::optional<Error>;

} // namespace scriptscope
