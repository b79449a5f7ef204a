#include "pickle_value.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace scriptscope {
namespace {

constexpr size_t kMaxStack = 1u << 20;
constexpr size_t kMaxMemo = 1u << 20;
constexpr size_t kMaxItems = 1u << 24; // elements added to containers, all together
constexpr int kMaxDepth = 64;

uint64_t littleEndian(std::string_view data, size_t pos, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) {
        value |= static_cast<uint64_t>(static_cast<unsigned char>(data[pos + i])) << (8 * i);
    }
    return value;
}

PickleValuePtr make(PickleValue::Kind kind) {
    auto v = std::make_shared<PickleValue>();
    v->kind = kind;
    return v;
}

PickleValuePtr makeInt(int64_t i) {
    auto v = make(PickleValue::Kind::Int);
    v->integer = i;
    return v;
}

PickleValuePtr makeText(PickleValue::Kind kind, std::string text) {
    auto v = make(kind);
    v->text = std::move(text);
    return v;
}

// A global ("torch._utils._rebuild_tensor_v2") or the storage a persistent id names; kept apart
// from plain values so that they never leak into what the caller sees.
struct Global {
    std::string name;
};

struct Reader {
    std::string_view data;
    size_t pos = 0;
    std::string error;
    // The stack holds values, marks (null) and globals (Object values with text "global:...").
    std::vector<PickleValuePtr> stack;
    std::vector<size_t> marks;
    std::unordered_map<uint64_t, PickleValuePtr> memo;
    size_t items = 0;

    bool fail(const std::string& why) {
        error = why + " at byte " + std::to_string(pos);
        return false;
    }
    bool need(size_t bytes) { return data.size() - pos >= bytes || fail("the pickle ends early"); }
    bool push(PickleValuePtr v) {
        if (stack.size() >= kMaxStack) {
            return fail("the pickle's stack is too deep");
        }
        stack.push_back(std::move(v));
        return true;
    }
    PickleValuePtr pop() {
        if (stack.size() <= (marks.empty() ? 0 : marks.back())) {
            fail("the pickle pops an empty stack");
            return nullptr;
        }
        auto v = std::move(stack.back());
        stack.pop_back();
        return v;
    }
    // The values above the last mark, which is removed.
    bool popMark(std::vector<PickleValuePtr>& out) {
        if (marks.empty()) {
            return fail("the pickle has no mark to pop to");
        }
        const size_t mark = marks.back();
        marks.pop_back();
        out.assign(std::make_move_iterator(stack.begin() + static_cast<std::ptrdiff_t>(mark)),
                   std::make_move_iterator(stack.end()));
        stack.resize(mark);
        return true;
    }
    bool line(std::string& out) {
        const size_t end = data.find('\n', pos);
        if (end == std::string_view::npos) {
            return fail("the pickle ends inside a text argument");
        }
        out.assign(data.substr(pos, end - pos));
        pos = end + 1;
        return true;
    }
    bool counted(size_t lengthBytes, std::string& out) {
        if (!need(lengthBytes)) {
            return false;
        }
        const uint64_t length = littleEndian(data, pos, lengthBytes);
        pos += lengthBytes;
        if (data.size() - pos < length) {
            return fail("a string runs past the end of the pickle");
        }
        out.assign(data.substr(pos, static_cast<size_t>(length)));
        pos += static_cast<size_t>(length);
        return true;
    }
    bool fixed(size_t bytes, uint64_t& value) {
        if (!need(bytes)) {
            return false;
        }
        value = littleEndian(data, pos, bytes);
        pos += bytes;
        return true;
    }
    bool memoize(uint64_t key) {
        if (stack.empty()) {
            return fail("the pickle memoizes an empty stack");
        }
        if (memo.size() >= kMaxMemo && !memo.count(key)) {
            return fail("the pickle's memo is too large");
        }
        memo[key] = stack.back();
        return true;
    }
    bool get(uint64_t key) {
        const auto found = memo.find(key);
        if (found == memo.end()) {
            return fail("the pickle refers to a value it never stored");
        }
        return push(found->second);
    }
    bool addItems(size_t count) {
        items += count;
        return items <= kMaxItems || fail("the pickle's containers are too large");
    }
    bool append(const PickleValuePtr& list, std::vector<PickleValuePtr> values) {
        if (!list || list->kind != PickleValue::Kind::List) {
            return fail("the pickle appends to something that is not a list");
        }
        for (const auto& v : values) {
            if (v.get() == list.get() || !v) {
                return fail("the pickle puts a list into itself");
            }
        }
        if (!addItems(values.size())) {
            return false;
        }
        list->items.insert(list->items.end(), values.begin(), values.end());
        return true;
    }
    bool setItems(const PickleValuePtr& dict, std::vector<PickleValuePtr> values) {
        if (!dict || dict->kind != PickleValue::Kind::Dict || values.size() % 2) {
            return fail("the pickle sets items on something that is not a dict");
        }
        if (!addItems(values.size())) {
            return false;
        }
        for (size_t i = 0; i < values.size(); i += 2) {
            if (!values[i] || !values[i + 1] || values[i + 1].get() == dict.get()) {
                return fail("the pickle puts a dict into itself");
            }
            // A repeated key replaces the value, as in Python.
            bool replaced = false;
            for (size_t k = 0; k < dict->items.size(); k += 2) {
                const auto& key = *dict->items[k];
                if (key.kind == values[i]->kind && key.text == values[i]->text &&
                    key.integer == values[i]->integer &&
                    (key.kind == PickleValue::Kind::String || key.kind == PickleValue::Kind::Int)) {
                    dict->items[k + 1] = values[i + 1];
                    replaced = true;
                    break;
                }
            }
            if (!replaced) {
                dict->items.push_back(values[i]);
                dict->items.push_back(values[i + 1]);
            }
        }
        return true;
    }

