#!/bin/bash
# bench/experiments/node-rd-shared.sh: should one process per node post
# ibmc_node_rd's RDMA writes (seed 001's choice) or should every process of
# the node post a share of them from its own registration of the segment?
# Runs MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN=0 (the leader alone) against =1
# (every round shared); the measurements behind that CVAR's default:
#
#   bench/experiments/node-rd-shared.sh
#
# Both ways, alternately, REPS (5) times per layout of LAYOUTS ("8:4 8:2")
# in one boot of the test VM, sizes up to MAX (262144) with ITERS (40)
# calls each; prints the median latency per size and the ratio shared /
# leader, and keeps the logs under _build/exp-node-rd-shared.
set -uo pipefail
. "$(dirname "$(readlink -f "$0")")/../lib.sh"
bench_paths
top=$(cd "$here/../.." && pwd)
REPS=${REPS:-5} LAYOUTS=${LAYOUTS:-"8:4 8:2"} MAX=${MAX:-262144} ITERS=${ITERS:-40}
out=$top/_build/exp-node-rd-shared
bin=$top/_build/bench/ibmc_allgather_bench
if bench_needs_vm; then
    rm -rf "$out" && mkdir -p "$out" "$top/_build/bench"
    "$prefix/bin/mpicc" -O2 -Wall -o "$bin" "$top/bench/ibmc_allgather_bench.c" || exit 1
    "$top/test/vm/run-fabric" env IBMC_PREFIX="$prefix" REPS="$REPS" LAYOUTS="$LAYOUTS" MAX="$MAX" \
        ITERS="$ITERS" bash "$0" || exit 1
    exec python3 - "$out" <<'PY'
import collections, glob, statistics, sys
d = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/*.log"):
    way, np_, nodes, _ = f.split("/")[-1].split("-")
    for line in open(f):
        p = line.split()
        if len(p) == 4 and p[0] == "allgather-bench:":
            d[(np_ + ":" + nodes, int(p[1]), way)].append(float(p[2]))
print("| ranks:nodes | bytes/rank | leader µs | shared µs | shared / leader |")
print("|---|---:|---:|---:|---:|")
for lay, size in sorted({k[:2] for k in d}, key=lambda k: (k[0], k[1])):
    l, s = d.get((lay, size, "leader")), d.get((lay, size, "shared"))
    if l and s:
        ml, ms = statistics.median(l), statistics.median(s)
        print(f"| {lay} | {size} | {ml:.1f} | {ms:.1f} | {ms / ml:.2f} |")
PY
fi
mkdir -p "$out"
bench_conditions "$out/conditions.txt" "reps $REPS, iters $ITERS"
export PATH=$prefix/bin:$PATH
for rep in $(seq 1 "$REPS"); do
    for layout in $LAYOUTS; do
        np=${layout%%:*} nodes=${layout##*:}
        for way in leader shared; do
            MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN=$([ $way = shared ] && echo 1 || echo 0) \
            MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd MPIR_CVAR_NUM_CLIQUES=$nodes \
                timeout 1800 mpiexec -n "$np" "$bin" "$MAX" "$ITERS" > "$out/$way-$np-$nodes-$rep.log" 2>&1 ||
                echo "node-rd-shared: $way $np:$nodes rep $rep failed" >&2
        done
    done
done
