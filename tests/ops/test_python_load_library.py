#!/usr/bin/python3
"""The operator library in Python, exactly as the PyTorch custom-operator tutorial uses it.

test_python_load_library.py LIBRARY
"""
import sys

import cv2
import numpy as np
import torch

torch.ops.load_library(sys.argv[1])
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


# The tutorial's call: 2-D float32 image, 8x8 output.
x = torch.randn(4, 8)
out = torch.ops.my_ops.warp_perspective(x, torch.eye(3))
check(tuple(out.shape) == (8, 8), "tutorial form gives 8x8")
ref = cv2.warpPerspective(x.numpy(), np.eye(3, dtype=np.float32), (8, 8))
check(np.array_equal(out.numpy(), ref), "tutorial form equals cv2.warpPerspective")


# The tutorial's scripted function, with its documented 8x5 result.
@torch.jit.script
def compute(x, y):
    if bool(x[0][0] == 42):
        z = 5
    else:
        z = 10
    x = torch.ops.my_ops.warp_perspective(x, torch.eye(3))
    return x.matmul(y) + z


y = torch.randn(8, 5)
result = compute(torch.randn(4, 8), y)
check(tuple(result.shape) == (8, 5), "scripted compute(x, y) gives 8x5")

# The full operator with named arguments, on a real image.
H = np.array([[0.9, 0.1, 5.0], [-0.05, 1.1, 2.0], [0.0003, 0.0001, 1.0]])
image = (np.random.default_rng(0).random((60, 80, 3)) * 255).astype(np.uint8)
warped = torch.ops.my_ops.warp_perspective(torch.from_numpy(image), torch.from_numpy(H), size=[50, 70],
                                           interpolation="cubic", border="reflect")
ref = cv2.warpPerspective(image, H, (70, 50), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT)
check(np.array_equal(warped.numpy(), ref), "options form with keywords equals cv2.warpPerspective")
schema = str(torch.ops.my_ops.warp_perspective.options._schema)
check("Tensor image, Tensor warp, int[]? size=None" in schema, "schema names its arguments: " + schema)

try:
    torch.ops.my_ops.warp_perspective(torch.zeros(4, 4), torch.zeros(3, 3), size=[4, 4])
    check(False, "singular matrix refused")
except RuntimeError as error:
    check("singular" in str(error), "singular matrix refused with a clear message")

# The kernels per device, as the dispatcher lists them: CPU always; CUDA exactly when this torch
# has CUDA (the operator's own kernel, ops/warp_cuda.cu). No GPU is needed to see the registration.
dump = torch._C._dispatch_dump("my_ops::warp_perspective.options")
kernels = [line.split(":")[0] for line in dump.splitlines() if "registered at" in line
           and not line.startswith("debug")]
check("CPU" in kernels, "CPU kernel registered: " + ", ".join(kernels))
check(("CUDA" in kernels) == (torch.version.cuda is not None),
      "CUDA kernel registered exactly when torch has CUDA (%s): %s" % (torch.version.cuda, ", ".join(kernels)))

print("%d passed, %d failed" % (8 - len(failures), len(failures)))
sys.exit(1 if failures else 0)
