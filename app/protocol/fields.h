// How a message body is written and read: one table per struct names each of its fields once, and
// that one table both writes the struct to CBOR and reads it back.
//
// A table is a function `void describe(Fields& f, T& value)` that calls `f("key", value.member)`
// for each member, in a fixed order. The domain files (model_cbor.cpp, run_cbor.cpp,
// numerics_cbor.cpp) hold the tables; this header holds what they share:
// - how each member type is written and read (strings, numbers, enums, vectors, maps, optionals
//   and the structs that have tables of their own);
// - which structs travel as positional arrays, not maps: those that come by the thousand;
// - the range of each enum, so that a number outside it reads as a stated fallback.
//
// Reading never fails: a key that is absent, or a value of the wrong type, leaves the member as
// the struct's default has it; an integer too large for its member is clamped to it (a negative
// one is 0 for an unsigned member); structs nested deeper than kMaxDepth are left empty, so a
// hostile message cannot recurse without bound.
#pragma once

#include <error.h>
#include <file_formats.h>
#include <model_info.h>
#include <numerics_types.h>
#include <run_types.h>

#include <QByteArray>
#include <QCborArray>
#include <QCborMap>
#include <QCborValue>
#include <QString>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace scriptscope::protocol::fields {

class Fields;

// ---- The tables, one per struct (defined in the domain files) ----
void describe(Fields& f, ArchiveRecord& value);
void describe(Fields& f, OperatorUse& value);
void describe(Fields& f, StorageInfo& value);
void describe(Fields& f, ProbeResult& value);
void describe(Fields& f, TensorInfo& value);
void describe(Fields& f, AttributeInfo& value);
void describe(Fields& f, MemoryBlock& value);
void describe(Fields& f, MemoryPlan& value);
void describe(Fields& f, MethodInfo& value);
void describe(Fields& f, ModuleInfo& value);
void describe(Fields& f, ModelInfo& value);
void describe(Fields& f, DeviceInfo& value);
void describe(Fields& f, FileFormatPatterns& value);
void describe(Fields& f, Error& value);
void describe(Fields& f, ImagePreprocess& value);
void describe(Fields& f, InputSpec& value);
void describe(Fields& f, RunRequest& value);
void describe(Fields& f, TimingStats& value);
void describe(Fields& f, OutputValue& value);
void describe(Fields& f, ModuleTime& value);
void describe(Fields& f, OperatorTime& value);
void describe(Fields& f, RunProfile& value);
void describe(Fields& f, RunResult& value);
void describe(Fields& f, SourceInfo& value);
void describe(Fields& f, FrameResult& value);
void describe(Fields& f, DiffLine& value);
void describe(Fields& f, ActivationRequest& value);
void describe(Fields& f, ActivationRecord& value);
void describe(Fields& f, MemoryTimeline& value);
void describe(Fields& f, OutputComparison& value);
void describe(Fields& f, OutputsOnly& value);
void describe(Fields& f, ActivationReport& value);
void describe(Fields& f, OptimizeRequest& value);
void describe(Fields& f, KindCount& value);
void describe(Fields& f, OptimizeResult::ModuleDelta& value);
void describe(Fields& f, OptimizeResult& value);
void describe(Fields& f, ModuleChange& value);
void describe(Fields& f, TensorChange& value);
void describe(Fields& f, AttributeChange& value);
void describe(Fields& f, TextChange& value);
void describe(Fields& f, ExtraFileChange& value);
void describe(Fields& f, ArchiveDiff& value);

// ---- Structs written as an array of their fields, in their table's order ----
template <class T>
inline constexpr bool kRow = false;
template <>
inline constexpr bool kRow<ArchiveRecord> = true;
template <>
inline constexpr bool kRow<OperatorUse> = true;
template <>
inline constexpr bool kRow<StorageInfo> = true;
template <>
inline constexpr bool kRow<AttributeInfo> = true;
template <>
inline constexpr bool kRow<MemoryBlock> = true;
template <>
inline constexpr bool kRow<MethodInfo> = true;
template <>
inline constexpr bool kRow<TimingStats> = true;
template <>
inline constexpr bool kRow<ModuleTime> = true;
template <>
inline constexpr bool kRow<OperatorTime> = true;
template <>
inline constexpr bool kRow<DiffLine> = true;
template <>
inline constexpr bool kRow<KindCount> = true;
template <>
inline constexpr bool kRow<OptimizeResult::ModuleDelta> = true;
template <>
inline constexpr bool kRow<ModuleChange> = true;
template <>
inline constexpr bool kRow<TensorChange> = true;
template <>
inline constexpr bool kRow<AttributeChange> = true;
template <>
inline constexpr bool kRow<TextChange> = true;
template <>
inline constexpr bool kRow<ExtraFileChange> = true;

