#!/usr/bin/env bash
# spawn-peers.sh - perturb's cost per run against the least a tool can do.
#
#   bench/spawn-peers.sh [PERTURB]
#
# Runs /bin/true RUNS times (default 500; env RUNS=N) five ways, in ROUNDS
# alternations (default 5; env ROUNDS=N), the order rotated each round so
# that no way always follows another:
#   - perturb: `perturb run -q` (no closing screen) of a one-variant, one-workload study (no
#     warm-up), containment on (the run header says which path), in
#     ORDER (env; default sequential, as hyperfine runs; perturb's own
#     default, interleaved, enters and leaves a block at every run);
#   - perturb, screen: the same without -q, as a user runs it: the closing
#     screen computed and printed (hyperfine prints its summary too);
#   - perturb, fallback: the same with PERTURB_NO_CLONE_INTO_CGROUP=1 (each
#     run moves into its cgroup with a write to cgroup.procs);
#   - hyperfine -N --runs RUNS /bin/true (apt: hyperfine; make deps-bench);
#   - a bare posix_spawn + wait4 loop (bench/spawn-loop.c, built here);
#   - the same loop with clone3 as fork (forkloop), and with clone3 into a
#     cgroup v2 of its own (cgloop: CLONE_INTO_CGROUP, as perturb starts
#     its runs; skipped without a writable cgroup2 hierarchy): cgloop /
#     forkloop is the kernel's own cost of a process in a cgroup, which
#     hyperfine and the loop do not pay, and perturb / cgloop compares
#     perturb with a loop under the same containment;
#   - with OLD=PATH, another perturb binary (an earlier build copied
#     aside), run as perturb and as screen are (old, oldscreen): before
#     and after side by side.
# Each is timed from outside (date +%s.%N), start-up included.  Then, where
# perf stat works, perturb, hyperfine and the loop run again, CPU_ROUNDS
# times (default 3; 0 leaves this out), each under `perf stat --no-inherit
# -e task-clock`: each tool's own CPU time per run, its runs left out,
# start-up and close included, which a busy machine inflates far less
# than the wall clock.  Beside them the loop target's budget: 5 % of the
# loop's median wall time per run, against perturb's own CPU above the
# loop's (what the tool does that the loop does not, serially with its
# runs).  Prints the
# median per run of each way and, per round and as the median of the
# rounds, the ratios perturb / hyperfine and perturb / loop, and screen's
# to both.  The machine's
# load (uptime) is printed before and after: the figures mean something
# only on a quiet machine.  Targets (issue 25): perturb <= 1.0x hyperfine,
# <= 1.05x the loop.
#
# Needs: bash, awk, cc, date with %N; hyperfine (its rows are skipped
# without it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
runs=${RUNS:-500}
order=${ORDER:-sequential}
rounds=${ROUNDS:-5}
true_bin=/bin/true

die() { echo "spawn-peers.sh: error: $*" >&2; exit 1; }

[ -x "$perturb" ] || die "perturb binary '$perturb' not found or not executable"
case $order in sequential|interleaved|random) ;; *) die "ORDER must be sequential, interleaved or random, not '$order'" ;; esac
case $runs in ''|*[!0-9]*|0) die "RUNS must be a positive integer, not '$runs'" ;; esac
case $rounds in ''|*[!0-9]*|0) die "ROUNDS must be a positive integer, not '$rounds'" ;; esac
cpu_rounds=${CPU_ROUNDS:-3}
case $cpu_rounds in ''|*[!0-9]*) die "CPU_ROUNDS must be a non-negative integer, not '$cpu_rounds'" ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-peers.XXXXXX")
cg=
trap 'rm -rf "$tmp"; [ -z "$cg" ] || rmdir "$cg"' EXIT
# cgloop's cgroup: below this shell's own cgroup v2, as perturb's base is
cg_mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
cg_own=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
if [ -n "$cg_mnt" ] && [ -n "$cg_own" ] && mkdir "$cg_mnt${cg_own%/}/perturb-peers-$$" 2>/dev/null; then
	cg=$cg_mnt${cg_own%/}/perturb-peers-$$
