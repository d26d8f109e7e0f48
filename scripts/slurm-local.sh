#!/usr/bin/env bash
#! A real one-node Slurm cluster on this machine, for `run --slurm`'s tests (tests/it/slurm.rs)
#! and for trying it: munge and Debian's slurm-wlm (22.05), everything in one temp folder,
#! loopback only, ports pinned, no cgroups, no accounting database.
#!
#!   scripts/slurm-local.sh start   # installs slurm-wlm and munge when missing (apt, as root),
#!                                  # starts munged, slurmctld and slurmd, waits for the node
#!   scripts/slurm-local.sh env     # prints `export SLURM_CONF=…` for the clients
#!   scripts/slurm-local.sh stop    # stops the daemons by the pids in their pid files
#!
#! Both are idempotent: `start` on a running cluster only checks it, `stop` on a stopped one
#! does nothing. The folder is $COALPROF_SLURM_DIR (default /tmp/coalprof-slurm); the ports are
#! $COALPROF_SLURM_PORT (slurmctld, default 16817) and the next one (slurmd).
set -euo pipefail

dir="${COALPROF_SLURM_DIR:-/tmp/coalprof-slurm}"
ctld_port="${COALPROF_SLURM_PORT:-16817}"
slurmd_port=$((ctld_port + 1))
conf="$dir/slurm.conf"
host="$(hostname -s)"

log() { printf 'slurm-local: %s\n' "$*" >&2; }

# The pid in a pid file, if that process is alive.
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

install() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
        && command -v sbatch >/dev/null; then
        return
    fi
    if [ "$(id -u)" != 0 ]; then
        log "slurm-wlm and munge are missing; install them as root: apt-get install -y slurm-wlm munge"
        exit 1
    fi
    log "installing slurm-wlm and munge (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >&2
}

write_conf() {
    mkdir -p "$dir"/{state,spool,log,run,munge}
    chmod 0700 "$dir/munge"
    if [ ! -s "$dir/munge/munge.key" ]; then
        head -c 1024 /dev/urandom > "$dir/munge/munge.key"
        chmod 0400 "$dir/munge/munge.key"
    fi
    # A little under the machine's memory, so slurmd does not drain the node for lying.
    local mem_mb
    mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
    cat > "$conf" <<CONF
# Written by scripts/slurm-local.sh: a one-node cluster on loopback.
ClusterName=coalprof-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
MpiDefault=none
SchedulerType=sched/backfill
# Finished jobs stay known to scontrol for 10 minutes.
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$(nproc) RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

start() {
    install
    if alive "$dir/run/slurmctld.pid" && alive "$dir/run/slurmd.pid" && alive "$dir/run/munged.pid"; then
        log "already running ($conf)"
    else
        stop quiet
        write_conf
        log "starting munged"
        munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
            --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
            --seed-file="$dir/munge/munge.seed" --force
        log "starting slurmctld and slurmd on 127.0.0.1:$ctld_port/$slurmd_port"
        slurmctld -f "$conf" || { tail -n 30 "$dir/log/slurmctld.log" >&2; exit 1; }
        slurmd -f "$conf" || { tail -n 30 "$dir/log/slurmd.log" >&2; exit 1; }
    fi
    export SLURM_CONF="$conf"
    for _ in $(seq 60); do
        state="$(sinfo --noheader --format=%T 2>/dev/null | head -n1 || true)"
        case "$state" in
            idle|mixed|allocated|completing) log "node $host is $state"; echo "export SLURM_CONF=$conf"; return ;;
        esac
        sleep 0.5
    done
    log "the node did not come up (sinfo: ${state:-no answer}); the daemons' logs:"
    tail -n 30 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    exit 1
}

stop() {
    for daemon in slurmd slurmctld munged; do
        local pidfile="$dir/run/$daemon.pid"
        if alive "$pidfile"; then
            local pid
            pid="$(cat "$pidfile")"
            kill "$pid"
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            [ "${1:-}" = quiet ] || log "stopped $daemon ($pid)"
        fi
        rm -f "$pidfile"
    done
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    env) echo "export SLURM_CONF=$conf" ;;
    *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
