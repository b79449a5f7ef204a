#include "graph_model.h"

#include <format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace scriptscope {

namespace {

// DOT identifiers and labels: quoted, with quotes, backslashes and newlines escaped.
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out + '"';
}

} // namespace

VisibleGraph visibleGraph(const GraphModel& model,
                          const std::function<bool(const GraphGroup&)>& expanded) {
    VisibleGraph visible;
    if (model.groups.empty()) {
        return visible;
    }
    // Which item stands for each group: itself when its parent is open and it is closed; its
    // nearest closed ancestor's item when an ancestor is closed; none (-1) when it is open.
    const size_t groupCount = model.groups.size();
    std::vector<int> representative(groupCount, -1);
    std::vector<bool> open(groupCount, false);
    std::vector<int> groupItem(groupCount, -1);
    for (size_t g = 0; g < groupCount; ++g) { // parents come before children
        const GraphGroup& group = model.groups[g];
        const int parent = group.parent;
        if (parent >= 0 && representative[static_cast<size_t>(parent)] >= 0) {
            representative[g] = representative[static_cast<size_t>(parent)];
            continue;
        }
        open[g] = parent < 0 || expanded(group);
        if (!open[g]) {
            representative[g] = static_cast<int>(g);
        }
    }
    std::vector<int> nodeItem(model.nodes.size(), -1);
    std::set<int> openWithContent;
    for (const GraphNode& node : model.nodes) {
        const int rep = representative[static_cast<size_t>(node.group)];
        if (rep < 0) {
            nodeItem[static_cast<size_t>(node.id)] = static_cast<int>(visible.items.size());
            visible.items.push_back({false, node.id});
            openWithContent.insert(node.group);
            continue;
        }
        int& item = groupItem[static_cast<size_t>(rep)];
        if (item < 0) {
            item = static_cast<int>(visible.items.size());
            visible.items.push_back({true, rep});
            openWithContent.insert(model.groups[static_cast<size_t>(rep)].parent);
        }
        nodeItem[static_cast<size_t>(node.id)] = item;
    }
    // Every open group that holds something, and its open ancestors.
    std::set<int> openGroups;
    for (int g : openWithContent) {
        for (; g >= 0 && !openGroups.count(g); g = model.groups[static_cast<size_t>(g)].parent) {
            openGroups.insert(g);
        }
    }
    visible.openGroups.assign(openGroups.begin(), openGroups.end());
    // Edges between items; those inside one collapsed box vanish, duplicates merge.
    std::set<std::tuple<int, int, int, int, std::string>> seen;
    for (const GraphEdge& edge : model.edges) {
        const int from = edge.from >= 0 ? nodeItem[static_cast<size_t>(edge.from)] : -1;
        const int to = edge.to >= 0 ? nodeItem[static_cast<size_t>(edge.to)] : -1;
        if (from >= 0 && from == to) {
            continue;
        }
        const int fromInput = edge.from >= 0 ? -1 : edge.fromInput;
        const int toOutput = edge.to >= 0 ? -1 : edge.toOutput;
        if (!seen.insert({from, fromInput, to, toOutput, edge.value}).second) {
            continue;
        }
        visible.edges.push_back({from, to, fromInput, toOutput, edge.value, edge.type});
    }
    return visible;
}

// A function group of one or two nodes, or one that is all its module holds, says less than the
// nodes themselves (F.relu, a Dropout that only calls F.dropout): its contents go to its parent.
void foldSmallFunctions(GraphModel& model) {
    const size_t count = model.groups.size();
    std::vector<int> direct(count, 0), total(count, 0), children(count, 0);
    for (const GraphNode& n : model.nodes) {
        ++direct[static_cast<size_t>(n.group)];
    }
    total = direct;
    for (size_t g = count; g-- > 1;) { // children come after their parents
        const auto parent = static_cast<size_t>(model.groups[g].parent);
        total[parent] += total[g];
        ++children[parent];
    }
    std::vector<int> into(count, -1); // a folded group: the group its contents go to
    for (const bool sole : {false, true}) {
        for (size_t g = count; g-- > 1;) {
            const GraphGroup& group = model.groups[g];
            if (group.kind != GraphGroup::Kind::Function || into[g] >= 0) {
                continue;
            }
            const auto parent = static_cast<size_t>(group.parent);
            const bool inModule = model.groups[parent].kind == GraphGroup::Kind::Module;
            if (sole ? inModule && direct[parent] == 0 && children[parent] == 1 : total[g] < 3) {
                into[g] = group.parent;
                direct[parent] += direct[g];
                children[parent] += children[g] - 1;
            }
        }
    }
    std::vector<int> renumbered(count, -1);
    std::vector<GraphGroup> kept;
    for (size_t g = 0; g < count; ++g) {
        int target = static_cast<int>(g);
        while (into[static_cast<size_t>(target)] >= 0) {
            target = into[static_cast<size_t>(target)];
        }
        if (target != static_cast<int>(g)) {
            renumbered[g] = renumbered[static_cast<size_t>(target)]; // a parent: already numbered
            continue;
        }
        GraphGroup group = model.groups[g];
        group.id = static_cast<int>(kept.size());
        if (group.parent >= 0) {
            group.parent = renumbered[static_cast<size_t>(group.parent)];
            group.depth = kept[static_cast<size_t>(group.parent)].depth + 1;
        }
        renumbered[g] = group.id;
        kept.push_back(std::move(group));
    }
    if (kept.size() == count) {
        return;
    }
    for (GraphNode& n : model.nodes) {
        n.group = renumbered[static_cast<size_t>(n.group)];
    }
    model.groups = std::move(kept);
}

