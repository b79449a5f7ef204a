#!/usr/bin/env bash
# Remakes the README's screenshots with the GUI tests (offscreen) and copies them to docs/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test_gui test_warp_editor test_run_panel test_numerics_gui test_real_models_gui \
    test_frames_gui test_graph_diagram
QT_QPA_PLATFORM=offscreen build/bin/test_gui >/dev/null
QT_QPA_PLATFORM=offscreen build/bin/test_warp_editor >/dev/null
QT_QPA_PLATFORM=offscreen build/bin/test_run_panel >/dev/null
QT_QPA_PLATFORM=offscreen build/bin/test_numerics_gui >/dev/null
QT_QPA_PLATFORM=offscreen build/bin/test_real_models_gui >/dev/null
QT_QPA_PLATFORM=offscreen build/bin/test_frames_gui >/dev/null
QT_QPA_PLATFORM=offscreen build/bin/test_graph_diagram >/dev/null
for name in details-view code-view graph-view archive-view worker-crash-message \
    warp-editor warp-editor-rectify warp-editor-refused run-panel module-profile timing-plot \
    numerics-first-nan numerics-compared numerics-passes numerics-diff numerics-compare-divergence \
    numerics-memory run-detection-result diagram-control-flow \
    demo-page-result frames-video-played; do
    cp "build/screenshots/$name.png" "docs/screenshots/$name.png"
done
echo "docs/screenshots updated"