    static bool isGlobal(const PickleValuePtr& v, const char* name = nullptr) {
        return v && v->kind == PickleValue::Kind::Object && v->text.rfind("global:", 0) == 0 &&
               (!name || v->text.compare(7, std::string::npos, name) == 0);
    }
    static bool asInts(const PickleValuePtr& v, std::vector<int64_t>& out) {
        if (!v || (v->kind != PickleValue::Kind::Tuple && v->kind != PickleValue::Kind::List)) {
            return false;
        }
        out.clear();
        for (const auto& item : v->items) {
            if (!item || item->kind != PickleValue::Kind::Int) {
                return false;
            }
            out.push_back(item->integer);
        }
        return true;
    }

    // What REDUCE (callable, args) builds.
    bool reduce(const PickleValuePtr& callable, const PickleValuePtr& args) {
        if (!isGlobal(callable)) {
            return fail("the pickle calls something that is not a class or function");
        }
        const std::string name = callable->text.substr(7);
        if (!args || args->kind != PickleValue::Kind::Tuple) {
            return fail("the pickle calls " + name + " without an argument tuple");
        }
        const auto& a = args->items;
        if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
            auto t = make(PickleValue::Kind::Tensor);
            if (a.size() < 4 || !a[0] || a[0]->kind != PickleValue::Kind::Object ||
                a[0]->text != "storage" || !a[1] || a[1]->kind != PickleValue::Kind::Int ||
                !asInts(a[2], t->tensor.shape) || !asInts(a[3], t->tensor.stride) ||
                t->tensor.shape.size() != t->tensor.stride.size()) {
                return fail("a tensor in the pickle is malformed");
            }
            t->storage = a[0]->storage;
            t->tensor.storageKey = t->storage.key;
            t->tensor.offset = a[1]->integer;
            t->requiresGrad =
                a.size() > 4 && a[4] && a[4]->kind == PickleValue::Kind::Bool && a[4]->boolean;
            return push(t);
        }
        if (name == "torch._utils._rebuild_parameter" ||
            name == "torch._utils._rebuild_parameter_with_state") {
            if (a.size() < 2 || !a[0] || a[0]->kind != PickleValue::Kind::Tensor) {
                return fail("a parameter in the pickle is malformed");
            }
            auto t = std::make_shared<PickleValue>(*a[0]);
            t->requiresGrad = a[1] && a[1]->kind == PickleValue::Kind::Bool && a[1]->boolean;
            return push(t);
        }
        if (name == "collections.OrderedDict" || name == "builtins.dict") {
            auto dict = make(PickleValue::Kind::Dict);
            if (!a.empty() && a[0] && a[0]->kind == PickleValue::Kind::List) {
                std::vector<PickleValuePtr> pairs;
                for (const auto& pair : a[0]->items) {
                    if (!pair || pair->items.size() != 2) {
                        return fail("an OrderedDict in the pickle is malformed");
                    }
                    pairs.push_back(pair->items[0]);
                    pairs.push_back(pair->items[1]);
                }
                if (!setItems(dict, std::move(pairs))) {
                    return false;
                }
            }
            return push(dict);
        }
        if (name == "torch.Size" || name == "builtins.tuple") {
            auto tuple = make(PickleValue::Kind::Tuple);
            if (!a.empty() && a[0] &&
                (a[0]->kind == PickleValue::Kind::Tuple || a[0]->kind == PickleValue::Kind::List)) {
                tuple->items = a[0]->items;
            }
            return push(tuple);
        }
        if (name == "builtins.list") {
            auto list = make(PickleValue::Kind::List);
            if (!a.empty() && a[0] &&
                (a[0]->kind == PickleValue::Kind::Tuple || a[0]->kind == PickleValue::Kind::List)) {
                list->items = a[0]->items;
            }
            return push(list);
        }
        // Anything else is a Python object only Python can rebuild: keep its class name.
        return push(makeText(PickleValue::Kind::Object, name));
    }

    bool run() {
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
                if (stack.size() != 1 || !marks.empty() || !stack.back() ||
                    isGlobal(stack.back())) {
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
                    return fail("an integer in the pickle is malformed");
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
                    return fail("a float in the pickle is malformed");
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
                if (!line(module) || !line(name) ||
                    !push(makeText(PickleValue::Kind::Object, "global:" + module + "." + name))) {
                    return false;
                }
                break;
            }
            case 0x93: { // STACK_GLOBAL
                auto name = pop();
                auto module = name ? pop() : nullptr;
                if (!module || module->kind != PickleValue::Kind::String ||
                    name->kind != PickleValue::Kind::String) {
                    return fail("the pickle names a class without strings");
                }
                if (!push(makeText(PickleValue::Kind::Object,
                                   "global:" + module->text + "." + name->text))) {
                    return false;
                }
                break;
            }
            case 'Q': { // BINPERSID: ('storage', torch.FloatStorage, key, location, numel)
                auto id = pop();
                if (!id || id->kind != PickleValue::Kind::Tuple || id->items.size() < 5 ||
                    !id->items[0] || id->items[0]->text != "storage" || !isGlobal(id->items[1]) ||
                    !id->items[2] || id->items[2]->kind != PickleValue::Kind::String ||
                    !id->items[3] || id->items[3]->kind != PickleValue::Kind::String ||
                    !id->items[4] || id->items[4]->kind != PickleValue::Kind::Int) {
                    return fail("the pickle refers to something that is not a tensor storage");
                }
                auto storage = makeText(PickleValue::Kind::Object, "storage");
                storage->storage.type = id->items[1]->text.substr(7);
                storage->storage.key = id->items[2]->text;
                storage->storage.location = id->items[3]->text;
                storage->storage.numel = id->items[4]->integer;
                storageDtype(storage->storage.type, storage->storage.dtype,
                             storage->storage.elementSize);
                if (!push(storage)) {
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
                if (!cls || !isGlobal(cls)) {
                    return fail("the pickle makes an object of something that is not a class");
                }
                if (!push(makeText(PickleValue::Kind::Object, cls->text.substr(7)))) {
                    return false;
                }
                break;
            }
            case 'b': { // BUILD: sets an object's state; plain values keep theirs
                auto state = pop();
                if (!state || stack.empty()) {
                    return fail("the pickle builds without an object");
                }
                break;
            }
            default: {
                static const char hex[] = "0123456789abcdef";
                std::string code = "0x";
                code += hex[op >> 4];
                code += hex[op & 15];
                --pos;
                return fail("the pickle uses opcode " + code +
                            ", which torch.save does not write (sets, extensions or out-of-band "
                            "buffers)");
            }
            }
            if (!error.empty()) {
                return false;
            }
        }
    }
};

