#!/bin/sh
# The fat tree (ibmc_sim --topology fattree, the default above 64 nodes)
# routes as it is meant to: at 128 nodes under leaf switches of 32, a
# lossless 1 B broadcast takes exactly two link latencies more than on
# the star (root -> leaf -> core -> leaf -> member: 4 links, not 2); the
# fabric delivers the same copies (each member one), the root still posts
# once per broadcast; and a 10 % loss run over a tree of leaves of 24
# (the last one partial, 8 members), with duplicates and reordering at
# the leaves, still delivers everything bit-exact.
# Counts and simulated times (SIMULATED).
cd "$(dirname "$0")" || exit 1
make -j1 ibmc_sim >/dev/null || { echo "FAIL: build"; exit 1; }
LAT=5e-07
run() { # TOPOLOGY [ARGS]
    t=$1; shift
    ./ibmc_sim --nodes 128 --size 1 --iters 20 --lat $LAT --topology "$t" --leaf 32 "$@" ||
        { echo "FAIL: ibmc_sim --topology $t $*" >&2; return 1; }
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# without co-roots: their ACKs reach a member at other moments on the two
# topologies, and one handled just before the packet delays the member's
# completion by its CPU cost, which is not routing
star=$(run star --subgroup 128) || exit 1
tree=$(run fattree --subgroup 128) || exit 1
[ "$(field "$tree" topology)" = fattree ] || { echo "FAIL: not a fat tree: $tree"; exit 1; }
ls=$(field "$star" mean_lat_us) lt=$(field "$tree" mean_lat_us)
if ! awk -v s="$ls" -v t="$lt" -v l=$LAT 'BEGIN { d = t - s - 2 * l * 1e6; exit !(d > -0.002 && d < 0.002) }'; then
    echo "FAIL: 1 B broadcast $ls us on the star, $lt us on the fat tree (2 link latencies more expected)"
    exit 1
fi
if [ "$(field "$star" switch_copies)" != "$(field "$tree" switch_copies)" ] ||
    [ "$(field "$tree" switch_copies)" != $((127 * 20)) ] ||
    [ "$(field "$tree" root_out_per_bcast)" != 1.00 ]; then
    echo "FAIL: copies or root sends differ: star $star / tree $tree"
    exit 1
fi
lossy=$(run fattree --leaf 24 --size 65536 --loss 0.1 --dup 0.01 --reorder 0.01 --seed 2) || exit 1
[ "$(field "$lossy" naks_sent)" -gt 0 ] || { echo "FAIL: no NAKs at 10 % loss: $lossy"; exit 1; }
echo "ok: 1 B at 128 nodes: star $ls us, fat tree $lt us; 64 KiB with 10 % loss over leaves of 24: $(field "$lossy" naks_sent) NAKs, result $(field "$lossy" result) (SIMULATED)"
