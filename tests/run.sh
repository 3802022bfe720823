#!/bin/sh
# run.sh TESTS [ARG...] - how `make test` runs the Criterion suite TESTS
# (build/tests/perturb-tests, its environment set by the Makefile).
#
# The tests that build something for minutes - kernels/* (two guest
# kernels from linux-source-6.1) and qemu/lttng_kernel_events_* (lttng-
# modules for Debian's kernel) - start first, in a second run of TESTS in
# the background (niced: the other suites' time-outs come first), and the
# others run meanwhile; the slow part is said up front with its expected
# time, from the machine's cache (PERTURB_CACHE, else XDG_CACHE_HOME/perturb,
# else ~/.cache/perturb) and its CPUs.  Each run's output is printed whole
# (the slow one's after the other's), then the sum of their last lines:
# "N passed, N failed, N skipped" (tests/skips.c), each skip listed above
# with its reason, each failed test named again just before it.  Exit status: 0 when both runs passed.
#
# With ARGs that choose tests (--filter, --list, --help...), TESTS runs
# once with them, as asked.
set -u

tests=$1
shift
for a in "$@"; do
	case $a in
	--filter*|-l|--list|--help|-h|--version|-v) exec "$tests" "$@" ;;
	esac
done

slow='kernels/*|qemu/lttng_kernel_events_are_traced_inside_the_guest'
cache=${PERTURB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perturb}
cpus=$(nproc 2>/dev/null || echo 1)
# Measured cold in a fresh debootstrap chroot on 2 CPUs (issue 25): the
# slow part 11 minutes of CPU time per CPU, the other suites 4 minutes.
slow_min=$(( (22 + cpus - 1) / cpus ))
n_kernels=$(ls "$cache"/kernels/*/bzImage 2>/dev/null | wc -l)
n_lttng=$(ls "$cache"/kernel-debian/lttng-modules-*/lib/modules/*/modules.dep 2>/dev/null | wc -l)
if [ "$n_kernels" -ge 2 ] && [ "$n_lttng" -ge 1 ]; then
	echo "make test: the guest kernels and lttng-modules are in $cache: the slow tests" \
	     "($slow) boot them in the background, a few minutes"
else
	echo "make test: slow: $slow build two guest kernels and lttng-modules once into" \
	     "$cache: about $slow_min min on $cpus CPUs, in the background of the other" \
	     "suites (about 4 min); cached afterwards"
fi

out=$(mktemp -d /tmp/perturb-make-test-XXXXXX)
slow_pid=
trap 'rm -rf "$out"; [ -z "$slow_pid" ] || kill $slow_pid 2>/dev/null' EXIT
trap 'exit 130' INT TERM
nice -n 10 "$tests" --filter "@($slow)" "$@" >"$out/slow" 2>&1 &
slow_pid=$!
{ "$tests" --filter "!($slow)" "$@"; echo $? >"$out/fast.rc"; } 2>&1 | tee "$out/fast"
echo "make test: the other suites are done; the slow tests ($slow):"
wait $slow_pid
slow_rc=$?
slow_pid=
cat "$out/slow"

# the failed tests of both runs named again (tests/skips.c lists them), then
# the sum of the two runs' "N passed, N failed, N skipped"; a run without
# it (crashed) counts as a failure
cat "$out/fast" "$out/slow" | awk -v fast="$(cat "$out/fast.rc")" -v slow=$slow_rc '
	/^perturb-tests: [0-9]+ failed:$/ { infail = 1; next }
	infail && /^  / { print "make test: failed: " substr($0, 3); next }
	{ infail = 0 }
	/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $1; f += $3; s += $5; n++ }
	END {
		if (n != 2)
			print "make test: " 2 - n " of the two runs ended without its summary"
		printf "make test: %d passed, %d failed, %d skipped (both runs)\n", p, f, s
		exit fast != 0 || slow != 0 || n != 2
	}'
