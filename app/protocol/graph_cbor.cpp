// The diagram's GraphModel on the wire (toCbor, graphModelFromCbor): one CBOR stream and a string
// table instead of a tree of QCborValues, read back bounded and with every reference checked.
#include "protocol.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <unordered_map>

#include <QCborStreamReader>
#include <QCborValue>
#include <QString>

namespace scriptscope::protocol {

namespace {

// A diagram travels as one byte string holding a CBOR stream, written element by element (CborOut)
// and read the same way (QCborStreamReader) instead of as a tree of QCborValues: a 48-layer
// encoder's 56,000 nodes made 1.4 million values whose tree took longer to build, encode and decode
// than the graph took to make. Its strings are written once, in a table, and referred to by index:
// the nodes name a few hundred operators, schemas, modules and source lines thousands of times each
// (12.8 MB of text before, 4.4 MB as a table). "strings" is the stream [text...], "graph" the
// stream
//   [inputs: [i...], outputs: [i...],
//    groups: [[parent, kind, module, type, label, parameters, owner, depth, repeats, sameAs]...],
//    nodes: [[kind, module, group, schema, source, sourceLine, irLine, [attributes: i...],
//             [inputs: i...], [outputs: i...], sourceText]...],
//    edges: [[from, fromInput, to, toOutput, value, type, intoBlock]...]]
// where ports and attributes are flat [name, value, ...] pairs of indices.
class StringTable {
public:
    qint64 id(const std::string& s) {
        const auto [it, added] = ids_.try_emplace(s, static_cast<qint64>(strings_.size()));
        if (added) {
            strings_.push_back(&it->first);
        }
        return it->second;
    }
    const std::vector<const std::string*>& strings() const { return strings_; }

private:
    std::unordered_map<std::string, qint64> ids_;
    std::vector<const std::string*> strings_;
};

// CBOR written by hand into a QByteArray: QCborStreamWriter goes through a QIODevice for every
// item, a quarter of a second for a transformer's diagram. Only what the graph needs: unsigned
// and negative integers, booleans, text and definite-length arrays (RFC 8949, 3.1: an array's
// count comes first, so nothing closes it).
class CborOut {
public:
    explicit CborOut(QByteArray* bytes)
        : bytes_(*bytes) {}
    void startArray(quint64 count) { head(4, count); }
    void append(qint64 v) { v >= 0 ? head(0, quint64(v)) : head(1, quint64(-1 - v)); }
    void append(bool v) { bytes_.append(char(v ? 0xf5 : 0xf4)); }
    // CBOR text must be UTF-8, or the reader stops there: a constant's bytes need not be, and
    // are written as QString would show them (each bad sequence as U+FFFD).
    void appendTextString(const std::string& s) {
        if (QUtf8StringView(s.data(), qsizetype(s.size())).isValidUtf8()) {
            head(3, quint64(s.size()));
            bytes_.append(s.data(), qsizetype(s.size()));
            return;
        }
        const QByteArray fixed = QString::fromUtf8(s.data(), qsizetype(s.size())).toUtf8();
        head(3, quint64(fixed.size()));
        bytes_.append(fixed);
    }

private:
    void head(int major, quint64 value) {
        const char type = char(major << 5);
        if (value < 24) {
            bytes_.append(char(type | char(value)));
            return;
        }
        int size = value <= 0xff ? 1 : value <= 0xffff ? 2 : value <= 0xffffffffu ? 4 : 8;
        bytes_.append(char(type | char(size == 1 ? 24 : size == 2 ? 25 : size == 4 ? 26 : 27)));
        for (int i = size - 1; i >= 0; --i) {
            bytes_.append(char((value >> (8 * i)) & 0xff));
        }
    }

