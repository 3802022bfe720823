#!/bin/sh
# make-fixtures.sh - (re)create the stored studies of the golden tests,
# tests/golden/NAME.sql, from real runs of tiny studies.
#
#   tests/golden/make-fixtures.sh PERTURB PROGS
#
# PERTURB is the perturb binary, PROGS the folder of tests/progs' helpers.
# Each study is run for real (the store, the plan, the metric extraction
# are perturb's own), then every measured value and every field of
# provenance or time is overwritten with a fixed value by SQL, and the
# database is dumped as SQL text: a fixture is deterministic and can be
# read in a review.  The golden outputs (tests/golden/NAME.*) are rendered
# from these dumps by tests/test_golden.c (PERTURB_GOLDEN_UPDATE=1, or
# `make golden`, rewrites them).  Rerunning this script changes the
# fixtures only where perturb's stored schema or plan changed.
#
# The studies:
#   multi   two runs of a four-variant micro study (spin): extracted
#           metrics, a counter (instructions, multiplexed), ns_per_op (the
#           Markers table), a failed run, an unavailable metric, a name
#           and a unit that every format must escape; the second run is
#           slower and ran on another kernel (compare, gate)
#   tracer  the tracer's accounting (trace_events, trace_lost, trace_bytes)
#           with runs that lost events
#   blocks  runs nested in blocks (boots), a virtual-time variant, a
#           variant with one successful run and one with none
#   calib   a calibration workload (docs/experiment.md, "calibration"):
#           the cost per event of an ftrace and a bpf variant, the
#           published figure beside the bpf tracepoint, the overhead
#           compensation of a real workload: one that fits, one that does not
#   matrix  matrices (docs/experiment.md): a variant's numeric parameter
#           over more than a decade (a log axis), a variant's list
#           parameter (an axis of item counts), a workload's categorical
#           parameter; the overhead curves of every format
set -eu

PERTURB=${1:?usage: make-fixtures.sh PERTURB PROGS}
PROGS=${2:?usage: make-fixtures.sh PERTURB PROGS}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The provenance and time of every run, the same for every study: run $1
# of the database $2.
provenance() {
	sqlite3 "$2" "
	UPDATE runs SET started = '2026-01-0${1}T10:00:00Z', ended = '2026-01-0${1}T10:05:00Z',
	  argv = 'perturb run study.yaml --db golden.db -q', perturb_version = '0.1.0',
	  machine_json = '{\"hostname\": \"golden\", \"kernel_release\": \"6.1.0-golden\", \"cpu_model\": \"Golden CPU\", \"cores\": 4}',
	  kernel_release = '6.1.0-golden', kernel_cmdline = 'quiet', cpu_model = 'Golden CPU',
	  cores = 4, governor = 'performance', smt = 'off', aslr = '2', loadavg = '0.00 0.00 0.00'
	  WHERE id = $1;
	UPDATE results SET started = printf('2026-01-0${1}T10:%02d:%02dZ', seq / 60, seq % 60)
	  WHERE run_id = $1;"
}

# The experiment's text with the temporary folder replaced, and its hash.
experiment() {
	db=$1
	text=$(sqlite3 "$db" "SELECT text FROM experiments WHERE id = 1" | sed "s|$TMP|/golden|g; s|$PROGS|/golden/progs|g")
	sum=$(printf '%s\n' "$text" | sha256sum | cut -d' ' -f1)
	printf '%s\n' "$text" > "$TMP/text"
	sqlite3 "$db" "UPDATE experiments SET path = 'study.yaml',
	  text = CAST(readfile('$TMP/text') AS TEXT), sha256 = '$sum'"
}

dump() {
	{
		echo "-- tests/golden/$2.sql: made by tests/golden/make-fixtures.sh; do not edit"
		echo "PRAGMA user_version = $(sqlite3 "$1" 'PRAGMA user_version');"
		sqlite3 "$1" .dump
	} > "$HERE/$2.sql"
}

# A fixed noise in [0, 1) of a plan entry: its seq and a salt.
NOISE="(((p.seq * 7919 + %s) %% 97) / 97.0)"

