#include "zip_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <zlib.h>

namespace scriptscope {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr size_t kEndOfDirectorySize = 22;
constexpr size_t kMaxComment = 0xFFFF;
constexpr uint64_t kMaxRecords = 1u << 20; // far more than any model has

uint16_t u16(const unsigned char* p) {
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t u32(const unsigned char* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t u64(const unsigned char* p) {
    return static_cast<uint64_t>(u32(p)) | (static_cast<uint64_t>(u32(p + 4)) << 32);
}

} // namespace

ZipReader::ZipReader(const std::string& path)
    : file_(path, std::ios::binary) {
    if (!file_) {
        error_ = "cannot open the file";
        return;
    }
    file_.seekg(0, std::ios::end);
    const auto end = file_.tellg();
    if (end < 0) {
        error_ = "cannot read the file's size";
        return;
    }
    fileSize_ = static_cast<uint64_t>(end);
    if (!parseDirectory()) {
        records_.clear();
        if (error_.empty()) {
            error_ = "damaged zip directory";
        }
    }
}

bool ZipReader::readAt(uint64_t offset, void* buffer, size_t size) const {
    if (offset > fileSize_ || size > fileSize_ - offset) {
        return false;
    }
    file_.clear();
    file_.seekg(static_cast<std::streamoff>(offset));
    file_.read(static_cast<char*>(buffer), static_cast<std::streamsize>(size));
    return static_cast<size_t>(file_.gcount()) == size;
}

bool ZipReader::parseDirectory() {
    unsigned char head[4] = {};
    const bool startsLikeZip = readAt(0, head, 4) && u32(head) == kLocalHeader;

    // The end-of-directory record sits in the last 22 + up to 65535 (comment) bytes.
    const uint64_t tail = std::min<uint64_t>(fileSize_, kEndOfDirectorySize + kMaxComment);
    std::vector<unsigned char> buffer(static_cast<size_t>(tail));
    if (tail < kEndOfDirectorySize || !readAt(fileSize_ - tail, buffer.data(), buffer.size())) {
        truncated_ = startsLikeZip;
        error_ = startsLikeZip ? "the zip is truncated: its directory is missing" : "not a zip";
        return false;
    }
    size_t eocd = std::string::npos;
    for (size_t i = buffer.size() - kEndOfDirectorySize + 1; i-- > 0;) {
        if (u32(&buffer[i]) == kEndOfDirectory) {
            eocd = i;
            break;
        }
    }
    if (eocd == std::string::npos) {
        truncated_ = startsLikeZip;
        error_ = startsLikeZip ? "the zip is truncated: its directory is missing" : "not a zip";
        return false;
    }
    const unsigned char* e = &buffer[eocd];
    uint64_t count = u16(e + 10);
    uint64_t directorySize = u32(e + 12);
    uint64_t directoryOffset = u32(e + 16);
    const uint64_t eocdOffset = fileSize_ - tail + eocd;

    if (count == 0xFFFF || directorySize == 0xFFFFFFFF || directoryOffset == 0xFFFFFFFF) {
        unsigned char locator[20];
        if (eocdOffset < 20 || !readAt(eocdOffset - 20, locator, 20) ||
            u32(locator) != kZip64Locator) {
            error_ = "damaged zip64 directory locator";
            return false;
        }
        unsigned char record[56];
        if (!readAt(u64(locator + 8), record, 56) || u32(record) != kZip64EndOfDirectory) {
            truncated_ = true;
            error_ = "damaged zip64 end of directory";
            return false;
        }
        count = u64(record + 32);
        directorySize = u64(record + 40);
        directoryOffset = u64(record + 48);
    }
    if (count > kMaxRecords) {
        error_ = "the zip claims " + std::to_string(count) + " records";
        return false;
    }
    if (directoryOffset > fileSize_ || directorySize > fileSize_ - directoryOffset) {
        truncated_ = true;
        error_ = "the zip directory lies outside the file (truncated?)";
        return false;
    }
    std::vector<unsigned char> directory(static_cast<size_t>(directorySize));
    if (!readAt(directoryOffset, directory.data(), directory.size())) {
        truncated_ = true;
        error_ = "cannot read the zip directory";
        return false;
    }

    size_t pos = 0;
    records_.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
        if (directory.size() - pos < 46 || u32(&directory[pos]) != kCentralHeader) {
            error_ = "damaged zip directory entry " + std::to_string(i);
            return false;
        }
        const unsigned char* c = &directory[pos];
        const uint16_t method = u16(c + 10);
        ArchiveRecord record;
        record.crc32 = u32(c + 16);
        record.compressedSize = u32(c + 20);
        record.size = u32(c + 24);
        const size_t nameLength = u16(c + 28);
        const size_t extraLength = u16(c + 30);
        const size_t commentLength = u16(c + 32);
        record.offset = u32(c + 42);
        record.stored = method == 0;
        record.method = method;
        if (directory.size() - pos - 46 < nameLength + extraLength + commentLength) {
            error_ = "damaged zip directory entry " + std::to_string(i);
            return false;
        }
        record.name.assign(reinterpret_cast<const char*>(c + 46), nameLength);
        // Zip64 extended information: 64-bit values for the fields that hold 0xFFFFFFFF.
        const unsigned char* extra = c + 46 + nameLength;
        for (size_t x = 0; x + 4 <= extraLength;) {
            const uint16_t id = u16(extra + x);
            const size_t length = u16(extra + x + 2);
            if (x + 4 + length > extraLength) {
                break;
            }
            if (id == 0x0001) {
                const unsigned char* field = extra + x + 4;
                size_t left = length;
                auto take = [&](uint64_t& value) {
                    if (value == 0xFFFFFFFF && left >= 8) {
                        value = u64(field);
                        field += 8;
                        left -= 8;
                    }
                };
                take(record.size);
                take(record.compressedSize);
                take(record.offset);
            }
            x += 4 + length;
        }
        records_.push_back(std::move(record));
        pos += 46 + nameLength + extraLength + commentLength;
    }
    return true;
}

const ArchiveRecord* ZipReader::find(const std::string& name) const {
    for (const auto& record : records_) {
        if (record.name == name) {
            return &record;
        }
    }
    return nullptr;
}

std::optional<std::string> ZipReader::read(const ArchiveRecord& record, uint64_t maxBytes) const {
    // The declared size bounds the work: a record that inflates past it (a zip bomb) is refused.
    if (record.size > maxBytes || (record.stored && record.size != record.compressedSize)) {
        return std::nullopt;
    }
    unsigned char local[30];
    if (!readAt(record.offset, local, 30) || u32(local) != kLocalHeader) {
        return std::nullopt;
    }
    const uint64_t dataOffset = record.offset + 30 + u16(local + 26) + u16(local + 28);
    // Nothing is allocated for bytes the file does not hold (found by fuzz_archive: a directory
    // entry claiming gigabytes of compressed data), nor for more than deflate can take to hold
    // the declared size (it expands incompressible data by well under 1%).
    if (dataOffset > fileSize_ || record.compressedSize > fileSize_ - dataOffset ||
        (!record.stored && record.compressedSize > record.size + record.size / 100 + 1024)) {
        return std::nullopt;
    }
    std::string packed(static_cast<size_t>(record.compressedSize), '\0');
    if (!readAt(dataOffset, packed.data(), packed.size())) {
        return std::nullopt;
    }
    if (record.stored) {
        return packed;
    }
    if (record.method != 8) { // only deflate, which is what zip tools and PyTorch use
        return std::nullopt;
    }
    std::string data(static_cast<size_t>(record.size), '\0');
    z_stream stream{};
    if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
        return std::nullopt;
    }
    stream.next_in = reinterpret_cast<Bytef*>(packed.data());
    stream.avail_in = static_cast<uInt>(packed.size());
    stream.next_out = reinterpret_cast<Bytef*>(data.data());
    stream.avail_out = static_cast<uInt>(data.size());
    const int status = inflate(&stream, Z_FINISH);
    const bool complete = status == Z_STREAM_END && stream.total_out == record.size;
    inflateEnd(&stream);
    if (!complete) {
        return std::nullopt;
    }
    return data;
}

std::optional<bool> ZipReader::matchesCrc(const ArchiveRecord& record, uint64_t maxBytes) const {
    const auto bytes = read(record, maxBytes);
    if (!bytes) {
        return std::nullopt;
    }
    const uLong crc = ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes->data()),
                              static_cast<uInt>(bytes->size()));
    return static_cast<uint32_t>(crc) == record.crc32;
}

} // namespace scriptscope
