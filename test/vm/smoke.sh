#!/bin/bash
# smoke.sh - does the RDMA fabric work end to end, with the stock tools?
#
# Exercises every transport feature the ibmc netmod relies on - RC and UD
# verbs, SRQ, RDMA write/read, atomics, rdma_cm (RC and UD) and UD multicast
# through rdma_join_multicast() - plus the host facts MPICH needs (resolvable
# hostname, usable /dev/shm).  Run it on a real fabric, or anywhere through
# run-fabric (which uses the Soft-RoCE VM when the host has no RDMA device):
#
#     test/vm/run-fabric test/vm/smoke.sh
#
# Output: one "ok: NAME ..." or "FAIL: NAME ..." line per check (a failing
# check is followed by the tail of its logs, indented), then a last line
# "N passed, N failed".  Exit status 0 only if every check passed.
#
# Environment:
#   IBMC_FABRIC_DEV        RDMA device (first one in /sys/class/infiniband)
#   IBMC_FABRIC_IP         IPv4 address on that device (found from its GIDs/netdev)
#   IBMC_FABRIC_GID_INDEX  GID index for verbs tools (the RoCEv2 IPv4 GID; 0 on IB)
#   IBMC_SMOKE_ITERS       iterations per test (200; keep small under emulation)
#   IBMC_SMOKE_TIMEOUT     seconds allowed per process (120)
#   IBMC_SMOKE_PORT        first TCP/rdma_cm port to use (18600)
set -u

ITERS=${IBMC_SMOKE_ITERS:-200}
TMO=${IBMC_SMOKE_TIMEOUT:-120}
PORT=${IBMC_SMOKE_PORT:-18600}
MCAST_RECEIVERS=4

passed=0 failed=0
logs=$(mktemp -d -t ibmc-smoke.XXXXXX) || { echo "FAIL: setup (mktemp)"; echo "0 passed, 1 failed"; exit 1; }
trap 'rm -rf "$logs"' EXIT

now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }

ok() { echo "ok: $*"; passed=$((passed + 1)); }

# fail MSG [LOG...]: the log tails are what make a CI failure diagnosable.
fail() {
    echo "FAIL: $1"
    failed=$((failed + 1))
    shift
    local f
    for f; do
        [[ -s $f ]] || continue
        echo "    --- ${f##*/} (last lines)"
        tail -n 12 "$f" | sed 's/^/    /'
    done
}

finish() {
    echo "$passed passed, $failed failed"
    ((failed == 0))
    exit
}

# --- Which device, address and GID ------------------------------------------

# RoCE needs the GID that carries our IPv4 address (RoCEv2, ::ffff:a.b.c.d);
# IB is happy with GID 0 and gets the address from its IPoIB netdev.
find_fabric() {
    DEV=${IBMC_FABRIC_DEV:-$(ls /sys/class/infiniband 2>/dev/null | head -n1)}
    [[ $DEV && -d /sys/class/infiniband/$DEV ]] || return 1
    local port=/sys/class/infiniband/$DEV/ports/1 g i gid
    LINK=$(cat "$port/link_layer" 2>/dev/null)
    GID=${IBMC_FABRIC_GID_INDEX:-} IP=${IBMC_FABRIC_IP:-}
    if [[ $LINK == Ethernet ]]; then
        for g in "$port"/gids/*; do
            i=${g##*/}
            gid=$(cat "$g" 2>/dev/null) || continue
            [[ $gid == 0000:0000:0000:0000:0000:ffff:* ]] || continue
            [[ $(cat "$port/gid_attrs/types/$i" 2>/dev/null) == "RoCE v2" ]] || continue
            local h=${gid//:/}
            local a
            a=$(printf '%d.%d.%d.%d' 0x${h:24:2} 0x${h:26:2} 0x${h:28:2} 0x${h:30:2})
            [[ $IP && $IP != "$a" ]] && continue
            : "${GID:=$i}" "${IP:=$a}"
            break
        done
    else
        : "${GID:=0}"
        if [[ -z $IP ]]; then
            local ndev
            ndev=$(rdma link show "$DEV/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
            [[ $ndev ]] && IP=$(ip -4 -o addr show dev "$ndev" | awk '{ sub("/.*", "", $4); print $4; exit }')
        fi
    fi
    [[ $GID && $IP ]]
}

# --- Running a server/client pair -------------------------------------------

# ready PID KIND ARG: wait until the server can take a client, or has died.
# Fixed sleeps are either slow or flaky on an emulated, oversubscribed host.
ready() {
    local pid=$1 kind=$2 arg=$3 deadline=$((SECONDS + 60))
    while ((SECONDS < deadline)); do
        kill -0 "$pid" 2>/dev/null || return 1
        case $kind in
            tcp) [[ $(ss -Hltn "sport = :$arg" 2>/dev/null) ]] && return 0 ;;
            cm) rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [^ ]*:$arg " && return 0 ;;
            log) grep -q "${arg#*:}" "${arg%%:*}" 2>/dev/null && return 0 ;;
        esac
        sleep 0.1
    done
    return 1
}

