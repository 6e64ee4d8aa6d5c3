#!/usr/bin/env python3
# bench/sim/tuning.py: an MPICH collective-selection file (the JSON that
# MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE reads) that picks ibmc_mcast for
# MPI_Bcast where bench/sim/project.sh's SIMULATED latencies say it wins.
#
#   python3 bench/sim/tuning.py PROJECTION.tsv MPICH_GENERIC_JSON OUT.json
#
# MPICH_GENERIC_JSON is MPICH's own MPIR-level default,
# maint/tuning/coll/mpir/generic.json of the MPICH source: a selection file
# replaces the whole tree, so the output is that file with only the
# intra-communicator MPI_Bcast subtree changed, and every other collective
# as MPICH chooses it.
#
# The rule: a message size S of the projection is won at N nodes when
# SMPI's binomial tree (what MPICH's default runs for small messages) takes
# at least MARGIN (1.25) times as long as ibmc_mcast with its default
# co-roots.  The file picks ibmc_mcast for messages up to the largest such
# S on communicators of at least the smallest N from which every projected
# node count wins; it keeps MPICH's choice everywhere else.  Only the sizes
# the projection covers count: it projects nothing beyond the validated
# small messages (bench/sim/README.md).
#
# The communicator the rule sees is the one MPIR_Bcast is called on: with
# CH4's node-aware composition (its default for small messages), the
# communicator of node leaders, whose size is the number of nodes, as in
# the simulation.
import csv
import json
import sys

MARGIN = 1.25


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: tuning.py PROJECTION.tsv MPICH_GENERIC_JSON OUT.json")
    tsv, generic, out = sys.argv[1:]
    lat = {}
    with open(tsv) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["what"] != "lat" or not row["mean_lat_us"]:
                continue
            lat[(int(row["nodes"]), int(row["size"]), row["variant"])] = float(row["mean_lat_us"])
    wins = {}   # size -> smallest N from which every projected N wins
    for size in sorted({s for (_, s, _) in lat}):
        ns = sorted({n for (n, s, v) in lat if s == size and v == "smpi:binomial_tree"
                     and (n, s, "ibmc_mcast:coroots") in lat})
        ok = [lat[(n, size, "smpi:binomial_tree")] >= MARGIN * lat[(n, size, "ibmc_mcast:coroots")]
              for n in ns]
        first = None
        for i in range(len(ns) - 1, -1, -1):
            if not ok[i]:
                break
            first = ns[i]
        if first is not None:
            wins[size] = first
    if not wins:
        sys.exit("tuning.py: ibmc_mcast wins at no projected point; no file written")
    size = max(wins)
    nmin = max(wins[s] for s in wins if s <= size)
    with open(generic) as f:
        tree = json.load(f)
    stock = tree["collective=bcast"]["comm_type=intra"]
    tree["collective=bcast"]["comm_type=intra"] = {
        "comm_size<%d" % nmin: stock,
        "comm_size=any": {
            "avg_msg_size<=%d" % size: {"algorithm=MPIR_Bcast_intra_ibmc_mcast": {}},
            "avg_msg_size=any": stock,
        },
    }
    with open(out, "w") as f:
        json.dump(tree, f, indent=2)
        f.write("\n")
    print("tuning.py: ibmc_mcast for MPI_Bcast of at most %d B on communicators of %d or more "
          "(SIMULATED wins: %s)" % (size, nmin, ", ".join("%d B from %d" % (s, n)
                                                           for s, n in sorted(wins.items()))),
          file=sys.stderr)


if __name__ == "__main__":
    main()
