#!/bin/sh
# The engine's own instructions per message, from callgrind, for the CPU
# cost that project.sh assumes per message: ibmc_sim runs K and then 2K
# broadcasts (8 nodes, 1 B, no loss); the self cost of every function in
# src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_*.c is summed, and the
# difference between the two runs (set-up cancels out) is divided by the
# difference in messages handled or sent (ibmc_sim's msgs=).  SimGrid's own
# work and the simulator's ops are not counted: this is the protocol engine
# only, without the verbs layer.
#
#   ./engine-cost.sh [NODES [SIZE [K]]]      defaults: 8 1 200
set -u
cd "$(dirname "$0")" || exit 1
N=${1:-8} SIZE=${2:-1} K=${3:-200}
command -v valgrind >/dev/null || { echo "engine-cost: valgrind is not installed" >&2; exit 1; }
make -j1 ibmc_sim >/dev/null || exit 1
TMP=$(mktemp -d /tmp/ibmc_engine_cost.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { # ITERS: "instructions messages"
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$1" \
        ./ibmc_sim --nodes "$N" --size "$SIZE" --iters "$1" >"$TMP/log.$1" 2>/dev/null || return 1
    ir=$(callgrind_annotate --auto=no --inclusive=no "$TMP/cg.$1" 2>/dev/null |
        awk '/mcast\/ibmc_mcast_[a-z_]*\.[ch]:/ { gsub(",", "", $1); s += $1 } END { printf "%d", s }')
    msgs=$(tr ' ' '\n' <"$TMP/log.$1" | sed -n 's/^msgs=//p')
    echo "$ir $msgs"
}
a=$(run "$K") || { echo "engine-cost: ibmc_sim failed" >&2; exit 1; }
b=$(run $((2 * K))) || { echo "engine-cost: ibmc_sim failed" >&2; exit 1; }
echo "$a $b" | awk -v n="$N" -v s="$SIZE" -v k="$K" '{
    ir = $3 - $1; m = $4 - $2
    printf "engine_instructions_per_msg=%.0f engine_instructions_per_bcast=%.0f msgs_per_bcast=%.2f nodes=%d size=%d (callgrind, %d more broadcasts)\n",
        ir / m, ir / k, m / k, n, s, k }'