# ---- multi ----
spin_yaml() {
	cat <<EOF
name: "spin <&> 'study' \"q\""
baseline: base
repetitions: $1
warmup: 1
seed: 11
variants:
  - {name: base, env: {PERTURB_SCALE: '0'}}
  - {name: aa, env: {PERTURB_SCALE: '0'}}
  - {name: plus1, env: {PERTURB_SCALE: '0.01'}}
  - {name: plus5, env: {PERTURB_SCALE: '0.05'}}
workloads:
  - name: spin
    kind: micro
    cmd: [$PROGS/spin, '20000']
    metrics:
      - {name: iterations, regex: 'iterations=([0-9]+)', unit: it}
      - {name: loop_ns, regex: 'elapsed_ns=([0-9]+)', unit: "ns<&>"}
      - {name: ns_per_op, regex: 'elapsed_ns=([0-9]+)', unit: ns}
EOF
}

db=$TMP/multi.db
spin_yaml 6 > "$TMP/study.yaml"
(cd "$TMP" && "$PERTURB" run study.yaml --db "$db" -q && "$PERTURB" run study.yaml --db "$db" -q)
for run in 1 2; do
	# run 2: plus5 is slower (+8 %) and every variant 2 % slower
	slow=$( [ $run = 2 ] && echo 1.02 || echo 1.0 )
	p5=$( [ $run = 2 ] && echo 0.08 || echo 0.05 )
	n1=$(printf "$NOISE" "$run")
	n2=$(printf "$NOISE" "$((run + 31))")
	sqlite3 "$db" "
	CREATE TEMP TABLE s(idx INTEGER PRIMARY KEY, scale REAL);
	INSERT INTO s VALUES (0, 0), (1, 0), (2, 0.01), (3, $p5);
	UPDATE results SET
	  wall_s = (SELECT round(0.010 * $slow * (1 + s.scale) * (1 + 0.02 * $n1), 9)
	            FROM plan p JOIN s ON s.idx = p.variant_idx
	            WHERE p.run_id = results.run_id AND p.seq = results.seq),
	  user_s = 0.009, sys_s = 0.001, maxrss_kb = 1000 + seq
	  WHERE run_id = $run;
	UPDATE metric_values SET value = (SELECT round(180000 * $slow * (1 + s.scale) * (1 + 0.03 * $n2))
	            FROM plan p JOIN s ON s.idx = p.variant_idx
	            WHERE p.run_id = metric_values.run_id AND p.seq = metric_values.seq)
	  WHERE run_id = $run AND metric = 'loop_ns';
	UPDATE metric_values SET value = round((SELECT v.value FROM metric_values v
	            WHERE v.run_id = metric_values.run_id AND v.seq = metric_values.seq
	            AND v.metric = 'loop_ns') / 20000.0, 4)
	  WHERE run_id = $run AND metric = 'ns_per_op';
	INSERT INTO metric_values (run_id, seq, metric, value, unit, scaled, time_enabled_ns,
	  time_running_ns)
	  SELECT run_id, seq, 'instructions', 4 * m.value + seq, '', 1, 1000000, 500000
	  FROM metric_values m WHERE run_id = $run AND metric = 'iterations';
	INSERT INTO unavailable (run_id, metric, reason)
	  VALUES ($run, 'cycles', 'perf_event_open: Permission denied');
	"
	provenance $run "$db"
done
sqlite3 "$db" "
UPDATE runs SET kernel_release = '6.1.0-golden2', cores = 8 WHERE id = 2;
DELETE FROM metric_values WHERE run_id = 1 AND seq = (SELECT max(seq) FROM plan
  WHERE run_id = 1 AND variant = 'plus5' AND warmup = 0);
UPDATE results SET status = 'failed', exit_code = 1, reason = 'exit status 1',
  output_tail = 'spin: out of luck' WHERE run_id = 1 AND seq = (SELECT max(seq) FROM plan
  WHERE run_id = 1 AND variant = 'plus5' AND warmup = 0);"
experiment "$db"
dump "$db" multi

# ---- tracer ----
db=$TMP/tracer.db
cat > "$TMP/study.yaml" <<EOF
name: tracer
baseline: base
repetitions: 4
warmup: 0
seed: 3
variants:
  - {name: base, env: {EV: '0', LOST: '0', CNT: $TMP/c.base}}
  - {name: traced, env: {EV: '100', LOST: '0', CNT: $TMP/c.traced}}
  - {name: lossy, env: {EV: '100', LOST: '7', CNT: $TMP/c.lossy}}
  - {name: silent, env: {EV: '0', LOST: '0', CNT: $TMP/c.silent}}