else
	echo "spawn-peers.sh: warning: no writable cgroup2 hierarchy here; the cgloop rows are skipped" >&2
fi

cc -O2 -o "$tmp/spawn-loop" "$here/spawn-loop.c" || die "cannot build spawn-loop.c"
have_hf=0
command -v hyperfine > /dev/null 2>&1 && have_hf=1
[ $have_hf = 1 ] || echo "spawn-peers.sh: warning: hyperfine not installed (make deps-bench); its rows are skipped" >&2

cat > "$tmp/e.yaml" <<YAML
name: spawn-peers
repetitions: $runs
warmup: 0
order: $order
seed: 1
variants: [{name: base}]
workloads:
  - {name: "true", cmd: [$true_bin]}
YAML

# one way, timed from outside: its seconds on stdout; under "${wrap[@]}"
# (perf stat) for perturb, hyperfine and the loop when it is set
wrap=()
way() {
	local t0 t1
	rm -f "$tmp"/db*
	t0=$(date +%s.%N)
	case $1 in
	perturb) "${wrap[@]}" "$perturb" run "$tmp/e.yaml" --db "$tmp/db" -q > "$tmp/out" 2>&1 ;;
	screen) "$perturb" run "$tmp/e.yaml" --db "$tmp/db" > "$tmp/out" 2>&1 ;;
	fallback) PERTURB_NO_CLONE_INTO_CGROUP=1 "$perturb" run "$tmp/e.yaml" --db "$tmp/db" -q \
		> "$tmp/out" 2>&1 ;;
	hyperfine) "${wrap[@]}" hyperfine -N --runs "$runs" --warmup 0 --style none "$true_bin" > "$tmp/out" 2>&1 ;;
	loop) "${wrap[@]}" "$tmp/spawn-loop" "$runs" "$true_bin" > "$tmp/out" 2>&1 ;;
	forkloop) "$tmp/spawn-loop" -f "$runs" "$true_bin" > "$tmp/out" 2>&1 ;;
	cgloop) "$tmp/spawn-loop" -c "$cg" "$runs" "$true_bin" > "$tmp/out" 2>&1 ;;
	old) "$OLD" run "$tmp/e.yaml" --db "$tmp/db" -q > "$tmp/out" 2>&1 ;;
	oldscreen) "$OLD" run "$tmp/e.yaml" --db "$tmp/db" > "$tmp/out" 2>&1 ;;
	esac || { cat "$tmp/out" >&2; die "$1 failed"; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}

ways=(perturb screen fallback loop forkloop)
[ $have_hf = 1 ] && ways=(perturb screen fallback hyperfine loop forkloop)
[ -z "$cg" ] || ways+=(cgloop)
if [ -n "${OLD:-}" ]; then
	[ -x "$OLD" ] || die "OLD perturb binary '$OLD' not found or not executable"
	ways+=(old oldscreen)
fi
echo "spawn-peers: $true_bin x $runs, $rounds rounds; load before: $(uptime | sed 's/.*load average: //')"
"$perturb" run "$tmp/e.yaml" --db "$tmp/db0" 2>&1 | grep -o 'containment [a-z-]*' | head -n 1 |
	sed 's/^/  perturb: /'
