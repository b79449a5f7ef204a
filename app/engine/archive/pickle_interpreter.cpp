// The pickle interpreter (pickle_interpreter.h): one opcode loop, a strict and a lenient policy,
// over the machine of pickle_machine.h.
#include "pickle_interpreter.h"

#include "pickle_machine.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace scriptscope {
namespace pickle_machine {

bool Machine::run() {
    // The families in the order of the one switch they were split from; each opcode is in one.
    static constexpr Step (Machine::*families[])(unsigned char) = {
        &Machine::framingAndStack, &Machine::constants,  &Machine::textNumbersAndFloats,
        &Machine::stringsAndBytes, &Machine::containers, &Machine::memoOps,
        &Machine::objects,         &Machine::notWritten,
    };
    while (true) {
        if (!need(1)) {
            return false;
        }
        const auto op = static_cast<unsigned char>(data[pos++]);
        Step step = Step::NotMine;
        for (const auto family : families) {
            step = (this->*family)(op);
            if (step != Step::NotMine) {
                break;
            }
        }
        switch (step) {
        case Step::Stop:
            return true;
        case Step::Fail:
            return false;
        case Step::NotMine:
            if (lenient) {
                --pos;
                return fail("unknown pickle opcode");
            }
            return unwritten(op);
        case Step::Next:
            break;
        }
        if (!error.empty()) {
            return false;
        }
    }
}

// PROTO and FRAME, STOP, and the opcodes that work the stack and its marks.
Machine::Step Machine::framingAndStack(unsigned char op) {
    uint64_t n = 0;
    switch (op) {
    case 0x80: // PROTO
        return next(fixed(1, n));
    case 0x95: // FRAME
        return next(fixed(8, n));
    case '.': // STOP
        stopped = true;
        if (lenient) {
            if (stack.empty()) {
                push(opaque());
            }
            return Step::Stop; // a scan reads what it has
        }
        if (stack.size() != 1 || !marks.empty() || !stack.back() || isGlobal(stack.back())) {
            fail("the pickle stops with " + std::to_string(stack.size()) + " values on its stack");
            return Step::Fail;
        }
        return Step::Stop;
    case '(': // MARK
        if (marks.size() >= kMaxStack) {
            fail("the pickle has too many marks");
            return Step::Fail;
        }
        marks.push_back(stack.size());
        return Step::Next;
    case '0': // POP
        return next(static_cast<bool>(pop()));
    case '1': { // POP_MARK
        std::vector<PickleValuePtr> ignored;
        return next(popMark(ignored));
    }
    case '2': // DUP
        if (stack.empty()) {
            fail("the pickle duplicates an empty stack");
            return Step::Fail;
        }
        return next(push(stack.back()));
    default:
        return Step::NotMine;
    }
}

// None, the bools, and the binary ints.
Machine::Step Machine::constants(unsigned char op) {
    uint64_t n = 0;
    switch (op) {
    case 'N':
        return next(push(make(PickleValue::Kind::None)));
    case 0x88:   // NEWTRUE
    case 0x89: { // NEWFALSE
        auto v = make(PickleValue::Kind::Bool);
        v->boolean = op == 0x88;
        return next(push(v));
    }
    case 'J': // BININT
        return next(fixed(4, n) && push(makeInt(static_cast<int32_t>(n))));
    case 'K': // BININT1
        return next(fixed(1, n) && push(makeInt(static_cast<int64_t>(n))));
    case 'M': // BININT2
        return next(fixed(2, n) && push(makeInt(static_cast<int64_t>(n))));
    case 0x8a:   // LONG1
    case 0x8b: { // LONG4
        if (!fixed(op == 0x8a ? 1 : 4, n)) {
            return Step::Fail;
        }
        if (n > 8 && lenient && need(static_cast<size_t>(n))) {
            pos += static_cast<size_t>(n); // a big int: opaque to a scan
            return next(push(opaque()));
        }
        if (n > 8 || !need(static_cast<size_t>(n))) {
            fail("an integer in the pickle is wider than 64 bits");
            return Step::Fail;
        }
        uint64_t bits = littleEndian(data, pos, static_cast<size_t>(n));
        if (n > 0 && n < 8 && (bits >> (8 * n - 1)) & 1) {
            bits |= ~uint64_t{0} << (8 * n); // sign-extend
        }
        pos += static_cast<size_t>(n);
        return next(push(makeInt(static_cast<int64_t>(bits))));
    }
    default:
        return Step::NotMine;
    }
}

// The ints written as text, and the floats, binary or text.
Machine::Step Machine::textNumbersAndFloats(unsigned char op) {
    std::string text;
    switch (op) {
    case 'I':   // INT (text)
    case 'L': { // LONG (text)
        if (!line(text)) {
            return Step::Fail;
        }
        if (op == 'L' && !text.empty() && text.back() == 'L') {
            text.pop_back();
        }
        if (op == 'I' && (text == "01" || text == "00")) {
            auto v = make(PickleValue::Kind::Bool);
            v->boolean = text == "01";
            return next(push(v));
        }
        char* end = nullptr;
        errno = 0;
        const long long value = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || errno || *end) {
            return next(refuse("an integer in the pickle is malformed"));
        }
        return next(push(makeInt(value)));
    }
    case 'G': { // BINFLOAT, big-endian
        if (!need(8)) {
            return Step::Fail;
        }
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) {
            bits = (bits << 8) | static_cast<unsigned char>(data[pos + i]);
        }
        pos += 8;
        auto v = make(PickleValue::Kind::Float);
        std::memcpy(&v->number, &bits, sizeof bits);
        return next(push(v));
    }
    case 'F': { // FLOAT (text)
        if (!line(text)) {
            return Step::Fail;
        }
        char* end = nullptr;
        auto v = make(PickleValue::Kind::Float);
        v->number = std::strtod(text.c_str(), &end);
        if (text.empty() || *end) {
            return next(refuse("a float in the pickle is malformed"));
        }
        return next(push(v));
    }
    default:
        return Step::NotMine;
    }
}

