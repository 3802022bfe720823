#!/usr/bin/env bash
# micro-peers.sh - perturb-micro against the peers it must agree with.
#
#   bench/micro-peers.sh [PERTURB]          (also run by make bench)
#
# Same machine, same script, interleaved rounds (ROUNDS, default 5):
#   null-syscall  vs  perf bench syscall basic   (getppid() in a loop)
#   pipe-latency  vs  perf bench sched pipe      (round trips between two
#                                                 processes through pipes)
# pipe-latency is measured twice: unpinned (the scheduler places the two
# processes, as both tools do by default) and with everything pinned to one
# CPU by taskset (every hop a context switch on one CPU, no cross-CPU
# wake-up).  Unpinned, a round trip costs ~5 us when the two processes
# share a CPU and often ~10x more when they do not (wake-up of an idle
# virtual CPU), so unpinned numbers of either tool swing between rounds;
# the pinned pair is the stable comparison.
#
# Each tool's figure is the median over the rounds of its per-operation
# time; the ratio is perturb-micro / perf (target: within 10 %, 0.90-1.10).
# perturb-micro is taken next to PERTURB (default build/perturb).
# Needs: perf (Debian linux-perf), taskset (util-linux), awk, sort.
# Exit status: 0 measured (ratios outside the target are reported, not
# failed: these are benchmarks of a shared machine), 1 a tool is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
micro=$(dirname "$perturb")/perturb-micro
rounds=${ROUNDS:-5}

die() { echo "micro-peers.sh: error: $*" >&2; exit 1; }

[ -x "$micro" ] || die "'$micro' not found (make builds it next to perturb)"
command -v perf >/dev/null || die "perf not found on PATH (Debian package: linux-perf)"
command -v taskset >/dev/null || die "taskset not found on PATH (Debian package: util-linux)"
case $rounds in ''|*[!0-9]*|0) die "ROUNDS must be a positive integer, not '$rounds'" ;; esac
cpu=$(taskset -pc $$ | awk -F'[:,-]' '{ gsub(/ /, "", $2); print $2 }')

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-peers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# perf prints "      0.237107 usecs/op": ns per op on stdout.
perf_ns() { "$@" 2>&1 | awk '/usecs\/op/ { printf "%.3f\n", $1 * 1000; found = 1 }
	END { if (!found) exit 1 }'; }
micro_ns() { "$@" | awk '/^ns_per_op:/ { print $2; found = 1 } END { if (!found) exit 1 }'; }
median() { sort -g "$1" | awk '{ v[NR] = $1 } END {
	if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for r in $(seq "$rounds"); do
	perf_ns perf bench syscall basic --loop 2000000 >> "$tmp/sys.perf"
	micro_ns "$micro" null-syscall --samples 10 --min-time 50ms >> "$tmp/sys.micro"
	perf_ns perf bench sched pipe -l 20000 >> "$tmp/pipe.perf"
	micro_ns "$micro" pipe-latency --samples 10 --min-time 100ms >> "$tmp/pipe.micro"
	perf_ns taskset -c "$cpu" perf bench sched pipe -l 100000 >> "$tmp/pin.perf"
	micro_ns taskset -c "$cpu" "$micro" pipe-latency --samples 10 --min-time 50ms >> "$tmp/pin.micro"
	echo "round $r of $rounds done" >&2
done

printf '%-34s %14s %14s %8s  %s\n' "comparison (median of $rounds rounds)" \
	"perf ns/op" "micro ns/op" "ratio" "within 10 %"
row() {
	local p m
	p=$(median "$tmp/$2.perf")
	m=$(median "$tmp/$2.micro")
	awk -v name="$1" -v p="$p" -v m="$m" 'BEGIN {
		r = m / p; ok = (r >= 0.9 && r <= 1.1) ? "yes" : "no"
		printf "%-34s %14.1f %14.1f %8.3f  %s\n", name, p, m, r, ok }'
}
row "null-syscall / syscall basic" sys
row "pipe-latency / sched pipe" pipe
row "pipe-latency / sched pipe, CPU $cpu" pin
