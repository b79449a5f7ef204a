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
    while (true) {
        if (!need(1)) {
            return false;
        }
        const auto op = static_cast<unsigned char>(data[pos++]);
        std::string text;
        uint64_t n = 0;
        switch (op) {
        case 0x80: // PROTO
            if (!fixed(1, n)) {
                return false;
            }
            break;
        case 0x95: // FRAME
            if (!fixed(8, n)) {
                return false;
            }
            break;
        case '.': // STOP
            stopped = true;
            if (lenient) {
                if (stack.empty()) {
                    push(opaque());
                }
                return true; // a scan reads what it has
            }
            if (stack.size() != 1 || !marks.empty() || !stack.back() || isGlobal(stack.back())) {
                return fail("the pickle stops with " + std::to_string(stack.size()) +
                            " values on its stack");
            }
            return true;
        case '(': // MARK
            if (marks.size() >= kMaxStack) {
                return fail("the pickle has too many marks");
            }
            marks.push_back(stack.size());
            break;
        case '0': // POP
            if (!pop()) {
                return false;
            }
            break;
        case '1': { // POP_MARK
            std::vector<PickleValuePtr> ignored;
            if (!popMark(ignored)) {
                return false;
            }
            break;
        }
        case '2': // DUP
            if (stack.empty()) {
                return fail("the pickle duplicates an empty stack");
            }
            if (!push(stack.back())) {
                return false;
            }
            break;
        case 'N':
            if (!push(make(PickleValue::Kind::None))) {
                return false;
            }
            break;
        case 0x88:   // NEWTRUE
        case 0x89: { // NEWFALSE
            auto v = make(PickleValue::Kind::Bool);
            v->boolean = op == 0x88;
            if (!push(v)) {
                return false;
            }
            break;
        }
        case 'J': // BININT
            if (!fixed(4, n) || !push(makeInt(static_cast<int32_t>(n)))) {
                return false;
            }
            break;
        case 'K': // BININT1
            if (!fixed(1, n) || !push(makeInt(static_cast<int64_t>(n)))) {
                return false;
            }
            break;
        case 'M': // BININT2
            if (!fixed(2, n) || !push(makeInt(static_cast<int64_t>(n)))) {
                return false;
            }
            break;
        case 0x8a:   // LONG1
        case 0x8b: { // LONG4
            if (!fixed(op == 0x8a ? 1 : 4, n)) {
                return false;
            }
            if (n > 8 && lenient && need(static_cast<size_t>(n))) {
                pos += static_cast<size_t>(n); // a big int: opaque to a scan
                if (!push(opaque())) {
                    return false;
                }
                break;
            }
            if (n > 8 || !need(static_cast<size_t>(n))) {
                return fail("an integer in the pickle is wider than 64 bits");
            }
            uint64_t bits = littleEndian(data, pos, static_cast<size_t>(n));
            if (n > 0 && n < 8 && (bits >> (8 * n - 1)) & 1) {
                bits |= ~uint64_t{0} << (8 * n); // sign-extend
            }
            pos += static_cast<size_t>(n);
            if (!push(makeInt(static_cast<int64_t>(bits)))) {
                return false;
            }
            break;
        }
        case 'I':   // INT (text)
        case 'L': { // LONG (text)
            if (!line(text)) {
                return false;
            }
            if (op == 'L' && !text.empty() && text.back() == 'L') {
                text.pop_back();
            }
            if (op == 'I' && (text == "01" || text == "00")) {
                auto v = make(PickleValue::Kind::Bool);
                v->boolean = text == "01";
                if (!push(v)) {
                    return false;
                }
                break;
            }
            char* end = nullptr;
            errno = 0;
            const long long value = std::strtoll(text.c_str(), &end, 10);
            if (text.empty() || errno || *end) {
                if (!refuse("an integer in the pickle is malformed")) {
                    return false;
                }
                break;
            }
            if (!push(makeInt(value))) {
                return false;
            }
            break;
        }
        case 'G': { // BINFLOAT, big-endian
            if (!need(8)) {
                return false;
            }
            uint64_t bits = 0;
            for (int i = 0; i < 8; ++i) {
                bits = (bits << 8) | static_cast<unsigned char>(data[pos + i]);
            }
            pos += 8;
            auto v = make(PickleValue::Kind::Float);
            std::memcpy(&v->number, &bits, sizeof bits);
            if (!push(v)) {
                return false;
            }
            break;
        }
        case 'F': { // FLOAT (text)
            if (!line(text)) {
                return false;
            }
            char* end = nullptr;
            auto v = make(PickleValue::Kind::Float);
            v->number = std::strtod(text.c_str(), &end);
            if (text.empty() || *end) {
                if (!refuse("a float in the pickle is malformed")) {
                    return false;
                }
                break;
            }
            if (!push(v)) {
                return false;
            }
            break;
        }
        case 0x8c: // SHORT_BINUNICODE
        case 'X':  // BINUNICODE
        case 0x8d: // BINUNICODE8
        case 'U':  // SHORT_BINSTRING
        case 'T':  // BINSTRING
            if (!counted(op == 0x8c || op == 'U' ? 1
                         : op == 0x8d            ? 8
                                                 : 4,
                         text) ||
                !push(makeText(PickleValue::Kind::String, std::move(text)))) {
                return false;
            }
            break;
        case 'C':  // SHORT_BINBYTES
        case 'B':  // BINBYTES
        case 0x8e: // BINBYTES8
            if (!counted(op == 'C'   ? 1
                         : op == 'B' ? 4
                                     : 8,
                         text) ||
                !push(makeText(PickleValue::Kind::Bytes, std::move(text)))) {
                return false;
            }
            break;
        case ']': // EMPTY_LIST
            if (!push(make(PickleValue::Kind::List))) {
                return false;
            }
            break;
        case ')': // EMPTY_TUPLE
            if (!push(make(PickleValue::Kind::Tuple))) {
                return false;
            }
            break;
        case '}': // EMPTY_DICT
            if (!push(make(PickleValue::Kind::Dict))) {
                return false;
            }
            break;
        case 'a': { // APPEND
            auto value = pop();
            if (!value || stack.empty()) {
                return fail("the pickle appends without a list");
            }
            if (!append(stack.back(), {value})) {
                return false;
            }
            break;
        }
        case 'e': { // APPENDS
            std::vector<PickleValuePtr> values;
            if (!popMark(values)) {
                return false;
            }
            if (stack.empty() || !append(stack.back(), std::move(values))) {
                return error.empty() ? fail("the pickle appends without a list") : false;
            }
            break;
        }
        case 's': { // SETITEM
            auto value = pop();
            auto key = value ? pop() : nullptr;
            if (!key || stack.empty()) {
                return fail("the pickle sets an item without a dict");
            }
            if (!setItems(stack.back(), {key, value})) {
                return false;
            }
            break;
        }
        case 'u': { // SETITEMS
            std::vector<PickleValuePtr> values;
            if (!popMark(values)) {
                return false;
            }
            if (stack.empty() || !setItems(stack.back(), std::move(values))) {
                return error.empty() ? fail("the pickle sets items without a dict") : false;
            }
            break;
        }
        case 'l':   // LIST
        case 't':   // TUPLE
        case 'd': { // DICT
            std::vector<PickleValuePtr> values;
            if (!popMark(values) || !addItems(values.size())) {
                return false;
            }
            auto v = make(op == 'l'   ? PickleValue::Kind::List
                          : op == 't' ? PickleValue::Kind::Tuple
                                      : PickleValue::Kind::Dict);
            if (op == 'd') {
                if (!setItems(v, std::move(values))) {
                    return false;
                }
            } else {
                v->items = std::move(values);
            }
            if (!push(v)) {
                return false;
            }
            break;
        }
        case 0x85:   // TUPLE1
        case 0x86:   // TUPLE2
        case 0x87: { // TUPLE3
            const size_t count = op - 0x84u;
            if (stack.size() < count + (marks.empty() ? 0 : marks.back())) {
                return fail("the pickle builds a tuple from too few values");
            }
            auto v = make(PickleValue::Kind::Tuple);
            v->items.assign(stack.end() - static_cast<std::ptrdiff_t>(count), stack.end());
            stack.resize(stack.size() - count);
            if (!addItems(count) || !push(v)) {
                return false;
            }
            break;
        }
        case 'q': // BINPUT
            if (!fixed(1, n) || !memoize(n)) {
                return false;
            }
            break;
        case 'r': // LONG_BINPUT
            if (!fixed(4, n) || !memoize(n)) {
                return false;
            }
            break;
        case 'p': { // PUT
            if (!line(text)) {
                return false;
            }
            if (!memoize(std::strtoull(text.c_str(), nullptr, 10))) {
                return false;
            }
            break;
        }
        case 0x94: // MEMOIZE
            if (!memoize(memo.size())) {
                return false;
            }
            break;
        case 'h': // BINGET
            if (!fixed(1, n) || !get(n)) {
                return false;
            }
            break;
        case 'j': // LONG_BINGET
            if (!fixed(4, n) || !get(n)) {
                return false;
            }
            break;
        case 'g': // GET
            if (!line(text) || !get(std::strtoull(text.c_str(), nullptr, 10))) {
                return false;
            }
            break;
        case 'c': { // GLOBAL
            std::string module, name;
            if (!line(module) || !line(name)) {
                return false;
            }
            addGlobal(module + "." + name);
            if (!push(makeText(PickleValue::Kind::Object, "global:" + module + "." + name))) {
                return false;
            }
            break;
        }
        case 0x93: { // STACK_GLOBAL
            auto name = pop();
            auto module = name ? pop() : nullptr;
            if (!module || module->kind != PickleValue::Kind::String ||
                name->kind != PickleValue::Kind::String) {
                if (!module || !refuse("the pickle names a class without strings")) {
                    return error.empty() ? fail("the pickle names a class without strings") : false;
                }
                break;
            }
            addGlobal(module->text + "." + name->text);
            if (!push(makeText(PickleValue::Kind::Object,
                               "global:" + module->text + "." + name->text))) {
                return false;
            }
            break;
        }
        case 'Q': { // BINPERSID: ('storage', torch.FloatStorage, key, location, numel)
            auto id = pop();
            if (!id || !persistentId(id)) {
                return false;
            }
            break;
        }
        case 'R': { // REDUCE
            auto args = pop();
            auto callable = args ? pop() : nullptr;
            if (!callable || !reduce(callable, args)) {
                return error.empty() ? fail("the pickle calls without arguments") : false;
            }
            break;
        }
        case 0x81: { // NEWOBJ: cls.__new__(cls, *args)
            auto args = pop();
            auto cls = args ? pop() : nullptr;
            if (!cls) {
                return error.empty() ? fail("the pickle makes an object without a class") : false;
            }
            if (!newObject(cls, args)) {
                return false;
            }
            break;
        }
        case 'b': { // BUILD
            auto state = pop();
            if (!state || stack.empty()) {
                return error.empty() ? fail("the pickle builds without an object") : false;
            }
            if (!build(state)) {
                return false;
            }
            break;
        }
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
                return unwritten(op);
            }
            if (!walkPast(op)) {
                return false;
            }
            break;
        default:
            if (lenient) {
                --pos;
                return fail("unknown pickle opcode");
            }
            return unwritten(op);
        }
        if (!error.empty()) {
            return false;
        }
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
