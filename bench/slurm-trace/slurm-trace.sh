#!/usr/bin/env bash
# slurm-trace.sh - replay a muster trace (examples/traces/*.csv: arrival, pods, runtime,
# limit in seconds) on a real Slurm 22.05 (Debian bookworm packages) running a fake cluster
# of N nodes on this one machine, with sched/backfill, and record each job's wait.
#
# The cluster part (install check, private namespaces, slurm.conf, topology.conf, one
# slurmd per fake node, teardown by PID) is copied from the Slurm peer's slurm-bench.sh
# (/work/shared/peer/slurm-bench.sh, written for muster's issue #16 by the peer session;
# see README.md next to this file for what was changed). The workload part is new: every
# job of the trace is submitted at its arrival (seconds after the start, in real time) as
#   sbatch --time=<limit in minutes> -N <pods> --exclusive -J <id> --wrap 'sleep <runtime>'
# (trace_submit.py), the partition is UP from the start, and waits are read afterwards
# from slurmctld's log (submit, start and end of each JobId, ms timestamps; no accounting
# storage exists) by trace_report.py.
#
# Usage: slurm-trace.sh --trace FILE [options]     (run as root; see --help)
set -uo pipefail

usage() {
  cat <<'USAGE'
Usage: slurm-trace.sh --trace FILE [options]
  --trace FILE                the trace (CSV with arrival,pods,runtime,limit; limits whole
                              minutes, e.g. examples/traces/starve-slurm.csv)     [required]
  --until S                   submit only the jobs arriving before S seconds        [all]
  --drain S                   after the last submission, wait at most S s for the
                              queue to empty                                        [1800]
  --nodes N                   fake nodes                           [1024]
  --leaf-size L               nodes per leaf switch                [64]
  --leaves-per-spine S        leaf switches per spine switch       [4]
  --cpus C / --mem MB / --gpus G   per node                        [64 / 512000 / 8]
  --select cons_tres|linear   SelectType plugin                    [cons_tres]
  --topology tree|none        TopologyPlugin                       [tree]
  --sched-params STR          SchedulerParameters                  [bf_interval=5]
  --out DIR                   results: jobs.csv, summary.json, submissions.tsv, the log
                                                                   [slurm-trace-out]
  --keep                      keep the temporary state directory
  --install                   apt-get install slurmctld slurmd slurm-client if missing
  --no-netns                  do not use private namespaces (ports must be free)
  --ctld-port P / --slurmd-port-base P   ports              [16817 / 20000]
USAGE
}

TRACE="" UNTIL="" DRAIN=1800 NODES=1024 LEAF=64 SPINE_FANOUT=4 CPUS=64 MEM=512000 GPUS=8
SELECT=cons_tres TOPOLOGY=tree SCHED_PARAMS="bf_interval=5"
OUT="slurm-trace-out" KEEP=0 INSTALL=0 NETNS=1 CTLD_PORT=16817 SLURMD_PORT_BASE=20000
HERE=$(cd "$(dirname "$0")" && pwd)
ORIG_ARGS=("$@")
while [[ $# -gt 0 ]]; do
  case "$1" in
    --trace) TRACE=$2; shift ;;
    --until) UNTIL=$2; shift ;;
    --drain) DRAIN=$2; shift ;;
    --nodes) NODES=$2; shift ;;
    --leaf-size) LEAF=$2; shift ;;
    --leaves-per-spine) SPINE_FANOUT=$2; shift ;;
    --cpus) CPUS=$2; shift ;;
    --mem) MEM=$2; shift ;;
    --gpus) GPUS=$2; shift ;;
    --select) SELECT=$2; shift ;;
    --topology) TOPOLOGY=$2; shift ;;
    --sched-params) SCHED_PARAMS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --keep) KEEP=1 ;;
    --install) INSTALL=1 ;;
    --no-netns) NETNS=0 ;;
    --ctld-port) CTLD_PORT=$2; shift ;;
    --slurmd-port-base) SLURMD_PORT_BASE=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "slurm-trace.sh: unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[[ -n $TRACE ]] || { echo "slurm-trace.sh: --trace FILE is required" >&2; usage >&2; exit 2; }
