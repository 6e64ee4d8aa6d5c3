#!/bin/bash
# bench/experiments/rndv-read-settings.sh: does a rendezvous READ setting
# explain ibmc's bi-directional bandwidth at 1-4 MiB (2026-11-23,
# commit 83880f3; doc/design.md, "Rendezvous")?  Needs an ibmc build with the environment
# overrides of rndv-read-settings.diff, which is not part of ibmc:
#
#   git apply bench/experiments/rndv-read-settings.diff
#   IBMC_CONFIGURE_EXTRA=CPPFLAGS=-DIBMC_EXPERIMENT maint/ibmc-build   # prints its prefix
#   git checkout src/
#   IBMC_EXP_PREFIX=<that prefix> bench/experiments/rndv-read-settings.sh
#
# Runs bibw (and latency for the inline size) 3 times per setting, ofi
# alongside, in one boot of the test VM; prints per-size medians.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -z ${IBMC_IN_VM:-} && -z $(ls /sys/class/infiniband 2>/dev/null) ]]; then
    : "${IBMC_EXP_PREFIX:?set IBMC_EXP_PREFIX to the experiment build}"
    export IBMC_EXP_OFI=${IBMC_EXP_OFI:-${IBMC_CACHE:-$HOME/.cache/ibmc}/install/stock-ofi}
    export IBMC_EXP_OUT=$top/_build/exp-rndv-read
    rm -rf "$IBMC_EXP_OUT" "$top/_build/exp-bin"; mkdir -p "$IBMC_EXP_OUT" "$top/_build/exp-bin"
    "$IBMC_EXP_PREFIX/bin/mpicc" -O2 -o "$top/_build/exp-bin/bench-x" "$top/bench/ibmc_pt2pt_bench.c"
    "$IBMC_EXP_OFI/bin/mpicc" -O2 -o "$top/_build/exp-bin/bench-ofi" "$top/bench/ibmc_pt2pt_bench.c"
    "$top/test/vm/run-fabric" bash "$0"
    exec python3 - "$IBMC_EXP_OUT" <<'PY'
import glob, re, statistics, collections, sys
d = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(sys.argv[1] + '/*.out'):
    name = re.sub(r'-\d+\.out$', '', f.split('/')[-1])
    for l in open(f):
        p = l.split()
        if len(p) == 2 and p[0].isdigit():
            d[name][int(p[0])].append(float(p[1]))
for t, lo, hi in (('bibw', 16384, 1 << 30), ('latency', 16, 2048)):
    names = sorted(n for n in d if n.endswith('-' + t))
    print(t.ljust(8), ' '.join(n[:-len(t) - 1].rjust(15) for n in names))
    for s in sorted({s for n in names for s in d[n] if lo <= s <= hi}):
        print(str(s).ljust(8), ' '.join(('%.2f' % statistics.median(d[n][s]) if d[n][s] else '-').rjust(15) for n in names))
PY
fi
X=$IBMC_EXP_PREFIX O=$IBMC_EXP_OFI out=$IBMC_EXP_OUT bin=$top/_build/exp-bin
run() { local name=$1 t=$2 rep=$3; shift 3
    env MPIR_CVAR_NOLOCAL=1 "$@" timeout 300 "$X/bin/mpiexec" -n 2 "$bin/bench-x" "$t" > "$out/$name-$t-$rep.out" 2>&1 ||
        echo "FAILED: $name $t rep $rep"; }
for rep in 1 2 3; do
    run base bibw $rep
    run rd_atomic16 bibw $rep IBMC_EXP_RD_ATOMIC=16
    run rd_atomic128 bibw $rep IBMC_EXP_RD_ATOMIC=128
    run chunk256k bibw $rep IBMC_EXP_MAX_READ=262144
    run chunk256k_rda16 bibw $rep IBMC_EXP_MAX_READ=262144 IBMC_EXP_RD_ATOMIC=16
    run chunk1m_rda16 bibw $rep IBMC_EXP_MAX_READ=1048576 IBMC_EXP_RD_ATOMIC=16
    run reads8 bibw $rep IBMC_EXP_MAX_READS=8
    env MPIR_CVAR_NOLOCAL=1 FI_PROVIDER='verbs;ofi_rxm' FI_UNIVERSE_SIZE=64 timeout 300 \
        "$O/bin/mpiexec" -n 2 "$bin/bench-ofi" bibw > "$out/ofi-bibw-$rep.out" 2>&1 || echo "FAILED: ofi bibw rep $rep"
    run base latency $rep
    run inline512 latency $rep IBMC_EXP_MAX_INLINE=512
    run inline1024 latency $rep IBMC_EXP_MAX_INLINE=1024
    echo "rep $rep done $(date +%T)"
done
