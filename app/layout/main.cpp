// scriptscope-layout: Graphviz's dot layout in a process of its own. Graphviz is not thread safe
// and can hang or crash on some shapes, so the GUI and the CLI never call it in their own process:
// they write graphs in DOT to this program's standard input and read the positions back, under a
// time limit, killing it when it runs over (see graph_layout.h, layoutWithGraphviz).
//
// Input: one or more DOT graphs, one after another. Output, per graph, in points (1/72 inch) with
// y growing downwards from the graph's top left:
//   graph WIDTH HEIGHT
//   node NAME CENTRE_X CENTRE_Y WIDTH HEIGHT
//   edge NAME TAIL HEAD COUNT X1 Y1 ... (cubic Bezier control points: p0 c1 c2 p1 c1 c2 p2 ...)
//   end
// or "error MESSAGE" for a graph Graphviz refused or crashed on (the others still come). Names
// are the DOT names, which the caller keeps to [A-Za-z0-9_]. Exit status 0 when every graph was
// laid out, 1 when one was not, 2 on input that is not DOT.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <process_limits.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace {

void writeLayout(Agraph_t* graph) {
    const boxf bb = GD_bb(graph);
    const double top = bb.UR.y;
    const double left = bb.LL.x;
    std::printf("graph %.2f %.2f\n", bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
    for (Agnode_t* n = agfstnode(graph); n; n = agnxtnode(graph, n)) {
        const pointf c = ND_coord(n);
        std::printf("node %s %.2f %.2f %.2f %.2f\n", agnameof(n), c.x - left, top - c.y,
                    ND_width(n) * 72.0, ND_height(n) * 72.0);
    }
    for (Agnode_t* n = agfstnode(graph); n; n = agnxtnode(graph, n)) {
        for (Agedge_t* e = agfstout(graph, n); e; e = agnxtout(graph, e)) {
            const splines* spl = ED_spl(e);
            if (!spl || spl->size < 1) {
                continue;
            }
            const bezier& bz = spl->list[0];
            const bool arrowAtEnd = bz.eflag != 0;
            const char* name = agnameof(e);
            std::printf("edge %s %s %s %d", name && *name ? name : "-", agnameof(agtail(e)),
                        agnameof(aghead(e)), bz.size + (arrowAtEnd ? 3 : 0));
            for (int i = 0; i < bz.size; ++i) {
                std::printf(" %.2f %.2f", bz.list[i].x - left, top - bz.list[i].y);
            }
            if (arrowAtEnd) { // a straight last piece to the arrow's tip
                const pointf last = bz.list[bz.size - 1];
                const pointf tip = bz.ep;
                for (int k = 1; k <= 3; ++k) {
                    const double t = k / 3.0;
                    std::printf(" %.2f %.2f", last.x + (tip.x - last.x) * t - left,
                                top - (last.y + (tip.y - last.y) * t));
                }
            }
            std::printf("\n");
        }
    }
    std::printf("end\n");
}

} // namespace

int main(int argc, char** argv) {
    // A memory limit of its own (MB, from the caller), so that an exploding layout fails here.
    if (argc > 2 && std::strcmp(argv[1], "--memory-limit") == 0) {
        scriptscope::applyMemoryLimit(std::strtoull(argv[2], nullptr, 10) * 1024 * 1024);
    }
    // Graphviz 2.42 keeps state from one layout to the next, and a graph that lays out fine on its
    // own can crash after others. So each graph is laid out in a child of its own, forked after
    // reading it: a crash costs that graph (reported as an error line), not the rest.
    GVC_t* gvc = gvContext();
    int status = 0;
    int graphs = 0;
    while (Agraph_t* graph = agread(stdin, nullptr)) {
        ++graphs;
        std::fflush(stdout);
        const pid_t child = ::fork();
        if (child == 0) {
            if (gvLayout(gvc, graph, "dot") != 0) {
                std::printf("error Graphviz could not lay out graph %d\n", graphs);
                std::fflush(stdout);
                ::_exit(1);
            }
            writeLayout(graph);
            std::fflush(stdout);
            ::_exit(0);
        }
        int childStatus = 0;
        if (child < 0) {
            std::printf("error fork failed on graph %d\n", graphs);
            status = 1;
        } else {
            while (::waitpid(child, &childStatus, 0) < 0 && errno == EINTR) {
            }
            if (WIFSIGNALED(childStatus)) {
                std::printf("error Graphviz crashed (signal %d) on graph %d\n",
                            WTERMSIG(childStatus), graphs);
                status = 1;
            } else if (WEXITSTATUS(childStatus) != 0) {
                status = 1;
            }
        }
        agclose(graph);
        std::fflush(stdout);
    }
    gvFreeContext(gvc);
    if (graphs == 0) {
        std::printf("error no graph in the input\n");
        return 2;
    }
    return status;
}
