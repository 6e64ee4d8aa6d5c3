#!/bin/bash
# bench/msg-cost.sh: what one message costs the CPUs, for ibmc (with and
# without its lightweight send path) and stock ch4:ofi:
#   send      instructions of one MPI_Send on the sender;
#   recv      instructions on the receiver: MPI_Irecv, plus the MPI_Wait that
#             completes it once the message is there;
#   syscalls  system calls per ping-pong round trip, per rank, by name.
# Instructions are counted by callgrind around the measured calls
# (bench/ibmc_msg_cost.c); system calls by
# `strace -f -c` of the ping-pong at ITERS and at 3 x ITERS round trips, the
# difference divided by 2 x ITERS, so MPI_Init and MPI_Finalize drop out.
#
#   [IBMC_PREFIX=...] [OFI_PREFIX=...] [SIZES="8 256 4096"] [ITERS=1000] \
#   [RECV_ITERS=200] [SIDES="send recv syscalls"] bench/msg-cost.sh
#
# An instruction count does not move with the load of the machine, so this
# compares message paths where the VM's timings cannot (bench/README.md).
# It counts user-space instructions only (MPI, verbs provider, libc): the
# doorbell system call and the kernel (or HCA) work behind it are not in it.
# On a host without an RDMA device it runs inside the Soft-RoCE VM.
#
# Output: markdown tables on stdout; the callgrind, valgrind and strace logs
# under _build/bench/cost-<date>-<time>/.  Needs valgrind and strace
# (apt-get install valgrind strace).
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
top=$(dirname "$here")
self=$here/msg-cost.sh
home=$(getent passwd "$(id -un)" | cut -d: -f6)
cache=${IBMC_CACHE:-${home:-${HOME:-/tmp}}/.cache/ibmc}
msg() { echo "msg-cost: $*" >&2; }
die() { msg "error: $*"; exit 1; }

if [[ -z ${IBMC_IN_VM:-} && -z ${IBMC_BENCH_INNER:-} ]]; then
    IBMC_PREFIX=${IBMC_PREFIX:-$cache/install/ibmc-default}
    OFI_PREFIX=${OFI_PREFIX-$cache/install/stock-ofi}
    SIZES=${SIZES:-8 256 4096}
    ITERS=${ITERS:-1000}
    RECV_ITERS=${RECV_ITERS:-200}
    SIDES=${SIDES:-send recv syscalls}
    [[ $ITERS =~ ^[1-9][0-9]*$ ]] || die "ITERS must be a positive integer (got '$ITERS')"
    [[ $RECV_ITERS =~ ^[1-9][0-9]*$ ]] || die "RECV_ITERS must be a positive integer (got '$RECV_ITERS')"
    for s in $SIZES; do
        [[ $s =~ ^[0-9]+$ ]] || die "SIZES must be byte counts (got '$s')"
    done
    for side in $SIDES; do
        [[ $side =~ ^(send|recv|syscalls)$ ]] || die "SIDES takes send, recv and syscalls (got '$side')"
    done
    [[ " $SIDES " =~ " "(send|recv)" " ]] && ! command -v valgrind >/dev/null &&
        die "valgrind is not installed (apt-get install valgrind)"
    [[ " $SIDES " == *" syscalls "* ]] && ! command -v strace >/dev/null &&
        die "strace is not installed (apt-get install strace)"
    [[ -x $IBMC_PREFIX/bin/mpicc ]] || die "IBMC_PREFIX=$IBMC_PREFIX has no bin/mpicc (build ibmc first)"
    raw=$top/_build/bench/cost-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$raw" || die "cannot create $raw"
    have_ofi=0
    if [[ -n $OFI_PREFIX && -x $OFI_PREFIX/bin/mpicc ]]; then
        have_ofi=1
    else
        msg "no ch4:ofi install at '${OFI_PREFIX}' (maint/build-stock-ofi); no ofi column"
    fi
    "$IBMC_PREFIX/bin/mpicc" -std=c11 -O2 -Wall -o "$raw/msg_cost.ibmc" "$here/ibmc_msg_cost.c" ||
        die "cannot build the benchmark with $IBMC_PREFIX/bin/mpicc"
    if ((have_ofi)); then
        "$OFI_PREFIX/bin/mpicc" -std=c11 -O2 -Wall -o "$raw/msg_cost.ofi" "$here/ibmc_msg_cost.c" ||
            msg "cannot build the benchmark with $OFI_PREFIX/bin/mpicc; no ofi column"
    fi
    inner=(env IBMC_BENCH_INNER=1 IBMC_PREFIX="$IBMC_PREFIX" OFI_PREFIX="$OFI_PREFIX"
           SIZES="$SIZES" ITERS="$ITERS" RECV_ITERS="$RECV_ITERS" SIDES="$SIDES"
           IBMC_BENCH_RAW="$raw" bash "$self")
    if compgen -G '/sys/class/infiniband/*' >/dev/null; then
        "${inner[@]}"
    else
        msg "no RDMA device here: running inside the Soft-RoCE VM (test/vm/run-fabric)"
        "$top/test/vm/run-fabric" "${inner[@]}"
    fi
    exit $?
