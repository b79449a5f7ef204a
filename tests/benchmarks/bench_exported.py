#!/usr/bin/env python3
"""A plain .pt2 run by ScriptScope's interpreter against ep.module() in Python and against its
TorchScript twin in ScriptScope, side by side in one run (the machine is shared and noisy: the
rounds alternate, and the ratios of the medians are what count).

bench_exported.py PYTHON CLI OUT_DIR [--rounds 3] [--iterations 30]

PYTHON is a Python with PyTorch 2.x (it makes the models once in OUT_DIR: ResNet-50 and a 12-layer
transformer encoder, each exported with torch.export.save and traced into a TorchScript twin, with
random seeded weights and their inputs); CLI is scriptscope-cli of a build on that PyTorch. Both
sides use the same number of threads (PyTorch's default here, printed). Each round times, with the
same warm-up and iterations: ep.module() in a Python loop; `scriptscope-cli run` on the .pt2 (the
interpreter) and on the twin; and `scriptscope-cli activations` on the .pt2, one run with every
value observed (statistics and memory), against the plain run's p50.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

MAKE = r"""
import os, sys, warnings
warnings.filterwarnings("ignore")
import torch, torch.nn as nn, torchvision
out = sys.argv[1]
torch.manual_seed(0)
def make(name, module, inputs):
    if os.path.exists(os.path.join(out, name + ".pt2")):
        return
    module = module.eval()
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(module, inputs), os.path.join(out, name + ".pt"))
    torch.export.save(torch.export.export(module, inputs), os.path.join(out, name + ".pt2"))
    torch.save(inputs, os.path.join(out, name + ".inputs.pt"))
make("resnet50", torchvision.models.resnet50(num_classes=1000), (torch.rand(1, 3, 224, 224),))
layer = nn.TransformerEncoderLayer(256, 8, dim_feedforward=1024, batch_first=True)
make("encoder12", nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False),
     (torch.rand(1, 128, 256),))
"""

EP_LOOP = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
module = torch.export.load(sys.argv[1]).module()
inputs = torch.load(sys.argv[2])
iterations = int(sys.argv[3])
with torch.no_grad():
    for _ in range(3):
        module(*inputs)
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        module(*inputs)
        samples.append((time.perf_counter() - start) * 1000)
print(json.dumps({"p50": sorted(samples)[len(samples) // 2], "threads": torch.get_num_threads()}))
"""


def cli_run(cli, model, inputs, iterations):
    out = subprocess.run([cli, "run", model, "--inputs", inputs, "--warmup", "3",
                          "--iterations", str(iterations), "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["stats_ms"]["p50"]


def cli_observed(cli, model, inputs):
    out = subprocess.run([cli, "activations", model, "--inputs", inputs, "--json", "--bins", "32"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["run_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("python")
    parser.add_argument("cli")
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    subprocess.run([args.python, "-c", MAKE, args.out], check=True)
    rows = []
    for name in ("resnet50", "encoder12"):
        pt2 = os.path.join(args.out, name + ".pt2")
        twin = os.path.join(args.out, name + ".pt")
        inputs = os.path.join(args.out, name + ".inputs.pt")
        python, interpreter, torchscript, observed = [], [], [], []
        threads = 0
        for round_ in range(args.rounds):
            out = subprocess.run([args.python, "-c", EP_LOOP, pt2, inputs, str(args.iterations)],
                                 capture_output=True, text=True, check=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            python.append(result["p50"])
            threads = result["threads"]
            interpreter.append(cli_run(args.cli, pt2, inputs, args.iterations))
            torchscript.append(cli_run(args.cli, twin, inputs, args.iterations))
            observed.append(cli_observed(args.cli, pt2, inputs))
            print("%s round %d: ep.module() %.2f ms, interpreter %.2f ms, TorchScript twin "
                  "%.2f ms, observed run %.2f ms" % (name, round_ + 1, python[-1], interpreter[-1],
                                                     torchscript[-1], observed[-1]), flush=True)
        m = {k: statistics.median(v) for k, v in
             (("python", python), ("interpreter", interpreter), ("torchscript", torchscript),
              ("observed", observed))}
        rows.append((name, threads, m))
    print()
    print("%-10s %7s %12s %12s %8s %12s %8s %12s %8s" %
          ("model", "threads", "ep.module()", "interpreter", "ratio", "TorchScript", "ratio",
           "observed", "ratio"))
    for name, threads, m in rows:
        print("%-10s %7d %10.2f ms %9.2f ms %7.2fx %9.2f ms %7.2fx %9.2f ms %7.2fx" %
              (name, threads, m["python"], m["interpreter"], m["interpreter"] / m["python"],
               m["torchscript"], m["interpreter"] / m["torchscript"], m["observed"],
               m["observed"] / m["interpreter"]))
    print("targets: interpreter/ep.module() <= 1.15x, interpreter/TorchScript <= 1.10x, "
          "observed/plain <= 3x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
