// What the diagram paints over its graph: a profiled run's times or a value per node, and the
// shapes that flowed along its edges.
#include "diagram_support.h"
#include "graph_diagram.h"

#include <algorithm>

namespace scriptscope {

using namespace diagram_ui;

// ---------------------------------------------------------------------------------------------
// Times

bool GraphDiagram::showsRunShapes() const {
    return hasGraph_ && !shapes_.empty() && graph_->inlined && graph_->modulePath.empty() &&
           graph_->method == shapesMethod_;
}

QString GraphDiagram::edgeLabel(int layoutEdge) const {
    if (!picture_ || layoutEdge < 0 ||
        layoutEdge >= static_cast<int>(picture_->layout.edges.size())) {
        return {};
    }
    const DiagramEdge& edge = picture_->layout.edges[static_cast<size_t>(layoutEdge)];
    if (showsRunShapes()) {
        const auto it = shapes_.find(edge.value);
        if (it != shapes_.end()) {
            return q(it->second);
        }
    }
    return q(edge.type);
}

void GraphDiagram::setControlFlow(const std::vector<ControlFlowRun>& flow) {
    blockNotes_.clear();
    blocksNotTaken_.clear();
    if (hasGraph_) {
        for (const ControlFlowRun& f : flow) {
            if (f.graphNode < 0 || f.graphNode >= static_cast<int>(graph_->nodes.size())) {
                continue;
            }
            int index = 0; // the node's blocks in the order it calls them
            for (const GraphGroup& g : graph_->groups) {
                if (g.kind != GraphGroup::Kind::Block || g.owner != f.graphNode) {
                    continue;
                }
                if (f.branch >= 0) {
                    const bool ran = index == f.branch;
                    blockNotes_[g.id] = ran ? tr("ran") : tr("not taken");
                    if (!ran) {
                        blocksNotTaken_.insert(g.id);
                    }
                } else if (f.iterations >= 0) {
                    // A while_loop asks its cond once more than its body runs.
                    const int64_t times =
                        f.kind == "while_loop" && index == 0 ? f.iterations + 1 : f.iterations;
                    blockNotes_[g.id] = QStringLiteral("\u00d7%1").arg(times);
                    if (times == 0) {
                        blocksNotTaken_.insert(g.id);
                    }
                }
                ++index;
            }
        }
    }
    if (canvas_) {
        canvas_->update();
    }
}

QString GraphDiagram::blockNote(int group) const {
    const auto found = blockNotes_.find(group);
    return found == blockNotes_.end() ? QString() : found->second;
}

void GraphDiagram::setValueOverlay(const ValueOverlay& overlay) {
    overlay_ = overlay;
    setProfile(profile_);
}

void GraphDiagram::setProfile(const RunProfile& profile) {
    profile_ = profile;
    shapes_ = profile.valueShapes;
    shapesMethod_ = profile.shapesMethod;
    moduleMs_.clear();
    operatorMs_.clear();
    nodeMs_.clear();
    nodeValues_.clear();
    maxModuleMs_ = maxOperatorMs_ = 0;
    // Node ids are of the method's graph inlined from the root (an ExecuTorch method's graph is
    // flat already, drawn under the method's own row).
    const bool overlay = (!overlay_.nodes.empty() || !overlay_.modules.empty()) && hasGraph_ &&
                         graph_->inlined &&
                         (graph_->modulePath.empty() || graph_->modulePath == graph_->method) &&
                         graph_->method == overlay_.method.toStdString();
    if (overlay) {
        for (const auto& [path, value] : overlay_.modules) {
            moduleMs_[path] = value;
            if (!path.empty()) {
                maxModuleMs_ = std::max(maxModuleMs_, value);
            }
        }
        for (const auto& [node, value] : overlay_.nodes) {
            nodeValues_[node] = value;
            maxOperatorMs_ = std::max(maxOperatorMs_, value);
        }
        updateInfo();
        updateStatus();
        canvas_->update();
        return;
    }
    for (const ModuleTime& m : profile.modules) {
        moduleMs_[m.path] = m.totalMs;
        if (!m.path.empty()) {
            maxModuleMs_ = std::max(maxModuleMs_, m.totalMs);
        }
    }
    // Every call timed on its own (a .pte's instructions): each node its time, when the profile
    // is of the graph shown.
    if (hasGraph_ && !profile.nodeMs.empty() && profile.nodeMs.size() == graph_->nodes.size() &&
        graph_->method == profile.shapesMethod) {
        nodeMs_ = profile.nodeMs;
        for (const double ms : nodeMs_) {
            maxOperatorMs_ = std::max(maxOperatorMs_, ms);
        }
    }
    for (const OperatorTime& o : profile.operators) {
        if (o.calls > 0 && nodeMs_.empty()) {
            const double each = o.selfMs / static_cast<double>(o.calls);
            operatorMs_[o.name] = each;
            maxOperatorMs_ = std::max(maxOperatorMs_, each);
        }
    }
    updateInfo();
    updateStatus();
    canvas_->update();
}

double GraphDiagram::itemMs(int item, QString* what) const {
    if (!picture_ || moduleMs_.empty()) {
        return 0;
    }
    const VisibleItem& v = picture_->visible.items[static_cast<size_t>(item)];
    if (v.isGroup) {
        const GraphGroup& g = graph_->groups[static_cast<size_t>(v.id)];
        if (g.kind != GraphGroup::Kind::Module) {
            return 0;
        }
        const auto it = moduleMs_.find(g.module);
        if (it == moduleMs_.end()) {
            return 0;
        }
        if (what) {
            *what = nodeValues_.empty() && overlay_.name.isEmpty()
                        ? tr("%1 ms in the profiled run").arg(it->second, 0, 'f', 3)
                        : tr("%1: %2 (largest in the module)").arg(overlay_.name).arg(it->second);
        }
        return it->second;
    }
    const GraphNode& n = graph_->nodes[static_cast<size_t>(v.id)];
    if (!nodeValues_.empty()) {
        const auto value = nodeValues_.find(n.id);
        if (value == nodeValues_.end()) {
            return 0;
        }
        if (what) {
            *what = tr("%1: %2").arg(overlay_.name).arg(value->second);
        }
        return value->second;
    }
    if (!nodeMs_.empty()) {
        const double ms =
            static_cast<size_t>(n.id) < nodeMs_.size() ? nodeMs_[static_cast<size_t>(n.id)] : 0;
        if (what) {
            *what = tr("%1 ms in the profiled run (this call)").arg(ms, 0, 'f', 3);
        }
        return ms;
    }
    const auto it = operatorMs_.find(n.kind);
    if (it == operatorMs_.end()) {
        return 0;
    }
    if (what) {
        *what = tr("\u2248%1 ms (the average %2 call of the profiled run)")
                    .arg(it->second, 0, 'f', 3)
                    .arg(q(n.kind));
    }
    return it->second;
}

QColor GraphDiagram::heatColour(double fraction) const {
    fraction = std::clamp(fraction, 0.0, 1.0);
    // From pale yellow to deep orange-red.
    auto mix = [fraction](int cold, int hot) {
        return static_cast<int>(std::lround(cold + (hot - cold) * fraction));
    };
    return QColor(mix(255, 230), mix(243, 80), mix(196, 40));
}

} // namespace scriptscope
