#!/usr/bin/env python3
# bench/sim/tuning.py: an MPICH collective-selection file (the JSON that
# MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE reads) that picks ibmc_mcast for
# MPI_Bcast where bench/sim/project.sh's SIMULATED latencies say it wins,
# and ibmc_node_rd for MPI_Allgather where bench/sim/project-allgather.sh's
# do.
#
#   python3 bench/sim/tuning.py PROJECTION.tsv MPICH_GENERIC_JSON OUT.json \
#       [--allgather ALLGATHER.tsv] [--barrier BARRIER.tsv] [--allreduce ALLREDUCE.tsv]
#   python3 bench/sim/tuning.py --extend IN.json OUT.json \
#       [--barrier BARRIER.tsv] [--allreduce ALLREDUCE.tsv]
#
# The second form changes only the MPI_Barrier and MPI_Allreduce subtrees
# of a selection file this script wrote before, so that
# project-barrier.sh and project-allreduce.sh update the committed file
# from their own tables without the broadcast projection's.
#
# MPICH_GENERIC_JSON is MPICH's own MPIR-level default,
# maint/tuning/coll/mpir/generic.json of the MPICH source: a selection file
# replaces the whole tree, so the output is that file with only the
# intra-communicator MPI_Bcast (and MPI_Allgather) subtrees changed, and
# every other collective as MPICH chooses it.
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
#
# Allgather, the same rule against SMPI's port of MPICH's own selection
# (`mpich`), with ibmc_node_rd copying out while the network works (its
# default).  MPIR_Allgather sees the whole communicator, so the threshold
# is the smallest winning node count times the projection's processes per
# node.  MPICH's selection has no avg_msg_size for MPI_Allgather (its
# csel.c asserts on it), only total_msg_size, the bytes of all blocks: so
# the rule goes by communicator sizes doubling from that threshold, and in
# the sizes [lo, 2 lo) picks ibmc_node_rd up to lo x S bytes in all, which
# is at least S / 2 and at most S a rank (MPICH reads the values as int:
# the doubling stops below 2^31 bytes).
#
# Barrier (project-barrier.sh), the same rule against SMPI's ompi_bruck
# (dissemination, MPICH's algorithm): from the smallest node count that
# wins at every larger one, ibmc_mcast.  MPICH's own file sends a parent
# communicator to MPIR_Barrier_intra_smp, which calls MPIR_Barrier on the
# node leaders' communicator (as CH4's composition does): the rule sits
# under comm_hierarchy=any, where the communicator's size is the node
# count, as in the simulation.
#
# Allreduce (project-allreduce.sh), against SMPI's recursive doubling
# (MPICH's choice for small messages), over the sizes the board tree takes
# (at most BOARD_MAX_BYTES; above, ibmc_mcast reduces over RC, another
# algorithm whose own wins would set one node count for every size): up
# to the largest winning size, for
# commutative operations only (the ones whose projected path, the board
# tree, takes), from the smallest node count that wins at every larger
# one.  CH4's composition hands a commutative allreduce on a parent
# communicator to the node leaders' communicator, so the size is again
# the node count.
import csv
import json
import sys

MARGIN = 1.25
BOARD_MAX_BYTES = 128   # MPIDI_IBMC_MCAST_REDUCE_MAX_BYTES
INT_MAX = 2**31 - 1


def read(tsv, what):
    """{(nodes, size, variant): mean latency} of the rows of kind `what`,
    and the processes per node of those rows (1 when the table has none)."""
    lat, ppn = {}, 1
    with open(tsv) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["what"] != what or not row["mean_lat_us"]:
                continue
            lat[(int(row["nodes"]), int(row["size"]), row["variant"])] = float(row["mean_lat_us"])
            ppn = int(row.get("ppn") or 1)
    return lat, ppn


def wins(lat, ours, theirs):
    """{size: the smallest node count from which `ours` wins at every
    projected node count}, over the sizes where it wins anywhere."""
    won = {}
    for size in sorted({s for (_, s, _) in lat}):
        ns = sorted({n for (n, s, v) in lat if s == size and v == theirs
                     and (n, s, ours) in lat})
        ok = [lat[(n, size, theirs)] >= MARGIN * lat[(n, size, ours)] for n in ns]
        first = None
        for i in range(len(ns) - 1, -1, -1):
            if not ok[i]:
                break
            first = ns[i]
        if first is not None:
            won[size] = first
    return won


