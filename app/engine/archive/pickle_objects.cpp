// What torch's callables and persistent ids build in a pickle (pickle_machine.h): tensors,
// parameters, storages, OrderedDicts, and Objects that keep their arguments and state. Nothing
// is imported or called.
#include "pickle_machine.h"

#include "pickle_scan.h"

namespace scriptscope::pickle_machine {
namespace {

// ('storage', <storage class>, key, location, numel), read as far as it goes: a storage
// whose key is known, else an opaque value.
PickleValuePtr lenientStorage(const PickleValuePtr& id) {
    const auto& a = id->items;
    if (id->kind != PickleValue::Kind::Tuple || a.size() < 5 || !a[0] ||
        a[0]->kind != PickleValue::Kind::String || a[0]->text != "storage" || !a[2] ||
        a[2]->kind != PickleValue::Kind::String) {
        return opaque();
    }
    auto storage = makeText(PickleValue::Kind::Object, "storage");
    storage->storage.key = a[2]->text;
    if (isGlobal(a[1])) {
        storage->storage.type = a[1]->text.substr(7);
        storageDtype(storage->storage.type, storage->storage.dtype, storage->storage.elementSize);
    }
    if (a[3] && a[3]->kind == PickleValue::Kind::String) {
        storage->storage.location = a[3]->text;
    }
    if (a[4] && a[4]->kind == PickleValue::Kind::Int) {
        storage->storage.numel = a[4]->integer;
    }
    return storage;
}

} // namespace

// What REDUCE (callable, args) builds.
bool Machine::reduce(const PickleValuePtr& callable, const PickleValuePtr& args) {
    if (!isGlobal(callable)) {
        return lenient ? push(opaqueWith(args))
                       : fail("the pickle calls something that is not a class or function");
    }
    const std::string name = callable->text.substr(7);
    if (!args || args->kind != PickleValue::Kind::Tuple) {
        return lenient ? push(opaqueWith(args))
                       : fail("the pickle calls " + name + " without an argument tuple");
    }
    const auto& a = args->items;
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
        auto t = make(PickleValue::Kind::Tensor);
        if (a.size() < 4 || !a[0] || a[0]->kind != PickleValue::Kind::Object ||
            a[0]->text != "storage" || !a[1] || a[1]->kind != PickleValue::Kind::Int ||
            !asInts(a[2], t->tensor.shape) || !asInts(a[3], t->tensor.stride) ||
            t->tensor.shape.size() != t->tensor.stride.size()) {
            return lenient ? push(opaqueWith(args)) : fail("a tensor in the pickle is malformed");
        }
        t->storage = a[0]->storage;
        t->storageSerial = a[0]->serial;
        t->tensor.storageKey = t->storage.key;
        t->tensor.offset = a[1]->integer;
        t->requiresGrad =
            a.size() > 4 && a[4] && a[4]->kind == PickleValue::Kind::Bool && a[4]->boolean;
        return push(t);
    }
    if (name == "torch._utils._rebuild_parameter" ||
        name == "torch._utils._rebuild_parameter_with_state") {
        if (a.size() < 2 || !a[0] || a[0]->kind != PickleValue::Kind::Tensor) {
            return refuse("a parameter in the pickle is malformed");
        }
        // The parameter is its tensor, made again: the same tensor to a scan, not another.
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
                    return refuse("an OrderedDict in the pickle is malformed");
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
    // Anything else is a Python object only Python can rebuild: keep its class name, and its
    // arguments (a quantized tensor's storage is among them).
    auto object = makeText(PickleValue::Kind::Object, name);
    object->items.push_back(args);
    return push(object);
}

// ('storage', <storage class>, key, location, numel): strict, each field as torch.save writes
// it; lenient, as far as it goes.
bool Machine::persistentId(const PickleValuePtr& id) {
    if (lenient) {
        return push(lenientStorage(id));
    }
    const auto& a = id->items;
    if (id->kind != PickleValue::Kind::Tuple || a.size() < 5 || !a[0] || a[0]->text != "storage" ||
        !isGlobal(a[1]) || !a[2] || a[2]->kind != PickleValue::Kind::String || !a[3] ||
        a[3]->kind != PickleValue::Kind::String || !a[4] || a[4]->kind != PickleValue::Kind::Int) {
        return fail("the pickle refers to something that is not a tensor storage");
    }
    auto storage = makeText(PickleValue::Kind::Object, "storage");
    storage->storage.type = a[1]->text.substr(7);
    storage->storage.key = a[2]->text;
    storage->storage.location = a[3]->text;
    storage->storage.numel = a[4]->integer;
    storageDtype(storage->storage.type, storage->storage.dtype, storage->storage.elementSize);
    return push(storage);
}

// cls.__new__(cls, *args): an Object of that class that keeps its arguments.
bool Machine::newObject(const PickleValuePtr& cls, const PickleValuePtr& args) {
    if (!isGlobal(cls)) {
        return refuse("the pickle makes an object of something that is not a class");
    }
    auto object = makeText(PickleValue::Kind::Object, cls->text.substr(7));
    object->items.push_back(args);
    return push(object);
}

// An object keeps its state (a module's parameters are in it); plain values keep theirs.
bool Machine::build(const PickleValuePtr& state) {
    const auto& target = stack.back();
    if (target && target->kind == PickleValue::Kind::Object && target != state &&
        !isGlobal(target)) {
        if (!addItems(1)) {
            return false;
        }
        target->items.push_back(state);
    }
    return true;
}

} // namespace scriptscope::pickle_machine
