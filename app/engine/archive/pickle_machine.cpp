// The pickle interpreter's machine (pickle_machine.h): stack, marks, memo, containers, bounds.
#include "pickle_machine.h"

#include <algorithm>

namespace scriptscope::pickle_machine {

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

// What the lenient policy makes of what it does not understand.
PickleValuePtr opaque() {
    return makeText(PickleValue::Kind::Object, "<opaque>");
}

// ... keeping what it was given, for a scan to find the storages in it.
PickleValuePtr opaqueWith(const PickleValuePtr& given) {
    auto v = opaque();
    if (given) {
        v->items.push_back(given);
    }
    return v;
}

bool isGlobal(const PickleValuePtr& v, const char* name) {
    return v && v->kind == PickleValue::Kind::Object && v->text.rfind("global:", 0) == 0 &&
           (!name || v->text.compare(7, std::string::npos, name) == 0);
}
bool asInts(const PickleValuePtr& v, std::vector<int64_t>& out) {
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

void Machine::addGlobal(const std::string& name) {
    if (std::find(globals.begin(), globals.end(), name) == globals.end()) {
        globals.push_back(name);
    }
}
// Strict: the error. Lenient: an opaque value in place of what could not be made.
bool Machine::refuse(const std::string& why) {
    return lenient ? push(opaque()) : fail(why);
}

bool Machine::fail(const std::string& why) {
    error = why + " at byte " + std::to_string(pos);
    return false;
}
bool Machine::need(size_t bytes) {
    return data.size() - pos >= bytes || fail("the pickle ends early");
}
bool Machine::push(PickleValuePtr v) {
    if (stack.size() >= kMaxStack) {
        return fail("the pickle's stack is too deep");
    }
    if (v && v->serial == 0) {
        v->serial = ++serial; // the order values are made in (a scan lists them so)
    }
    stack.push_back(std::move(v));
    return true;
}
PickleValuePtr Machine::pop() {
    if (stack.size() <= (marks.empty() ? 0 : marks.back())) {
        fail("the pickle pops an empty stack");
        return nullptr;
    }
    auto v = std::move(stack.back());
    stack.pop_back();
    return v;
}
// The values above the last mark, which is removed.
bool Machine::popMark(std::vector<PickleValuePtr>& out) {
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
bool Machine::line(std::string& out) {
    const size_t end = data.find('\n', pos);
    if (end == std::string_view::npos) {
        return fail("the pickle ends inside a text argument");
    }
    out.assign(data.substr(pos, end - pos));
    pos = end + 1;
    return true;
}
bool Machine::counted(size_t lengthBytes, std::string& out) {
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
bool Machine::fixed(size_t bytes, uint64_t& value) {
    if (!need(bytes)) {
        return false;
    }
    value = littleEndian(data, pos, bytes);
    pos += bytes;
    return true;
}
bool Machine::memoize(uint64_t key) {
    if (stack.empty()) {
        return fail("the pickle memoizes an empty stack");
    }
    if (memo.size() >= kMaxMemo && !memo.count(key)) {
        return fail("the pickle's memo is too large");
    }
    memo[key] = stack.back();
    return true;
}
bool Machine::get(uint64_t key) {
    const auto found = memo.find(key);
    if (found == memo.end()) {
        return refuse("the pickle refers to a value it never stored");
    }
    return push(found->second);
}
bool Machine::addItems(size_t count) {
    items += count;
    return items <= kMaxItems || fail("the pickle's containers are too large");
}
bool Machine::append(const PickleValuePtr& list, std::vector<PickleValuePtr> values) {
    if (!list || list->kind != PickleValue::Kind::List) {
        // Lenient: appends to a set or an opaque object go nowhere.
        return lenient || fail("the pickle appends to something that is not a list");
    }
    for (const auto& v : values) {
        if (v.get() == list.get() || !v) {
            return lenient || fail("the pickle puts a list into itself");
        }
    }
    if (!addItems(values.size())) {
        return false;
    }
    list->items.insert(list->items.end(), values.begin(), values.end());
    return true;
}
bool Machine::setItems(const PickleValuePtr& dict, std::vector<PickleValuePtr> values) {
    if (!dict || dict->kind != PickleValue::Kind::Dict || values.size() % 2) {
        return lenient || fail("the pickle sets items on something that is not a dict");
    }
    if (!addItems(values.size())) {
        return false;
    }
    for (size_t i = 0; i < values.size(); i += 2) {
        if (!values[i] || !values[i + 1] || values[i + 1].get() == dict.get()) {
            return lenient || fail("the pickle puts a dict into itself");
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

} // namespace scriptscope::pickle_machine
