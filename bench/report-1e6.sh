#!/usr/bin/env bash
# bench/report-1e6.sh [PERTURB] [RUNS] - `perturb report` on a database of
# 10^6 runs, in every format, against numpy computing the same quantiles
# and ECDFs, and against itself on half as many runs (issue 25's targets:
# at most numpy's time, at most 2x the time of RUNS/2).
#
# The databases are made in seconds, not by running 10^6 processes: perturb
# itself creates the schema with a one-run study of two variants, then
# sqlite3 replaces its plan and results by RUNS (default 10^6), and in a
# second database RUNS/2, synthetic runs, alternating the variants: wall ~
# 1 s x (1 + U(0, 0.1)), +2 % for "tracing"; user, sys and maxrss likewise.
# That is 4 metrics x 2 variants x RUNS/2 values.
#
# Timed (bash's time: wall, user and system to the millisecond; the
# machine as it is), on both databases:
#   perturb report --format F      for F in text, markdown, csv, json, html
#                                   (the documents: summaries, percentiles
#                                   with order-statistic CIs, dilations - at
#                                   this size asymptotic, U, KS tests,
#                                   ECDFs; csv: every run's row, 4 x RUNS)
#   numpy: the same values read from the same database with python's
#          sqlite3 in one scan, then per metric and variant np.percentile at
#          0/50/80/99, mean, variance and the ECDF (np.unique + cumsum);
#          best of 3 (the least wall clock and the least CPU time).
# Each format runs ROUNDS times on each size (env; default 5), the two
# sizes side by side, the order swapped every round: RUNS against RUNS/2
# is the median of the rounds' ratios (each round's CPU ratio printed),
# as bench/spawn-peers.sh compares; against numpy, the least of the rounds.
# Both by wall clock and by CPU time (on a shared machine the CPU time is
# the steadier figure).
# Needs bash, bc, sqlite3 (apt-get install sqlite3) and /usr/bin/python3 with numpy
# (python3-numpy).
#
# Measured: bench/README.md.
set -eu

perturb=${1:-build/perturb}
runs=${2:-1000000}
perturb=$(cd "$(dirname "$perturb")" && pwd)/$(basename "$perturb")
dir=$(mktemp -d /tmp/perturb-1e6.XXXXXX)
trap 'rm -rf "$dir"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3

make_db() {	# make_db DB RUNS
	db=$1 n=$2
	rm -rf "$dir/work" "$dir/logs"
	"$perturb" run "$dir/e.yaml" --db "$db" -q
	t0=$(date +%s.%N)
	sqlite3 "$db" <<SQL
PRAGMA foreign_keys = OFF;
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
BEGIN;
DELETE FROM metric_values;
DELETE FROM results;
DELETE FROM plan;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $n - 1)
INSERT INTO plan (run_id, seq, variant, workload, variant_idx, workload_idx, repetition, warmup, round)
SELECT 1, i, CASE i % 2 WHEN 0 THEN 'base' ELSE 'tracing' END, 'w', i % 2, 0, i / 2, 0, i / 2 FROM c;
INSERT INTO results (run_id, seq, status, exit_code, wall_s, user_s, sys_s, maxrss_kb)
SELECT 1, seq, 'ok', 0,
       (1.0 + 0.02 * variant_idx) * (1 + (abs(random()) % 1000000) / 1e7),
       (0.8 + 0.01 * variant_idx) * (1 + (abs(random()) % 1000000) / 1e7),
       (0.1 + 0.01 * variant_idx) * (1 + (abs(random()) % 1000000) / 1e7),
       20000 + variant_idx * 100 + abs(random()) % 500
FROM plan WHERE run_id = 1;
COMMIT;
SQL
	t1=$(date +%s.%N)
	echo "database: $n runs in $(echo "$t1 - $t0" | bc) s, $(du -h "$db" | cut -f1)"
}

cat > "$dir/e.yaml" <<YAML
{name: report-1e6, baseline: base, repetitions: 1, warmup: 0, seed: 1,
 variants: [{name: base}, {name: tracing}], workloads: [{name: w, cmd: ["true"]}]}
YAML
half=$((runs / 2))
declare -A w c lw lc
make_db "$dir/r.db" "$runs"
make_db "$dir/h.db" "$half"

rounds=${ROUNDS:-5}
case $rounds in ''|*[!0-9]*|0) echo "report-1e6.sh: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 1 ;; esac