[[ -r $TRACE ]] || { echo "slurm-trace.sh: cannot read trace '$TRACE'" >&2; exit 2; }
TRACE=$(cd "$(dirname "$TRACE")" && pwd)/$(basename "$TRACE")
mkdir -p "$OUT" || { echo "slurm-trace.sh: cannot create '$OUT'" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)

log() { printf '[slurm-trace %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s%3N; }                     # epoch milliseconds
fsub() { local d=$(( $1 - $2 )); printf '%d.%03d' $(( d / 1000 )) $(( d % 1000 )); }  # ms diff -> s

# ---------------------------------------------------------------- install check
# The daemons are called through the "-wlm" names on purpose: installing
# slurm-wlm-emulator re-points the /usr/sbin/slurmctld and slurmd alternatives
# to front-end builds that cannot start with Debian's shared libslurmfull.so.
SBIN_CTLD=/usr/sbin/slurmctld-wlm
SBIN_SLURMD=/usr/sbin/slurmd-wlm
SBIN_STEPD=/usr/sbin/slurmstepd-wlm
CLIENTS=(sbatch squeue scontrol sinfo sdiag scancel)

install_check() {
  local missing=()
  for f in "$SBIN_CTLD" "$SBIN_SLURMD" "$SBIN_STEPD"; do [[ -x $f ]] || missing+=("$f"); done
  for c in "${CLIENTS[@]}" python3 unshare ip mknod; do command -v "$c" >/dev/null || missing+=("$c"); done
  if [[ ${#missing[@]} -eq 0 ]]; then return 0; fi
  if [[ $INSTALL -ne 1 ]]; then
    die "missing: ${missing[*]} (re-run with --install, or: apt-get install slurmctld slurmd slurm-client python3 iproute2)"
  fi
  [[ $(id -u) -eq 0 ]] || die "--install needs root"
  log "installing Debian packages slurmctld slurmd slurm-client python3 iproute2"
  # Keep the packages' init scripts from starting system-wide daemons.
  local made_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
  fi
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      slurmctld slurmd slurm-client python3 iproute2 util-linux >/dev/null
  local rc=$?
  [[ $made_policy -eq 1 ]] && rm -f /usr/sbin/policy-rc.d
  [[ $rc -eq 0 ]] || die "apt-get install failed"
}

if [[ -z ${SLURM_TRACE_INNER:-} ]]; then
  [[ $(id -u) -eq 0 ]] || die "run as root (slurmd must run as root to launch jobs)"
  install_check
  log "Slurm $($SBIN_CTLD -V 2>/dev/null | awk '{print $2}') from Debian packages"
  if [[ $NETNS -eq 1 ]]; then
    # Fresh PID+net+mount namespaces: private loopback, and every process
    # started below is killed by the kernel when this namespace's init exits.
    exec unshare --pid --fork --kill-child --net --mount-proc \
      env SLURM_TRACE_INNER=1 bash "$0" "${ORIG_ARGS[@]}"
  fi
  export SLURM_TRACE_INNER=1
fi

# ------------------------------------------------------------------ inner part
if [[ $NETNS -eq 1 ]]; then
  ip link set lo up || die "cannot bring up loopback in the private namespace"
  # glibc's getaddrinfo(AI_ADDRCONFIG), which Slurm uses, refuses IPv4 names
  # when the only IPv4 address is 127.0.0.1; a second loopback address fixes it.
  ip addr add 127.0.0.2/32 dev lo 2>/dev/null || true
fi

D=$(mktemp -d "${TMPDIR:-/tmp}/slurm-trace.XXXXXX") || die "mktemp failed"
chmod 755 "$D"
mkdir -p "$D/state" "$D/spool" "$D/log" "$D/bin" "$D/dev" "$D/jobs" "$D/res"
export SLURM_CONF="$D/slurm.conf"
unset SLURM_JOB_ID SLURM_JOBID

# Daemons decide they are daemons from argv[0]: the "-wlm" names would make the
# shared library drop all node Gres.  So call them through plain-named links.
ln -s "$SBIN_CTLD" "$D/bin/slurmctld"
ln -s "$SBIN_SLURMD" "$D/bin/slurmd"
ln -s "$SBIN_STEPD" "$D/bin/slurmstepd"

W=$(( ${#NODES} > 4 ? ${#NODES} : 4 ))
nname() { printf "n%0${W}d" "$1"; }
LAST=$(( NODES - 1 ))
ALLNODES="n[$(printf "%0${W}d" 0)-$(printf "%0${W}d" $LAST)]"
[[ $LAST -eq 0 ]] && ALLNODES=$(nname 0)

# ------------------------------------------------------------ configuration

GRES_NODE="" GRES_TYPES=""
if [[ $GPUS -gt 0 ]]; then
  GRES_NODE=" Gres=gpu:$GPUS"
  GRES_TYPES="GresTypes=gpu"
  for ((g = 0; g < GPUS; g++)); do mknod "$D/dev/gpu$g" c 1 3 || die "mknod failed"; done
  echo "NodeName=$ALLNODES Name=gpu File=$D/dev/gpu[0-$((GPUS - 1))]" >"$D/gres.conf"
fi
SELECT_PARAMS="SelectTypeParameters=CR_Core_Memory"
[[ $SELECT == linear ]] && SELECT_PARAMS="SelectTypeParameters=CR_Memory"

cat >"$D/slurm.conf" <<EOF
ClusterName=bench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT_BASE
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/spool/slurmd.%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=error
MailProg=/bin/true
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$D/jobcomp.txt
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=600
MessageTimeout=30
MaxJobCount=100000
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
$( [[ -n $SCHED_PARAMS ]] && echo "SchedulerParameters=$SCHED_PARAMS" )
SelectType=select/$SELECT
$SELECT_PARAMS
TopologyPlugin=topology/$TOPOLOGY
$GRES_TYPES
NodeName=$ALLNODES NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$SLURMD_PORT_BASE-$((SLURMD_PORT_BASE + LAST))] CPUs=$CPUS RealMemory=$MEM$GRES_NODE State=UNKNOWN
PartitionName=batch Nodes=$ALLNODES Default=YES MaxTime=INFINITE DefaultTime=60 State=UP
EOF
printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n' >"$D/cgroup.conf"

# topology.conf: leaf switches of LEAF nodes, SPINE_FANOUT leaves per spine, one core.
python3 - "$NODES" "$LEAF" "$SPINE_FANOUT" "$W" >"$D/topology.conf" <<'EOF'
import sys
n, leaf, fan, w = map(int, sys.argv[1:])
fmt = lambda i: "%0*d" % (w, i)
leaves = (n + leaf - 1) // leaf
spines = (leaves + fan - 1) // fan
for l in range(leaves):
    lo, hi = l * leaf, min((l + 1) * leaf, n) - 1
    print("SwitchName=leaf%03d Nodes=n[%s-%s]" % (l, fmt(lo), fmt(hi)) if hi > lo
          else "SwitchName=leaf%03d Nodes=n%s" % (l, fmt(lo)))
for s in range(spines):
    a, b = s * fan, min((s + 1) * fan, leaves) - 1
    print("SwitchName=spine%02d Switches=leaf[%03d-%03d]" % (s, a, b) if b > a
          else "SwitchName=spine%02d Switches=leaf%03d" % (s, a))
if spines > 1:
    print("SwitchName=core Switches=spine[00-%02d]" % (spines - 1))
EOF

# ------------------------------------------------------------ daemons
CTLD_PID="" SLURMD_PIDS=()
stop_all() {
  local t
  if [[ ${#SLURMD_PIDS[@]} -gt 0 || -n $CTLD_PID ]]; then
    log "stopping: cancel jobs, then ${#SLURMD_PIDS[@]} slurmd and slurmctld by PID"
  fi
  if [[ -n $CTLD_PID ]] && kill -0 "$CTLD_PID" 2>/dev/null; then
    scancel --quiet --user=root 2>/dev/null
    for ((t = 0; t < 60; t++)); do
      [[ $(squeue -h -t R,CG -o %i 2>/dev/null | wc -l) -eq 0 ]] && break
      sleep 1
    done
  fi
  if [[ ${#SLURMD_PIDS[@]} -gt 0 ]]; then
    kill -TERM "${SLURMD_PIDS[@]}" 2>/dev/null
    for ((t = 0; t < 30; t++)); do
      local alive=0 p
      for p in "${SLURMD_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && { alive=1; break; }; done
      [[ $alive -eq 0 ]] && break
      sleep 1
    done
    kill -KILL "${SLURMD_PIDS[@]}" 2>/dev/null
    SLURMD_PIDS=()
  fi
  if [[ -n $CTLD_PID ]]; then
    kill -TERM "$CTLD_PID" 2>/dev/null
    for ((t = 0; t < 20; t++)); do kill -0 "$CTLD_PID" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$CTLD_PID" 2>/dev/null
    CTLD_PID=""
  fi
  wait 2>/dev/null
}
finish() {
  local rc=$?
  trap - EXIT INT TERM
  stop_all
  mkdir -p "$OUT" && cp -r "$D/res/." "$OUT/" 2>/dev/null
  cp "$D/log/slurmctld.log" "$D/slurm.conf" "$D/topology.conf" "$D/jobcomp.txt" "$OUT/" 2>/dev/null
  if [[ $KEEP -eq 1 ]]; then log "kept state directory $D"; else rm -rf "$D"; fi
  exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM

T_START=$(now)
log "state dir $D; starting slurmctld for $NODES nodes ($((NODES / LEAF)) leaf switches)"
"$D/bin/slurmctld" -D -c -i >"$D/log/slurmctld.stderr" 2>&1 &
CTLD_PID=$!
for ((t = 0; t < 100; t++)); do
  scontrol ping 2>/dev/null | grep -q 'is UP' && break
  kill -0 "$CTLD_PID" 2>/dev/null || die "slurmctld exited: $(tail -3 "$D/log/slurmctld.stderr")"
  sleep 0.3
done
scontrol ping 2>/dev/null | grep -q 'is UP' || die "slurmctld did not come up"

log "starting $NODES slurmd processes"
for ((i = 0; i < NODES; i++)); do
  "$D/bin/slurmd" -D -N "$(nname $i)" -d "$D/bin/slurmstepd" >/dev/null 2>&1 &
  SLURMD_PIDS+=($!)
  # let the controller keep up with registrations
  (( i % 128 == 127 )) && sleep 0.5
done
idle=0
for ((t = 0; t < 240; t++)); do
  idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)
  [[ $idle -ge $NODES ]] && break
  sleep 1
done
T_UP=$(now)
if [[ $idle -lt $NODES ]]; then
  log "only $idle/$NODES nodes idle after waiting; states:"
  sinfo -h -o '%t %D' >&2
  die "nodes did not all register"
fi
UP_S=$(fsub "$T_UP" "$T_START")
RSS_MB=$(ps -o rss= -p "$CTLD_PID" "${SLURMD_PIDS[@]}" 2>/dev/null | awk '{s += $1} END {printf "%d", s / 1024}')
log "all $NODES nodes idle after ${UP_S}s (daemons RSS ~${RSS_MB} MB)"

# ------------------------------------------------------------ one workload
# ------------------------------------------------------------ the trace
cd "$D/jobs" || die "cannot cd to $D/jobs"
log "submitting $TRACE at its arrival times${UNTIL:+ (until ${UNTIL}s)}"
T0=$(now)
python3 "$HERE/trace_submit.py" "$TRACE" "$D/res/submissions.tsv" ${UNTIL:+--until "$UNTIL"} \
  || die "trace_submit.py failed"
log "all submitted after $(fsub "$(now)" "$T0")s; waiting for the queue to drain (at most ${DRAIN}s)"
: >"$D/res/poll.tsv"
for ((t = 0; t < DRAIN; t += 5)); do
  left=$(squeue -h -o %i 2>/dev/null | wc -l)
  printf '%s\t%s\n' "$(fsub "$(now)" "$T0")" "$left" >>"$D/res/poll.tsv"
  [[ $left -eq 0 ]] && break
  sleep 5
done
squeue -h -o '%i|%j|%T|%r' >"$D/res/left.txt" 2>/dev/null
sdiag >"$D/res/sdiag.txt" 2>&1
log "run took $(fsub "$(now)" "$T0")s; $(wc -l <"$D/res/left.txt") jobs left in the queue"
python3 "$HERE/trace_report.py" --slurm "$D/res/submissions.tsv" "$D/log/slurmctld.log" \
  --nodes "$NODES" --out "$D/res" | tee "$D/res/summary.txt"
