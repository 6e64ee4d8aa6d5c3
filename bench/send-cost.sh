#!/bin/bash
# bench/send-cost.sh: instructions one MPI_Send costs the sending CPU, for
# ibmc (with and without its lightweight send path) and stock ch4:ofi, counted
# by callgrind around rank 0's MPI_Send calls (bench/ibmc_send_cost.c).
#
#   [IBMC_PREFIX=...] [OFI_PREFIX=...] [SIZES="8 256 4096"] [ITERS=1000] bench/send-cost.sh
#
# An instruction count does not move with the load of the machine, so this
# compares send paths where the VM's timings cannot (doc/benchmarks.md).  It
# counts user-space instructions only (MPI, verbs provider, libc): the
# doorbell system call and the kernel (or HCA) work behind it are not in it.
# On a host without an RDMA device it runs inside the Soft-RoCE VM.
#
# Output: a markdown table on stdout; the callgrind and valgrind logs under
# _build/bench/cost-<date>-<time>/.  Needs valgrind (apt-get install valgrind).
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
top=$(dirname "$here")
self=$here/send-cost.sh
home=$(getent passwd "$(id -un)" | cut -d: -f6)
cache=${IBMC_CACHE:-${home:-${HOME:-/tmp}}/.cache/ibmc}
msg() { echo "send-cost: $*" >&2; }
die() { msg "error: $*"; exit 1; }

if [[ -z ${IBMC_IN_VM:-} && -z ${IBMC_BENCH_INNER:-} ]]; then
    IBMC_PREFIX=${IBMC_PREFIX:-$cache/install/ibmc-default}
    OFI_PREFIX=${OFI_PREFIX-$cache/install/stock-ofi}
    SIZES=${SIZES:-8 256 4096}
    ITERS=${ITERS:-1000}
    [[ $ITERS =~ ^[1-9][0-9]*$ ]] || die "ITERS must be a positive integer (got '$ITERS')"
    for s in $SIZES; do
        [[ $s =~ ^[0-9]+$ ]] || die "SIZES must be byte counts (got '$s')"
    done
    command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"
    [[ -x $IBMC_PREFIX/bin/mpicc ]] || die "IBMC_PREFIX=$IBMC_PREFIX has no bin/mpicc (build ibmc first)"
    raw=$top/_build/bench/cost-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$raw" || die "cannot create $raw"
    "$IBMC_PREFIX/bin/mpicc" -std=c11 -O2 -Wall -o "$raw/send_cost.ibmc" "$here/ibmc_send_cost.c" ||
        die "cannot build the benchmark with $IBMC_PREFIX/bin/mpicc"
    if [[ -n $OFI_PREFIX && -x $OFI_PREFIX/bin/mpicc ]]; then
        "$OFI_PREFIX/bin/mpicc" -std=c11 -O2 -Wall -o "$raw/send_cost.ofi" "$here/ibmc_send_cost.c" ||
            msg "cannot build the benchmark with $OFI_PREFIX/bin/mpicc; no ofi column"
    else
        msg "no ch4:ofi install at '${OFI_PREFIX}' (maint/build-stock-ofi); no ofi column"
    fi
    inner=(env IBMC_BENCH_INNER=1 IBMC_PREFIX="$IBMC_PREFIX" OFI_PREFIX="$OFI_PREFIX"
           SIZES="$SIZES" ITERS="$ITERS" IBMC_BENCH_RAW="$raw" bash "$self")
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
# One run under callgrind; prints instructions per measured MPI_Send of rank 0.
count() { # name prefix bin size [env...]
    local name=$1 prefix=$2 bin=$3 size=$4; shift 4
    local base=$raw/$name-$size
    env "$@" timeout -k 10 900 "$prefix/bin/mpiexec" -n 2 \
        valgrind --tool=callgrind --toggle-collect=measured_send \
        --callgrind-out-file="$base.callgrind.%q{PMI_RANK}" --log-file="$base.valgrind.%q{PMI_RANK}" \
        "$bin" "$size" "$ITERS" >"$base.out" 2>&1
    local rc=$? n
    n=$(grep -Eo 'Collected : [0-9]+' "$base.valgrind.0" 2>/dev/null | grep -Eo '[0-9]+$')
    # no instructions at all: callgrind never saw measured_send run
    if ((rc != 0)) || ! grep -q "send-cost: $size $ITERS ok" "$base.out" || [[ -z $n || $n == 0 ]]; then
        msg "$name, $size B: failed (exit $rc), see $base.out"
        echo "failed"
        return
    fi
    awk -v n="$n" -v i="$ITERS" 'BEGIN { printf "%.0f\n", n / i }'
}
have_ofi=0
[[ -x $raw/send_cost.ofi ]] && have_ofi=1
{
echo "# instructions per MPI_Send on the sender (callgrind, rank 0, $ITERS sends after 200 warm-up round trips)"
echo "# $(date -Is), $(uname -r), in_vm=${IBMC_IN_VM:-0}, device $(ls /sys/class/infiniband | head -n1)"
echo
echo "| size (B) | ibmc | ibmc, MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0 | ofi (verbs;ofi_rxm) | ibmc/ofi |"
echo "|---:|---:|---:|---:|---:|"
for s in $SIZES; do
    a=$(count ibmc "$IBMC_PREFIX" "$raw/send_cost.ibmc" "$s")
    b=$(count ibmc-nolw "$IBMC_PREFIX" "$raw/send_cost.ibmc" "$s" MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0)
    c="n/a" r="n/a"
    if ((have_ofi)); then
        c=$(count ofi "$OFI_PREFIX" "$raw/send_cost.ofi" "$s" FI_PROVIDER="verbs;ofi_rxm" FI_UNIVERSE_SIZE=64)
        [[ $a =~ ^[0-9]+$ && $c =~ ^[0-9]+$ ]] && r=$(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.2f", a / c }')
    fi
    echo "| $s | $a | $b | $c | $r |"
done
} | tee "$raw/table.md"
