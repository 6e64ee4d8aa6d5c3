# bench/benchdata.py: reading a bench-all output directory, shared by
# bench/model.py, bench/plots.py and bench/report.py (import it; it has no
# command line of its own).
#
# Layout of OUTDIR (maint/bench-all writes it):
#   bcast/raw.txt       ALGO RANKS NODES TEST SIZE VALUE UNIT
#   allgather/raw.txt   ALGO RANKS NODES BYTES MEAN_US MAX_US
#   transport/raw.txt   transport PATTERN OP PEERS SIZE MODE MIN_US AVG_US MAX_US
#                       post OP SIZE MIN_US AVG_US MAX_US
#                       copy SIZE MIN_US AVG_US MAX_US
#                       mtu BYTES
#   */conditions.txt    "# " lines: date, kernel, CPUs, devices, mtu, vm;
#                       "# command: ..." and "# commit: ..." (maint/bench-all)
# A key that appears more than once is a repetition; every consumer works
# on the median of the repetitions. Lines that do not parse are ignored
# (a truncated run must not stop the report), but counted.
#
# Also here: the params file (NAME VALUE UNIT # derivation), least squares,
# and small formatting helpers, so that no parser exists twice.

import math
import os
import re
import statistics
from collections import defaultdict


def median(values):
    """Median of a non-empty list (the mean of the middle two if even)."""
    return statistics.median(values)


# ---------------------------------------------------------------- raw files

class BcastData:
    """bcast/raw.txt: values[(test, algo, ranks, nodes, size)] = [v, ...];
    the skew sweep apart: sweep[(algo, ranks, nodes, size, skew)] = [v, ...]."""

    def __init__(self):
        self.values = defaultdict(list)
        self.sweep = defaultdict(list)
        self.units = {}
        self.skipped = 0
        self.extra = {}      # NAME -> value for lines such as "T_shm 0.8 us"

    def medians(self, test):
        """{(algo, ranks, nodes, size): median} for one test."""
        return {k[1:]: median(v) for k, v in self.values.items() if k[0] == test}

    def tests(self):
        return sorted({k[0] for k in self.values})

    def skew_sweep(self):
        """{(algo, ranks, nodes, size): [(skew µs, median µs), ...] by skew}."""
        out = defaultdict(list)
        for (algo, ranks, nodes, size, skew), v in sorted(self.sweep.items()):
            out[(algo, ranks, nodes, size)].append((skew, median(v)))
        return dict(out)


class AllgatherData:
    """allgather/raw.txt: mean[(algo, ranks, nodes, bytes)] = [us, ...]."""

    def __init__(self):
        self.mean = defaultdict(list)
        self.max = defaultdict(list)
        self.skipped = 0

    def medians(self):
        return {k: median(v) for k, v in self.mean.items()}


class TransportData:
    """transport/raw.txt, every kind of line kept apart."""

    def __init__(self):
        # (pattern, op, peers, size, mode) -> [(min, avg, max), ...]
        self.transport = defaultdict(list)
        self.post = defaultdict(list)      # (op, size) -> [(min, avg, max)]
        self.copy = defaultdict(list)      # size -> [(min, avg, max)]
        self.mtu = []
        self.extra = {}
        self.skipped = 0

    def transport_stat(self, index):
        """{(pattern, op, peers, size, mode): median of column index}, 0 (MIN),
        1 (AVG) or 2 (MAX)."""
        return {k: median([t[index] for t in v]) for k, v in self.transport.items()}

    def post_stat(self, index):
        """{(op, size): median of column index} of the post lines."""
        return {k: median([t[index] for t in v]) for k, v in self.post.items()}

    def copy_stat(self, index):
        """{size: median of column index} of the copy lines."""
        return {k: median([t[index] for t in v]) for k, v in self.copy.items()}


def _numbers(fields):
    return [float(f) for f in fields]


# A named value on a line of its own, e.g. "T_shm 0.8 us": how a run can
# hand the model a parameter that the benchmark programs do not measure.
_EXTRA_RE = re.compile(r"^(T_[A-Za-z_]+)\s+([-+0-9.eE]+)(?:\s+(\S+))?\s*$")


def _extra(line, store):
    m = _EXTRA_RE.match(line.strip())
    if not m:
        return False
    store[m.group(1)] = float(m.group(2))
    return True


