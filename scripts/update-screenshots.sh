#!/usr/bin/env bash
# Remakes the README's screenshots with the GUI test (offscreen) and copies them to docs/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test_gui
QT_QPA_PLATFORM=offscreen build/bin/test_gui >/dev/null
for name in details-view code-view graph-view archive-view worker-crash-message; do
    cp "build/screenshots/$name.png" "docs/screenshots/$name.png"
done
echo "docs/screenshots updated"