: > "$tmp/times"
for ((r = 0; r < rounds; r++)); do
	n=${#ways[@]}
	for ((k = 0; k < n; k++)); do
		w=${ways[$(((k + r) % n))]}
		echo "$r $w $(way "$w")" >> "$tmp/times"
	done
done
echo "  load after: $(uptime | sed 's/.*load average: //')"
# summarize MODE ROUNDS FILE...: each way's row, the median of its rounds
# then each round (a file of "round way value" lines); MODE wall: seconds,
# as ms a run, then the ratios pair by pair in a round; MODE cpu: perf's
# msec, as us a run, then perturb's CPU above the loop's and hyperfine's,
# and the loop target's budget from the loop's wall time (FILE times)
summarize() {
	awk -v mode="$1" -v rounds="$2" -v runs="$runs" '
	function median(a, n,    i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	mode == "cpu" && FILENAME ~ /times$/ { if ($2 == "loop") lw[++nl] = $3 / runs * 1e6; next }
	{ t[$1, $2] = $3; seen[$2] = 1 }
	END {
		if (mode == "wall") {
			title = "per run (ms), median of the rounds [each round]"
			f = "%.3f"
			list = "perturb screen fallback hyperfine loop forkloop cgloop old oldscreen"
		} else {
			title = "own CPU per run (us; perf stat --no-inherit, its runs left out), median [each]"
			f = "%.1f"
			list = "perturb hyperfine loop"
		}
		printf "  %-10s %s\n", "way", title
		n = split(list, order, " ")
		for (k = 1; k <= n; k++) {
			w = order[k]
			if (!(w in seen))
				continue
			line = ""
			for (r = 0; r < rounds; r++) {
				v[r + 1] = t[r, w] / runs * 1e3	# s -> ms a run; msec -> us
				line = line sprintf(" " f, v[r + 1])
			}
			own[w] = median(v, rounds)
			printf "  %-10s " f " [%s ]\n", w, own[w], line
		}
		if (mode == "cpu") {
			if (("perturb" in own) && ("loop" in own) && nl)
				printf "  perturb above the loop: %.1f us a run; the <= 1.05x loop budget: %.1f us a run (5 %% of the loop'"'"'s %.1f us)\n",
					own["perturb"] - own["loop"], 0.05 * median(lw, nl), median(lw, nl)
			if (("perturb" in own) && ("hyperfine" in own))
				printf "  perturb above hyperfine: %.1f us a run\n", own["perturb"] - own["hyperfine"]
			exit
		}
		printf "  ratios, median of the rounds (pair by pair in a round):\n"
		n = split("perturb/hyperfine perturb/loop perturb/cgloop cgloop/forkloop forkloop/loop screen/hyperfine screen/loop fallback/perturb perturb/old screen/oldscreen old/hyperfine old/loop oldscreen/hyperfine", pairs, " ")
		for (k = 1; k <= n; k++) {
			split(pairs[k], ab, "/")
			if (!(ab[1] in seen) || !(ab[2] in seen))
				continue
			line = ""
			for (r = 0; r < rounds; r++) {
				q[r + 1] = t[r, ab[1]] / t[r, ab[2]]
				line = line sprintf(" %.3f", q[r + 1])
			}
			printf "  %-18s %.3fx [%s ]\n", pairs[k], median(q, rounds), line
		}
	}' "${@:3}"
}
summarize wall "$rounds" "$tmp/times"

[ "$cpu_rounds" -gt 0 ] || exit 0
if ! command -v perf > /dev/null 2>&1; then
	echo "  own CPU: skipped: perf is not installed (apt: linux-perf)"
	exit 0
fi
if ! perf stat --no-inherit -x, -e task-clock -o "$tmp/cpu" -- true 2> "$tmp/perf-err"; then
	echo "  own CPU: skipped: perf stat cannot count task-clock here: $(head -n 1 "$tmp/perf-err")"
	exit 0
fi
cpu_ways=(perturb loop)
[ $have_hf = 1 ] && cpu_ways=(perturb hyperfine loop)
wrap=(perf stat --no-inherit -x, -e task-clock -o "$tmp/cpu" --)
: > "$tmp/cpus"
for ((r = 0; r < cpu_rounds; r++)); do
	n=${#cpu_ways[@]}
	for ((k = 0; k < n; k++)); do
		w=${cpu_ways[$(((k + r) % n))]}
		way "$w" > /dev/null
		echo "$r $w $(awk -F, '$3 ~ /^task-clock/ { print $1 }' "$tmp/cpu")" >> "$tmp/cpus"
	done
done
summarize cpu "$cpu_rounds" "$tmp/times" "$tmp/cpus"
