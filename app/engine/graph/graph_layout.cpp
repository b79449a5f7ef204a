#include "graph_layout.h"

#include <child_process.h>
#include <format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>
#include <unistd.h>

namespace scriptscope {

namespace {

size_t utf8Length(const std::string& text) {
    size_t n = 0;
    for (const unsigned char c : text) {
        n += (c & 0xC0) != 0x80;
    }
    return n;
}

std::string number(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f", v);
    return buffer;
}

const GraphGroup& groupOf(const GraphModel& model, int id) {
    return model.groups[static_cast<size_t>(id)];
}

} // namespace

std::string elided(const std::string& text, size_t chars) {
    if (utf8Length(text) <= chars) {
        return text;
    }
    std::string out;
    size_t n = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if ((c & 0xC0) != 0x80 && ++n > chars - 1) {
            break;
        }
        out += text[i];
    }
    return out + "\xE2\x80\xA6";
}

std::vector<size_t> nodesPerGroup(const GraphModel& model) {
    std::vector<size_t> count(model.groups.size(), 0);
    for (const GraphNode& n : model.nodes) {
        for (int at = n.group; at >= 0; at = groupOf(model, at).parent) {
            ++count[static_cast<size_t>(at)];
        }
    }
    return count;
}

ItemText itemText(const GraphModel& model, const VisibleItem& item,
                  const std::vector<size_t>& nodesIn) {
    ItemText text;
    if (item.isGroup) {
        const GraphGroup& g = groupOf(model, item.id);
        text.title = elided(g.label, diagram::kMaxLineChars);
        if (!g.type.empty()) {
            text.lines.push_back(elided(g.type, diagram::kMaxLineChars));
        }
        const size_t nodes = nodesIn[static_cast<size_t>(g.id)];
        std::string facts =
            formatCount(static_cast<int64_t>(nodes)) + (nodes == 1 ? " node" : " nodes");
        if (g.parameters > 0) {
            facts += " · " + formatCount(g.parameters) + " parameters";
        }
        text.lines.push_back(facts);
        if (g.repeats > 1) {
            const GraphGroup* first = g.sameAs >= 0 ? &groupOf(model, g.sameAs) : nullptr;
            text.lines.push_back(elided(
                "×" + std::to_string(g.repeats) +
                    (first ? ", identical to " + first->module : ", the first of identical groups"),
                diagram::kMaxLineChars));
        }
        return text;
    }
    const GraphNode& n = model.nodes[static_cast<size_t>(item.id)];
    text.title = elided(n.kind, diagram::kMaxLineChars);
    const size_t shown = std::min(n.attributes.size(), diagram::kMaxAttributeLines);
    for (size_t i = 0; i < shown; ++i) {
        const GraphAttribute& a = n.attributes[i];
        text.lines.push_back(elided(a.name + " " + a.value, diagram::kMaxLineChars));
    }
    if (n.attributes.size() > shown) {
        text.lines.push_back("+" + std::to_string(n.attributes.size() - shown) + " more");
    }
    return text;
}

void itemSize(const ItemText& text, bool box, double& width, double& height) {
    double w = static_cast<double>(utf8Length(text.title)) * diagram::kTitleAdvance;
    for (const std::string& line : text.lines) {
        w = std::max(w, static_cast<double>(utf8Length(line)) * diagram::kLineAdvance);
    }
    width = std::max(box ? 110.0 : 72.0, std::ceil(w + 2 * diagram::kPadding));
    height = std::ceil(2 * diagram::kPadding - 4 + diagram::kTitleHeight +
                       diagram::kLineHeight * static_cast<double>(text.lines.size()));
}

// ---------------------------------------------------------------------------------------------
// Scenes

namespace {

struct SceneBuilder {
    const GraphModel& model;
    const VisibleGraph& visible;
    std::vector<LayoutScene> scenes;
    std::map<int, int> sceneOfGroup;
    std::vector<int> sceneParent;          // per scene: the parent scene (-1 for the root)
    std::vector<int> groupItemInParent;    // per scene: its Group item in the parent scene
    std::vector<int> itemScene, itemIndex; // per visible item
    std::vector<int> inputItems;
    int outputItem = -1;
    std::vector<ItemText> texts;                             // per visible item
    std::map<std::tuple<int, bool, std::string>, int> ports; // (scene, in, value) -> item
    std::map<std::tuple<int, int, int, std::string>, int> edgeOf;

    SceneBuilder(const GraphModel& m, const VisibleGraph& v)
        : model(m)
        , visible(v) {}

    int addItem(int scene, SceneItem item) {
        auto& items = scenes[static_cast<size_t>(scene)].items;
        items.push_back(std::move(item));
        return static_cast<int>(items.size()) - 1;
    }

    int port(int scene, bool in, const std::string& value) {
        const auto key = std::make_tuple(scene, in, value);
        const auto it = ports.find(key);
        if (it != ports.end()) {
            return it->second;
        }
        SceneItem item;
        item.kind = in ? SceneItem::Kind::InPort : SceneItem::Kind::OutPort;
        item.value = value;
        item.width = item.height = diagram::kPortSize;
        const int index = addItem(scene, item);
        ports.emplace(key, index);
        return index;
    }