// The strings and the bytes, each after its length.
Machine::Step Machine::stringsAndBytes(unsigned char op) {
    std::string text;
    switch (op) {
    case 0x8c: // SHORT_BINUNICODE
    case 'X':  // BINUNICODE
    case 0x8d: // BINUNICODE8
    case 'U':  // SHORT_BINSTRING
    case 'T':  // BINSTRING
        return next(counted(op == 0x8c || op == 'U' ? 1
                            : op == 0x8d            ? 8
                                                    : 4,
                            text) &&
                    push(makeText(PickleValue::Kind::String, std::move(text))));
    case 'C':  // SHORT_BINBYTES
    case 'B':  // BINBYTES
    case 0x8e: // BINBYTES8
        return next(counted(op == 'C'   ? 1
                            : op == 'B' ? 4
                                        : 8,
                            text) &&
                    push(makeText(PickleValue::Kind::Bytes, std::move(text))));
    default:
        return Step::NotMine;
    }
}

// The lists, tuples and dicts: made empty, from the mark or from the top values, and added to.
Machine::Step Machine::containers(unsigned char op) {
    switch (op) {
    case ']': // EMPTY_LIST
        return next(push(make(PickleValue::Kind::List)));
    case ')': // EMPTY_TUPLE
        return next(push(make(PickleValue::Kind::Tuple)));
    case '}': // EMPTY_DICT
        return next(push(make(PickleValue::Kind::Dict)));
    case 'a': { // APPEND
        auto value = pop();
        if (!value || stack.empty()) {
            fail("the pickle appends without a list");
            return Step::Fail;
        }
        return next(append(stack.back(), {value}));
    }
    case 'e': { // APPENDS
        std::vector<PickleValuePtr> values;
        if (!popMark(values)) {
            return Step::Fail;
        }
        if (stack.empty() || !append(stack.back(), std::move(values))) {
            if (error.empty()) {
                fail("the pickle appends without a list");
            }
            return Step::Fail;
        }
        return Step::Next;
    }
    case 's': { // SETITEM
        auto value = pop();
        auto key = value ? pop() : nullptr;
        if (!key || stack.empty()) {
            fail("the pickle sets an item without a dict");
            return Step::Fail;
        }
        return next(setItems(stack.back(), {key, value}));
    }
    case 'u': { // SETITEMS
        std::vector<PickleValuePtr> values;
        if (!popMark(values)) {
            return Step::Fail;
        }
        if (stack.empty() || !setItems(stack.back(), std::move(values))) {
            if (error.empty()) {
                fail("the pickle sets items without a dict");
            }
            return Step::Fail;
        }
        return Step::Next;
    }
    case 'l':   // LIST
    case 't':   // TUPLE
    case 'd': { // DICT
        std::vector<PickleValuePtr> values;
        if (!popMark(values) || !addItems(values.size())) {
            return Step::Fail;
        }
        auto v = make(op == 'l'   ? PickleValue::Kind::List
                      : op == 't' ? PickleValue::Kind::Tuple
                                  : PickleValue::Kind::Dict);
        if (op == 'd') {
            if (!setItems(v, std::move(values))) {
                return Step::Fail;
            }
        } else {
            v->items = std::move(values);
        }
        return next(push(v));
    }
    case 0x85:   // TUPLE1
    case 0x86:   // TUPLE2
    case 0x87: { // TUPLE3
        const size_t count = op - 0x84u;
        if (stack.size() < count + (marks.empty() ? 0 : marks.back())) {
            fail("the pickle builds a tuple from too few values");
            return Step::Fail;
        }
        auto v = make(PickleValue::Kind::Tuple);
        v->items.assign(stack.end() - static_cast<std::ptrdiff_t>(count), stack.end());
        stack.resize(stack.size() - count);
        return next(addItems(count) && push(v));
    }
    default:
        return Step::NotMine;
    }
}

