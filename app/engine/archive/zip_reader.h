// A read-only zip directory reader for probing archives. It trusts nothing in the file: every
// offset and size is checked against the file's length, so damaged or hostile zips give an error,
// never a crash. It reads stored (uncompressed) records, which is how PyTorch writes them.
#pragma once

#include "model_info.h"

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace scriptscope {

class ZipReader {
public:
    // Reads the central directory. On failure, error() says why and records() is empty.
    explicit ZipReader(const std::string& path);

    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    bool truncated() const { return truncated_; }
    const std::vector<ArchiveRecord>& records() const { return records_; }
    const ArchiveRecord* find(const std::string& name) const;

    // The record's bytes, at most maxBytes of them; nullopt if it cannot be read (compressed,
    // outside the file, larger than maxBytes).
    std::optional<std::string> read(const ArchiveRecord& record, uint64_t maxBytes) const;
    // Whether the record's bytes (read as read() does) match the CRC-32 its directory entry
    // gives; nullopt when they cannot be read.
    std::optional<bool> matchesCrc(const ArchiveRecord& record, uint64_t maxBytes) const;

private:
    bool readAt(uint64_t offset, void* buffer, size_t size) const;
    bool parseDirectory();

    mutable std::ifstream file_;
    uint64_t fileSize_ = 0;
    std::vector<ArchiveRecord> records_;
    std::string error_;
    bool truncated_ = false;
};

} // namespace scriptscope
