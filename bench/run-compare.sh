#!/bin/bash
# bench/run-compare.sh: point-to-point latency and bandwidth of ibmc, of stock
# MPICH ch4:ofi (libfabric verbs;ofi_rxm) and of raw verbs (perftest) on the
# same RDMA device, in one go, with a markdown table of the medians.
#
#   IBMC_PREFIX=/path/to/ibmc-install [OFI_PREFIX=/path/to/stock-ofi] [REPS=3] bench/run-compare.sh
#
# On a host without an RDMA device it re-runs itself inside the project's
# Soft-RoCE VM (test/vm/run-fabric): one boot for the whole comparison.
#
# Inputs (environment):
#   IBMC_PREFIX  MPICH built with ch4:ibmc (default $IBMC_CACHE/install/ibmc-default)
#   OFI_PREFIX   stock MPICH with ch4:ofi (default $IBMC_CACHE/install/stock-ofi,
#                see maint/build-stock-ofi); empty or missing: the table says
#                "not available" and why
#   REPS         repetitions of everything (3); the table shows per-size medians
#   IBMC_BENCH_TIMEOUT  seconds allowed for one MPI test run (900)
#   IBMC_BENCH_TESTS    which of "latency bw bibw" to run (all three); perftest
#                       runs ib_send_lat for latency, ib_write_bw and
#                       ib_read_bw for bw or bibw
#   IBMC_BENCH_DEV      RDMA device for perftest (first in /sys/class/infiniband)
#   IBMC_BENCH_PT_LAT_ITERS, IBMC_BENCH_PT_BW_ITERS  perftest -n (10, 16)
#   IBMC_BENCH_FI_UNIVERSE_SIZE  FI_UNIVERSE_SIZE for the ofi runs (64; see bench/README.md)
#   IBMC_BENCH_BIND     hydra -bind-to for both MPIs (none), e.g. core; then perftest's
#                       server and client are pinned to CPUs 0 and 1; "none"
#                       binds nothing
#
# Output: the table on stdout; every raw output, the failures and the table
# (summary.md) under _build/bench/raw-<date>/.  Exit status 0 when the table
# was produced (failures of individual runs are reported in it), else 1.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
top=$(dirname "$here")
self=$here/run-compare.sh
# The VM sets HOME=/tmp, so take the account's home directory, not $HOME.
home=$(getent passwd "$(id -un)" | cut -d: -f6)
cache=${IBMC_CACHE:-${home:-${HOME:-/tmp}}/.cache/ibmc}

msg() { echo "run-compare: $*" >&2; }
die() { msg "error: $*"; exit 1; }

have_rdma() { compgen -G '/sys/class/infiniband/*' >/dev/null; }

# ---------------------------------------------------------------------------
# Build the benchmark with one MPI's mpicc, unless an up-to-date binary is
# there (the stamp names the source and the prefix).  Prints the binary path.
build_bench() { # name prefix
    local name=$1 prefix=$2 bin stamp want
    bin=$top/_build/bench/ibmc_pt2pt_bench.$name
    stamp=$bin.stamp
    want=$( { sha256sum <"$here/ibmc_pt2pt_bench.c"; echo "$prefix"; ls -l --time-style=+%s "$prefix/bin/mpicc"; } |
            sha256sum | cut -c1-16)
    if [[ -x $bin && -f $stamp && $(cat "$stamp") == "$want" ]]; then
        echo "$bin"; return 0
    fi
    mkdir -p "$top/_build/bench" || return 1
    rm -f "$stamp"
    "$prefix/bin/mpicc" -std=c11 -O2 -Wall -o "$bin" "$here/ibmc_pt2pt_bench.c" >&2 || return 1
    echo "$want" >"$stamp"
    echo "$bin"
}

# ---------------------------------------------------------------------------
# Host side: resolve the inputs, build what can be built here, then go to
# the fabric (directly when this host has a device).

