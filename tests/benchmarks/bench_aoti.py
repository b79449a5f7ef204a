#!/usr/bin/env python3
"""An AOTInductor package run by ScriptScope against the same package run by a Python loop, side by
side in one run (the machine is shared and noisy: the rounds alternate, and the ratio of the
medians is what counts).

bench_aoti.py PYTHON CLI PACKAGE.pt2 INPUTS.pt [--rounds 3] [--iterations 50]

PYTHON is a Python with the PyTorch that compiled the package (torch._inductor.aoti_load_package);
CLI is scriptscope-cli of a build on that PyTorch. Each round times the Python loop, then
`scriptscope-cli run --json`, each with the same warm-up and iterations, and takes their p50s.
"""
import argparse
import json
import statistics
import subprocess
import sys

PYTHON_LOOP = """
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
model = torch._inductor.aoti_load_package(sys.argv[1])
inputs = torch.load(sys.argv[2])
iterations = int(sys.argv[3])
with torch.no_grad():
    for _ in range(3):
        model(*inputs)
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        model(*inputs)
        samples.append((time.perf_counter() - start) * 1000)
print(json.dumps(sorted(samples)[len(samples) // 2]))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("python")
    parser.add_argument("cli")
    parser.add_argument("package")
    parser.add_argument("inputs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    python_p50, cli_p50 = [], []
    for round_ in range(args.rounds):
        out = subprocess.run([args.python, "-c", PYTHON_LOOP, args.package, args.inputs,
                              str(args.iterations)], capture_output=True, text=True, check=True)
        python_p50.append(json.loads(out.stdout.strip().splitlines()[-1]))
        out = subprocess.run([args.cli, "run", args.package, "--inputs", args.inputs, "--warmup",
                              "3", "--iterations", str(args.iterations), "--json"],
                             capture_output=True, text=True, check=True)
        cli_p50.append(json.loads(out.stdout)["stats_ms"]["p50"])
        print("round %d: Python loop p50 %.2f ms, ScriptScope p50 %.2f ms" %
              (round_ + 1, python_p50[-1], cli_p50[-1]), flush=True)
    ratio = statistics.median(cli_p50) / statistics.median(python_p50)
    print("median p50: Python %.2f ms, ScriptScope %.2f ms, ratio ScriptScope/Python %.2f" %
          (statistics.median(python_p50), statistics.median(cli_p50), ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
