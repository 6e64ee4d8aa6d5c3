#!/usr/bin/env python3
# bench/report.py: regenerate the bench-all section of doc/benchmarks.md
# from a maint/bench-all output directory.
#
#   python3 bench/report.py OUTDIR --doc doc/benchmarks.md --img doc/img [--params PARAMS]
#
# Rewrites only the lines between "<!-- bench-all:begin -->" and
# "<!-- bench-all:end -->" in the doc (when the markers are missing they
# are inserted after the first heading line, followed by a blank line);
# everything else in the doc stays byte for byte. The region holds the
# date and conditions of the run, the commands, median tables (Bcast,
# Allgather, the transport study), the model's parameters and where they
# came from, the model against the measurements, the projection to 8192
# nodes (this run's parameters and published ones), the co-root choice,
# and links to the figures that exist in --img (drawn first by
# bench/plots.py when matplotlib is there). Parsing is bench/benchdata.py's,
# the model bench/model.py's.

import argparse
import os
import re
import sys

sys.dont_write_bytecode = True     # leave no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchdata as bd  # noqa: E402
import model  # noqa: E402
import plots  # noqa: E402

BEGIN = "<!-- bench-all:begin -->"
END = "<!-- bench-all:end -->"
STOCK_ALLGATHER = ("recursive_doubling", "brucks", "ring", "auto")
PROJECTION_NODES = [64, 256, 1024, 8192]
PROJECTION_BYTES = 8
PROJECTION_PPN = (1, 8)      # one process per node (the brief), and a multi-core node
COROOT_NODES = 1024


class RegionError(Exception):
    pass


# ---------------------------------------------------------------- the doc

def replace_region(text, body):
    """text with the lines between the markers replaced by body (which
    ends with a newline); markers inserted after the first heading when
    absent. Raises RegionError when the markers are not one ordered pair."""
    lines = text.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if not begins and not ends:
        return _insert_region(lines, body)
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise RegionError(f"expected one '{BEGIN}' followed by one '{END}', found "
                          f"{len(begins)} and {len(ends)}")
    b, e = begins[0], ends[0]
    return "".join(lines[:b + 1]) + body + "".join(lines[e:])


def _insert_region(lines, body):
    heading = next((i for i, line in enumerate(lines) if line.startswith("#")), None)
    at = 0 if heading is None else heading + 1
    head = lines[:at]
    if head and not head[-1].endswith("\n"):
        head[-1] += "\n"
    return "".join(head) + BEGIN + "\n" + body + END + "\n\n" + "".join(lines[at:])


# ---------------------------------------------------------------- tables

def _algo_order(algos, first):
    return sorted(algos, key=lambda a: (a not in first, not a.startswith("ibmc"), a))


def ratio_table(med, baseline, first, better):
    """Per layout and size, each algorithm's median, and each one's ratio
    to the baseline algorithm measured in the same run."""
    algos = _algo_order({k[0] for k in med}, first)
    others = [a for a in algos if a != baseline]
    keys = sorted({k[1:] for k in med}, key=lambda k: (k[1], k[0], k[2]))
    rows = []
    for ranks, nodes, size in keys:
        cells = [bd.fmt(med.get((a, ranks, nodes, size))) for a in algos]
        base = med.get((baseline, ranks, nodes, size))
        ratios = []
        for a in others:
            v = med.get((a, ranks, nodes, size))
            ratios.append(f"{v / base:.2f}" if v is not None and base else "—")
        rows.append([bd.layout_key(ranks, nodes), size] + cells + ratios)
    header = ["ranks:nodes", "bytes"] + algos + (
        [f"{a} / {baseline}" for a in others] if baseline in algos else [])
    if baseline not in algos:
        rows = [r[:2 + len(algos)] for r in rows]
    return bd.md_table(header, rows, "lr" + "r" * (len(header) - 2)) + f"\n\n({better})\n"


