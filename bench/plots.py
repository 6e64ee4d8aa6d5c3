#!/usr/bin/env python3
# bench/plots.py: PNG figures of a bench-all output directory.
#
#   python3 bench/plots.py OUTDIR IMGDIR [--params PARAMS]
#
# Writes into IMGDIR, one figure each (when its inputs exist):
#   bcast_latency.png     MPI_Bcast latency against size, per algorithm and layout
#   bcast_rate.png        broadcasts per second against size
#   bcast_skew.png        time inside MPI_Bcast against the receivers' delay (the
#                         skew sweep), or against size at one delay
#   allgather_latency.png MPI_Allgather latency against size, per algorithm
#   allgather_overlap.png ibmc_node_rd with the copy-out overlap on and off
#   model_bcast.png       model (bench/model.py) against measured, Bcast
#   model_allgather.png   model against measured, Allgather
#   projection.png        Bcast projected to 8192 nodes (these parameters and published ones)
#   projection_allgather.png  node-aware against flat recursive doubling, to 8192 nodes
#   transport.png         the seed-004 study: time per peer against peers, 1:n and n:1
# and prints the list of files written. A figure whose inputs are missing
# is skipped with a line on stderr; nothing here stops on bad input. The
# model's parameters are calibrated from OUTDIR unless --params is given.
# Needs matplotlib (Debian: python3-matplotlib); it draws with Agg.

import argparse
import os
import sys

sys.dont_write_bytecode = True     # leave no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchdata as bd  # noqa: E402
import model  # noqa: E402

FIGSIZE = (8, 5)     # at 100 dpi: 800 x 500 px
DPI = 100
PROJECTION_NODES = [2 ** k for k in range(1, 14)]   # 2 .. 8192
ALGO_COLORS = {
    "ibmc_mcast": "tab:red", "binomial": "tab:blue", "auto": "tab:gray",
    "ibmc_node_rd": "tab:red", "ibmc_node_rd:nooverlap": "tab:orange",
    "ibmc_node_rd:mcast": "tab:purple", "recursive_doubling": "tab:blue",
    "brucks": "tab:green", "ring": "tab:brown", "ofi": "tab:pink",
}
STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


class Skip(Exception):
    """Inputs of a figure are missing: say so and go on."""


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _color(algo, index):
    return ALGO_COLORS.get(algo, f"C{index % 10}")


def _new_figure(plt, title, caption, ncols=1):
    fig, axes = plt.subplots(1, ncols, figsize=FIGSIZE, dpi=DPI, squeeze=False)
    fig.suptitle(title, fontsize=12)
    fig.text(0.5, 0.01, caption, ha="center", va="bottom", fontsize=8, wrap=True)
    return fig, list(axes[0])


def _save(plt, fig, imgdir, name, legend_handles=None):
    """One legend per figure: inside the axes when there is one, above
    the panels (below the title) when there are several."""
    axes = fig.get_axes()
    top = 0.94
    if legend_handles is not None and legend_handles[0]:
        handles, labels = legend_handles
        if len(axes) == 1:
            axes[0].legend(handles, labels, loc="best", fontsize=7, framealpha=0.85)
        else:
            ncol = min(3, len(labels))
            rows = (len(labels) + ncol - 1) // ncol
            top = 0.92 - 0.035 * rows
            fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.935),
                       ncol=ncol, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, top))
    path = os.path.join(imgdir, name)
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return path


def _human(value, _pos=None):
    """1, 64, 1K, 64K, 1M: tick labels for sizes and node counts."""
    v = int(round(value))
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if v >= div and v % div == 0:
            return f"{v // div}{unit}"
    return str(v)


def _size_axis(ax, label="message size (bytes)"):
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=4))
    ax.xaxis.set_major_formatter(FuncFormatter(_human))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(label)
    ax.grid(True, which="major", alpha=0.3)


def _layouts(keys):
    """Sorted distinct (ranks, nodes) of keys (algo, ranks, nodes, size)."""
    return sorted({(k[1], k[2]) for k in keys}, key=lambda rn: (rn[1], rn[0]))


