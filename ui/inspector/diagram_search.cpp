// The diagram's search and selection: matches, the selected node, what is marked up- and
// downstream.
#include "diagram_support.h"

#include "graph_diagram.h"
#include <QLabel>

#include <deque>

namespace scriptscope {

using namespace diagram_ui;

// ---------------------------------------------------------------------------------------------
// Search

int GraphDiagram::search(const QString& text) {
    searchText_ = text.trimmed();
    matches_.clear();
    matchSet_.clear();
    matchGroups_.clear();
    currentMatch_ = -1;
    if (hasGraph_ && !searchText_.isEmpty()) {
        const std::string needle = searchText_.toLower().toStdString();
        auto has = [&needle](std::string hay) {
            std::transform(hay.begin(), hay.end(), hay.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            return hay.find(needle) != std::string::npos;
        };
        for (const GraphNode& n : graph_->nodes) {
            bool match = has(n.kind) || has(n.module);
            for (const GraphPort& out : n.outputs) {
                match = match || has(out.name);
            }
            if (match) {
                matches_.push_back(n.id);
                matchSet_.insert(n.id);
                for (int g = n.group; g >= 0 && matchGroups_.insert(g).second;
                     g = graph_->groups[static_cast<size_t>(g)].parent) {
                }
            }
        }
    }
    searchCount_->setText(searchStatus());
    canvas_->update();
    return matchCount();
}

QString GraphDiagram::searchStatus() const {
    if (searchText_.isEmpty()) {
        return {};
    }
    if (matches_.empty()) {
        return tr("No match");
    }
    return currentMatch_ < 0 ? counted(matchCount(), tr("match"), tr("matches"))
                             : tr("%1 of %2").arg(currentMatch_ + 1).arg(matchCount());
}

void GraphDiagram::nextMatch() {
    if (matches_.empty()) {
        return;
    }
    currentMatch_ = (currentMatch_ + 1) % matchCount();
    selectNode(matches_[static_cast<size_t>(currentMatch_)]);
    searchCount_->setText(searchStatus());
}

void GraphDiagram::previousMatch() {
    if (matches_.empty()) {
        return;
    }
    currentMatch_ = currentMatch_ <= 0 ? matchCount() - 1 : currentMatch_ - 1;
    selectNode(matches_[static_cast<size_t>(currentMatch_)]);
    searchCount_->setText(searchStatus());
}

bool GraphDiagram::isMatchItem(int item) const {
    if (matchSet_.empty() || !picture_) {
        return false;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    // A node that matches, or a collapsed group holding one.
    return v.isGroup ? matchGroups_.count(v.id) > 0 : matchSet_.count(v.id) > 0;
}

// ---------------------------------------------------------------------------------------------
// Selection

void GraphDiagram::selectNode(int node, bool quiet) {
    if (!hasGraph_ || node >= static_cast<int>(graph_->nodes.size())) {
        return;
    }
    selectedNode_ = node;
    markAround(-1);
    selectedItem_ = -1;
    if (node >= 0) {
        const int item = itemOfNode(node);
        if (item < 0) {
            centreNodeAfterLayout_ = node;
            reveal(node);
        } else {
            clickedItem(item);
            canvas_->centreOn(picture_->layout.items[static_cast<size_t>(item)]);
        }
    }
    updateInfo();
    canvas_->update();
    if (!quiet) {
        Q_EMIT nodeSelected(node);
    }
}

void GraphDiagram::markAround(int item) {
    marked_.clear();
    neighbours_.clear();
    markedEdges_.clear();
    if (item < 0 || !picture_) {
        return;
    }
    marked_.insert(item);
    // In a comparison, the node in the same place of the other group too.
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    if (!v.isGroup) {
        if (const int other = itemOfNode(counterpart(v.id)); other >= 0) {
            marked_.insert(other);
        }
    }
    for (const int e : picture_->itemEdges[static_cast<size_t>(item)]) {
        markedEdges_.insert(e);
        for (const int k : picture_->layout.edges[static_cast<size_t>(e)].edges) {
            const VisibleEdge& edge = picture_->visible.edges[static_cast<size_t>(k)];
            for (const int i : {edge.from, edge.to}) {
                if (i >= 0 && i != item) {
                    neighbours_.insert(i);
                }
            }
        }
    }
}

void GraphDiagram::clickedItem(int item) {
    selectedItem_ = item;
    markAround(item);
    if (item < 0 || !picture_) {
        selectedNode_ = -1;
        updateInfo();
        canvas_->update();
        return;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    selectedNode_ = v.isGroup ? -1 : v.id;
    updateInfo();
    canvas_->update();
}

std::set<int> GraphDiagram::reach(int item, bool upstream) const {
    std::set<int> seen{item};
    if (!picture_) {
        return seen;
    }
    std::vector<std::vector<int>> next(picture_->visible.items.size());
    for (const VisibleEdge& e : picture_->visible.edges) {
        if (e.from >= 0 && e.to >= 0) {
            next[static_cast<size_t>(upstream ? e.to : e.from)].push_back(upstream ? e.from : e.to);
        }
    }
    std::deque<int> todo{item};
    while (!todo.empty()) {
        const int at = todo.front();
        todo.pop_front();
        for (const int n : next[static_cast<size_t>(at)]) {
            if (seen.insert(n).second) {
                todo.push_back(n);
            }
        }
    }
    return seen;
}

void GraphDiagram::selectUpstream() {
    markReach(true);
}

void GraphDiagram::selectDownstream() {
    markReach(false);
}

void GraphDiagram::markReach(bool upstream) {
    if (selectedItem_ < 0) {
        return;
    }
    marked_ = reach(selectedItem_, upstream);
    markedEdges_.clear();
    for (const int i : marked_) {
        for (const int e : picture_->itemEdges[static_cast<size_t>(i)]) {
            markedEdges_.insert(e);
        }
    }
    status_->setText(counted(static_cast<qsizetype>(marked_.size()), tr("item"), tr("items")) +
                     (upstream ? tr(" upstream of the selection, itself included")
                               : tr(" downstream of the selection, itself included")));
    canvas_->update();
}

void GraphDiagram::itemActivated(int item) {
    if (!picture_ || item < 0) {
        return;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    if (v.isGroup) {
        setExpanded(v.id, true);
    }
}

void GraphDiagram::clusterActivated(int group) {
    if (group > 0) {
        setExpanded(group, false);
    }
}

} // namespace scriptscope
