#!/usr/bin/env bash
# A multi-node Ray cluster on one machine, for experiments and tests of shardsearch.
#
#   ray_config/local_cluster.sh start          head + $WORKERS worker nodes
#   ray_config/local_cluster.sh status         which nodes run (exit 0 if the head does)
#   ray_config/local_cluster.sh stop           stop every node this script started
#   ray_config/local_cluster.sh stop-node N    stop worker N (SIGTERM to its raylet; --kill: SIGKILL)
#   ray_config/local_cluster.sh start-node N   start worker N again
#   ray_config/local_cluster.sh env            print the exports a client needs (eval it)
#
# Every node runs in its own session (setsid) with its own --temp-dir under $CLUSTER_DIR, and
# its session id is recorded there: stopping signals only those processes. It never runs
# `ray stop`, which would stop every Ray on the machine, other people's included.
#
# Worker N advertises the custom resource "shardsearch_node_N"; shardsearch pins each shard
# copy to such a node (replicas on other nodes than their primary). The head holds no shards.
# Nodes use 127.0.0.1 (Ray's own servers still bind every interface: token auth, on here, is
# what keeps others out). The dashboard is off.
#
# Settings (environment):
#   CLUSTER_DIR      state, logs and Ray temp dirs  (default ${TMPDIR:-/tmp}/shardsearch-cluster-$USER;
#                    keep it short: Ray's socket paths under it must stay below 108 bytes)
#   RAY_PORT         head (GCS) port                (default 6390)
#   WORKERS          number of worker nodes         (default 2)
#   HEAD_CPUS / WORKER_CPUS                          (default 1 / 1)
#   OBJECT_STORE_MB  object store per node          (default 200)
#   RAY_AUTH_TOKEN   cluster token (default: generated once into $CLUSTER_DIR/auth_token)
set -euo pipefail

CLUSTER_DIR=${CLUSTER_DIR:-${TMPDIR:-/tmp}/shardsearch-cluster-${USER:-$(id -u)}}
RAY_PORT=${RAY_PORT:-6390}
WORKERS=${WORKERS:-2}
HEAD_CPUS=${HEAD_CPUS:-1}
WORKER_CPUS=${WORKER_CPUS:-1}
OBJECT_STORE_MB=${OBJECT_STORE_MB:-200}
RAY=${RAY:-$(command -v ray || true)}
[ -n "$RAY" ] || { echo "ray not found on PATH (activate the venv, or set RAY=)" >&2; exit 1; }
PY=${PYTHON:-$(dirname "$RAY")/python}
[ -x "$PY" ] || PY=$(command -v python3)

export RAY_AUTH_MODE=token RAY_USAGE_STATS_ENABLED=0
mkdir -p "$CLUSTER_DIR"
if [ -z "${RAY_AUTH_TOKEN:-}" ]; then
    if [ ! -s "$CLUSTER_DIR/auth_token" ]; then
        (umask 077; "$PY" -c 'import secrets; print(secrets.token_hex(32))' > "$CLUSTER_DIR/auth_token")
    fi
    RAY_AUTH_TOKEN=$(cat "$CLUSTER_DIR/auth_token")
fi
export RAY_AUTH_TOKEN

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# pids of the processes of one node (its session)
session_pids() { ps -eo pid=,sid=,stat= | awk -v s="$1" '$2 == s && $3 !~ /^Z/ {print $1}'; }
alive() { [ -n "$1" ] && [ -n "$(session_pids "$1")" ]; }
node_sid() { cat "$CLUSTER_DIR/$1.sid" 2>/dev/null || true; }

# start a `ray start ... --block` in a new session; record its session id
launch() {
    local name=$1; shift
    "$PY" - "$CLUSTER_DIR/$name.log" "$@" > "$CLUSTER_DIR/$name.sid" <<'EOF'
import subprocess, sys
log = open(sys.argv[1], "wb")
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                     start_new_session=True)
print(p.pid)
EOF
}

raylet_pid() {   # the raylet of node $1 (a session id)
    local sid=$1
    for p in $(session_pids "$sid"); do
        if [ "$(cat /proc/$p/comm 2>/dev/null)" = "raylet" ]; then echo "$p"; return; fi
    done
}

wait_for() {   # wait_for SECONDS what command...
    local secs=$1 what=$2; shift 2
    local end=$(( $(date +%s) + secs ))
    until "$@" >/dev/null; do
        if [ "$(date +%s)" -ge "$end" ]; then echo "timed out waiting for $what" >&2; return 1; fi
        sleep 0.5
    done
}