// ---- Enums: the last value, and what a number outside 0..last reads as ----
template <class E>
struct EnumRange;
template <>
struct EnumRange<FileKind> {
    static constexpr FileKind last = FileKind::Unknown, fallback = FileKind::Unknown;
};
template <>
struct EnumRange<ErrorKind> {
    static constexpr ErrorKind last = ErrorKind::OperatorLibrary, fallback = ErrorKind::Internal;
};
template <>
struct EnumRange<InputSpec::Kind> {
    static constexpr InputSpec::Kind last = InputSpec::Kind::Sample,
                                     fallback = InputSpec::Kind::None;
};
template <>
struct EnumRange<OutputValue::Kind> {
    static constexpr OutputValue::Kind last = OutputValue::Kind::Other,
                                       fallback = OutputValue::Kind::Other;
};
template <>
struct EnumRange<SourceSpec::Kind> {
    static constexpr SourceSpec::Kind last = SourceSpec::Kind::Camera,
                                      fallback = SourceSpec::Kind::Video;
};
template <>
struct EnumRange<DiffLine::Op> {
    static constexpr DiffLine::Op last = DiffLine::Op::Skipped, fallback = DiffLine::Op::Same;
};
template <>
struct EnumRange<ModuleChange::Kind> {
    static constexpr ModuleChange::Kind last = ModuleChange::Kind::Retyped,
                                        fallback = ModuleChange::Kind::Added;
};
template <>
struct EnumRange<TensorChange::Kind> {
    static constexpr TensorChange::Kind last = TensorChange::Kind::Dtype,
                                        fallback = TensorChange::Kind::Values;
};

constexpr int kMaxDepth = 64;

template <class T>
QCborValue write(const T& value);
template <class T>
void read(const QCborValue& cbor, T& value, int depth);

namespace detail {
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsPair : std::false_type {};
template <class A, class B>
struct IsPair<std::pair<A, B>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
} // namespace detail

// The visitor a table is called with: it writes the fields into a map or a row, or reads them
// out of one.
class Fields {
public:
    enum class Mode { WriteMap, WriteRow, ReadMap, ReadRow };

    static Fields writer(bool row) { return Fields(row ? Mode::WriteRow : Mode::WriteMap, 0); }
    static Fields reader(const QCborValue& cbor, bool row, int depth) {
        Fields f(row ? Mode::ReadRow : Mode::ReadMap, depth);
        if (row) {
            f.row_ = cbor.toArray();
        } else {
            f.map_ = cbor.toMap();
        }
        return f;
    }

    bool reading() const { return mode_ == Mode::ReadMap || mode_ == Mode::ReadRow; }
    // Whether the fields that follow are written: a map leaves them out when `condition` is
    // false, and a reader reads whatever is there.
    bool include(bool condition) const { return mode_ == Mode::WriteMap ? condition : true; }

    template <class T>
    Fields& operator()(const char* key, T& member) {
        if (reading()) {
            const QCborValue cbor = fetch(key);
            if constexpr (detail::IsOptional<T>::value) {
                if (!cbor.isUndefined() && !cbor.isNull()) {
                    member.emplace();
                    read(cbor, *member, depth_);
                }
            } else if (!cbor.isUndefined()) {
                read(cbor, member, depth_);
            }
        } else if constexpr (detail::IsOptional<T>::value) {
            if (member) {
                store(key, write(*member));
            } else if (mode_ == Mode::WriteRow) {
                store(key, QCborValue(nullptr));
            }
        } else {
            store(key, write(member));
        }
        return *this;
    }

    // Several members as one array under one key: [a, b, c].
    template <class... T>
    Fields& row(const char* key, T&... members) {
        if (reading()) {
            const QCborArray array = fetch(key).toArray();
            qsizetype i = 0;
            (readAt(array, i++, members), ...);
        } else {
            store(key, QCborArray{write(members)...});
        }
        return *this;
    }

    // A member that is there only when `present` says so; reading sets `present` from the key.
    template <class T>
    Fields& present(const char* key, bool& present, T& member) {
        if (reading()) {
            const QCborValue cbor = fetch(key);
            present = !cbor.isUndefined() && !cbor.isNull();
            if (present) {
                read(cbor, member, depth_);
            }
        } else if (present) {
            store(key, write(member));
        } else if (mode_ == Mode::WriteRow) {
            store(key, QCborValue(nullptr));
        }
        return *this;
    }

    QCborValue result() const {
        return mode_ == Mode::WriteRow ? QCborValue(row_) : QCborValue(map_);
    }

private:
    Fields(Mode mode, int depth)
        : mode_(mode)
        , depth_(depth) {}

    void store(const char* key, const QCborValue& value) {
        if (mode_ == Mode::WriteRow) {
            row_.append(value);
        } else {
            map_.insert(QLatin1String(key), value);
        }
    }
    QCborValue fetch(const char* key) {
        if (mode_ == Mode::ReadRow) {
            const qsizetype i = next_++;
            return i < row_.size() ? row_.at(i) : QCborValue();
        }
        return map_.value(QLatin1String(key));
    }
    template <class T>
    void readAt(const QCborArray& array, qsizetype i, T& member) {
        if (i < array.size()) {
            read(array.at(i), member, depth_);
        }
    }

    Mode mode_;
    int depth_ = 0;
    QCborMap map_;
    QCborArray row_;
    qsizetype next_ = 0;
};

