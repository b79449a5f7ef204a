// How the diagram is painted: the spatial index of a picture, painting at a scale, and the SVG and
// PNG exports.
#include "diagram_support.h"
#include "graph_diagram.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPainter>
#include <QPainterPath>
#include <QSaveFile>

#include <algorithm>
#include <cmath>

namespace scriptscope {

using namespace diagram_ui;

// ---------------------------------------------------------------------------------------------
// The index

void DiagramIndex::build(const DiagramLayout& layout, const std::vector<DiagramStub>& stubs) {
    columns = std::max(1, static_cast<int>(std::ceil(layout.width / cell)));
    rows = std::max(1, static_cast<int>(std::ceil(layout.height / cell)));
    cells.assign(static_cast<size_t>(columns) * static_cast<size_t>(rows), {});
    entries = 0;
    auto add = [&](const LayoutRect& r, int kind, int index) {
        const int c0 = std::clamp(static_cast<int>(r.x / cell), 0, columns - 1);
        const int c1 = std::clamp(static_cast<int>((r.x + r.width) / cell), 0, columns - 1);
        const int r0 = std::clamp(static_cast<int>(r.y / cell), 0, rows - 1);
        const int r1 = std::clamp(static_cast<int>((r.y + r.height) / cell), 0, rows - 1);
        for (int row = r0; row <= r1; ++row) {
            for (int col = c0; col <= c1; ++col) {
                cells[static_cast<size_t>(row) * static_cast<size_t>(columns) +
                      static_cast<size_t>(col)]
                    .push_back({kind, index});
                ++entries;
            }
        }
    };
    for (size_t i = 0; i < layout.clusters.size(); ++i) {
        const LayoutRect& r = layout.clusters[i].rect;
        // An open group's frame: its four sides, so that a big group is not in every cell.
        add({r.x, r.y, r.width, diagram::kGroupTitle}, Cluster, static_cast<int>(i));
        add({r.x, r.y, 1, r.height}, Cluster, static_cast<int>(i));
        add({r.x + r.width - 1, r.y, 1, r.height}, Cluster, static_cast<int>(i));
        add({r.x, r.y + r.height - 1, r.width, 1}, Cluster, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.edges.size(); ++i) {
        add(bounds(layout.edges[i].points), Edge, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.ports.size(); ++i) {
        add(layout.ports[i].rect, Port, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.items.size(); ++i) {
        add(layout.items[i], Item, static_cast<int>(i));
    }
    for (size_t i = 0; i < layout.inputs.size(); ++i) {
        add(layout.inputs[i], Input, static_cast<int>(i));
    }
    add(layout.output, Output, 0);
    for (size_t i = 0; i < stubs.size(); ++i) {
        add({stubs[i].at.x, stubs[i].at.y - 9, 120, 10}, Stub, static_cast<int>(i));
    }
}

std::vector<DiagramIndex::Entry> DiagramIndex::query(const LayoutRect& rect) const {
    std::vector<Entry> found;
    if (cells.empty()) {
        return found;
    }
    const int c0 = std::clamp(static_cast<int>(rect.x / cell), 0, columns - 1);
    const int c1 = std::clamp(static_cast<int>((rect.x + rect.width) / cell), 0, columns - 1);
    const int r0 = std::clamp(static_cast<int>(rect.y / cell), 0, rows - 1);
    const int r1 = std::clamp(static_cast<int>((rect.y + rect.height) / cell), 0, rows - 1);
    std::set<std::pair<int, int>> seen;
    for (int row = r0; row <= r1; ++row) {
        for (int col = c0; col <= c1; ++col) {
            for (const Entry& e : cells[static_cast<size_t>(row) * static_cast<size_t>(columns) +
                                        static_cast<size_t>(col)]) {
                if (seen.insert({e.kind, e.index}).second) {
                    found.push_back(e);
                }
            }
        }
    }
    std::sort(found.begin(), found.end(), [](const Entry& a, const Entry& b) {
        return a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
    });
    return found;
}

// ---------------------------------------------------------------------------------------------
// Level of detail

namespace {

// Summary boxes at least this large on screen carry their group's name (device pixels).
constexpr double kLabelWidth = 40;
constexpr double kLabelHeight = 14;

bool meets(const LayoutRect& a, const LayoutRect& b) {
    return a.x <= b.x + b.width && a.x + a.width >= b.x && a.y <= b.y + b.height &&
           a.y + a.height >= b.y;
}

} // namespace

void DiagramDetail::build(const GraphModel& graph, const VisibleGraph& visible,
                          const DiagramLayout& layout) {
    const size_t groups = graph.groups.size();
    // Each open group's own threshold, then the largest along its chain of ancestors: below it,
    // some group around (or at) this one is a summary box.
    std::vector<double> own(groups, 0);
    clusterSummary.assign(layout.clusters.size(), 0);
    for (size_t c = 0; c < layout.clusters.size(); ++c) {
        const DiagramCluster& cluster = layout.clusters[c];
        const LayoutRect& r = cluster.rect;
        if (cluster.group > 0 && static_cast<size_t>(cluster.group) < groups && r.width > 0 &&
            r.height > 0) {
            clusterSummary[c] = std::min(
                kDetailScale, std::max(kSummaryHeight / r.height, kSummaryWidth / r.width));
            own[static_cast<size_t>(cluster.group)] = clusterSummary[c];
        }
    }
    std::vector<double> chain(groups, -1);
    const auto chained = [&](int group) {
        // Groups nest only a few dozen deep; walk up to the first one already known.
        std::vector<int> path;
        int g = group;
        while (g >= 0 && static_cast<size_t>(g) < groups && chain[static_cast<size_t>(g)] < 0) {
            path.push_back(g);
            g = graph.groups[static_cast<size_t>(g)].parent;
        }
        double above =
            g >= 0 && static_cast<size_t>(g) < groups ? chain[static_cast<size_t>(g)] : 0;
        for (auto it = path.rbegin(); it != path.rend(); ++it) {
            above = std::max(above, own[static_cast<size_t>(*it)]);
            chain[static_cast<size_t>(*it)] = above;
        }
        return group >= 0 && static_cast<size_t>(group) < groups ? chain[static_cast<size_t>(group)]
                                                                 : 0.0;
    };
    const auto parentOf = [&](int group) {
        return group >= 0 && static_cast<size_t>(group) < groups
                   ? graph.groups[static_cast<size_t>(group)].parent
                   : -1;
    };
    clusterHidden.assign(layout.clusters.size(), 0);
    for (size_t c = 0; c < layout.clusters.size(); ++c) {
        clusterHidden[c] = chained(parentOf(layout.clusters[c].group));
    }
    // The group an item sits in: a node's own, a collapsed group's parent.
    std::vector<int> home(visible.items.size(), 0);
    itemHidden.assign(visible.items.size(), 0);
    for (size_t i = 0; i < visible.items.size(); ++i) {
        const VisibleItem& item = visible.items[i];
        home[i] = item.isGroup ? parentOf(item.id)
                  : item.id >= 0 && static_cast<size_t>(item.id) < graph.nodes.size()
                      ? graph.nodes[static_cast<size_t>(item.id)].group
                      : 0;
        itemHidden[i] = chained(home[i]);
    }
    // An edge goes when both its ends are inside one summary box: it lies within the innermost
    // group holding both ends.
    const auto depth = [&](int group) {
        return group >= 0 && static_cast<size_t>(group) < groups
                   ? graph.groups[static_cast<size_t>(group)].depth
                   : 0;
    };
    edgeHidden.assign(layout.edges.size(), 0);
    for (size_t e = 0; e < layout.edges.size(); ++e) {
        if (layout.edges[e].edges.empty()) {
            continue;
        }
        const VisibleEdge& v = visible.edges[static_cast<size_t>(layout.edges[e].edges.front())];
        int a = v.from >= 0 ? home[static_cast<size_t>(v.from)] : 0;
        int b = v.to >= 0 ? home[static_cast<size_t>(v.to)] : 0;
        for (int guard = 0; a != b && guard < 256; ++guard) {
            if (depth(a) >= depth(b)) {
                a = parentOf(a);
            } else {
                b = parentOf(b);
            }
        }
        edgeHidden[e] = a == b ? chained(a) : 0;
    }
    portHidden.assign(layout.ports.size(), 0);
    for (size_t i = 0; i < layout.ports.size(); ++i) {
        portHidden[i] = chained(layout.ports[i].group);
    }
}

DiagramDrawList GraphDiagram::drawList(const LayoutRect& scene, double scale) const {
    DiagramDrawList list;
    if (!picture_) {
        return list;
    }
    const DiagramPicture& pic = *picture_;
    const DiagramLayout& l = pic.layout;
    const DiagramDetail& d = pic.detail;
    const bool detail = scale >= kDetailScale;
    const bool showText = scale >= kTextScale;
    // What of each kind is drawn at this scale, whichever way it was found in view.
    const auto take = [&](int kind, int index) {
        const size_t i = static_cast<size_t>(index);
        switch (kind) {
        case DiagramIndex::Cluster:
            if (l.clusters[i].group == 0 || scale < d.clusterHidden[i]) {
                break;
            }
            if (scale < d.clusterSummary[i]) {
                list.summaries.push_back(index);
                const LayoutRect& r = l.clusters[i].rect;
                list.labels += r.width * scale >= kLabelWidth && r.height * scale >= kLabelHeight;
            } else {
                list.clusters.push_back(index);
            }
            break;
        case DiagramIndex::Edge:
            if (scale >= d.edgeHidden[i]) {
                list.edges.push_back(index);
            }
            break;
        case DiagramIndex::Port:
            if (detail && scale >= d.portHidden[i]) {
                list.ports.push_back(index);
            }
            break;
        case DiagramIndex::Item:
            if (scale >= d.itemHidden[i]) {
                list.items.push_back(index);
            }
            break;
        case DiagramIndex::Input:
            list.inputs.push_back(index);
            break;
        case DiagramIndex::Output:
            list.output = true;
            break;
        case DiagramIndex::Stub:
            if (showText) {
                list.stubs.push_back(index);
            }
            break;
        default:
            break;
        }
    };
    if (scene.width * scene.height < 0.25 * l.width * l.height) {
        for (const DiagramIndex::Entry& e : pic.index.query(scene)) {
            take(e.kind, e.index);
        }
        return list;
    }
    // Most of the picture in view: one pass over everything is cheaper than the index, whose cells
    // would list all of it, much of it many times. Edges and stubs are taken without a bounds
    // test (they have no rectangle at hand; what is outside the view is clipped).
    const auto inView = [&](int kind, const LayoutRect& r, size_t i) {
        if (meets(r, scene)) {
            take(kind, static_cast<int>(i));
        }
    };
    for (size_t i = 0; i < l.clusters.size(); ++i) {
        inView(DiagramIndex::Cluster, l.clusters[i].rect, i);
    }
    for (size_t i = 0; i < l.edges.size(); ++i) {
        take(DiagramIndex::Edge, static_cast<int>(i));
    }
    for (size_t i = 0; i < l.ports.size(); ++i) {
        inView(DiagramIndex::Port, l.ports[i].rect, i);
    }
    for (size_t i = 0; i < l.items.size(); ++i) {
        inView(DiagramIndex::Item, l.items[i], i);
    }
    for (size_t i = 0; i < l.inputs.size(); ++i) {
        inView(DiagramIndex::Input, l.inputs[i], i);
    }
    inView(DiagramIndex::Output, l.output, 0);
    for (size_t i = 0; i < l.stubs.size(); ++i) {
        take(DiagramIndex::Stub, static_cast<int>(i));
    }
    return list;
}

// ---------------------------------------------------------------------------------------------
// Painting

GraphDiagram::PaintContext::PaintContext(const GraphDiagram& owner, const LayoutRect& scene,
                                         double atScale)
    : pic(*owner.picture_)
    , layout(pic.layout)
    , scale(atScale) {
    const QPalette& pal = owner.palette();
    dark = pal.color(QPalette::Base).lightness() < 128;
    text = pal.color(QPalette::Text);
    dim = dark ? QColor(160, 170, 185) : QColor(75, 85, 99);
    edgeColour = dark ? QColor(140, 150, 165) : QColor(107, 114, 128);
    highlight = pal.color(QPalette::Highlight);
    matchColour = QColor(245, 158, 11);
    nodeFill = dark ? QColor(38, 42, 50) : QColor(255, 255, 255);
    boxFill = dark ? QColor(40, 54, 78) : QColor(232, 238, 247);
    moduleFill = dark ? QColor(33, 38, 48) : QColor(243, 246, 251);
    blockFill = dark ? QColor(44, 40, 32) : QColor(251, 247, 238);
    functionFill = dark ? QColor(32, 44, 40) : QColor(240, 248, 244);
    frame = dark ? QColor(90, 105, 130) : QColor(154, 169, 194);
    showText = scale >= kTextScale;
    detail = scale >= kDetailScale;
    heat = !owner.moduleMs_.empty();
    shapes = owner.showsRunShapes();
    shapeColour = dark ? QColor(125, 211, 252) : QColor(3, 105, 161);

    titleFont = owner.font();
    titleFont.setPixelSize(static_cast<int>(diagram::kTitleFont));
    titleFont.setBold(true);
    lineFont = owner.font();
    lineFont.setPixelSize(static_cast<int>(diagram::kLineFont));
    smallFont = lineFont;
    smallFont.setPixelSize(8);

    list = owner.drawList(scene, scale);
    // In the order the paint layers' loops take them: clusters, edges, ports, items, inputs and
    // the output, stubs.
    found.reserve(list.clusters.size() + list.edges.size() + list.ports.size() + list.items.size() +
                  list.inputs.size() + list.stubs.size() + 1);
    for (const auto& [kind, indices] :
         {std::pair{DiagramIndex::Cluster, &list.clusters},
          std::pair{DiagramIndex::Edge, &list.edges}, std::pair{DiagramIndex::Port, &list.ports},
          std::pair{DiagramIndex::Item, &list.items}, std::pair{DiagramIndex::Input, &list.inputs},
          std::pair{DiagramIndex::Stub, &list.stubs}}) {
        for (const int index : *indices) {
            found.push_back({kind, index});
        }
    }
    if (list.output) {
        found.push_back({DiagramIndex::Output, 0});
    }
}

void GraphDiagram::paint(QPainter& p, const LayoutRect& scene, double scale) const {
    if (!picture_) {
        return;
    }
    const PaintContext ctx(*this, scene, scale);
    p.setRenderHint(QPainter::Antialiasing, ctx.detail);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    // Clusters (outer first), then edges, ports, items, stubs: the index sorts by kind.
    paintClusters(p, ctx);
    paintEdges(p, ctx);
    paintPorts(p, ctx);
    paintSummaries(p, ctx);
    paintItems(p, ctx);
    paintTerminals(p, ctx);
    paintStubs(p, ctx);
}

void GraphDiagram::paintClusters(QPainter& p, const PaintContext& ctx) const {
    const DiagramLayout& l = ctx.layout;
    for (const auto& e : ctx.found) {
        if (e.kind != DiagramIndex::Cluster) {
            continue;
        }
        const DiagramCluster& c = l.clusters[static_cast<size_t>(e.index)];
        if (c.group == 0) {
            continue;
        }
        const GraphGroup& g = graph_->groups[static_cast<size_t>(c.group)];
        const bool block = g.kind == GraphGroup::Kind::Block;
        QColor fill = block                                  ? ctx.blockFill
                      : g.kind == GraphGroup::Kind::Function ? ctx.functionFill
                                                             : ctx.moduleFill;
        double ms = 0;
        if (ctx.heat && g.kind == GraphGroup::Kind::Module) {
            const auto it = moduleMs_.find(g.module);
            if (it != moduleMs_.end() && maxModuleMs_ > 0) {
                ms = it->second;
                fill = heatColour(ms / maxModuleMs_);
                fill.setAlpha(ctx.dark ? 70 : 90);
            }
        }
        QPen pen(ctx.frame, 1);
        const bool notTaken = blocksNotTaken_.count(c.group) > 0;
        if (block) {
            pen.setStyle(Qt::DashLine);
        }
        if (notTaken) {
            // A branch the run did not take: drawn faint.
            fill.setAlpha(fill.alpha() / 3);
            pen.setColor(ctx.dim);
        }
        p.setPen(pen);
        p.setBrush(fill);
        p.drawRoundedRect(qrect(c.rect), 6, 6);
        if (ctx.showText) {
            p.setFont(ctx.lineFont);
            p.setPen(notTaken ? ctx.dim : ctx.text);
            // A block's mark after a run comes right after its label, where a narrow box keeps it.
            const auto note = blockNotes_.find(c.group);
            QString title =
                q(g.label) +
                (note == blockNotes_.end() ? QString()
                                           : QStringLiteral(" \u00B7 ") + note->second) +
                (g.type.empty() ? QString() : QStringLiteral(" \u00B7 ") + q(g.type));
            if (ms > 0) {
                title += overlayName().isEmpty()
                             ? QStringLiteral(" \u00B7 %1 ms").arg(ms, 0, 'f', 2)
                             : QStringLiteral(" \u00B7 %1").arg(ms, 0, 'g', 3);
            }
            QFont f = ctx.titleFont;
            p.setFont(f);
            p.drawText(
                QRectF(c.rect.x + 8, c.rect.y + 3, c.rect.width - 16, diagram::kGroupTitle - 4),
                Qt::AlignLeft | Qt::AlignVCenter,
                p.fontMetrics().elidedText(title, Qt::ElideRight,
                                           static_cast<int>(c.rect.width - 16)));
        }
    }
}

void GraphDiagram::paintEdges(QPainter& p, const PaintContext& ctx) const {
    const DiagramLayout& l = ctx.layout;
    for (const auto& e : ctx.found) {
        if (e.kind != DiagramIndex::Edge) {
            continue;
        }
        const DiagramEdge& edge = l.edges[static_cast<size_t>(e.index)];
        if (edge.points.size() < 4) {
            continue;
        }
        const bool marked = markedEdges_.count(e.index) > 0;
        p.setPen(QPen(marked ? ctx.highlight : ctx.edgeColour, marked ? 2.0 : 1.0));
        p.setBrush(Qt::NoBrush);
        const LayoutPoint& a = edge.points.front();
        const LayoutPoint& b = edge.points.back();
        if (!ctx.detail) {
            p.drawLine(QPointF(a.x, a.y), QPointF(b.x, b.y));
            continue;
        }
        QPainterPath path(QPointF(a.x, a.y));
        for (size_t i = 1; i + 2 < edge.points.size(); i += 3) {
            path.cubicTo(QPointF(edge.points[i].x, edge.points[i].y),
                         QPointF(edge.points[i + 1].x, edge.points[i + 1].y),
                         QPointF(edge.points[i + 2].x, edge.points[i + 2].y));
        }
        p.drawPath(path);
        // The arrow head, along the last piece.
        const LayoutPoint& c = edge.points[edge.points.size() - 2];
        double dx = b.x - c.x, dy = b.y - c.y;
        const double len = std::hypot(dx, dy);
        if (len > 0.01) {
            dx /= len;
            dy /= len;
            const QPointF tip(b.x, b.y);
            const QPointF left(b.x - 7 * dx + 3.5 * dy, b.y - 7 * dy - 3.5 * dx);
            const QPointF right(b.x - 7 * dx - 3.5 * dy, b.y - 7 * dy + 3.5 * dx);
            p.setBrush(marked ? ctx.highlight : ctx.edgeColour);
            p.setPen(Qt::NoPen);
            p.drawPolygon(QPolygonF{tip, left, right});
        }
        if (ctx.showText && ctx.scale >= 0.8 && !edge.type.empty()) {
            // The value's type (or the shape that flowed) beside the middle of the edge.
            const size_t mid = (edge.points.size() / 2) / 3 * 3;
            const LayoutPoint& m = edge.points[std::min(mid, edge.points.size() - 1)];
            p.setFont(ctx.smallFont);
            p.setPen(marked ? ctx.highlight : ctx.shapes ? ctx.shapeColour : ctx.dim);
            p.drawText(QPointF(m.x + 4, m.y + 3),
                       p.fontMetrics().elidedText(edgeLabel(e.index), Qt::ElideRight, 140));
        }
    }
}

void GraphDiagram::paintPorts(QPainter& p, const PaintContext& ctx) const {
    if (!ctx.detail) {
        return;
    }
    const DiagramLayout& l = ctx.layout;
    p.setPen(Qt::NoPen);
    p.setBrush(ctx.edgeColour);
    for (const auto& e : ctx.found) {
        if (e.kind == DiagramIndex::Port) {
            const LayoutRect& r = l.ports[static_cast<size_t>(e.index)].rect;
            p.drawEllipse(QPointF(r.x + r.width / 2, r.y + r.height / 2), 3, 3);
        }
    }
}

// Groups too small to show what they hold: one box each, over the edges that end inside it,
// named in screen pixels where it has room.
void GraphDiagram::paintSummaries(QPainter& p, const PaintContext& ctx) const {
    const DiagramLayout& l = ctx.layout;
    const DiagramDrawList& list = ctx.list;
    for (const int i : list.summaries) {
        const DiagramCluster& c = l.clusters[static_cast<size_t>(i)];
        const GraphGroup& g = graph_->groups[static_cast<size_t>(c.group)];
        QColor fill = g.kind == GraphGroup::Kind::Block      ? ctx.blockFill.darker(108)
                      : g.kind == GraphGroup::Kind::Function ? ctx.functionFill.darker(108)
                                                             : ctx.boxFill;
        if (ctx.heat && g.kind == GraphGroup::Kind::Module && maxModuleMs_ > 0) {
            if (const auto it = moduleMs_.find(g.module); it != moduleMs_.end()) {
                fill = heatColour(it->second / maxModuleMs_);
            }
        }
        p.setPen(QPen(ctx.frame, 0));
        p.setBrush(fill);
        p.drawRect(qrect(c.rect));
    }
    if (list.labels > 0) {
        const QTransform toDevice = p.transform();
        p.save();
        p.resetTransform();
        QFont labelFont = font();
        labelFont.setPixelSize(11);
        p.setFont(labelFont);
        p.setPen(ctx.text);
        for (const int i : list.summaries) {
            const DiagramCluster& c = l.clusters[static_cast<size_t>(i)];
            const QRectF box = toDevice.mapRect(qrect(c.rect));
            if (box.width() < kLabelWidth || box.height() < kLabelHeight) {
                continue;
            }
            const GraphGroup& g = graph_->groups[static_cast<size_t>(c.group)];
            const auto note = blockNotes_.find(c.group);
            const QString name =
                q(g.label) +
                (note == blockNotes_.end() ? QString()
                                           : QStringLiteral(" \u00B7 ") + note->second) +
                (g.type.empty() ? QString() : QStringLiteral(" \u00B7 ") + q(g.type));
            const QRectF room = box.adjusted(4, 1, -4, -1);
            p.drawText(
                room, Qt::AlignLeft | Qt::AlignTop,
                p.fontMetrics().elidedText(name, Qt::ElideRight, static_cast<int>(room.width())));
        }
        p.restore();
    }
}

void GraphDiagram::paintTerminals(QPainter& p, const PaintContext& ctx) const {
    const DiagramLayout& l = ctx.layout;
    p.setFont(ctx.titleFont);
    for (const auto& e : ctx.found) {
        if (e.kind != DiagramIndex::Input && e.kind != DiagramIndex::Output) {
            continue;
        }
        const LayoutRect& r =
            e.kind == DiagramIndex::Input ? l.inputs[static_cast<size_t>(e.index)] : l.output;
        if (r.width <= 0) {
            continue;
        }
        p.setPen(QPen(ctx.frame, 1));
        p.setBrush(ctx.dark ? QColor(55, 60, 68) : QColor(238, 238, 238));
        p.drawRoundedRect(qrect(r), r.height / 2, r.height / 2);
        if (ctx.showText) {
            p.setPen(ctx.text);
            const QString name = e.kind == DiagramIndex::Input
                                     ? q(graph_->inputs[static_cast<size_t>(e.index)].name)
                                     : tr("output");
            p.drawText(qrect(r), Qt::AlignCenter, name);
        }
    }
}

void GraphDiagram::paintStubs(QPainter& p, const PaintContext& ctx) const {
    if (!ctx.showText) {
        return;
    }
    const DiagramLayout& l = ctx.layout;
    p.setFont(ctx.smallFont);
    p.setPen(ctx.dark ? QColor(251, 191, 36) : QColor(180, 83, 9));
    for (const auto& e : ctx.found) {
        if (e.kind == DiagramIndex::Stub) {
            const DiagramStub& s = l.stubs[static_cast<size_t>(e.index)];
            p.drawText(QPointF(s.at.x, s.at.y), q(s.text));
        }
    }
}

bool GraphDiagram::exportSvg(const QString& path, QString* error) const {
    if (!picture_) {
        if (error) {
            *error = tr("There is no diagram to export yet.");
        }
        return false;
    }
    QSaveFile file(path);
    const std::string svg = toSvg(*graph_, picture_->visible, picture_->layout);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(svg.data(), static_cast<qint64>(svg.size())) !=
            static_cast<qint64>(svg.size()) ||
        !file.commit()) {
        if (error) {
            *error =
                tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        }
        return false;
    }
    return true;
}

QStringList GraphDiagram::exportPng(const QString& path, QString* error, int maxSide) const {
    QStringList written;
    if (!picture_) {
        if (error) {
            *error = tr("There is no diagram to export yet.");
        }
        return written;
    }
    const double width = picture_->layout.width, height = picture_->layout.height;
    const int w = std::max(1, static_cast<int>(std::ceil(width)));
    const int h = std::max(1, static_cast<int>(std::ceil(height)));
    const int columns = (w + maxSide - 1) / maxSide;
    const int rows = (h + maxSide - 1) / maxSide;
    const QFileInfo info(path);
    const QString stem = info.path() + QLatin1Char('/') + info.completeBaseName();
    for (int row = 0; row < rows; ++row) {
        for (int col = 0; col < columns; ++col) {
            const int x = col * maxSide, y = row * maxSide;
            const int tw = std::min(maxSide, w - x), th = std::min(maxSide, h - y);
            QImage image(tw, th, QImage::Format_ARGB32_Premultiplied);
            if (image.isNull()) {
                if (error) {
                    *error = tr("Not enough memory for a %1 x %2 image.").arg(tw).arg(th);
                }
                return {};
            }
            image.fill(palette().color(QPalette::Base));
            QPainter painter(&image);
            painter.translate(-x, -y);
            paint(painter, {double(x), double(y), double(tw), double(th)}, 1.0);
            painter.end();
            const QString file =
                rows * columns == 1
                    ? path
                    : QStringLiteral("%1-r%2-c%3.png").arg(stem).arg(row + 1).arg(col + 1);
            if (!image.save(file, "PNG")) {
                if (error) {
                    *error = tr("Cannot write %1.").arg(QDir::toNativeSeparators(file));
                }
                return {};
            }
            written << file;
        }
    }
    return written;
}

} // namespace scriptscope