workloads:
  - name: traced-work
    cmd: [sh, -c, 'c=\$(cat "\$CNT" 2>/dev/null || echo 0); c=\$((c + 1)); echo \$c > "\$CNT"; l=0; if [ \$((c % 2)) = 1 ]; then l=\$LOST; fi; echo trace_events=\$((EV * c * c)) trace_lost=\$l trace_bytes=\$((EV * c * 16))']
    metrics:
      - {name: trace_events, regex: 'trace_events=([0-9]+)', unit: events}
      - {name: trace_lost, regex: 'trace_lost=([0-9]+)', unit: events}
      - {name: trace_bytes, regex: 'trace_bytes=([0-9]+)', unit: B}
EOF
(cd "$TMP" && "$PERTURB" run study.yaml --db "$db" -q)
n1=$(printf "$NOISE" 5)
sqlite3 "$db" "
CREATE TEMP TABLE s(idx INTEGER PRIMARY KEY, wall REAL);
INSERT INTO s VALUES (0, 0.010), (1, 0.060), (2, 0.062), (3, 0.030);
UPDATE results SET
  wall_s = (SELECT round(s.wall * (1 + 0.05 * $n1), 9) FROM plan p JOIN s ON s.idx = p.variant_idx
            WHERE p.run_id = results.run_id AND p.seq = results.seq),
  user_s = 0.001, sys_s = 0.002, maxrss_kb = 2000 + seq;"
provenance 1 "$db"
experiment "$db"
dump "$db" tracer

# ---- calib ----
db=$TMP/calib.db
cat > "$TMP/study.yaml" <<EOF
name: calib
baseline: vanilla
repetitions: 6
warmup: 0
order: interleaved
seed: 16
variants:
  - {name: vanilla, env: {EV: '0'}}
  - {name: ftrace-tp, env: {EV: '1'}}
  - {name: ebpf-tp, env: {EV: '1'}}
workloads:
  - name: null-syscall
    kind: micro
    cmd: [sh, -c, 'echo ns_per_op=100 events=\$((EV * 1000000))']
    calibration: {hits: 1}
    metrics:
      - {name: ns_per_op, regex: 'ns_per_op=([0-9.]+)', unit: ns}
      - {name: trace_events, regex: 'events=([0-9]+)', unit: events}
      - {name: bpf_runs, regex: 'events=([0-9]+)', unit: events}
  - name: gzip
    cmd: [sh, -c, 'echo events=\$((EV * 20000))']
    metrics:
      - {name: trace_events, regex: 'events=([0-9]+)', unit: events}
      - {name: bpf_runs, regex: 'events=([0-9]+)', unit: events}
EOF
(cd "$TMP" && "$PERTURB" run study.yaml --db "$db" -q)
n1=$(printf "$NOISE" 16)
# ns/event: ftrace-tp 60, ebpf-tp 45; on gzip ftrace-tp adds what its 20000
# events cost (1.2 ms), ebpf-tp 25 ms where 0.9 ms is predicted; each
# variant keeps its own tracer's event metric, and its attach type
sqlite3 "$db" "
CREATE TEMP TABLE s(idx INTEGER PRIMARY KEY, op REAL, wall REAL);
INSERT INTO s VALUES (0, 0, 0), (1, 60, 0.0012), (2, 45, 0.025);
DELETE FROM metric_values WHERE metric = 'bpf_runs' AND seq IN
  (SELECT seq FROM plan WHERE variant_idx <> 2);
DELETE FROM metric_values WHERE metric = 'trace_events' AND seq IN
  (SELECT seq FROM plan WHERE variant_idx = 2);
UPDATE metric_values SET value = (SELECT round(100 * (1 + 0.02 * $n1) + s.op, 6)
  FROM plan p JOIN s ON s.idx = p.variant_idx
  WHERE p.run_id = metric_values.run_id AND p.seq = metric_values.seq)
  WHERE metric = 'ns_per_op';
UPDATE results SET
  wall_s = (SELECT round(0.5 * (1 + 0.002 * $n1) + (p.workload_idx = 1) * s.wall, 9)
            FROM plan p JOIN s ON s.idx = p.variant_idx
            WHERE p.run_id = results.run_id AND p.seq = results.seq),
  user_s = 0.4, sys_s = 0.05, maxrss_kb = 3000 + seq;
INSERT INTO tracer_variants VALUES
  (1, 'ftrace-tp', 'ftrace', 'tracepoint (syscalls:sys_enter_getppid)'),
  (1, 'ebpf-tp', 'bpf', 'tracepoint');"
