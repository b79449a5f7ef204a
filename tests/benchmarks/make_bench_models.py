#!/usr/bin/python3
"""Makes the benchmarks' models from torchvision (random weights, nothing downloaded), scripted
and saved: ResNet-18, and ViT-B/16 (about 330 MB) for the GUI's large-archive benchmark.
make_bench_models.py OUT_DIR"""
import os
import sys

import torch
import torchvision

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None).eval()
torch.jit.script(model).save(os.path.join(out, "resnet18.pt"))
print("wrote", os.path.join(out, "resnet18.pt"))
vit = torchvision.models.vit_b_16(weights=None).eval()
torch.jit.script(vit).save(os.path.join(out, "vit_b_16.pt"))
print("wrote", os.path.join(out, "vit_b_16.pt"))
