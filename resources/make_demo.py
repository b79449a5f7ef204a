#!/usr/bin/python3
"""Trains and saves ScriptScope's bundled demo: a model that finds the page in a photo, rectifies it
with my_ops::warp_perspective from its own predicted corners, and says what kind of page it is.

Run with Debian's python3-torch: make_demo.py OP_LIBRARY [OUT_DIR] [--steps N]
It is deterministic (seeded data, fixed step counts, two threads) and takes about 17 minutes on two
cores. The committed demo_model.pt, demo.png, demo_warp.npy and demo_video.mp4 were made by it; the
test suite never trains (tests/fixtures/eval_demo_model.py measures the committed model).

The model's interface:
  forward(image) -> Dict[str, Tensor]: image is 1x3xHxW float RGB in [0, 1] (480x640 as trained);
      "corners" 4x2 in pixels of the photo (top-left, top-right, bottom-right, bottom-left of the page),
      "page" 1x3x280x200 (the page rectified from those corners), "scores" one per kind, softmaxed.
  classify_page(image, warp) -> Dict[str, Tensor]: the same "page" and "scores" from a given 3x3 warp
      (photo pixels to the 200x280 page), so that a warp tuned by hand feeds the classifier.
"""
import json
import os
import sys
import time
from multiprocessing import Pool
from typing import Dict, List

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_scene as ds  # noqa: E402

args = [a for a in sys.argv[1:] if not a.startswith("--")]
OP_LIBRARY = args[0]
OUT = args[1] if len(args) > 1 else os.path.dirname(os.path.abspath(__file__))
STEPS = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 2000
SCENES = int(sys.argv[sys.argv.index("--scenes") + 1]) if "--scenes" in sys.argv else 5000
torch.ops.load_library(OP_LIBRARY)
torch.set_num_threads(2)
torch.manual_seed(2026)
SEED = 2026
NET_H, NET_W = 96, 128  # the photo is averaged down to this before the corner network
HEAT_H, HEAT_W = 48, 64  # one heat map cell per 10x10 photo pixels
PAGE_SIZE = [280, 200]  # rows, columns of the rectified page