provenance 1 "$db"
experiment "$db"
dump "$db" calib

# ---- blocks ----
db=$TMP/blocks.db
cat > "$TMP/study.yaml" <<EOF
name: blocks
baseline: base
repetitions: 8
warmup: 0
seed: 5
variants:
  - {name: base, env: {PERTURB_SCALE: '0'}}
  - {name: plus5, env: {PERTURB_SCALE: '0.05'}}
  - {name: virt, env: {PERTURB_SCALE: '0'}}
  - {name: once, env: {PERTURB_SCALE: '0'}}
  - {name: dead, env: {PERTURB_SCALE: '0'}}
workloads:
  - name: spin
    cmd: [$PROGS/spin, '20000']
    metrics:
      - {name: loop_ns, regex: 'elapsed_ns=([0-9]+)', unit: ns}
EOF
(cd "$TMP" && "$PERTURB" run study.yaml --db "$db" -q)
n1=$(printf "$NOISE" 7)
sqlite3 "$db" "
CREATE TEMP TABLE s(idx INTEGER PRIMARY KEY, scale REAL);
INSERT INTO s VALUES (0, 0), (1, 0.05), (2, 0.5), (3, 0), (4, 0);
UPDATE plan SET block = repetition / 4 WHERE variant IN ('base', 'plus5');
UPDATE variants SET timebase = 'virtual' WHERE name = 'virt';
UPDATE results SET
  wall_s = (SELECT round(0.010 * (1 + s.scale) * (1 + 0.02 * $n1), 9)
            FROM plan p JOIN s ON s.idx = p.variant_idx
            WHERE p.run_id = results.run_id AND p.seq = results.seq),
  user_s = 0.009, sys_s = 0.001, maxrss_kb = 3000 + seq;
UPDATE metric_values SET value = (SELECT 90000 * (1 + s.scale) * (1 + 0.01 * p.block)
            + 500 * ((p.repetition * 3) % 4)
            FROM plan p JOIN s ON s.idx = p.variant_idx
            WHERE p.run_id = metric_values.run_id AND p.seq = metric_values.seq);
DELETE FROM metric_values WHERE seq IN (SELECT seq FROM plan WHERE
  (variant = 'once' AND repetition > 0) OR variant = 'dead');
UPDATE results SET status = 'timeout', exit_code = NULL, signal = 9, reason = 'timed out after 10 s',
  output_tail = NULL WHERE seq IN (SELECT seq FROM plan WHERE variant = 'dead');
UPDATE results SET status = 'crashed', exit_code = NULL, signal = 11,
  reason = 'killed by signal 11 (Segmentation fault)', output_tail = 'segfault'
  WHERE seq IN (SELECT seq FROM plan WHERE variant = 'once' AND repetition > 0);"
provenance 1 "$db"
experiment "$db"
dump "$db" blocks

# ---- matrix ----
db=$TMP/matrix.db
cat > "$TMP/study.yaml" <<EOF
name: matrix
baseline: base
repetitions: 10
warmup: 0
seed: 9
variants:
  - {name: base, env: {KB: '0'}}
  - name: buf
    matrix: {kb: [1024, 4096, 16384]}
    env: {KB: '{kb}'}
  - name: wrapped
    matrix: {w: [[nice], [nice, -n, '5']]}
    wrap: '{w}'
workloads:
  - name: echo
    matrix: {input: [text, zeros]}
    cmd: [echo, '{input}']
EOF
(cd "$TMP" && "$PERTURB" run study.yaml --db "$db" -q)
n1=$(printf "$NOISE" 9)
sqlite3 "$db" "
CREATE TEMP TABLE s(idx INTEGER PRIMARY KEY, scale REAL);
INSERT INTO s VALUES (0, 0), (1, 0.01), (2, 0.04), (3, 0.12), (4, 0), (5, 0.06);
UPDATE results SET
  wall_s = (SELECT round(0.010 * (1 + 0.5 * p.workload_idx) * (1 + s.scale) * (1 + 0.02 * $n1), 9)
            FROM plan p JOIN s ON s.idx = p.variant_idx
            WHERE p.run_id = results.run_id AND p.seq = results.seq),
  user_s = 0.008, sys_s = 0.001, maxrss_kb = 4000 + seq;"
provenance 1 "$db"
experiment "$db"
dump "$db" matrix