def _series_by(med, algos, layouts):
    """Yield (algo, layout index, (ranks, nodes), sizes, values)."""
    for algo in algos:
        for li, (ranks, nodes) in enumerate(layouts):
            pts = sorted((k[3], v) for k, v in med.items() if k[0] == algo and k[1:3] == (ranks, nodes))
            if pts:
                yield algo, li, (ranks, nodes), [p[0] for p in pts], [p[1] for p in pts]


def _algos(keys, first=("ibmc_mcast", "ibmc_node_rd")):
    return sorted({k[0] for k in keys}, key=lambda a: (a not in first, not a.startswith("ibmc"), a))


def _spans_decades(values):
    vals = [v for v in values if v > 0]
    return bool(vals) and max(vals) / min(vals) >= 10


def _line_figure(plt, imgdir, name, med, title, ylabel, caption, xlabel="message size (bytes)"):
    if not med:
        raise Skip("no lines for it")
    layouts = _layouts(med)
    algos = _algos(med)
    log = _spans_decades(list(med.values()))
    # a log axis cannot show a value <= 0 (a latency less the subtracted
    # point-to-point time can be, in a noisy run): leave such points out and
    # say how many
    dropped = sum(1 for v in med.values() if v <= 0) if log else 0
    if dropped:
        caption += f"; {dropped} median(s) <= 0 left out"
    fig, (ax,) = _new_figure(plt, title, caption)
    for algo, li, (ranks, nodes), xs, ys in _series_by(med, algos, layouts):
        if log:
            xs, ys = zip(*[(x, y) for x, y in zip(xs, ys) if y > 0]) if any(y > 0 for y in ys) \
                else ((), ())
        ax.plot(xs, ys, STYLES[li % len(STYLES)], marker=MARKERS[li % len(MARKERS)], markersize=4,
                color=_color(algo, algos.index(algo)), label=f"{algo}, {ranks}:{nodes}")
    _size_axis(ax, xlabel)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    return _save(plt, fig, imgdir, name, ax.get_legend_handles_labels())


# ---------------------------------------------------------------- figures

def fig_bcast_latency(plt, out, imgdir, params):
    if out.bcast is None:
        raise Skip("no bcast/raw.txt")
    return _line_figure(plt, imgdir, "bcast_latency.png", out.bcast.medians("latency"),
                        "MPI_Bcast latency (median), per algorithm and ranks:nodes",
                        "latency (µs)", out.caption("bcast"))


def fig_bcast_rate(plt, out, imgdir, params):
    if out.bcast is None:
        raise Skip("no bcast/raw.txt")
    return _line_figure(plt, imgdir, "bcast_rate.png", out.bcast.medians("rate"),
                        "MPI_Bcast throughput: back-to-back broadcasts from one root",
                        "broadcasts per second", out.caption("bcast"))


def fig_bcast_skew(plt, out, imgdir, params):
    if out.bcast is None:
        raise Skip("no bcast/raw.txt")
    sweep = out.bcast.skew_sweep()
    if sweep:
        return _skew_sweep_figure(plt, imgdir, sweep, out.caption("bcast"))
    med = out.bcast.medians("skew")
    if not med:
        raise Skip("no skew lines")
    skew = out.conditions.get("bcast", {}).get("skew")
    delay = f"up to {skew} µs" if skew else "at random"
    return _line_figure(plt, imgdir, "bcast_skew.png", med,
                        f"Time in MPI_Bcast, receivers delayed {delay} (process skew)",
                        "time inside MPI_Bcast (µs)", out.caption("bcast"))