once() {	# once CMD...: sets tw (wall s) and tc (user + sys CPU s) of one run
	local TIMEFORMAT='%3R %3U %3S' t u s
	{ time "$@" >/dev/null; } 2> "$dir/time"
	read -r t u s < "$dir/time"
	tw=$t tc=$(echo "$u + $s" | bc)
}

least() {	# least NAME VALUE: NAME (a variable or an array's element) set to
	# VALUE when it is unset or empty or VALUE is less
	if [ -z "${!1:-}" ] || [ "$(echo "$2 < ${!1}" | bc)" = 1 ]; then printf -v "$1" %s "$2"; fi
}

best() {	# best of 3 of "$@": sets bw (wall s) and bc_ (user+sys CPU s),
	# each the least of the three (other processes only ever add to either)
	bw= bc_=
	for i in 1 2 3; do
		once "$@"
		least bw "$tw"
		least bc_ "$tc"
	done
}

median() {	# median of the arguments
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

ratio() { echo "scale=2; $1 / $2" | bc; }

cat > "$dir/np.py" <<'PY'
import sqlite3, sys
import numpy as np
db = sqlite3.connect(sys.argv[1])
# one scan, as a numpy user would: every measured, successful run
rows = db.execute(
    "SELECT p.variant_idx, r.wall_s, r.user_s, r.sys_s, r.maxrss_kb"
    " FROM results r JOIN plan p USING (run_id, seq)"
    " WHERE r.run_id = 1 AND p.warmup = 0 AND r.status = 'ok' ORDER BY r.seq").fetchall()
a = np.array(rows, dtype=float)
out = {}
for j, col in enumerate(("wall_s", "user_s", "sys_s", "maxrss_kb")):
    for vi in (0, 1):
        x = a[a[:, 0] == vi, 1 + j]
        q = np.percentile(x, [0, 50, 80, 99])          # linear = type 7
        xs, counts = np.unique(x, return_counts=True)   # ECDF steps
        ps = np.cumsum(counts) / x.size
        out[(col, vi)] = (x.size, x.mean(), x.var(ddof=1), q, xs.size)
for k, v in sorted(out.items()):
    print(k, v[0], v[1], v[2], v[3], v[4])
PY

best "$py" "$dir/np.py" "$dir/r.db"
npw=$bw npc=$bc_
best "$py" "$dir/np.py" "$dir/h.db"
echo "numpy (read + percentiles + ECDF): $runs runs $npw s wall ($npc s CPU), $half runs $bw s wall ($bc_ s CPU)"
printf '%-9s %22s %22s %16s %16s  %s\n' format "$runs runs: wall (CPU)" "$half runs: wall (CPU)" \
	"ratio wall (CPU)" "/numpy wall (CPU)" "each round's CPU ratio"
for f in text markdown csv json html; do
	# per size (r: RUNS, h: RUNS/2): this round's wall and CPU, the least of the rounds
	rw=() rc=() w=() c=() lw=() lc=()
	for ((r = 0; r < rounds; r++)); do
		sizes=(r h)
		((r % 2)) && sizes=(h r)
		for z in "${sizes[@]}"; do
			once "$perturb" report --db "$dir/$z.db" --format "$f"
			w[$z]=$tw c[$z]=$tc
			least "lw[$z]" "$tw"
			least "lc[$z]" "$tc"
		done
		rw+=("$(echo "scale=4; ${w[r]} / ${w[h]}" | bc)") rc+=("$(echo "scale=4; ${c[r]} / ${c[h]}" | bc)")
	done
	printf '%-9s %22s %22s %16s %16s  %s\n' "$f" "${lw[r]} s (${lc[r]} s)" "${lw[h]} s (${lc[h]} s)" \
		"$(printf '%.2f (%.2f)' "$(median "${rw[@]}")" "$(median "${rc[@]}")")" \
		"$(ratio "${lw[r]}" "$npw") ($(ratio "${lc[r]}" "$npc"))" "$(printf '%.2f ' "${rc[@]}")"
done
# the same numbers: the p50 of wall, both ways
"$perturb" report --db "$dir/r.db" --format json --metric wall | "$py" -c '
import json, sys
d = json.load(sys.stdin)
for r in d["results"]:
    print("perturb:", r["variant"], "wall p0/p50/p80/p99 =", [r["percentiles"][k] for k in ("0", "50", "80", "99")],
          "p50 dilation", r.get("dilation", {}).get("p50", {}).get("pct"), r.get("dilation", {}).get("p50", {}).get("ci"),
          r.get("dilation", {}).get("p50", {}).get("method"))'
"$py" "$dir/np.py" "$dir/r.db" | grep wall_s | sed 's/^/numpy:   /'
