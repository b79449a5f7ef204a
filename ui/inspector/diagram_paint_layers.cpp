// How the diagram is painted, continued: the nodes layer, the largest of paint()'s layers.
#include "diagram_support.h"
#include "graph_diagram.h"

#include <QPainter>

#include <algorithm>

namespace scriptscope {

using namespace diagram_ui;

void GraphDiagram::paintItems(QPainter& p, const PaintContext& ctx) const {
    const DiagramLayout& l = ctx.layout;
    for (const auto& e : ctx.found) {
        if (e.kind != DiagramIndex::Item) {
            continue;
        }
        const size_t i = static_cast<size_t>(e.index);
        const VisibleItem& v = ctx.pic.visible.items[i];
        const LayoutRect& r = l.items[i];
        QColor fill = v.isGroup ? ctx.boxFill : ctx.nodeFill;
        double ms = 0;
        QString msText;
        if (ctx.heat) {
            ms = itemMs(e.index, nullptr);
            const double max = v.isGroup ? maxModuleMs_ : maxOperatorMs_;
            if (ms > 0 && max > 0) {
                fill = heatColour(ms / max);
                if (ctx.dark) {
                    fill = fill.darker(170);
                }
            }
        }
        const bool selected = static_cast<int>(i) == selectedItem_;
        const bool marked = marked_.count(e.index) > 0;
        const bool neighbour = neighbours_.count(e.index) > 0;
        const bool match = isMatchItem(e.index);
        QPen pen(v.isGroup ? (ctx.dark ? QColor(110, 140, 200) : QColor(91, 123, 178)) : ctx.frame,
                 v.isGroup ? 2 : 1);
        if (match) {
            pen = QPen(ctx.matchColour, 2.5);
        }
        if (neighbour) {
            pen = QPen(ctx.highlight.lighter(130), 2);
        }
        if (marked || selected) {
            pen = QPen(ctx.highlight, 3);
        }
        p.setPen(ctx.detail ? pen : Qt::NoPen);
        p.setBrush(ctx.detail ? fill : (marked || match ? pen.color() : pen.color()));
        if (ctx.detail) {
            p.drawRoundedRect(qrect(r), 4, 4);
        } else {
            p.drawRect(qrect(r));
        }
        if (!ctx.showText) {
            continue;
        }
        const ItemText& t = l.texts[i];
        const double textWidth = r.width - 2 * diagram::kPadding + 4;
        double y = r.y + diagram::kPadding - 3;
        double titleWidth = textWidth;
        // A collapsed block's mark after a run ("ran", "not taken", "×4"), right-aligned.
        const auto note = v.isGroup ? blockNotes_.find(v.id) : blockNotes_.end();
        if (note != blockNotes_.end() && !(ctx.heat && ms > 0)) {
            p.setFont(ctx.smallFont);
            p.setPen(blocksNotTaken_.count(v.id) ? ctx.dim : ctx.text);
            p.drawText(QRectF(r.x + diagram::kPadding, y, textWidth, diagram::kTitleHeight),
                       Qt::AlignRight | Qt::AlignVCenter, note->second);
            titleWidth =
                std::max(20.0, textWidth - p.fontMetrics().horizontalAdvance(note->second) - 6);
        }
        if (ctx.heat && ms > 0) { // the time (or value), right-aligned on the title's line
            p.setFont(ctx.smallFont);
            const QString label = overlayName().isEmpty()
                                      ? QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 1 ? 3 : 2)
                                      : QString::number(ms, 'g', 3);
            p.setPen(ctx.dark ? QColor(255, 220, 190) : QColor(17, 24, 39));
            p.drawText(QRectF(r.x + diagram::kPadding, y, textWidth, diagram::kTitleHeight),
                       Qt::AlignRight | Qt::AlignVCenter, label);
            titleWidth = std::max(20.0, textWidth - p.fontMetrics().horizontalAdvance(label) - 6);
        }
        p.setPen(ctx.heat && ms > 0 && !ctx.dark ? QColor(17, 24, 39) : ctx.text);
        p.setFont(ctx.titleFont);
        p.drawText(
            QRectF(r.x + diagram::kPadding, y, titleWidth, diagram::kTitleHeight),
            Qt::AlignLeft | Qt::AlignVCenter,
            p.fontMetrics().elidedText(q(t.title), Qt::ElideRight, static_cast<int>(titleWidth)));
        y += diagram::kTitleHeight;
        p.setFont(ctx.lineFont);
        p.setPen(ctx.heat && ms > 0 && !ctx.dark ? QColor(55, 65, 81) : ctx.dim);
        for (const std::string& line : t.lines) {
            p.drawText(
                QRectF(r.x + diagram::kPadding, y, textWidth, diagram::kLineHeight),
                Qt::AlignLeft | Qt::AlignVCenter,
                p.fontMetrics().elidedText(q(line), Qt::ElideRight, static_cast<int>(textWidth)));
            y += diagram::kLineHeight;
        }
    }
}

} // namespace scriptscope
