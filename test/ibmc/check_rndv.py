#!/usr/bin/env python3
"""Check, from the output of `rndv` (2 ranks on different pretend nodes, run
with MPIR_CVAR_IBMC_STATS=1), that the zero-copy rendezvous path really ran:

- rank 1 pulled the large contiguous messages with RDMA READ (rndv_rx, and
  rndv_read_bytes at least that many times the message size) and bounced only
  the strided receive;
- the data did not also travel through eager packets: rank 0 put fewer
  bytes into packets for rank 1 than one message (the strided send, which
  MPIDIG packs, is half of one);
- the registration cache hit on the reused buffers, and memory outside the
  heap (the mmap case) was registered per transfer, not cached.

usage: check_rndv.py LOG BYTES"""
import re
import sys

log, nbytes = sys.argv[1], int(sys.argv[2])
text = open(log, errors="replace").read()
fail = 0


def bad(msg):
    global fail
    fail += 1
    print("FAIL:", msg)


peer = {}
for m in re.finditer(r"ibmc-stats: rank (\d+) peer (\d+) (.*)", text):
    kv = dict(zip(m.group(3).split()[0::2], map(int, m.group(3).split()[1::2])))
    peer[(int(m.group(1)), int(m.group(2)))] = kv
rc = {}
for m in re.finditer(r"ibmc-stats: rank (\d+) connections \d+ recv_chunks \d+ rcache (.*)", text):
    f = m.group(2).split()
    rc[int(m.group(1))] = dict(zip(f[0::2], map(int, f[1::2])))

if "rndv: all" not in text:
    bad("the program did not report all checks passed")
if (0, 1) not in peer or (1, 0) not in peer or 0 not in rc or 1 not in rc:
    bad("missing ibmc-stats lines: was MPIR_CVAR_IBMC_STATS=1 set, on two nodes?")
    sys.exit(1)

# contiguous sends above the eager limit in rndv.c: cases 1-4, 6-8, 10 reuse,
# 5 free+malloc, 2 realloc, 4 mmap
want_msgs = 4 + 3 + 10 + 5 + 2 + 4
rx = peer[(1, 0)]
if rx.get("rndv_rx", 0) < want_msgs:
    bad(f"rank 1 completed {rx.get('rndv_rx', 0)} rendezvous receives, expected >= {want_msgs}")
if rx.get("rndv_read_bytes", 0) < (want_msgs - 4) * nbytes:
    bad(f"rank 1 read {rx.get('rndv_read_bytes', 0)} bytes by RDMA READ, expected >= {(want_msgs - 4) * nbytes}")
if rx.get("rndv_bounced", 0) != 1:
    bad(f"rank 1 bounced {rx.get('rndv_bounced', 0)} receives, expected exactly 1 (the strided one)")
if peer[(0, 1)].get("rndv_tx", 0) < want_msgs:
    bad(f"rank 0 announced {peer[(0, 1)].get('rndv_tx', 0)} rendezvous sends, expected >= {want_msgs}")
if peer[(0, 1)]["tx_bytes"] >= nbytes:
    bad(f"rank 0 sent {peer[(0, 1)]['tx_bytes']} bytes in eager packets to rank 1: large data was copied")
for r in (0, 1):
    if rc[r]["hits"] < 9:
        bad(f"rank {r}: {rc[r]['hits']} registration-cache hits, expected >= 9 (reused buffers)")
    if rc[r]["uncached_regs"] < 4:
        bad(f"rank {r}: {rc[r]['uncached_regs']} per-transfer registrations, expected >= 4 (mmap case)")
if not fail:
    print(f"rndv path: {rx['rndv_rx']} zero-copy receives, {rx['rndv_read_bytes']} bytes read, "
          f"cache hits {rc[0]['hits']}/{rc[1]['hits']}, eager bytes {peer[(0, 1)]['tx_bytes']}")
sys.exit(1 if fail else 0)