def rule(stock, won, scale, algorithm):
    """The subtree: `algorithm` up to the largest winning size from the
    node count every smaller size wins at (times `scale` ranks a node),
    `stock` elsewhere; and the size and communicator size it uses."""
    size = max(won)
    nmin = max(won[s] for s in won if s <= size) * scale
    return {
        "comm_size<%d" % nmin: stock,
        "comm_size=any": {
            "avg_msg_size<=%d" % size: {"algorithm=%s" % algorithm: {}},
            "avg_msg_size=any": stock,
        },
    }, size, nmin


def rule_by_total(stock, won, scale, algorithm):
    """As rule(), for a collective MPICH sizes only by total_msg_size."""
    size = max(won)
    lo = max(won[s] for s in won if s <= size) * scale
    nmin = lo
    buckets = {}
    while size * lo * 4 <= INT_MAX:
        buckets["comm_size<%d" % (2 * lo)] = {
            "total_msg_size<=%d" % (size * lo): {"algorithm=%s" % algorithm: {}},
            "total_msg_size=any": stock,
        }
        lo *= 2
    buckets["comm_size=any"] = {
        "total_msg_size<=%d" % (size * lo): {"algorithm=%s" % algorithm: {}},
        "total_msg_size=any": stock,
    }
    return dict([("comm_size<%d" % nmin, stock)] + list(buckets.items())), size, nmin


def unwrap(subtree, algorithm):
    """MPICH's own subtree: subtree itself, or, where an earlier run of this
    script put `algorithm`'s rule there, what that rule kept below its node
    count; so that a rule is replaced, not stacked."""
    keys = list(subtree)
    if (len(keys) == 2 and keys[0].startswith("comm_size<") and keys[1] == "comm_size=any"
            and ("algorithm=%s" % algorithm) in json.dumps(subtree[keys[1]])):
        return subtree[keys[0]]
    return subtree


def rule_barrier(barrier, won):
    """MPICH's barrier subtree with ibmc_mcast from the winning node count
    on, for communicators that are no parent (the node leaders')."""
    nmin = max(won.values())
    intra = barrier["comm_type=intra"]
    stock = unwrap(intra["comm_hierarchy=any"], "MPIR_Barrier_intra_ibmc_mcast")
    intra["comm_hierarchy=any"] = {
        "comm_size<%d" % nmin: stock,
        "comm_size=any": {"algorithm=MPIR_Barrier_intra_ibmc_mcast": {}},
    }
    return nmin


def rule_allreduce(allreduce, won):
    """MPICH's allreduce subtree with ibmc_mcast for commutative operations
    up to the largest winning size, from the winning node count on."""
    size = max(won)
    nmin = max(won[s] for s in won if s <= size)
    stock = unwrap(allreduce["comm_type=intra"], "MPIR_Allreduce_intra_ibmc_mcast")
    allreduce["comm_type=intra"] = {
        "comm_size<%d" % nmin: stock,
        "comm_size=any": {
            "avg_msg_size<=%d" % size: {
                "is_commutative=yes": {"algorithm=MPIR_Allreduce_intra_ibmc_mcast": {}},
                "is_commutative=no": stock,
            },
            "avg_msg_size=any": stock,
        },
    }
    return size, nmin


