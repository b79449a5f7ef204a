// The help texts of scriptscope-cli's commands (options.cpp): the footers CLI11 prints below each
// command's options. The man page (packaging/) says the same at more length.
#pragma once

namespace scriptscope::cli {

// Each command's help names the global options, which CLI11 lists only in the top-level help.
inline constexpr const char* kGlobalOptionsNote =
    R"(Options for every command, before or after it (see scriptscope-cli --help): --op-library PATH,
--timeout S, --memory-limit MB, --in-process, --verbose.)";

inline constexpr const char* kTopFooter =
    R"('scriptscope-cli COMMAND --help' describes a command and its options ('run --help' the input
specs). The options above may come before or after the command.

Exit status: 0 success; 1 bad input or model error; 2 usage error; 3 the work crashed or hit the
memory limit; 4 the work timed out; 5 the archive was saved by a newer PyTorch and calls operators
this LibTorch does not have; 6 an --op-library cannot be loaded (missing, not a library, built for
another LibTorch, or crashing when loaded; the message names it).)";

inline constexpr const char* kInfoFooter =
    R"(Reads records, serialization version, extra files, operators used and whether each is
registered, tensor storages (dtype, size, where saved; short or missing data is reported as
damage), and the code files (--show-code prints them). Nothing in the file is executed. The exit
status is 1 for a file that this LibTorch cannot open as a model.)";

inline constexpr const char* kTreeFooter =
    R"(Loads the model and prints its modules, each with its parameters, buffers, attributes and
methods (schemas), and the totals.)";

inline constexpr const char* kCodeFooter =
    R"(Prints what Python prints for model.PATH.NAME.code (default: the root's forward).)";

inline constexpr const char* kGraphFooter =
    R"(Prints str(model.PATH.NAME.graph) (default: the root's forward); --inlined prints
str(model.inlined_graph), with the calls of submodules inlined.

--format json or dot gives the graph as the diagram draws it: operator nodes (constants and
prim::GetAttr folded into the nodes that use them, as attributes), the values between them, and
groups: one per module instance (from the inlined call stack; the module is the dotted path of
named_modules(), "" for the root) and one per block of prim::If and prim::Loop; module groups with
identical contents (a transformer's layers) carry repeats and same_as (the first of them). --expand N shows
the contents of groups down to depth N (the root is 0, its children 1; default 0: the root's
children as boxes; blocks are one deeper than their owner); --expand all shows every node. dot is
Graphviz's language (render it with dot -Tsvg). svg is the diagram as the GUI draws it: each open
group laid out on its own by Graphviz (--layout graphviz, in a separate process under
--layout-timeout) or by the simple layered layout (--layout simple).)";

inline constexpr const char* kRunFooter =
    R"(Runs a method (after the warm-up runs) and times each iteration.

One --input per argument of the method, in order. SPEC is one of:
  random:1x3x224x224[:DTYPE[:SEED]]  zeros:2x3:int64  ones:4
  image:photo.png[,size=224x224][,order=rgb|bgr][,layout=chw|hwc][,batch=0|1][,dtype=float32]
       [,scale=1/255][,mean=a/b/c][,std=a/b/c][,gray=1][,preset=imagenet]
  file:x.pt (a value written by torch.save)
  matrix:h.npy[#node] (a 3x3 float32 homography from a matrix file)
  sample[:N] (a .pt2's own example input for this argument, or for argument N)
  3   3.5   true   false   none   str:TEXT   ints:1,2   floats:0.5,1
  list:SPEC;SPEC;...  tuple:SPEC;SPEC  dict:KEY=SPEC;KEY=SPEC
       each element any spec, e.g. a detector's List[Tensor]:
       'list:image:a.png,batch=0;image:b.png,batch=0'; [..] nests:
       'list:[list:ones:2;ones:3];ones:4'; 'list:' is empty

--inputs FILE gives every argument from one torch.save file: a tensor, or a tuple/list with one
value per argument; a list that fits a first List[...] argument is that argument. A .pt2 given
no inputs runs on the example inputs it keeps (data/sample_inputs).

--render OUT.png draws the output as the task it is over the (first) image input, on the image at
its own size (the result scaled from the size the model saw): a detector's boxes (torchvision's
List[Dict] with boxes/labels/scores, masks and keypoints when present, the (losses, detections)
tuple of scripted detectors, N x 4 / N x 6 tensors) with class names and scores from
--score-threshold; a segmentation (N x C x H x W, or a dict with "out") blended in with a legend;
a classifier's top-k (softmax applied to logits).
--task forces one; names come from --labels, else the archive's extra file labels.txt, else the
built-in ImageNet-1k, COCO or Pascal VOC set that fits. --json adds "interpreted".)";

inline constexpr const char* kWarpFooter =
    R"(Warps IMAGE with my_ops::warp_perspective into -o OUT. Give either --matrix or --corners.
