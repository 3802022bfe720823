#!/bin/sh
# bench/duet.sh [PERTURB] [PROGS] [K] [REPS] - how wide the interval of an
# injected +5 % dilation is under order: interleaved and under order: duet
# (docs/experiment.md), side by side on the same machine in one session.
#
# tests/progs/spin is a busy loop whose iteration count is scaled by
# PERTURB_SCALE; its base count is calibrated to about 70 ms here.  Two
# variants: base (0) and plus5 (+5 %).  K (default 10) rounds; each runs
# one interleaved study and one duet study, in alternating order, with the
# same number of runs (REPS, default 20, measured runs a variant, 1
# warm-up) and the same seed.  For each study the report's 95 % CI of the
# mean and median wall dilation: its half-width, whether it covers +5 %,
# and which analysis made it.  Prints the median half-widths of each order
# and the load average before and after.  Needs /usr/bin/python3 (JSON)
# and two CPUs.
set -eu

perturb=${1:-build/perturb}
progs=${2:-build/tests/progs}
k=${3:-10}
reps=${4:-20}
perturb=$(cd "$(dirname "$perturb")" && pwd)/$(basename "$perturb")
progs=$(cd "$progs" && pwd)
dir=$(mktemp -d /tmp/perturb-duet.XXXXXX)
trap 'rm -rf "$dir"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# calibrate: the median of 5 loops of 20e6 iterations, scaled to 70 ms
n=$("$py" - "$progs/spin" <<'PY'
import subprocess, sys, re, statistics
ts = []
for _ in range(5):
    out = subprocess.run([sys.argv[1], "20000000"], capture_output=True, text=True).stdout
    ts.append(int(re.search(r"elapsed_ns=(\d+)", out).group(1)))
print(int(20e6 * 70e6 / statistics.median(ts)))
PY
)
echo "spin: $n iterations (about 70 ms); $k rounds of $reps runs a variant; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

study() {	# study ORDER SEED OUT
	cat > "$dir/e.yaml" <<YAML
name: duet-bench
baseline: base
repetitions: $reps
warmup: 1
order: $1
seed: $2
variants:
  - {name: base, env: {PERTURB_SCALE: '0'}}
  - {name: plus5, env: {PERTURB_SCALE: '0.05'}}
workloads:
  - name: spin
    cmd: [$progs/spin, '$n']
YAML
	rm -f "$dir/r.db"
	t0=$(date +%s.%N)
	"$perturb" run "$dir/e.yaml" --db "$dir/r.db" -q
	t1=$(date +%s.%N)
	"$perturb" report --db "$dir/r.db" --metric wall --format json > "$3"
	echo "$t0 $t1" > "$3.time"
}

i=1
while [ "$i" -le "$k" ]; do
	if [ $((i % 2)) -eq 1 ]; then
		study interleaved "$i" "$dir/interleaved-$i.json"
		study duet "$i" "$dir/duet-$i.json"
	else
		study duet "$i" "$dir/duet-$i.json"
		study interleaved "$i" "$dir/interleaved-$i.json"
	fi
	i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$py" - "$dir" "$k" <<'PY'
import json, sys, statistics
d, k = sys.argv[1], int(sys.argv[2])
for order in ("interleaved", "duet"):
    hw = {"mean": [], "p50": []}
    cover = {"mean": 0, "p50": 0}
    methods = set()
    secs = []
    for i in range(1, k + 1):
        rep = json.load(open("%s/%s-%d.json" % (d, order, i)))
        t0, t1 = map(float, open("%s/%s-%d.json.time" % (d, order, i)).read().split())
        secs.append(t1 - t0)
        for r in rep["results"]:
            if r["variant"] != "plus5":
                continue
            for stat in ("mean", "p50"):
                dil = r["dilation"][stat]
                ci = dil["ci"]
                if ci is None:
                    continue
                hw[stat].append((ci[1] - ci[0]) / 2)
                cover[stat] += ci[0] <= 5.0 <= ci[1]
                methods.add(dil.get("paired", {}).get("analysis", "unpaired"))
    print("%-11s CI half-width of +5 %% (median over %d studies): mean %.2f %%, median %.2f %%;"
          " covers +5 %%: mean %d/%d, median %d/%d; %.1f s a study; analysis %s"
          % (order, k, statistics.median(hw["mean"]), statistics.median(hw["p50"]),
             cover["mean"], len(hw["mean"]), cover["p50"], len(hw["p50"]),
             statistics.median(secs), ", ".join(sorted(methods))))
PY
