// The diagram without LibTorch: what a collapsed group hides, how edges into it merge and vanish
// inside it, blocks one deeper than their owner, the DOT written for it; and its layout: scenes
// with ports, Graphviz in its process (a hanging or crashing one falls back to the simple layout
// in time), the cache re-laying only what changed, hubs folded, nesting kept, SVG written.
#include "graph_samples.h"

#include <child_process.h>
#include <graph_layout.h>
#include <graph_model.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

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
    addGroup(0, GraphGroup::Kind::Block, "", 1);
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

bool inside(const LayoutRect& inner, const LayoutRect& outer) {
    return inner.x >= outer.x - 0.5 && inner.y >= outer.y - 0.5 &&
           inner.x + inner.width <= outer.x + outer.width + 0.5 &&
           inner.y + inner.height <= outer.y + outer.height + 0.5;
}

bool overlap(const LayoutRect& a, const LayoutRect& b) {
    return a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 &&
           b.y < a.y + a.height - 0.5;
}

// A chain of n nodes where each also feeds a node further on: a layered layout's test.
GraphModel chain(int n) {
    GraphModel m;
    m.method = "forward";
    m.inputs = {{"x", "Tensor"}};
    m.outputs = {{"y", "Tensor"}};
    GraphGroup root;
    root.label = "(root)";
    m.groups.push_back(root);
    std::mt19937 random(7);
    for (int i = 0; i < n; ++i) {
        GraphNode node;
        node.id = i;
        node.kind = i % 3 ? "aten::relu" : "aten::conv2d";
        m.nodes.push_back(node);
        if (i == 0) {
            m.edges.push_back({-1, 0, 0, -1, "x", "Tensor", false});
        } else {
            m.edges.push_back({i - 1, -1, i, -1, "v" + std::to_string(i - 1), "Tensor", false});
            const int back = static_cast<int>(random() % static_cast<unsigned>(i));
            m.edges.push_back({back, -1, i, -1, "v" + std::to_string(back), "Tensor", false});
        }
    }
    m.edges.push_back({n - 1, -1, -1, 0, "v" + std::to_string(n - 1), "Tensor", false});
    return m;
}

// Every item inside the cluster of the group it is drawn in, no two items of one scene
// overlapping, every edge starting and ending at the rectangles it joins (or ports).
void checkGeometry(const GraphModel& m, const VisibleGraph& v, const DiagramLayout& l) {
    std::map<int, LayoutRect> clusters;
    for (const DiagramCluster& c : l.clusters) {
        clusters[c.group] = c.rect;
    }
    for (const DiagramCluster& c : l.clusters) {
        if (c.group != 0) {
            const int parent = m.groups[static_cast<size_t>(c.group)].parent;
            QVERIFY2(inside(c.rect, clusters.at(parent)), "a group outside its parent");
        }
    }
    std::map<int, std::vector<size_t>> byGroup;
    for (size_t i = 0; i < v.items.size(); ++i) {
        const VisibleItem& item = v.items[i];
        const int group = item.isGroup ? m.groups[static_cast<size_t>(item.id)].parent
                                       : m.nodes[static_cast<size_t>(item.id)].group;
        QVERIFY2(inside(l.items[i], clusters.at(group)), "an item outside its group");
        byGroup[group].push_back(i);
    }
    for (const auto& [group, items] : byGroup) {
        for (size_t a = 0; a < items.size(); ++a) {
            for (size_t b = a + 1; b < items.size(); ++b) {
                QVERIFY2(!overlap(l.items[items[a]], l.items[items[b]]), "two items overlap");
            }
        }
    }
    for (const DiagramEdge& e : l.edges) {
        QVERIFY(e.points.size() >= 4);
        QCOMPARE((e.points.size() - 1) % 3, size_t{0});
    }
}

} // namespace

