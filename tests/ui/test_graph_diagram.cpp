// The graph drawn, through the GUI and the real worker: the diagram opens collapsed to the root's
// children, a double-click expands a group and one on its title collapses it; search counts every
// match (as many as PyTorch's inlined graph has of that kind) and steps through them, revealing
// them; a node selects its IR line and an IR line selects its node; a profiled run paints times;
// SVG export is read back and checked, PNG export tiles large pictures without blank tiles; a
// 2,000-way fan-out still ends in a picture within the layout time limit. Screenshots of a
// collapsed and an expanded graph, light and dark.
#include "graph/graph_samples.h"
#include "gui_test_support.h"
#include "test_support.h"

#include <code_view.h>
#include <graph_diagram.h>
#include <main_window.h>
#include <model_workspace.h>
#include <run_panel.h>
#include <worker_client.h>

#include <nlohmann/json.hpp>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QXmlStreamReader>

using namespace scriptscope;
using scriptscope::test::fixture;
using scriptscope::test::readText;
using scriptscope::test::saveScreenshot;

namespace {

QString fx(const std::string& name) {
    return QString::fromStdString(fixture(name));
}

QPointF centreOf(const LayoutRect& r) {
    return {r.x + r.width / 2, r.y + r.height / 2};
}

} // namespace

class TestGraphDiagram : public QObject {
    Q_OBJECT

private:
    WorkerClient* worker_ = nullptr;
    MainWindow* window_ = nullptr;
    GraphDiagram* diagram_ = nullptr;

    bool open(const QString& path) { return scriptscope::test::openModel(window_, path); }

    // Waits for the diagram to show a laid-out picture of a graph.
    bool settled(int timeoutMs = 60000) {
        return QTest::qWaitFor(
            [&]() {
                return diagram_->hasGraph() && diagram_->picture() && !diagram_->layoutPending();
            },
            timeoutMs);
    }

    void showInlined(bool on) {
        window_->workspaces()->setCurrentIndex(0);
        QTabWidget* tabs = scriptscope::test::inspectorTabs(window_);
        tabs->setCurrentIndex(2); // Graph
        auto* inlined = scriptscope::test::part<QCheckBox>(window_, "inlinedGraph");
        inlined->setChecked(on);
    }

    QPoint viewPoint(const LayoutRect& r) const {
        return diagram_->canvas()->toView(centreOf(r)).toPoint();
    }

private Q_SLOTS:
    void initTestCase() {
        window_ = scriptscope::test::openTestWindow(this, &worker_);
        diagram_ = window_->modelWorkspace()->diagram();
    }

    void cleanupTestCase() { delete window_; }