void markRepeatedGroups(GraphModel& model) {
    const size_t groups = model.groups.size();
    const auto parentOf = [&](int g) {
        return g >= 0 && static_cast<size_t>(g) < groups
                   ? model.groups[static_cast<size_t>(g)].parent
                   : -1;
    };
    // Each group's members in the graph's order: its own nodes, and each child group where its
    // first node comes. A member is a node id (>= 0) or ~group.
    std::vector<std::vector<int>> members(groups);
    std::vector<char> listed(groups, 0);
    for (const GraphNode& n : model.nodes) {
        if (n.group < 0 || static_cast<size_t>(n.group) >= groups) {
            continue;
        }
        members[static_cast<size_t>(n.group)].push_back(n.id);
        for (int child = n.group, parent = parentOf(child);
             parent >= 0 && !listed[static_cast<size_t>(child)];
             child = parent, parent = parentOf(parent)) {
            listed[static_cast<size_t>(child)] = 1;
            members[static_cast<size_t>(parent)].push_back(~child);
        }
    }
    // The member of `group` that holds node `node`, as its index in members[group]; -1 outside.
    std::vector<std::map<int, int>> indexOf(groups);
    for (size_t g = 0; g < groups; ++g) {
        for (size_t i = 0; i < members[g].size(); ++i) {
            indexOf[g][members[g][i]] = static_cast<int>(i);
        }
    }
    const auto localIndex = [&](int group, int node) {
        if (node < 0 || static_cast<size_t>(node) >= model.nodes.size()) {
            return -1;
        }
        int member = node;
        for (int g = model.nodes[static_cast<size_t>(node)].group; g >= 0;
             member = ~g, g = parentOf(g)) {
            if (g == group) {
                const auto it = indexOf[static_cast<size_t>(group)].find(member);
                return it == indexOf[static_cast<size_t>(group)].end() ? -1 : it->second;
            }
        }
        return -1;
    };
    // The values flowing into each node, by their producer.
    std::vector<std::vector<int>> producers(model.nodes.size());
    for (const GraphEdge& e : model.edges) {
        if (e.to >= 0 && static_cast<size_t>(e.to) < model.nodes.size()) {
            producers[static_cast<size_t>(e.to)].push_back(e.from);
        }
    }
    // Signatures, innermost groups first (deeper groups before their parents).
    std::vector<int> order(groups);
    for (size_t g = 0; g < groups; ++g) {
        order[g] = static_cast<int>(g);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return model.groups[static_cast<size_t>(a)].depth >
               model.groups[static_cast<size_t>(b)].depth;
    });
    std::map<std::string, int> classes;
    std::vector<int> signature(groups, -1);
    for (const int g : order) {
        const GraphGroup& group = model.groups[static_cast<size_t>(g)];
        std::string text = (group.kind == GraphGroup::Kind::Block      ? "B:"
                            : group.kind == GraphGroup::Kind::Function ? "F:" + group.label
                                                                       : "M:") +
                           group.type + "|";
        for (const int member : members[static_cast<size_t>(g)]) {
            if (member < 0) {
                text += "G" + std::to_string(signature[static_cast<size_t>(~member)]) + ";";
                continue;
            }
            const GraphNode& n = model.nodes[static_cast<size_t>(member)];
            text += n.kind + "(";
            for (const int from : producers[static_cast<size_t>(member)]) {
                text += std::to_string(localIndex(g, from)) + ",";
            }
            for (const GraphAttribute& a : n.attributes) {
                text += a.name + ",";
            }
            text += ")" + std::to_string(n.outputs.size()) + ";";
        }
        signature[static_cast<size_t>(g)] =
            classes.emplace(std::move(text), static_cast<int>(classes.size())).first->second;
    }
    std::map<int, std::vector<int>> byClass; // module groups with contents, in the graph's order
    for (size_t g = 1; g < groups; ++g) {
        if (model.groups[g].kind == GraphGroup::Kind::Module && !members[g].empty()) {
            byClass[signature[g]].push_back(static_cast<int>(g));
        }
    }
    for (const auto& [cls, same] : byClass) {
        if (same.size() < 2) {
            continue;
        }
        // The first in the graph's order: the one whose first node comes first.
        const auto firstNode = [&](int g) {
            int at = g;
            while (!members[static_cast<size_t>(at)].empty() &&
                   members[static_cast<size_t>(at)].front() < 0) {
                at = ~members[static_cast<size_t>(at)].front();
            }
            return members[static_cast<size_t>(at)].empty()
                       ? 0
                       : members[static_cast<size_t>(at)].front();
        };
        const int first = *std::min_element(
            same.begin(), same.end(), [&](int a, int b) { return firstNode(a) < firstNode(b); });
        for (const int g : same) {
            model.groups[static_cast<size_t>(g)].repeats = static_cast<int>(same.size());
            model.groups[static_cast<size_t>(g)].sameAs = g == first ? -1 : first;
        }
    }
}

