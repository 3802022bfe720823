#!/usr/bin/env bash
# micro-subtraction.sh - how well perturb-micro takes its timing loop off.
#
#   bench/micro-subtraction.sh [PERTURB]          (also run by make bench)
#
# ROUNDS (default 5) runs of each, the median over the rounds:
#   empty-loop   the operation is the reference loop's own: what is left
#                after the subtraction is the noise of it (target: |ns| < 10)
#   memcpy-4096  must stand above empty-loop (target: > empty + 5 ns)
#   ctxsw        net of its own baseline (target: > 0)
# These were assertions of tests/test_micro.c; on a busy machine a
# preempted sample moves them, so they are measured here instead.
# perturb-micro is taken next to PERTURB (default build/perturb).
# Exit status: 0 measured (a figure outside its target is reported, not
# failed: these are benchmarks of a shared machine), 1 perturb-micro missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
micro=$(dirname "$perturb")/perturb-micro
rounds=${ROUNDS:-5}

[ -x "$micro" ] || { echo "micro-subtraction.sh: error: '$micro' not found" >&2; exit 1; }
case $rounds in ''|*[!0-9]*|0) echo "micro-subtraction.sh: error: ROUNDS must be a positive integer" >&2; exit 1 ;; esac

# The median over ROUNDS runs of `perturb-micro NAME ARGS...`'s ns_per_op.
median_ns() {
	for _ in $(seq "$rounds"); do
		"$micro" "$@" | awk -F': ' '$1 == "ns_per_op" { print $2 }'
	done | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

empty=$(median_ns empty-loop --samples 15 --min-time 2ms)
memcpy=$(median_ns memcpy-4096 --samples 5 --min-time 5ms)
ctxsw=$(median_ns ctxsw --samples 3 --min-time 5ms)
verdict() { if awk "BEGIN { exit !($1) }"; then echo ok; else echo "OUTSIDE the target"; fi; }
printf 'empty-loop   %10.2f ns/op   target |ns| < 10        %s\n' "$empty" "$(verdict "($empty < 10 && $empty > -10)")"
printf 'memcpy-4096  %10.2f ns/op   target > empty + 5 ns   %s\n' "$memcpy" "$(verdict "$memcpy > $empty + 5")"
printf 'ctxsw        %10.2f ns/op   target > 0              %s\n' "$ctxsw" "$(verdict "$ctxsw > 0")"