def block(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class CornerNet(nn.Module):
    """A small encoder-decoder that gives one heat map per corner at half the network's input size."""

    def __init__(self):
        super().__init__()
        self.enc1 = block(3, 16, 2)     # 48x64
        self.enc2 = block(16, 32, 2)    # 24x32
        self.enc3 = block(32, 64, 2)    # 12x16
        self.enc4 = block(64, 128, 2)   # 6x8
        self.context = nn.Sequential(nn.Conv2d(128, 128, 3, 1, 2, dilation=2, bias=False), nn.BatchNorm2d(128),
                                     nn.ReLU(inplace=True))
        self.dec3 = block(128 + 64, 64, 1)
        self.dec2 = block(64 + 32, 32, 1)
        self.dec1 = block(32 + 16, 24, 1)
        self.head = nn.Conv2d(24, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        e3 = self.enc3(e2)
        e4 = self.context(self.enc4(e3))
        d3 = self.dec3(torch.cat([F.interpolate(e4, size=e3.shape[-2:], mode="bilinear", align_corners=False), e3], 1))
        d2 = self.dec2(torch.cat([F.interpolate(d3, size=e2.shape[-2:], mode="bilinear", align_corners=False), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, size=e1.shape[-2:], mode="bilinear", align_corners=False), e1], 1))
        return self.head(d1)


class PageClassifier(nn.Module):
    """Scores the kinds of page on the rectified page, averaged down to 140x100."""

    def __init__(self, kinds: int):
        super().__init__()
        self.features = nn.Sequential(block(3, 16, 2), block(16, 32, 2), block(32, 64, 2), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(64, kinds)

    def forward(self, page: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(page).flatten(1))


def soft_argmax(heat: torch.Tensor):
    """Expected (x, y) in heat map cells, and the softmaxed heat maps."""
    b, k, h, w = heat.shape
    prob = torch.softmax(heat.flatten(2), dim=2).view(b, k, h, w)
    xs = torch.arange(w, dtype=heat.dtype, device=heat.device)
    ys = torch.arange(h, dtype=heat.dtype, device=heat.device)
    x = (prob.sum(2) * xs).sum(2)
    y = (prob.sum(3) * ys).sum(2)
    return torch.stack([x, y], 2), prob


class PageReader(nn.Module):
    """Finds a photographed page's corners, rectifies the page with my_ops::warp_perspective and
    classifies it."""

    kinds: List[str]
    net_size: List[int]
    heat_size: List[int]
    page_size: List[int]

    def __init__(self):
        super().__init__()
        self.kinds = list(ds.KINDS)
        self.net_size = [NET_H, NET_W]
        self.heat_size = [HEAT_H, HEAT_W]
        self.page_size = list(PAGE_SIZE)
        self.corners = CornerNet()
        self.classify = PageClassifier(len(ds.KINDS))
        self.register_buffer("mean", torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.25, 0.25, 0.25]).view(1, 3, 1, 1))

    def find_corners(self, image: torch.Tensor) -> torch.Tensor:
        """4x2 corners of the page in pixels of the photo."""
        small = F.adaptive_avg_pool2d(image, self.net_size)
        heat = self.corners((small - self.mean) / self.std)
        cells, _ = soft_argmax(heat)
        scale = torch.tensor([image.size(3) / self.heat_size[1], image.size(2) / self.heat_size[0]], dtype=cells.dtype,
                             device=cells.device)
        return (cells[0] + 0.5) * scale - 0.5

    def page_warp(self, corners: torch.Tensor) -> torch.Tensor:
        """The 3x3 homography from the photo to the 200x280 page, from the page's corners."""
        h, w = float(self.page_size[0] - 1), float(self.page_size[1] - 1)
        target = torch.tensor([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]], dtype=torch.float64)
        src = corners.to(torch.float64).cpu()
        a = torch.zeros(8, 8, dtype=torch.float64)
        b = torch.zeros(8, dtype=torch.float64)
        for i in range(4):
            x, y = src[i, 0], src[i, 1]
            u, v = target[i, 0], target[i, 1]
            a[2 * i, 0], a[2 * i, 1], a[2 * i, 2] = x, y, 1.0
            a[2 * i, 6], a[2 * i, 7] = -u * x, -u * y
            a[2 * i + 1, 3], a[2 * i + 1, 4], a[2 * i + 1, 5] = x, y, 1.0
            a[2 * i + 1, 6], a[2 * i + 1, 7] = -v * x, -v * y
            b[2 * i], b[2 * i + 1] = u, v
        h8 = torch.linalg.solve(a, b)
        return torch.cat([h8, torch.ones(1, dtype=torch.float64)]).view(3, 3).to(torch.float32)

    def read_page(self, image: torch.Tensor, warp: torch.Tensor) -> Dict[str, torch.Tensor]:
        page = torch.ops.my_ops.warp_perspective(image, warp.to(image.device), self.page_size, interpolation="linear",
                                                 border="replicate")
        small = F.avg_pool2d(page, 2)
        scores = torch.softmax(self.classify((small - self.mean) / self.std), dim=1)[0]
        return {"page": page, "scores": scores}

    def forward(self, image: torch.Tensor) -> Dict[str, torch.Tensor]:
        """image: 1x3xHxW float RGB in [0, 1]."""
        if image.dim() != 4 or image.size(0) != 1 or image.size(1) != 3:
            raise RuntimeError("PageReader expects one RGB photo, 1x3xHxW")
        corners = self.find_corners(image)
        result = self.read_page(image, self.page_warp(corners))
        result["corners"] = corners
        return result

    @torch.jit.export
    def classify_page(self, image: torch.Tensor, warp: torch.Tensor) -> Dict[str, torch.Tensor]:
        """The page rectified with a given warp (photo pixels to the 200x280 page), and its scores."""
        return self.read_page(image, warp)

    @torch.jit.export
    def kind_name(self, index: int) -> str:
        return self.kinds[index]


# ---- data ----