VisibleGraph visibleGraph(const GraphModel& model, int depth) {
    return visibleGraph(model,
                        [depth](const GraphGroup& g) { return depth < 0 || g.depth <= depth; });
}

std::string toDot(const GraphModel& model, const VisibleGraph& visible) {
    std::ostringstream dot;
    dot << "digraph "
        << quoted(model.modulePath.empty() ? model.method : model.modulePath + "." + model.method)
        << " {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
           "fontname=\"sans-serif\", fontsize=10];\n  edge [fontname=\"sans-serif\", "
           "fontsize=8];\n";
    // Items by the open group they are drawn in.
    std::map<int, std::vector<size_t>> itemsIn;
    for (size_t i = 0; i < visible.items.size(); ++i) {
        const VisibleItem& item = visible.items[i];
        const int group = item.isGroup ? model.groups[static_cast<size_t>(item.id)].parent
                                       : model.nodes[static_cast<size_t>(item.id)].group;
        itemsIn[group].push_back(i);
    }
    std::map<int, std::vector<int>> children;
    for (const int g : visible.openGroups) {
        children[model.groups[static_cast<size_t>(g)].parent].push_back(g);
    }
    auto itemLine = [&](size_t i, const std::string& indent) {
        const VisibleItem& item = visible.items[i];
        dot << indent << "i" << i << " [label=";
        if (item.isGroup) {
            const GraphGroup& g = model.groups[static_cast<size_t>(item.id)];
            std::string label = g.label + "\n" + g.type;
            if (g.parameters > 0) {
                label += "\n" + formatCount(g.parameters) + " parameters";
            }
            dot << quoted(label) << ", fillcolor=\"#e8eef7\", penwidth=2";
        } else {
            const GraphNode& n = model.nodes[static_cast<size_t>(item.id)];
            std::string label = n.kind;
            for (const auto& a : n.attributes) {
                label += "\n" + a.name + " " + a.value;
            }
            dot << quoted(label);
        }
        dot << "];\n";
    };
    std::function<void(int, const std::string&)> emitGroup = [&](int g, const std::string& indent) {
        for (const size_t i : itemsIn[g]) {
            itemLine(i, indent);
        }
        for (const int child : children[g]) {
            const GraphGroup& c = model.groups[static_cast<size_t>(child)];
            dot << indent << "subgraph cluster_" << child << " {\n"
                << indent << "  label=" << quoted(c.label + (c.type.empty() ? "" : " · " + c.type))
                << ";\n"
                << indent << "  style=rounded;\n";
            emitGroup(child, indent + "  ");
            dot << indent << "}\n";
        }
    };
    for (size_t i = 0; i < model.inputs.size(); ++i) {
        dot << "  in" << i << " [label=" << quoted(model.inputs[i].name)
            << ", shape=ellipse, fillcolor=\"#eeeeee\"];\n";
    }
    dot << "  out [label=\"output\", shape=ellipse, fillcolor=\"#eeeeee\"];\n";
    emitGroup(0, "  ");
    for (const VisibleEdge& e : visible.edges) {
        dot << "  "
            << (e.from >= 0 ? "i" + std::to_string(e.from) : "in" + std::to_string(e.fromInput))
            << " -> " << (e.to >= 0 ? "i" + std::to_string(e.to) : std::string("out"))
            << " [label=" << quoted(e.type) << "];\n";
    }
    dot << "}\n";
    return dot.str();
}

} // namespace scriptscope
