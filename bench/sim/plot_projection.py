#!/usr/bin/env python3
# bench/sim/plot_projection.py: the figure of a projection run, latency
# against the number of nodes (SIMULATED): small-message MPI_Bcast from
# bench/sim/project.sh, or MPI_Allgather from bench/sim/project-allgather.sh
# (rows whose `what` is "ag").
#
#   python3 bench/sim/plot_projection.py PROJECTION.tsv OUT.png
#
# Needs matplotlib (Debian: python3-matplotlib); draws with Agg.
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BCAST = [
    ("ibmc_mcast:coroots", "ibmc_mcast (co-roots, default)", "-o"),
    ("ibmc_mcast:nocoroots", "ibmc_mcast (no co-roots)", "--o"),
    ("smpi:binomial_tree", "SMPI binomial_tree", "-s"),
    ("smpi:mpich", "SMPI mpich selector", ":s"),
    ("smpi:scatter_rdb_allgather", "SMPI scatter_rdb_allgather", "-.^"),
]
ALLGATHER = [
    ("ibmc_node_rd:overlap", "ibmc_node_rd", "-o"),
    ("ibmc_node_rd:no_overlap", "ibmc_node_rd (copies at the end)", "--o"),
    ("smpi:rdb", "SMPI rdb", "-s"),
    ("smpi:bruck", "SMPI bruck", "-.^"),
    ("smpi:ring", "SMPI ring", ":v"),
    ("smpi:mpich", "SMPI mpich selector", ":s"),
]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_projection.py PROJECTION.tsv OUT.png")
    rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t")
            if r["what"] in ("lat", "ag") and r["mean_lat_us"]]
    ag = any(r["what"] == "ag" for r in rows)
    labels, op = (ALLGATHER, "MPI_Allgather") if ag else (BCAST, "MPI_Bcast")
    sizes = sorted({int(r["size"]) for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.2), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        for key, label, style in labels:
            pts = sorted((int(r["nodes"]), float(r["mean_lat_us"])) for r in rows
                         if int(r["size"]) == size and r["variant"] == key)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("nodes")
        ax.set_ylabel("%s latency, us (SIMULATED)" % op)
        ax.set_title("%d B%s, HDR-class star to 64 nodes, fat tree above (SimGrid)"
                     % (size, " per rank, %s per node" % rows[0]["ppn"] if ag else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(sys.argv[2])


if __name__ == "__main__":
    main()
