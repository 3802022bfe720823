#!/bin/sh
# bench/known-truth.sh [PERTURB] [PROGS] [K] [REPS] - how often the report's
# intervals cover a known, injected dilation, and how often an A/A pair is
# called significant.
#
# Runs K (default 20) studies of tests/progs/spin (a busy loop whose
# iteration count is scaled by PERTURB_SCALE): variants base (0), aa (0, the
# A/A pair), plus1 (+1 %), plus5 (+5 %), REPS (default 20) interleaved runs
# each, a different seed per study.  The metric is the loop's own time
# (loop_ns), whose true dilation is 0, 1 and 5 %.  For each study and each
# of mean, p50 (95 % CIs as the report gives them) it counts whether the CI
# of the % dilation covers the truth, whether aa's rank test says p < 0.05
# (raw), and whether the report's verdict on aa is significant (its median
# interval at the Holm level excludes 0: reports/decide.h).
# Needs /usr/bin/python3 (JSON).  Takes about K x 4 x (REPS + 1) runs.
set -eu

perturb=${1:-build/perturb}
progs=${2:-build/tests/progs}
k=${3:-20}
reps=${4:-20}
perturb=$(cd "$(dirname "$perturb")" && pwd)/$(basename "$perturb")
progs=$(cd "$progs" && pwd)
dir=$(mktemp -d /tmp/perturb-kt.XXXXXX)
trap 'rm -rf "$dir"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3

i=1
while [ "$i" -le "$k" ]; do
	cat > "$dir/e.yaml" <<YAML
name: known-truth
baseline: base
repetitions: $reps
warmup: 1
order: interleaved
seed: $i
variants:
  - {name: base, env: {PERTURB_SCALE: '0'}}
  - {name: aa, env: {PERTURB_SCALE: '0'}}
  - {name: plus1, env: {PERTURB_SCALE: '0.01'}}
  - {name: plus5, env: {PERTURB_SCALE: '0.05'}}
workloads:
  - name: spin
    cmd: [$progs/spin, '5000000']
    metrics:
      - {name: loop_ns, regex: 'elapsed_ns=([0-9]+)', unit: ns}
YAML
	rm -f "$dir/r.db"
	"$perturb" run "$dir/e.yaml" --db "$dir/r.db" -q
	"$perturb" report --db "$dir/r.db" --metric loop_ns --format json > "$dir/r$i.json"
	i=$((i + 1))
done

"$py" - "$dir" "$k" <<'PY'
import json, sys
d, k = sys.argv[1], int(sys.argv[2])
truth = {"aa": 0.0, "plus1": 1.0, "plus5": 5.0}
cover = {}
fp_raw = fp_holm = 0
for i in range(1, k + 1):
    rep = json.load(open("%s/r%d.json" % (d, i)))
    for r in rep["results"]:
        v = r["variant"]
        if v not in truth:
            continue
        for stat in ("mean", "p50"):
            ci = r["dilation"][stat]["ci"]
            key = (v, stat, r["dilation"][stat].get("method", "?"))
            hit = ci is not None and ci[0] <= truth[v] <= ci[1]
            cover.setdefault(key, [0, 0])
            cover[key][0] += hit
            cover[key][1] += 1
        if v == "aa":
            fp_raw += r["test"]["p"] is not None and r["test"]["p"] < 0.05
            fp_holm += bool(r["verdict"]["significant"])
print("known truth: %d studies, loop_ns, 95 %% CIs" % k)
for (v, stat, method), (hit, n) in sorted(cover.items()):
    print("  %-6s %-4s truth %+4.1f %%: covered %2d/%d (%.0f %%)  [%s]"
          % (v, stat, truth[v], hit, n, 100.0 * hit / n, method))
print("  A/A (aa vs base): rank test raw p < 0.05 in %d/%d, verdict (Holm) in %d/%d"
      % (fp_raw, k, fp_holm, k))
PY