def allgather_table(med):
    algos = _algo_order({k[0] for k in med}, ("ibmc_node_rd",))
    keys = sorted({k[1:] for k in med}, key=lambda k: (k[1], k[0], k[2]))
    rows = []
    for ranks, nodes, size in keys:
        get = lambda a: med.get((a, ranks, nodes, size))  # noqa: E731
        cells = [bd.fmt(get(a)) for a in algos]
        stock = [get(a) for a in STOCK_ALLGATHER if get(a) is not None]
        rd, off = get("ibmc_node_rd"), get("ibmc_node_rd:nooverlap")
        best = f"{rd / min(stock):.2f}" if rd is not None and stock else "—"
        saves = f"{100 * (off - rd) / off:.0f} %" if rd is not None and off else "—"
        rows.append([bd.layout_key(ranks, nodes), size] + cells + [best, saves])
    header = ["ranks:nodes", "bytes/rank"] + algos + ["node_rd / best stock", "overlap saves"]
    return bd.md_table(header, rows, "lr" + "r" * (len(header) - 2)) + (
        "\n\n(µs, median over repetitions of the mean per call; best stock: the fastest of "
        + ", ".join(STOCK_ALLGATHER) + " at that size; below 1 is better for ibmc_node_rd)\n")


def transport_tables(tr):
    out = []
    avg = tr.transport_stat(1)
    if avg:
        peers = sorted({k[2] for k in avg})
        keys = sorted({(k[0], k[1], k[4], k[3]) for k in avg})
        rows = []
        for pattern, op, mode, size in keys:
            cells = []
            for n in peers:
                v = avg.get((pattern, op, n, size, mode))
                cells.append("—" if v is None else f"{v:.2f} ({v / n:.2f})")
            rows.append([pattern, op, "one in flight" if mode == "one" else "all at once", size] + cells)
        out.append(bd.md_table(["pattern", "op", "mode", "bytes"] + [f"{n} peers" for n in peers],
                               rows, "lllr" + "r" * len(peers)))
        out.append("\n(µs per round, RTT/2, median over repetitions of the average over rounds; in "
                   "brackets per peer, i.e. divided by the number of peers)\n")
    post = {k: v for k, v in tr.post.items()}
    if post:
        rows = [(op, size, *(bd.fmt(bd.median([t[i] for t in v])) for i in range(3)))
                for (op, size), v in sorted(post.items())]
        out.append(bd.md_table(["ibv_post_send of", "bytes", "min µs", "avg µs", "max µs"], rows, "lrrrr"))
        out.append("")
    if tr.copy:
        rows = [(size, *(bd.fmt(bd.median([t[i] for t in v]), 3) for i in range(3)))
                for size, v in sorted(tr.copy.items())]
        out.append(bd.md_table(["memcpy of bytes", "min µs", "avg µs", "max µs"], rows, "rrrr"))
        out.append("")
    if tr.mtu:
        out.append(f"UD payload per packet (mtu line): {bd.median(tr.mtu):g} bytes.\n")
    return "\n".join(out)


def params_table(params):
    rows = [(p.name, bd.format_number(p.value), p.unit, p.note) for p in params]
    return bd.md_table(["parameter", "value", "unit", "derived from"], rows, "lrll")


# ---------------------------------------------------------------- region

def conditions_section(out):
    lines = []
    for part in out.PARTS:
        cond = out.conditions.get(part, {})
        if cond.get("lines"):
            lines.append(f"- {part}: " + " ".join(cond["lines"]))
        elif getattr(out, part) is not None:
            lines.append(f"- {part}: no conditions.txt")
    return "\n".join(lines) if lines else "- no conditions.txt in any part"


def run_date(out):
    """The parts' dates: one, or the first to the last when parts come from
    different runs (each part's own date is listed under the heading)."""
    dates = sorted(c["date"] for c in out.conditions.values() if "date" in c)
    if not dates:
        return "date unknown"
    return dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"


def commands(out, outdir, doc, img):
    given = [c for cond in out.conditions.values() for c in cond.get("commands", [])]
    cmds = list(dict.fromkeys(given)) or ["maint/bench-all"]
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rel = [p if os.path.relpath(p, top).startswith("..") else os.path.relpath(p, top)
           for p in (outdir, doc, img)]
    cmds.append(f"maint/bench-all --report {rel[0]}   # or: python3 bench/report.py {rel[0]} "
                f"--doc {rel[1]} --img {rel[2]}")
    return "```sh\n" + "\n".join(cmds) + "\n```"