    QByteArray& bytes_;
};

void writePairs(CborOut& w, StringTable& table, const std::vector<GraphPort>& ports) {
    w.startArray(static_cast<quint64>(ports.size() * 2));
    for (const auto& p : ports) {
        w.append(table.id(p.name));
        w.append(table.id(p.type));
    }
}

void writePairs(CborOut& w, StringTable& table, const std::vector<GraphAttribute>& attributes) {
    w.startArray(static_cast<quint64>(attributes.size() * 2));
    for (const auto& p : attributes) {
        w.append(table.id(p.name));
        w.append(table.id(p.value));
    }
}

// The graph's stream, and its strings' stream (known once the graph is written).
std::pair<QByteArray, QByteArray> encodeGraph(const GraphModel& g) {
    StringTable table;
    QByteArray graph;
    graph.reserve(qsizetype(g.nodes.size()) * 48 + qsizetype(g.edges.size()) * 16);
    {
        CborOut w(&graph);
        w.startArray(5);
        writePairs(w, table, g.inputs);
        writePairs(w, table, g.outputs);
        w.startArray(static_cast<quint64>(g.groups.size()));
        for (const GraphGroup& x : g.groups) {
            w.startArray(10);
            w.append(qint64(x.parent));
            w.append(qint64(static_cast<int>(x.kind)));
            w.append(table.id(x.module));
            w.append(table.id(x.type));
            w.append(table.id(x.label));
            w.append(qint64(x.parameters));
            w.append(qint64(x.owner));
            w.append(qint64(x.depth));
            w.append(qint64(x.repeats));
            w.append(qint64(x.sameAs));
        }
        w.startArray(static_cast<quint64>(g.nodes.size()));
        for (const GraphNode& n : g.nodes) {
            w.startArray(11);
            w.append(table.id(n.kind));
            w.append(table.id(n.module));
            w.append(qint64(n.group));
            w.append(table.id(n.schema));
            w.append(table.id(n.source));
            w.append(qint64(n.sourceLine));
            w.append(qint64(n.irLine));
            writePairs(w, table, n.attributes);
            writePairs(w, table, n.inputs);
            writePairs(w, table, n.outputs);
            w.append(table.id(n.sourceText));
        }
        w.startArray(static_cast<quint64>(g.edges.size()));
        for (const GraphEdge& e : g.edges) {
            w.startArray(7);
            w.append(qint64(e.from));
            w.append(qint64(e.fromInput));
            w.append(qint64(e.to));
            w.append(qint64(e.toOutput));
            w.append(table.id(e.value));
            w.append(table.id(e.type));
            w.append(e.intoBlock);
        }
    }
    QByteArray strings;
    CborOut w(&strings);
    w.startArray(static_cast<quint64>(table.strings().size()));
    for (const std::string* s : table.strings()) {
        w.appendTextString(*s);
    }
    return {std::move(graph), std::move(strings)};
}

// Reads the stream back, bounded by what is there: a malformed or truncated stream stops the
// reading and keeps what was read before; a string index outside the table reads as "".
class GraphReader {
public:
    // `strings`: the table the stream's string indices refer to (none for the table itself).
    explicit GraphReader(const QByteArray& bytes, std::vector<std::string> strings = {})
        : r_(bytes)
        , strings_(std::move(strings)) {}

    bool ok() const { return ok_ && r_.lastError() == QCborError::NoError; }

    // Calls `element` for each element of the array that comes next (it must read exactly one
    // element each time).
    template <typename Element>
    void array(const Element& element) {
        if (!ok() || !r_.isArray() || !r_.enterContainer()) {
            ok_ = false;
            return;
        }
        while (ok() && r_.hasNext()) {
            element();
        }
        if (ok()) {
            r_.leaveContainer();
        }
    }

    qint64 integer() {
        if (!ok() || !r_.isInteger()) {
            ok_ = false;
            return -1;
        }
        const qint64 v = r_.toInteger();
        r_.next();
        return v;
    }

    // The elements of the array being read that this version does not know: skipped.
    void skipRest() {
        while (ok() && r_.hasNext()) {
            r_.next();
        }
    }

    int small() {
        const qint64 v = integer();
        return v < INT32_MIN || v > INT32_MAX ? -1 : static_cast<int>(v);
    }

    bool boolean() {
        if (!ok() || !r_.isBool()) {
            ok_ = false;
            return false;
        }
        const bool v = r_.toBool();
        r_.next();
        return v;
    }

    std::string text() {
        if (!ok() || !r_.isString()) {
            ok_ = false;
            return {};
        }
        QString out;
        auto chunk = r_.readString();
        while (chunk.status == QCborStreamReader::Ok) {
            out += chunk.data;
            chunk = r_.readString();
        }
        if (chunk.status == QCborStreamReader::Error) {
            ok_ = false;
        }
        return out.toStdString();
    }

    const std::string& string() {
        static const std::string none;
        const qint64 i = integer();
        return i >= 0 && i < static_cast<qint64>(strings_.size()) ? strings_[static_cast<size_t>(i)]
                                                                  : none;
    }

