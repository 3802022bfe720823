#!/bin/sh
# tests/browser/check.sh PERTURB PROGS [OUTDIR] - `make test-browser`.
#
# Runs a small known-truth study (tests/progs/spin scaled by 0, +1 %, ...,
# +15 %: eight variants), renders its HTML report, screenshots it with
# headless Chromium (no network: file:// only, background networking off)
# and checks the picture: the PNG exists, is 1200x2000; the answer comes
# before the detail (its box's blue left border, at the left of the page,
# above the plots: the report reads answer first); the CDF plot is drawn (left of x = 632: enough pixels of the
# line colours - black baseline, orange and blue variants - and of
# non-white ink); the histogram beside it (right of x = 632) shows each of
# the eight Okabe-Ito colours, one per variant, as bars.  The PNG and the
# HTML are kept in OUTDIR for a human look.
# Needs chromium and python3 (the PNG is decoded with zlib, no ImageMagick).
set -eu

perturb=${1:?usage: check.sh PERTURB PROGS [OUTDIR]}
progs=${2:?usage: check.sh PERTURB PROGS [OUTDIR]}
out=${3:-$(mktemp -d /tmp/perturb-browser.XXXXXX)}
mkdir -p "$out"
progs=$(cd "$progs" && pwd)
out=$(cd "$out" && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "check.sh: chromium is not installed (apt-get install chromium)" >&2
	exit 2
fi
python=$(command -v python3 || true)
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
if [ -z "$python" ]; then
	echo "check.sh: python3 is needed to read the screenshot" >&2
	exit 2
fi

cat > "$out/e.yaml" <<YAML
name: browser-check
baseline: base
repetitions: 12
warmup: 1
seed: 3
variants:
  - {name: base, env: {PERTURB_SCALE: '0'}}
  - {name: plus1, env: {PERTURB_SCALE: '0.01'}}
  - {name: plus2, env: {PERTURB_SCALE: '0.02'}}
  - {name: plus3, env: {PERTURB_SCALE: '0.03'}}
  - {name: plus5, env: {PERTURB_SCALE: '0.05'}}
  - {name: plus8, env: {PERTURB_SCALE: '0.08'}}
  - {name: plus10, env: {PERTURB_SCALE: '0.10'}}
  - {name: plus15, env: {PERTURB_SCALE: '0.15'}}
workloads:
  - name: spin
    cmd: [$progs/spin, '1000000']
    metrics:
      - {name: iterations, regex: 'iterations=([0-9]+)', unit: it}
      - {name: loop_ns, regex: 'elapsed_ns=([0-9]+)', unit: ns}
YAML
rm -f "$out/r.db"
"$perturb" run "$out/e.yaml" --db "$out/r.db" -q
"$perturb" report --db "$out/r.db" --metric loop_ns --format html --output "$out/report.html"

profile=$(mktemp -d /tmp/perturb-chromium.XXXXXX)
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$profile" --screenshot="$out/report.png" --window-size=1200,2000 \
	"file://$out/report.html" >"$out/chromium.log" 2>&1 || {
	cat "$out/chromium.log" >&2
	echo "check.sh: chromium failed" >&2
	exit 1
}

"$python" - "$out/report.png" <<'PY'
import struct, sys, zlib

path = sys.argv[1]
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
at, idat = 8, []
while at < len(data):
    size, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + size]
    at += size + 12
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat.append(body)
    elif kind == b"IEND":
        break
assert depth == 8 and ctype in (2, 6) and not interlace, "unexpected PNG format"
assert (w, h) == (1200, 2000), "screenshot is %dx%d" % (w, h)
bpp = 4 if ctype == 6 else 3
raw = zlib.decompress(b"".join(idat))
stride = w * bpp
prev = bytearray(stride)
ink = black = orange = blue = 0
# Okabe & Ito's eight colours, as render_html.c fills the histogram's bars
okabe_ito = [(0x00, 0x00, 0x00), (0xd5, 0x5e, 0x00), (0x00, 0x72, 0xb2), (0x00, 0x9e, 0x73),
             (0xcc, 0x79, 0xa7), (0xe6, 0x9f, 0x00), (0x56, 0xb4, 0xe9), (0xf0, 0xe4, 0x42)]
bars = [0] * len(okabe_ito)
summary_border = 0
border_top = plot_top = h
for y in range(h):
    f = raw[y * (stride + 1)]
    row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            row[i] = (row[i] + a) & 255
        elif f == 2:
            row[i] = (row[i] + b) & 255
        elif f == 3:
            row[i] = (row[i] + ((a + b) >> 1)) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = row
    for x in range(0, stride, bpp):
        r, g, bl = row[x], row[x + 1], row[x + 2]
        px = x // bpp
        if px < 80 and r < 40 and 90 < g < 135 and bl > 150:
            summary_border += 1       # the answer's border, #0072b2
            border_top = min(border_top, y)
        if px >= 632:                 # the histogram, right of the CDF
            for k, (cr, cg, cb) in enumerate(okabe_ito):
                if abs(r - cr) <= 6 and abs(g - cg) <= 6 and abs(bl - cb) <= 6:
                    bars[k] += 1
            continue
        if r + g + bl < 3 * 235:
            ink += 1
        if r < 60 and g < 60 and bl < 60:
            black += 1
        if r > 180 and 60 < g < 130 and bl < 60:        # #d55e00
            orange += 1
            plot_top = min(plot_top, y)
        if r < 60 and 80 < g < 150 and bl > 150:        # #0072b2
            blue += 1
print("check.sh: %dx%d, answer border %d px from y %d, plots from y %d; left: %d ink pixels, "
      "CDF lines: black %d, orange %d, blue %d; histogram bars by colour: %s"
      % (w, h, summary_border, border_top, plot_top, ink, black, orange, blue, bars))
if summary_border < 100 or border_top >= plot_top:
    sys.exit("check.sh: no answer above the plots of " + path)
if not (ink > 20000 and black > 100 and orange > 100 and blue > 100):
    sys.exit("check.sh: the CDF plot is missing or incomplete in " + path)
if min(bars) < 100:
    sys.exit("check.sh: the histogram lacks a variant's colour in " + path)
PY
echo "check.sh: ok: $out/report.png"