The matrix maps source pixels to output pixels, as cv::warpPerspective's (JSON, NumPy .npy,
OpenCV FileStorage .xml/.yml). --corners: where the image's corners (top-left, top-right,
bottom-right, bottom-left) go.)";

inline constexpr const char* kActivationsFooter =
    R"(Runs the method once through a copy of its inlined graph with a probe after every node, and
prints every tensor value it computed, in execution order: the node's operator and module, the
shape, min/max/mean/std over the finite values and the NaN and Inf counts. A node in a loop gives
one line per iteration (#N). --first-nonfinite prints only the first value with a NaN or an Inf
and the values its node read. Comparisons, node by node (the first value that does not agree by
--rtol, --min-snr, --min-cosine or --atol, as compare's, is named):
  --compare-device D   the same model and inputs on another device (cpu against cuda)
  --compare-input SPEC / --compare-inputs FILE
                       the same model with other inputs (before and after a change)
  --reference FILE     values saved from Python: torch.save({module_path: tensor, ...}), each
                       matched to the output of the module with that path
  --compare-model B    another archive on the same inputs, module output by module output
Inputs as for run (see run --help).)";

inline constexpr const char* kOptimizeFooter =
    R"(Applies passes in order to a copy of the model (--freeze first, then --for-inference, then
each --pass in the order given), prints the node counts per operator kind before and after, and
with inputs times both (interleaved, after at least 3 warm-up runs) and compares their outputs.
-o writes the optimised copy as an archive Python's torch.jit.load reads. Passes:
  freeze, optimize-for-inference, fold-conv-bn, constant-propagation, dead-code-elimination,
  common-subexpression-elimination, peephole, remove-dropout, fuse-linear)";

inline constexpr const char* kDiffFooter =
    R"(Compares two archives: modules added, removed or of another type; parameters and buffers that
differ (max |difference|, or shape or dtype); plain attributes; the code and graph of every
method (a diff); extra files.

A model against its twin in another format (a TorchScript archive and its torch.export program,
a .pt2 and its .pte): the module trees and every parameter and buffer by name where both have
them; both run on the same inputs (--input/--inputs, or the sample inputs a .pt2 keeps) and their
outputs, at the same places of their structures, must agree by the criterion below (as compare's);
their timings are shown side by side. Code and graphs differ by nature and are not compared.

Two values agree when max |diff| <= --atol, or when max |diff| / max |reference| <= --rtol and
SNR >= --min-snr dB and cosine >= --min-cosine (defaults: 1e-3, 40 dB, 0.9999; no atol).
Exit status: 0 the same; 1 they differ (or a model cannot be read or run); 7 could not compare
(the outputs' structures differ, or nothing could be compared); 2 a usage error; 3 and 4 the work
crashed or timed out.)";

inline constexpr const char* kCompareFooter =
    R"(Runs both models on the same inputs and compares their final outputs, then every value inside
that can be matched, in the order the first one runs: a TorchScript archive against its
torch.export twin (.pt2), an export against its ExecuTorch program (.pte), two exports (float32
against a bfloat16 or quantized copy), or two versions of one archive; the order of A and B
changes only which is the reference (B).

The final outputs are always compared, flattened the same way on both sides (a .pt2's and a .pte's
nested by their output spec), their structures checked: tuples and lists alike, dict keys by name.
Inside, a module's output is what a forward hook on it sees, call by call: a module called N times
(a block's ReLU, a shared activation, a loop's body) gives N values on each side, matched in call
order. Modules whose operators differ (a decomposed op, a fused one) are compared at their
boundary. Values no module output matches are matched by the name of the torch.export node that
made them, where both sides know it (two exports; a .pte whose ETRecord lies beside it, a
delegate at its last operator), and then by the order of the operators inside their module where
both run the same ones there (shown as module/op#n). For each matched value: max |difference|,
max relative difference (over B's largest |value|), cosine similarity and SNR.

Two values agree when max |diff| <= --atol, or when max |diff| / max |reference| <= --rtol and
SNR >= --min-snr dB and cosine >= --min-cosine (defaults: 1e-3, 40 dB, 0.9999; no atol): relative
measures, so that a near-zero output cannot make everything equal. The first divergence is the
earliest value that does not agree. With no inputs given, both take the sample inputs one of them
keeps (a .pt2's).

Exit status: 0 the same (the outputs and every matched value agree); 1 they differ (or a model
cannot be read or run); 7 could not compare (the outputs could not be compared: their structures
differ, a side cannot run, no inputs); 2 a usage error; 3 and 4 the work crashed or timed out.
In CI: scriptscope-cli compare model.pt2 model.pte || exit 1)";

inline constexpr const char* kDevicesFooter =
    R"(Lists cpu and every CUDA device this LibTorch sees, with the reason when CUDA is unavailable.)";

} // namespace scriptscope::cli
