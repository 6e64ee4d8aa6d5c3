#!/usr/bin/env python3
# bench/sim/plot_projection.py: the figure of a projection run, latency
# against the number of nodes (SIMULATED): small-message MPI_Bcast from
# bench/sim/project.sh, MPI_Allgather from bench/sim/project-allgather.sh
# (rows whose `what` is "ag"), MPI_Barrier from project-barrier.sh ("bar")
# or MPI_Allreduce from project-allreduce.sh ("ar").
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
BARRIER = [
    ("ibmc_mcast", "ibmc_mcast (board tree, F=32, multicast release)", "-o"),
    ("smpi:ompi_bruck", "SMPI ompi_bruck (dissemination)", "-s"),
    ("smpi:mpich", "SMPI mpich selector", ":s"),
]
ALLREDUCE = [
    ("ibmc_mcast", "ibmc_mcast (board tree, F=32, multicast result)", "-o"),
    ("smpi:rdb", "SMPI rdb (recursive doubling)", "-s"),
    ("smpi:mpich", "SMPI mpich selector", ":s"),
]
KINDS = {"lat": (BCAST, "MPI_Bcast"), "ag": (ALLGATHER, "MPI_Allgather"),
         "bar": (BARRIER, "MPI_Barrier"), "ar": (ALLREDUCE, "MPI_Allreduce")}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_projection.py PROJECTION.tsv OUT.png")
    rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t")
            if r["what"] in KINDS and r["mean_lat_us"]]
    what = rows[0]["what"]
    rows = [r for r in rows if r["what"] == what]
    ag = what == "ag"
    labels, op = KINDS[what]
    sizes = sorted({int(r["size"]) for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.2), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        for key, label, style in labels:
            if what == "ar" and key == "ibmc_mcast" and size > 128:
                label = "ibmc_mcast (k-nomial reduce over RC, multicast result)"
            pts = sorted((int(r["nodes"]), float(r["mean_lat_us"])) for r in rows
                         if int(r["size"]) == size and r["variant"] == key)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("nodes")
        ax.set_ylabel("%s latency, us (SIMULATED)" % op)
        ax.set_title("%s%s, HDR-class star to 64 nodes, fat tree above (SimGrid)"
                     % ("%d B" % size if what != "bar" else "barrier",
                        " per rank, %s per node" % rows[0]["ppn"] if ag else ""), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(sys.argv[2])


if __name__ == "__main__":
    main()