def make_scene(i):
    rng = np.random.default_rng([SEED, i])
    photo, corners, kind = ds.scene(rng)
    small = photo.reshape(NET_H, 5, NET_W, 5, 3).mean((1, 3)).astype(np.uint8)
    jitter = corners + rng.normal(0, 7, corners.shape).astype(np.float32)
    page = ds.rectify(photo, jitter).astype(np.float32)
    page = page.reshape(PAGE_SIZE[0] // 2, 2, PAGE_SIZE[1] // 2, 2, 3).mean((1, 3)).astype(np.uint8)
    return small[..., ::-1].copy(), corners, kind, page[..., ::-1].copy()


def dataset(count, offset):
    with Pool(2) as pool:
        items = pool.map(make_scene, range(offset, offset + count), chunksize=64)
    photos = torch.from_numpy(np.stack([it[0] for it in items])).permute(0, 3, 1, 2).contiguous()
    corners = torch.from_numpy(np.stack([it[1] for it in items]))
    kinds = torch.tensor([it[2] for it in items])
    pages = torch.from_numpy(np.stack([it[3] for it in items])).permute(0, 3, 1, 2).contiguous()
    return photos, corners, kinds, pages


def colour_jitter(x, gen):
    """Per-image brightness, contrast, gamma, channel order and grey: the colours of the world vary."""
    b = x.size(0)
    x = x.clamp(1e-4, 1) ** torch.empty(b, 1, 1, 1).uniform_(0.6, 1.6, generator=gen)
    x = (x - 0.5) * torch.empty(b, 1, 1, 1).uniform_(0.6, 1.3, generator=gen) + 0.5
    x = x + torch.empty(b, 1, 1, 1).uniform_(-0.15, 0.15, generator=gen)
    perm = torch.randperm(3, generator=gen)
    swap = torch.rand(b, generator=gen) < 0.5
    x = torch.where(swap.view(b, 1, 1, 1), x[:, perm], x)
    grey = torch.rand(b, generator=gen) < 0.15
    x = torch.where(grey.view(b, 1, 1, 1), x.mean(1, keepdim=True).expand_as(x), x)
    return x.clamp(0, 1)


def hflip(x, corners):
    """Mirrors photos and their corners; the mirrored page's top-left is the old top-right."""
    flipped = corners[:, [1, 0, 3, 2]].clone()
    flipped[..., 0] = ds.W - 1 - flipped[..., 0]
    return x.flip(3), flipped


def train_corners(model, photos, corners, val):
    net = model.corners
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=STEPS, pct_start=0.15)
    gen = torch.Generator().manual_seed(SEED)
    cell = torch.tensor([ds.W / HEAT_W, ds.H / HEAT_H])
    ys = torch.arange(HEAT_H, dtype=torch.float32).view(1, 1, HEAT_H, 1)
    xs = torch.arange(HEAT_W, dtype=torch.float32).view(1, 1, 1, HEAT_W)
    diagonal = float(np.hypot(ds.W, ds.H))
    start = time.time()
    for step in range(STEPS):
        net.train()
        idx = torch.randint(0, photos.size(0), (32,), generator=gen)
        x = photos[idx].float() / 255
        c = corners[idx]
        flip = torch.rand(1, generator=gen).item() < 0.5
        if flip:
            x, c = hflip(x, c)
        x = colour_jitter(x, gen)
        x = x + torch.randn(x.shape, generator=gen) * 0.02
        heat = net((x - model.mean) / model.std)
        pred, prob = soft_argmax(heat)
        target_cells = (c + 0.5) / cell - 0.5
        coord_loss = ((pred - target_cells) * cell).norm(dim=2).mean() / diagonal
        gauss = torch.exp(-((xs - target_cells[..., 0, None, None]) ** 2 + (ys - target_cells[..., 1, None, None]) ** 2)
                          / (2 * 1.0 ** 2))
        gauss = gauss / gauss.sum((2, 3), keepdim=True)
        heat_loss = -(gauss * torch.log_softmax(heat.flatten(2), 2).view_as(heat)).sum((2, 3)).mean()
        loss = coord_loss * 20 + heat_loss * 0.1
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 250 == 0 or step == STEPS - 1:
            print(f"corners step {step}/{STEPS}  loss {loss.item():.4f}  train error {coord_loss.item() * 100:.2f}% "
                  f"of the diagonal  val {validate(model, val) * 100:.2f}%  {time.time() - start:.0f} s", flush=True)


def validate(model, val):
    photos, corners = val
    net = model.corners
    net.eval()
    with torch.no_grad():
        x = photos.float() / 255
        pred, _ = soft_argmax(net((x - model.mean) / model.std))
        cell = torch.tensor([ds.W / HEAT_W, ds.H / HEAT_H])
        px = (pred + 0.5) * cell - 0.5
        return float((px - corners).norm(dim=2).mean() / np.hypot(ds.W, ds.H))