    void addEdge(int scene, int from, int to, const std::string& value, int edge) {
        const auto key = std::make_tuple(scene, from, to, value);
        auto it = edgeOf.find(key);
        auto& edges = scenes[static_cast<size_t>(scene)].edges;
        if (it == edgeOf.end()) {
            it = edgeOf.emplace(key, static_cast<int>(edges.size())).first;
            edges.push_back({from, to, value, {}});
        }
        edges[static_cast<size_t>(it->second)].edges.push_back(edge);
    }

    void build() {
        std::set<int> open(visible.openGroups.begin(), visible.openGroups.end());
        open.insert(0);
        for (const int g : open) { // ids ascending: parents before children
            const int parent = groupOf(model, g).parent;
            LayoutScene scene;
            scene.group = g;
            scenes.push_back(std::move(scene));
            const int index = static_cast<int>(scenes.size()) - 1;
            sceneOfGroup[g] = index;
            const auto p = parent >= 0 ? sceneOfGroup.find(parent) : sceneOfGroup.end();
            if (p == sceneOfGroup.end()) {
                sceneParent.push_back(-1);
                groupItemInParent.push_back(-1);
                continue;
            }
            sceneParent.push_back(p->second);
            SceneItem item;
            item.kind = SceneItem::Kind::Group;
            item.ref = g;
            groupItemInParent.push_back(addItem(p->second, item));
        }
        const int root = sceneOfGroup[0];
        for (size_t i = 0; i < model.inputs.size(); ++i) {
            SceneItem item;
            item.kind = SceneItem::Kind::Input;
            item.ref = static_cast<int>(i);
            item.width =
                std::max(56.0, std::ceil(static_cast<double>(utf8Length(model.inputs[i].name)) *
                                             diagram::kTitleAdvance +
                                         2 * diagram::kPadding));
            item.height = 24;
            inputItems.push_back(addItem(root, item));
        }
        SceneItem output;
        output.kind = SceneItem::Kind::Output;
        output.width = 64;
        output.height = 24;
        outputItem = addItem(root, output);

        itemScene.assign(visible.items.size(), root);
        itemIndex.assign(visible.items.size(), -1);
        const std::vector<size_t> nodesIn = nodesPerGroup(model);
        texts.reserve(visible.items.size());
        for (size_t i = 0; i < visible.items.size(); ++i) {
            const VisibleItem& v = visible.items[i];
            const int group = v.isGroup ? groupOf(model, v.id).parent
                                        : model.nodes[static_cast<size_t>(v.id)].group;
            const auto s = sceneOfGroup.find(group);
            itemScene[i] = s != sceneOfGroup.end() ? s->second : root;
            SceneItem item;
            item.kind = v.isGroup ? SceneItem::Kind::Box : SceneItem::Kind::Node;
            item.ref = static_cast<int>(i);
            texts.push_back(itemText(model, v, nodesIn));
            itemSize(texts.back(), v.isGroup, item.width, item.height);
            itemIndex[i] = addItem(itemScene[i], item);
        }

        for (size_t k = 0; k < visible.edges.size(); ++k) {
            route(static_cast<int>(k));
        }
        for (LayoutScene& scene : scenes) {
            foldHubs(scene);
        }
    }

    void route(int k) {
        const VisibleEdge& e = visible.edges[static_cast<size_t>(k)];
        const int root = sceneOfGroup[0];
        int sourceScene = root, source = -1, targetScene = root, target = outputItem;
        if (e.from >= 0) {
            sourceScene = itemScene[static_cast<size_t>(e.from)];
            source = itemIndex[static_cast<size_t>(e.from)];
        } else if (e.fromInput >= 0 && static_cast<size_t>(e.fromInput) < inputItems.size()) {
            source = inputItems[static_cast<size_t>(e.fromInput)];
        } else {
            return;
        }
        if (e.to >= 0) {
            targetScene = itemScene[static_cast<size_t>(e.to)];
            target = itemIndex[static_cast<size_t>(e.to)];
        }
        std::set<int> targetAncestors;
        for (int s = targetScene; s >= 0; s = sceneParent[static_cast<size_t>(s)]) {
            targetAncestors.insert(s);
        }
        while (!targetAncestors.count(sourceScene)) { // out of the source's groups
            const int out = port(sourceScene, false, e.value);
            addEdge(sourceScene, source, out, e.value, k);
            source = groupItemInParent[static_cast<size_t>(sourceScene)];
            sourceScene = sceneParent[static_cast<size_t>(sourceScene)];
        }
        while (targetScene != sourceScene) { // into the target's groups
            const int in = port(targetScene, true, e.value);
            addEdge(targetScene, in, target, e.value, k);
            target = groupItemInParent[static_cast<size_t>(targetScene)];
            targetScene = sceneParent[static_cast<size_t>(targetScene)];
        }
        addEdge(sourceScene, source, target, e.value, k);
    }

