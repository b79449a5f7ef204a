#include "exported_text.h"

#include "code_names.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace scriptscope {
namespace {

std::string strip(const std::string& text) {
    const char* space = " \t\n\r\f\v";
    const size_t first = text.find_first_not_of(space);
    if (first == std::string::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(space) - first + 1);
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (true) {
        const size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end == std::string::npos ? end : end - start));
        if (end == std::string::npos) {
            return lines;
        }
        start = end + 1;
    }
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        out += (i ? separator : "") + parts[i];
    }
    return out;
}

// Python's str.replace(old, new) for one character.
std::string replaceAll(const std::string& text, char from, const std::string& to) {
    std::string out;
    for (const char c : text) {
        if (c == from) {
            out += to;
        } else {
            out += c;
        }
    }
    return out;
}

// str(OpOverload) is its name without "torch.ops."; a higher-order operator's is its own name.
std::string targetText(const std::string& target) {
    const std::string hop = "torch.ops.higher_order.";
    const std::string ops = "torch.ops.";
    if (target.compare(0, hop.size(), hop) == 0) {
        return target.substr(hop.size());
    }
    if (target.compare(0, ops.size(), ops) == 0) {
        return target.substr(ops.size());
    }
    return target;
}

std::string annotationOf(const Pt2Model& model, const std::string& value) {
    if (const auto tensor = model.tensors.find(value); tensor != model.tensors.end()) {
        return tensor->second.text();
    }
    if (const auto symbol = model.symbols.find(value); symbol != model.symbols.end()) {
        return "Sym(" + symbol->second + ")";
    }
    return {};
}

// _addindent(text, 4) of torch.nn.modules.module: every line but the first gets four spaces,
// blank lines stay empty.
std::string addIndent(const std::string& text) {
    std::vector<std::string> lines = splitLines(text);
    if (lines.size() == 1) {
        return text;
    }
    for (size_t i = 1; i < lines.size(); ++i) {
        lines[i] = strip(lines[i]).empty() ? std::string() : "    " + lines[i];
    }
    return join(lines, "\n");
}

} // namespace

// `File "(.+)", line (\d+), in (.+)` as Python's re.match reads a frame line (the file is greedy:
// the last `", line N, in ` that fits), without std::regex, whose recursion a long hostile line
// would overflow.
static bool parseFrame(const std::string& line, std::string& file, std::string& number,
                       std::string& name) {
    const std::string head = "File \"";
    const std::string middle = "\", line ";
    if (line.compare(0, head.size(), head) != 0) {
        return false;
    }
    for (size_t at = line.rfind(middle); at != std::string::npos && at > head.size();
         at = at == 0 ? std::string::npos : line.rfind(middle, at - 1)) {
        size_t digits = at + middle.size();
        const size_t start = digits;
        while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) {
            ++digits;
        }
        const std::string in = ", in ";
        if (digits > start && line.compare(digits, in.size(), in) == 0 &&
            digits + in.size() < line.size()) {
            file = line.substr(head.size(), at - head.size());
            number = line.substr(start, digits - start);
            name = line.substr(digits + in.size());
            return true;
        }
    }
    return false;
}

std::string stackTraceSummary(const std::string& stackTrace) {
    const std::vector<std::string> lines = splitLines(strip(stackTrace));
    for (size_t i = lines.size() >= 2 ? lines.size() - 1 : 0; i-- > 0;) {
        std::string file, number, name;
        if (parseFrame(strip(lines[i]), file, number, name)) {
            return "File: " + file + ":" + number + " in " + name +
                   ", code: " + strip(lines[i + 1]);
        }
    }
    return {};
}