def read_bcast(path):
    data = BcastData()
    for line in _lines(path):
        f = line.split()
        try:
            if _extra(line, data.extra):
                continue
            algo, ranks, nodes, test, size, value = f[0], int(f[1]), int(f[2]), f[3], int(f[4]), float(f[5])
        except (IndexError, ValueError):
            data.skipped += 1
            continue
        if test == "skewsweep":
            # "... skewsweep SIZE VALUE us SKEW": one point of the sweep
            try:
                data.sweep[(algo, ranks, nodes, size, float(f[7]))].append(value)
            except (IndexError, ValueError):
                data.skipped += 1
            continue
        data.values[(test, algo, ranks, nodes, size)].append(value)
        if len(f) > 6:
            data.units[test] = f[6]
    return data


def read_allgather(path):
    data = AllgatherData()
    for line in _lines(path):
        f = line.split()
        try:
            key = (f[0], int(f[1]), int(f[2]), int(f[3]))
            mean = float(f[4])
        except (IndexError, ValueError):
            data.skipped += 1
            continue
        data.mean[key].append(mean)
        if len(f) > 5:
            try:
                data.max[key].append(float(f[5]))
            except ValueError:
                pass
    return data


def read_transport(path):
    data = TransportData()
    for line in _lines(path):
        f = line.split()
        try:
            if f[0] == "transport":
                key = (f[1], f[2], int(f[3]), int(f[4]), f[5])
                data.transport[key].append(tuple(_numbers(f[6:9])))
            elif f[0] == "post":
                data.post[(f[1], int(f[2]))].append(tuple(_numbers(f[3:6])))
            elif f[0] == "copy":
                data.copy[int(f[1])].append(tuple(_numbers(f[2:5])))
            elif f[0] == "mtu":
                data.mtu.append(int(f[1]))
            elif not _extra(line, data.extra):
                data.skipped += 1
        except (IndexError, ValueError):
            data.skipped += 1
    # a short line ("post x 8 1.0") would leave a tuple too short to use
    for store in (data.transport, data.post, data.copy):
        for key in list(store):
            store[key] = [t for t in store[key] if len(t) == 3]
            if not store[key]:
                del store[key]
    return data


def _lines(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.strip() and not line.lstrip().startswith("#"):
                yield line


# ---------------------------------------------------------------- conditions

_DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2})(?::\d{2})?\s*(UTC)?)?")
_CPU_RE = re.compile(r"(\d+)\s+CPUs?\s*\(([^)]*)\)")
_DEV_RE = re.compile(r"devices?:\s*([^,\s]+(?:\s*,\s*[^,\s]+)*?)(?:,\s*prefix|\s*$)")
_MTU_RE = re.compile(r"\bmtu\s+(\d+)", re.IGNORECASE)
_VM_RE = re.compile(r"\bvm\s+(yes|no)\b", re.IGNORECASE)
_CMD_RE = re.compile(r"^command:\s*(.+)$", re.IGNORECASE)
_SKEW_RE = re.compile(r"\bskew\s+(\d+)", re.IGNORECASE)
_COMMIT_RE = re.compile(r"^commit:\s*(\S+)", re.IGNORECASE)


