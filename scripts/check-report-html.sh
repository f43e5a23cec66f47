#!/usr/bin/env bash
# Renders a ctrlbench report.html with headless Chromium and checks that the
# screenshot is not blank (enough non-white pixels and distinct colours), and
# that the file references nothing external.
#
#   scripts/check-report-html.sh results/<dir>/report.html [screenshot.png]
#
# Installs Debian's chromium package with apt-get when it is missing.
set -euo pipefail

html=${1:?usage: $0 report.html [screenshot.png]}
[ -f "$html" ] || { echo "no such file: $html" >&2; exit 1; }
png=${2:-$(mktemp --suffix=.png)}

if grep -Eq '(src|href)="(https?:)?//' "$html"; then
  echo "FAIL: $html references something external" >&2
  exit 1
fi

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not found; installing Debian's chromium package" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  browser=$(command -v chromium)
fi

# A throw-away profile; no network is needed (the file is self-contained).
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$profile" --window-size=1280,4000 \
  --screenshot="$png" "file://$(realpath "$html")" >/dev/null 2>&1 || true
[ -s "$png" ] || { echo "FAIL: chromium wrote no screenshot" >&2; exit 1; }

# Decode the PNG with the standard library only (zlib + unfiltering).
python3 - "$png" <<'EOF'
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = hdr
assert depth == 8 and ctype in (2, 6) and interlace == 0, f"unsupported PNG {hdr}"
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, ink = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(0, stride, bpp * 2):  # every other pixel is plenty
        px = bytes(line[x:x + 3])
        colours.add(px)
        if px != b"\xff\xff\xff":
            ink += 1
sampled = (w // 2) * h
frac = ink / max(sampled, 1)
print(f"screenshot {w}x{h}: {len(colours)} distinct colours, {frac:.1%} non-white pixels")
if len(colours) < 16 or frac < 0.01:
    sys.exit("FAIL: the rendered report looks blank")
EOF
echo "OK: $html renders ($png)"
