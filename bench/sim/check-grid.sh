#!/bin/sh
# ibmc_sim --grid: 64 nodes as 8 rows of 8, every row its own channel and
# all rows broadcasting at once.  With a multicast group a row (--groups
# separate) a node receives only its row's packets; with one group for
# all rows (--groups shared, what a netmod that gives disjoint sibling
# communicators the same group does) it receives the 7 other rows' too,
# its channel refuses each as foreign (the sender is no member: source
# -1) and its CPU pays for each, so a row's broadcast takes longer.
# ibmc_sim itself fails a run in which a member gets a wrong byte, a
# separate-groups node sees a foreign packet, or a shared-groups node's
# channel takes another row's packet as anything but foreign.  Last, 4 KiB
# (two packets) with 2 % loss and rotating roots on a shared group still
# delivers every byte; larger messages on a shared group make SimGrid solve
# every row's concurrent copies as one max-min system, and take seconds.
# Counts and simulated times (SIMULATED).
cd "$(dirname "$0")" || exit 1
make -j1 ibmc_sim >/dev/null || { echo "FAIL: build"; exit 1; }
run() { # GROUPS [ARGS]
    gr=$1; shift
    ./ibmc_sim --nodes 64 --grid 8 --groups "$gr" --size 1 --iters 20 "$@" ||
        { echo "FAIL: ibmc_sim --grid 8 --groups $gr $*" >&2; return 1; }
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
sep=$(run separate) || exit 1
sha=$(run shared) || exit 1
# lossless, 1 B, no ACK question within a window: per node and broadcast,
# 7/8 of a packet of its own row (the root gets none) and, shared, one
# packet of each of the 7 other rows
for r in "separate 0.88 0.00" "shared 0.88 7.00"; do
    # shellcheck disable=SC2086
    set -- $r
    [ "$1" = separate ] && l=$sep || l=$sha
    if [ "$(field "$l" own_per_bcast)" != "$2" ] || [ "$(field "$l" foreign_per_bcast)" != "$3" ]; then
        echo "FAIL: $1 groups: own_per_bcast=$(field "$l" own_per_bcast) foreign_per_bcast=$(field "$l" foreign_per_bcast), not $2 and $3: $l"
        exit 1
    fi
done
[ "$(field "$sha" foreign_refused)" -gt 0 ] || { echo "FAIL: shared groups, no packet refused as foreign: $sha"; exit 1; }
ls=$(field "$sep" row_lat_us) lh=$(field "$sha" row_lat_us)
if ! awk -v s="$ls" -v h="$lh" 'BEGIN { exit !(h > s) }'; then
    echo "FAIL: a row's broadcast takes $ls us with a group a row, $lh us with one shared group (longer expected)"
    exit 1
fi
lossy=$(run shared --size 4096 --iters 10 --loss 0.02 --rotate --seed 3) || exit 1
[ "$(field "$lossy" naks_sent)" -gt 0 ] || { echo "FAIL: no NAKs at 2 % loss: $lossy"; exit 1; }
echo "ok: 8 x 8 grid, 1 B, per node per broadcast: separate groups $(field "$sep" own_per_bcast) own-row and $(field "$sep" foreign_per_bcast) foreign packets, row latency $ls us; shared $(field "$sha" own_per_bcast) and $(field "$sha" foreign_per_bcast), $lh us; 4 KiB with 2 % loss on a shared group: $(field "$lossy" naks_sent) NAKs, result $(field "$lossy" result) (SIMULATED)"
