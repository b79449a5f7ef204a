// The ETDump reader (etdump_reader.h): etdump_schema_flatcc.fbs's tables walked by field number.
#include "etdump_reader.h"

#include "flatbuffer_walk.h"

#include <fstream>

namespace scriptscope {

namespace {

using namespace flatbuffer;

EtdumpTensor readTensor(const Table& t) {
    EtdumpTensor tensor;
    tensor.scalarType = t.scalar<int8_t>(0);
    tensor.sizes = t.scalars<int64_t>(1, "a tensor's sizes");
    tensor.strides = t.scalars<int64_t>(2, "a tensor's strides");
    tensor.offset = t.scalar<int64_t>(3);
    return tensor;
}

// Value: val (the kind), then a table per kind; output last.
EtdumpValue readValue(const Table& t) {
    EtdumpValue value;
    const auto kind = t.scalar<int8_t>(0);
    if (kind < 0 || kind > static_cast<int>(EtdumpValue::Kind::String)) {
        refuse("a value of unknown type " + std::to_string(kind) + at(t.position()));
    }
    value.kind = static_cast<EtdumpValue::Kind>(kind);
    switch (value.kind) {
    case EtdumpValue::Kind::Tensor:
        if (const auto tensor = t.table(1, "a tensor")) {
            value.tensors.push_back(readTensor(*tensor));
        }
        break;
    case EtdumpValue::Kind::TensorList:
        if (const auto list = t.table(2, "a tensor list")) {
            list->tables(0, "a tensor",
                         [&](const Table& e) { value.tensors.push_back(readTensor(e)); });
        }
        break;
    case EtdumpValue::Kind::Int:
        if (const auto v = t.table(3, "an int")) {
            value.intValue = v->scalar<int64_t>(0);
        }
        break;
    case EtdumpValue::Kind::Float:
        if (const auto v = t.table(4, "a float")) {
            value.doubleValue = v->scalar<float>(0);
        }
        break;
    case EtdumpValue::Kind::Double:
        if (const auto v = t.table(5, "a double")) {
            value.doubleValue = v->scalar<double>(0);
        }
        break;
    case EtdumpValue::Kind::Bool:
        if (const auto v = t.table(6, "a bool")) {
            value.boolValue = v->scalar<uint8_t>(0) != 0;
        }
        break;
    case EtdumpValue::Kind::String:
    case EtdumpValue::Kind::Null:
        break;
    }
    if (const auto output = t.table(7, "a value's output flag")) {
        value.output = output->scalar<uint8_t>(0) != 0;
    }
    return value;
}

EtdumpRun readRun(const Table& t) {
    EtdumpRun run;
    run.name = t.string(0, "a run's name");
    run.bundledInput = t.scalar<int32_t>(1, -1);
    t.tables(2, "an allocator",
             [&](const Table& a) { run.allocators.push_back(a.string(0, "an allocator's name")); });
    t.tables(3, "an event", [&](const Table& e) {
        if (const auto p = e.table(0, "a profile event")) {
            EtdumpProfileEvent event;
            event.name = p->string(0, "an event's name");
            event.chain = p->scalar<int32_t>(1);
            event.instruction = p->scalar<int32_t>(2, -1);
            event.delegateDebugId = p->scalar<int32_t>(3, -1);
            event.delegateDebugName = p->string(4, "a delegate's debug name");
            event.metadataBytes = p->byteCount(5, "a delegate's metadata");
            event.start = p->scalar<uint64_t>(6);
            event.end = p->scalar<uint64_t>(7);
            run.profile.push_back(std::move(event));
        }
        if (const auto a = e.table(1, "an allocation event")) {
            ++run.allocations;
            run.allocatedBytes += a->scalar<uint64_t>(1);
        }
        if (const auto d = e.table(2, "a debug event")) {
            EtdumpDebugEvent event;
            event.chain = d->scalar<uint64_t>(0);
            event.instruction = d->scalar<int32_t>(1, -1);
            if (const auto value = d->table(2, "a debug value")) {
                event.value = readValue(*value);
            }
            event.delegateDebugId = d->scalar<int32_t>(3, -1);
            event.delegateDebugName = d->string(4, "a delegate's debug name");
            event.name = d->string(5, "a debug event's name");
            run.debug.push_back(std::move(event));
        }
    });
    return run;
}

} // namespace

Expected<Etdump> readEtdump(std::string_view bytes) {
    Etdump dump;
    // ExecuTorch's ETDumpGen writes a size prefix before the FlatBuffer; without one the
    // identifier sits at byte 4.
    if (bytes.size() >= 12 && bytes.compare(8, 4, "ED00") == 0) {
        uint32_t size = 0;
        std::memcpy(&size, bytes.data(), 4);
        if (static_cast<uint64_t>(size) + 4 > bytes.size()) {
            return Error{ErrorKind::Format,
                         "the ETDump is cut off: its size prefix says " + std::to_string(size) +
                             " bytes follow, the file has " + std::to_string(bytes.size() - 4)};
        }
        dump.sizePrefixed = true;
        bytes = bytes.substr(4, size);
    } else if (bytes.size() < 8 || bytes.compare(4, 4, "ED00") != 0) {
        return Error{ErrorKind::Format,
                     bytes.size() < 8 ? "the file is cut off: " + std::to_string(bytes.size()) +
                                            " bytes, too short for an ETDump"
                                      : "no ETDump file identifier ('ED00' at byte 4 or 8): not "
                                        "an ETDump of ExecuTorch's event tracer"};
    }
    try {
        Buffer buffer(bytes, "the ETDump");
        const auto root = buffer.read<uint32_t>(0, "the root offset");
        if (root < 8 || root >= buffer.size()) {
            refuse("its root table (at " + std::to_string(root) + ") is outside the ETDump (" +
                   std::to_string(buffer.size()) + " bytes)");
        }
        const Table top(buffer, root, {}, "the ETDump");
        dump.version = top.scalar<uint32_t>(0);
        top.tables(1, "a run", [&](const Table& r) { dump.runs.push_back(readRun(r)); });
    } catch (const Refusal& refusal) {
        return Error{ErrorKind::Format, "a damaged ETDump: " + refusal.message};
    }
    return dump;
}

Expected<Etdump> readEtdumpFile(const std::string& path, const EtdumpLimits& limits) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{ErrorKind::File, "'" + path + "' cannot be read"};
    }
    in.seekg(0, std::ios::end);
    const auto end = in.tellg();
    if (end < 0) {
        return Error{ErrorKind::File, "'" + path + "' cannot be read"};
    }
    if (static_cast<uint64_t>(end) > limits.maxBytes) {
        return Error{ErrorKind::Format,
                     "'" + path + "' has " + std::to_string(end) + " bytes, more than the " +
                         std::to_string(limits.maxBytes) + " this reader reads of an ETDump"};
    }
    std::string bytes(static_cast<size_t>(end), '\0');
    in.seekg(0);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (in.gcount() != end) {
        return Error{ErrorKind::File, "'" + path + "' could not be read to its end"};
    }
    auto dump = readEtdump(bytes);
    if (!dump) {
        Error error = dump.error();
        error.message = "'" + path + "': " + error.message;
        return error;
    }
    return dump;
}

} // namespace scriptscope
