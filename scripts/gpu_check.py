#!/usr/bin/env python3
"""ScriptScope's checks on a CUDA GPU, through PyTorch (scripts/gpu-check.sh runs this).

gpu_check.py LIBRARY [--demo DEMO.pt] [--classifier CLASSIFIER.pt] [--log LOG]

LIBRARY is the operator library (libwarp_perspective.so) built against this Python's torch.
Checks, each one row of the summary table:
  - the CUDA kernel is registered for my_ops::warp_perspective (torch._C._dispatch_dump);
  - the CUDA kernel against the CPU kernel on uint8 and float32 images, every interpolation and
    border mode, forward and inverse: at most 1 grey level (uint8) and 1e-4 (float32) apart on the
    pixels away from the input's border, and how far apart on all pixels;
  - batches (N x C x H x W), non-contiguous images, the matrix on either device, the refusals;
  - that warping a CUDA image copies no image to the host (the profiler's memory copies);
  - the demo model and a torchvision classifier, forward on cuda:0 against the CPU.
Without a usable CUDA device it runs the CPU side, says why CUDA is missing, and exits with 77.
A GPU figure is only ever printed from a run on a GPU.
"""
import argparse
import sys
import time

import numpy as np
import torch

rows = []  # (check, result, detail)


def row(check, ok, detail):
    result = "pass" if ok is True else ("FAIL" if ok is False else ok)
    rows.append((check, result, detail))
    print(f"{result:5} {check}: {detail}", flush=True)


