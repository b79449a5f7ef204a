// The machine under the pickle interpreter (pickle_interpreter.h), shared by its three files:
//   pickle_machine.cpp      the stack, marks, memo and containers, and their bounds;
//   pickle_objects.cpp      what torch's callables and persistent ids build (tensors, storages,
//                           OrderedDicts, and Objects that keep their arguments and state);
//   pickle_interpreter.cpp  the opcode loop, under the strict or the lenient policy.
// Internal to the archive library: nothing outside these files includes it.
#pragma once

#include "pickle_interpreter.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace scriptscope::pickle_machine {

constexpr size_t kMaxStack = 1u << 20;
constexpr size_t kMaxMemo = 1u << 20;
constexpr size_t kMaxItems = 1u << 24; // elements added to containers, all together

uint64_t littleEndian(std::string_view data, size_t pos, size_t bytes);
PickleValuePtr make(PickleValue::Kind kind);
PickleValuePtr makeInt(int64_t i);
PickleValuePtr makeText(PickleValue::Kind kind, std::string text);
// What the lenient policy makes of what it does not understand ...
PickleValuePtr opaque();
// ... keeping what it was given, for a scan to find the storages in it.
PickleValuePtr opaqueWith(const PickleValuePtr& given);
// A class or function the pickle named (an Object "global:module.name"), or that one.
bool isGlobal(const PickleValuePtr& v, const char* name = nullptr);
// A tuple or list of ints.
bool asInts(const PickleValuePtr& v, std::vector<int64_t>& out);

struct Machine {
    std::string_view data;
    size_t pos = 0;
    std::string error;
    // The stack holds values, marks (null) and globals (Object values with text "global:...").
    std::vector<PickleValuePtr> stack;
    std::vector<size_t> marks;
    std::unordered_map<uint64_t, PickleValuePtr> memo;
    size_t items = 0;
    bool lenient = false; // PicklePolicy::Lenient
    bool stopped = false;
    uint64_t serial = 0;
    std::vector<std::string> globals;

    // pickle_machine.cpp
    void addGlobal(const std::string& name);
    // Strict: the error. Lenient: an opaque value in place of what could not be made.
    bool refuse(const std::string& why);
    bool fail(const std::string& why); // sets "why at byte N"
    bool need(size_t bytes);
    bool push(PickleValuePtr v);
    PickleValuePtr pop();
    bool popMark(std::vector<PickleValuePtr>& out); // the values above the last mark
    bool line(std::string& out);
    bool counted(size_t lengthBytes, std::string& out);
    bool fixed(size_t bytes, uint64_t& value);
    bool memoize(uint64_t key);
    bool get(uint64_t key);
    bool addItems(size_t count);
    bool append(const PickleValuePtr& list, std::vector<PickleValuePtr> values);
    bool setItems(const PickleValuePtr& dict, std::vector<PickleValuePtr> values);

    // pickle_objects.cpp
    bool reduce(const PickleValuePtr& callable, const PickleValuePtr& args); // REDUCE
    bool persistentId(const PickleValuePtr& id);                             // BINPERSID
    bool newObject(const PickleValuePtr& cls, const PickleValuePtr& args);   // NEWOBJ
    bool build(const PickleValuePtr& state);                                 // BUILD

    // pickle_interpreter.cpp
    bool run();
    bool unwritten(unsigned char op);
    bool walkPast(unsigned char op); // lenient: an opcode torch.save does not write

private:
    // pickle_interpreter.cpp: the opcode families run() asks in turn, one opcode at a time.
    // What a family makes of an opcode: run() reads the next one, stops with the value, stops with
    // the error, or asks the next family, since the opcode is not one of this family's.
    enum class Step { Next, Stop, Fail, NotMine };
    static Step next(bool ok) { return ok ? Step::Next : Step::Fail; } // Next, or Fail if not ok

    // PROTO, FRAME, STOP, MARK, POP, POP_MARK and DUP.
    Step framingAndStack(unsigned char op);
    // NONE, NEWTRUE, NEWFALSE, BININT, BININT1, BININT2, LONG1 and LONG4.
    Step constants(unsigned char op);
    // INT, LONG (as text), BINFLOAT and FLOAT.
    Step textNumbersAndFloats(unsigned char op);
    // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, SHORT_BINSTRING, BINSTRING and the BINBYTES.
    Step stringsAndBytes(unsigned char op);
    // EMPTY_LIST/TUPLE/DICT, APPEND(S), SETITEM(S), LIST, TUPLE, DICT and TUPLE1-3.
    Step containers(unsigned char op);
    // BINPUT, LONG_BINPUT, PUT, MEMOIZE, BINGET, LONG_BINGET and GET.
    Step memoOps(unsigned char op);
    // GLOBAL, STACK_GLOBAL, BINPERSID, REDUCE, NEWOBJ and BUILD.
    Step objects(unsigned char op);
    // The opcodes torch.save does not write (sets, INST, OBJ, EXT*, buffers...): walkPast or fail.
    Step notWritten(unsigned char op);
};

} // namespace scriptscope::pickle_machine