def train_classifier(model, pages, kinds, steps):
    net = model.classify
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps, pct_start=0.2)
    gen = torch.Generator().manual_seed(SEED + 1)
    for step in range(steps):
        net.train()
        idx = torch.randint(0, pages.size(0), (48,), generator=gen)
        x = colour_jitter(pages[idx].float() / 255, gen)
        loss = F.cross_entropy(net((x - model.mean) / model.std), kinds[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"classifier step {step}/{steps}  loss {loss.item():.4f}", flush=True)


# ---- the demo's photo and video ----

def demo_video(path, rng, frames=96, fps=12):
    """The page moving under a camera over a desk, with light changing: what Play shows offline."""
    background = ds.synthetic_background(rng)
    page = ds.draw_page(2, rng)
    keys = [ds.random_corners(rng, 18) for _ in range(5)]
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), fps, (ds.W, ds.H))
    if not writer.isOpened():
        raise RuntimeError("cannot write " + path)
    for f in range(frames):
        t = f / (frames - 1) * (len(keys) - 1)
        i = min(int(t), len(keys) - 2)
        s = t - i
        s = s * s * (3 - 2 * s)
        corners = (keys[i] * (1 - s) + keys[i + 1] * s).astype(np.float32)
        frame_rng = np.random.default_rng([SEED, 10 ** 6, f // 24])  # light changes every two seconds
        writer.write(ds.compose(background, page, corners, frame_rng))
    writer.release()


def main():
    print("making", SCENES, "scenes", flush=True)
    start = time.time()
    photos, corners, kinds, pages = dataset(SCENES, 0)
    val_photos, val_corners, _, _ = dataset(300, 10 ** 7)
    print(f"scenes made in {time.time() - start:.0f} s", flush=True)

    model = PageReader()
    train_corners(model, photos, corners, (val_photos, val_corners))
    train_classifier(model, pages, kinds, max(STEPS // 8, 50))
    model.eval()
    print(f"trained in {time.time() - start:.0f} s; synthetic validation error "
          f"{validate(model, (val_photos, val_corners)) * 100:.2f}% of the diagonal", flush=True)

    scripted = torch.jit.script(model)
    labels = "\n".join(ds.KINDS) + "\n"
    scripted.save(os.path.join(OUT, "demo_model.pt"), _extra_files={
        "README.txt": "ScriptScope demo: finds a photographed page's corners, rectifies the page with "
                      "my_ops::warp_perspective and classifies its kind. Trained by resources/make_demo.py "
                      "on synthetic scenes.\n",
        "labels.txt": labels,
        "preprocessing.json": json.dumps({
            "image": "RGB, CHW, batch 1, float32, scale 1/255, 480x640",
            "warp": "3x3 float32, photo pixels to a 200x280 page (classify_page)",
            "outputs": "corners 4x2 photo pixels (TL, TR, BR, BL); page 1x3x280x200; scores per kind",
        }),
    })

    rng = np.random.default_rng([SEED, 424242])
    page = ds.draw_page(0, rng)
    photo_corners = np.float32([[182, 38], [498, 74], [560, 446], [96, 410]])
    photo = ds.compose(ds.synthetic_background(rng), page, photo_corners, rng)
    cv2.imwrite(os.path.join(OUT, "demo.png"), photo)
    target = np.float32([[0, 0], [199, 0], [199, 279], [0, 279]])
    np.save(os.path.join(OUT, "demo_warp.npy"), cv2.getPerspectiveTransform(photo_corners, target))
    demo_video(os.path.join(OUT, "demo_video.mp4"), np.random.default_rng([SEED, 777]))

    image = torch.from_numpy(photo[..., ::-1].copy()).permute(2, 0, 1)[None].float() / 255
    result = scripted(image)
    error = (result["corners"] - torch.from_numpy(photo_corners)).norm(dim=1).mean().item()
    print(f"demo.png: corners {result['corners'].round().tolist()} (error {error:.1f} px), kind "
          f"{ds.KINDS[int(result['scores'].argmax())]} {result['scores'].max().item():.3f}")
    print("demo written to", OUT, f"in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