std::string plural(size_t count, const std::string& word) {
    return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

std::string kindWord(const PickleValue& v) {
    switch (v.kind) {
    case PickleValue::Kind::None:
        return "None";
    case PickleValue::Kind::Bool:
        return "bool";
    case PickleValue::Kind::Int:
        return "int";
    case PickleValue::Kind::Float:
        return "float";
    case PickleValue::Kind::String:
        return "str";
    case PickleValue::Kind::Bytes:
        return "bytes";
    case PickleValue::Kind::List:
        return "list";
    case PickleValue::Kind::Tuple:
        return "tuple";
    case PickleValue::Kind::Dict:
        return "dict";
    case PickleValue::Kind::Tensor:
        return "tensor";
    case PickleValue::Kind::Object:
        return v.text + " object";
    }
    return "value";
}

std::string describe(const PickleValue& v, int depth) {
    if (depth > kMaxDepth) {
        return "...";
    }
    switch (v.kind) {
    case PickleValue::Kind::Tensor: {
        std::string shape;
        for (size_t i = 0; i < v.tensor.shape.size(); ++i) {
            shape += (i ? ", " : "") + std::to_string(v.tensor.shape[i]);
        }
        return "tensor " + (v.storage.dtype.empty() ? v.storage.type : v.storage.dtype) + "[" +
               shape + "]";
    }
    case PickleValue::Kind::Int:
        return "int " + std::to_string(v.integer);
    case PickleValue::Kind::Bool:
        return v.boolean ? "True" : "False";
    case PickleValue::Kind::String:
        return "str '" + (v.text.size() > 40 ? v.text.substr(0, 37) + "..." : v.text) + "'";
    case PickleValue::Kind::List:
    case PickleValue::Kind::Tuple: {
        const std::string head = kindWord(v) + " of ";
        if (v.items.empty()) {
            return "empty " + kindWord(v);
        }
        // "list of 2 tensors" when the elements are alike, else each one.
        bool alike = true;
        for (const auto& item : v.items) {
            alike = alike && item && item->kind == v.items.front()->kind &&
                    item->kind != PickleValue::Kind::Object;
        }
        if (alike && v.items.front()->kind == PickleValue::Kind::Tensor) {
            return head + plural(v.items.size(), "tensor");
        }
        if (alike && v.items.size() > 3) {
            return head + std::to_string(v.items.size()) + " " + kindWord(*v.items.front()) +
                   " values";
        }
        std::string text = head + "(";
        for (size_t i = 0; i < v.items.size() && i < 4; ++i) {
            text += (i ? ", " : "") + describe(*v.items[i], depth + 1);
        }
        return text + (v.items.size() > 4 ? ", ...)" : ")");
    }
    case PickleValue::Kind::Dict: {
        const size_t count = v.items.size() / 2;
        if (count == 0) {
            return "empty dict";
        }
        std::string text = "dict of " + std::to_string(count) + " (";
        for (size_t i = 0; i < v.items.size() && i < 8; i += 2) {
            const auto& key = *v.items[i];
            text += (i ? ", " : "") +
                    (key.kind == PickleValue::Kind::String ? "'" + key.text + "'"
                                                           : describe(key, depth + 1)) +
                    ": " + describe(*v.items[i + 1], depth + 1);
        }
        return text + (count > 4 ? ", ...)" : ")");
    }
    default:
        return kindWord(v);
    }
}

} // namespace

PickleReadResult readPickle(std::string_view data) {
    Reader reader;
    reader.data = data;
    PickleReadResult result;
    if (reader.run()) {
        result.value = reader.stack.back();
    } else {
        result.error = reader.error;
    }
    return result;
}

std::string describePickleValue(const PickleValue& value) {
    return describe(value, 0);
}

} // namespace scriptscope