// The memo: what PUT and its kin keep, and GET and its kin push again.
Machine::Step Machine::memoOps(unsigned char op) {
    std::string text;
    uint64_t n = 0;
    switch (op) {
    case 'q': // BINPUT
        return next(fixed(1, n) && memoize(n));
    case 'r': // LONG_BINPUT
        return next(fixed(4, n) && memoize(n));
    case 'p': // PUT
        return next(line(text) && memoize(std::strtoull(text.c_str(), nullptr, 10)));
    case 0x94: // MEMOIZE
        return next(memoize(memo.size()));
    case 'h': // BINGET
        return next(fixed(1, n) && get(n));
    case 'j': // LONG_BINGET
        return next(fixed(4, n) && get(n));
    case 'g': // GET
        return next(line(text) && get(std::strtoull(text.c_str(), nullptr, 10)));
    default:
        return Step::NotMine;
    }
}

// The globals the pickle names, and what it calls and builds with them (pickle_objects.cpp).
Machine::Step Machine::objects(unsigned char op) {
    switch (op) {
    case 'c': { // GLOBAL
        std::string module, name;
        if (!line(module) || !line(name)) {
            return Step::Fail;
        }
        addGlobal(module + "." + name);
        return next(push(makeText(PickleValue::Kind::Object, "global:" + module + "." + name)));
    }
    case 0x93: { // STACK_GLOBAL
        auto name = pop();
        auto module = name ? pop() : nullptr;
        if (!module || module->kind != PickleValue::Kind::String ||
            name->kind != PickleValue::Kind::String) {
            if (!module || !refuse("the pickle names a class without strings")) {
                if (error.empty()) {
                    fail("the pickle names a class without strings");
                }
                return Step::Fail;
            }
            return Step::Next;
        }
        addGlobal(module->text + "." + name->text);
        return next(
            push(makeText(PickleValue::Kind::Object, "global:" + module->text + "." + name->text)));
    }
    case 'Q': { // BINPERSID: ('storage', torch.FloatStorage, key, location, numel)
        auto id = pop();
        return next(id && persistentId(id));
    }
    case 'R': { // REDUCE
        auto args = pop();
        auto callable = args ? pop() : nullptr;
        if (!callable || !reduce(callable, args)) {
            if (error.empty()) {
                fail("the pickle calls without arguments");
            }
            return Step::Fail;
        }
        return Step::Next;
    }
    case 0x81: { // NEWOBJ: cls.__new__(cls, *args)
        auto args = pop();
        auto cls = args ? pop() : nullptr;
        if (!cls) {
            if (error.empty()) {
                fail("the pickle makes an object without a class");
            }
            return Step::Fail;
        }
        return next(newObject(cls, args));
    }
    case 'b': { // BUILD
        auto state = pop();
        if (!state || stack.empty()) {
            if (error.empty()) {
                fail("the pickle builds without an object");
            }
            return Step::Fail;
        }
        return next(build(state));
    }
    default:
        return Step::NotMine;
    }
}

