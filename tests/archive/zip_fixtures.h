// Zips written by the tests: stored records, as torch.export.save writes them, and the records of
// a real archive, to damage one of them.
#pragma once

#include <zip_reader.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace scriptscope::test {

inline void put16(std::string& out, uint32_t v) {
    out += static_cast<char>(v & 0xff);
    out += static_cast<char>((v >> 8) & 0xff);
}

inline void put32(std::string& out, uint32_t v) {
    put16(out, v & 0xffff);
    put16(out, v >> 16);
}

// A zip of stored records, as torch.export.save writes them (CRCs left zero: the reader does not
// check them).
inline std::string storedZip(const std::vector<std::pair<std::string, std::string>>& records) {
    std::string out, directory;
    for (const auto& [name, data] : records) {
        const auto offset = static_cast<uint32_t>(out.size());
        put32(out, 0x04034b50);
        put16(out, 20);
        put16(out, 0);
        put16(out, 0); // stored
        put32(out, 0);
        put32(out, 0);
        put32(out, static_cast<uint32_t>(data.size()));
        put32(out, static_cast<uint32_t>(data.size()));
        put16(out, static_cast<uint32_t>(name.size()));
        put16(out, 0);
        out += name + data;
        put32(directory, 0x02014b50);
        put16(directory, 20);
        put16(directory, 20);
        put16(directory, 0);
        put16(directory, 0);
        put32(directory, 0);
        put32(directory, 0);
        put32(directory, static_cast<uint32_t>(data.size()));
        put32(directory, static_cast<uint32_t>(data.size()));
        put16(directory, static_cast<uint32_t>(name.size()));
        put16(directory, 0);
        put16(directory, 0);
        put16(directory, 0);
        put16(directory, 0);
        put32(directory, 0);
        put32(directory, offset);
        directory += name;
    }
    const auto start = static_cast<uint32_t>(out.size());
    out += directory;
    put32(out, 0x06054b50);
    put16(out, 0);
    put16(out, 0);
    put16(out, static_cast<uint32_t>(records.size()));
    put16(out, static_cast<uint32_t>(records.size()));
    put32(out, static_cast<uint32_t>(directory.size()));
    put32(out, start);
    put16(out, 0);
    return out;
}

// The records of a real archive, to damage one of them.
inline std::vector<std::pair<std::string, std::string>> recordsOf(const std::string& path) {
    const ZipReader zip(path);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& record : zip.records()) {
        out.emplace_back(record.name, zip.read(record, 64u << 20).value_or(""));
    }
    return out;
}

inline std::string& recordNamed(std::vector<std::pair<std::string, std::string>>& records,
                                const std::string& suffix) {
    for (auto& [name, data] : records) {
        if (name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            return data;
        }
    }
    static std::string none;
    return none;
}

} // namespace scriptscope::test
