#include "delegate_contents.h"

#include "xnnpack_graph.h"

#include <format.h>

namespace scriptscope {

DelegateContents delegateContents(const std::string& path, const PteDelegate& delegate) {
    DelegateContents contents;
    if (delegate.id != "XnnpackBackend" || delegate.blobBytes == 0) {
        return contents;
    }
    const auto graph = readXnnpackBlobAt(path, delegate.blobOffset, delegate.blobBytes);
    if (!graph) {
        contents.problem = "its XNNPACK graph cannot be read: " + graph.error().message;
        contents.attributes.push_back({"xnnpack graph", "error", contents.problem});
        return contents;
    }
    contents.read = true;
    contents.constants = xnnpackConstants(*graph);
    uint64_t constantBytes = 0;
    for (const TensorInfo& constant : contents.constants) {
        constantBytes += constant.bytes;
    }
    contents.attributes.push_back(
        {"xnnpack graph", "nodes",
         std::to_string(graph->nodes.size()) + " nodes, " + std::to_string(graph->values.size()) +
             " values (" + std::to_string(contents.constants.size()) + " constants, " +
             formatBytes(constantBytes) + ")" +
             (graph->version.empty() ? "" : ", version " + graph->version)});
    contents.attributes.push_back({"nodes", "list", xnnpackNodeCounts(*graph)});
    contents.graphText = xnnpackGraphText(*graph, "    ");
    return contents;
}

} // namespace scriptscope