    static void foldHubs(LayoutScene& scene) {
        std::map<std::pair<int, std::string>, std::vector<size_t>> uses;
        for (size_t i = 0; i < scene.edges.size(); ++i) {
            const SceneEdge& edge = scene.edges[i];
            if (scene.items[static_cast<size_t>(edge.to)].kind != SceneItem::Kind::OutPort) {
                uses[{edge.from, edge.value}].push_back(i);
            }
        }
        std::vector<bool> folded(scene.edges.size(), false);
        for (const auto& [source, edges] : uses) {
            if (edges.size() <= diagram::kHubFanOut) {
                continue;
            }
            for (const size_t i : edges) {
                const SceneEdge& edge = scene.edges[i];
                scene.stubs.push_back({edge.to, edge.from, edge.value, edge.edges});
                folded[i] = true;
            }
        }
        std::vector<SceneEdge> kept;
        for (size_t i = 0; i < scene.edges.size(); ++i) {
            if (!folded[i]) {
                kept.push_back(std::move(scene.edges[i]));
            }
        }
        scene.edges = std::move(kept);
    }
};

std::string sceneDot(const LayoutScene& scene) {
    std::ostringstream dot;
    const size_t n = scene.items.size();
    dot << "digraph scene {\n graph [rankdir=TB, nodesep=0.25, ranksep=0.4, margin=0";
    if (n > 400) { // cheaper crossing minimisation and ranking on big scenes
        dot << ", mclimit=0.2, nslimit=2, nslimit1=2, searchsize=20";
    }
    dot << "];\n node [shape=box, fixedsize=true, label=\"\"];\n edge [arrowsize=0.6];\n";
    std::vector<size_t> first, last;
    for (size_t i = 0; i < n; ++i) {
        const SceneItem& item = scene.items[i];
        dot << " s" << i << " [width=" << number(item.width / 72.0)
            << ", height=" << number(item.height / 72.0) << "];\n";
        if (item.kind == SceneItem::Kind::InPort || item.kind == SceneItem::Kind::Input) {
            first.push_back(i);
        } else if (item.kind == SceneItem::Kind::OutPort || item.kind == SceneItem::Kind::Output) {
            last.push_back(i);
        }
    }
    for (const auto& [rank, items] :
         {std::make_pair("min", &first), std::make_pair("max", &last)}) {
        if (items->empty()) {
            continue;
        }
        dot << " {rank=" << rank << ";";
        for (const size_t i : *items) {
            dot << " s" << i << ";";
        }
        dot << "}\n";
    }
    for (size_t i = 0; i < scene.edges.size(); ++i) {
        dot << " s" << scene.edges[i].from << " -> s" << scene.edges[i].to << " [key=e" << i
            << "];\n";
    }
    dot << "}\n";
    return dot.str();
}

LayoutPoint lerp(const LayoutPoint& a, const LayoutPoint& b, double t) {
    return {a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t};
}

// A curve from the bottom of one box to the top of another.
std::vector<LayoutPoint> curveBetween(const LayoutRect& from, const LayoutRect& to) {
    const LayoutPoint p0{from.x + from.width / 2, from.y + from.height};
    const LayoutPoint p1{to.x + to.width / 2, to.y};
    const double dy = std::max(20.0, std::abs(p1.y - p0.y) / 2);
    return {p0, {p0.x, p0.y + dy}, {p1.x, p1.y - dy}, p1};
}

} // namespace

std::vector<LayoutScene> buildScenes(const GraphModel& model, const VisibleGraph& visible) {
    if (model.groups.empty()) {
        return {};
    }
    SceneBuilder builder(model, visible);
    builder.build();
    for (LayoutScene& scene : builder.scenes) {
        scene.dot = sceneDot(scene);
    }
    return std::move(builder.scenes);
}

// ---------------------------------------------------------------------------------------------
// The simple layered layout