def _skew_sweep_figure(plt, imgdir, sweep, caption):
    """Time in MPI_Bcast against the skew, at the largest size every series
    of the sweep has."""
    size = min(max(k[3] for k in sweep if k[:3] == s[:3]) for s in sweep)
    pts = {k: v for k, v in sweep.items() if k[3] == size}
    layouts = _layouts(pts)
    algos = _algos(pts)
    fig, (ax,) = _new_figure(plt, f"Time in MPI_Bcast against process skew, {size} B",
                             caption)
    for (algo, ranks, nodes, _), series in sorted(pts.items(), key=lambda kv: (algos.index(kv[0][0]), kv[0][1:])):
        li = layouts.index((ranks, nodes))
        ax.plot([p[0] for p in series], [p[1] for p in series], STYLES[li % len(STYLES)],
                marker=MARKERS[li % len(MARKERS)], markersize=4,
                color=_color(algo, algos.index(algo)), label=f"{algo}, {ranks}:{nodes}")
    ax.set_xlabel("most a receiver is delayed before MPI_Bcast (µs, uniform at random)")
    ax.set_ylabel("mean time inside MPI_Bcast (µs)")
    ax.grid(True, which="major", alpha=0.3)
    return _save(plt, fig, imgdir, "bcast_skew.png", ax.get_legend_handles_labels())


def fig_allgather_latency(plt, out, imgdir, params):
    if out.allgather is None:
        raise Skip("no allgather/raw.txt")
    return _line_figure(plt, imgdir, "allgather_latency.png", out.allgather.medians(),
                        "MPI_Allgather latency (median of mean per call), per algorithm",
                        "latency (µs)", out.caption("allgather"), "bytes per rank")


def fig_allgather_overlap(plt, out, imgdir, params):
    if out.allgather is None:
        raise Skip("no allgather/raw.txt")
    med = out.allgather.medians()
    on = {k: v for k, v in med.items() if k[0] == "ibmc_node_rd"}
    off = {k: v for k, v in med.items() if k[0] == "ibmc_node_rd:nooverlap"}
    if not on or not off:
        raise Skip("needs both ibmc_node_rd and ibmc_node_rd:nooverlap")
    fig, (ax,) = _new_figure(plt, "ibmc_node_rd: copy-out overlapped with the next round, on and off "
                                  "(labels: time saved)", out.caption("allgather"))
    layouts = _layouts(on)
    for li, (ranks, nodes) in enumerate(layouts):
        pts = sorted((k[3], v, off.get(("ibmc_node_rd:nooverlap", ranks, nodes, k[3])))
                     for k, v in on.items() if k[1:3] == (ranks, nodes))
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], STYLES[li % 4], marker="o", markersize=4, color="tab:red",
                label=f"overlap on, {ranks}:{nodes}")
        both = [p for p in pts if p[2] is not None]
        ax.plot([p[0] for p in both], [p[2] for p in both], STYLES[li % 4], marker="s", markersize=4,
                color="tab:orange", label=f"overlap off, {ranks}:{nodes}")
        for x, v_on, v_off in both:
            ax.annotate(f"{100 * (v_off - v_on) / v_off:.0f}%", (x, v_on), textcoords="offset points",
                        xytext=(0, -12), ha="center", fontsize=7)
    _size_axis(ax, "bytes per rank")
    if _spans_decades(list(on.values()) + list(off.values())):
        ax.set_yscale("log")
    ax.set_ylabel("latency (µs)")
    return _save(plt, fig, imgdir, "allgather_overlap.png", ax.get_legend_handles_labels())


def _model_figure(plt, out, imgdir, params, op, name, title, part):
    if params is None:
        raise Skip("no model parameters (calibration found nothing)")
    rows = [r for r in model.validation_rows(bd.params_dict(params), out)
            if r.op == op and r.estimate is not None]
    if not rows:
        raise Skip(f"no {op} rows the model covers")
    fig, (ax,) = _new_figure(plt, title, out.caption(part))
    groups = sorted({(r.algo, r.ranks, r.nodes) for r in rows}, key=lambda g: (g[2], g[1], g[0]))
    algos = sorted({g[0] for g in groups})
    for gi, (algo, ranks, nodes) in enumerate(groups):
        pts = sorted((r.size, r.measured, r.model) for r in rows if (r.algo, r.ranks, r.nodes) == (algo, ranks, nodes))
        color = _color(algo, algos.index(algo))
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], linestyle="none", marker=MARKERS[gi % len(MARKERS)], color=color,
                label=f"measured {algo}, {ranks}:{nodes}")
        ax.plot(xs, [p[2] for p in pts], STYLES[gi % 4], color=color, label=f"model {algo}, {ranks}:{nodes}")
    _size_axis(ax, "message size (bytes)" if op == "Bcast" else "bytes per rank")
    if _spans_decades([r.measured for r in rows] + [r.model for r in rows]):
        ax.set_yscale("log")
    ax.set_ylabel("latency (µs)")
    return _save(plt, fig, imgdir, name, ax.get_legend_handles_labels())


