#!/bin/sh
# The root's ACK load with co-roots does not grow with the node count:
# co-roots acknowledge up the relay tree (ibmc_mcast_coroot.h), so the root
# hears from its own subgroup and its at most 2 children in that tree; and
# its sends do not grow either: one multicast post per packet and nothing
# else without loss (co-roots ask for what they lose,
# MPIR_CVAR_IBMC_MCAST_COROOT_RELAY's default), and with every packet
# relayed (--relay always) at most 2 relays per packet (the binary relay
# tree; a binomial one sends 6 at 1,024 nodes).  Counts, not times (SIMULATED): messages the root handles and
# sends per broadcast, 1 B x 100 back to back, at 64 and 1,024 nodes.  The
# same run without co-roots must fail the bound, so that the check can fail.
cd "$(dirname "$0")" || exit 1
make -j1 ibmc_sim >/dev/null || { echo "FAIL: build"; exit 1; }
run() { # NODES [ARGS]: prints coroot_acks, root_in_per_bcast and root_out_per_bcast
    n=$1; shift
    out=$(./ibmc_sim --nodes "$n" --size 1 --iters 100 --seed 1 "$@") ||
        { echo "FAIL: ibmc_sim --nodes $n $*: $out" >&2; return 1; }
    echo "$out" | tr ' ' '\n' |
        awk -F= '$1 == "coroot_acks" { a = $2 } $1 == "root_in_per_bcast" { r = $2 }
                 $1 == "root_out_per_bcast" { o = $2 } END { print a, r, o }'
}
small=$(run 64) || exit 1
large=$(run 1024) || exit 1
none=$(run 1024 --subgroup 1024) || exit 1
relayed=$(run 1024 --relay always) || exit 1
set -- $small $large $none $relayed
in64=$2 acks1024=$4 in1024=$5 out1024=$6 in_none=$8 relayed_out=${12}
# within 2x from 64 to 1,024 nodes (co-roots that all acknowledged to the
# root gave 10x: 2.74 and 27.95)
flat() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(b <= 2 * a) }'; }
if [ "$acks1024" -le 0 ] || ! flat "$in64" "$in1024"; then
    echo "FAIL: root handles $in64 messages per broadcast at 64 nodes, $in1024 at 1,024 ($acks1024 co-root ACKs)"
    exit 1
fi
if ! awk -v o="$out1024" 'BEGIN { exit !(o <= 1) }'; then
    echo "FAIL: the root sends $out1024 messages per broadcast at 1,024 nodes without loss (at most 1: one post)"
    exit 1
fi
if ! awk -v o="$relayed_out" 'BEGIN { exit !(o > 1 && o <= 3) }'; then
    echo "FAIL: relaying every packet, the root sends $relayed_out messages per broadcast at 1,024 nodes (more than 1, at most 3: one post, 2 relays)"
    exit 1
fi
if flat "$in64" "$in_none"; then
    echo "FAIL: the bound does not tell co-roots apart: $in_none per broadcast without them"
    exit 1
fi
echo "ok: root handles $in64 messages per broadcast at 64 nodes, $in1024 at 1,024 with co-roots, $in_none without; sends $out1024 at 1,024, $relayed_out relaying every packet (SIMULATED)"
