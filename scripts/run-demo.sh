#!/usr/bin/env bash
# Sets up (see setup.sh), builds, and opens the GUI on the bundled demo: a model that rectifies a
# photographed page with my_ops::warp_perspective and classifies it. Without a display it shows the
# demo through the CLI instead.
# SCRIPTSCOPE_PYTHON or --torch-venv [VERSION] (first) picks the PyTorch, as for setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
scriptscope_take_torch_venv "$@"
shift "$SCRIPTSCOPE_ARGS_USED"
scripts/setup.sh scriptscope scriptscope-worker scriptscope-layout scriptscope-cli
build=$(scriptscope_build_dir)
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    exec "$build/bin/scriptscope" "$@"
fi
echo "==> No display: showing the demo with the CLI (run $build/bin/scriptscope on a desktop)"
cli=$build/bin/scriptscope-cli
model=resources/demo_model.pt
set -x
"$cli" info "$model"
"$cli" tree "$model"
"$cli" code "$model"
"$cli" run "$model" --input image:resources/demo.png --warmup 3 --iters 20 --render "$build/demo_result.png"
"$cli" run "$model" --method classify_page --input image:resources/demo.png \
    --input matrix:resources/demo_warp.npy --iters 5
"$cli" run "$model" --source resources/demo_video.mp4 --input image:- \
    --render "$build/demo_video_annotated.mp4"
"$cli" warp resources/demo.png --matrix resources/demo_warp.npy --size 200x280 -o "$build/demo_page.png"
