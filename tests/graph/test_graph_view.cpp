// The diagram's expansion without LibTorch: what a collapsed group hides, how edges into it merge
// and vanish inside it, blocks counted at their owner's depth, and the DOT written for it.
#include <graph_model.h>

#include <QTest>

#include <algorithm>

using namespace scriptscope;

namespace {

// root (g0) holds n0 and the If n3, whose block g3 holds n4; module a (g1) holds n1 and a.b (g2)
// holds n2.
GraphModel sample() {
    GraphModel m;
    m.method = "forward";
    m.inputs = {{"x", "Tensor"}};
    m.outputs = {{"y", "Tensor"}};
    auto addGroup = [&](int parent, GraphGroup::Kind kind, const std::string& module, int depth) {
        GraphGroup g;
        g.id = static_cast<int>(m.groups.size());
        g.parent = parent;
        g.kind = kind;
        g.module = module;
        g.label = module.empty() ? "(root)" : module.substr(module.rfind('.') + 1);
        g.type = kind == GraphGroup::Kind::Block ? "prim::If" : "M";
        g.depth = depth;
        m.groups.push_back(g);
    };
    addGroup(-1, GraphGroup::Kind::Module, "", 0);
    addGroup(0, GraphGroup::Kind::Module, "a", 1);
    addGroup(1, GraphGroup::Kind::Module, "a.b", 2);
    addGroup(0, GraphGroup::Kind::Block, "", 0);
    m.groups[3].owner = 3;
    auto node = [&](const std::string& kind, const std::string& module, int group) {
        GraphNode n;
        n.id = static_cast<int>(m.nodes.size());
        n.kind = kind;
        n.module = module;
        n.group = group;
        m.nodes.push_back(n);
    };
    node("aten::relu", "", 0);
    node("aten::mul", "a", 1);
    node("aten::add", "a.b", 2);
    node("prim::If", "", 0);
    node("aten::neg", "", 3);
    auto edge = [&](int from, int to, const std::string& value) {
        GraphEdge e;
        e.from = from;
        e.to = to;
        e.value = value;
        e.type = "Tensor";
        if (from < 0) {
            e.fromInput = 0;
        }
        if (to < 0) {
            e.toOutput = 0;
        }
        m.edges.push_back(e);
    };
    edge(-1, 0, "x");
    edge(0, 1, "r");
    edge(0, 2, "r"); // the same value into a and a.b: one edge into a's box
    edge(1, 2, "m"); // inside a's box: gone when it is collapsed
    edge(2, 3, "s");
    edge(4, 3, "n");
    edge(3, -1, "y");
    return m;
}

QStringList describe(const GraphModel& m, const VisibleGraph& v) {
    QStringList items;
    for (const VisibleItem& item : v.items) {
        items << (item.isGroup
                      ? QStringLiteral("[%1]").arg(
                            QString::fromStdString(m.groups[static_cast<size_t>(item.id)].module))
                      : QString::fromStdString(m.nodes[static_cast<size_t>(item.id)].kind));
    }
    return items;
}

QStringList edges(const GraphModel& m, const VisibleGraph& v) {
    const QStringList items = describe(m, v);
    QStringList out;
    for (const VisibleEdge& e : v.edges) {
        out << (e.from >= 0 ? items[e.from] : QStringLiteral("in")) + QStringLiteral("->") +
                   (e.to >= 0 ? items[e.to] : QStringLiteral("out"));
    }
    return out;
}

} // namespace

class TestGraphView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void rootOnly() {
        const GraphModel m = sample();
        const VisibleGraph v = visibleGraph(m, 0);
        // The block is at its owner's depth: open with the root.
        QCOMPARE(describe(m, v),
                 (QStringList{QStringLiteral("aten::relu"), QStringLiteral("[a]"),
                              QStringLiteral("prim::If"), QStringLiteral("aten::neg")}));
        QCOMPARE(
            edges(m, v),
            (QStringList{QStringLiteral("in->aten::relu"), QStringLiteral("aten::relu->[a]"),
                         QStringLiteral("[a]->prim::If"), QStringLiteral("aten::neg->prim::If"),
                         QStringLiteral("prim::If->out")}));
        QCOMPARE(v.openGroups, (std::vector<int>{0, 3}));
    }

    void oneLevel() {
        const GraphModel m = sample();
        const VisibleGraph v = visibleGraph(m, 1);
        QCOMPARE(describe(m, v),
                 (QStringList{QStringLiteral("aten::relu"), QStringLiteral("aten::mul"),
                              QStringLiteral("[a.b]"), QStringLiteral("prim::If"),
                              QStringLiteral("aten::neg")}));
        QVERIFY(edges(m, v).contains(QStringLiteral("aten::mul->[a.b]")));
        QVERIFY(edges(m, v).contains(QStringLiteral("aten::relu->[a.b]")));
        QCOMPARE(v.openGroups, (std::vector<int>{0, 1, 3}));
    }

    void everything() {
        const GraphModel m = sample();
        const VisibleGraph v = visibleGraph(m, -1);
        QCOMPARE(v.items.size(), m.nodes.size());
        QVERIFY(std::none_of(v.items.begin(), v.items.end(), [](auto& i) { return i.isGroup; }));
        QCOMPARE(v.edges.size(), m.edges.size());
        // A chosen set: only a.b closed while a is open.
        const VisibleGraph chosen =
            visibleGraph(m, [](const GraphGroup& g) { return g.module != "a.b"; });
        QCOMPARE(describe(m, chosen), describe(m, visibleGraph(m, 1)));
    }

    void dot() {
        const GraphModel m = sample();
        const std::string text = toDot(m, visibleGraph(m, 1));
        QVERIFY(text.rfind("digraph \"forward\" {", 0) == 0);
        QCOMPARE(std::count(text.begin(), text.end(), '{'),
                 std::count(text.begin(), text.end(), '}'));
        QVERIFY(text.find("subgraph cluster_1 {") != std::string::npos); // a, open
        QVERIFY(text.find("subgraph cluster_2 {") == std::string::npos); // a.b, a box
        QVERIFY(text.find("subgraph cluster_3 {") != std::string::npos); // the If's block
        QVERIFY(text.find("in0 -> i0") != std::string::npos);
        QVERIFY(text.find("-> out") != std::string::npos);
    }
};

QTEST_MAIN(TestGraphView)
#include "test_graph_view.moc"
