#!/usr/bin/env python3
"""Summarize a bench/run-compare.sh raw directory as markdown tables.

    python3 bench/summarize.py _build/bench/raw-YYYYmmdd-HHMMSS

Reads, for every repetition r:
  ibmc-<test>-rep<r>.out, ofi-<test>-rep<r>.out   ibmc_pt2pt_bench output
  perftest-ib_send_lat-rep<r>.out                 t_avg[usec] column
  perftest-ib_write_bw-rep<r>.out, ...ib_read_bw   BW average[MB/sec] column
plus *.failed / *.skipped / *.unavailable notes, and prints one table per
test with the per-size median over the repetitions.

Units: latency in microseconds (MPI: half the average round trip; perftest
ib_send_lat: t_avg, also half the round trip).  Bandwidth in MB/s with
1 MB = 10^6 bytes; perftest prints MB/s with 1 MB = 2^20 bytes, converted here.
"""
import glob
import math
import os
import re
import statistics
import sys

TESTS = ("latency", "bw", "bibw")
MIB_TO_MB = 1048576 / 1e6


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def number(tok):
    try:
        v = float(tok)
    except ValueError:
        return None
    # perftest prints 0.00 / inf / -nan when its clock calibration failed
    if not math.isfinite(v) or v <= 0.0:
        return None
    return v


def parse_mpi(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            v = number(f[1])
            if v is not None:
                out[int(f[0])] = v
    return out


def parse_perftest(text, column):
    """Rows after the header line that names `column`; value of that column.
    Rows can carry a warning glued to their end, so only leading tokens count."""
    out = {}
    idx = None
    for line in text.splitlines():
        # header names with a space in them: "BW_average[MB/sec]", "99% percentile[usec]"
        heads = re.sub(r"(BW|%) (peak|average|percentile)", r"\1_\2", line).split()
        if column in heads:
            idx = heads.index(column)
            continue
        if idx is None:
            continue
        f = line.split()
        if len(f) > idx and f[0].isdigit() and f[1].isdigit():
            v = number(f[idx])
            if v is not None:
                out[int(f[0])] = v
    return out


def collect(raw, pattern, parser):
    """{size: [values over reps]} and the number of repetition files."""
    per = {}
    files = sorted(glob.glob(os.path.join(raw, pattern)))
    for p in files:
        text = read(p) or ""
        for size, v in parser(text).items():
            per.setdefault(size, []).append(v)
    return per


def reps_of(raw):
    m = re.search(r"^reps: (\d+)", read(os.path.join(raw, "env.txt")) or "", re.M)
    return int(m.group(1)) if m else None


def fmt(vals, reps):
    if not vals:
        return "—", None
    med = statistics.median(vals)
    s = f"{med:.2f}"
    if reps and len(vals) < reps:
        s += f" ({len(vals)}/{reps})"
    return s, med


def best(vals, lower_is_better):
    """The best repetition: the VM's runs fall into a fast and a slow mode
    (bench/README.md, "Caveats"), and the best of N compares fast mode
    with fast mode where a median may compare a fast with a slow one."""
    if not vals:
        return None
    return min(vals) if lower_is_better else max(vals)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.2f}"


def notes_for(raw, impl, test):
    """Human-readable reasons why numbers are missing."""
    notes = []
    if read(os.path.join(raw, f"{impl}.unavailable")):
        return []  # said once, at the top
    for p in sorted(glob.glob(os.path.join(raw, f"{impl}-{test}-rep*.failed"))):
        rep = re.search(r"rep(\d+)", os.path.basename(p)).group(1)
        notes.append(f"{impl} {test} rep {rep} failed:\n```\n{(read(p) or '').rstrip()}\n```")
    skipped = sorted(glob.glob(os.path.join(raw, f"{impl}-{test}-rep*.skipped")))
    if skipped:
        reps = ", ".join(re.search(r"rep(\d+)", os.path.basename(p)).group(1) for p in skipped)
        notes.append(f"{impl} {test} reps {reps}: {(read(skipped[0]) or '').strip()}")
    return notes


def perftest_notes(raw, tool):
    notes = []
    for p in sorted(glob.glob(os.path.join(raw, f"perftest-{tool}-rep*.failed"))):
        rep = re.search(r"rep(\d+)", os.path.basename(p)).group(1)
        notes.append(f"{tool} rep {rep} failed:\n```\n{(read(p) or '').rstrip()}\n```")
    bad = 0
    for p in sorted(glob.glob(os.path.join(raw, f"perftest-{tool}-rep*.out"))):
        bad += len(re.findall(r"Correlation coefficient", read(p) or ""))
    if bad:
        notes.append(f"{tool}: perftest's clock calibration failed {bad} time(s) "
                     "(\"Correlation coefficient r^2 < 0.9\", the emulated TSC is irregular); "
                     "those sizes printed 0.00 or inf and are left out of the medians")
    return notes


