#!/usr/bin/env bash
# slurm-shards.sh - what submitting a study to Slurm and merging its shards
# cost (docs/distributed.md), on the private two-node test cluster
# (tests/slurm-cluster.sh; needs root, slurm-wlm and munge).
#
#   bench/slurm-shards.sh [PERTURB]
#
# A study of RUNS runs (default 10000; env RUNS=N): two variants, one
# workload (/bin/true), RUNS/2 repetitions, no warm-up.  For each number of
# shards in SHARDS (default "4 16 64"):
#   submit  `perturb run --slurm --shards N`: check, store the run and its
#           plan, write the task script, sbatch (seconds, wall clock);
#   tasks   until squeue shows none of them (the runs themselves);
#   merge   `perturb merge` of the N shard databases into the main one;
#   again   `perturb merge` once more (nothing to add: the check of every
#           shard only).
# Prints one row per N and checks that the main run holds RUNS results.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
runs=${RUNS:-10000}
shards=${SHARDS:-4 16 64}
tmp=$(mktemp -d)
cluster=$tmp/cluster
trap '"$here/../tests/slurm-cluster.sh" stop "$cluster" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
export "$("$here/../tests/slurm-cluster.sh" start "$cluster")"
export PERTURB_STATE_DIR=$tmp/state

now() { date +%s.%N; }
cat >"$tmp/e.yaml" <<YAML
name: shard-bench
repetitions: $((runs / 2))
warmup: 0
variants:
  - name: base
  - name: env
    env: {X: "1"}
workloads:
  - name: true
    cmd: [/bin/true]
YAML

printf "%7s  %7s  %9s  %8s  %8s  %8s\n" shards runs "submit s" "tasks s" "merge s" "again s"
for n in $shards; do
	db=$tmp/r$n/p.db
	t0=$(now)
	"$perturb" run "$tmp/e.yaml" --db "$db" --slurm --shards "$n" -q
	t1=$(now)
	while squeue -h -o %i | grep -q .; do sleep 0.5; done
	t2=$(now)
	"$perturb" merge --db "$db" -q
	t3=$(now)
	"$perturb" merge --db "$db" -q
	t4=$(now)
	got=$(sqlite3 "$db" "SELECT count(*) FROM results" 2>/dev/null ||
	      python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM results').fetchone()[0])" "$db")
	[ "$got" = "$runs" ] || { echo "run with $n shards: $got results, not $runs" >&2; exit 1; }
	awk -v n="$n" -v r="$runs" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" \
		'BEGIN { printf "%7d  %7d  %9.2f  %8.1f  %8.2f  %8.2f\n", n, r, b - a, c - b, d - c, e - d }'
done
