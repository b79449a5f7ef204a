#!/usr/bin/python3
"""Makes the benchmarks' models from torchvision (random weights, nothing downloaded), scripted
and saved: ResNet-18; ViT-B/16 (about 330 MB) for the GUI's large-archive benchmark; ResNet-50,
Faster R-CNN (ResNet-50 FPN) and 12- and 48-layer transformer encoders for the diagram's benchmark; a second ResNet-50 for the diff's;
with PyTorch 2.x, ResNet-50 exported (resnet50.pt2) for the diagram's benchmark too.
make_bench_models.py OUT_DIR [NAME...]   (default: all)"""
import os
import sys

import torch
import torchvision

out = sys.argv[1]
wanted = set(sys.argv[2:])
os.makedirs(out, exist_ok=True)


def make(name, build, seed=0):
    path = os.path.join(out, name + ".pt")
    if (wanted and name not in wanted) or os.path.exists(path):
        return
    torch.manual_seed(seed)
    torch.jit.script(build().eval()).save(path)
    print("wrote", path)


make("resnet18", lambda: torchvision.models.resnet18(weights=None))
make("vit_b_16", lambda: torchvision.models.vit_b_16(weights=None))
make("resnet50", lambda: torchvision.models.resnet50(weights=None))
# Another ResNet-50 (other random weights) for the archive diff's benchmark.
make("resnet50_other", lambda: torchvision.models.resnet50(weights=None), seed=1)
make("fasterrcnn", lambda: torchvision.models.detection.fasterrcnn_resnet50_fpn(
    weights=None, weights_backbone=None))


def encoder(layers):
    """A scripted nn.TransformerEncoder (d_model 64, 4 heads): its inlined forward brings
    MultiheadAttention's whole control flow along, about 1,170 operator nodes per layer."""
    layer = torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)


# The transformer-sized graphs of the diagram's benchmark (issue 27): 12 and 48 layers.
make("encoder12", lambda: encoder(12))
make("encoder48", lambda: encoder(48))

# With a PyTorch that has torch.export.save: ResNet-50 exported (.pt2), for the diagram's
# benchmark of a .pt2 beside the TorchScript one.
path = os.path.join(out, "resnet50.pt2")
if hasattr(torch, "export") and hasattr(torch.export, "save") and not os.path.exists(path) and (
        not wanted or "resnet50.pt2" in wanted):
    torch.manual_seed(0)
    resnet = torchvision.models.resnet50(weights=None).eval()
    torch.export.save(torch.export.export(resnet, (torch.rand(1, 3, 224, 224),)), path)
    print("wrote", path)
