#!/usr/bin/env bash
# harness-overhead.sh - what perturb itself costs per run.
#
#   bench/harness-overhead.sh [PERTURB]
#
# Runs /bin/true RUNS times (default 500; env RUNS=N) two ways:
#   - `perturb run` of a one-variant, one-workload experiment (no warm-up),
#     timed from outside with date(1): everything perturb does per run
#     (fork/exec, wait4, counters, writing the measurement to SQLite) plus
#     its fixed start-up cost spread over the runs;
#   - `hyperfine -N --runs RUNS /bin/true`, hyperfine's mean: the cost of
#     spawning and waiting for /bin/true with as little bookkeeping as a
#     tool can have.
# The difference is perturb's bookkeeping per run.  It also prints the
# median wall time perturb recorded for the runs themselves (from
# `perturb report --format csv`): the part of a run perturb attributes to
# the workload.
#
# COUNTERS="page-faults, task-clock" (env) adds `counters: [...]` to the
# experiment: the counter path (fork, counters opened on the child before
# its exec, read once after) instead of the vfork path.
#
# Needs: bash, awk, sort, date with %N (GNU coreutils); hyperfine optional
# (its rows are skipped without it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
runs=${RUNS:-500}
true_bin=/bin/true

die() { echo "harness-overhead.sh: error: $*" >&2; exit 1; }

[ -x "$perturb" ] || die "perturb binary '$perturb' not found or not executable"
[ -x "$true_bin" ] || die "$true_bin not found"
case $runs in ''|*[!0-9]*|0) die "RUNS must be a positive integer, not '$runs'" ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The experiment: one variant, one inline workload (docs/experiment.md).
# The workload's name is quoted: a bare `true` is a YAML boolean.
cat > "$tmp/overhead.yaml" <<YAML
name: harness-overhead
description: perturb's own cost per run, measured on /bin/true
baseline: vanilla
repetitions: $runs
warmup: 0
order: sequential
seed: 1
${COUNTERS:+counters: [$COUNTERS]}
variants:
  - name: vanilla
    description: the system as it is
workloads:
  - {name: "true", kind: real, cmd: [$true_bin]}
YAML

# --- perturb, timed from outside ---
t0=$(date +%s.%N)
if ! "$perturb" run "$tmp/overhead.yaml" --db "$tmp/db" -q > "$tmp/run.out" 2>&1; then
	cat "$tmp/run.out" >&2
	die "perturb run failed"
fi
t1=$(date +%s.%N)
perturb_total=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')

# --- perturb's own record: median of metric wall, in seconds ---
if ! "$perturb" report --db "$tmp/db" --format csv > "$tmp/report.csv" 2> "$tmp/report.err"; then
	cat "$tmp/report.err" >&2
	die "perturb report failed"
fi
# Columns are found by name in the header (docs/report-csv.md: at least
# run_id,variant,workload,repetition,metric,value,unit; no quoted commas in
# these fields).  Values are converted to seconds by their unit.
awk -F, '
	NR == 1 {
		for (i = 1; i <= NF; i++) {
			h = $i; gsub(/"/, "", h); col[h] = i
		}
		if (!("metric" in col) || !("value" in col)) {
			print "harness-overhead.sh: error: CSV header lacks metric/value" > "/dev/stderr"
			exit 1
		}
		next
	}
	{
		m = $col["metric"]; gsub(/"/, "", m)
		if (m != "wall")
			next
		v = $col["value"]; gsub(/"/, "", v)
		u = ("unit" in col) ? $col["unit"] : "s"; gsub(/"/, "", u)
		f = (u == "ms") ? 1e-3 : (u == "us") ? 1e-6 : (u == "ns") ? 1e-9 : 1
		printf "%.12f\n", v * f
	}' "$tmp/report.csv" | sort -g > "$tmp/wall.txt"
recorded=$(wc -l < "$tmp/wall.txt")
[ "$recorded" -gt 0 ] || die "no wall measurements in the report"
wall_median=$(awk '{ v[NR] = $1 } END {
	if (NR % 2) printf "%.9f", v[(NR + 1) / 2]
	else printf "%.9f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "$tmp/wall.txt")

# --- hyperfine, the same program the same number of times ---
hf_mean=""
hf_total=""
if command -v hyperfine > /dev/null 2>&1; then
	h0=$(date +%s.%N)
	if hyperfine -N --runs "$runs" --warmup 0 --style none \
		--export-json "$tmp/hf.json" "$true_bin" > "$tmp/hf.out" 2>&1; then
		h1=$(date +%s.%N)
		hf_total=$(awk -v a="$h0" -v b="$h1" 'BEGIN { printf "%.6f", b - a }')
		# the first "mean" in the export is the one command's mean (seconds)
		hf_mean=$(tr -d '\n' < "$tmp/hf.json" |
			grep -o '"mean"[[:space:]]*:[[:space:]]*[-0-9.eE+]*' | head -n 1 |
			sed 's/.*:[[:space:]]*//')
	else
		cat "$tmp/hf.out" >&2
		echo "harness-overhead.sh: warning: hyperfine failed; its rows are skipped" >&2
	fi
else
	echo "harness-overhead.sh: warning: hyperfine not installed; its rows are skipped" >&2
fi

# --- the table (times per run in milliseconds) ---
awk -v runs="$runs" -v rec="$recorded" -v total="$perturb_total" \
    -v med="$wall_median" -v hf="$hf_mean" -v hft="$hf_total" -v bin="$true_bin" 'BEGIN {
	per = total / runs
	printf "perturb harness overhead: %s x %d (perturb recorded %d runs)\n\n", bin, runs, rec
	printf "  %-46s %12s %14s\n", "", "total (s)", "per run (ms)"
	printf "  %-46s %12.3f %14.4f\n", "perturb run, wall from outside", total, per * 1e3
	printf "  %-46s %12s %14.4f\n", "perturb recorded wall, median (from its DB)", "", med * 1e3
	if (hf != "") {
		printf "  %-46s %12.3f %14.4f\n", "hyperfine -N, wall from outside", hft, hft / runs * 1e3
		printf "  %-46s %12.3f %14.4f\n", "hyperfine -N, its mean", hf * runs, hf * 1e3
		printf "  %-46s %12s %14.4f\n", "perturb bookkeeping (perturb - hyperfine)", "", (per - hf) * 1e3
	}
	printf "  %-46s %12s %14.4f\n", "outside its measured window (per - median)", "", (per - med) * 1e3
	printf "\n  perturb total includes its fixed start-up (config, database, machine\n"
	printf "  probe), spread over the %d runs.\n", runs
}'
