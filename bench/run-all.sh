#!/usr/bin/env bash
# run-all.sh - run every benchmark of perturb itself (bench/*.sh).
#
#   bench/run-all.sh [PERTURB]          (make bench)
#
# PERTURB is the perturb binary to measure (default: build/perturb next to
# this directory).  Each bench/NAME.sh other than this one is run as
# `bench/NAME.sh PERTURB`; the exit status is 1 when any of them failed.
# These are benchmarks, not tests: their numbers depend on the machine.
set -u

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}

if [ ! -x "$perturb" ]; then
	echo "run-all.sh: error: perturb binary '$perturb' not found or not executable (make first)" >&2
	exit 2
fi
perturb=$(cd "$(dirname "$perturb")" && pwd)/$(basename "$perturb")

failed=()
for script in "$here"/*.sh; do
	name=$(basename "$script")
	[ "$name" = run-all.sh ] && continue
	echo "=== $name"
	if ! bash "$script" "$perturb"; then
		echo "=== $name: FAILED" >&2
		failed+=("$name")
	fi
	echo
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "run-all.sh: failed: ${failed[*]}" >&2
	exit 1
fi
exit 0