    template <typename T>
    std::vector<T> pairs() {
        std::vector<T> out;
        bool name = true;
        std::string first;
        array([&] {
            if (name) {
                first = string();
            } else {
                out.push_back({first, string()});
            }
            name = !name;
        });
        return out;
    }

private:
    mutable QCborStreamReader r_; // lastError() is not const
    std::vector<std::string> strings_;
    bool ok_ = true;
};

void decodeGraph(const QByteArray& graph, const QByteArray& strings, GraphModel& g) {
    std::vector<std::string> table;
    {
        GraphReader in(strings);
        in.array([&] { table.push_back(in.text()); });
    }
    GraphReader in(graph, std::move(table));
    int part = 0;
    in.array([&] {
        switch (part++) {
        case 0:
            g.inputs = in.pairs<GraphPort>();
            break;
        case 1:
            g.outputs = in.pairs<GraphPort>();
            break;
        case 2:
            in.array([&] {
                GraphGroup x;
                x.id = static_cast<int>(g.groups.size());
                in.array([&] {
                    x.parent = in.small();
                    const int kind = in.small();
                    x.kind = kind == 1   ? GraphGroup::Kind::Block
                             : kind == 2 ? GraphGroup::Kind::Function
                                         : GraphGroup::Kind::Module;
                    x.module = in.string();
                    x.type = in.string();
                    x.label = in.string();
                    x.parameters = in.integer();
                    x.owner = in.small();
                    x.depth = in.small();
                    x.repeats = std::max(1, in.small());
                    x.sameAs = in.small();
                    in.skipRest();
                });
                g.groups.push_back(std::move(x));
            });
            break;
        case 3:
            in.array([&] {
                GraphNode n;
                n.id = static_cast<int>(g.nodes.size());
                in.array([&] {
                    n.kind = in.string();
                    n.module = in.string();
                    n.group = in.small();
                    n.schema = in.string();
                    n.source = in.string();
                    n.sourceLine = in.small();
                    n.irLine = in.small();
                    n.attributes = in.pairs<GraphAttribute>();
                    n.inputs = in.pairs<GraphPort>();
                    n.outputs = in.pairs<GraphPort>();
                    n.sourceText = in.string();
                    in.skipRest();
                });
                g.nodes.push_back(std::move(n));
            });
            break;
        case 4:
            in.array([&] {
                GraphEdge e;
                in.array([&] {
                    e.from = in.small();
                    e.fromInput = in.small();
                    e.to = in.small();
                    e.toOutput = in.small();
                    e.value = in.string();
                    e.type = in.string();
                    e.intoBlock = in.boolean();
                    in.skipRest();
                });
                g.edges.push_back(std::move(e));
            });
            break;
        default:
            in.skipRest(); // parts of a later version
            break;
        }
    });
}

} // namespace

QCborMap toCbor(const GraphModel& g) {
    QCborMap m;
    m.insert(QLatin1String("module"), QString::fromStdString(g.modulePath));
    m.insert(QLatin1String("method"), QString::fromStdString(g.method));
    m.insert(QLatin1String("inlined"), g.inlined);
    auto [graph, strings] = encodeGraph(g);
    m.insert(QLatin1String("graph"), graph);
    m.insert(QLatin1String("strings"), strings);
    return m;
}

GraphModel graphModelFromCbor(const QCborMap& m) {
    GraphModel read;
    read.modulePath = m.value(QLatin1String("module")).toString().toStdString();
    read.method = m.value(QLatin1String("method")).toString().toStdString();
    read.inlined = m.value(QLatin1String("inlined")).toBool();
    decodeGraph(m.value(QLatin1String("graph")).toByteArray(),
                m.value(QLatin1String("strings")).toByteArray(), read);
    // What is kept of it: references checked, so that a damaged reply still gives a drawable
    // graph and walking up the groups always ends.
    GraphModel g;
    g.modulePath = std::move(read.modulePath);
    g.method = std::move(read.method);
    g.inlined = read.inlined;
    g.inputs = std::move(read.inputs);
    g.outputs = std::move(read.outputs);
    g.groups = std::move(read.groups);
    const int groupCount = static_cast<int>(g.groups.size());
    g.nodes = std::move(read.nodes);
    for (GraphNode& n : g.nodes) {
        if (n.group < 0 || n.group >= groupCount) {
            n.group = 0;
        }
    }
    const int nodeCount = static_cast<int>(g.nodes.size());
    g.edges.reserve(read.edges.size());
    for (GraphEdge& e : read.edges) {
        const bool fromOk =
            e.from >= 0 ? e.from < nodeCount
                        : e.fromInput >= 0 && e.fromInput < static_cast<int>(g.inputs.size());
        const bool toOk = e.to >= 0
                              ? e.to < nodeCount
                              : e.toOutput >= 0 && e.toOutput < static_cast<int>(g.outputs.size());
        if (fromOk && toOk) {
            g.edges.push_back(std::move(e));
        }
    }
    if (g.groups.empty() && !g.nodes.empty()) {
        g.groups.emplace_back(); // the nodes' root
    }
    // Parents come before their children, as the engine builds them; anything else is dropped to
    // the root so that walking up always ends.
    for (GraphGroup& x : g.groups) {
        if (x.parent >= x.id || (x.id > 0 && x.parent < 0)) {
            x.parent = x.id == 0 ? -1 : 0;
        }
        if (x.id == 0) {
            x.parent = -1;
        }
        if (x.sameAs < 0 || x.sameAs >= static_cast<int>(g.groups.size())) {
            x.sameAs = -1;
        }
        if (x.owner >= nodeCount) {
            x.owner = -1;
        }
    }
    return g;
}

} // namespace scriptscope::protocol
