#!/usr/bin/env python3
# bench/sim/latency_table.py: the Markdown latency table of a projection
# run (project.sh, project-allgather.sh): a row per node count, for each
# message size a column per variant and one ratio of two of them; `-` where
# a variant did not run.  Every figure in it is SIMULATED.
#
#   python3 latency_table.py TSV WHAT "SIZES" "VARIANT=HEADER,..." NUM/DEN=HEADER
#
# TSV has the columns what, nodes, size, variant and mean_lat_us (others
# are ignored); only rows whose `what` is WHAT count.  The ratio column is
# NUM's latency over DEN's.
import csv
import sys


def main():
    if len(sys.argv) != 6:
        sys.exit("usage: latency_table.py TSV WHAT SIZES VARIANT=HEADER,... NUM/DEN=HEADER")
    tsv, what, sizes, cols, ratio = sys.argv[1:]
    sizes = [int(s) for s in sizes.split()]
    cols = [c.split("=", 1) for c in cols.split(",")]
    pair, ratio_head = ratio.split("=", 1)
    num, den = pair.split("/")
    lat, nodes = {}, set()
    with open(tsv) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["what"] != what:
                continue
            nodes.add(int(row["nodes"]))
            if row["mean_lat_us"]:
                lat[(int(row["nodes"]), int(row["size"]), row["variant"])] = row["mean_lat_us"]
    head = ["nodes"]
    for s in sizes:
        head += ["%d B: %s" % (s, cols[0][1])] + [h for _, h in cols[1:]] + [ratio_head]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    for n in sorted(nodes):
        cells = [str(n)]
        for s in sizes:
            cells += [lat.get((n, s, v), "-") for v, _ in cols]
            a, b = lat.get((n, s, num)), lat.get((n, s, den))
            cells.append("%.2fx" % (float(a) / float(b)) if a and b else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
