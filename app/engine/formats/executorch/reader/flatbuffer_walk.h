// Walking a FlatBuffer by hand against a schema's field numbers, every step bounded: what the
// .pte reader (pte_reader.cpp) and the ETDump reader (etdump_reader.cpp) share. Offsets that leave
// the buffer, loop back onto a table that holds them, or claim more items than the bytes can
// hold are refused (a Refusal, caught once by each reader), never followed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scriptscope::flatbuffer {

// What stops the reading: thrown inside the walk, caught once by the reader.
struct Refusal {
    std::string message;
};

[[noreturn]] inline void refuse(std::string message) {
    throw Refusal{std::move(message)};
}

inline std::string at(uint64_t position) {
    return " at byte " + std::to_string(position);
}

// The bytes of one FlatBuffer and what has been read of them: each table, vector element and
// string counts against a budget that a buffer of this size can honestly hold (objects shared by
// many parents would otherwise multiply the work without bound).
class Buffer {
public:
    explicit Buffer(std::string_view bytes, const char* whole = "the program")
        : bytes_(bytes)
        , whole_(whole)
        , budget_(4 * bytes.size() + 1024) {}

    // What the bytes are, for messages: "the program", "the ETDump".
    const std::string& whole() const { return whole_; }

    uint64_t size() const { return bytes_.size(); }

    template <typename T>
    T read(uint64_t position, const char* what) const {
        if (position > bytes_.size() || bytes_.size() - position < sizeof(T)) {
            refuse(std::string(what) + at(position) + " is past the end of " + whole_ + " (" +
                   std::to_string(bytes_.size()) + " bytes)");
        }
        T value;
        std::memcpy(&value, bytes_.data() + position, sizeof(T));
        return value;
    }

    void spend(uint64_t items, uint64_t position) {
        if (items > budget_) {
            refuse(whole_ + " refers to more objects than its " + std::to_string(bytes_.size()) +
                   " bytes can hold (tables shared or overlapping)" + at(position));
        }
        budget_ -= items;
    }

    std::string_view bytes() const { return bytes_; }

private:
    std::string_view bytes_;
    std::string whole_;
    uint64_t budget_;
};

// A table: its position, its vtable, and the tables that led to it (to find a loop).
class Table {
public:
    Table(Buffer& buffer, uint64_t position, std::vector<uint64_t> path, const char* what)
        : buffer_(&buffer)
        , position_(position)
        , path_(std::move(path))
        , what_(what) {
        buffer.spend(1, position);
        const auto soffset = buffer.read<int32_t>(position, what);
        const int64_t vtable = static_cast<int64_t>(position) - soffset;
        if (vtable < 0 || static_cast<uint64_t>(vtable) >= buffer.size()) {
            refuse(std::string("the vtable of ") + what + at(position) + " (at " +
                   std::to_string(vtable) + ") is outside " + buffer.whole());
        }
        vtable_ = static_cast<uint64_t>(vtable);
        vtableSize_ = buffer.read<uint16_t>(vtable_, "a vtable");
        tableSize_ = buffer.read<uint16_t>(vtable_ + 2, "a vtable");
        if (vtableSize_ < 4 || vtableSize_ % 2 != 0 || vtable_ + vtableSize_ > buffer.size()) {
            refuse(std::string("the vtable of ") + what + at(position) + " has a size of " +
                   std::to_string(vtableSize_) + " bytes");
        }
        if (tableSize_ < 4 || position + tableSize_ > buffer.size()) {
            refuse(std::string(what) + at(position) + " has a size of " +
                   std::to_string(tableSize_) + " bytes, past the end of " + buffer.whole());
        }
        path_.push_back(position);
    }

    uint64_t position() const { return position_; }

    // Where field `id` is, 0 when absent (not written: its default).
    uint64_t field(int id, uint64_t width) const {
        const uint64_t entry = 4 + 2 * static_cast<uint64_t>(id);
        if (entry + 2 > vtableSize_) {
            return 0;
        }
        const uint16_t offset = buffer_->read<uint16_t>(vtable_ + entry, "a vtable");
        if (offset == 0) {
            return 0;
        }
        if (offset < 4 || offset + width > tableSize_) {
            refuse("field " + std::to_string(id) + " of " + what_ + at(position_) +
                   " lies outside its table");
        }
        return position_ + offset;
    }

    template <typename T>
    T scalar(int id, T fallback = T{}) const {
        const uint64_t position = field(id, sizeof(T));
        return position ? buffer_->read<T>(position, what_) : fallback;
    }

