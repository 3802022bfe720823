#!/usr/bin/env bash
# variant-switch.sh - the time perturb takes to switch between two kernel
# tracing variants (leave one: restore the prior state, verify, remove the
# journal; enter the other: journal with fsync, apply, verify).  Target:
# under 10 ms, so that interleaving kernel variants run by run is cheap.
#
#   bench/variant-switch.sh [PERTURB]
#
# Two pairs of variants, each run as two studies of the same ROUNDS x 2
# runs of /bin/true (default ROUNDS=100; env ROUNDS=N):
#   - interleaved: rounds in an order shuffled by the seed: about 1.5 x
#     ROUNDS switches (counted from the plan);
#   - sequential: all runs of one variant, then the other: 2 switches.
# Both are timed from outside; the difference divided by the difference in
# the number of switches is the cost of one switch (leave + enter).
# Pairs: `armed` (sched + raw_syscalls events, tracing_on 0) <-> `recording`
# (the same events recorded), both with a 4 MiB-per-CPU buffer: the switch
# between two kernel variants, which perturb makes by writing only what
# differs (the target); and `vanilla` <-> `recording`, where every switch
# registers and unregisters the tracepoints (the kernel's own cost).
#
# Needs root and tracefs (the kernel: block); prints a skip line and exits 0
# without them.  The machine's tracing state is the same before and after
# (perturb restores it; this script checks tracing_on and set_event).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
rounds=${ROUNDS:-100}

die() { echo "variant-switch.sh: error: $*" >&2; exit 1; }

[ -x "$perturb" ] || die "perturb binary '$perturb' not found or not executable"
case $rounds in ''|*[!0-9]*|0|1) die "ROUNDS must be an integer >= 2, not '$rounds'" ;; esac
if [ "$(id -u)" != 0 ]; then
	echo "variant-switch.sh: skipped: needs root (kernel tracing variants)"
	exit 0
fi

# The journal goes where it would go for real (same filesystem as
# /var/lib/perturb), in a folder of its own.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-switch.XXXXXX")
state=$(mktemp -d /var/tmp/perturb-switch-state.XXXXXX)
trap 'rm -rf "$tmp" "$state"' EXIT
export PERTURB_STATE_DIR=$state

study() {	# NAME ORDER FIRST-VARIANT
	cat > "$tmp/$1-$2.yaml" <<EOF
name: switch-$1-$2
repetitions: $rounds
warmup: 0
order: $2
seed: 1
variants:
$3
  - name: recording
    kernel: {events: ["sched:*", "raw_syscalls:*"], tracing_on: true, buffer_size_kb: 4096}
workloads:
  - {name: true, cmd: [/bin/true]}
EOF
}

snapshot() {
	local t
	t=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
	if [ -n "$t" ]; then
		cat "$t/tracing_on" "$t/current_tracer" "$t/set_event" "$t/buffer_size_kb" | md5sum
	else
		echo "tracefs not mounted"
	fi
}

timed() {	# STUDY -> seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$perturb" run "$tmp/$1.yaml" --db "$tmp/$1.db" -q || die "perturb run ($1) failed"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'
}

# switches (variant entries) from the plan: a round may start with the
# variant the previous one ended with
switches() {
	"$perturb" run "$tmp/$1.yaml" --db "$tmp/probe.db" --dry-run |
		awk 'NR > 2 { if ($3 != last) n++; last = $3 } END { print n }'
}

armed='  - name: armed
    kernel: {events: ["sched:*", "raw_syscalls:*"], tracing_on: false, buffer_size_kb: 4096}'
vanilla='  - name: vanilla'
for order in interleaved sequential; do
	study shared $order "$armed"
	study arming $order "$vanilla"
done
if ! "$perturb" run "$tmp/shared-interleaved.yaml" --db "$tmp/probe.db" --dry-run >/dev/null 2>"$tmp/err"; then
	echo "variant-switch.sh: skipped: $(head -n 3 "$tmp/err")"
	exit 0
fi

before=$(snapshot)
echo "runs per study: $((2 * rounds)) (of /bin/true); one switch = leave + enter"
for pair in shared arming; do
	ti=$(timed $pair-interleaved)
	ts=$(timed $pair-sequential)
	si=$(switches $pair-interleaved)
	ss=$(switches $pair-sequential)
	case $pair in
	shared) what="armed <-> recording (same events: tracing_on flips)" ;;
	arming) what="vanilla <-> recording (events armed and disarmed)" ;;
	esac
	awk -v ti="$ti" -v ts="$ts" -v si="$si" -v ss="$ss" -v what="$what" -v pair="$pair" 'BEGIN {
		per = (ti - ts) / (si - ss) * 1000
		printf "%s\n", what
		printf "  interleaved (%4d switches): %.3f s\n", si, ti
		printf "  sequential  (%4d switches): %.3f s\n", ss, ts
		printf "  one switch: %.2f ms%s\n", per,
		       pair == "shared" ? (per < 10 ? "  (target < 10 ms: met)" : "  (target < 10 ms: NOT met)") : ""
	}'
done
after=$(snapshot)
[ "$before" = "$after" ] || die "the tracing state differs after the studies"
