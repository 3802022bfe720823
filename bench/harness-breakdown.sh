#!/usr/bin/env bash
# harness-breakdown.sh - where perturb spends its time per run.
#
#   bench/harness-breakdown.sh [PERTURB]
#
# Runs a RUNS-run study of /bin/true (default 500; env RUNS=N) with
# PERTURB_TIMING set (harness/lib/stages.h): perturb adds the time between
# its marks to the stage each closes, and prints per stage its total, its
# mean per run and its share: plan (between runs; the closing report after
# the last run is no stage), cgroup (taken, escapees
# watched), spawn (clone/vfork, set-up, exec), wait (the workload itself),
# reap (wait4, output, status), cgroup end (leftovers, escapees, usage,
# given back), result, store; each also as perturb's own CPU time per run,
# which a busy machine does not inflate; then the time outside the stages
# (the process's start-up and close: the wall clock from outside less the
# stages' total), as one sum and per run.  Three times: containment as perturb chooses it,
# then the fallback (PERTURB_NO_CLONE_INTO_CGROUP=1), then without cgroups
# (PERTURB_NO_CGROUP=1).  The study's order is ORDER (env; default
# sequential; perturb's own default, interleaved, enters and leaves a
# block at every run of one variant).  The cgroup's share is its two stages; target
# (issue 25): below 0.1 ms per run.  The load (uptime) is printed with each.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
runs=${RUNS:-500}
order=${ORDER:-sequential}

die() { echo "harness-breakdown.sh: error: $*" >&2; exit 1; }
[ -x "$perturb" ] || die "perturb binary '$perturb' not found or not executable"
case $order in sequential|interleaved|random) ;; *) die "ORDER must be sequential, interleaved or random, not '$order'" ;; esac
case $runs in ''|*[!0-9]*|0) die "RUNS must be a positive integer, not '$runs'" ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-breakdown.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/e.yaml" <<YAML
name: harness-breakdown
repetitions: $runs
warmup: 0
order: $order
seed: 1
variants: [{name: base}]
workloads:
  - {name: "true", cmd: [/bin/true]}
YAML

for env in "" PERTURB_NO_CLONE_INTO_CGROUP=1 PERTURB_NO_CGROUP=1; do
	rm -f "$tmp"/db* "$tmp/timing"
	echo "=== ${env:-containment as chosen}; load $(uptime | sed 's/.*load average: //')"
	t0=$(date +%s.%N)
	env $env PERTURB_TIMING="$tmp/timing" "$perturb" run "$tmp/e.yaml" --db "$tmp/db" \
		> "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; die "perturb run failed"; }
	t1=$(date +%s.%N)
	grep -o 'containment [a-z-]*' "$tmp/out" | head -n 1 | sed 's/^/  /'
	sed 's/^/  /' "$tmp/timing"
	# the rest of the process: start-up (loading, the study's checks, the
	# store made), the closing report and the store's checkpoint at close
	awk -v a="$t0" -v b="$t1" -v runs="$runs" '/in the stages/ {
		out = b - a - $(NF - 4)
		printf "  outside the stages (start, close): %.1f ms, %.1f us per run\n",
		       out * 1e3, out / runs * 1e6 }' "$tmp/timing"
	awk '$1 == "cgroup" && NF == 5 { c += $3; u += $5 }
	     $1 == "cgroup" && $2 == "end" { c += $4; u += $6 }
	     END { printf "  cgroup share: %.2f us per run (perturb CPU %.2f us)\n", c, u }' \
		"$tmp/timing"
done