SceneLayout layeredLayout(const LayoutScene& scene) {
    SceneLayout layout;
    layout.simple = true;
    const size_t n = scene.items.size();
    layout.items.resize(n);
    if (n == 0) {
        return layout;
    }
    std::vector<std::vector<int>> out(n), in(n);
    for (const SceneEdge& e : scene.edges) {
        out[static_cast<size_t>(e.from)].push_back(e.to);
        in[static_cast<size_t>(e.to)].push_back(e.from);
    }
    // Ranks: longest path from the sources, in a topological order that breaks cycles (boxes can
    // make them) by taking the waiting item with the fewest unranked inputs.
    std::vector<int> rank(n, 0), waiting(n), order;
    std::vector<bool> done(n, false);
    for (size_t i = 0; i < n; ++i) {
        waiting[i] = static_cast<int>(in[i].size());
    }
    std::set<std::pair<int, size_t>> queue; // (waiting inputs, item)
    for (size_t i = 0; i < n; ++i) {
        queue.insert({waiting[i], i});
    }
    while (!queue.empty()) {
        const size_t i = queue.begin()->second;
        queue.erase(queue.begin());
        done[i] = true;
        order.push_back(static_cast<int>(i));
        for (const int t : out[i]) {
            const size_t ti = static_cast<size_t>(t);
            if (done[ti]) {
                continue; // an edge closing a cycle: it points upwards
            }
            rank[ti] = std::max(rank[ti], rank[i] + 1);
            queue.erase({waiting[ti], ti});
            queue.insert({--waiting[ti], ti});
        }
    }
    int maxRank = 0;
    for (size_t i = 0; i < n; ++i) {
        const SceneItem::Kind kind = scene.items[i].kind;
        if (kind == SceneItem::Kind::Input || kind == SceneItem::Kind::InPort) {
            rank[i] = 0;
        }
        maxRank = std::max(maxRank, rank[i]);
    }
    for (size_t i = 0; i < n; ++i) {
        const SceneItem::Kind kind = scene.items[i].kind;
        if (kind == SceneItem::Kind::Output || kind == SceneItem::Kind::OutPort) {
            rank[i] = maxRank + 1;
        }
    }
    std::vector<std::vector<int>> layers(static_cast<size_t>(maxRank) + 2);
    for (const int i : order) {
        layers[static_cast<size_t>(rank[static_cast<size_t>(i)])].push_back(i);
    }
    // Order within layers: a few barycentre sweeps, down and up.
    std::vector<double> position(n, 0);
    auto number = [&](const std::vector<int>& layer) {
        for (size_t p = 0; p < layer.size(); ++p) {
            position[static_cast<size_t>(layer[p])] = static_cast<double>(p);
        }
    };
    for (const auto& layer : layers) {
        number(layer);
    }
    for (int sweep = 0; sweep < 4; ++sweep) {
        const bool down = sweep % 2 == 0;
        for (size_t l = 0; l < layers.size(); ++l) {
            auto& layer = layers[down ? l : layers.size() - 1 - l];
            std::vector<std::pair<double, int>> keyed;
            for (const int i : layer) {
                const auto& neighbours =
                    down ? in[static_cast<size_t>(i)] : out[static_cast<size_t>(i)];
                double sum = 0;
                for (const int j : neighbours) {
                    sum += position[static_cast<size_t>(j)];
                }
                keyed.push_back({neighbours.empty() ? position[static_cast<size_t>(i)]
                                                    : sum / static_cast<double>(neighbours.size()),
                                 i});
            }
            std::stable_sort(keyed.begin(), keyed.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            for (size_t p = 0; p < keyed.size(); ++p) {
                layer[p] = keyed[p].second;
            }
            number(layer);
        }
    }
    // Coordinates: each layer a row; an item placed under the mean of its inputs where the row
    // leaves room, pushed right otherwise.
    constexpr double kGapX = 18, kGapY = 34;
    double y = 0, width = 0;
    std::vector<double> centre(n, 0);
    for (const auto& layer : layers) {
        double rowHeight = 0, x = 0;
        for (const int i : layer) {
            const SceneItem& item = scene.items[static_cast<size_t>(i)];
            double wanted = x + item.width / 2;
            const auto& inputs = in[static_cast<size_t>(i)];
            if (!inputs.empty()) {
                double sum = 0;
                for (const int j : inputs) {
                    sum += centre[static_cast<size_t>(j)];
                }
                wanted = std::max(wanted, sum / static_cast<double>(inputs.size()));
            }
            centre[static_cast<size_t>(i)] = wanted;
            layout.items[static_cast<size_t>(i)] = {wanted - item.width / 2, y, item.width,
                                                    item.height};
            x = wanted + item.width / 2 + kGapX;
            rowHeight = std::max(rowHeight, item.height);
        }
        width = std::max(width, x - kGapX);
        if (!layer.empty()) {
            y += rowHeight + kGapY;
        }
    }
    // Items of a row sit on its top; centre them vertically in it, then route the edges.
    layout.width = std::max(0.0, width);
    layout.height = std::max(0.0, y - kGapY);
    for (const SceneEdge& e : scene.edges) {
        layout.edges.push_back(curveBetween(layout.items[static_cast<size_t>(e.from)],
                                            layout.items[static_cast<size_t>(e.to)]));
    }
    return layout;
}

// ---------------------------------------------------------------------------------------------
// Graphviz

std::vector<SceneLayout> parseLayoutOutput(const std::string& output,
                                           const std::vector<const LayoutScene*>& scenes) {
    std::vector<SceneLayout> layouts(scenes.size());
    std::istringstream in(output);
    std::string line;
    size_t index = 0;
    SceneLayout current;
    std::vector<bool> haveItem, haveEdge;
    auto reset = [&] {
        current = SceneLayout{};
        if (index < scenes.size()) {
            current.items.resize(scenes[index]->items.size());
            current.edges.resize(scenes[index]->edges.size());
            haveItem.assign(scenes[index]->items.size(), false);
            haveEdge.assign(scenes[index]->edges.size(), false);
        }
    };
    reset();
    while (index < scenes.size() && std::getline(in, line)) {
        std::istringstream words(line);
        std::string word;
        words >> word;
        if (word == "graph") {
            words >> current.width >> current.height;
        } else if (word == "node") {
            std::string name;
            double cx = 0, cy = 0, w = 0, h = 0;
            words >> name >> cx >> cy >> w >> h;
            const size_t i = name.size() > 1 ? std::strtoul(name.c_str() + 1, nullptr, 10) : 0;
            if (name.size() > 1 && name[0] == 's' && i < current.items.size() && words) {
                current.items[i] = {cx - w / 2, cy - h / 2, w, h};
                haveItem[i] = true;
            }
        } else if (word == "edge") {
            std::string name, tail, head;
            size_t count = 0;
            words >> name >> tail >> head >> count;
            const size_t i = name.size() > 1 ? std::strtoul(name.c_str() + 1, nullptr, 10) : 0;
            if (name.size() < 2 || name[0] != 'e' || i >= current.edges.size() || count > 100000) {
                continue;
            }
            std::vector<LayoutPoint> points(count);
            for (LayoutPoint& p : points) {
                words >> p.x >> p.y;
            }
            if (words && count >= 4 && (count - 1) % 3 == 0) {
                current.edges[i] = std::move(points);
                haveEdge[i] = true;
            }
        } else if (word == "end" || word == "error") {
            const bool complete = word == "end" && std::all_of(haveItem.begin(), haveItem.end(),
                                                               [](bool b) { return b; });
            if (complete) {
                for (size_t e = 0; e < haveEdge.size(); ++e) { // dot left it out: draw it plainly
                    if (!haveEdge[e]) {
                        const SceneEdge& edge = scenes[index]->edges[e];
                        current.edges[e] =
                            curveBetween(current.items[static_cast<size_t>(edge.from)],
                                         current.items[static_cast<size_t>(edge.to)]);
                    }
                }
                layouts[index] = std::move(current);
            }
            ++index;
            reset();
        }
    }
    return layouts;
}

std::string findLayoutProgram() {
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        std::string dir(self, static_cast<size_t>(n));
        dir = dir.substr(0, dir.rfind('/'));
        const std::string candidate = dir + "/scriptscope-layout";
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    if (const char* path = std::getenv("PATH")) {
        std::istringstream dirs(path);
        std::string dir;
        while (std::getline(dirs, dir, ':')) {
            const std::string candidate = (dir.empty() ? "." : dir) + "/scriptscope-layout";
            if (::access(candidate.c_str(), X_OK) == 0) {
                return candidate;
            }
        }
    }
    return {};
}

LayoutEngine layeredEngine() {
    return [](const std::vector<const LayoutScene*>& scenes) {
        std::vector<SceneLayout> layouts;
        for (const LayoutScene* scene : scenes) {
            layouts.push_back(layeredLayout(*scene));
        }
        return layouts;
    };
}

LayoutEngine graphvizEngine(const GraphvizOptions& options, std::vector<std::string>* notes) {
    return [options, notes](const std::vector<const LayoutScene*>& scenes) {
        std::vector<SceneLayout> layouts;
        std::string why;
        if (options.program.empty()) {
            why = "scriptscope-layout (Graphviz) was not found";
        } else {
            std::string input;
            size_t items = 0;
            for (const LayoutScene* scene : scenes) {
                input += scene->dot;
                items += scene->items.size();
            }
            std::vector<std::string> argv{options.program};
            if (options.memoryLimitMb > 0) {
                argv.push_back("--memory-limit");
                argv.push_back(std::to_string(options.memoryLimitMb));
            }
            // SCRIPTSCOPE_LAYOUT_DUMP=FILE collects the batches given to Graphviz (to reproduce
            // a crash or a slow layout with dot itself).
            if (const char* dump = std::getenv("SCRIPTSCOPE_LAYOUT_DUMP")) {
                if (FILE* f = std::fopen(dump, "a")) {
                    std::fputs("// batch\n", f);
                    std::fwrite(input.data(), 1, input.size(), f);
                    std::fclose(f);
                }
            }
            const ChildResult run = runChild(argv, input, options.timeoutSeconds, options.cancel);
            layouts = parseLayoutOutput(run.output, scenes);
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%g", options.timeoutSeconds);
            if (!run.started) {
                why = "scriptscope-layout could not be started: " + run.error;
            } else if (run.timedOut) {
                why = "Graphviz did not finish laying out " + std::to_string(items) +
                      " items within " + seconds + " s";
            } else if (run.signal != 0) {
                why = "Graphviz crashed (signal " + std::to_string(run.signal) + ")";
            } else if (run.exitCode != 0 && !run.cancelled) {
                why = "Graphviz failed (exit status " + std::to_string(run.exitCode) + ")";
            }
        }
        layouts.resize(scenes.size());
        size_t fallbacks = 0;
        for (size_t i = 0; i < scenes.size(); ++i) {
            if (layouts[i].items.size() != scenes[i]->items.size()) {
                layouts[i] = layeredLayout(*scenes[i]);
                ++fallbacks;
            }
        }
        if (notes && fallbacks > 0) {
            notes->push_back((why.empty() ? std::string("Graphviz gave no layout") : why) + ": " +
                             std::to_string(fallbacks) +
                             (fallbacks == 1 ? " group is" : " groups are") +
                             " drawn with the simple layered layout");
        }
        return layouts;
    };
}

const SceneLayout* LayoutCache::find(const std::string& dot) const {
    const auto it = entries_.find(dot);
    return it == entries_.end() ? nullptr : &it->second;
}

void LayoutCache::insert(const std::string& dot, const SceneLayout& layout) {
    if (entries_.size() >= capacity_) {
        entries_.clear();
    }
    entries_[dot] = layout;
}

// ---------------------------------------------------------------------------------------------
// The diagram put together

DiagramLayout layoutDiagram(const GraphModel& model, const VisibleGraph& visible,
                            LayoutCache& cache, const LayoutEngine& engine) {
    DiagramLayout diagram;
    if (model.groups.empty()) {
        return diagram;
    }
    SceneBuilder builder(model, visible);
    builder.build();
    std::vector<LayoutScene>& scenes = builder.scenes;
    const size_t count = scenes.size();
    diagram.scenes = count;
    // Nesting level of each scene; lay out the deepest first.
    std::vector<int> level(count, 0);
    int deepest = 0;
    for (size_t s = 0; s < count; ++s) {
        for (int p = builder.sceneParent[s]; p >= 0;
             p = builder.sceneParent[static_cast<size_t>(p)]) {
            ++level[s];
        }
        deepest = std::max(deepest, level[s]);
    }
    std::vector<SceneLayout> layouts(count);
    for (int l = deepest; l >= 0; --l) {
        std::vector<size_t> todo;
        for (size_t s = 0; s < count; ++s) {
            if (level[s] != l) {
                continue;
            }
            LayoutScene& scene = scenes[s];
            for (SceneItem& item : scene.items) { // open children: their layouts are known now
                if (item.kind == SceneItem::Kind::Group) {
                    const SceneLayout& child =
                        layouts[static_cast<size_t>(builder.sceneOfGroup[item.ref])];
                    item.width = std::ceil(child.width + 2 * diagram::kGroupPadding);
                    item.height =
                        std::ceil(child.height + diagram::kGroupTitle + diagram::kGroupPadding);
                }
            }
            scene.dot = sceneDot(scene);
            if (const SceneLayout* cached = cache.find(scene.dot)) {
                layouts[s] = *cached;
            } else {
                todo.push_back(s);
            }
        }
        if (todo.empty()) {
            continue;
        }
        std::vector<const LayoutScene*> batch;
        for (const size_t s : todo) {
            batch.push_back(&scenes[s]);
        }
        std::vector<SceneLayout> done = engine(batch);
        done.resize(todo.size());
        for (size_t i = 0; i < todo.size(); ++i) {
            if (done[i].items.size() != scenes[todo[i]].items.size()) {
                done[i] = layeredLayout(scenes[todo[i]]);
            }
            layouts[todo[i]] = done[i];
            cache.insert(scenes[todo[i]].dot, done[i]);
            ++diagram.laidOut;
        }
    }

    // Compose: each scene at its Group item's place in its parent, inside the title and padding.
    constexpr double kMargin = 16;
    diagram.items.resize(visible.items.size());
    diagram.texts = std::move(builder.texts);
    diagram.inputs.resize(model.inputs.size());
    std::vector<std::vector<LayoutRect>> absolute(count);
    std::vector<LayoutPoint> offset(count);
    const int root = builder.sceneOfGroup[0];
    offset[static_cast<size_t>(root)] = {kMargin, kMargin};
    // Scenes in order of level, so that parents are placed before their children.
    std::vector<size_t> byLevel(count);
    std::iota(byLevel.begin(), byLevel.end(), 0);
    std::stable_sort(byLevel.begin(), byLevel.end(),
                     [&](size_t a, size_t b) { return level[a] < level[b]; });
    for (const size_t s : byLevel) {
        const LayoutScene& scene = scenes[s];
        const SceneLayout& layout = layouts[s];
        const LayoutPoint o = offset[s];
        absolute[s].resize(scene.items.size());
        diagram.simpleScenes += layout.simple;
        for (size_t i = 0; i < scene.items.size(); ++i) {
            const LayoutRect& r = layout.items[i];
            const LayoutRect a{r.x + o.x, r.y + o.y, r.width, r.height};
            absolute[s][i] = a;
            const SceneItem& item = scene.items[i];
            switch (item.kind) {
            case SceneItem::Kind::Node:
            case SceneItem::Kind::Box:
                diagram.items[static_cast<size_t>(item.ref)] = a;
                break;
            case SceneItem::Kind::Input:
                diagram.inputs[static_cast<size_t>(item.ref)] = a;
                break;
            case SceneItem::Kind::Output:
                diagram.output = a;
                break;
            case SceneItem::Kind::Group: {
                const size_t child = static_cast<size_t>(builder.sceneOfGroup[item.ref]);
                offset[child] = {a.x + diagram::kGroupPadding, a.y + diagram::kGroupTitle};
                break;
            }
            case SceneItem::Kind::InPort:
            case SceneItem::Kind::OutPort:
                diagram.ports.push_back(
                    {scene.group, item.kind == SceneItem::Kind::InPort, item.value, a});
                break;
            }
        }
        if (s == static_cast<size_t>(root)) {
            diagram.clusters.insert(diagram.clusters.begin(), {0,
                                                               {0, 0, layout.width + 2 * kMargin,
                                                                layout.height + 2 * kMargin},
                                                               layout.simple});
        } else {
            const int parent = builder.sceneParent[s];
            diagram.clusters.push_back({scene.group,
                                        absolute[static_cast<size_t>(parent)]
                                                [static_cast<size_t>(builder.groupItemInParent[s])],
                                        layout.simple});
        }
    }
    auto centre = [](const LayoutRect& r) {
        return LayoutPoint{r.x + r.width / 2, r.y + r.height / 2};
    };
    auto portCentre = [&](int group, bool in, const std::string& value) -> const LayoutRect* {
        const size_t s = static_cast<size_t>(builder.sceneOfGroup[group]);
        const auto it = builder.ports.find({static_cast<int>(s), in, value});
        return it == builder.ports.end() ? nullptr : &absolute[s][static_cast<size_t>(it->second)];
    };
    for (size_t s = 0; s < count; ++s) {
        const LayoutScene& scene = scenes[s];
        const SceneLayout& layout = layouts[s];
        const LayoutPoint o = offset[s];
        for (size_t e = 0; e < scene.edges.size(); ++e) {
            const SceneEdge& edge = scene.edges[e];
            DiagramEdge drawn;
            drawn.value = edge.value;
            drawn.edges = edge.edges;
            if (!edge.edges.empty()) {
                drawn.type = visible.edges[static_cast<size_t>(edge.edges.front())].type;
            }
            for (const LayoutPoint& p : layout.edges[e]) {
                drawn.points.push_back({p.x + o.x, p.y + o.y});
            }
            if (drawn.points.empty()) {
                continue;
            }
            // Joined to the ports inside the groups it leaves and enters.
            const SceneItem& from = scene.items[static_cast<size_t>(edge.from)];
            if (from.kind == SceneItem::Kind::Group) {
                if (const LayoutRect* port = portCentre(from.ref, false, edge.value)) {
                    const LayoutPoint a = centre(*port), b = drawn.points.front();
                    drawn.points.insert(drawn.points.begin(),
                                        {a, lerp(a, b, 1.0 / 3), lerp(a, b, 2.0 / 3)});
                }
            }
            const SceneItem& to = scene.items[static_cast<size_t>(edge.to)];
            if (to.kind == SceneItem::Kind::Group) {
                if (const LayoutRect* port = portCentre(to.ref, true, edge.value)) {
                    const LayoutPoint a = drawn.points.back(), b = centre(*port);
                    drawn.points.insert(drawn.points.end(),
                                        {lerp(a, b, 1.0 / 3), lerp(a, b, 2.0 / 3), b});
                }
            }
            diagram.edges.push_back(std::move(drawn));
        }
        // Stubs: one label above each item that uses hub values, naming them.
        std::map<int, size_t> labelOf;
        for (const SceneStub& stub : scene.stubs) {
            const auto it = labelOf.find(stub.item);
            if (it != labelOf.end()) {
                DiagramStub& drawn = diagram.stubs[it->second];
                drawn.text += ", " + elided(stub.value, 24);
                drawn.edges.insert(drawn.edges.end(), stub.edges.begin(), stub.edges.end());
                continue;
            }
            const LayoutRect& r = absolute[s][static_cast<size_t>(stub.item)];
            DiagramStub drawn;
            const SceneItem& item = scene.items[static_cast<size_t>(stub.item)];
            if (item.kind == SceneItem::Kind::Node || item.kind == SceneItem::Kind::Box) {
                drawn.item = item.ref;
            } else if (item.kind == SceneItem::Kind::Group) {
                drawn.group = item.ref;
            }
            drawn.at = {r.x + 2, r.y - 3};
            drawn.text = "\xE2\x96\xB8 " + elided(stub.value, 24); // ▸ value
            drawn.edges = stub.edges;
            labelOf[stub.item] = diagram.stubs.size();
            diagram.stubs.push_back(std::move(drawn));
        }
    }
    diagram.width = diagram.clusters.empty() ? 0 : diagram.clusters.front().rect.width;
    diagram.height = diagram.clusters.empty() ? 0 : diagram.clusters.front().rect.height;
    return diagram;
}

// ---------------------------------------------------------------------------------------------
// SVG

namespace {

std::string xml(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') {
                out += c;
            }
        }
    }
    return out;
}

