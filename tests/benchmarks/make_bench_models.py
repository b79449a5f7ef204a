#!/usr/bin/python3
"""Makes the benchmark's model: torchvision's ResNet-18 (random weights, nothing downloaded),
scripted and saved. make_bench_models.py OUT_DIR"""
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