def build_region(outdir, doc, img, params=None, draw=True):
    out = bd.Outdir(outdir)
    if params is None:
        params = model.calibrate(outdir)
    P = bd.params_dict(params)
    s = []
    s.append("<!-- generated by bench/report.py; edit the script or rerun it, not this region -->")
    s.append(f"## MPI_Bcast, MPI_Allgather and the transport study: maint/bench-all ({run_date(out)})")
    s.append("")
    shown = os.path.relpath(outdir, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    s.append(f"Output directory `{shown if not shown.startswith('..') else outdir}`. "
             "Conditions of each part (its `conditions.txt`):")
    s.append("")
    s.append(conditions_section(out))
    s.append("")
    s.append(commands(out, outdir, doc, img))
    s.append("")
    _section_pt2pt(s, outdir)
    _section_bcast(s, out)
    _section_allgather(s, out)
    _section_transport(s, out)
    _section_model(s, out, outdir, params, P)
    _section_figures(s, outdir, doc, img, params, draw)
    # the pieces end with or without a newline; one blank line between them
    return re.sub(r"\n{3,}", "\n\n", "\n".join(s)).rstrip("\n") + "\n"


def _section_pt2pt(s, outdir):
    """bench/run-compare.sh's own table (ibmc, ch4:ofi, perftest), as it
    wrote it: that script owns the parsing of its raw outputs."""
    path = os.path.join(outdir, "pt2pt", "summary.md")
    s += ["### Point-to-point: ibmc, stock ch4:ofi and perftest (bench/run-compare.sh)", ""]
    if not os.path.exists(path):
        s += ["No `pt2pt/summary.md` in this run.", ""]
        return
    with open(path) as f:
        body = f.read().strip()
    # its headings go one level below this section's
    s += [re.sub(r"^(#+) ", lambda m: "#" * max(len(m.group(1)), 4) + " ", body, flags=re.M), ""]


def _section_bcast(s, out):
    if out.bcast is None:
        s += ["### MPI_Bcast", "", "No `bcast/raw.txt` in this run.", ""]
        return
    for test, title, better in (
            ("latency", "MPI_Bcast latency (µs, median; ratio to binomial of the same run)",
             "below 1 is better than binomial"),
            ("rate", "MPI_Bcast throughput (broadcasts/s, median; ratio to binomial)",
             "above 1 is better than binomial"),
            ("skew", "Time in MPI_Bcast with receivers delayed "
                     + (f"up to {out.conditions['bcast']['skew']} µs" if "skew" in out.conditions.get("bcast", {})
                        else "at random") + " (µs, median; ratio to binomial)",
             "below 1 is better than binomial")):
        med = out.bcast.medians(test)
        if med:
            s += [f"### {title}", "", ratio_table(med, "binomial", ("ibmc_mcast",), better)]
    sweep = out.bcast.skew_sweep()
    if sweep:
        s += [skew_sweep_table(sweep)]
    pt = [v for k, vs in out.bcast.values.items() if k[0] == "pt2pt" for v in vs]
    if pt:
        s += [f"One-way MPI point-to-point latency measured by the runs (pt2pt): median "
              f"{bd.fmt(bd.median(pt))} µs over {len(pt)} measurements (half a 0-byte ping-pong "
              f"in each iteration of the latency test, per size and run).", ""]


def _section_allgather(s, out):
    s.append("### MPI_Allgather latency")
    s.append("")
    if out.allgather is None:
        s += ["No `allgather/raw.txt` in this run.", ""]
        return
    s += [allgather_table(out.allgather.medians()), ""]


def _section_transport(s, out):
    s.append("### Transport study (seed 004): 1:n and n:1 over each transport")
    s.append("")
    if out.transport is None:
        s += ["No `transport/raw.txt` in this run.", ""]
        return
    s += [transport_tables(out.transport), ""]


def _section_model(s, out, outdir, params, P):
    s += ["### The model's parameters", "",
          "Calibrated by `bench/model.py calibrate` from this run (rules in its header):", ""]
    s += [params_table(params) if params else "Nothing to calibrate from.", ""]
    s += ["### Model against measurement", ""]
    text, _ = model.validate_text(P, outdir)
    s += [text]
    s += ["### Projection to 8192 nodes", "", "With this run's parameters:", ""]
    if out.conditions.get("transport", {}).get("vm") == "yes":
        s += ["(These are the VM's costs, Soft-RoCE under emulation: the tables show what the "
              "formulas make of them, not a forecast for real hardware; the published "
              "parameters further down are the ones to read for that.)", ""]
    s += [_guarded(lambda: model.project_text(params, PROJECTION_NODES, PROJECTION_BYTES,
                                              PROJECTION_PPN, seed_note=False))]
    published = model.published_params()
    s += ["With published parameters of real InfiniBand hardware (`bench/model.py project "
          "published`; assumptions labelled):", "", model.published_table(), ""]
    s += [model.project_text(published, PROJECTION_NODES, PROJECTION_BYTES, PROJECTION_PPN)]
    s += [f"### Co-roots (seed 000 §7.2), {COROOT_NODES} nodes", "", "With this run's parameters:", ""]
    s += [_guarded(lambda: model.coroots_text(params, COROOT_NODES))]
    pub = model.coroots_text(published, COROOT_NODES).rstrip("\n").splitlines()
    s += ["With the published parameters: " + next(l for l in pub if l.startswith("choice:")),
          "", "and " + next(l for l in pub if l.startswith("choice with M")), ""]


def skew_sweep_table(sweep):
    """Time in MPI_Bcast against the skew, per layout, at the largest size
    of the sweep: one column per algorithm."""
    size = max(k[3] for k in sweep)
    pts = {k: dict(v) for k, v in sweep.items() if k[3] == size}
    algos = sorted({k[0] for k in pts}, key=lambda a: (not a.startswith("ibmc"), a))
    layouts = sorted({k[1:3] for k in pts}, key=lambda rn: (rn[1], rn[0]))
    rows = []
    for ranks, nodes in layouts:
        skews = sorted({x for k, v in pts.items() if k[1:3] == (ranks, nodes) for x in v})
        for skew in skews:
            rows.append([f"{ranks}:{nodes}", f"{skew:g}"] +
                        [bd.fmt(pts[(a, ranks, nodes, size)][skew])
                         if skew in pts.get((a, ranks, nodes, size), {}) else "-" for a in algos])
    return "\n".join([f"### Time in MPI_Bcast against skew ({size} B; µs, median)", "",
                      "Each receiver waits a random time of up to the skew before MPI_Bcast "
                      "(seed 000 §6.4).", "",
                      bd.md_table(["ranks:nodes", "skew µs"] + algos, rows), ""])


def _guarded(make):
    try:
        return make()
    except model.MissingParam as e:
        return f"Not computed: the parameters of this run lack {e}.\n"


def _section_figures(s, outdir, doc, img, params, draw):
    if draw:
        plots.make_all(outdir, img, params or None)
    doc_dir = os.path.dirname(os.path.abspath(doc))
    links = []
    for name, title in plots.FIGURE_TITLES.items():
        path = os.path.join(img, name)
        if os.path.isfile(path):
            rel = os.path.relpath(os.path.abspath(path), doc_dir).replace(os.sep, "/")
            links.append(f"![{title}]({rel})")
    s += ["### Figures", ""]
    s += ["\n\n".join(links) if links else "No figures in the image directory (matplotlib missing?).", ""]


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description="Regenerate the bench-all region of doc/benchmarks.md")
    ap.add_argument("outdir")
    ap.add_argument("--doc", default="doc/benchmarks.md")
    ap.add_argument("--img", default="doc/img")
    ap.add_argument("--params", help="params file (default: calibrate from OUTDIR)")
    ap.add_argument("--no-plots", action="store_true", help="do not draw; link what is in --img")
    a = ap.parse_args(argv)
    try:
        params = model.load_params(a.params) if a.params else None
        with open(a.doc, encoding="utf-8", newline="") as fh:
            text = fh.read()
        body = build_region(a.outdir, a.doc, a.img, params, draw=not a.no_plots)
        new = replace_region(text, body)
    except (OSError, ValueError, RegionError) as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1
    with open(a.doc, "w", encoding="utf-8", newline="") as fh:
        fh.write(new)
    print(f"report.py: {a.doc}: bench-all region regenerated ({body.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
