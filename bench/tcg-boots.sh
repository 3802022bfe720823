#!/bin/sh
# bench/tcg-boots.sh [PERTURB] [BOOTS] [RUNS] - do boots of one guest
# kernel under QEMU without KVM (TCG) disagree, and what removes it
# (issue 15, "Boots that disagree"; docs/experiment.md, `boots:`).
#
# One study, three variants of the same guest (kernel: debian, 512 MiB,
# 1 vCPU, kvm: false), each booted BOOTS times (default 6) in the engine's
# ABBA order with RUNS measured runs a boot (default 6, 1 warm-up), all
# running the same busybox shell loop (100000 iterations):
#   kaslr    the kernel as it boots by default (KASLR on in Debian's kernel)
#   nokaslr  cmdline: nokaslr (the kernel at the same place every boot)
#   virtual  deterministic: true (QEMU -icount shift=0: the guest's clock
#            counts executed instructions, not host time)
# For each: the boot means, the median run, the report's between-boot
# share of the variance and its F test (reports/report.h: nested).  A
# between-boot share near 0 with a virtual time that is the same in every
# boot says the guest does the same work in every boot, so that what
# differs between boots in real time is the host's speed of running it.
# Needs qemu-system-x86, busybox-static and /usr/bin/python3.  About 20 s
# a boot on an idle 2-core VM.
set -eu

perturb=${1:-build/perturb}
boots=${2:-6}
runs=${3:-6}
perturb=$(cd "$(dirname "$perturb")" && pwd)/$(basename "$perturb")
dir=$(mktemp -d /tmp/perturb-tcg.XXXXXX)
trap 'rm -rf "$dir"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3

q="memory: 512M, cpus: 1, kvm: false, boots: $boots"
cat > "$dir/e.yaml" <<YAML
name: tcg-boots
baseline: kaslr
repetitions: $((boots * runs))
warmup: 1
order: sequential
seed: 15
timeout: 300s
variants:
  - name: kaslr
    boot: {qemu: {kernel: debian, $q}}
  - name: nokaslr
    boot: {qemu: {kernel: debian, cmdline: nokaslr, $q}}
  - name: virtual
    boot: {qemu: {kernel: debian, deterministic: true, $q}}
workloads:
  - name: loop
    shell: "i=0; while [ \$i -lt 100000 ]; do i=\$((i+1)); done"
YAML
echo "tcg-boots: $boots boots x $runs runs a variant; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$perturb" run "$dir/e.yaml" --db "$dir/r.db" -q > /dev/null
"$perturb" report --db "$dir/r.db" --format json > "$dir/r.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$py" - "$dir/r.db" "$dir/r.json" <<'PY'
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select p.variant, p.block, r.wall_s from results r join plan p "
                  "using (run_id, seq) where p.warmup = 0 and r.status = 'ok' "
                  "order by p.seq").fetchall()
rep = json.load(open(sys.argv[2]))
blocks = {r["variant"]: r.get("blocks", {}) for r in rep["results"] if r["metric"] == "wall"}
print("%-8s %-48s %9s %14s %9s" % ("variant", "boot means (s, in boot order)", "median",
                                   "between share", "F p"))
for v in ("kaslr", "nokaslr", "virtual"):
    by = {}
    for var, b, w in rows:
        if var == v:
            by.setdefault(b, []).append(w)
    means = " ".join("%.3f" % statistics.mean(by[b]) for b in sorted(by))
    allw = [w for b in by.values() for w in b]
    bl = blocks.get(v, {})
    share, p = bl.get("between_share"), bl.get("p")
    print("%-8s %-48s %9.4f %13s %9s" % (v, means, statistics.median(allw) if allw else float("nan"),
          "-" if share is None else "%.0f %%" % (100 * share),
          "-" if p is None else "%.2g" % p))
PY