def tests_of(env):
    """The tests the run made ("tests:" in env.txt; older runs made all)."""
    m = re.search(r"^tests: (.*)$", env, re.M)
    wanted = m.group(1).split() if m else TESTS
    return [t for t in TESTS if t in wanted]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py RAW_DIR")
    raw = sys.argv[1]
    reps = reps_of(raw)
    env = read(os.path.join(raw, "env.txt")) or ""
    out = []
    out.append(f"# ibmc point-to-point comparison ({os.path.basename(os.path.normpath(raw))})")
    out.append("")
    for key in ("date", "host", "pclmulqdq", "reps", "tests", "binding", "ibmc prefix", "ofi prefix", "device",
                "perftest"):
        m = re.search(rf"^{re.escape(key)}: (.*)$", env, re.M)
        if m:
            out.append(f"- {key}: {m.group(1)}")
    secs = read(os.path.join(raw, "fabric-seconds"))
    if secs:
        out.append(f"- time on the fabric side: {secs.strip()} s")
    out.append("- each cell: median over the repetitions; \"(k/n)\": only k of n repetitions "
               "gave a number; —: none; \"best\" ratios: best repetition against best "
               "repetition (lowest latency, highest bandwidth)")
    for impl in ("ibmc", "ofi"):
        un = read(os.path.join(raw, f"{impl}.unavailable"))
        if un:
            first, _, rest = un.strip().partition("\n")
            out.append(f"- **{impl}: {first}**" + (f"\n\n```\n{rest}\n```\n" if rest else ""))
    out.append("")

    lat_pt = collect(raw, "perftest-ib_send_lat-rep*.out",
                     lambda t: parse_perftest(t, "t_avg[usec]"))
    bw_w = collect(raw, "perftest-ib_write_bw-rep*.out",
                   lambda t: {s: v * MIB_TO_MB
                              for s, v in parse_perftest(t, "BW_average[MB/sec]").items()})
    bw_r = collect(raw, "perftest-ib_read_bw-rep*.out",
                   lambda t: {s: v * MIB_TO_MB
                              for s, v in parse_perftest(t, "BW_average[MB/sec]").items()})

    for test in tests_of(env):
        ib = collect(raw, f"ibmc-{test}-rep*.out", parse_mpi)
        of = collect(raw, f"ofi-{test}-rep*.out", parse_mpi)
        sizes = sorted(set(ib) | set(of))
        if not sizes:
            sizes = [1 << k for k in range(23)]
        notes = notes_for(raw, "ibmc", test) + notes_for(raw, "ofi", test)
        if test == "latency":
            out.append("## latency: half round trip, microseconds (lower is better)")
            out.append("")
            out.append("| size (B) | ibmc (us) | ofi (us) | ib_send_lat (us) | ibmc/ofi | ibmc/perftest "
                       "| ibmc/ofi best | ibmc/perftest best |")
            out.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
            for s in sizes:
                a, am = fmt(ib.get(s), reps)
                b, bm = fmt(of.get(s), reps)
                c, cm = fmt(lat_pt.get(s), reps)
                ab, bb, cb = (best(x.get(s), True) for x in (ib, of, lat_pt))
                out.append(f"| {s} | {a} | {b} | {c} | {ratio(am, bm)} | {ratio(am, cm)} "
                           f"| {ratio(ab, bb)} | {ratio(ab, cb)} |")
            notes += perftest_notes(raw, "ib_send_lat")
        else:
            what = ("uni-directional bandwidth (window of 64)" if test == "bw"
                    else "bi-directional bandwidth, both directions summed (window of 64 each way)")
            out.append(f"## {test}: {what}, MB/s = 10^6 B/s (higher is better)")
            out.append("")
            out.append("| size (B) | ibmc (MB/s) | ofi (MB/s) | ib_write_bw (MB/s) | ib_read_bw (MB/s) "
                       "| ibmc/ofi | ibmc/max(write,read) | ibmc/ofi best |")
            out.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
            for s in sizes:
                a, am = fmt(ib.get(s), reps)
                b, bm = fmt(of.get(s), reps)
                w, wm = fmt(bw_w.get(s), reps)
                r, rm = fmt(bw_r.get(s), reps)
                ceiling = max([x for x in (wm, rm) if x is not None], default=None)
                ab, bb = best(ib.get(s), False), best(of.get(s), False)
                out.append(f"| {s} | {a} | {b} | {w} | {r} | {ratio(am, bm)} | {ratio(am, ceiling)} "
                           f"| {ratio(ab, bb)} |")
            if test == "bibw":
                out.append("")
                out.append("perftest columns are the uni-directional ib_write_bw/ib_read_bw figures; "
                           "a bi-directional MPI figure can reach twice them.")
            else:
                notes += perftest_notes(raw, "ib_write_bw") + perftest_notes(raw, "ib_read_bw")
        if notes:
            out.append("")
            out.append("Notes:")
            out.append("")
            for n in notes:
                out.append(f"- {n}")
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