    // The position an offset field leads to, 0 when absent.
    uint64_t target(int id, const char* what) const {
        const uint64_t position = field(id, 4);
        return position ? follow(position, what) : 0;
    }

    std::optional<Table> table(int id, const char* what) const {
        const uint64_t position = target(id, what);
        if (!position) {
            return std::nullopt;
        }
        return Table(*buffer_, position, path_, what);
    }

    std::string string(int id, const char* what) const {
        const uint64_t position = target(id, what);
        return position ? readString(position, what) : std::string();
    }

    // A vector of scalars (each element `T`).
    template <typename T>
    std::vector<T> scalars(int id, const char* what) const {
        std::vector<T> items;
        const uint64_t position = target(id, what);
        if (!position) {
            return items;
        }
        const uint64_t count = length(position, sizeof(T), what);
        items.resize(count);
        if (count) {
            std::memcpy(items.data(), buffer_->bytes().data() + position + 4, count * sizeof(T));
        }
        return items;
    }

    // A vector's length and where its bytes start, without reading them (a blob's size).
    uint64_t byteCount(int id, const char* what) const {
        const uint64_t position = target(id, what);
        return position ? length(position, 1, what) : 0;
    }

    std::string_view bytesOf(int id, const char* what, uint64_t most) const {
        const uint64_t position = target(id, what);
        if (!position) {
            return {};
        }
        const uint64_t count = length(position, 1, what);
        return buffer_->bytes().substr(position + 4, std::min(count, most));
    }

    // A vector of tables, each read by `each`.
    template <typename F>
    void tables(int id, const char* what, F each) const {
        const uint64_t position = target(id, what);
        if (!position) {
            return;
        }
        const uint64_t count = length(position, 4, what);
        for (uint64_t i = 0; i < count; ++i) {
            const uint64_t element = position + 4 + 4 * i;
            each(Table(*buffer_, follow(element, what), path_, what));
        }
    }

    // A vector of strings.
    std::vector<std::string> strings(int id, const char* what) const {
        std::vector<std::string> items;
        const uint64_t position = target(id, what);
        if (!position) {
            return items;
        }
        const uint64_t count = length(position, 4, what);
        for (uint64_t i = 0; i < count; ++i) {
            items.push_back(readString(follow(position + 4 + 4 * i, what), what));
        }
        return items;
    }

private:
    // Where the offset stored at `position` leads. FlatBuffers' offsets are unsigned and point
    // forward: one of 0 points at itself, and one that wraps around 32 bits (as a reader adding
    // 32-bit offsets would) back onto a table on the way here is a nesting loop.
    uint64_t follow(uint64_t position, const char* what) const {
        const uint32_t offset = buffer_->read<uint32_t>(position, what);
        if (offset == 0) {
            refuse(std::string("a nesting loop: the offset to ") + what + at(position) +
                   " points at itself");
        }
        const uint64_t target = position + offset;
        const uint64_t wrapped = target & 0xffffffffull;
        for (const uint64_t ancestor : path_) {
            if (wrapped == ancestor || target == ancestor) {
                refuse(std::string("a nesting loop: the offset to ") + what + at(position) +
                       " leads back to the table at byte " + std::to_string(ancestor) +
                       " that holds it");
            }
        }
        if (target >= buffer_->size()) {
            refuse(std::string("the offset to ") + what + at(position) + " points to byte " +
                   std::to_string(target) + ", outside " + buffer_->whole() + " (" +
                   std::to_string(buffer_->size()) + " bytes)");
        }
        return target;
    }

    uint64_t length(uint64_t position, uint64_t width, const char* what) const {
        const uint64_t count = buffer_->read<uint32_t>(position, what);
        const uint64_t room = (buffer_->size() - position - 4) / width; // the read checked 4
        if (count > room) {
            refuse(std::string("the vector of ") + what + at(position) + " claims " +
                   std::to_string(count) + " items, more than the " + std::to_string(room) + " " +
                   buffer_->whole() + " has room for");
        }
        buffer_->spend(count, position);
        return count;
    }

    std::string readString(uint64_t position, const char* what) const {
        const uint64_t count = length(position, 1, what);
        return std::string(buffer_->bytes().substr(position + 4, count));
    }

    Buffer* buffer_;
    uint64_t position_;
    uint64_t vtable_ = 0;
    uint16_t vtableSize_ = 0;
    uint16_t tableSize_ = 0;
    std::vector<uint64_t> path_;
    const char* what_;
};

} // namespace scriptscope::flatbuffer