if [[ -z ${IBMC_IN_VM:-} && -z ${IBMC_BENCH_INNER:-} ]]; then
    IBMC_PREFIX=${IBMC_PREFIX:-$cache/install/ibmc-default}
    OFI_PREFIX=${OFI_PREFIX-$cache/install/stock-ofi}
    REPS=${REPS:-3}
    [[ $REPS =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer (got '$REPS')"
    [[ -x $IBMC_PREFIX/bin/mpicc ]] || die "IBMC_PREFIX=$IBMC_PREFIX has no bin/mpicc (build ibmc first, or set IBMC_PREFIX)"
    IBMC_PREFIX=$(cd "$IBMC_PREFIX" && pwd)
    [[ -n $OFI_PREFIX && -d $OFI_PREFIX ]] && OFI_PREFIX=$(cd "$OFI_PREFIX" && pwd)
    raw=${IBMC_BENCH_RAW:-$top/_build/bench/raw-$(date +%Y%m%d-%H%M%S)}
    mkdir -p "$raw" || die "cannot create $raw"
    # Compile here (fast) so the VM does not have to; the VM side rebuilds only
    # if the stamp is stale.  Failures are left for the fabric side to record.
    build_bench ibmc "$IBMC_PREFIX" >/dev/null 2>&1
    ofi_note=
    if [[ -n $OFI_PREFIX && -f $OFI_PREFIX/.ibmc-key && -x $OFI_PREFIX/bin/mpicc ]]; then
        build_bench ofi "$OFI_PREFIX" >/dev/null 2>&1
    elif [[ -n $OFI_PREFIX && $OFI_PREFIX == "$cache/install/stock-ofi" ]]; then
        # maint/build-stock-ofi's log says why the install is not there.
        for log in "$cache"/build/stock-ofi/mpich-*/make.out "$cache"/build/stock-ofi/mpich-*/configure.out; do
            [[ -f $log ]] || continue
            why=$(grep -E 'error:|Error [0-9]|cannot find -l|No such file' "$log" | head -n 4)
            [[ $why ]] && ofi_note="maint/build-stock-ofi failed, $log says: $why" && break
        done
    fi
    cd "$top" || die "cannot enter $top"
    t0=$(date +%s)
    msg "raw outputs in $raw"
    # Only IBMC_*/MPIR_CVAR_* cross into the VM on their own, hence env.
    inner=(env IBMC_BENCH_INNER=1 IBMC_PREFIX="$IBMC_PREFIX" OFI_PREFIX="$OFI_PREFIX"
           IBMC_BENCH_OFI_NOTE="$ofi_note"
           REPS="$REPS" IBMC_BENCH_RAW="$raw" bash "$self")
    if have_rdma; then
        "${inner[@]}"
    else
        msg "no RDMA device here: running inside the Soft-RoCE VM (test/vm/run-fabric)"
        "$top/test/vm/run-fabric" "${inner[@]}"
    fi
    rc=$?
    echo "$(( $(date +%s) - t0 ))" >"$raw/wall-seconds"
    msg "finished in $(( $(date +%s) - t0 )) s (exit $rc); raw outputs in $raw"
    exit $rc
fi

# ---------------------------------------------------------------------------
# Fabric side (inside the VM, or on a host with a device).

cd "$top" || die "cannot enter $top"
IBMC_PREFIX=${IBMC_PREFIX:-$cache/install/ibmc-default}
OFI_PREFIX=${OFI_PREFIX-$cache/install/stock-ofi}
REPS=${REPS:-3}
raw=${IBMC_BENCH_RAW:-$top/_build/bench/raw-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$raw" || die "cannot create $raw"
timeout_s=${IBMC_BENCH_TIMEOUT:-900}
# Unbound by default.  Unbound runs on the 2-CPU VM were bimodal; binding
# the ranks one per core (and perftest's sides to CPUs 0 and 1) did not
# remove that for the MPIs and made their latency worse, while Soft-RoCE's
# kernel work shares the same two CPUs (2026-11-24, commit 60ab5f9).
bind=${IBMC_BENCH_BIND-none}
[[ $bind == none ]] && bind=
read -ra tests <<<"${IBMC_BENCH_TESTS:-latency bw bibw}"
((${#tests[@]})) || die "IBMC_BENCH_TESTS is empty"
for t in "${tests[@]}"; do
    [[ $t =~ ^(latency|bw|bibw)$ ]] || die "IBMC_BENCH_TESTS takes latency, bw and bibw (got '$t')"
done
T0=$(date +%s)

have_rdma || die "no RDMA device in /sys/class/infiniband (the Soft-RoCE setup failed?)"
dev=${IBMC_BENCH_DEV:-$(ls /sys/class/infiniband | head -n1)}

# perftest on RoCE needs a GID index: the first RoCE v2 IPv4-mapped GID of
# port 1 (on rxe over 10.77.0.1 that is index 1).  None on InfiniBand.
# The table has hundreds of entries, mostly zero: read them with builtins
# (a fork per entry costs minutes under emulation).
gids=() gid_types=()
for g in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
    v=; read -r v <"$g" 2>/dev/null
    [[ -z $v || $v == 0000:0000:0000:0000:0000:0000:0000:0000 ]] && continue
    i=${g##*/} ty=
    read -r ty <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null
    gids[i]=$v gid_types[i]=$ty
done
gid_index=
for i in "${!gids[@]}"; do
    [[ ${gids[i]} == 0000:0000:0000:0000:0000:ffff:* && ${gid_types[i]} == "RoCE v2" ]] || continue
    gid_index=$i; break
done

{
    echo "date: $(date -Is)"
    echo "host: $(uname -n) $(uname -r) in_vm=${IBMC_IN_VM:-0} cpus=$(nproc) vm_cpu=${IBMC_VM_CPU:-max}"
    # with PCLMULQDQ the kernel's RoCE ICRC of long payloads runs in FPU
    # sections, which cost microseconds under emulation (2026-11-23, commit 3a7eb98)
    echo "pclmulqdq: $(grep -qw pclmulqdq /proc/cpuinfo && echo yes || echo no)"
    echo "reps: $REPS"
    echo "tests: ${tests[*]}"
    echo "binding: ${bind:-none} (MPI: mpiexec -bind-to; perftest: taskset -c 0 / -c 1)"
    echo "ibmc prefix: $IBMC_PREFIX"
    echo "ofi prefix: ${OFI_PREFIX:-<none>}"
    echo "device: $dev gid_index: ${gid_index:-<none>}"
    echo "perftest: $(ib_send_lat -V 2>/dev/null | tail -n1)"
    ibv_devinfo -d "$dev" 2>&1 | grep -E 'hca_id|transport|active_mtu|state|link_layer'
    for i in "${!gids[@]}"; do echo "gid $i: ${gids[i]} ${gid_types[i]}"; done
} >"$raw/env.txt" 2>&1

# Record why a whole implementation has no numbers.
unavailable() { # impl text
    printf '%s\n' "$2" >"$raw/$1.unavailable"
    msg "$1: $2"
}

# One MPI test run; numbers in $raw/<impl>-<test>-rep<r>.out, stderr in .err,
# and on failure a .failed file with the exit status and the end of stderr.
run_mpi() { # impl prefix bin rep test [env...]
    local impl=$1 prefix=$2 bin=$3 rep=$4 t=$5; shift 5
    local base=$raw/$impl-$t-rep$rep s rc
    s=$(date +%s)
    env MPIR_CVAR_NOLOCAL=1 "$@" timeout -k 10 "$timeout_s" \
        "$prefix/bin/mpiexec" ${bind:+-bind-to "$bind"} -n 2 "$bin" "$t" >"$base.out" 2>"$base.err"
    rc=$?
    echo "$(( $(date +%s) - s ))" >"$base.seconds"
    if ((rc != 0)); then
        { echo "exit status $rc$( ((rc == 124)) && echo " (timed out after ${timeout_s} s)")"
          grep -v '^\s*$' "$base.err" | tail -n 15; } >"$base.failed"
        msg "$impl $t rep $rep: FAILED (exit $rc), see $base.err"
    else
        msg "$impl $t rep $rep: $(( $(date +%s) - s )) s"
    fi
    return $rc
}

# perftest: server in the background, client retried until the server
# listens.  Output in $raw/perftest-<tool>-rep<r>.{out,server}.
run_perftest() { # tool rep index args...
    local tool=$1 rep=$2 idx=$3; shift 3
    local base=$raw/perftest-$tool-rep$rep s rc=1 try spid
    # A fresh TCP port for every run, so a lingering socket cannot interfere.
    local common=(-d "$dev" -F -p $((18515 + rep * 10 + idx)) "$@")
    [[ $gid_index ]] && common+=(-x "$gid_index")
    # pinned like the MPI ranks: server on CPU 0, client on CPU 1
    local pin_s=() pin_c=()
    [[ $bind ]] && pin_s=(taskset -c 0) pin_c=(taskset -c 1)
    s=$(date +%s)
    echo "server: ${pin_s[*]} $tool ${common[*]}; client: ${pin_c[*]} $tool ${common[*]} 127.0.0.1" >"$base.cmd"
    timeout -k 5 "$timeout_s" "${pin_s[@]}" "$tool" "${common[@]}" >"$base.server" 2>&1 &
    spid=$!
    for ((try = 1; try <= 40; try++)); do
        sleep 0.25
        kill -0 "$spid" 2>/dev/null || break          # server gave up
        timeout -k 5 "$timeout_s" "${pin_c[@]}" "$tool" "${common[@]}" 127.0.0.1 >"$base.out" 2>&1 && { rc=0; break; }
        # "Couldn't connect" means the server is not listening yet; anything
        # else after a connection is a real failure.
        grep -q "Couldn't connect\|Unable to open connection\|Connection refused" "$base.out" || { rc=1; break; }
    done
    wait "$spid"; local src=$?
    echo "$(( $(date +%s) - s ))" >"$base.seconds"
    if ((rc != 0 || src != 0)); then
        { echo "client exit $rc after $try tries, server exit $src"
          grep -v '^\s*$' "$base.out" | tail -n 10
          echo "--- server:"; grep -v '^\s*$' "$base.server" | tail -n 10; } >"$base.failed"
        msg "perftest $tool rep $rep: FAILED, see $base.out / $base.server"
    else
        msg "perftest $tool rep $rep: $(( $(date +%s) - s )) s"
    fi
}

# Binaries.
ibmc_bin=
if [[ ! -x $IBMC_PREFIX/bin/mpicc ]]; then
    unavailable ibmc "not available: $IBMC_PREFIX/bin/mpicc does not exist"
elif ! ibmc_bin=$(build_bench ibmc "$IBMC_PREFIX" 2>"$raw/ibmc-build.err"); then
    unavailable ibmc "not available: compiling with $IBMC_PREFIX/bin/mpicc failed: $(tail -n 5 "$raw/ibmc-build.err")"
    ibmc_bin=
fi
ofi_bin=
if [[ -z $OFI_PREFIX ]]; then
    unavailable ofi "not available: OFI_PREFIX is empty"
elif [[ ! -f $OFI_PREFIX/.ibmc-key || ! -x $OFI_PREFIX/bin/mpicc ]]; then
    unavailable ofi "not available: $OFI_PREFIX is not a finished install (no .ibmc-key or bin/mpicc)${IBMC_BENCH_OFI_NOTE:+; $IBMC_BENCH_OFI_NOTE}"
elif ! ofi_bin=$(build_bench ofi "$OFI_PREFIX" 2>"$raw/ofi-build.err"); then
    unavailable ofi "not available: compiling with $OFI_PREFIX/bin/mpicc failed: $(tail -n 5 "$raw/ofi-build.err")"
    ofi_bin=
fi
[[ $ofi_bin ]] && fi_info -p verbs >"$raw/ofi-fi_info-verbs.txt" 2>&1

# perftest iteration counts (-a sweeps 2 B .. 8 MiB with the same count for
# every size, so the counts are kept small for the emulated fabric).
PT_LAT_ITERS=${IBMC_BENCH_PT_LAT_ITERS:-10}
PT_BW_ITERS=${IBMC_BENCH_PT_BW_ITERS:-16}

ofi_dead=
for ((rep = 1; rep <= REPS; rep++)); do
    msg "=== rep $rep of $REPS ($(( $(date +%s) - T0 )) s so far)"
    if [[ $ibmc_bin ]]; then
        for t in "${tests[@]}"; do run_mpi ibmc "$IBMC_PREFIX" "$ibmc_bin" "$rep" "$t"; done
    fi
    if [[ $ofi_bin ]]; then
        for t in "${tests[@]}"; do
            # A run that failed without printing a single size (the provider
            # did not come up) will fail the same way again: record it once.
            if [[ $ofi_dead ]]; then
                echo "skipped: an earlier ofi run failed before printing any result ($ofi_dead)" \
                    >"$raw/ofi-$t-rep$rep.skipped"
                continue
            fi
            run_mpi ofi "$OFI_PREFIX" "$ofi_bin" "$rep" "$t" FI_PROVIDER='verbs;ofi_rxm' \
                FI_UNIVERSE_SIZE="${IBMC_BENCH_FI_UNIVERSE_SIZE:-64}" ||
                grep -q '^[0-9]' "$raw/ofi-$t-rep$rep.out" || ofi_dead="ofi-$t-rep$rep"
        done
    fi
    [[ " ${tests[*]} " == *" latency "* ]] && run_perftest ib_send_lat "$rep" 1 -a -n "$PT_LAT_ITERS"
    if [[ " ${tests[*]} " =~ " "(bw|bibw)" " ]]; then
        run_perftest ib_write_bw "$rep" 2 -a -n "$PT_BW_ITERS"
        run_perftest ib_read_bw "$rep" 3 -a -n "$PT_BW_ITERS"
    fi
done
echo "$(( $(date +%s) - T0 ))" >"$raw/fabric-seconds"

python3 "$here/summarize.py" "$raw" >"$raw/summary.md" || die "summarize.py failed on $raw"
cat "$raw/summary.md"
