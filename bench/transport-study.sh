#!/bin/bash
# bench/transport-study.sh: the 1:n / n:1 transport study of seed 004
# (bench/ibmc_transport.c) on the device at hand, in the project's
# Soft-RoCE VM when this host has no RDMA device.
#
#   [PEERS=3] [ITERS=200] [TRANSPORT_OUT=dir] bench/transport-study.sh
#
# PEERS: the n (mpiexec -n PEERS+1; every process is its own pretend node).
# Output: TRANSPORT_OUT (default _build/bench/transport-<date>)/raw.txt, the
# program's lines, and conditions.txt.  Inputs: IBMC_PREFIX (the MPI that
# starts the processes; default $IBMC_CACHE/install/ibmc-default),
# TRANSPORT_DEVICE and TRANSPORT_IP (see the program's header).
set -uo pipefail
. "$(dirname "$(readlink -f "$0")")/lib.sh"
bench_paths
PEERS=${PEERS:-3} ITERS=${ITERS:-200}
out=${TRANSPORT_OUT:-$top/_build/bench/transport-$(date +%Y%m%d-%H%M%S)}
bin=$top/_build/bench/ibmc_transport

if bench_needs_vm; then
    mkdir -p "$out" "$top/_build/bench"
    "$prefix/bin/mpicc" -O2 -Wall -o "$bin" "$here/ibmc_transport.c" -libverbs -lrdmacm || exit 1
    exec "$top/test/vm/run-fabric" env IBMC_PREFIX="$prefix" PEERS="$PEERS" ITERS="$ITERS" \
        TRANSPORT_OUT="$out" bash "$0"
fi
mkdir -p "$out"
[ -x "$bin" ] || "$prefix/bin/mpicc" -O2 -Wall -o "$bin" "$here/ibmc_transport.c" -libverbs -lrdmacm || exit 1
bench_conditions "$out/conditions.txt" "peers $PEERS, $ITERS rounds per configuration"
MPIR_CVAR_NUM_CLIQUES=$((PEERS + 1)) timeout 1800 "$prefix/bin/mpiexec" -n $((PEERS + 1)) "$bin" "$ITERS" \
    > "$out/raw.txt" 2> "$out/stderr.txt" || { echo "transport-study: the run failed (see $out)" >&2; exit 1; }
echo "transport-study: $(grep -c '^transport' "$out/raw.txt") configurations in $out/raw.txt"