    void opensCollapsedAndExpandsByDoubleClick() {
        QVERIFY(open(fx("quantized_mobilenet.pt")));
        showInlined(true);
        QVERIFY2(settled(), qPrintable(diagram_->statusText()));
        const GraphModel& graph = diagram_->graph();
        QVERIFY(graph.inlined);
        // Collapsed to the root's children: every group item is a child of the root.
        const DiagramPicture* pic = diagram_->picture();
        int boxes = 0;
        int features = -1;
        for (size_t i = 0; i < pic->visible.items.size(); ++i) {
            const VisibleItem& item = pic->visible.items[i];
            if (item.isGroup) {
                ++boxes;
                QCOMPARE(graph.groups[static_cast<size_t>(item.id)].parent, 0);
                if (graph.groups[static_cast<size_t>(item.id)].module == "features") {
                    features = static_cast<int>(i);
                }
            } else {
                QCOMPARE(graph.nodes[static_cast<size_t>(item.id)].group, 0);
            }
        }
        QVERIFY(boxes >= 3);
        QVERIFY2(features >= 0, "no features box");
        const int collapsedItems = static_cast<int>(pic->visible.items.size());
        saveScreenshot(window_, QStringLiteral("diagram-collapsed"));

        // Double-click the features box: it opens, its children (features.0, ...) are drawn.
        const int featuresGroup = pic->visible.items[static_cast<size_t>(features)].id;
        diagram_->canvas()->centreOn(pic->layout.items[static_cast<size_t>(features)]);
        QTest::mouseDClick(diagram_->canvas(), Qt::LeftButton, {},
                           viewPoint(pic->layout.items[static_cast<size_t>(features)]));
        QVERIFY(diagram_->isExpanded(featuresGroup));
        QVERIFY(settled());
        pic = diagram_->picture();
        QCOMPARE(diagram_->itemOfGroup(featuresGroup), -1);
        QVERIFY(pic->visible.items.size() > static_cast<size_t>(collapsedItems));
        bool child = false;
        for (const VisibleItem& item : pic->visible.items) {
            child = child || (item.isGroup &&
                              graph.groups[static_cast<size_t>(item.id)].module == "features.3");
        }
        QVERIFY2(child, "features.3 is not drawn after expanding features");
        // Expanding laid out only the new group and its ancestors: the rest came from the cache.
        QVERIFY2(pic->layout.laidOut <= 2, qPrintable(diagram_->statusText()));
        saveScreenshot(window_, QStringLiteral("diagram-expanded"));

        // Double-click the open group's title: it closes again.
        const DiagramCluster* cluster = nullptr;
        for (const DiagramCluster& c : pic->layout.clusters) {
            if (c.group == featuresGroup) {
                cluster = &c;
            }
        }
        QVERIFY(cluster);
        diagram_->canvas()->centreOn({cluster->rect.x, cluster->rect.y, 10, 10});
        const QPoint title =
            diagram_->canvas()->toView(QPointF(cluster->rect.x + 4, cluster->rect.y + 6)).toPoint();
        QTest::mouseDClick(diagram_->canvas(), Qt::LeftButton, {}, title);
        QVERIFY(!diagram_->isExpanded(featuresGroup));
        QVERIFY(settled());
        QCOMPARE(static_cast<int>(diagram_->picture()->visible.items.size()), collapsedItems);
        // Back to the collapsed picture: every scene came from the cache.
        QCOMPARE(diagram_->picture()->layout.laidOut, size_t{0});
    }

