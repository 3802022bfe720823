#!/usr/bin/env bash
# changepoint.sh - the change-point search (stats/changepoint.h) over a
# 1,000-point series (issue 24), timed directly in a small program linked
# against libperturb.a.
#
#   bench/changepoint.sh [PERTURB]      (REPEAT=best of, default 3)
#
# Series (values 100 (1 + 0.01 z), seeded; steps +3 % at 40 %, -2 % at
# 70 % of the revisions), each 1,000 values:
#   1000 x 1   1,000 revisions of one run
#   200 x 5    200 revisions of five runs
# searched with the defaults (alpha 1, min_seg 2, R 199, sig 0.05, 95 %
# bootstrap intervals of 2000 resamples) over the whole series, and in
# windows of 100 revisions with R 999 (19 windows of 1000 revisions each
# test at 0.05 / 19, which R 199 cannot reach).  Each line: the best wall-clock time of REPEAT
# searches, its CPU time, and the change points found (revision, p, change
# in % with its interval).  PERTURB's build folder holds libperturb.a.
#
# Run on the shared 2-core development VM, load average 7.5 (not a figure
# to quote; the machine was busy): 1000 x 1 whole series 2.41 s wall
# (1.01 s CPU), in windows 0.11 s (0.05 s); 200 x 5 whole series 0.16 s
# (0.05 s), in windows 0.30 s (0.11 s); both steps found at 400 and 700
# (80 and 140), p 0.005 (0.001 in windows), +3.09 % [+2.87, +3.28] and
# -2.07 % [-2.28, -1.87].
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
build=$(cd "$(dirname "$perturb")" && pwd)
repeat=${REPEAT:-3}

die() { echo "changepoint.sh: error: $*" >&2; exit 1; }

[ -f "$build/libperturb.a" ] || die "no $build/libperturb.a (make first)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-changepoint.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/cp.c" <<'C'
#include "stats/changepoint.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t G = strtoul(argv[1], NULL, 10), runs = strtoul(argv[2], NULL, 10);
	size_t window = strtoul(argv[3], NULL, 10), *len = malloc(G * sizeof(*len));
	int repeat = atoi(argv[4]);
	double *x = malloc(G * runs * sizeof(*x)), best = 1e30, cpu = 0;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	/* each window's test at 0.05 / windows: R + 1 >= windows / 0.05 */
	struct cp_opts o = { .seed = 1, .window = window, .permutations = window ? 999 : 0 };
	struct changepoints c = { 0 };

	gsl_rng_set(r, 1);
	for (size_t g = 0; g < G; g++) {
		double level = 100 * (g >= G * 4 / 10 ? 1.03 : 1) * (g >= G * 7 / 10 ? 0.98 : 1);

		len[g] = runs;
		for (size_t i = 0; i < runs; i++)
			x[g * runs + i] = level * (1 + gsl_ran_gaussian(r, 0.01));
	}
	for (int k = 0; k < repeat; k++) {
		double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID), t;

		stats_changepoints_release(&c);
		if (stats_changepoints(x, len, G, &o, &c)) {
			fprintf(stderr, "changepoint: error: the search failed\n");
			return 1;
		}
		t = now(CLOCK_MONOTONIC) - t0;
		if (t < best) {
			best = t;
			cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		}
	}
	printf("%4zu x %zu, %s: %.3f s wall (%.3f s CPU), %zu change point(s):", G, runs,
	       window ? "windows of 100" : "whole series  ", best, cpu, c.n);
	for (size_t i = 0; i < c.n; i++)
		printf(" %zu (p %.3f, %+.2f %% [%+.2f, %+.2f])", c.cp[i].index, c.cp[i].p,
		       c.cp[i].pct, c.cp[i].ci.lo, c.cp[i].ci.hi);
	printf("\n");
	stats_changepoints_release(&c);
	gsl_rng_free(r);
	free(x);
	free(len);
	return 0;
}
C
pkgs="gsl yaml-0.1 sqlite3 papi libtracefs libtraceevent zlib nettle jansson"
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -I"$here/.." $(pkg-config --cflags $pkgs) "$tmp/cp.c" \
	"$build/libperturb.a" $(pkg-config --libs $pkgs) -lm -o "$tmp/cp" || die "cannot build the program"

echo "changepoint.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs, best of $repeat"
for shape in "1000 1" "200 5"; do
	for window in 0 100; do
		# shellcheck disable=SC2086
		"$tmp/cp" $shape "$window" "$repeat" || die "the search failed"
	done
done