std::vector<FxNode> fxNodes(const Pt2Model& model) {
    std::vector<FxNode> nodes;
    for (const std::string& input : model.graphInputs) {
        FxNode n;
        n.op = "placeholder";
        n.name = n.target = input;
        n.annotation = annotationOf(model, input);
        nodes.push_back(std::move(n));
    }
    std::set<std::string> known(model.graphInputs.begin(), model.graphInputs.end());
    for (size_t i = 0; i < model.nodes.size(); ++i) {
        const Pt2Node& node = model.nodes[i];
        // The graphs a control flow operator takes are get_attr nodes just before it.
        for (const std::string& subgraph : node.subgraphs) {
            FxNode n;
            n.op = "get_attr";
            n.name = n.target = subgraph;
            n.source = static_cast<int>(i);
            n.stackTrace = node.stackTrace;
            known.insert(subgraph);
            nodes.push_back(std::move(n));
        }
        FxNode n;
        n.op = "call_function";
        n.name = node.name;
        n.target = targetText(node.target);
        n.callable = node.target;
        n.source = static_cast<int>(i);
        n.stackTrace = node.stackTrace;
        // Positional arguments first, whatever the archive's order (FX keeps args, then kwargs).
        std::vector<const Pt2Argument*> order;
        for (const Pt2Argument& argument : node.inputs) {
            order.push_back(&argument);
        }
        std::stable_partition(order.begin(), order.end(),
                              [](const Pt2Argument* a) { return !a->keyword; });
        for (const Pt2Argument* argument : order) {
            n.args.push_back({argument->keyword ? argument->name : std::string(), argument->text,
                              argument->plain});
            for (const std::string& value : argument->values) {
                if (std::find(n.reads.begin(), n.reads.end(), value) == n.reads.end()) {
                    n.reads.push_back(value);
                }
            }
        }
        if (!node.multipleOutputs) {
            n.annotation = node.outputs.empty() ? std::string() : annotationOf(model, n.name);
            known.insert(n.name);
            nodes.push_back(std::move(n));
            continue;
        }
        const std::string owner = n.name;
        const std::string trace = n.stackTrace;
        nodes.push_back(std::move(n));
        known.insert(owner);
        for (size_t k = 0; k < node.outputs.size(); ++k) {
            FxNode item;
            item.op = "call_function";
            item.name = node.outputs[k];
            if (item.name.empty()) {
                // An output that is None: FX names it as_none, then as_none_1, ... as the names
                // are taken.
                item.name = "as_none";
                for (int suffix = 1; known.count(item.name); ++suffix) {
                    item.name = "as_none_" + std::to_string(suffix);
                }
            }
            item.target = "<built-in function getitem>";
            item.callable = "operator.getitem";
            item.args = {{"", owner, "%" + owner}, {"", std::to_string(k), std::to_string(k)}};
            item.reads = {owner};
            item.annotation = annotationOf(model, item.name);
            item.source = static_cast<int>(i);
            item.stackTrace = trace;
            known.insert(item.name);
            nodes.push_back(std::move(item));
        }
    }
    FxNode output;
    output.op = output.name = output.target = "output";
    const std::string tuple = model.singleTensorReturn ? model.graphOutputs.front()
                              : model.graphOutputs.size() == 1
                                  ? "(" + model.graphOutputs.front() + ",)"
                                  : "(" + join(model.graphOutputs, ", ") + ")";
    output.args = {{"", tuple, tuple}};
    for (const std::string& value : model.graphOutputs) {
        if (known.count(value) &&
            std::find(output.reads.begin(), output.reads.end(), value) == output.reads.end()) {
            output.reads.push_back(value);
        }
    }
    nodes.push_back(std::move(output));
    return nodes;
}

std::string exportedGraphText(const Pt2Model& model) {
    const std::vector<FxNode> nodes = fxNodes(model);
    std::map<std::string, int> users;
    for (const FxNode& node : nodes) {
        for (const std::string& value : node.reads) {
            ++users[value];
        }
    }
    std::string text = "graph():";
    for (const FxNode& node : nodes) {
        const std::string head =
            "\n    %" + node.name + " : [num_users=" + std::to_string(users[node.name]) + "] = ";
        if (node.op == "placeholder" || node.op == "get_attr") {
            text += head + node.op + "[target=" + node.target + "]";
        } else if (node.op == "output") {
            text += "\n    return " + node.args.front().str;
        } else {
            std::vector<std::string> args, kwargs;
            for (const FxArgument& argument : node.args) {
                if (argument.keyword.empty()) {
                    args.push_back(argument.str);
                } else {
                    kwargs.push_back(argument.keyword + ": " + argument.str);
                }
            }
            text += head + "call_function[target=" + node.callable + "](args = (" +
                    join(args, ", ") + (args.size() == 1 ? "," : "") + "), kwargs = {" +
                    join(kwargs, ", ") + "})";
        }
    }
    return text;
}