def extend(tree, bartsv, artsv):
    """The barrier and allreduce rules into tree, where they win."""
    if bartsv:
        lat, _ = read(bartsv, "bar")
        won = wins(lat, "ibmc_mcast", "smpi:ompi_bruck")
        if won:
            nmin = rule_barrier(tree["collective=barrier"], won)
            print("tuning.py: ibmc_mcast for MPI_Barrier on communicators of node leaders of "
                  "%d or more (SIMULATED)" % nmin, file=sys.stderr)
        else:
            intra = tree["collective=barrier"]["comm_type=intra"]
            intra["comm_hierarchy=any"] = unwrap(intra["comm_hierarchy=any"],
                                                 "MPIR_Barrier_intra_ibmc_mcast")
            print("tuning.py: ibmc_mcast's barrier wins at no projected point; MPI_Barrier as "
                  "MPICH chooses", file=sys.stderr)
    if artsv:
        lat, _ = read(artsv, "ar")
        lat = {k: v for k, v in lat.items() if k[1] <= BOARD_MAX_BYTES}
        won = wins(lat, "ibmc_mcast", "smpi:rdb")
        if won:
            size, nmin = rule_allreduce(tree["collective=allreduce"], won)
            say("ibmc_mcast", "commutative MPI_Allreduce", size, nmin, won)
        else:
            ar = tree["collective=allreduce"]
            ar["comm_type=intra"] = unwrap(ar["comm_type=intra"], "MPIR_Allreduce_intra_ibmc_mcast")
            print("tuning.py: ibmc_mcast's allreduce wins at no projected point; MPI_Allreduce "
                  "as MPICH chooses", file=sys.stderr)


def say(what, op, size, nmin, won):
    print("tuning.py: %s for %s of at most %d B on communicators of %d or more "
          "(SIMULATED wins: %s)" % (what, op, size, nmin, ", ".join(
              "%d B from %d nodes" % (s, n) for s, n in sorted(won.items()))), file=sys.stderr)


def options(args, allowed):
    """{option: value} of the --NAME VALUE pairs after the positional
    arguments, and the positional ones."""
    opts, pos = {}, []
    while args:
        a = args.pop(0)
        if a in allowed and args:
            opts[a] = args.pop(0)
        elif a.startswith("--"):
            return None, None
        else:
            pos.append(a)
    return opts, pos


def main():
    usage = ("usage: tuning.py PROJECTION.tsv MPICH_GENERIC_JSON OUT.json [--allgather "
             "ALLGATHER.tsv] [--barrier BARRIER.tsv] [--allreduce ALLREDUCE.tsv]\n"
             "       tuning.py --extend IN.json OUT.json [--barrier BARRIER.tsv] "
             "[--allreduce ALLREDUCE.tsv]")
    args = sys.argv[1:]
    if args[:1] == ["--extend"]:
        opts, pos = options(args[1:], ("--barrier", "--allreduce"))
        if opts is None or len(pos) != 2:
            sys.exit(usage)
        with open(pos[0]) as f:
            tree = json.load(f)
        extend(tree, opts.get("--barrier"), opts.get("--allreduce"))
        with open(pos[1], "w") as f:
            json.dump(tree, f, indent=2)
            f.write("\n")
        return
    opts, pos = options(args, ("--allgather", "--barrier", "--allreduce"))
    if opts is None or len(pos) != 3:
        sys.exit(usage)
    tsv, generic, out = pos
    agtsv = opts.get("--allgather")
    lat, _ = read(tsv, "lat")
    won = wins(lat, "ibmc_mcast:coroots", "smpi:binomial_tree")
    if not won:
        sys.exit("tuning.py: ibmc_mcast wins at no projected point; no file written")
    with open(generic) as f:
        tree = json.load(f)
    bcast = tree["collective=bcast"]
    bcast["comm_type=intra"], size, nmin = rule(bcast["comm_type=intra"], won, 1,
                                                "MPIR_Bcast_intra_ibmc_mcast")
    say("ibmc_mcast", "MPI_Bcast", size, nmin, won)
    if agtsv:
        lat, ppn = read(agtsv, "ag")
        won = wins(lat, "ibmc_node_rd:overlap", "smpi:mpich")
        if won:
            ag = tree["collective=allgather"]
            ag["comm_type=intra"], size, nmin = rule_by_total(ag["comm_type=intra"], won, ppn,
                                                              "MPIR_Allgather_intra_ibmc_node_rd")
            say("ibmc_node_rd", "MPI_Allgather (%d processes a node)" % ppn, size, nmin, won)
        else:
            print("tuning.py: ibmc_node_rd wins at no projected point; MPI_Allgather as MPICH "
                  "chooses", file=sys.stderr)
    extend(tree, opts.get("--barrier"), opts.get("--allreduce"))
    with open(out, "w") as f:
        json.dump(tree, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
