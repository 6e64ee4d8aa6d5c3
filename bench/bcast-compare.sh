#!/bin/bash
# bench/bcast-compare.sh: MPI_Bcast latency, rate and skew tolerance
# (bench/ibmc_bcast_bench.c, after seed 000 §6) for ibmc_mcast, MPICH's
# binomial tree and the default (auto), in one VM boot, with per-size medians
# and each algorithm's ratio to binomial measured in the same run.
#
#   [REPS=5] [LAYOUTS="8:4 16:8"] [ITERS=50] [MAX=65536] bench/bcast-compare.sh
#
# On a host without an RDMA device it re-runs itself inside the project's
# Soft-RoCE VM (test/vm/run-fabric).  Raw output and the table (summary.md)
# go to _build/bench/bcast-<date>/.  Inputs: IBMC_PREFIX (default
# $IBMC_CACHE/install/ibmc-default), REPS, LAYOUTS (ranks:pretend nodes),
# ITERS (broadcasts per size and test), MAX (largest size), SKEW (µs, 400),
# TESTS ("latency rate skew"), ALGOS ("ibmc_mcast binomial auto";
# ibmc_mcast:coroots2 is ibmc_mcast with MPIR_CVAR_IBMC_MCAST_SUBGROUP=2,
# co-roots at any size; ibmc_mcast:rcacks with MPIR_CVAR_IBMC_MCAST_RDMA_ACKS=0,
# every ACK an RC message; ibmc_mcast:nomax with MPIR_CVAR_IBMC_MCAST_MAX_BYTES=0,
# multicast at every size), MIN (smallest size, 1), SKEWS (the skew test again at each of these µs, up
# to SWEEP_MAX bytes: time in MPI_Bcast against skew; default "0 100 400
# 1600", empty for none), SWEEP_MAX (1024).
set -uo pipefail
. "$(dirname "$(readlink -f "$0")")/lib.sh"
bench_paths
REPS=${REPS:-5} LAYOUTS=${LAYOUTS:-"8:4 16:8"} ITERS=${ITERS:-50} MAX=${MAX:-65536} SKEW=${SKEW:-400}
MIN=${MIN:-1}
TESTS=${TESTS:-"latency rate skew"} ALGOS=${ALGOS:-"ibmc_mcast binomial auto"}
SKEWS=${SKEWS-"0 100 400 1600"} SWEEP_MAX=${SWEEP_MAX:-1024}
out=${BCAST_BENCH_OUT:-$top/_build/bench/bcast-$(date +%Y%m%d-%H%M%S)}

if bench_needs_vm; then
    mkdir -p "$out" "$top/_build/bench"
    "$prefix/bin/mpicc" -O2 -Wall -o "$top/_build/bench/ibmc_bcast_bench" "$here/ibmc_bcast_bench.c" || exit 1
    # the VM passes only some of the environment on: name the settings
    exec "$top/test/vm/run-fabric" env IBMC_PREFIX="$prefix" REPS="$REPS" LAYOUTS="$LAYOUTS" \
        ITERS="$ITERS" MAX="$MAX" MIN="$MIN" SKEW="$SKEW" TESTS="$TESTS" ALGOS="$ALGOS" \
        SKEWS="$SKEWS" SWEEP_MAX="$SWEEP_MAX" \
        BCAST_BENCH_OUT="$out" bash "$0"
fi
mkdir -p "$out"
bin=$top/_build/bench/ibmc_bcast_bench
[ -x "$bin" ] || "$prefix/bin/mpicc" -O2 -Wall -o "$bin" "$here/ibmc_bcast_bench.c" || exit 1
export PATH=$prefix/bin:$PATH
bench_conditions "$out/conditions.txt" "skew $SKEW (us, the most a receiver is delayed in the skew test)"
for rep in $(seq 1 "$REPS"); do
    for layout in $LAYOUTS; do
        np=${layout%%:*} nodes=${layout##*:}
        # test:skew:max, the skew sweep's points after the tests
        runs=""
        for test in $TESTS; do runs="$runs $test:$SKEW:$MAX"; done
        case " $TESTS " in *" skew "*) for s in $SKEWS; do runs="$runs skewsweep:$s:$SWEEP_MAX"; done ;; esac
        for run in $runs; do
            IFS=: read -r test skew max <<< "$run"
            for name in $ALGOS; do
                algo=${name%%:*} subgroup=0 rdma_acks=1 max_bytes=1048576
                case $name in
                    *:coroots2) subgroup=2 ;;
                    *:rcacks) rdma_acks=0 ;;
                    *:nomax) max_bytes=0 ;;
                esac
                log=$out/$name-$np-$nodes-$test-$skew-$rep.log
                MPIR_CVAR_BCAST_INTRA_ALGORITHM=$algo MPIR_CVAR_NUM_CLIQUES=$nodes \
                    MPIR_CVAR_IBMC_MCAST_SUBGROUP=$subgroup MPIR_CVAR_IBMC_MCAST_RDMA_ACKS=$rdma_acks \
                    MPIR_CVAR_IBMC_MCAST_MAX_BYTES=$max_bytes \
                    timeout 900 mpiexec -n "$np" "$bin" "$test" "$max" "$ITERS" "$skew" "$MIN" > "$log" 2>&1 ||
                    echo "bcast-compare: $name $np:$nodes $test rep $rep failed (see $log)" >&2
                sed -n "s/^bcast-bench: /$name $np $nodes /p" "$log" >> "$out/raw.txt"
            done
        done
    done
done
python3 - "$out/raw.txt" > "$out/summary.md" <<'PY'
import statistics, sys
from collections import defaultdict
vals = defaultdict(list)
units = {}
for line in open(sys.argv[1]):
    algo, np_, nodes, test, size, value, unit = line.split()[:7]
    if test in ("pt2pt", "skewsweep"):
        continue
    vals[(np_, nodes, test, int(size), algo)].append(float(value))
    units[test] = unit
keys = sorted({k[:4] for k in vals})
algos = sorted({k[4] for k in vals}, key=lambda a: (a != "ibmc_mcast", a))
# the ratio's numerator: ibmc_mcast, or the first of its variants
mc = next((a for a in algos if a == "ibmc_mcast"), next((a for a in algos if a.startswith("ibmc_mcast")), None))
print("| ranks:nodes | test | bytes | " + " | ".join(algos) + " | ibmc_mcast / binomial |")
print("|---|---|---:|" + "---:|" * len(algos) + "---:|")
for np_, nodes, test, size in keys:
    med = {a: statistics.median(vals[(np_, nodes, test, size, a)]) for a in algos if vals.get((np_, nodes, test, size, a))}
    ratio = med[mc] / med["binomial"] if mc in med and med.get("binomial") else float("nan")
    print(f"| {np_}:{nodes} | {test} ({units[test]}) | {size} | " +
          " | ".join(f"{med[a]:.1f}" if a in med else "-" for a in algos) + f" | {ratio:.2f} |")
PY
cat "$out/summary.md"
echo "bcast-compare: raw output and summary in $out"