template <class T>
QCborValue write(const T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
        return QString::fromStdString(value);
    } else if constexpr (std::is_same_v<T, bool>) {
        return value;
    } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
        return static_cast<qint64>(value);
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<double>(value);
    } else if constexpr (std::is_same_v<T, std::vector<float>>) {
        // Raw float32 values in this machine's order: both ends are this machine.
        return QByteArray(reinterpret_cast<const char*>(value.data()),
                          static_cast<qsizetype>(value.size() * sizeof(float)));
    } else if constexpr (std::is_same_v<T, std::vector<unsigned char>>) {
        // Pixels as they are: one copy, into the message.
        return QByteArray::fromRawData(reinterpret_cast<const char*>(value.data()),
                                       static_cast<qsizetype>(value.size()));
    } else if constexpr (detail::IsVector<T>::value) {
        QCborArray array;
        for (const auto& element : value) {
            array.append(write(element));
        }
        return array;
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
        QCborMap map;
        for (const auto& [key, element] : value) {
            map.insert(QString::fromStdString(key), QString::fromStdString(element));
        }
        return map;
    } else if constexpr (std::is_same_v<T, std::map<Capability, std::string>>) {
        QCborMap map;
        for (const auto& [capability, why] : value) {
            map.insert(QLatin1String(toString(capability)), QString::fromStdString(why));
        }
        return map;
    } else if constexpr (detail::IsPair<T>::value) {
        return QCborArray{write(value.first), write(value.second)};
    } else {
        Fields f = Fields::writer(kRow<T>);
        describe(f, const_cast<T&>(value)); // a writer only reads the members
        return f.result();
    }
}

template <class T>
void read(const QCborValue& cbor, T& value, int depth) {
    if constexpr (std::is_same_v<T, std::string>) {
        if (cbor.isString()) {
            value = cbor.toString().toStdString();
        }
    } else if constexpr (std::is_same_v<T, bool>) {
        if (cbor.isBool()) {
            value = cbor.toBool();
        }
    } else if constexpr (std::is_enum_v<T>) {
        const qint64 n = cbor.toInteger(-1);
        value = n >= 0 && n <= static_cast<qint64>(EnumRange<T>::last) ? static_cast<T>(n)
                                                                       : EnumRange<T>::fallback;
    } else if constexpr (std::is_integral_v<T>) {
        if (cbor.isInteger()) {
            const qint64 n = cbor.toInteger();
            if constexpr (std::is_unsigned_v<T>) {
                value = n < 0 ? T(0)
                              : static_cast<T>(std::min<uint64_t>(static_cast<uint64_t>(n),
                                                                  std::numeric_limits<T>::max()));
            } else {
                value = static_cast<T>(std::clamp<qint64>(n, std::numeric_limits<T>::min(),
                                                          std::numeric_limits<T>::max()));
            }
        }
    } else if constexpr (std::is_floating_point_v<T>) {
        if (cbor.isDouble() || cbor.isInteger()) {
            value = static_cast<T>(cbor.toDouble());
        }
    } else if constexpr (std::is_same_v<T, std::vector<float>>) {
        // A length that is not a whole number of floats is refused.
        const QByteArray bytes = cbor.toByteArray();
        value.clear();
        if (bytes.size() % static_cast<qsizetype>(sizeof(float)) == 0) {
            value.resize(static_cast<size_t>(bytes.size()) / sizeof(float));
            std::memcpy(value.data(), bytes.constData(), static_cast<size_t>(bytes.size()));
        }
    } else if constexpr (std::is_same_v<T, std::vector<unsigned char>>) {
        const QByteArray bytes = cbor.toByteArray();
        value.assign(bytes.constBegin(), bytes.constEnd());
    } else if constexpr (detail::IsVector<T>::value) {
        value.clear();
        for (const auto& element : cbor.toArray()) {
            read(element, value.emplace_back(), depth);
        }
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
        const QCborMap map = cbor.toMap();
        for (auto it = map.begin(); it != map.end(); ++it) {
            value[it.key().toString().toStdString()] = it.value().toString().toStdString();
        }
    } else if constexpr (std::is_same_v<T, std::map<Capability, std::string>>) {
        const QCborMap map = cbor.toMap();
        for (auto it = map.begin(); it != map.end(); ++it) {
            // A name this side does not know (a newer worker's) is nothing it could offer anyway.
            const Capability capability = capabilityFromString(it.key().toString().toStdString());
            if (capability != Capability::Count) {
                value[capability] = it.value().toString().toStdString();
            }
        }
    } else if constexpr (detail::IsPair<T>::value) {
        const QCborArray array = cbor.toArray();
        read(array.at(0), value.first, depth);
        read(array.at(1), value.second, depth);
    } else {
        if (depth >= kMaxDepth || !(kRow<T> ? cbor.isArray() : cbor.isMap())) {
            return;
        }
        Fields f = Fields::reader(cbor, kRow<T>, depth + 1);
        describe(f, value);
    }
}

// A struct with a table as a message body, and back.
template <class T>
QCborMap toMap(const T& value) {
    return write(value).toMap();
}
template <class T>
T fromMap(const QCborMap& map) {
    T value;
    read(QCborValue(map), value, 0);
    return value;
}

} // namespace scriptscope::protocol::fields