std::string pathData(const std::vector<LayoutPoint>& points) {
    std::string d = "M" + number(points[0].x) + "," + number(points[0].y);
    for (size_t i = 1; i + 2 < points.size(); i += 3) {
        d += " C" + number(points[i].x) + "," + number(points[i].y) + " " +
             number(points[i + 1].x) + "," + number(points[i + 1].y) + " " +
             number(points[i + 2].x) + "," + number(points[i + 2].y);
    }
    return d;
}

} // namespace

std::string toSvg(const GraphModel& model, const VisibleGraph& visible,
                  const DiagramLayout& layout) {
    std::ostringstream svg;
    svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << number(layout.width)
        << "\" height=\"" << number(layout.height) << "\" viewBox=\"0 0 " << number(layout.width)
        << " " << number(layout.height) << "\" font-family=\"sans-serif\">\n"
        << "<title>"
        << xml(model.modulePath.empty() ? model.method : model.modulePath + "." + model.method)
        << "</title>\n"
        << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
           "markerWidth=\"6\" "
           "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#6b7280\"/>"
           "</marker></defs>\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    for (const DiagramCluster& c : layout.clusters) {
        if (c.group == 0) {
            continue;
        }
        const GraphGroup& g = groupOf(model, c.group);
        const bool block = g.kind == GraphGroup::Kind::Block;
        svg << "<g class=\"group\" id=\"g" << c.group << "\"><rect x=\"" << number(c.rect.x)
            << "\" y=\"" << number(c.rect.y) << "\" width=\"" << number(c.rect.width)
            << "\" height=\"" << number(c.rect.height) << "\" rx=\"6\" fill=\""
            << (block                                  ? "#fbf7ee"
                : g.kind == GraphGroup::Kind::Function ? "#f0f8f4"
                                                       : "#f3f6fb")
            << "\" stroke=\"#9aa9c2\"" << (block ? " stroke-dasharray=\"4 3\"" : "") << "/>"
            << "<text x=\"" << number(c.rect.x + 8) << "\" y=\"" << number(c.rect.y + 15)
            << "\" font-size=\"11\" font-weight=\"bold\" fill=\"#334155\">"
            << xml(elided(g.label + (g.type.empty() ? "" : " \xC2\xB7 " + g.type), 80))
            << "</text></g>\n";
    }
    for (const DiagramEdge& e : layout.edges) {
        if (e.points.size() < 4) {
            continue;
        }
        svg << "<path class=\"edge\" d=\"" << pathData(e.points)
            << "\" fill=\"none\" stroke=\"#6b7280\" stroke-width=\"1\" marker-end=\"url(#arrow)\">"
            << "<title>" << xml(e.value + ": " + e.type) << "</title></path>\n";
    }
    for (const DiagramPort& p : layout.ports) {
        svg << "<circle cx=\"" << number(p.rect.x + p.rect.width / 2) << "\" cy=\""
            << number(p.rect.y + p.rect.height / 2) << "\" r=\"3\" fill=\"#6b7280\"/>\n";
    }
    auto box = [&](const LayoutRect& r, const ItemText& text, const char* fill, const char* stroke,
                   double strokeWidth, const std::string& cls, const std::string& id) {
        svg << "<g class=\"" << cls << "\"" << (id.empty() ? "" : " id=\"" + id + "\"")
            << "><rect x=\"" << number(r.x) << "\" y=\"" << number(r.y) << "\" width=\""
            << number(r.width) << "\" height=\"" << number(r.height) << "\" rx=\"4\" fill=\""
            << fill << "\" stroke=\"" << stroke << "\" stroke-width=\"" << strokeWidth << "\"/>";
        double y = r.y + diagram::kPadding - 2 + 11;
        svg << "<text x=\"" << number(r.x + diagram::kPadding) << "\" y=\"" << number(y)
            << "\" font-size=\"" << diagram::kTitleFont
            << "\" font-weight=\"bold\" fill=\"#111827\">" << xml(text.title) << "</text>";
        y += diagram::kTitleHeight - 2;
        for (const std::string& line : text.lines) {
            svg << "<text x=\"" << number(r.x + diagram::kPadding) << "\" y=\"" << number(y)
                << "\" font-size=\"" << diagram::kLineFont << "\" fill=\"#4b5563\">" << xml(line)
                << "</text>";
            y += diagram::kLineHeight;
        }
        svg << "</g>\n";
    };
    for (size_t i = 0; i < visible.items.size() && i < layout.texts.size(); ++i) {
        const VisibleItem& item = visible.items[i];
        box(layout.items[i], layout.texts[i], item.isGroup ? "#e8eef7" : "#ffffff",
            item.isGroup ? "#5b7bb2" : "#94a3b8", item.isGroup ? 2 : 1,
            item.isGroup ? "box" : "node", (item.isGroup ? "g" : "n") + std::to_string(item.id));
    }
    for (size_t i = 0; i < model.inputs.size() && i < layout.inputs.size(); ++i) {
        box(layout.inputs[i], {model.inputs[i].name, {}}, "#eeeeee", "#9ca3af", 1, "input", "");
    }
    box(layout.output, {"output", {}}, "#eeeeee", "#9ca3af", 1, "output", "");
    for (const DiagramStub& s : layout.stubs) {
        svg << "<text class=\"stub\" x=\"" << number(s.at.x) << "\" y=\"" << number(s.at.y)
            << "\" font-size=\"8\" fill=\"#b45309\">" << xml(s.text) << "</text>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

} // namespace scriptscope