// The opcodes of the pickle protocols that torch.save does not write.
Machine::Step Machine::notWritten(unsigned char op) {
    switch (op) {
    // What torch.save does not write: a scan walks past it, opaque; readPickle stops.
    case 'S':  // STRING (text, quoted)
    case 'V':  // UNICODE (text)
    case 'P':  // PERSID (text)
    case 'i':  // INST
    case 'o':  // OBJ
    case 0x82: // EXT1
    case 0x83: // EXT2
    case 0x84: // EXT4
    case 0x8f: // EMPTY_SET
    case 0x90: // ADDITEMS
    case 0x91: // FROZENSET
    case 0x92: // NEWOBJ_EX
    case 0x96: // BYTEARRAY8
    case 0x97: // NEXT_BUFFER
    case 0x98: // READONLY_BUFFER
        if (!lenient) {
            unwritten(op);
            return Step::Fail;
        }
        return next(walkPast(op));
    default:
        return Step::NotMine;
    }
}

// What the lenient policy makes of an opcode torch.save does not write.
bool Machine::walkPast(unsigned char op) {
    std::string text;
    uint64_t n = 0;
    std::vector<PickleValuePtr> ignored;
    switch (op) {
    case 'S': // STRING (text, quoted)
    case 'V': // UNICODE (text)
        if (!line(text)) {
            return false;
        }
        if (op == 'S' && text.size() >= 2 && (text.front() == '\'' || text.front() == '"')) {
            text = text.substr(1, text.size() - 2);
        }
        return push(makeText(PickleValue::Kind::String, std::move(text)));
    case 'P': // PERSID (text)
        return line(text) && push(opaque());
    case 'i': { // INST "module\nname\n", arguments from the mark
        std::string module, name;
        if (!line(module) || !line(name) || !popMark(ignored)) {
            return false;
        }
        addGlobal(module + "." + name);
        return push(opaque());
    }
    case 'o':  // OBJ
    case 0x91: // FROZENSET
        return popMark(ignored) && push(opaque());
    case 0x8f: // EMPTY_SET
    case 0x97: // NEXT_BUFFER
        return push(opaque());
    case 0x90: // ADDITEMS
        return popMark(ignored);
    case 0x92: // NEWOBJ_EX
        return pop() && pop() && pop() && push(opaque());
    case 0x96: // BYTEARRAY8
        return counted(8, text) && push(opaque());
    case 0x82: // EXT1
    case 0x83: // EXT2
    case 0x84: // EXT4
        return fixed(op == 0x82 ? 1 : op == 0x83 ? 2 : 4, n) && push(opaque());
    default: // READONLY_BUFFER marks the buffer below it; nothing to do
        return true;
    }
}

// An opcode of the pickle protocols that torch.save does not write.
bool Machine::unwritten(unsigned char op) {
    static const char hex[] = "0123456789abcdef";
    std::string code = "0x";
    code += hex[op >> 4];
    code += hex[op & 15];
    --pos;
    return fail("the pickle uses opcode " + code +
                ", which torch.save does not write (sets, extensions or out-of-band "
                "buffers)");
}

} // namespace pickle_machine

PickleInterpretation interpretPickle(std::string_view data, PicklePolicy policy) {
    pickle_machine::Machine reader;
    reader.data = data;
    reader.lenient = policy == PicklePolicy::Lenient;
    PickleInterpretation result;
    if (reader.run()) {
        result.value = reader.stack.back();
    } else {
        result.error = reader.error;
        for (const auto& v : reader.stack) {
            if (v) {
                result.built.push_back(v);
            }
        }
        for (const auto& [key, v] : reader.memo) {
            result.built.push_back(v);
        }
    }
    result.stopped = reader.stopped;
    result.globals = std::move(reader.globals);
    return result;
}

} // namespace scriptscope
