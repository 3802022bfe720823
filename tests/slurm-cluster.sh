#!/bin/sh
# slurm-cluster.sh - a private Slurm cluster of two nodes on this host, for
# the tests (tests/test_slurm.c) and .ci/run.  docs/distributed.md says
# what it is for.
#
#   tests/slurm-cluster.sh start DIR   write DIR/slurm.conf, start munged,
#                                      slurmctld and two slurmd (n1, n2),
#                                      wait until both nodes are idle; print
#                                      SLURM_CONF=DIR/slurm.conf
#   tests/slurm-cluster.sh start DIR PID
#                                      the same, and the cluster is stopped
#                                      when process PID ends, whatever ends
#                                      it (SIGKILL too): a watchdog
#                                      ($PERTURB_PROGS/watchdog) blocks on
#                                      PID's end and then runs stop DIR
#   tests/slurm-cluster.sh stop DIR    stop the watchdog, then every daemon
#                                      started in DIR (by its pid file) and
#                                      wait for it
#
# Everything lives in DIR: the configuration, munge's key and socket, the
# controller's state, each node's spool, the logs and the pid files.  The
# ports are free ones picked at start (three in a row: the controller's,
# n1's, n2's), so clusters of tests running at once do not meet, and
# nothing of the machine's own Slurm or munge (/etc/slurm, /etc/munge) is
# read or changed.  The client commands find the cluster by the variable
# SLURM_CONF.  No accounting daemon: sacct has nothing to say here, and
# perturb reads a task's end from scontrol (docs/distributed.md).
# The daemons run as root (SlurmUser=root, SlurmdUser=root), as perturb's
# tracefs variants need.  start stops what it started when it fails.
set -eu

cmd=${1:-}
dir=${2:-}
owner=${3:-}
usage="usage: $0 start DIR [PID] | stop DIR"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "$usage" >&2; exit 2; }

stop_pid() {
	f=$1
	[ -f "$f" ] || return 0
	pid=$(cat "$f" 2>/dev/null || true)
	rm -f "$f"
	# the watchdog runs stop as itself: it is ending already
	[ -n "$pid" ] && [ "$pid" != $$ ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then kill -KILL "$pid" 2>/dev/null || true; fi
		if [ $i -ge 150 ]; then echo "slurm-cluster: pid $pid does not end" >&2; return 1; fi
		sleep 0.1
	done
}

stop_all() {
	rc=0
	stop_pid "$dir/watchdog.pid" || rc=1
	for n in n1 n2; do stop_pid "$dir/slurmd-$n.pid" || rc=1; done
	stop_pid "$dir/slurmctld.pid" || rc=1
	stop_pid "$dir/munged.pid" || rc=1
	return $rc
}

if [ "$cmd" = stop ]; then
	stop_all
	exit $?
fi
[ "$cmd" = start ] || { echo "$usage" >&2; exit 2; }
case $owner in
'') ;;
*[!0-9]*) echo "$usage" >&2; exit 2 ;;
*)	[ -x "${PERTURB_PROGS:-}/watchdog" ] ||
		{ echo "slurm-cluster: no watchdog: \$PERTURB_PROGS/watchdog (make test builds it)" >&2; exit 2; } ;;
esac

for t in munged slurmctld slurmd sinfo; do
	command -v $t >/dev/null 2>&1 || [ -x /usr/sbin/$t ] ||
		{ echo "slurm-cluster: unavailable: $t is not installed (make deps)" >&2; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "slurm-cluster: unavailable: the daemons need root" >&2; exit 77; }
PATH=$PATH:/usr/sbin
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/state" "$dir/spool-n1" "$dir/spool-n2" "$dir/munge" "$dir/log"
chmod 700 "$dir/munge"

trap 'stop_all >/dev/null 2>&1 || true' EXIT

# The watchdog before the daemons: an owner killed while they start stops
# them too.  Its output is not start's (whoever reads start's output is not
# kept waiting for the end of the watchdog).
if [ -n "$owner" ]; then
	self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
	"$PERTURB_PROGS/watchdog" "$owner" "$self" stop "$dir" \
		</dev/null >>"$dir/log/watchdog.log" 2>&1 &
	echo $! >"$dir/watchdog.pid"
fi

# Three free ports in a row, starting from a random one.
used=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u)
port=0
tries=0
while [ $port = 0 ]; do
	tries=$((tries + 1))
	[ $tries -lt 200 ] || { echo "slurm-cluster: no free ports" >&2; exit 1; }
	p=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 30000 ))
	ok=1
	for q in $p $((p + 1)) $((p + 2)); do
		if echo "$used" | grep -qx "$q"; then ok=0; fi
	done
	[ $ok = 0 ] || port=$p
done

dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge/munge.key"
cores=$(nproc)
cat >"$dir/slurm.conf" <<EOF
ClusterName=perturbtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=3600
KillWait=10
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=10
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((port + 1)) CPUs=$cores State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((port + 2)) CPUs=$cores State=UNKNOWN
PartitionName=test Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF
echo "CgroupPlugin=autodetect" >"$dir/cgroup.conf"
export SLURM_CONF="$dir/slurm.conf"

munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
	--pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
	--seed-file="$dir/munge/munged.seed" --force
slurmctld -f "$dir/slurm.conf"
slurmd -f "$dir/slurm.conf" -N n1
slurmd -f "$dir/slurm.conf" -N n2

# Until both nodes are idle (bounded: 60 s).
i=0
while :; do
	idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l)
	[ "$idle" -ge 2 ] && break
	i=$((i + 1))
	if [ $i -ge 600 ]; then
		echo "slurm-cluster: nodes not idle after 60 s:" >&2
		sinfo -N >&2 || true
		tail -n 20 "$dir/log/"*.log >&2 || true
		exit 1
	fi
	sleep 0.1
done
trap - EXIT
echo "SLURM_CONF=$dir/slurm.conf"