# `ray start` said so; a node that died instead fails at once, showing its log
started() {
    grep -q "Ray runtime started" "$CLUSTER_DIR/$1.log" && return 0
    if ! alive "$(node_sid "$1")"; then
        echo "$1 failed to start:" >&2; tail -5 "$CLUSTER_DIR/$1.log" >&2; exit 1
    fi
    return 1
}

start_worker() {
    local i=$1 sid
    sid=$(node_sid "node-$i")
    if alive "$sid"; then echo "node $i already running (session $sid)"; return; fi
    mkdir -p "$CLUSTER_DIR/node-$i"
    launch "node-$i" "$RAY" start --address="127.0.0.1:$RAY_PORT" --node-ip-address=127.0.0.1 \
        --num-cpus="$WORKER_CPUS" --resources="{\"shardsearch_node_$i\": 1000}" \
        --object-store-memory=$((OBJECT_STORE_MB * 1024 * 1024)) \
        --dashboard-agent-listen-port="$(free_port)" --disable-usage-stats \
        --temp-dir="$CLUSTER_DIR/node-$i" --block
}

stop_session() {   # stop_session SID SIGNAL: signal every process of a node, then make sure
    local sid=$1 sig=${2:-TERM} end
    [ -n "$sid" ] || return 0
    for p in $(session_pids "$sid"); do kill -"$sig" "$p" 2>/dev/null || true; done
    end=$(( $(date +%s) + 15 ))
    while alive "$sid" && [ "$(date +%s)" -lt "$end" ]; do sleep 0.3; done
    for p in $(session_pids "$sid"); do kill -KILL "$p" 2>/dev/null || true; done
}

cmd=${1:-}
case "$cmd" in
start)
    if alive "$(node_sid head)"; then echo "already running ($CLUSTER_DIR)"; exit 0; fi
    mkdir -p "$CLUSTER_DIR/head"
    launch head "$RAY" start --head --port="$RAY_PORT" --node-ip-address=127.0.0.1 \
        --num-cpus="$HEAD_CPUS" --object-store-memory=$((OBJECT_STORE_MB * 1024 * 1024)) \
        --include-dashboard=false --dashboard-port="$(free_port)" \
        --dashboard-agent-listen-port="$(free_port)" --ray-client-server-port="$(free_port)" \
        --disable-usage-stats --temp-dir="$CLUSTER_DIR/head" --block
    wait_for 90 "the head node" started head
    for i in $(seq 1 "$WORKERS"); do start_worker "$i"; done
    for i in $(seq 1 "$WORKERS"); do wait_for 90 "node $i" started "node-$i"; done
    echo "ray cluster up: 127.0.0.1:$RAY_PORT, $WORKERS worker nodes ($CLUSTER_DIR)"
    ;;
start-node)
    start_worker "${2:?node number}"
    wait_for 90 "node $2" started "node-$2"
    echo "node $2 up"
    ;;
stop-node)
    sid=$(node_sid "node-${2:?node number}")
    alive "$sid" || { echo "node $2 is not running"; exit 0; }
    sig=TERM; [ "${3:-}" = "--kill" ] && sig=KILL
    pid=$(raylet_pid "$sid")
    [ -n "$pid" ] && kill -"$sig" "$pid" 2>/dev/null || true
    sleep 1
    stop_session "$sid" TERM     # what the raylet leaves behind (workers, log monitor)
    echo "node $2 stopped (raylet $pid, $sig)"
    ;;
stop)
    for f in "$CLUSTER_DIR"/node-*.sid; do
        [ -e "$f" ] && stop_session "$(cat "$f")" TERM
    done
    stop_session "$(node_sid head)" TERM
    echo "stopped ($CLUSTER_DIR)"
    ;;
status)
    rc=1
    for f in "$CLUSTER_DIR"/head.sid "$CLUSTER_DIR"/node-*.sid; do
        [ -e "$f" ] || continue
        name=$(basename "$f" .sid); sid=$(cat "$f")
        if alive "$sid"; then
            echo "$name: running (session $sid, raylet $(raylet_pid "$sid"))"
            [ "$name" = head ] && rc=0
        else
            echo "$name: stopped"
        fi
    done
    exit $rc
    ;;
env)
    echo "export RAY_ADDRESS=127.0.0.1:$RAY_PORT RAY_AUTH_MODE=token RAY_AUTH_TOKEN=$RAY_AUTH_TOKEN"
    ;;
*)
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