def fig_model_bcast(plt, out, imgdir, params):
    return _model_figure(plt, out, imgdir, params, "Bcast", "model_bcast.png",
                         "MPI_Bcast: model (seed 000 §7, lines) against measured (markers)", "bcast")


def fig_model_allgather(plt, out, imgdir, params):
    return _model_figure(plt, out, imgdir, params, "Allgather", "model_allgather.png",
                         "MPI_Allgather: model (seed 001 §4, lines) against measured (markers)",
                         "allgather")


def _param_sets(params):
    sets = []
    if params is not None:
        sets.append(("parameters of this run", bd.params_dict(params)))
    sets.append(("published parameters (real InfiniBand)", bd.params_dict(model.published_params())))
    return sets


def _projection_figure(plt, out, imgdir, params, name, title, compute, series):
    """One panel per parameter set that has what compute() needs; a set
    that lacks a parameter is named in the caption instead of drawn."""
    panels, missing = [], []
    for label, P in _param_sets(params):
        try:
            panels.append((label, compute(P)))
        except model.MissingParam as e:
            missing.append(f"{label} lack {e}")
    if not panels:
        raise Skip("; ".join(missing))
    caption = out.caption("transport") + "; published: sources in bench/model.py"
    if missing:
        caption += "; not drawn: " + "; ".join(missing)
    fig, axes = _new_figure(plt, title, caption, ncols=len(panels))
    for ax, (label, rows) in zip(axes, panels):
        xs = [r["nodes"] for r in rows]
        for key, fmt_, color, legend in series:
            ax.plot(xs, [r[key] for r in rows], fmt_, markersize=3, color=color, label=legend)
        ax.set_title(label, fontsize=9)
        _size_axis(ax, "nodes")
        ax.set_ylabel("latency (µs)")
    return _save(plt, fig, imgdir, name, axes[0].get_legend_handles_labels())


def fig_projection(plt, out, imgdir, params, m=8):
    return _projection_figure(
        plt, out, imgdir, params, "projection.png",
        f"MPI_Bcast of {m} B projected to 8192 nodes (seed 000 §7)",
        lambda P: model.projection_bcast(P, PROJECTION_NODES, m),
        [("binomial", "-o", "tab:blue", "binomial"),
         ("single", "-s", "tab:red", "multicast, single root"),
         ("coroots", "--^", "tab:purple", "multicast, co-roots (s from §7.2)")])


def fig_projection_allgather(plt, out, imgdir, params, m=8, ppn=1):
    return _projection_figure(
        plt, out, imgdir, params, "projection_allgather.png",
        f"MPI_Allgather of {m} B per rank, {ppn} process per node, to 8192 nodes",
        lambda P: model.projection_allgather(P, PROJECTION_NODES, ppn, m),
        [("node_rd", "-o", "tab:red", "ibmc_node_rd (segments, RDMA)"),
         ("flat", "-s", "tab:blue", "flat recursive doubling (MPI)")])


