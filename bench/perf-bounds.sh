#!/usr/bin/env bash
# perf-bounds.sh - what a perf: variant adds to each run outside its timed
# part: both bounds of a run, timed directly (bench/perf-bounds.c) on a
# perf record and a perf trace of getppid only (nearly nothing written:
# the cost of the bounds themselves, not of reading what perf wrote).
#
#   bench/perf-bounds.sh [PERTURB]     (N=runs, default 200)
#
# PERTURB's build folder holds libperturb.a, which the program is linked
# against.  Needs root and perf; prints a skip line and exits 0 without
# them.  tracefs is mounted for the time of the measurement when it is not
# (under perturb's tracing lock), and unmounted afterwards.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
build=$(cd "$(dirname "$perturb")" && pwd)
n=${N:-200}

die() { echo "perf-bounds.sh: error: $*" >&2; exit 1; }

[ -f "$build/libperturb.a" ] || die "no $build/libperturb.a (make first)"
if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null; then
	echo "perf-bounds.sh: skipped: needs root and perf (Debian package linux-perf)"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-perf-bounds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pkgs="gsl yaml-0.1 sqlite3 papi libtracefs libtraceevent zlib nettle jansson"
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -I"$here/../harness" -I"$here/.." $(pkg-config --cflags $pkgs) \
	"$here/perf-bounds.c" "$build/libperturb.a" $(pkg-config --libs $pkgs) -lm \
	-o "$tmp/perf-bounds" || die "cannot build perf-bounds.c"

echo "perf-bounds.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
mounted=0
grep -q " /sys/kernel/tracing tracefs " /proc/mounts ||
	{ mount -t tracefs nodev /sys/kernel/tracing && mounted=1; }
# perturb's tracing lock: an flock on tracefs's root folder (journal.h)
r=0
flock -w 300 /sys/kernel/tracing sh -c '
	"$1/perf-bounds" record "$1" "$2"; r=$?
	"$1/perf-bounds" trace "$1" "$2" || r=1
	exit $r' sh "$tmp" "$n" || r=1
[ $mounted = 0 ] || umount /sys/kernel/tracing
[ $r = 0 ] || die "the measurement failed"
