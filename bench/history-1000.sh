#!/bin/sh
# bench/history-1000.sh [PERTURB] [RUNS] - `perturb history` over RUNS
# (default 1000) stored runs of one study.
#
# The database is made in seconds, not by running the study RUNS times:
# perturb stores one run of a study of two variants (base, traced) and one
# workload with 5 repetitions, then sqlite3 copies that run RUNS - 1 times,
# each copy's values scaled by a factor of its own, the traced variant's by
# 1 % more from the copy RUNS/2 on (a step the change points should find),
# and labelled c1, c2, ... (each run its own revision, time order).
#
# Timed (best of 3 by wall clock, with its CPU time; the machine as it is):
#   perturb history --format json   (a report model per run - summaries,
#                                    percentiles, bootstrap intervals of the
#                                    dilations, the Holm verdicts - and the
#                                    change points of the series over RUNS
#                                    revisions, 199 permutations per test)
# Needs sqlite3 (apt-get install sqlite3).
#
# Measured: see bench/README.md.
set -eu

perturb=${1:-build/perturb}
runs=${2:-1000}
perturb=$(cd "$(dirname "$perturb")" && pwd)/$(basename "$perturb")
dir=$(mktemp -d /tmp/perturb-history.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT

cat > "$dir/e.yaml" <<YAML
name: history-1000
baseline: base
repetitions: 5
warmup: 0
seed: 1
variants: [{name: base}, {name: traced}]
workloads: [{name: w, cmd: ["true"]}]
YAML
"$perturb" run "$dir/e.yaml" --db "$dir/r.db" -q --label c0

# every column but run_id, as the schema has them (it grows: v11 added
# workloads.primary_metric)
cols() { sqlite3 "$dir/r.db" "SELECT group_concat('$2.' || name, ', ') FROM pragma_table_info('$1') WHERE name != 'run_id'"; }
vcols=$(cols variants v)
wcols=$(cols workloads w)
sqlite3 "$dir/r.db" <<SQL
PRAGMA foreign_keys = OFF;
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
BEGIN;
CREATE TEMP TABLE k AS
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $runs - 1)
  SELECT i + 1 AS id, i FROM c;
INSERT INTO runs (id, experiment_id, name, baseline, seed, "order", argv, started, ended, status,
                  perturb_version, machine_json, label)
SELECT k.id, r.experiment_id, r.name, r.baseline, r.seed, r."order", r.argv,
       strftime('%Y-%m-%dT%H:%M:%SZ', r.started, '+' || k.i || ' seconds'), r.ended, r.status,
       r.perturb_version, r.machine_json, 'c' || k.i
FROM runs r, k WHERE r.id = 1;
INSERT INTO variants SELECT k.id, $vcols FROM variants v, k WHERE v.run_id = 1;
INSERT INTO workloads SELECT k.id, $wcols FROM workloads w, k WHERE w.run_id = 1;
INSERT INTO plan SELECT k.id, p.seq, p.variant, p.workload, p.variant_idx, p.workload_idx, p.repetition,
       p.warmup, p.round, p.block FROM plan p, k WHERE p.run_id = 1;
INSERT INTO results (run_id, seq, status, exit_code, started, wall_s, user_s, sys_s, maxrss_kb)
SELECT k.id, x.seq, x.status, x.exit_code, x.started,
       x.wall_s * (1 + 0.05 * ((abs(random()) % 1000) / 1000.0))
                * (CASE WHEN p.variant_idx = 1 AND k.i >= $runs / 2 THEN 1.01 ELSE 1 END),
       x.user_s, x.sys_s, x.maxrss_kb
FROM results x JOIN plan p ON p.run_id = 1 AND p.seq = x.seq, k WHERE x.run_id = 1;
COMMIT;
SQL

best=
[ -n "${KEEP:-}" ] && echo "$dir"
for i in 1 2 3; do
	t0=$(date +%s.%N)
	set -- $( { /usr/bin/time -f '%U %S' "$perturb" history history-1000 --db "$dir/r.db" \
		--format json --output "$dir/h.json" -q; } 2>&1 )
	t1=$(date +%s.%N)
	wall=$(echo "$t1 - $t0" | bc)
	cpu=$(echo "$1 + $2" | bc)
	if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then
		best=$wall
		bestcpu=$cpu
	fi
done
cps=$(grep -c '"p":' "$dir/h.json" || true)
printf 'perturb history over %s runs: %.2f s wall (best of 3), %.2f s CPU; %s change point(s)\n' \
	"$runs" "$best" "$bestcpu" "$cps"
