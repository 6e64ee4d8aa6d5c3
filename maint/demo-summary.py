#!/usr/bin/env python3
"""The end of maint/demo: what a person reads at a glance, from the log of
test/ibmc/exchange run with MPIR_CVAR_IBMC_STATS=1.

usage: demo-summary.py LOG

Prints the job's verdict line, the device each rank used, and one table of
the path each pair's traffic took: R = ibmc's RC queue pair (packets or
zero-copy RDMA READ), s = CH4 shared memory (same node), - = none, with the
bytes that went over RC in all.  Exits non-zero unless every byte was
verified.  The per-peer counters stay in LOG."""
import re
import sys

text = open(sys.argv[1], errors="replace").read()
node_of = {int(r): int(n) for r, n in re.findall(r"exchange: rank (\d+) node-of (\d+)", text)}
fields = {}
for r, p, rest in re.findall(r"ibmc-stats: rank (\d+) peer (\d+) (.*)", text):
    f = rest.split()
    fields[(int(r), int(p))] = dict(zip(f[0::2], (int(v) for v in f[1::2])))
devices = sorted(set(re.findall(r"ibmc-stats: rank \d+ device (\S+ port \d+ link \S+)", text)))
verdict = re.findall(r"exchange: \d+ ranks on .*", text)

print("demo: " + (verdict[-1][len("exchange: "):] if verdict else "the job printed no verdict"))
print("demo: device " + (", ".join(devices) if devices else "(no ibmc-stats lines)"))
ranks = sorted(node_of)
if not ranks:
    sys.exit(1)
# bytes from r to p over RC: packets r sent, plus what p pulled from r
def rc_bytes(r, p):
    f = fields.get((r, p), {})
    return f.get("tx_bytes", 0) + fields.get((p, r), {}).get("rndv_read_bytes", 0)
w = max(3, len(str(ranks[-1])) + 1)
print("demo: path from row to column (R = RC queue pair, s = shared memory, - = no traffic; "
      "[node, named by its lowest rank])")
print(" " * (w + 5) + "".join(f"{p:>{w}}" for p in ranks))
total = 0
for r in ranks:
    cells = []
    for p in ranks:
        if p == r:
            cells.append(".")
        elif rc_bytes(r, p) or fields.get((r, p), {}).get("tx_pkts"):
            cells.append("R")
            total += rc_bytes(r, p)
        elif node_of[r] == node_of[p]:
            cells.append("s")
        else:
            cells.append("-")
    print(f"{r:>{w}} [{node_of[r]:>2}]" + "".join(f"{c:>{w}}" for c in cells))
print(f"demo: {total / 2**20:.1f} MiB went over RC between nodes; per-peer counters in {sys.argv[1]}")
sys.exit(0 if verdict and "all bytes verified" in verdict[-1] else 1)
