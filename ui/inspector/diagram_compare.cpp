// Two groups marked identical (one transformer layer and another), open side by side: each node
// of one has a counterpart in the other, marked with it when either is selected.
#include "diagram_support.h"

#include "graph_diagram.h"

#include <QLabel>

#include <algorithm>

namespace scriptscope {

using namespace diagram_ui;

namespace {

// The nodes inside a group, its nested groups' included, in the graph's order.
std::vector<int> nodesInside(const GraphModel& graph, int group) {
    std::vector<int> inside;
    for (const GraphNode& n : graph.nodes) {
        for (int at = n.group; at >= 0; at = graph.groups[static_cast<size_t>(at)].parent) {
            if (at == group) {
                inside.push_back(n.id);
                break;
            }
        }
    }
    return inside;
}

} // namespace

std::vector<int> GraphDiagram::identicalGroups(int group) const {
    std::vector<int> same;
    if (!hasGraph_ || group <= 0 || group >= static_cast<int>(graph_->groups.size())) {
        return same;
    }
    const GraphGroup& g = graph_->groups[static_cast<size_t>(group)];
    if (g.repeats < 2) {
        return same;
    }
    const int first = g.sameAs >= 0 ? g.sameAs : g.id;
    for (const GraphGroup& other : graph_->groups) {
        if (other.id != group && (other.id == first || other.sameAs == first)) {
            same.push_back(other.id);
        }
    }
    return same;
}

bool GraphDiagram::compareGroups(int a, int b) {
    const auto same = identicalGroups(a);
    if (std::find(same.begin(), same.end(), b) == same.end()) {
        return false;
    }
    // Identical contents list the same operators in the same order: the k-th node of one is the
    // k-th of the other. Checked, not assumed.
    const std::vector<int> left = nodesInside(*graph_, a), right = nodesInside(*graph_, b);
    if (left.size() != right.size()) {
        return false;
    }
    Comparison comparison{a, b, {}};
    for (size_t i = 0; i < left.size(); ++i) {
        const GraphNode& l = graph_->nodes[static_cast<size_t>(left[i])];
        const GraphNode& r = graph_->nodes[static_cast<size_t>(right[i])];
        if (l.kind != r.kind) {
            return false;
        }
        comparison.counterparts.emplace(l.id, r.id);
        comparison.counterparts.emplace(r.id, l.id);
    }
    compare_ = std::move(comparison);
    // Both open with everything inside them, and the groups around them.
    for (const GraphGroup& g : graph_->groups) {
        for (int at = g.id; at > 0; at = graph_->groups[static_cast<size_t>(at)].parent) {
            if (at == a || at == b) {
                expanded_.insert(g.id);
                break;
            }
        }
    }
    for (const int side : {a, b}) {
        for (int at = graph_->groups[static_cast<size_t>(side)].parent; at > 0;
             at = graph_->groups[static_cast<size_t>(at)].parent) {
            expanded_.insert(at);
        }
    }
    showComparedAfterLayout_ = true;
    requestLayout();
    markAround(selectedItem_);
    updateInfo();
    canvas_->update();
    return true;
}

void GraphDiagram::stopComparing() {
    compare_ = Comparison{};
    showComparedAfterLayout_ = false;
    markAround(selectedItem_);
    updateInfo();
    canvas_->update();
}

int GraphDiagram::counterpart(int node) const {
    const auto it = compare_.counterparts.find(node);
    return it == compare_.counterparts.end() ? -1 : it->second;
}

void GraphDiagram::showCompared() {
    if (!picture_ || compare_.a < 0) {
        return;
    }
    double left = 0, top = 0, right = 0, bottom = 0;
    bool any = false;
    for (const DiagramCluster& c : picture_->layout.clusters) {
        if (c.group != compare_.a && c.group != compare_.b) {
            continue;
        }
        left = any ? std::min(left, c.rect.x) : c.rect.x;
        top = any ? std::min(top, c.rect.y) : c.rect.y;
        right = any ? std::max(right, c.rect.x + c.rect.width) : c.rect.x + c.rect.width;
        bottom = any ? std::max(bottom, c.rect.y + c.rect.height) : c.rect.y + c.rect.height;
        any = true;
    }
    if (any) {
        canvas_->showRect({left, top, right - left, bottom - top});
    }
}

QString GraphDiagram::comparisonText() const {
    if (compare_.a < 0) {
        return QString();
    }
    const auto name = [this](int group) {
        return groupName(graph_->groups[static_cast<size_t>(group)]).toHtmlEscaped();
    };
    if (selectedNode_ >= 0) {
        const int other = counterpart(selectedNode_);
        if (other < 0) {
            return QString();
        }
        const GraphNode& n = graph_->nodes[static_cast<size_t>(other)];
        QString text = tr("Its counterpart: <b>%1</b> in <code>%2</code>, IR line %3")
                           .arg(q(n.kind).toHtmlEscaped(), q(n.module).toHtmlEscaped())
                           .arg(n.irLine);
        const auto here = nodeValues_.find(selectedNode_), there = nodeValues_.find(other);
        if (here != nodeValues_.end() && there != nodeValues_.end()) {
            text += tr(" · %1 here %2, there %3")
                        .arg(overlayName().toHtmlEscaped())
                        .arg(here->second, 0, 'g', 4)
                        .arg(there->second, 0, 'g', 4);
        }
        return text;
    }
    return tr("Comparing <code>%1</code> with <code>%2</code>, which is identical: select a node "
              "in one to mark its counterpart in the other.")
        .arg(name(compare_.a), name(compare_.b));
}

} // namespace scriptscope
