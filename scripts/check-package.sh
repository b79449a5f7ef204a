#!/usr/bin/env bash
# Builds the Debian package from a configured and built build folder, and checks it the way a
# distribution would: lintian (no errors), desktop-file-validate, appstreamcli validate, and the
# package unpacked into a temporary root runs.
#   scripts/check-package.sh [BUILD_DIR]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
cd "$build"
rm -f scriptscope_*.deb
cpack -G DEB >cpack.log 2>&1 || { cat cpack.log; exit 1; }
deb=$(ls scriptscope_*_*.deb)
echo "==> $deb"

echo "==> lintian"
lintian --fail-on error "$deb" 2>&1 | grep -v "running with root privileges" || true
lintian --fail-on error "$deb" >/dev/null 2>&1

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"

echo "==> desktop-file-validate"
desktop-file-validate "$root"/usr/share/applications/*.desktop
echo "==> appstreamcli validate"
appstreamcli validate --no-net --pedantic "$root"/usr/share/metainfo/*.metainfo.xml
echo "==> MIME type"
xmllint --noout "$root"/usr/share/mime/packages/scriptscope.xml 2>/dev/null ||
    python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$root"/usr/share/mime/packages/scriptscope.xml

echo "==> the unpacked package runs"
export LD_LIBRARY_PATH="$root/usr/lib"
"$root/usr/bin/scriptscope-cli" --version
"$root/usr/bin/scriptscope-cli" info "$root/usr/share/scriptscope/demo_model.pt" >"$root/info.txt"
grep -E "^(Kind|Summary)" "$root/info.txt"
library=$(ls "$root"/usr/lib/libwarp_perspective.so.*.* | head -1)
# (A sanitizer build's library needs the sanitizer runtimes preloaded into Python.)
LD_PRELOAD="${SCRIPTSCOPE_PYTHON_PRELOAD:-}" ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 -c "import sys, torch; torch.ops.load_library(sys.argv[1]); print('python loads', sys.argv[1].split('/')[-1], '->', torch.ops.my_ops.warp_perspective(torch.eye(4), torch.eye(3)).shape)" "$library"
echo "package checks passed"
