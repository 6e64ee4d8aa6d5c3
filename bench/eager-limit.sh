#!/bin/bash
# bench/eager-limit.sh: measure where the zero-copy rendezvous starts to beat
# the eager protocol, to choose MPIR_CVAR_IBMC_EAGER_LIMIT's default.
#
#   [IBMC_PREFIX=...] [REPS=3] bench/eager-limit.sh
#
# Runs ibmc_pt2pt_bench latency and bw (1 B .. 128 KiB) twice per repetition:
# with MPIR_CVAR_IBMC_EAGER_LIMIT=0 (every contiguous message with data goes
# by rendezvous) and with it at 64 KiB, the largest value the CVAR takes
# (MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE), two ranks through
# the netmod (MPIR_CVAR_NOLOCAL=1), and prints per-size medians side by side.
# On a host without an RDMA device it runs inside the Soft-RoCE VM.  Raw
# outputs go to _build/bench/eager-<date>/.
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
top=$(dirname "$here")
home=$(getent passwd "$(id -un)" | cut -d: -f6)
cache=${IBMC_CACHE:-${home:-/tmp}/.cache/ibmc}
IBMC_PREFIX=${IBMC_PREFIX:-$cache/install/ibmc-default}
REPS=${REPS:-3}
bin=$top/_build/bench/ibmc_pt2pt_bench.eager

if [[ -z ${IBMC_BENCH_INNER:-} ]]; then
    [[ -x $IBMC_PREFIX/bin/mpicc ]] || { echo "eager-limit: no $IBMC_PREFIX/bin/mpicc" >&2; exit 1; }
    mkdir -p "$top/_build/bench"
    "$IBMC_PREFIX/bin/mpicc" -std=c11 -O2 -Wall -o "$bin" "$here/ibmc_pt2pt_bench.c" || exit 1
    raw=$top/_build/bench/eager-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$raw"
    echo "eager-limit: raw outputs in $raw" >&2
    exec "$top/test/vm/run-fabric" env IBMC_BENCH_INNER=1 IBMC_PREFIX="$IBMC_PREFIX" REPS="$REPS" \
        RAW="$raw" bash "$here/eager-limit.sh"
fi

date -Is > "$RAW/date"
for ((r = 1; r <= REPS; r++)); do
    for t in latency bw; do
        for lim in 0 65536; do
            MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_IBMC_EAGER_LIMIT=$lim timeout -k 5 900 \
                "$IBMC_PREFIX/bin/mpiexec" -n 2 "$bin" "$t" -m 128K > "$RAW/$t-$lim-rep$r.out" 2>&1 ||
                echo "eager-limit: $t limit $lim rep $r failed (see $RAW/$t-$lim-rep$r.out)" >&2
        done
    done
done
python3 - "$RAW" <<'PY'
import glob, re, statistics, sys
raw = sys.argv[1]
def med(t, lim):
    vals = {}
    for f in glob.glob(f"{raw}/{t}-{lim}-rep*.out"):
        for line in open(f, errors="replace"):
            m = re.match(r"^(\d+)\s+([0-9.]+)\s*$", line)
            if m:
                vals.setdefault(int(m.group(1)), []).append(float(m.group(2)))
    return {k: statistics.median(v) for k, v in vals.items()}
print(f"# eager vs rendezvous, medians of {len(glob.glob(raw + '/latency-0-rep*.out'))} runs, {open(raw + '/date').read().strip()}")
for t, unit, better in (("latency", "us", "lower"), ("bw", "MB/s", "higher")):
    e, z = med(t, 65536), med(t, 0)
    print(f"\n| {t} size | eager ({unit}) | rendezvous ({unit}) | rendezvous/eager ({better} is better) |")
    print("|---:|---:|---:|---:|")
    for s in sorted(set(e) | set(z)):
        if s < 1024:
            continue
        a, b = e.get(s), z.get(s)
        ratio = f"{b / a:.2f}" if a and b else "-"
        print(f"| {s} | {a if a is not None else '-'} | {b if b is not None else '-'} | {ratio} |")
PY