// GraphModule.print_readable(): the class with its forward, then each subgraph's class inside it.
static std::string readableModule(const Pt2Model& model, const std::string& className) {
    const std::vector<FxNode> nodes = fxNodes(model);
    // The values each node reads for the last time (the code sets them to None after it).
    std::map<std::string, std::vector<std::string>> lastUses;
    std::map<std::string, int> users;
    {
        std::set<std::string> seen;
        for (auto node = nodes.rbegin(); node != nodes.rend(); ++node) {
            for (const std::string& value : node->reads) {
                ++users[value];
                if (seen.insert(value).second) {
                    lastUses[node->name].push_back(value);
                }
            }
        }
    }
    // The code's own names for the nodes, made in the order it writes them.
    CodeNamespace namespace_;
    for (const FxNode& node : nodes) {
        if (node.op != "output") {
            namespace_.nameOf(node.name);
        }
    }
    const auto& names = namespace_.names();
    const auto renamed = [&](const std::string& text) { return withCodeNames(text, names); };
    const auto codeName = [&](const std::string& name) {
        const auto found = names.find(name);
        return found != names.end() ? found->second : name;
    };
    std::vector<std::string> freeVariables;
    std::string body;
    std::string previousSummary;
    bool first = true;
    for (const FxNode& node : nodes) {
        if (node.op == "placeholder") {
            // The signature keeps the input's own name; a name the code may not use (a builtin's:
            // forward(self, input)) is taken into its own one first: input_1 = input.
            freeVariables.push_back(
                node.target + (node.annotation.empty() ? "" : ": \"" + node.annotation + "\""));
            if (codeName(node.name) != node.target) {
                body += codeName(node.name) + " = " + node.target + "\n";
            }
            continue;
        }
        if (node.op == "output") {
            body += "return " + renamed(node.args.front().repr) + "\n";
            continue;
        }
        const std::string trace = stackTraceSummary(node.stackTrace);
        const std::string summary =
            "\n# " + (trace.empty() ? "No stacktrace found for following nodes" : trace) + "\n";
        if (first || summary != previousSummary) {
            previousSummary = summary;
            body += summary;
        }
        first = false;
        const std::string lhs =
            codeName(node.name) + (node.annotation.empty() ? "" : ": \"" + node.annotation + "\"");
        if (node.op == "get_attr") {
            body += lhs + " = self." + node.target;
        } else if (node.callable == "operator.getitem") {
            body +=
                lhs + " = " + renamed(node.args[0].repr) + "[" + renamed(node.args[1].repr) + "]";
        } else {
            std::vector<std::string> args;
            for (const FxArgument& argument : node.args) {
                args.push_back(argument.keyword.empty()
                                   ? renamed(argument.repr)
                                   : argument.keyword + " = " + renamed(argument.repr));
            }
            body += lhs + " = " + node.callable + "(" + join(args, ", ") + ")";
        }
        std::vector<std::string> deleted;
        for (const std::string& value : lastUses[node.name]) {
            deleted.push_back(codeName(value));
        }
        if (users[node.name] == 0) {
            deleted.push_back(codeName(node.name));
        }
        body += deleted.empty() ? "\n" : ";  " + join(deleted, " = ") + " = None\n";
    }
    if (body.empty()) {
        body = "pass\n";
    }
    // _gen_python_code: the body without leading newlines, each line indented.
    std::string code = body.substr(std::min(body.find_first_not_of('\n'), body.size()));
    std::vector<std::string> lines = splitLines(code);
    for (std::string& line : lines) {
        line = "    " + line;
    }
    std::vector<std::string> arguments = {"self"};
    arguments.insert(arguments.end(), freeVariables.begin(), freeVariables.end());
    const std::string module = "class " + className + "(torch.nn.Module):\n" +
                               std::string("def forward(") + join(arguments, ", ") + "):\n" +
                               join(lines, "\n");
    std::vector<std::string> submodules = {""};
    for (const Pt2Model& subgraph : model.subgraphs) {
        submodules.push_back(readableModule(subgraph, subgraph.name));
    }
    return addIndent(module) + addIndent(join(submodules, "\n"));
}

std::string exportedProgramText(const Pt2Model& model) {
    std::string ranges = "{";
    for (size_t i = 0; i < model.rangeConstraints.size(); ++i) {
        ranges += (i ? ", " : "") + model.rangeConstraints[i].first + ": " +
                  model.rangeConstraints[i].second;
    }
    ranges += "}";
    const std::string signature = "\n" + join(signatureLines(model), "\n") + "\n";
    return "ExportedProgram:\n    " +
           replaceAll(readableModule(model, "GraphModule"), '\n', "\n    ") +
           "\nGraph signature:" + replaceAll(signature, '\n', "\n    ") +
           "\nRange constraints: " + ranges + "\n";
}

} // namespace scriptscope
