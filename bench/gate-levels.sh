#!/usr/bin/env bash
# gate-levels.sh - how long `perturb gate` takes to judge at high levels.
#
#   bench/gate-levels.sh [PERTURB]
#
# Stores one run of a two-variant study (RUNS runs a variant, default 30;
# env RUNS=N; interleaved, so the dilations are paired) of a short shell
# loop, with every metric the host records (wall, user, sys, maxrss, the
# cgroup's), then times `perturb gate --metric wall --max-dilation 5%` at
# the levels 0.95, 0.999 and 0.9999 (a bootstrap takes more replicates at
# a higher level: stats_boot_replicates), best of 3 by wall clock.  With
# OLD=PATH, another perturb binary judges the same database beside it, and
# the two verdicts' lines must be the same.  Issue 25: a gate's model
# judged the report's Holm families, every metric at its Holm level, and
# every statistic; the gate reads one dilation per rule.
#
# Needs: bash, /usr/bin/time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
perturb=${1:-$here/../build/perturb}
runs=${RUNS:-30}
old=${OLD:-}

die() { echo "gate-levels.sh: error: $*" >&2; exit 1; }

[ -x "$perturb" ] || die "perturb binary '$perturb' not found or not executable"
[ -z "$old" ] || [ -x "$old" ] || die "OLD binary '$old' not found or not executable"
case $runs in ''|*[!0-9]*|0|1) die "RUNS must be an integer of at least 2, not '$runs'" ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perturb-gate-levels.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/e.yaml" <<YAML
name: gate-levels
warmup: 0
repetitions: $runs
order: interleaved
seed: 5
variants:
  - name: base
  - name: other
    env: {X: "1"}
workloads:
  - name: w
    cmd: [sh, -c, 'i=0; while [ \$i -lt 2000 ]; do i=\$((i+1)); done']
YAML
"$perturb" run "$tmp/e.yaml" --db "$tmp/g.db" -q || die "the study failed"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $runs runs a variant"

# best of 3: the least wall clock, in seconds; the verdict's line in $tmp/$2
best() {
	local bin=$1 out=$2 level=$3 t best=
	for _ in 1 2 3; do
		/usr/bin/time -f %e -o "$tmp/t" "$bin" gate --db "$tmp/g.db" --metric wall \
			--max-dilation 5% --confidence "$level" > "$tmp/$out" 2>/dev/null || true
		t=$(cat "$tmp/t")
		best=$(awk -v a="$t" -v b="${best:-$t}" 'BEGIN { print (a < b ? a : b) }')
	done
	echo "$best"
}

printf '%-8s %10s %10s\n' level perturb "${old:+old}"
for level in 0.95 0.999 0.9999; do
	t=$(best "$perturb" new "$level")
	if [ -n "$old" ]; then
		o=$(best "$old" old "$level")
		cmp -s "$tmp/new" "$tmp/old" || die "at $level the verdicts differ:
$(cat "$tmp/new")
$(cat "$tmp/old")"
	fi
	printf '%-8s %9ss %10s\n' "$level" "$t" "${old:+${o}s}"
done
tail -n +2 "$tmp/new"