    // Level of detail: at 1:1 everything is drawn; zoomed far out, small open groups are summary
    // boxes and nothing inside them is drawn; a summary box with room carries its name.
    void levelOfDetail() {
        QVERIFY(open(fx("quantized_mobilenet.pt")));
        showInlined(true);
        QVERIFY(settled());
        diagram_->expandAll();
        QVERIFY(settled());
        const DiagramPicture* pic = diagram_->picture();
        const DiagramLayout& l = pic->layout;
        const LayoutRect whole{0, 0, l.width, l.height};
        size_t openClusters = 0;
        for (const DiagramCluster& c : l.clusters) {
            openClusters += c.group != 0;
        }
        const DiagramDrawList near = diagram_->drawList(whole, 1.0);
        QVERIFY(near.summaries.empty());
        QCOMPARE(near.clusters.size(), openClusters);
        QCOMPARE(near.items.size(), l.items.size());
        QCOMPARE(near.edges.size(), l.edges.size());
        // A small view at 1:1 is drawn from the index: only what is in it.
        const LayoutRect corner{l.items[0].x, l.items[0].y, 400, 300};
        const DiagramDrawList small = diagram_->drawList(corner, 1.0);
        QVERIFY(!small.items.empty() && small.items.size() < l.items.size());

        const double far = 0.02;
        const DiagramDrawList list = diagram_->drawList(whole, far);
        QVERIFY(!list.summaries.empty());
        QVERIFY2(
            list.items.size() < l.items.size() / 2,
            qPrintable(
                QStringLiteral("%1 of %2 items drawn").arg(list.items.size()).arg(l.items.size())));
        QVERIFY(list.edges.size() < l.edges.size());
        const auto inside = [](const LayoutRect& a, const LayoutRect& b) {
            return a.x >= b.x && a.y >= b.y && a.x + a.width <= b.x + b.width &&
                   a.y + a.height <= b.y + b.height;
        };
        for (const int s : list.summaries) {
            const LayoutRect& box = l.clusters[static_cast<size_t>(s)].rect;
            // Small on screen, and nothing drawn inside it.
            QVERIFY(box.height * far < DiagramDetail::kSummaryHeight ||
                    box.width * far < DiagramDetail::kSummaryWidth);
            for (const int i : list.items) {
                QVERIFY(!inside(l.items[static_cast<size_t>(i)], box));
            }
            for (const int c : list.clusters) {
                QVERIFY(c == s || !inside(l.clusters[static_cast<size_t>(c)].rect, box));
            }
        }
        // The painted picture agrees: a summary box is one colour inside, with no node in it.
        QImage image(static_cast<int>(l.width * far) + 1, static_cast<int>(l.height * far) + 1,
                     QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        {
            QPainter p(&image);
            p.scale(far, far);
            diagram_->paint(p, whole, far);
        }
        int checked = 0;
        for (const int s : list.summaries) {
            const LayoutRect& box = l.clusters[static_cast<size_t>(s)].rect;
            const QRect px(static_cast<int>(box.x * far) + 2, static_cast<int>(box.y * far) + 2,
                           static_cast<int>(box.width * far) - 4,
                           static_cast<int>(box.height * far) - 4);
            if (px.width() < 3 || px.height() < 3 ||
                (box.width * far >= 40 && box.height * far >= 14)) {
                continue; // too small to sample, or large enough to carry a name (40x14 pixels)
            }
            const QRgb fill = image.pixel(px.center());
            int other = 0;
            for (int y = px.top(); y <= px.bottom(); ++y) {
                for (int x = px.left(); x <= px.right(); ++x) {
                    other += image.pixel(x, y) != fill;
                }
            }
            // Drawn over the edges that end inside it: one colour, a node would be a patch.
            QVERIFY2(other == 0, qPrintable(QStringLiteral("%1 of %2 pixels differ")
                                                .arg(other)
                                                .arg(px.width() * px.height())));
            ++checked;
        }
        QVERIFY(checked > 0);
        // Names: a wide group, zoomed out until it is a summary box 30 pixels high while every
        // group around it is still open, carries its name.
        const GraphModel& graph = diagram_->graph();
        std::map<int, const DiagramCluster*> clusterOf;
        for (const DiagramCluster& c : l.clusters) {
            clusterOf[c.group] = &c;
        }
        int labelledCluster = -1;
        double named = 0;
        for (size_t c = 0; c < l.clusters.size() && labelledCluster < 0; ++c) {
            const LayoutRect& r = l.clusters[c].rect;
            if (l.clusters[c].group == 0 || r.width < 2 * r.height) {
                continue;
            }
            const double scale = std::min(0.14, 30 / r.height);
            bool open = true;
            for (int g = graph.groups[static_cast<size_t>(l.clusters[c].group)].parent; g > 0;
                 g = graph.groups[static_cast<size_t>(g)].parent) {
                const LayoutRect& around = clusterOf.at(g)->rect;
                open = open && around.height * scale >= DiagramDetail::kSummaryHeight &&
                       around.width * scale >= DiagramDetail::kSummaryWidth;
            }
            if (open && r.width * scale >= 40) {
                labelledCluster = static_cast<int>(c);
                named = scale;
            }
        }
        QVERIFY2(labelledCluster >= 0, "no wide group to name");
        const DiagramDrawList labelled = diagram_->drawList(whole, named);
        QVERIFY(std::find(labelled.summaries.begin(), labelled.summaries.end(), labelledCluster) !=
                labelled.summaries.end());
        QVERIFY(labelled.labels >= 1);
        QVERIFY(labelled.labels <= labelled.summaries.size());
        diagram_->canvas()->fit();
        saveScreenshot(window_, QStringLiteral("diagram-expanded-fit"));
        diagram_->collapseAll(); // as the tests after this one expect it
        QVERIFY(settled());
    }

    void searchCountsAndRevealsMatches() {
        // As many matches as PyTorch's inlined graph has nodes of that kind.
        const auto expected =
            nlohmann::json::parse(readText(fixture("quantized_mobilenet.expected.json")));
        int pythonCount = 0;
        for (const auto& node : expected["inlined_nodes"]) {
            pythonCount +=
                node[0].get<std::string>().find("quantized::conv2d") != std::string::npos;
        }
        QVERIFY(pythonCount > 10);
        auto* search = scriptscope::test::part<QLineEdit>(diagram_, "diagramSearch");
        search->setText(QStringLiteral("quantized::conv2d"));
        QCOMPARE(diagram_->matchCount(), pythonCount);
        QCOMPARE(diagram_->searchStatus(), QStringLiteral("%1 matches").arg(pythonCount));
        search->setText(QStringLiteral("no such operator"));
        QCOMPARE(diagram_->searchStatus(), QStringLiteral("No match"));
        search->setText(QStringLiteral("quantized::conv2d"));
        // Next: the first match is selected and revealed (its groups open), and the IR text is
        // at its line.
        diagram_->nextMatch();
        QCOMPARE(diagram_->searchStatus(), QStringLiteral("1 of %1").arg(pythonCount));
        const int node = diagram_->selectedNode();
        QVERIFY(node >= 0);
        QVERIFY(settled());
        QVERIFY2(diagram_->itemOfNode(node) >= 0, "the match was not revealed");
        const GraphNode& n = diagram_->graph().nodes[static_cast<size_t>(node)];
        QVERIFY(n.kind.find("quantized::conv2d") != std::string::npos);
        QPlainTextEdit* ir = window_->modelWorkspace()->graphText()->editor();
        QCOMPARE(ir->textCursor().blockNumber() + 1, n.irLine);
        QVERIFY2(ir->textCursor().block().text().contains(QStringLiteral("quantized::conv2d")),
                 qPrintable(ir->textCursor().block().text()));
        diagram_->previousMatch();
        QCOMPARE(diagram_->searchStatus(), QStringLiteral("%1 of %1").arg(pythonCount));
        search->clear();
        QCOMPARE(diagram_->matchCount(), 0);
    }

    void nodeAndIrLineSelectEachOther() {
        const GraphModel& graph = diagram_->graph();
        // Click a drawn node: the IR text goes to its line.
        const DiagramPicture* pic = diagram_->picture();
        int item = -1;
        for (size_t i = 0; i < pic->visible.items.size(); ++i) {
            if (!pic->visible.items[i].isGroup &&
                graph.nodes[static_cast<size_t>(pic->visible.items[i].id)].irLine > 0) {
                item = static_cast<int>(i);
            }
        }
        QVERIFY(item >= 0);
        const int node = pic->visible.items[static_cast<size_t>(item)].id;
        diagram_->canvas()->centreOn(pic->layout.items[static_cast<size_t>(item)]);
        QSignalSpy selected(diagram_, &GraphDiagram::nodeSelected);
        QTest::mouseClick(diagram_->canvas(), Qt::LeftButton, {},
                          viewPoint(pic->layout.items[static_cast<size_t>(item)]));
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.first().first().toInt(), node);
        QPlainTextEdit* ir = window_->modelWorkspace()->graphText()->editor();
        // The inlined text is long (sliced in as it is shown): the cursor gets there once it has.
        QTRY_COMPARE(ir->textCursor().blockNumber() + 1,
                     graph.nodes[static_cast<size_t>(node)].irLine);
        auto* info = scriptscope::test::part<QLabel>(diagram_, "diagramInfo");
        QVERIFY2(info->text().contains(
                     QString::fromStdString(graph.nodes[static_cast<size_t>(node)].kind)),
                 qPrintable(info->text()));
        // An IR line of another node, chosen in the text: the diagram selects that node.
        const GraphNode* other = nullptr;
        for (const GraphNode& n : graph.nodes) {
            if (n.irLine > 0 && n.id != node && n.kind == "quantized::add") {
                other = &n;
                break;
            }
        }
        QVERIFY(other);
        QTextCursor cursor(ir->document()->findBlockByNumber(other->irLine - 1));
        ir->setTextCursor(cursor);
        QCOMPARE(diagram_->selectedNode(), other->id);
        QVERIFY(settled());
        QVERIFY(diagram_->itemOfNode(other->id) >= 0);
        // Upstream of it: more than itself, and every marked item is drawn.
        diagram_->selectUpstream();
        QVERIFY(diagram_->markedItems().size() > 1);
    }

