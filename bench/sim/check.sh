#!/bin/sh
# Smoke test of the simulator: build, then 16 nodes, 64 KiB, 20 broadcasts
# with 1 % multicast loss.  Must exit 0 with NAKs and retransmissions seen.
cd "$(dirname "$0")" || exit 1
[ -f /usr/include/simgrid/actor.h ] ||
    { echo "FAIL: SimGrid's C API is not installed (apt-get install libsimgrid-dev)"; exit 1; }
make -j1 >/dev/null || { echo "FAIL: build"; exit 1; }
out=$(./ibmc_sim --nodes 16 --size 65536 --iters 20 --loss 0.01 --seed 1)
rc=$?
field() { echo "$out" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
naks=$(field naks_sent)
rtx=$(field retransmits)
if [ "$rc" -ne 0 ]; then
    echo "FAIL: exit $rc: $out"; exit 1
fi
if [ -z "$naks" ] || [ -z "$rtx" ] || [ "$naks" -le 0 ] || [ "$rtx" -le 0 ]; then
    echo "FAIL: naks_sent=$naks retransmits=$rtx: $out"; exit 1
fi
echo "ok: 16 nodes, 64 KiB x 20, 1% loss: naks_sent=$naks retransmits=$rtx (SIMULATED)"
