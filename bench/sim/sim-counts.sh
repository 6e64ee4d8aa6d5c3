#!/bin/bash
# The engine's lossless counts per broadcast in ibmc_sim beside the Soft-RoCE
# VM's pvars for the same layouts and sizes (issue #31 §4: with zero loss the
# simulator's ACKs, relays, co-root ACKs and NAKs are the VM's).  Both run ITERS
# back-to-back broadcasts from root 0 with the defaults (window 64, ACK every
# 16, co-roots from 9 nodes on, MTU 4096); the VM's figures come from
# bench/bcast-counts.sh (IBMC_VM_MTU=4200: RoCE MTU 4096) at one rank a node.
#
#   ./sim-counts.sh [COUNTS_MD]
#
# COUNTS_MD is bench/bcast-counts.sh's table; without it only the simulator's
# columns are printed.  Environment: NODES="2 4 8", SIZES="1 1024 16384
# 65536", ITERS=200.  Counts, not times: the ACKs a receiver sends depend on
# when it runs against the root's packets, which the simulator's clock and the
# VM's scheduler decide differently; NAKs, retransmissions, duplicates,
# relays and co-root ACKs do not.  The simulated figures are SIMULATED.
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
cd "$(dirname "$0")" || exit 1
counts=${1:-}
[ -z "$counts" ] || [ -r "$counts" ] || { echo "FAIL: cannot read $counts" >&2; exit 1; }
NODES=${NODES:-"2 4 8"}
SIZES=${SIZES:-"1 1024 16384 65536"}
ITERS=${ITERS:-200}
hdr_fabric
make -j1 ibmc_sim >/dev/null || { echo "FAIL: build" >&2; exit 1; }

TMP=$(mktemp /tmp/ibmc_simcounts.XXXXXX) || exit 1
trap 'rm -f "$TMP"' EXIT
for n in $NODES; do
    for s in $SIZES; do
        line=$(./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu 4096 \
            --size "$s" --iters "$ITERS" --mode rate 2>&1 | grep '^SIMULATED')
        case $line in *result=ok*) ;; *) echo "FAIL: ibmc_sim --nodes $n --size $s: $line" >&2; exit 1 ;; esac
        echo "$n $s $line" >>"$TMP"
    done
done

# The VM's receiver side is the mean of the other ranks; its root side holds
# the retransmissions and the root's ACK requests (ack_probes).
python3 - "$TMP" "$ITERS" "$counts" <<'PY'
import sys
sim_file, iters, counts = sys.argv[1], int(sys.argv[2]), sys.argv[3]
vm = {}
if counts:
    head = None
    for line in open(counts):
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "ranks:nodes":
            head = cells
            continue
        if head is None or cells[0].startswith("---") or cells[2] != "ibmc_mcast":
            continue
        ranks, nodes = cells[0].split(":")
        if ranks != nodes:
            continue
        vm[(int(nodes), int(cells[1]), cells[3])] = dict(zip(head, cells))
print("| nodes | bytes | receiver ACKs, sim | VM | NAKs, sim | VM | retransmissions, sim | VM "
      "| duplicates, sim | VM | relays + co-root ACKs, sim | root's ACK requests, sim | VM |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for line in open(sim_file):
    n, s, rest = line.split(" ", 2)
    n, s = int(n), int(s)
    kv = dict(f.split("=", 1) for f in rest.split() if "=" in f)
    per = lambda key, who: float(kv[key]) / iters / who
    r, root = vm.get((n, s, "recv")), vm.get((n, s, "root"))
    v = lambda row, col: row[col] if row else "-"
    print("| %d | %d | %.3f | %s | %.3f | %s | %.3f | %s | %.3f | %s | %.3f | %.3f | %s |" % (
        n, s, per("acks_sent", n - 1), v(r, "acks"),
        per("naks_sent", n - 1), v(r, "naks"),
        per("retransmits", 1), v(root, "retransmits"),
        per("duplicates", n - 1), v(r, "duplicates"),
        (float(kv["relays"]) + float(kv["coroot_acks"])) / iters, per("ack_probes", 1),
        v(root, "ack_probes")))
PY