    // Two layers marked identical, compared: both open with everything in them, and a node
    // selected in one marks the node in the same place of the other.
    void comparesIdenticalLayers() {
        QVERIFY(open(fx("transformer_encoder.pt")));
        showInlined(true);
        QVERIFY(settled());
        const GraphModel& graph = diagram_->graph();
        int first = -1, second = -1, attention = -1;
        for (const GraphGroup& g : graph.groups) {
            if (g.kind == GraphGroup::Kind::Module) {
                first = g.module == "layers.0" ? g.id : first;
                second = g.module == "layers.1" ? g.id : second;
                attention = g.module == "layers.0.self_attn" ? g.id : attention;
            }
        }
        QVERIFY(first > 0 && second > 0 && attention > 0);
        QCOMPARE(diagram_->identicalGroups(first), std::vector<int>{second});
        QVERIFY(!diagram_->compareGroups(first, attention)); // not alike: nothing changes
        QVERIFY(!diagram_->isExpanded(first));
        QVERIFY(diagram_->compareGroups(first, second));
        QVERIFY(settled());
        for (const GraphGroup& g : graph.groups) {
            for (int at = g.id; at > 0; at = graph.groups[static_cast<size_t>(at)].parent) {
                if (at == first || at == second) {
                    QVERIFY2(diagram_->isExpanded(g.id), g.module.c_str());
                    break;
                }
            }
        }
        // The aten::linear of layers.0 and of layers.1, in the graph's order.
        std::vector<int> linear[2];
        for (const GraphNode& n : graph.nodes) {
            if (n.kind == "aten::linear" && n.module.rfind("layers.", 0) == 0) {
                linear[n.module.rfind("layers.1", 0) == 0 ? 1 : 0].push_back(n.id);
            }
        }
        QCOMPARE(linear[0].size(), linear[1].size());
        QVERIFY(linear[0].size() >= 2);
        QCOMPARE(diagram_->counterpart(linear[0].back()), linear[1].back());
        QCOMPARE(diagram_->counterpart(linear[1].front()), linear[0].front());
        const int mine = linear[0].back(), theirs = linear[1].back();
        diagram_->selectNode(mine);
        const std::set<int> marked = diagram_->markedItems();
        QVERIFY(marked.count(diagram_->itemOfNode(mine)));
        QVERIFY(marked.count(diagram_->itemOfNode(theirs)));
        QVERIFY(diagram_->findChild<QLabel*>(QStringLiteral("diagramInfo"))
                    ->text()
                    .contains(QStringLiteral("counterpart")));
        // A node outside both has none; stopping clears the mark.
        int outside = -1;
        for (const GraphNode& n : graph.nodes) {
            outside = n.module.empty() && outside < 0 ? n.id : outside;
        }
        QCOMPARE(diagram_->counterpart(outside), -1);
        diagram_->stopComparing();
        QCOMPARE(diagram_->counterpart(mine), -1);
        diagram_->selectNode(mine);
        QVERIFY(!diagram_->markedItems().count(diagram_->itemOfNode(theirs)));
        diagram_->collapseAll();
        QVERIFY(settled());
    }