fi

# ---- on the fabric ----
raw=$IBMC_BENCH_RAW
cd /tmp || exit 1
export MPIR_CVAR_NOLOCAL=1      # two ranks, two nodes: the traffic goes through the netmod
# One run under callgrind; prints the measured instructions per message.
#   send: rank 0's measured_send (MPI_Send), ITERS messages;
#   recv: rank 1's measured_irecv + measured_wait, RECV_ITERS messages.
# The programs dump the counts themselves before MPI_Finalize (part file .1),
# so they survive an MPI that crashes in MPI_Finalize.
count() { # side name prefix size [env...]
    local side=$1 name=$2 prefix=$3 size=$4; shift 4
    local base=$raw/$side-$name-$size bin=$raw/msg_cost.${name%%-*} iters rank n file
    local -a toggles
    if [[ $side == send ]]; then
        iters=$ITERS rank=0 toggles=(--toggle-collect=measured_send)
    else
        iters=$RECV_ITERS rank=1 toggles=(--toggle-collect=measured_irecv --toggle-collect=measured_wait)
    fi
    env "$@" timeout -k 10 1800 "$prefix/bin/mpiexec" -n 2 \
        valgrind --tool=callgrind "${toggles[@]}" \
        --callgrind-out-file="$base.callgrind.%q{PMI_RANK}" --log-file="$base.valgrind.%q{PMI_RANK}" \
        "$bin" "$side" "$size" "$iters" >"$base.out" 2>&1
    local rc=$?
    n=
    file=$base.callgrind.$rank.1
    [[ -f $file ]] && n=$(awk '$1 == "summary:" || $1 == "totals:" { print $2; exit }' "$file")
    # stock ch4:ofi sometimes crashes in MPI_Finalize in this VM, after the
    # counts were dumped and every message was checked: keep those counts
    if ((rc != 0)) && grep -q "$side-cost: $size $iters ok" "$base.out"; then
        msg "$side $name, $size B: exit $rc after the measurement (see $base.out); counts kept"
        rc=0
    fi
    # no instructions at all: callgrind never saw a measured function run
    if ((rc != 0)) || ! grep -q "$side-cost: $size $iters ok" "$base.out" || [[ -z $n || $n == 0 ]]; then
        msg "$side $name, $size B: failed (exit $rc), see $base.out"
        echo "failed"
        return
    fi
    awk -v n="$n" -v i="$iters" 'BEGIN { printf "%.0f\n", n / i }'
}
# System calls per round trip of one rank: the ping-pong under `strace -f -c`
# at ITERS and 3 x ITERS measured round trips; the difference over 2 x ITERS
# leaves what the round trips cost.  Prints "TOTAL (name n, ...)" with every
# call made at least once per 20 round trips.
syscalls() { # name prefix size [env...]
    local name=$1 prefix=$2 size=$3; shift 3
    local bin=$raw/msg_cost.${name%%-*} base=$raw/syscalls-$name-$size it rc
    for it in "$ITERS" $((3 * ITERS)); do
        env "$@" timeout -k 10 900 "$prefix/bin/mpiexec" -n 2 \
            bash -c 'exec strace -f -c -o "$0.$PMI_RANK" "$@"' "$base.$it" "$bin" send "$size" "$it" \
            >"$base.$it.out" 2>&1
        rc=$?
        grep -q "send-cost: $size $it ok" "$base.$it.out" && [[ -s $base.$it.0 ]] || {
            msg "syscalls $name, $size B, $it round trips: failed (exit $rc), see $base.$it.out"
            echo "failed"
            return
        }
        ((rc == 0)) || msg "syscalls $name, $size B: exit $rc after the measurement (see $base.$it.out); counts kept"
    done
    # strace -c rows: % time, seconds, usecs/call, calls, [errors,] syscall
    awk -v a="$ITERS" '
        FNR == 1 { f++ }
        $NF != "total" && $NF != "syscall" && $4 ~ /^[0-9]+$/ { n[f, $NF] = $4; names[$NF] = 1 }
        END {
            tot = 0; out = ""
            for (k in names) {
                d = (n[2, k] - n[1, k]) / (2 * a)
                tot += d
                if (d >= 0.05) out = out sprintf("%s%s %.2f", out == "" ? "" : ", ", k, d)
            }
            printf "%.2f (%s)\n", tot, out
        }' "$base.$ITERS.0" "$base.$((3 * ITERS)).0"
}
ratio() { [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && awk -v a="$1" -v c="$2" 'BEGIN { printf "%.2f", a / c }' || echo "n/a"; }
echo "# $(date -Is), $(uname -r), in_vm=${IBMC_IN_VM:-0}, device $(ls /sys/class/infiniband | head -n1)"
for side in $SIDES; do
    have_ofi=0
    [[ -x $raw/msg_cost.ofi ]] && have_ofi=1
    echo
    case $side in
        send) echo "# instructions per MPI_Send on the sender (callgrind, rank 0, $ITERS sends after 200 warm-up round trips)" ;;
        recv) echo "# instructions per received message on the receiver: MPI_Irecv, then MPI_Wait once the message is there"
              echo "# (callgrind, rank 1, $RECV_ITERS messages after 50 warm-up ones)" ;;
        syscalls) echo "# system calls per round trip on rank 0 (one send, one receive; strace -f -c, $ITERS and $((3 * ITERS)) round trips)" ;;
    esac
    echo
    if [[ $side == syscalls ]]; then
        echo "| size (B) | ibmc | ibmc, MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0 | ofi (verbs;ofi_rxm) |"
        echo "|---:|---|---|---|"
    else
        echo "| size (B) | ibmc | ibmc, MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0 | ofi (verbs;ofi_rxm) | ibmc/ofi |"
        echo "|---:|---:|---:|---:|---:|"
    fi
    for s in $SIZES; do
        if [[ $side == syscalls ]]; then
            a=$(syscalls ibmc "$IBMC_PREFIX" "$s")
            b=$(syscalls ibmc-nolw "$IBMC_PREFIX" "$s" MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0)
            c="n/a"
            ((have_ofi)) && c=$(syscalls ofi "$OFI_PREFIX" "$s" FI_PROVIDER="verbs;ofi_rxm" FI_UNIVERSE_SIZE=64)
            echo "| $s | $a | $b | $c |"
            continue
        fi
        a=$(count "$side" ibmc "$IBMC_PREFIX" "$s")
        b=$(count "$side" ibmc-nolw "$IBMC_PREFIX" "$s" MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0)
        c="n/a"
        ((have_ofi)) && c=$(count "$side" ofi "$OFI_PREFIX" "$s" FI_PROVIDER="verbs;ofi_rxm" FI_UNIVERSE_SIZE=64)
        echo "| $s | $a | $b | $c | $(ratio "$a" "$c") |"
    done
done | tee "$raw/table.md"
