#!/usr/bin/env python3
# The table of bench/allgather-compare.sh from its raw.txt lines
# "ALGO RANKS NODES BYTES MEAN_US MAX_US": per layout and size, the median
# over repetitions of the mean latency for each algorithm, ibmc_node_rd's
# ratio to the best stock MPICH algorithm over ibmc and to stock MPICH over
# ch4:ofi (when measured), what the overlap saved, and (when measured) the
# multicast variant's ratio to recursive doubling.
import statistics
import sys
from collections import defaultdict

STOCK = ("recursive_doubling", "brucks", "ring", "auto")
vals = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5:
        continue
    vals[(int(f[1]), int(f[2]), int(f[3]), f[0])].append(float(f[4]))
keys = sorted({k[:3] for k in vals})
algos = sorted({k[3] for k in vals}, key=lambda a: (not a.startswith("ibmc"), a))
with_ofi = "ofi" in algos
with_mcast = "ibmc_node_rd:mcast" in algos
print("| ranks:nodes | bytes/rank | " + " | ".join(algos) + " | node_rd / best stock |" +
      (" node_rd / ofi |" if with_ofi else "") + " overlap saves |" +
      (" mcast / node_rd |" if with_mcast else ""))
print("|---|---:|" + "---:|" * len(algos) + "---:|" + ("---:|" if with_ofi else "") + "---:|" +
      ("---:|" if with_mcast else ""))
for np_, nodes, size in keys:
    med = {a: statistics.median(vals[(np_, nodes, size, a)]) for a in algos
           if vals.get((np_, nodes, size, a))}
    stock = [med[a] for a in STOCK if a in med]
    ratio = med["ibmc_node_rd"] / min(stock) if stock and "ibmc_node_rd" in med else float("nan")
    off = med.get("ibmc_node_rd:nooverlap")
    saves = (off - med["ibmc_node_rd"]) / off if off and "ibmc_node_rd" in med else float("nan")
    vs_ofi = med["ibmc_node_rd"] / med["ofi"] if "ofi" in med and "ibmc_node_rd" in med \
        else float("nan")
    mc = med.get("ibmc_node_rd:mcast")
    vs_rd = mc / med["ibmc_node_rd"] if mc and "ibmc_node_rd" in med else float("nan")
    print(f"| {np_}:{nodes} | {size} | " +
          " | ".join(f"{med[a]:.1f}" if a in med else "-" for a in algos) +
          f" | {ratio:.2f} |" + (f" {vs_ofi:.2f} |" if with_ofi else "") +
          f" {100 * saves:.0f} % |" + (f" {vs_rd:.2f} |" if with_mcast else ""))