def read_conditions(path):
    """The "# " lines of a conditions.txt and what can be read from them:
    date, cpu, device, mtu, vm, skew (the most a receiver is delayed in the
    skew test, µs), commands ("# command: ..." lines), commit (the
    "# commit: ..." line maint/bench-all adds: the checkout's HEAD when
    the part ran); absent fields are left out."""
    cond = {"lines": []}
    if not path or not os.path.isfile(path):
        return cond
    with open(path, encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            line = raw.strip()
            if not line.startswith("#"):
                continue
            text = line.lstrip("#").strip()
            if not text:
                continue
            cond["lines"].append(text)
            _parse_condition(text, cond)
    return cond


def _parse_condition(text, cond):
    m = _DATE_RE.search(text)
    if m and "date" not in cond:
        cond["date"] = " ".join(x for x in m.groups() if x)
    m = _CPU_RE.search(text)
    if m and "cpu" not in cond:
        cond["cpu"] = f"{m.group(1)} CPUs ({m.group(2).strip()})"
    m = _DEV_RE.search(text)
    if m and "device" not in cond:
        cond["device"] = m.group(1).strip()
    m = _MTU_RE.search(text)
    if m and "mtu" not in cond:
        cond["mtu"] = m.group(1)
    m = _VM_RE.search(text)
    if m and "vm" not in cond:
        cond["vm"] = m.group(1).lower()
    m = _SKEW_RE.search(text)
    if m and "skew" not in cond:
        cond["skew"] = m.group(1)
    m = _CMD_RE.match(text)
    if m:
        cond.setdefault("commands", []).append(m.group(1).strip())
    m = _COMMIT_RE.match(text)
    if m and "commit" not in cond:
        cond["commit"] = m.group(1)


def merge_conditions(primary, *fallbacks):
    """primary's fields, with missing ones taken from the fallbacks (the
    MTU and the VM flag are only in transport/conditions.txt)."""
    merged = dict(primary)
    for fb in fallbacks:
        for key, value in fb.items():
            if key != "lines" and key not in merged:
                merged[key] = value
    return merged


def conditions_caption(cond):
    """One line for a figure: device, MTU, VM or host, CPU, date."""
    parts = []
    if "device" in cond:
        parts.append(f"device {cond['device']}")
    if "mtu" in cond:
        parts.append(f"MTU {cond['mtu']}")
    if "vm" in cond:
        parts.append("VM" if cond["vm"] == "yes" else "host")
    if "cpu" in cond:
        parts.append(cond["cpu"])
    if "date" in cond:
        parts.append(cond["date"])
    return ", ".join(parts) if parts else "conditions unknown (no conditions.txt)"


# ---------------------------------------------------------------- OUTDIR

class Outdir:
    """Everything of a bench-all output directory that exists; a missing
    part is None (its conditions an empty dict)."""

    PARTS = ("bcast", "allgather", "transport")

    def __init__(self, path):
        self.path = path
        self.bcast = self._load("bcast", read_bcast)
        self.allgather = self._load("allgather", read_allgather)
        self.transport = self._load("transport", read_transport)
        self.conditions = {p: read_conditions(os.path.join(path, p, "conditions.txt"))
                           for p in self.PARTS}

    def _load(self, part, reader):
        raw = os.path.join(self.path, part, "raw.txt")
        return reader(raw) if os.path.isfile(raw) else None

    def caption(self, part):
        others = [self.conditions[p] for p in self.PARTS if p != part]
        return conditions_caption(merge_conditions(self.conditions.get(part, {}), *others))

    def extra_values(self):
        """Named values (T_shm ...) given on lines of their own."""
        values = {}
        for part in (self.bcast, self.transport):
            if part is not None:
                values.update(part.extra)
        return values


# ---------------------------------------------------------------- params

class Param:
    """One model parameter: value in microseconds (us), microseconds per
    byte (us/B) or bytes (B), and how it was obtained."""

    def __init__(self, name, value, unit, note=""):
        self.name, self.value, self.unit, self.note = name, float(value), unit, note

    def line(self):
        return f"{self.name} {format_number(self.value)} {self.unit} # {self.note}".rstrip(" #")


def format_number(x):
    """Enough digits to round-trip a calibrated value, none to spare."""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def write_params(params, header_lines=()):
    out = [f"# {h}" for h in header_lines]
    out += [p.line() for p in params]
    return "\n".join(out) + "\n"


def read_params(path):
    """Parse a params file into [Param]; raises ValueError on a bad line."""
    params = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            body, _, note = line.partition("#")
            f = body.split()
            if len(f) < 2:
                raise ValueError(f"{path}:{n}: expected 'NAME VALUE UNIT # note'")
            unit = f[2] if len(f) > 2 else ""
            params.append(Param(f[0], float(f[1]), unit, note.strip()))
    return params


def params_dict(params):
    return {p.name: p.value for p in params}


# ---------------------------------------------------------------- numbers

def linear_fit(xs, ys):
    """Least squares y = a + b*x; returns (a, b). One point: slope 0."""
    n = len(xs)
    if n == 0:
        raise ValueError("no points to fit")
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def log2_ceil(n):
    """ceil(log2 n) for n >= 1, exact for powers of two."""
    return 0 if n <= 1 else (int(n) - 1).bit_length()


def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}f}"


def md_table(header, rows, align=None):
    """A markdown table; align is a string of 'l'/'r' per column."""
    align = align or ("l" + "r" * (len(header) - 1))
    sep = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(sep) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def layout_key(ranks, nodes):
    return f"{ranks}:{nodes}"
