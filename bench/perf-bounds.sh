#!/usr/bin/env bash
# perf-bounds.sh - what a perf: variant adds to each run outside its timed
# part: the two bounds (perf record: two "ping"s through its control fifo,
# then a read of what it wrote; perf trace: a marker system call on each
# CPU, waited for in its output) and the accounting (docs/experiment.md,
# "perf").
#
#   bench/perf-bounds.sh [PERTURB]
#
# For each of base (no perf), perf record and perf trace (getppid only:
# nearly nothing to write), two studies of /bin/true, sequential, with
# FEW and MANY runs (default 20 and 120; env FEW, MANY), timed from
# outside: (time(MANY) - time(FEW)) / (MANY - FEW) is the cost of one run,
# start-up and stop cancelled out; a perf variant's minus base's is what
# its bounds cost.  Needs root and perf; prints a skip line and exits 0
# without them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
few=${FEW:-20}
many=${MANY:-120}

die() { echo "perf-bounds.sh: error: $*" >&2; exit 1; }

[ -x "$perturb" ] || die "perturb binary '$perturb' not found or not executable"
[ "$many" -gt "$few" ] || die "MANY ($many) must be above FEW ($few)"
if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null; then
	echo "perf-bounds.sh: skipped: needs root and perf (Debian package linux-perf)"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-perf-bounds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# seconds a study of N runs of VARIANT-BLOCK takes
study() {	# NAME N BLOCK
	cat > "$tmp/$1-$2.yaml" <<YAML
name: bounds-$1
repetitions: $2
warmup: 0
order: sequential
variants:
  - name: $1
$3
workloads:
  - {name: true, cmd: [/bin/true]}
YAML
	local t0 t1
	t0=$(date +%s.%N)
	"$perturb" run "$tmp/$1-$2.yaml" --db "$tmp/$1-$2.db" --quiet >/dev/null 2>&1 ||
		die "the study $1 with $2 runs failed"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

per_run() {	# NAME BLOCK
	local a b
	a=$(study "$1" "$few" "$2")
	b=$(study "$1" "$many" "$2")
	echo "($b - $a) / ($many - $few) * 1000" | bc -l
}

base=$(per_run base "")
rec=$(per_run record "    perf: {record: {events: ['syscalls:sys_enter_getppid']}}")
trc=$(per_run trace "    perf: {trace: {syscalls: [getppid]}}")
printf 'per run, outside the timed part (load average %s):\n' "$(cut -d' ' -f1 /proc/loadavg)"
printf '  base         %8.2f ms\n' "$base"
printf '  perf record  %8.2f ms  (+%.2f ms: its bounds and accounting)\n' "$rec" "$(echo "$rec - $base" | bc -l)"
printf '  perf trace   %8.2f ms  (+%.2f ms)\n' "$trc" "$(echo "$trc - $base" | bc -l)"
