#!/usr/bin/env python3
"""ExecuTorch programs run by ScriptScope against ExecuTorch's own Python runtime on the same file,
side by side in one run (the machine is shared and noisy: the rounds alternate, and the ratios of
the medians are what count).

bench_pte.py PYTHON CLI OUT_DIR [--rounds 3] [--iterations 50]

PYTHON is a Python with PyTorch 2.x and executorch (it makes the programs once in OUT_DIR: a small
CNN and torchvision's MobileNetV2, random seeded weights, each lowered to XNNPACK, and their
inputs); CLI is scriptscope-cli of a build that links that executorch. Each round times, with the
same warm-up and iterations on the same inputs: the Python runtime's method.execute() in a loop,
once with ETDump off and once with it on (its event tracer recording every run), and
`scriptscope-cli run --profile` on the same file (ExecuTorch's C++ runtime inside ScriptScope's
engine): its timed runs (no tracer), then the same warm-up and iterations with ETDump on, the p50 of
each from one process.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

MAKE = r"""
import logging, os, sys, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
import torch, torch.nn as nn, torchvision
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
out = sys.argv[1]
torch.manual_seed(0)
class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2)
        self.fc = nn.Linear(16, 10)
    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3)))
def make(name, module, inputs):
    if os.path.exists(os.path.join(out, name + ".pte")):
        return
    program = to_edge_transform_and_lower(torch.export.export(module.eval(), inputs),
                                          partitioner=[XnnpackPartitioner()]).to_executorch()
    with open(os.path.join(out, name + ".pte"), "wb") as f:
        f.write(program.buffer)
    torch.save(inputs, os.path.join(out, name + ".inputs.pt"))
make("cnn_xnnpack", SmallCnn(), (torch.randn(1, 3, 32, 32),))
make("mobilenet_v2_xnnpack", torchvision.models.mobilenet_v2(), (torch.randn(1, 3, 224, 224),))
"""

RUNTIME_LOOP = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
from executorch.runtime import Runtime
path, inputs, iterations, etdump = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
program = (Runtime.get().load_program(path, enable_etdump=True, debug_buffer_size=0) if etdump
           else Runtime.get().load_program(path))
method = program.load_method("forward")
inputs = list(torch.load(inputs))
for _ in range(3):
    method.execute(inputs)
samples = []
for _ in range(iterations):
    start = time.perf_counter()
    method.execute(inputs)
    samples.append((time.perf_counter() - start) * 1000)
print(json.dumps({"p50": sorted(samples)[len(samples) // 2]}))
"""


def runtime_p50(python, pte, inputs, iterations, etdump):
    out = subprocess.run([python, "-c", RUNTIME_LOOP, pte, inputs, str(iterations),
                          "1" if etdump else "0"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["p50"]


def cli_p50(cli, pte, inputs, iterations):
    """ScriptScope's p50 with ETDump off, and with it on (the profile's traced runs)."""
    out = subprocess.run([cli, "run", pte, "--inputs", inputs, "--warmup", "3",
                          "--iterations", str(iterations), "--profile", "--json"],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    return result["stats_ms"]["p50"], result["profile"]["wall_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("python")
    parser.add_argument("cli")
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    subprocess.run([args.python, "-c", MAKE, args.out], check=True)
    rows = []
    for name in ("cnn_xnnpack", "mobilenet_v2_xnnpack"):
        pte = os.path.join(args.out, name + ".pte")
        inputs = os.path.join(args.out, name + ".inputs.pt")
        python, traced, ours, ours_traced = [], [], [], []
        for round_ in range(args.rounds):
            python.append(runtime_p50(args.python, pte, inputs, args.iterations, False))
            plain, on = cli_p50(args.cli, pte, inputs, args.iterations)
            ours.append(plain)
            ours_traced.append(on)
            traced.append(runtime_p50(args.python, pte, inputs, args.iterations, True))
            print("%s round %d: Python runtime %.3f ms (ETDump on %.3f ms), ScriptScope %.3f ms "
                  "(ETDump on %.3f ms)" % (name, round_ + 1, python[-1], traced[-1], ours[-1],
                                           ours_traced[-1]), flush=True)
        rows.append((name, statistics.median(python), statistics.median(ours),
                     statistics.median(traced), statistics.median(ours_traced)))
    print()
    print("%-22s %14s %12s %8s | %12s %8s | %12s %8s" %
          ("program", "Python runtime", "ScriptScope", "ratio", "Py ETDump on", "on/off",
           "SS ETDump on", "on/off"))
    for name, python, ours, traced, ours_traced in rows:
        print("%-22s %11.3f ms %9.3f ms %7.2fx | %9.3f ms %7.2fx | %9.3f ms %7.2fx" %
              (name, python, ours, ours / python, traced, traced / python, ours_traced,
               ours_traced / ours))
    print("targets: ScriptScope/Python runtime <= 1.05x; on/off is what ExecuTorch's event "
          "tracer costs a run, in its Python runtime and in ScriptScope")
    return 0


if __name__ == "__main__":
    sys.exit(main())
