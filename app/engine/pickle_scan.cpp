#include "pickle_scan.h"

#include <algorithm>
#include <cstdint>

namespace scriptscope {
namespace {

uint64_t littleEndian(std::string_view data, size_t pos, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) {
        value |= static_cast<uint64_t>(static_cast<unsigned char>(data[pos + i])) << (8 * i);
    }
    return value;
}

} // namespace

PickleScan scanPickle(std::string_view data) {
    PickleScan scan;
    std::vector<std::string> recentStrings; // for STACK_GLOBAL, which takes two pushed strings
    auto addGlobal = [&](std::string name) {
        if (std::find(scan.globals.begin(), scan.globals.end(), name) == scan.globals.end()) {
            scan.globals.push_back(std::move(name));
        }
    };
    size_t pos = 0;
    auto fail = [&](const char* why) {
        scan.error = std::string(why) + " at byte " + std::to_string(pos);
        return scan;
    };
    // Reads a newline-terminated argument.
    auto line = [&](std::string& out) {
        const size_t end = data.find('\n', pos);
        if (end == std::string_view::npos) {
            return false;
        }
        out.assign(data.substr(pos, end - pos));
        pos = end + 1;
        return true;
    };
    // Skips (or reads) a length-prefixed argument.
    auto counted = [&](size_t lengthBytes, std::string* out) {
        if (data.size() - pos < lengthBytes) {
            return false;
        }
        const uint64_t length = littleEndian(data, pos, lengthBytes);
        pos += lengthBytes;
        if (data.size() - pos < length) {
            return false;
        }
        if (out) {
            out->assign(data.substr(pos, static_cast<size_t>(length)));
        }
        pos += static_cast<size_t>(length);
        return true;
    };
    auto fixed = [&](size_t bytes) {
        if (data.size() - pos < bytes) {
            return false;
        }
        pos += bytes;
        return true;
    };

    while (pos < data.size()) {
        const auto op = static_cast<unsigned char>(data[pos++]);
        std::string text;
        bool ok = true;
        switch (op) {
        case '.': // STOP
            scan.complete = true;
            return scan;
        case '(':
        case '0':
        case '1':
        case '2':
        case 'N':
        case 'Q':
        case 'R':
        case 'a':
        case 'b':
        case 'd':
        case '}':
        case 'e':
        case 'l':
        case ']':
        case 'o':
        case 's':
        case 't':
        case ')':
        case 'u':
        case 0x81:
        case 0x85:
        case 0x86:
        case 0x87:
        case 0x88:
        case 0x89:
        case 0x8f:
        case 0x90:
        case 0x91:
        case 0x92:
        case 0x94:
        case 0x97:
        case 0x98:
            break;
        case 'F':
        case 'I':
        case 'L':
        case 'P':
        case 'S':
        case 'V':
        case 'g':
        case 'p':
            ok = line(text);
            break;
        case 'c':
        case 'i': { // GLOBAL, INST: "module\nname\n"
            std::string module;
            ok = line(module) && line(text);
            if (ok) {
                addGlobal(module + "." + text);
            }
            break;
        }
        case 0x93: // STACK_GLOBAL
            if (recentStrings.size() >= 2) {
                addGlobal(recentStrings[recentStrings.size() - 2] + "." + recentStrings.back());
            }
            break;
        case 'J':
        case 'j':
        case 'r':
            ok = fixed(4);
            break;
        case 'K':
        case 'h':
        case 'q':
        case 0x80:
        case 0x82:
            ok = fixed(1);
            break;
        case 'M':
        case 0x83:
            ok = fixed(2);
            break;
        case 0x84:
            ok = fixed(4);
            break;
        case 'G':
        case 0x95:
            ok = fixed(8);
            break;
        case 'T':
        case 'B':
            ok = counted(4, nullptr);
            break;
        case 'X':
            ok = counted(4, &text);
            recentStrings.push_back(text);
            break;
        case 'U':
        case 'C':
        case 0x8a:
            ok = counted(1, nullptr);
            break;
        case 0x8c: // SHORT_BINUNICODE
            ok = counted(1, &text);
            recentStrings.push_back(text);
            break;
        case 0x8b:
            ok = counted(4, nullptr);
            break;
        case 0x8d:
            ok = counted(8, &text);
            recentStrings.push_back(text);
            break;
        case 0x8e:
        case 0x96:
            ok = counted(8, nullptr);
            break;
        default:
            --pos;
            return fail("unknown pickle opcode");
        }
        if (!ok) {
            return fail("truncated pickle argument");
        }
        if (recentStrings.size() > 2) {
            recentStrings.erase(recentStrings.begin());
        }
    }
    return fail("pickle ends without STOP");
}

} // namespace scriptscope