    void svgAndPngExport() {
        QTemporaryDir dir;
        QString error;
        const QString svgPath = dir.filePath(QStringLiteral("graph.svg"));
        QVERIFY2(diagram_->exportSvg(svgPath, &error), qPrintable(error));
        QFile file(svgPath);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&file);
        int nodes = 0, boxes = 0, edges = 0;
        QStringList texts;
        while (!xml.atEnd()) {
            if (xml.readNext() == QXmlStreamReader::StartElement) {
                const QString cls = xml.attributes().value(QStringLiteral("class")).toString();
                nodes += cls == QStringLiteral("node");
                boxes += cls == QStringLiteral("box");
                edges += cls == QStringLiteral("edge");
                if (xml.name() == QStringLiteral("text")) {
                    texts << xml.readElementText();
                }
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        const DiagramPicture* pic = diagram_->picture();
        int wantNodes = 0, wantBoxes = 0;
        for (const VisibleItem& item : pic->visible.items) {
            (item.isGroup ? wantBoxes : wantNodes)++;
        }
        QCOMPARE(nodes, wantNodes);
        QCOMPARE(boxes, wantBoxes);
        QCOMPARE(edges, static_cast<int>(pic->layout.edges.size()));
        for (const ItemText& t : pic->layout.texts) {
            QVERIFY2(texts.contains(QString::fromStdString(t.title)), t.title.c_str());
        }
        // PNG, tiled: each tile has something drawn in it, and the tiles cover the picture.
        const int side = 600;
        const QStringList tiles =
            diagram_->exportPng(dir.filePath(QStringLiteral("graph.png")), &error, side);
        const int columns = static_cast<int>(std::ceil(pic->layout.width / side));
        const int rows = static_cast<int>(std::ceil(pic->layout.height / side));
        QCOMPARE(tiles.size(), columns * rows);
        int covered = 0;
        for (const QString& tile : tiles) {
            QImage image(tile);
            QVERIFY2(!image.isNull(), qPrintable(tile));
            covered += image.width() * image.height();
        }
        QCOMPARE(covered, static_cast<int>(std::ceil(pic->layout.width)) *
                              static_cast<int>(std::ceil(pic->layout.height)));
        const QStringList one =
            diagram_->exportPng(dir.filePath(QStringLiteral("one.png")), &error);
        QCOMPARE(one.size(), 1);
        QImage whole(one.front());
        QCOMPARE(whole.width(), static_cast<int>(std::ceil(pic->layout.width)));
        // Not blank: the item rectangles' frames are drawn.
        const QColor background = whole.pixelColor(1, 1);
        int drawn = 0;
        for (int y = 0; y < whole.height(); y += 3) {
            for (int x = 0; x < whole.width(); x += 3) {
                drawn += whole.pixelColor(x, y) != background;
            }
        }
        QVERIFY(drawn > 100);
    }

    void overlayAfterAProfiledRun() {
        QVERIFY(open(fx("profile_net.pt")));
        showInlined(true);
        QVERIFY(settled());
        QVERIFY(!diagram_->hasProfile());
        RunPanel* panel = window_->runPanel();
        panel->profileBox()->setChecked(true);
        panel->iterationsBox()->setValue(2);
        panel->setInput(0, QStringLiteral("random"), QStringLiteral("64x512"));
        QSignalSpy shown(panel, &RunPanel::runShown);
        panel->runOnce();
        QVERIFY(shown.wait(scriptscope::test::scaled(120000)));
        QVERIFY(diagram_->hasProfile());
        window_->workspaces()->setCurrentIndex(0);
        QVERIFY(settled());
        // The heavy box (a loop of linear layers) is painted by its time: not the plain box fill.
        const DiagramPicture* pic = diagram_->picture();
        int heavy = -1;
        for (size_t i = 0; i < pic->visible.items.size(); ++i) {
            const VisibleItem& item = pic->visible.items[i];
            if (item.isGroup &&
                diagram_->graph().groups[static_cast<size_t>(item.id)].module == "heavy") {
                heavy = static_cast<int>(i);
            }
        }
        QVERIFY(heavy >= 0);
        const LayoutRect r = pic->layout.items[static_cast<size_t>(heavy)];
        QImage image(static_cast<int>(r.width) + 8, static_cast<int>(r.height) + 8,
                     QImage::Format_ARGB32);
        image.fill(Qt::white);
        {
            QPainter painter(&image);
            painter.translate(-r.x + 4, -r.y + 4);
            diagram_->paint(painter, r, 1.0);
        }
        const QColor fill =
            image.pixelColor(static_cast<int>(r.width) - 6, static_cast<int>(r.height) - 5);
        QVERIFY2(fill.red() > fill.blue() + 30, qPrintable(fill.name())); // warm, not the blue box
        diagram_->selectNode(-1);
        QTest::mouseClick(diagram_->canvas(), Qt::LeftButton, {}, viewPoint(r));
        auto* info = scriptscope::test::part<QLabel>(diagram_, "diagramInfo");
        QVERIFY2(info->text().contains(QStringLiteral("ms in the profiled run")),
                 qPrintable(info->text()));
        // The edges carry the shapes that flowed: the input is 64x512, and so is every value.
        QVERIFY(diagram_->showsRunShapes());
        int shaped = 0;
        for (size_t e = 0; e < pic->layout.edges.size(); ++e) {
            shaped += diagram_->edgeLabel(static_cast<int>(e)) == QStringLiteral("64x512");
        }
        QCOMPARE(shaped, static_cast<int>(pic->layout.edges.size())); // x, heavy's, light's
        // Off the inlined graph (the method's own graph has other value names): types again.
        showInlined(false);
        QVERIFY(settled());
        QVERIFY(!diagram_->showsRunShapes());
        QVERIFY(diagram_->hasProfile()); // the times stay with the model
        showInlined(true);
        QVERIFY(settled());
        QVERIFY(diagram_->showsRunShapes());
        saveScreenshot(window_, QStringLiteral("diagram-profiled"));
        // A node of the whole model's graph selects its module in the tree, and the .code view
        // goes to the line that made it: aten::linear, in heavy.linear's forward.
        int linear = -1;
        for (const GraphNode& n : diagram_->graph().nodes) {
            if (n.kind == "aten::linear") {
                linear = n.id;
            }
        }
        QVERIFY(linear >= 0);
        QVERIFY(!diagram_->graph().nodes[static_cast<size_t>(linear)].sourceText.empty());
        diagram_->selectNode(linear);
        QCOMPARE(window_->modelWorkspace()->selectedModulePath(), QStringLiteral("heavy.linear"));
        QPlainTextEdit* code = window_->modelWorkspace()->codeText()->editor();
        QVERIFY2(code->textCursor().block().text().contains(QStringLiteral("linear(")),
                 qPrintable(code->textCursor().block().text()));
        QVERIFY(settled());
        QVERIFY(diagram_->itemOfNode(linear) >= 0); // revealed: heavy and its loop opened
        // Another model: no times of this one.
        QVERIFY(open(fx("quantized_mobilenet.pt")));
        showInlined(true);
        QVERIFY(settled());
        QVERIFY(!diagram_->hasProfile());
    }

    // A .pt2's torch.cond drawn with its branches as blocks of the cond node; after a run the
    // branch taken is marked "ran" and the other "not taken" (dimmed); another model's diagram
    // has no marks.
    void controlFlowMarkedAfterARun() {
        QVERIFY(open(QStringLiteral(SCRIPTSCOPE_SOURCE_DIR
                                    "/tests/fixtures/saved_by/exported/my_decision_gate.pt2")));
        window_->workspaces()->setCurrentIndex(0);
        scriptscope::test::inspectorTabs(window_)->setCurrentIndex(2);
        QVERIFY(settled());
        std::vector<int> blocks;
        for (const GraphGroup& g : diagram_->graph().groups) {
            if (g.kind == GraphGroup::Kind::Block) {
                blocks.push_back(g.id);
                QCOMPARE(diagram_->graph().nodes[static_cast<size_t>(g.owner)].kind,
                         std::string("higher_order::cond"));
            }
        }
        QCOMPARE(blocks.size(), size_t(2));
        QVERIFY(diagram_->blockNote(blocks[0]).isEmpty()); // before a run: no marks
        RunPanel* panel = window_->runPanel();
        panel->iterationsBox()->setValue(1);
        QSignalSpy shown(panel, &RunPanel::runShown);
        panel->runOnce();
        QVERIFY(shown.wait(scriptscope::test::scaled(120000)));
        window_->workspaces()->setCurrentIndex(0);
        QVERIFY(settled());
        // One branch ran, whichever the inputs chose.
        const int taken = diagram_->blockNote(blocks[0]) == QStringLiteral("ran") ? 0 : 1;
        QCOMPARE(diagram_->blockNote(blocks[static_cast<size_t>(taken)]), QStringLiteral("ran"));
        QCOMPARE(diagram_->blockNote(blocks[static_cast<size_t>(1 - taken)]),
                 QStringLiteral("not taken"));
        QVERIFY(diagram_->blockNotTaken(blocks[static_cast<size_t>(1 - taken)]));
        diagram_->expandAll();
        QVERIFY(settled());
        diagram_->selectNode(diagram_->graph().groups[static_cast<size_t>(blocks[0])].owner);
        QVERIFY(settled());
        saveScreenshot(window_, QStringLiteral("diagram-control-flow"));
        QVERIFY(open(fx("profile_net.pt")));
        showInlined(true);
        QVERIFY(settled());
        for (const GraphGroup& g : diagram_->graph().groups) {
            QVERIFY(diagram_->blockNote(g.id).isEmpty());
        }
    }

    void darkScreenshots() {
        QAction* dark = nullptr;
        QAction* light = nullptr;
        for (QAction* action : window_->findChildren<QAction*>()) {
            if (action->text() == QStringLiteral("&Dark")) {
                dark = action;
            } else if (action->text() == QStringLiteral("&Light")) {
                light = action;
            }
        }
        QVERIFY(dark && light);
        dark->trigger();
        QApplication::processEvents();
        diagram_->collapseAll();
        QVERIFY(settled());
        saveScreenshot(window_, QStringLiteral("diagram-collapsed-dark"));
        // The canvas paints the dark base, not white.
        const QImage canvas = diagram_->canvas()->grab().toImage();
        QVERIFY(canvas.pixelColor(2, canvas.height() / 2).lightness() < 80);
        diagram_->expandAll();
        QVERIFY(settled(120000));
        saveScreenshot(window_, QStringLiteral("diagram-expanded-dark"));
        light->trigger();
        QApplication::processEvents();
    }

    void aHugeFanOutStillEndsInAPicture() {
        // One value feeding 2,000 nodes: folded into labels, so layout ends in a picture.
        const GraphModel g = scriptscope::test::fanOutGraph(2000);
        GraphDiagram diagram;
        diagram.resize(800, 600);
        diagram.setLayoutTimeout(20);
        diagram.show();
        QElapsedTimer timer;
        timer.start();
        diagram.setGraph(g);
        QVERIFY(QTest::qWaitFor([&]() { return diagram.picture() && !diagram.layoutPending(); },
                                60000));
        QCOMPARE(diagram.picture()->visible.items.size(), size_t{2001});
        QCOMPARE(diagram.picture()->layout.stubs.size(), size_t{2000});
        QVERIFY(diagram.findChild<QLabel*>(QStringLiteral("diagramStatus"))
                    ->toolTip()
                    .contains(QStringLiteral("\u25B8")));
        qInfo("2,000-way fan-out laid out in %lld ms", static_cast<long long>(timer.elapsed()));
    }
};

QTEST_MAIN(TestGraphDiagram)
#include "test_graph_diagram.moc"
