#!/bin/bash
# bench/allgather-compare.sh: MPI_Allgather latency (bench/ibmc_allgather_bench.c,
# OSU-like, after seed 001 §5) for ibmc_node_rd with and without overlap, and
# MPICH's recursive doubling, Bruck, ring and default (auto), in one VM boot,
# with per-size medians of REPS runs and ratios measured in the same run.
#
#   [REPS=5] [LAYOUTS="8:4 16:8"] [ITERS=100] [MAX=1048576] bench/allgather-compare.sh
#
# On a host without an RDMA device it re-runs itself inside the project's
# Soft-RoCE VM (test/vm/run-fabric).  Raw output and the table (summary.md)
# go to _build/bench/allgather-<date>/.  Inputs: IBMC_PREFIX (default
# $IBMC_CACHE/install/ibmc-default), REPS, LAYOUTS (ranks:pretend nodes),
# ITERS (timed calls per size, halved from 64 KiB on), MAX (largest size per
# process), ALGOS (default "ibmc_node_rd ibmc_node_rd:nooverlap
# recursive_doubling brucks ring auto ofi"; ibmc_node_rd:mcast moves blocks
# between nodes by multicast, MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN=1; ofi is stock MPICH 4.0.2 with
# ch4:ofi, libfabric's verbs;ofi_rxm, its default algorithm, from OFI_PREFIX,
# default $IBMC_CACHE/install/stock-ofi made by maint/build-stock-ofi, and
# left out with a note when that is not installed).
set -uo pipefail
. "$(dirname "$(readlink -f "$0")")/lib.sh"
bench_paths
REPS=${REPS:-5} LAYOUTS=${LAYOUTS:-"8:4 16:8"} ITERS=${ITERS:-100} MAX=${MAX:-1048576}
ALGOS=${ALGOS:-"ibmc_node_rd ibmc_node_rd:nooverlap recursive_doubling brucks ring auto ofi"}
ofi=${OFI_PREFIX-$cache/install/stock-ofi}
out=${ALLGATHER_BENCH_OUT:-$top/_build/bench/allgather-$(date +%Y%m%d-%H%M%S)}

if bench_needs_vm; then
    mkdir -p "$out" "$top/_build/bench"
    "$prefix/bin/mpicc" -O2 -Wall -o "$top/_build/bench/ibmc_allgather_bench" \
        "$here/ibmc_allgather_bench.c" || exit 1
    if [ -x "$ofi/bin/mpicc" ]; then
        "$ofi/bin/mpicc" -O2 -Wall -o "$top/_build/bench/ibmc_allgather_bench-ofi" \
            "$here/ibmc_allgather_bench.c" || exit 1
    fi
    # the VM passes only some of the environment on: name the settings
    exec "$top/test/vm/run-fabric" env IBMC_PREFIX="$prefix" REPS="$REPS" LAYOUTS="$LAYOUTS" \
        ITERS="$ITERS" MAX="$MAX" ALGOS="$ALGOS" OFI_PREFIX="$ofi" ALLGATHER_BENCH_OUT="$out" bash "$0"
fi
mkdir -p "$out"
bin=$top/_build/bench/ibmc_allgather_bench
[ -x "$bin" ] || "$prefix/bin/mpicc" -O2 -Wall -o "$bin" "$here/ibmc_allgather_bench.c" || exit 1
export PATH=$prefix/bin:$PATH
bench_conditions "$out/conditions.txt"
for rep in $(seq 1 "$REPS"); do
    for layout in $LAYOUTS; do
        np=${layout%%:*} nodes=${layout##*:}
        for algo in $ALGOS; do
            overlap=1 mcast_min=0 name=$algo
            case $algo in
                *:nooverlap) algo=${algo%%:*} overlap=0 ;;
                *:mcast) algo=${algo%%:*} mcast_min=1 ;;
            esac
            log=$out/$name-$np-$nodes-$rep.log
            if [ "$algo" = ofi ]; then
                if [ ! -x "$top/_build/bench/ibmc_allgather_bench-ofi" ]; then
                    [ "$rep" = 1 ] && echo "allgather-compare: ofi left out: no stock ch4:ofi install at $ofi (maint/build-stock-ofi)" >&2
                    continue
                fi
                FI_PROVIDER='verbs;ofi_rxm' FI_UNIVERSE_SIZE=64 MPIR_CVAR_NUM_CLIQUES=$nodes \
                    timeout 1800 "$ofi/bin/mpiexec" -n "$np" "$top/_build/bench/ibmc_allgather_bench-ofi" \
                    "$MAX" "$ITERS" > "$log" 2>&1 ||
                    echo "allgather-compare: ofi $np:$nodes rep $rep failed (see $log)" >&2
            else
                MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=$algo MPIR_CVAR_IBMC_NODE_RD_OVERLAP=$overlap \
                    MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN=$mcast_min \
                    MPIR_CVAR_NUM_CLIQUES=$nodes timeout 1800 mpiexec -n "$np" "$bin" "$MAX" "$ITERS" \
                    > "$log" 2>&1 || echo "allgather-compare: $name $np:$nodes rep $rep failed (see $log)" >&2
            fi
            sed -n "s/^allgather-bench: /$name $np $nodes /p" "$log" >> "$out/raw.txt"
        done
    done
done
python3 "$here/allgather_summary.py" "$out/raw.txt" > "$out/summary.md"
cat "$out/conditions.txt" "$out/summary.md"
echo "allgather-compare: raw output and summary in $out"