# pair NAME KIND PORT: run the server in array S, wait for it, run the
# client in array C; both must exit 0.  DETAIL (a function name, optional)
# turns the client log into a short summary.
pair() {
    local name=$1 kind=$2 port=$3 t0 slog=$logs/$1.server clog=$logs/$1.client
    t0=$(now)
    timeout "$TMO" "${S[@]}" >"$slog" 2>&1 &
    local spid=$!
    if ! ready "$spid" "$kind" "$port"; then
        kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
        fail "$name (server exited or never started listening)" "$slog"
        return
    fi
    timeout "$TMO" "${C[@]}" >"$clog" 2>&1
    local crc=$?
    # A failed client can leave the server waiting forever; do not wait it out.
    ((crc != 0)) && kill "$spid" 2>/dev/null
    wait "$spid"
    local src=$?
    if ((crc == 0 && src == 0)); then
        ok "$name ($(since "$t0")$(${DETAIL:-:} "$clog"))"
    else
        fail "$name (client rc=$crc, server rc=$src)" "$slog" "$clog"
    fi
    DETAIL=
}

pingpong_detail() { awk '/usec\/iter/ { printf ", %s usec/iter", $(NF-1); exit }' "$1"; }
# perftest rows: bytes iterations t_min t_max t_typical ...  /  bytes iters BW_peak BW_avg ...
lat_detail() { awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 6 { printf ", t_typical %s us", $5; exit }' "$1"; }
bw_detail() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { printf ", %s B msgs, %s MB/s avg", $1, $4; exit }' "$1"; }

# --- Checks -----------------------------------------------------------------

if ! find_fabric; then
    fail "fabric: no usable RDMA device/address (device '${DEV:-none}', gid '${GID:-?}', ip '${IP:-?}')"
    finish
fi
echo "smoke: device $DEV port 1 ($LINK), GID index $GID, address $IP, $ITERS iterations"

if ibv_devinfo -d "$DEV" -i 1 >"$logs/devinfo" 2>&1 && grep -q 'PORT_ACTIVE' "$logs/devinfo"; then
    ok "device $DEV port 1 is PORT_ACTIVE ($(awk '/active_mtu/ { print "active_mtu " $2; exit }' "$logs/devinfo"))"
else
    fail "device $DEV port 1 is not PORT_ACTIVE" "$logs/devinfo"
fi

# MPICH's hydra resolves the local hostname, and its shm transport needs
# /dev/shm; both are environment facts worth a line when MPI jobs fail.
if h=$(getent hosts "$(hostname)"); then
    ok "hostname $(hostname) resolves ($(echo $h | cut -d' ' -f1))"
else
    fail "hostname $(hostname) does not resolve (mpiexec will fail)"
fi
if f=$(mktemp /dev/shm/ibmc-smoke.XXXXXX 2>/dev/null) && rm -f "$f"; then
    ok "/dev/shm writable ($(df -h --output=size /dev/shm | tail -n1 | tr -d ' '))"
else
    fail "/dev/shm is not writable"
fi

p=$PORT
S=(ibv_rc_pingpong -d "$DEV" -g "$GID" -n "$ITERS" -p "$p")
C=("${S[@]}" "$IP"); DETAIL=pingpong_detail; pair rc_pingpong tcp $p

p=$((p + 1))
S=(ibv_ud_pingpong -d "$DEV" -g "$GID" -n "$ITERS" -s 512 -p "$p")
C=("${S[@]}" "$IP"); DETAIL=pingpong_detail; pair ud_pingpong tcp $p

p=$((p + 1))
S=(ibv_srq_pingpong -d "$DEV" -g "$GID" -n "$ITERS" -q 4 -p "$p")
C=("${S[@]}" "$IP"); DETAIL=pingpong_detail; pair srq_pingpong tcp $p

# rdma_cm: connection setup, RC with RDMA read/write (rping), several RC
# connections (ucmatose) and UD address resolution (udaddy, which has no
# port option: it always listens on 7174).
p=$((p + 1))
S=(rping -s -a "$IP" -p "$p" -C 50)
C=(rping -c -a "$IP" -p "$p" -C 50); pair rping cm $p

p=$((p + 1))
S=(ucmatose -b "$IP" -p "$p" -c 4 -C 20)
C=(ucmatose -s "$IP" -p "$p" -c 4 -C 20); pair ucmatose cm $p

S=(udaddy -b "$IP" -c 4 -C 20)
C=(udaddy -s "$IP" -c 4 -C 20); pair udaddy cm 7174

# perftest over the verbs path (-x GID index); -F: the CPU frequency check is
# meaningless in a guest and only warns elsewhere.
for t in ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat; do
    p=$((p + 1))
    S=("$t" -d "$DEV" -x "$GID" -F -n "$ITERS" -p "$p")
    C=("${S[@]}" "$IP"); DETAIL=lat_detail; pair "$t" tcp $p
done
# Messages far above the MTU: segmentation and reassembly on the wire.
p=$((p + 1))
S=(ib_write_bw -d "$DEV" -x "$GID" -F -n "$ITERS" -s 65536 -p "$p")
C=("${S[@]}" "$IP"); DETAIL=bw_detail; pair ib_write_bw tcp $p

# UD multicast, one sender to several receivers, joined the way real fabrics
# do it (rdma_join_multicast).  Each receiver exits 0 only once it has every
# message, so a loss shows up as a timeout.
mcast_check() {
    local group=239.1.2.3 n=$ITERS i t0 bad=() pids=() rc
    t0=$(now)
    # Line-buffered, so "joined" shows up in the log when it happens.
    for ((i = 1; i <= MCAST_RECEIVERS; i++)); do
        timeout "$TMO" stdbuf -oL mckey -m $group -b "$IP" -C "$n" >"$logs/mckey.recv$i" 2>&1 &
        pids+=($!)
    done
    for ((i = 1; i <= MCAST_RECEIVERS; i++)); do
        ready "${pids[i - 1]}" log "$logs/mckey.recv$i:joined" || bad+=("receiver $i did not join")
    done
    if ((${#bad[@]})); then
        kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null
        fail "mckey (${bad[*]})" "$logs"/mckey.recv*
        return
    fi
    timeout "$TMO" mckey -m $group -b "$IP" -s -C "$n" >"$logs/mckey.send" 2>&1
    rc=$?
    ((rc != 0)) && { bad+=("sender rc=$rc"); kill "${pids[@]}" 2>/dev/null; }
    for ((i = 1; i <= MCAST_RECEIVERS; i++)); do
        wait "${pids[i - 1]}" || bad+=("receiver $i rc=$?")
    done
    if ((${#bad[@]})); then
        fail "mckey ($(IFS=,; echo "${bad[*]}"))" "$logs/mckey.send" "$logs"/mckey.recv*
    else
        ok "mckey ($(since "$t0"), 1 sender -> $MCAST_RECEIVERS receivers, $n/$n messages each)"
    fi
}
mcast_check

finish