def test_image(height, width, channels, dtype, seed=0):
    """Gradients, a checkerboard and noise: structure at every scale."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    rng = np.random.default_rng(seed)
    planes = []
    for c in range(channels):
        v = (x * 3 + y * 2 + c * 40 + ((x // 8 + y // 8) % 2) * 60) % 256
        v = np.clip(v + rng.normal(0, 6, v.shape), 0, 255)
        planes.append(v)
    image = np.stack(planes, axis=-1)
    if dtype == torch.uint8:
        return torch.from_numpy(np.round(image).astype(np.uint8))
    return torch.from_numpy((image / 255.0).astype(np.float32))


# A real perspective: the output is larger than the input, so the border is used.
H = torch.tensor([[0.82, 0.12, 30.0], [-0.08, 0.95, 22.0], [0.0006, 0.0003, 1.0]], dtype=torch.float64)
INTERPOLATIONS = ["nearest", "linear", "cubic", "lanczos4"]
BORDERS = ["constant", "replicate", "reflect", "reflect101", "wrap"]


def interior_mask(matrix, inverse, in_hw, out_hw, margin):
    """Output pixels whose source point lies at least `margin` pixels inside the input."""
    m = matrix.numpy()
    to_source = m if inverse else np.linalg.inv(m)
    ys, xs = np.mgrid[0:out_hw[0], 0:out_hw[1]].astype(np.float64)
    w = to_source[2, 0] * xs + to_source[2, 1] * ys + to_source[2, 2]
    sx = (to_source[0, 0] * xs + to_source[0, 1] * ys + to_source[0, 2]) / w
    sy = (to_source[1, 0] * xs + to_source[1, 1] * ys + to_source[1, 2]) / w
    return torch.from_numpy((sx >= margin) & (sx <= in_hw[1] - 1 - margin) & (sy >= margin) &
                            (sy <= in_hw[0] - 1 - margin))


def warp(image, matrix, **options):
    return torch.ops.my_ops.warp_perspective(image, matrix, **options)


def check_registration():
    dump = torch._C._dispatch_dump("my_ops::warp_perspective")
    kernels = [line.split(":")[0] for line in dump.splitlines() if "registered at" in line and
               not line.startswith("debug")]
    want_cuda = torch.version.cuda is not None
    row("CUDA kernel registered", ("CUDA" in kernels) == want_cuda,
        f"kernels {', '.join(kernels)}; this torch {'has' if want_cuda else 'has no'} CUDA")


def check_operator(device):
    worst = {torch.uint8: 0.0, torch.float32: 0.0}
    worst_all = {torch.uint8: 0.0, torch.float32: 0.0}
    failures = []
    in_hw, out_hw = (240, 320), (300, 400)
    for dtype in (torch.uint8, torch.float32):
        image = test_image(*in_hw, 3, dtype)
        gpu_image = image.to(device)
        tolerance = 1.0 if dtype == torch.uint8 else 1e-4
        for inverse in (False, True):
            matrix = torch.linalg.inv(H) if inverse else H
            inside = interior_mask(matrix, inverse, in_hw, out_hw, 5)
            for interpolation in INTERPOLATIONS:
                for border in BORDERS:
                    options = dict(size=list(out_hw), interpolation=interpolation, border=border,
                                   border_value=0.3 if dtype == torch.float32 else 77.0, inverse=inverse)
                    cpu = warp(image, matrix, **options)
                    gpu = warp(gpu_image, matrix, **options)
                    if gpu.device != gpu_image.device or gpu.dtype != dtype or gpu.shape != cpu.shape:
                        failures.append(f"{dtype} {interpolation} {border}: {gpu.device} {gpu.dtype} {tuple(gpu.shape)}")
                        continue
                    diff = (gpu.cpu().double() - cpu.double()).abs().amax(dim=-1)
                    interior = float(diff[inside].max())
                    worst[dtype] = max(worst[dtype], interior)
                    worst_all[dtype] = max(worst_all[dtype], float(diff.max()))
                    if interior > tolerance:
                        failures.append(f"{dtype} {interpolation} {border} inverse={inverse}: {interior:.3g}")
    cases = 2 * 2 * len(INTERPOLATIONS) * len(BORDERS)
    row("kernel vs CPU, uint8 (<= 1 level)", worst[torch.uint8] <= 1.0 and not failures,
        f"{cases // 2} modes: max {worst[torch.uint8]:g} inside, {worst_all[torch.uint8]:g} on all pixels")
    row("kernel vs CPU, float32 (<= 1e-4)", worst[torch.float32] <= 1e-4 and not failures,
        f"{cases // 2} modes: max {worst[torch.float32]:.2g} inside, {worst_all[torch.float32]:.2g} on all pixels")
    for failure in failures[:10]:
        print("      " + failure)


def check_layouts(device):
    problems = []
    # N x C x H x W, and a channels-last view (non-contiguous rows of one plane).
    batch = torch.stack([test_image(64, 80, 3, torch.float32, seed) for seed in range(4)]).permute(0, 3, 1, 2)
    for name, image in (("batch channels-first view", batch), ("batch contiguous", batch.contiguous())):
        cpu = warp(image, H, size=[70, 90], interpolation="cubic", border="reflect")
        gpu = warp(image.to(device), H, size=[70, 90], interpolation="cubic", border="reflect")
        if gpu.shape != cpu.shape or float((gpu.cpu() - cpu).abs().max()) > 1e-3:
            problems.append(name)
    crop = test_image(100, 120, 4, torch.uint8)[10:90, 5:115]  # strided rows
    cpu = warp(crop, H, size=[60, 70])
    gpu = warp(crop.to(device), H, size=[60, 70])
    if float((gpu.cpu().int() - cpu.int()).abs().max()) > 1:
        problems.append("strided HxWx4 crop")
    # The matrix on either device, the image on either device.
    image = test_image(50, 60, 3, torch.uint8)
    reference = warp(image, H, size=[40, 50])
    for image_device, matrix_device in (("cpu", device), (device, "cpu"), (device, device)):
        out = warp(image.to(image_device), H.to(matrix_device), size=[40, 50])
        if out.device.type != torch.device(image_device).type or float((out.cpu().int() - reference.int()).abs().max()) > 1:
            problems.append(f"image on {image_device}, matrix on {matrix_device}")
    # The tutorial's form on CUDA.
    x = torch.randn(4, 8)
    if float((warp(x.to(device), torch.eye(3)).cpu() - warp(x, torch.eye(3))).abs().max()) > 1e-5:
        problems.append("tutorial form")
    row("layouts and devices", not problems,
        "batches, views, crops, matrix on either device, tutorial form" + (": " + ", ".join(problems) if problems else ""))

    refusals = []
    for name, call, expected in (
            ("singular", lambda: warp(image.to(device), torch.zeros(3, 3, device=device), size=[4, 4]), "singular"),
            ("int32 image", lambda: warp(torch.zeros(4, 4, dtype=torch.int32, device=device), H, size=[4, 4]), "unsupported image dtype"),
            ("5 channels", lambda: warp(torch.zeros(4, 4, 5, dtype=torch.uint8, device=device), H, size=[4, 4]), "1, 3 or 4 channels"),
            ("unknown border", lambda: warp(image.to(device), H, border="mirror"), "unknown border mode")):
        try:
            call()
            refusals.append(f"{name} accepted")
        except RuntimeError as error:
            if expected not in str(error):
                refusals.append(f"{name}: {str(error).splitlines()[0]}")
    row("refusals on CUDA", not refusals, "same messages as on the CPU" + ("; " + "; ".join(refusals) if refusals else ""))


def sync_of(device):
    return torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)


def check_no_host_copy(device):
    from torch.profiler import ProfilerActivity, profile
    if not device.startswith("cuda"):
        return
    image = test_image(480, 640, 3, torch.uint8).to(device)
    matrix = H.clone()  # on the CPU: nothing at all need come back
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out = warp(image, matrix, size=[480, 640])
        torch.cuda.synchronize()
    copies = [e for e in prof.events() if "Memcpy DtoH" in e.name or "Memcpy DtoH" in str(getattr(e, "key", ""))]
    row("no copy to the host", not copies and out.is_cuda,
        f"{len(copies)} device-to-host copies while warping a CUDA image with a CPU matrix")


def timed(fn, sync, repeats):
    fn()
    sync()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        samples.append((time.perf_counter() - start) * 1000)
    return float(np.median(samples))


def check_speed(device):
    image = test_image(1080, 1920, 3, torch.uint8)
    gpu_image = image.to(device)
    cpu_ms = timed(lambda: warp(image, H, size=[1080, 1920]), lambda: None, 10)
    gpu_ms = timed(lambda: warp(gpu_image, H, size=[1080, 1920]), sync_of(device), 50)
    row("1080p RGB uint8 linear", "info", f"CPU kernel {cpu_ms:.2f} ms, CUDA kernel {gpu_ms:.3f} ms (median, synchronized)")


def tensors_of(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_of(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    return []


def check_model(name, path, example, tolerance, device):
    model = torch.jit.load(path, map_location="cpu").eval()
    with torch.no_grad():
        cpu = model(example)
        model_gpu = torch.jit.load(path, map_location=device).eval()
        gpu_out = model_gpu(example.to(device))
        sync_of(device)()
        cpu_ms = timed(lambda: model(example), lambda: None, 5)
        x = example.to(device)
        gpu_ms = timed(lambda: model_gpu(x), sync_of(device), 20)
    a, b = tensors_of(cpu), tensors_of(gpu_out)
    on_gpu = all(t.device.type == torch.device(device).type for t in b)
    diffs = [float((t.cpu().double() - r.double()).abs().max()) for t, r in zip(b, a) if t.is_floating_point()]
    worst = max(diffs) if diffs else 0.0
    row(f"{name} on {device} vs CPU", on_gpu and len(a) == len(b) and worst <= tolerance,
        f"{len(b)} outputs on {device}, max difference {worst:.2g} (<= {tolerance:g}); "
        f"p50 {gpu_ms:.2f} ms on {device}, {cpu_ms:.1f} ms on the CPU")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("--demo")
    parser.add_argument("--classifier")
    parser.add_argument("--dry-run-on-cpu", action="store_true",
                        help="run every check with the CPU as the 'device', to try this script "
                             "on a machine without a GPU (its figures are not GPU figures)")
    args = parser.parse_args()
    torch.ops.load_library(args.library)
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, library {args.library}")
    check_registration()
    if args.dry_run_on_cpu:
        device = "cpu"
        row("CUDA device", "skip", "dry run: the CPU stands in for the GPU; no figure below is a GPU's")
    elif not torch.cuda.is_available():
        try:
            torch.zeros(1, device="cuda")
            why = "unknown"
        except Exception as error:  # noqa: BLE001 - the reason is what we want
            why = str(error).splitlines()[0]
        row("CUDA device", "skip", f"none usable: {why}")
        return 77
    else:
        device = "cuda:0"
        p = torch.cuda.get_device_properties(0)
        row("CUDA device", "info", f"{p.name}, {p.total_memory / 2**30:.1f} GiB, sm_{p.major}{p.minor}")
    check_operator(device)
    check_layouts(device)
    check_no_host_copy(device)
    check_speed(device)
    torch.manual_seed(0)
    if args.demo:
        # The demo's photo size; its forward solves the homography and warps with my_ops on the GPU.
        check_model("demo model", args.demo, torch.rand(1, 3, 480, 640), 1e-2, device)
    if args.classifier:
        check_model("torchvision classifier", args.classifier, torch.rand(1, 3, 224, 224), 1e-3, device)
    return 0


if __name__ == "__main__":
    status = main()
    width = max(len(r[0]) for r in rows)
    print("\nSummary")
    for check, result, detail in rows:
        print(f"  {check:<{width}}  {result:5}  {detail}")
    failed = sum(r[1] == "FAIL" for r in rows)
    print(f"{sum(r[1] == 'pass' for r in rows)} passed, {failed} failed")
    sys.exit(1 if failed else status)
