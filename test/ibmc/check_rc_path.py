#!/usr/bin/env python3
"""Check, from the output of `exchange` run with MPIR_CVAR_IBMC_STATS=1, that
traffic between ranks on different (pretend) nodes went over ibmc's RC queue
pairs (as packets, or pulled by the receiver with RDMA READ), and -- when the build has CH4's shared-memory module -- that traffic
between ranks on the same node did not.

usage: check_rc_path.py LOG MIN_BYTES [--intranode-via-netmod]
Prints one line per checked pair class and exits non-zero on any violation."""
import re
import sys

log, min_bytes = sys.argv[1], int(sys.argv[2])
intra_via_netmod = "--intranode-via-netmod" in sys.argv[3:]
text = open(log, errors="replace").read()

node_of = {int(r): int(n) for r, n in re.findall(r"exchange: rank (\d+) node-of (\d+)", text)}
# bytes that went from r to p over RC: what r put in packets for p, plus what
# p pulled from r with RDMA READ (the rendezvous protocol)
fields = {}
for r, p, rest in re.findall(r"ibmc-stats: rank (\d+) peer (\d+) (.*)", text):
    f = rest.split()
    fields[(int(r), int(p))] = dict(zip(f[0::2], (int(v) for v in f[1::2])))
tx = {}
for (r, p), f in fields.items():
    pulled = fields.get((p, r), {}).get("rndv_read_bytes", 0)
    tx[(r, p)] = (f["tx_pkts"], f["tx_bytes"] + pulled)
devices = set(re.findall(r"ibmc-stats: rank \d+ device (\S+) port (\d+)", text))

fail = 0
def bad(msg):
    global fail
    fail += 1
    print("FAIL:", msg)

if not node_of:
    bad("no 'exchange: rank R node-of N' lines: did the job run?")
if len(set(node_of.values())) < 2:
    bad("all ranks are on one node: set MPIR_CVAR_NUM_CLIQUES")
if not devices:
    bad("no 'ibmc-stats: ... device' lines: was MPIR_CVAR_IBMC_STATS=1 set?")

inter = intra = 0
for r in node_of:
    for p in node_of:
        if r == p:
            continue
        pk, by = tx.get((r, p), (0, 0))
        if node_of[r] != node_of[p]:
            inter += 1
            if pk == 0 or by < min_bytes:
                bad(f"rank {r} -> rank {p} (other node): {pk} RC packets, {by} bytes < {min_bytes}")
        else:
            intra += 1
            if not intra_via_netmod and pk != 0:
                bad(f"rank {r} -> rank {p} (same node): {pk} RC packets; expected shared memory")
            if intra_via_netmod and by < min_bytes:
                bad(f"rank {r} -> rank {p} (same node, no shm): {by} bytes < {min_bytes}")

print(f"rc-path: devices {sorted(devices)}; {inter} inter-node pairs carried >= {min_bytes} B "
      f"over RC each; {intra} same-node pairs "
      + ("also over RC" if intra_via_netmod else "used no RC packets"))
sys.exit(1 if fail else 0)
