#!/bin/sh
# Posted broadcasts (ibmc_sim --inflight, the engine's MPI_Ibcast path):
# 16 nodes keep 4 broadcasts of 64 KiB posted with rotating roots and 1 %
# multicast loss, driven by nothing but ibmc_mcast_chan_progress.  Must
# deliver every byte of every broadcast before --max-time (ibmc_sim fails
# the run otherwise), with 4 posted at once, and NAKs and retransmissions
# seen; a run whose posted broadcasts are not driven never completes and
# fails.  --inflight in latency mode must be refused.  SIMULATED.
cd "$(dirname "$0")" || exit 1
make -j1 ibmc_sim >/dev/null || { echo "FAIL: build"; exit 1; }
out=$(./ibmc_sim --nodes 16 --size 65536 --iters 20 --mode rate --inflight 4 --rotate \
    --loss 0.01 --seed 1 --max-time 1 2>&1)
rc=$?
field() { echo "$out" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
if [ "$rc" -ne 0 ] || [ "$(field result)" != ok ]; then
    echo "FAIL: exit $rc: $out"; exit 1
fi
naks=$(field naks_sent) rtx=$(field retransmits) pm=$(field posted_max)
if [ "$(field inflight)" != 4 ] || [ "$pm" != 4 ]; then
    echo "FAIL: inflight=$(field inflight) posted_max=$pm, 4 and 4 expected: $out"; exit 1
fi
if [ -z "$naks" ] || [ -z "$rtx" ] || [ "$naks" -le 0 ] || [ "$rtx" -le 0 ] ||
    [ "$(field bad_bytes)" != 0 ]; then
    echo "FAIL: naks_sent=$naks retransmits=$rtx bad_bytes=$(field bad_bytes): $out"; exit 1
fi
if ./ibmc_sim --nodes 16 --inflight 4 >/dev/null 2>&1; then
    echo "FAIL: --inflight 4 in latency mode was not refused"; exit 1
fi
echo "ok: 16 nodes, 4 of 64 KiB in flight x 20, rotating roots, 1% loss: naks_sent=$naks retransmits=$rtx, $(field bcasts_per_s) bcasts/s (SIMULATED)"