class TestVisibleGraph : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Three layers of the same type: layers.0 and layers.2 hold the same operators wired alike
    // (each with a nested norm), layers.1 adds its input twice instead of once: two of a kind.
    void repeatedGroupsAreMarked() {
        GraphModel m;
        const auto group = [&](int parent, const std::string& module, const std::string& type) {
            GraphGroup g;
            g.id = static_cast<int>(m.groups.size());
            g.parent = parent;
            g.module = module;
            g.label = module;
            g.type = type;
            g.depth = parent < 0 ? 0 : m.groups[static_cast<size_t>(parent)].depth + 1;
            m.groups.push_back(g);
            return g.id;
        };
        const auto node = [&](const std::string& kind, int g, std::vector<int> from) {
            GraphNode n;
            n.id = static_cast<int>(m.nodes.size());
            n.kind = kind;
            n.group = g;
            n.outputs = {{"v" + std::to_string(n.id), "Tensor"}};
            m.nodes.push_back(n);
            for (const int f : from) {
                GraphEdge e;
                e.from = f;
                e.fromInput = f < 0 ? 0 : -1;
                e.to = n.id;
                m.edges.push_back(e);
            }
            return n.id;
        };
        m.inputs = {{"x", "Tensor"}};
        group(-1, "", "Encoder");
        int last = -1;
        for (int layer = 0; layer < 3; ++layer) {
            const std::string name = "layers." + std::to_string(layer);
            const int g = group(0, name, "Layer");
            const int norm = group(g, name + ".norm", "LayerNorm");
            const int linear = node("aten::linear", g, {last});
            const int relu = node("aten::relu", g, {linear});
            const int add =
                node("aten::add", g,
                     layer == 1 ? std::vector<int>{relu, relu} : std::vector<int>{relu, last});
            last = node("aten::layer_norm", norm, {add});
        }
        markRepeatedGroups(m);
        const auto find = [&](const std::string& module) {
            return *std::find_if(m.groups.begin(), m.groups.end(),
                                 [&](const GraphGroup& g) { return g.module == module; });
        };
        QCOMPARE(find("layers.0").repeats, 2);
        QCOMPARE(find("layers.0").sameAs, -1);
        QCOMPARE(find("layers.2").repeats, 2);
        QCOMPARE(find("layers.2").sameAs, find("layers.0").id);
        QCOMPARE(find("layers.1").repeats, 1);
        QCOMPARE(find("layers.1").sameAs, -1);
        // The nested norms are alike in all three.
        QCOMPARE(find("layers.1.norm").repeats, 3);
        QCOMPARE(find("layers.1.norm").sameAs, find("layers.0.norm").id);
        QCOMPARE(find("").repeats, 1);
        // A collapsed layer says so in its box.
        const VisibleGraph collapsed = visibleGraph(m, 0);
        LayoutCache cache;
        const DiagramLayout layout = layoutDiagram(m, collapsed, cache, layeredEngine());
        bool said = false;
        for (size_t i = 0; i < collapsed.items.size(); ++i) {
            if (collapsed.items[i].isGroup && collapsed.items[i].id == find("layers.2").id) {
                for (const std::string& line : layout.texts[i].lines) {
                    said = said || line == "×2, identical to layers.0";
                }
            }
        }
        QVERIFY(said);
    }

    void rootOnly() {
        const GraphModel m = sample();
        const VisibleGraph v = visibleGraph(m, 0);
        // The block is one deeper than its owner: a box, like the module a.
        QCOMPARE(describe(m, v), (QStringList{QStringLiteral("aten::relu"), QStringLiteral("[a]"),
                                              QStringLiteral("prim::If"), QStringLiteral("[]")}));
        QCOMPARE(edges(m, v),
                 (QStringList{QStringLiteral("in->aten::relu"), QStringLiteral("aten::relu->[a]"),
                              QStringLiteral("[a]->prim::If"), QStringLiteral("[]->prim::If"),
                              QStringLiteral("prim::If->out")}));
        QCOMPARE(v.openGroups, (std::vector<int>{0}));
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

    void scenesHavePortsForValuesCrossingGroups() {
        const GraphModel m = sample();
        const VisibleGraph v = visibleGraph(m, 1);
        const std::vector<LayoutScene> scenes = buildScenes(m, v);
        QCOMPARE(scenes.size(), size_t{3}); // root, a, the block
        const LayoutScene& a = scenes[1];
        QCOMPARE(a.group, 1);
        // r enters a (to a.mul and into the a.b box) through one port; s leaves it through one.
        int in = 0, out = 0;
        for (const SceneItem& item : a.items) {
            in += item.kind == SceneItem::Kind::InPort;
            out += item.kind == SceneItem::Kind::OutPort;
        }
        QCOMPARE(in, 1);
        QCOMPARE(out, 1);
        const LayoutScene& root = scenes[0];
        int groups = 0;
        for (const SceneItem& item : root.items) {
            groups += item.kind == SceneItem::Kind::Group;
        }
        QCOMPARE(groups, 2); // a and the block, drawn open inside the root
        QVERIFY(root.dot.find("rank=min") != std::string::npos);
    }

    void graphvizLaysOutNestedGroups() {
        const std::string program = findLayoutProgram();
        QVERIFY2(!program.empty(), "scriptscope-layout is not next to the test");
        const GraphModel m = sample();
        const VisibleGraph v = visibleGraph(m, -1);
        std::vector<std::string> notes;
        GraphvizOptions options;
        options.program = program;
        LayoutCache cache;
        const DiagramLayout l = layoutDiagram(m, v, cache, graphvizEngine(options, &notes));
        QVERIFY2(notes.empty(), notes.empty() ? "" : notes.front().c_str());
        QCOMPARE(l.simpleScenes, size_t{0});
        QCOMPARE(l.laidOut, l.scenes);
        checkGeometry(m, v, l);
        // The simple layout keeps the same promises.
        LayoutCache other;
        const DiagramLayout simple = layoutDiagram(m, v, other, layeredEngine());
        QCOMPARE(simple.simpleScenes, simple.scenes);
        checkGeometry(m, v, simple);
    }

    void theCacheLaysOutOnlyWhatChanged() {
        const GraphModel m = sample();
        LayoutCache cache;
        GraphvizOptions options;
        options.program = findLayoutProgram();
        const LayoutEngine engine = graphvizEngine(options, nullptr);
        const DiagramLayout first = layoutDiagram(m, visibleGraph(m, 1), cache, engine);
        QCOMPARE(first.laidOut, first.scenes);
        // Opening a.b: its scene is new, and a and the root see a new size; the block is cached.
        const DiagramLayout second = layoutDiagram(m, visibleGraph(m, 2), cache, engine);
        QCOMPARE(second.scenes, size_t{4});
        QCOMPARE(second.laidOut, size_t{3});
        // Closing it again: all from the cache, the same picture.
        const DiagramLayout third = layoutDiagram(m, visibleGraph(m, 1), cache, engine);
        QCOMPARE(third.laidOut, size_t{0});
        QCOMPARE(third.width, first.width);
        QCOMPARE(third.height, first.height);
    }

    void aHugeFanOutBecomesLabels() {
        const GraphModel m = scriptscope::test::fanOutGraph(2000);
        const VisibleGraph v = visibleGraph(m, 0);
        const std::vector<LayoutScene> scenes = buildScenes(m, v);
        QCOMPARE(scenes.front().stubs.size(), size_t{2000});
        for (const SceneEdge& e : scenes.front().edges) {
            QVERIFY(e.value != "h"); // the hub's uses are labels, not edges
        }
        QElapsedTimer timer;
        timer.start();
        GraphvizOptions options;
        options.program = findLayoutProgram();
        options.timeoutSeconds = 30;
        std::vector<std::string> notes;
        LayoutCache cache;
        const DiagramLayout l = layoutDiagram(m, v, cache, graphvizEngine(options, &notes));
        QVERIFY2(notes.empty(), notes.empty() ? "" : notes.front().c_str());
        QCOMPARE(l.stubs.size(), size_t{2000});
        qInfo("2,000-way fan-out: %lld ms with Graphviz", static_cast<long long>(timer.elapsed()));
    }

    void aHangingOrCrashingLayoutFallsBackInTime() {
        QTemporaryDir dir;
        const GraphModel m = chain(40);
        const VisibleGraph v = visibleGraph(m, 0);
        for (const auto& [name, script, why] :
             {std::make_tuple("hang.sh", "#!/bin/sh\nexec sleep 60\n", "within 1 s"),
              std::make_tuple("crash.sh", "#!/bin/sh\nkill -SEGV $$\n", "crashed (signal 11)"),
              std::make_tuple("garbage.sh", "#!/bin/sh\ncat >/dev/null; echo graph 1 2; echo end\n",
                              "Graphviz gave no layout")}) {
            const QString path = dir.filePath(QString::fromLatin1(name));
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(script);
            file.close();
            file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
            GraphvizOptions options;
            options.program = path.toStdString();
            options.timeoutSeconds = 1;
            std::vector<std::string> notes;
            LayoutCache cache;
            QElapsedTimer timer;
            timer.start();
            const DiagramLayout l = layoutDiagram(m, v, cache, graphvizEngine(options, &notes));
            QVERIFY2(timer.elapsed() < 5000, name);
            QCOMPARE(l.simpleScenes, size_t{1});
            QCOMPARE(notes.size(), size_t{1});
            QVERIFY2(notes.front().find(why) != std::string::npos, notes.front().c_str());
            checkGeometry(m, v, l);
        }
    }

    void theSimpleLayoutIsLayered() {
        const GraphModel m = chain(300);
        const VisibleGraph v = visibleGraph(m, 0);
        const std::vector<LayoutScene> scenes = buildScenes(m, v);
        const SceneLayout l = layeredLayout(scenes.front());
        QCOMPARE(l.items.size(), scenes.front().items.size());
        // Every edge of the chain points downwards: a node is below all its inputs.
        for (size_t e = 0; e < scenes.front().edges.size(); ++e) {
            const SceneEdge& edge = scenes.front().edges[e];
            QVERIFY(l.items[static_cast<size_t>(edge.to)].y >
                    l.items[static_cast<size_t>(edge.from)].y);
        }
        LayoutCache cache;
        checkGeometry(m, v, layoutDiagram(m, v, cache, layeredEngine()));
    }

    void svgHasEveryItem() {
        const GraphModel m = sample();
        const VisibleGraph v = visibleGraph(m, 1);
        LayoutCache cache;
        const DiagramLayout l = layoutDiagram(m, v, cache, layeredEngine());
        const std::string svg = toSvg(m, v, l);
        auto count = [&svg](const std::string& what) {
            size_t n = 0;
            for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) {
                ++n;
            }
            return n;
        };
        QCOMPARE(count("class=\"node\""), size_t{4});
        QCOMPARE(count("class=\"box\""), size_t{1}); // a.b
        QCOMPARE(count("class=\"edge\""), l.edges.size());
        QVERIFY(svg.find(">aten::mul<") != std::string::npos);
        QVERIFY(svg.rfind("</svg>") != std::string::npos);
    }

    void childProcessesAreFedAndTimed() {
        // More input than a pipe holds, echoed back whole.
        const std::string input(3 << 20, 'x');
        const ChildResult echoed = runChild({"/bin/cat"}, input, 30);
        QVERIFY(echoed.started);
        QCOMPARE(echoed.exitCode, 0);
        QCOMPARE(echoed.output.size(), input.size());
        // A child that exits without reading: no SIGPIPE for us, its status reported.
        const ChildResult early = runChild({"/bin/sh", "-c", "exit 3"}, input, 30);
        QCOMPARE(early.exitCode, 3);
        // Cancelled from another thread.
        std::atomic<bool> cancel{false};
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            cancel = true;
        });
        QElapsedTimer timer;
        timer.start();
        const ChildResult cancelled = runChild({"/bin/sleep", "30"}, {}, 60, &cancel);
        canceller.join();
        QVERIFY(cancelled.cancelled);
        QVERIFY(timer.elapsed() < 5000);
        const ChildResult missing = runChild({"/nonexistent/program"}, {}, 5);
        QCOMPARE(missing.exitCode, 127);
    }
};

QTEST_MAIN(TestVisibleGraph)
#include "test_visible_graph.moc"
