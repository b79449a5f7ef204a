#!/usr/bin/python3
"""Makes ScriptScope's bundled demo: a photo-like image of a document lying in perspective, and a
TorchScript model that rectifies it with my_ops::warp_perspective and classifies the result.

Run with Debian's python3-torch: make_demo.py OP_LIBRARY [OUT_DIR]
The committed demo.png and demo_model.pt were made by this script.
"""
import os
import sys

import cv2
import numpy as np
import torch
import torch.nn as nn
from typing import List

torch.ops.load_library(sys.argv[1])
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(2026)
rng = np.random.default_rng(2026)

# ---- The image: a page with a heading, text lines and a chart, seen at an angle on a desk ----
W, H = 640, 480
page = np.full((560, 400, 3), 245, np.uint8)
cv2.rectangle(page, (30, 30), (370, 70), (60, 60, 160), -1)
cv2.putText(page, "ScriptScope", (44, 62), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (250, 250, 250), 2, cv2.LINE_AA)
for i, y in enumerate(range(100, 300, 18)):
    length = int(rng.integers(220, 340))
    cv2.line(page, (30, y), (30 + length, y), (70, 70, 70), 5, cv2.LINE_AA)
for i, height in enumerate([60, 110, 85, 140, 95, 125]):
    x = 50 + i * 52
    cv2.rectangle(page, (x, 500 - height), (x + 36, 500), (40 + 30 * i, 140, 220 - 25 * i), -1)
cv2.line(page, (40, 500), (370, 500), (30, 30, 30), 2)

desk = np.zeros((H, W, 3), np.uint8)
yy, xx = np.mgrid[0:H, 0:W]
desk[..., 0] = (60 + 20 * np.sin(xx / 37.0) + yy / 12).astype(np.uint8)
desk[..., 1] = (90 + 15 * np.sin(yy / 23.0) + xx / 20).astype(np.uint8)
desk[..., 2] = (130 + 25 * np.sin((xx + yy) / 51.0)).astype(np.uint8)

# Where the page's corners land in the photo: the warp the demo asks a person to undo.
page_corners = np.float32([[0, 0], [399, 0], [399, 559], [0, 559]])
photo_corners = np.float32([[182, 38], [498, 74], [560, 446], [96, 410]])
to_photo = cv2.getPerspectiveTransform(page_corners, photo_corners)
warped_page = cv2.warpPerspective(page, to_photo, (W, H))
mask = cv2.warpPerspective(np.full(page.shape[:2], 255, np.uint8), to_photo, (W, H))
image = np.where(mask[..., None] > 127, warped_page, desk)
image = cv2.GaussianBlur(image, (3, 3), 0)
cv2.imwrite(os.path.join(OUT, "demo.png"), image)

# ---- The model: rectify with the project's operator, then a small classifier ----


class DocumentClassifier(nn.Module):
    """Rectifies a photographed page with a homography, then scores it."""

    labels: List[str]

    def __init__(self):
        super().__init__()
        self.labels = ["invoice", "letter", "report", "receipt", "form"]
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(64, len(self.labels))
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, image: torch.Tensor, warp: torch.Tensor):
        """image: 1x3xHxW float in [0, 1]; warp: 3x3, photo pixels -> page pixels."""
        page = torch.ops.my_ops.warp_perspective(image, warp, [280, 200], interpolation="linear",
                                                 border="replicate")
        scores = self.classifier(self.features((page - self.mean) / self.std).flatten(1))
        return page, torch.softmax(scores, dim=1)

    @torch.jit.export
    def label_of(self, index: int) -> str:
        return self.labels[index]


model = DocumentClassifier().eval()
scripted = torch.jit.script(model)
scripted.save(os.path.join(OUT, "demo_model.pt"), _extra_files={
    "README.txt": "ScriptScope demo: rectifies a photographed page with my_ops::warp_perspective "
                  "and classifies it (untrained weights).\n",
    "preprocessing.json": '{"image": "RGB, CHW, batch 1, float32, scale 1/255", '
                          '"warp": "3x3 float32, photo pixels to a 200x280 page"}',
})

# The warp that undoes the photo's perspective onto a 200x280 page, for the demo's inputs.
to_page = cv2.getPerspectiveTransform(photo_corners, np.float32([[0, 0], [199, 0], [199, 279], [0, 279]]))
np.save(os.path.join(OUT, "demo_warp.npy"), to_page)
print("demo written to", OUT)
