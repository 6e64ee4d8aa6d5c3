#!/bin/bash
# bench/experiments/cvar-ab.sh: ibmc under several CVAR settings against
# stock ch4:ofi, in one boot of the test VM, interleaved repetition by
# repetition so that drift of the emulated machine hits every setting alike.
#
#   [REPS=3] [TESTS="bw bibw"] [MAX=64K] bench/experiments/cvar-ab.sh \
#       NAME[=CVAR=VALUE[,CVAR=VALUE...]] ...
#
# Each NAME runs ibmc_pt2pt_bench with those variables set (a NAME with no
# "=" runs the defaults); "ofi" is added unless OFI_PREFIX is empty.  Prints
# the per-size medians, one column per setting.  Example, the eager-window
# comparison of 2026-11-23 (commit 3a7eb98; doc/design.md):
#
#   bench/experiments/cvar-ab.sh default \
#       fixed16=MPIR_CVAR_IBMC_EAGER_CREDITS_MAX=16 \
#       old=MPIR_CVAR_IBMC_EAGER_CREDITS_MAX=16,MPIR_CVAR_IBMC_PACKET_SIZE=16384
#
# Inputs: IBMC_PREFIX, OFI_PREFIX as for bench/run-compare.sh; BASE_PREFIX,
# optionally, another ibmc install (an earlier commit's, say), run with its
# defaults as the column "base".  Raw outputs in _build/bench/ab-<date>/.
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
top=$(cd "$here/../.." && pwd)
home=$(getent passwd "$(id -un)" | cut -d: -f6)
cache=${IBMC_CACHE:-${home:-/tmp}/.cache/ibmc}

if [[ -z ${IBMC_BENCH_INNER:-} ]]; then
    (($# >= 1)) || { sed -n '2,20p' "$0" >&2; exit 2; }
    IBMC_PREFIX=${IBMC_PREFIX:-$cache/install/ibmc-default}
    OFI_PREFIX=${OFI_PREFIX-$cache/install/stock-ofi}
    [[ -x $IBMC_PREFIX/bin/mpicc ]] || { echo "cvar-ab: no $IBMC_PREFIX/bin/mpicc" >&2; exit 1; }
    raw=$top/_build/bench/ab-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$raw"
    "$IBMC_PREFIX/bin/mpicc" -std=c11 -O2 -o "$raw/bench-ibmc" "$top/bench/ibmc_pt2pt_bench.c" || exit 1
    if [[ -n $OFI_PREFIX && -x $OFI_PREFIX/bin/mpicc ]]; then
        "$OFI_PREFIX/bin/mpicc" -std=c11 -O2 -o "$raw/bench-ofi" "$top/bench/ibmc_pt2pt_bench.c" || exit 1
    else
        echo "cvar-ab: no ofi build at '$OFI_PREFIX' (maint/build-stock-ofi): ibmc only" >&2
        OFI_PREFIX=
    fi
    BASE_PREFIX=${BASE_PREFIX:-}
    if [[ -n $BASE_PREFIX ]]; then
        "$BASE_PREFIX/bin/mpicc" -std=c11 -O2 -o "$raw/bench-base" "$top/bench/ibmc_pt2pt_bench.c" || exit 1
    fi
    echo "cvar-ab: raw outputs in $raw" >&2
    "$top/test/vm/run-fabric" env IBMC_BENCH_INNER=1 IBMC_PREFIX="$IBMC_PREFIX" \
        OFI_PREFIX="$OFI_PREFIX" BASE_PREFIX="$BASE_PREFIX" REPS="${REPS:-3}" TESTS="${TESTS:-bw bibw}" MAX="${MAX:-64K}" \
        RAW="$raw" bash "$0" "$@" || exit 1
    exec python3 - "$raw" "$@" <<'PY'
import glob, re, statistics, sys
raw, names = sys.argv[1], [a.split("=", 1)[0] for a in sys.argv[2:]]
if glob.glob(raw + "/base-*.out"):
    names.append("base")
if glob.glob(raw + "/ofi-*.out"):
    names.append("ofi")
print("# %s, medians of %s runs" % (open(raw + "/date").read().strip(),
                                    open(raw + "/reps").read().strip()))
# Medians, then the best run of each setting (lowest latency, highest
# bandwidth): the VM's runs fall into a fast and a slow mode, and best
# against best compares fast modes (bench/README.md).
for t in open(raw + "/tests").read().split():
    vals = {}
    for n in names:
        vals[n] = {}
        for f in glob.glob("%s/%s-%s-rep*.out" % (raw, n, t)):
            for line in open(f, errors="replace"):
                m = re.match(r"^(\d+)\s+([0-9.]+)\s*$", line)
                if m:
                    vals[n].setdefault(int(m.group(1)), []).append(float(m.group(2)))
    best = min if t == "latency" else max
    for what, f in (("median", statistics.median), ("best run", best)):
        print("\n| %s size (%s) | %s |" % (t, what, " | ".join(names)))
        print("|---:|" + "---:|" * len(names))
        for s in sorted(set().union(*(v.keys() for v in vals.values()))):
            print("| %d | %s |" % (s, " | ".join("%.2f" % f(vals[n][s]) if s in vals[n] else "-"
                                                for n in names)))
PY
fi

# Fabric side.
date -Is > "$RAW/date"
echo "$REPS" > "$RAW/reps"
echo "$TESTS" > "$RAW/tests"
run() { # name prefix binary test rep env...
    local name=$1 prefix=$2 bin=$3 t=$4 r=$5; shift 5
    env MPIR_CVAR_NOLOCAL=1 "$@" timeout -k 5 900 "$prefix/bin/mpiexec" -n 2 "$bin" "$t" -m "$MAX" \
        > "$RAW/$name-$t-rep$r.out" 2>&1 || echo "cvar-ab: $name $t rep $r failed (see $RAW)" >&2
}
for ((r = 1; r <= REPS; r++)); do
    for t in $TESTS; do
        for spec in "$@"; do
            name=${spec%%=*} vars=()
            [[ $spec == *=* ]] && IFS=, read -ra vars <<< "${spec#*=}"
            run "$name" "$IBMC_PREFIX" "$RAW/bench-ibmc" "$t" "$r" "${vars[@]}"
        done
        [[ -n $BASE_PREFIX ]] && run base "$BASE_PREFIX" "$RAW/bench-base" "$t" "$r"
        [[ -n $OFI_PREFIX ]] && run ofi "$OFI_PREFIX" "$RAW/bench-ofi" "$t" "$r" \
            FI_PROVIDER='verbs;ofi_rxm' FI_UNIVERSE_SIZE=64
    done
    echo "cvar-ab: repetition $r of $REPS done" >&2
done
