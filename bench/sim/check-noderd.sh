#!/bin/sh
# noderd_sim (ibmc_node_rd's Allgather plan on simulated nodes) at a size
# the VM cannot reach: 1,000 nodes of 2 processes, a node count that is not
# a power of two (fold-in, 9 doublings, fold-out: 11 rounds).  Every node
# checks that it writes only blocks it holds, that each write carries what
# its partner's plan expects, that no block reaches it twice and that it
# holds every block at the end.  Then the same with one node's plan one
# block off (--fault-node), which must fail: the checks can fail.  Last,
# the leaders' RDMA writes per call at 2, 3, 4, 5 and 8 nodes must be what
# the netmod's MPI_T counters read in the VM's fabric cases (allgather/4x2,
# 7x3, 8x4, 5x5, 8x8 with MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN=0: 2, 5, 8, 11
# and 24, test/ibmc/allgather_node.c).
cd "$(dirname "$0")" || exit 1
[ -f /usr/include/simgrid/actor.h ] ||
    { echo "FAIL: SimGrid's C API is not installed (apt-get install libsimgrid-dev)"; exit 1; }
make -j1 ibmc_sim noderd_sim >/dev/null || { echo "FAIL: build"; exit 1; }
plat=$(mktemp /tmp/ibmc_noderd_plat.XXXXXX) || exit 1
trap 'rm -f "$plat"' EXIT
./ibmc_sim --nodes 1000 --platform-out "$plat" --platform-only || { echo "FAIL: platform"; exit 1; }
run() { ./noderd_sim --platform "$plat" --nodes 1000 --ppn 2 --size 100 --iters 1 "$@" 2>&1; }
out=$(run)
rc=$?
case "$rc:$out" in
    0:*rounds=11\ *result=ok*) ;;
    *) echo "FAIL: exit $rc: $out"; exit 1 ;;
esac
bad=$(run --fault-node 700)
rc=$?
case "$rc:$bad" in
    1:*"a write of other blocks than the round expects"*) ;;
    *) echo "FAIL: a wrong plan went unnoticed (exit $rc): $bad"; exit 1 ;;
esac
case "$bad" in
    *result=FAIL*) ;;
    *) echo "FAIL: a wrong plan did not fail the run: $bad"; exit 1 ;;
esac
for nw in 2:2 3:5 4:8 5:11 8:24; do
    w=$(./noderd_sim --platform "$plat" --nodes "${nw%:*}" --ppn 2 --size 4096 --iters 1 \
        --share-min 0 | tr ' ' '\n' | sed -n 's/^writes_per_call=//p')
    [ "$w" = "${nw#*:}.00" ] ||
        { echo "FAIL: ${nw%:*} nodes: $w RDMA writes per call, the VM counts ${nw#*:}"; exit 1; }
done
echo "ok: 1000 nodes x 2, 11 rounds, plan checked; a plan one block off caught;" \
    "writes per call at 2-8 nodes as the VM counts them (SIMULATED):" \
    "$(echo "$out" | tr ' ' '\n' | grep -E '^(mean_lat_us|writes_per_call)=' | xargs)"