def fig_transport(plt, out, imgdir, params):
    if out.transport is None or not out.transport.transport:
        raise Skip("no transport lines")
    # MIN, not AVG: with more processes than CPUs (the VM) a round's mean is
    # mostly waiting for a CPU; the fastest round is what the transport costs
    avg = out.transport.transport_stat(0)
    # one size per (pattern, op): the most common one, so that every curve
    # is at the size the study sweeps peers with
    fig, axes = _new_figure(plt, "Transport study (seed 004): round time per peer against peers",
                            out.caption("transport") + "; fastest round (RTT/2) divided by peers",
                            ncols=2)
    ops = sorted({k[1] for k in avg})
    handles, labels = [], []
    for ax, pattern in zip(axes, ("1:n", "n:1")):
        for oi, op in enumerate(ops):
            for mi, mode in enumerate(("one", "all")):
                size = _sweep_size(avg, pattern, op, mode)
                if size is None:
                    continue
                pts = sorted((k[2], v / k[2]) for k, v in avg.items()
                             if k[0] == pattern and k[1] == op and k[4] == mode and k[3] == size)
                if len(pts) < 1:
                    continue
                line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], STYLES[mi], marker=MARKERS[oi % 6],
                                markersize=4, color=f"C{oi}")
                label = f"{op}, {'one in flight' if mode == 'one' else 'all at once'}"
                if label not in labels:
                    handles.append(line)
                    labels.append(label)
        ax.set_title(f"{pattern}", fontsize=9)
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("peers")
        ax.set_ylabel("µs per peer")
        ax.grid(True, alpha=0.3)
    return _save(plt, fig, imgdir, "transport.png", (handles, labels))


def _sweep_size(avg, pattern, op, mode):
    counts = {}
    for k in avg:
        if k[0] == pattern and k[1] == op and k[4] == mode:
            counts.setdefault(k[3], set()).add(k[2])
    if not counts:
        return None
    return max(counts, key=lambda s: (len(counts[s]), -s))


# file name -> what the figure shows (report.py's image captions)
FIGURE_TITLES = {
    "bcast_latency.png": "MPI_Bcast latency against size",
    "bcast_rate.png": "MPI_Bcast throughput against size",
    "bcast_skew.png": "Time in MPI_Bcast with delayed receivers",
    "allgather_latency.png": "MPI_Allgather latency against size",
    "allgather_overlap.png": "ibmc_node_rd with copy-out overlap on and off",
    "model_bcast.png": "MPI_Bcast: model against measured",
    "model_allgather.png": "MPI_Allgather: model against measured",
    "projection.png": "MPI_Bcast projected to 8192 nodes",
    "projection_allgather.png": "MPI_Allgather projected to 8192 nodes",
    "transport.png": "Transport study: time per peer against peers",
}

FIGURES = [fig_bcast_latency, fig_bcast_rate, fig_bcast_skew, fig_allgather_latency,
           fig_allgather_overlap, fig_model_bcast, fig_model_allgather, fig_projection,
           fig_projection_allgather, fig_transport]


def calibrated_params(outdir):
    params = model.calibrate(outdir)
    return params or None


def make_all(outdir, imgdir, params=None):
    """Draw every figure whose inputs exist; return the paths written."""
    try:
        plt = _pyplot()
    except ImportError as e:
        print(f"plots.py: matplotlib unavailable ({e}); no figures", file=sys.stderr)
        return []
    os.makedirs(imgdir, exist_ok=True)
    out = bd.Outdir(outdir)
    if params is None:
        params = calibrated_params(outdir)
    written = []
    for figure in FIGURES:
        name = figure.__name__[4:]
        try:
            written.append(figure(plt, out, imgdir, params))
        except Skip as e:
            print(f"plots.py: {name} skipped: {e}", file=sys.stderr)
        except Exception as e:        # a figure must never stop the others
            plt.close("all")
            print(f"plots.py: {name} skipped: {type(e).__name__}: {e}", file=sys.stderr)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description="PNG figures of a bench-all output directory")
    ap.add_argument("outdir")
    ap.add_argument("imgdir")
    ap.add_argument("--params", help="params file (default: calibrate from OUTDIR)")
    a = ap.parse_args(argv)
    params = None
    if a.params:
        try:
            params = model.load_params(a.params)
        except (OSError, ValueError) as e:
            print(f"plots.py: {e}", file=sys.stderr)
            return 1
    for path in make_all(a.outdir, a.imgdir, params):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
