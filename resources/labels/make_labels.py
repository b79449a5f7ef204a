#!/usr/bin/python3
"""Writes the label sets ScriptScope builds in, one name per line in index order, from the
installed torchvision's model metadata (nothing is downloaded):
  imagenet.txt  the 1000 ImageNet-1k classes (torchvision's classifiers)
  coco.txt      the 91 COCO category ids of torchvision's detectors (N/A for unused ids,
                __background__ at 0)
  voc.txt       the 21 Pascal VOC classes of torchvision's segmenters (__background__ at 0)
Run with Debian's python3-torchvision: make_labels.py [OUT_DIR]  (default: this folder)."""
import os
import sys

from torchvision.models import ResNet50_Weights
from torchvision.models.detection import FasterRCNN_ResNet50_FPN_Weights
from torchvision.models.segmentation import FCN_ResNet50_Weights

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
sets = {
    "imagenet.txt": ResNet50_Weights.IMAGENET1K_V1.meta["categories"],
    "coco.txt": FasterRCNN_ResNet50_FPN_Weights.COCO_V1.meta["categories"],
    "voc.txt": FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1.meta["categories"],
}
for name, categories in sets.items():
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write("\n".join(categories) + "\n")
    print("wrote", name, len(categories))
