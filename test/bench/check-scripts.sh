#!/bin/bash
# test/bench/check-scripts.sh: checks bench/model.py, bench/plots.py and
# bench/report.py on the recorded bench-all output in test/bench/fixtures/.
#
#   bash test/bench/check-scripts.sh        (PYTHON=... to pick the interpreter;
#                                            REQUIRE_PLOTS=1: no matplotlib is a failure)
#
# What it asserts:
# - calibrate recovers, within 1 %, the parameters the fixture's raw lines
#   were written from (fixtures/expected-params.txt);
# - model formulas give the numbers worked out by hand from those
#   parameters (binomial, single root with fragments, node-aware and flat
#   allgather, a node count that is not a power of two, the co-root choice),
#   and a copy of the parameters with T_pp doubled makes that check fail
#   (negative control: the check can fail);
# - validate, project, coroots print the expected rows, flags and choices;
#   a T_shm line turns the "intra-node stage not modelled" rows into numbers;
# - report.py replaces its region exactly once, leaves every other byte of
#   the doc alone, gives the same doc when run twice, inserts the markers
#   after the first heading when absent, and refuses a doc with two regions;
# - when matplotlib imports (in $PYTHON or Debian's /usr/bin/python3),
#   plots.py writes the ten figures, each a PNG by its signature, and skips
#   figures whose inputs are missing without failing.
# Prints "ok: ..." or "FAIL: ..." per check and "N passed, N failed" last;
# exits non-zero when anything failed. No timing is asserted.

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fx=$here/fixtures
out=$fx/outdir
expected=$fx/expected-params.txt
PY=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1
cd "$root" || exit 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# check DESCRIPTION COMMAND...: passes when the command exits 0
check() {
    local desc=$1
    shift
    if "$@" > "$tmp/last.out" 2>&1; then
        ok "$desc"
    else
        bad "$desc"
        sed 's/^/    /' "$tmp/last.out"
    fi
}

# contains FILE TEXT: the file has the text (fixed string)
contains() { grep -qF -- "$2" "$1"; }
not_contains() { ! grep -qF -- "$2" "$1"; }

# ---------------------------------------------------------------- model.py

check "model.py calibrate runs on the fixture" \
    sh -c "'$PY' bench/model.py calibrate '$out' > '$tmp/params.txt' 2> '$tmp/calibrate.err'"

compare_params() {   # compare_params GOT EXPECTED: every expected param within 1 %
    "$PY" - "$1" "$2" <<'EOF'
import sys
sys.path.insert(0, "bench")
import benchdata as bd
got = bd.params_dict(bd.read_params(sys.argv[1]))
want = bd.params_dict(bd.read_params(sys.argv[2]))
bad = []
for name, value in want.items():
    if name not in got:
        bad.append(f"{name} missing")
    elif abs(got[name] - value) > 0.01 * abs(value):
        bad.append(f"{name} = {got[name]!r}, expected {value!r} within 1 %")
for line in bad:
    print(line)
sys.exit(1 if bad else 0)
EOF
}
check "calibrate recovers the 12 parameters encoded in the fixture within 1 %" \
    compare_params "$tmp/params.txt" "$expected"
check "every params line says how it was derived" \
    sh -c "grep -v '^#' '$tmp/params.txt' | grep -v ' # ' ; test \$? -eq 1"

# formulas PARAMS: the numbers below were worked out by hand from
# fixtures/expected-params.txt (T_cc 0.4, T_cc_byte 0.0005, T_ud 12, T_mc 60,
# T_mc_byte 0.02, T_pp 150, T_pp_byte 0.01, T_um 20, T_pack 15, T_rdma 55,
# T_rdma_byte 0.008, mtu 1024); exits non-zero on any difference.
formulas() {
    "$PY" - "$1" <<'EOF'
import sys
sys.path.insert(0, "bench")
import benchdata as bd
import model
P = bd.params_dict(bd.read_params(sys.argv[1]))
cases = [
    # 8 nodes: 3 hops of T_pp, 0 bytes
    ("binomial, 8 nodes, 0 B = 3*T_pp", model.bcast_binomial(P, 8, 0).total, 450.0),
    # 2 hops of (150 + 1024*0.01)
    ("binomial, 4 nodes, 1024 B", model.bcast_binomial(P, 4, 1024).total, 320.48),
    # 2*(0.4 + 64*0.0005) + 12 + 60 + 64*0.02
    ("single root, 64 B", model.bcast_single_root(P, 4, 64).total, 74.144),
    # 4 fragments: 2*(0.4 + 4096*0.0005) + 4*12 + 60 + 1024*0.02 + 3*1024*0.02
    ("single root, 4096 B = 4 fragments", model.bcast_single_root(P, 4, 4096).total, 194.816),
    # copy-in 0.912; rounds 2*55 + 2048*0.008 = 126.384 and 110 + 4096*0.008 = 142.768;
    # local copy 0.912 and round 0's 1.424 hide; round 1's 2.448 shows
    ("node_rd, 4 nodes x 2, 1024 B, overlap", model.allgather_node_rd(P, 4, 2, 1024).total, 272.512),
    # the same, every copy-out at the end: + 0.912 + 1.424 + 2.448
    ("node_rd, 4 nodes x 2, 1024 B, no overlap",
     model.allgather_node_rd(P, 4, 2, 1024, overlap=False).total, 274.848),
    # 8 processes: 3 rounds of T_pp carrying 1, 2, 4 blocks: 450 + 7*1024*0.01
    ("flat recursive doubling, 8 processes, 1024 B", model.allgather_flat_rd(P, 4, 2, 1024).total, 521.68),
    # 3 nodes: copy-in 0.45; fold-in 110 + 0.8; doubling 110 + 150*0.008;
    # fold-out 3*55 + 200*0.008; its copy-out 0.4 + 200*0.0005
    ("node_rd, 3 nodes x 1, 100 B (fold-in, fold-out)", model.allgather_node_rd(P, 3, 1, 100).total, 389.55),
    # 1024 nodes: 12.4 + 20*log2(1024/s) + 15*s is least at s = 2: 12.4 + 180 + 30
    ("co-root root time minimum, 1024 nodes", model.best_subgroup(P, 1024)[1], 222.4),
    ("co-root subgroup size, 1024 nodes", model.best_subgroup(P, 1024)[0], 2),
]
# co-roots against single root, with a slow multicast (T_mc 500) so that
# the reliable unicast can win: T_sr = 0.8 + 12 + 500 = 512.8 at 0 B
slow = dict(P, T_mc=500.0)
cases += [
    # s = 4: 2 co-roots, 6 ordinary nodes wait for the multicast
    ("co-roots s=4 of 8, slow multicast: ordinary nodes set T_sr", model.bcast_coroots(slow, 8, 0, 4).total, 512.8),
    # s = 1: every node a co-root, T_rc = 0.8 + 12 + 3*150 = 462.8 < T_sr
    ("co-roots s=1 of 8, slow multicast: min(T_rc, T_sr)", model.bcast_coroots(slow, 8, 0, 1).total, 462.8),
]
failed = 0
for name, got, want in cases:
    if abs(got - want) > 1e-6 * max(1.0, abs(want)):
        print(f"{name}: got {got!r}, expected {want!r}")
        failed += 1
sys.exit(1 if failed else 0)
EOF
}
check "formulas give the hand-computed numbers (expected params)" formulas "$expected"
check "formulas give the hand-computed numbers (calibrated params)" formulas "$tmp/params.txt"

# negative control: doubling T_pp must break the binomial checks
sed 's/^T_pp 150 /T_pp 300 /' "$expected" > "$tmp/broken-params.txt"
if ! grep -q '^T_pp 300 ' "$tmp/broken-params.txt"; then
    bad "negative control: could not make the broken params file"
elif formulas "$tmp/broken-params.txt" > "$tmp/broken.out" 2>&1; then
    bad "negative control: the formula check passed with T_pp doubled"
elif grep -q '^binomial, 8 nodes, 0 B = 3\*T_pp: got 900' "$tmp/broken.out"; then
    ok "negative control: with T_pp doubled the formula check fails (binomial 900 instead of 450)"
else
    bad "negative control: the formula check failed, but not where expected"
    sed 's/^/    /' "$tmp/broken.out"
fi

"$PY" bench/model.py project "$expected" --nodes 8 --bytes 0 > "$tmp/project.out" 2>&1
check "project: binomial at 8 nodes, 0 B is 3*T_pp = 450.00" contains "$tmp/project.out" "| 8 | 450.00 | 72.80 |"
check "project: seed 000's 4.86x (§7.1) and 3.86x (§9) are both reported" \
    sh -c "grep -q '4.86x' '$tmp/project.out' && grep -q '3.86x' '$tmp/project.out'"

"$PY" bench/model.py project published > "$tmp/published.out" 2>&1
check "project published: runs and cites its sources" \
    sh -c "grep -q 'hbv3-performance.md' '$tmp/published.out' && grep -q 'ASSUMPTION' '$tmp/published.out' \
           && grep -q '| 8192 |' '$tmp/published.out'"

"$PY" bench/model.py validate "$expected" "$out" > "$tmp/validate.out" 2>&1
check "validate: 16 rows checked, 1 beyond 20 %, 8 not modelled" \
    contains "$tmp/validate.out" "16 rows checked, 1 beyond 20 %, 8 not modelled."
check "validate: the flagged row names its dominant term" \
    contains "$tmp/validate.out" "- Bcast ibmc_mcast 4:4, 4096 B: model 25 % below measured (194.82 vs 260.40 µs); dominant term:"
check "validate: 8:4 rows say the intra-node stage is not modelled" \
    sh -c "test \$(grep -c 'intra-node stage not modelled' '$tmp/validate.out') -eq 8"
check "validate: node_rd 8:4 1024 B row (272.51 against 301.20)" \
    contains "$tmp/validate.out" "| Allgather | ibmc_node_rd | 8:4 | 1024 | 301.20 | 272.51 | -9.5 % |"

cp "$expected" "$tmp/params-shm.txt"
echo "T_shm 5 us # test value" >> "$tmp/params-shm.txt"
"$PY" bench/model.py validate "$tmp/params-shm.txt" "$out" > "$tmp/validate-shm.out" 2>&1
check "validate with T_shm: binomial 8:4 1 B = 2 hops + 1 shm step = 305.02" \
    contains "$tmp/validate-shm.out" "| Bcast | binomial | 8:4 | 1 | 455.60 | 305.02 |"
check "validate with T_shm: every row modelled" contains "$tmp/validate-shm.out" ", 0 not modelled."

"$PY" bench/model.py coroots "$expected" --nodes 1024 > "$tmp/coroots.out" 2>&1
check "coroots: s = 2, 512 co-roots at 1024 nodes" \
    contains "$tmp/coroots.out" "choice: s = 2, 512 co-roots, 222.400 µs at the root"
check "coroots with the channel's ACK every 16: s = 32 (T_pack*s/M)" \
    contains "$tmp/coroots.out" "choice with M = 16: s = 32, 32 co-roots, 142.400 µs at the root"
"$PY" bench/model.py coroots "$expected" --nodes 1024 --ack-every 1 > "$tmp/coroots-1.out" 2>&1
check "coroots --ack-every 1: §7.2 as written, no delayed-ACK choice" \
    not_contains "$tmp/coroots-1.out" "choice with M"

mkdir -p "$tmp/partial/bcast"
cp "$out/bcast/raw.txt" "$tmp/partial/bcast/"
check "calibrate without transport/: T_pp only, warnings on stderr, no failure" \
    sh -c "'$PY' bench/model.py calibrate '$tmp/partial' > '$tmp/partial.params' 2> '$tmp/partial.err' \
           && grep -q '^T_pp 150 us' '$tmp/partial.params' && grep -q 'left out' '$tmp/partial.err'"

# ---------------------------------------------------------------- plots

plotpy=""
for candidate in "$PY" /usr/bin/python3; do
    if command -v "$candidate" > /dev/null 2>&1 && "$candidate" -c 'import matplotlib' 2> /dev/null; then
        plotpy=$candidate
        break
    fi
done

png_check() {   # png_check LISTFILE COUNT: COUNT files listed, each a PNG
    "$PY" - "$1" "$2" <<'EOF'
import sys
paths = [p.strip() for p in open(sys.argv[1]) if p.strip()]
bad = [p for p in paths if open(p, "rb").read(8) != b"\x89PNG\r\n\x1a\n"]
for p in bad:
    print(f"not a PNG: {p}")
if len(paths) != int(sys.argv[2]):
    print(f"{len(paths)} files listed, expected {sys.argv[2]}")
sys.exit(1 if bad or len(paths) != int(sys.argv[2]) else 0)
EOF
}

if [ -n "$plotpy" ]; then
    check "plots.py draws the fixture" \
        sh -c "'$plotpy' bench/plots.py '$out' '$tmp/img' > '$tmp/plots.list' 2> '$tmp/plots.err'"
    check "plots.py: 10 files, each starting with the PNG signature" png_check "$tmp/plots.list" 10
    check "plots.py on a run with bcast/ only: no failure, skipped figures named on stderr" \
        sh -c "'$plotpy' bench/plots.py '$tmp/partial' '$tmp/img-partial' > '$tmp/partial.list' \
               2> '$tmp/partial-plots.err' && grep -q 'allgather_latency skipped' '$tmp/partial-plots.err' \
               && grep -q 'bcast_latency.png' '$tmp/partial.list'"
elif [ "${REQUIRE_PLOTS:-0}" = 1 ]; then
    bad "plots.py: no Python with matplotlib here ($PY, /usr/bin/python3), and REQUIRE_PLOTS=1"
else
    echo "skip: no Python with matplotlib here ($PY, /usr/bin/python3); plots.py not checked"
fi

# ---------------------------------------------------------------- report.py

reportpy=${plotpy:-$PY}

same_outside() {   # same_outside ORIGINAL NEW: bytes outside the region unchanged, one region
    "$PY" - "$1" "$2" <<'EOF'
import sys
old = open(sys.argv[1], "rb").read()
new = open(sys.argv[2], "rb").read()
B, E = b"<!-- bench-all:begin -->\n", b"<!-- bench-all:end -->\n"
problems = []
if new.count(B) != 1 or new.count(E) != 1:
    problems.append(f"markers in the new doc: {new.count(B)} begin, {new.count(E)} end")
else:
    if old[:old.index(B) + len(B)] != new[:new.index(B) + len(B)]:
        problems.append("text before the region changed")
    if old[old.index(E):] != new[new.index(E):]:
        problems.append("text after the region changed")
    region = new[new.index(B) + len(B):new.index(E)]
    if b"old generated text" in region or b"## MPI_Bcast, MPI_Allgather" not in region:
        problems.append("the region was not regenerated")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
}

cp "$fx/tiny-doc.md" "$tmp/doc.md"
check "report.py runs on a copy of a tiny doc" \
    sh -c "'$reportpy' bench/report.py '$out' --doc '$tmp/doc.md' --img '$tmp/docimg' > /dev/null 2> '$tmp/report.err'"
check "report.py: region replaced once, every byte outside it unchanged" same_outside "$fx/tiny-doc.md" "$tmp/doc.md"
cp "$tmp/doc.md" "$tmp/doc-first.md"
"$reportpy" bench/report.py "$out" --doc "$tmp/doc.md" --img "$tmp/docimg" > /dev/null 2>&1
check "report.py: a second run gives the same doc" cmp "$tmp/doc-first.md" "$tmp/doc.md"
check "report.py: the region has the tables, validation, projection and co-roots" \
    sh -c "grep -q '| ibmc_mcast / binomial |' '$tmp/doc.md' && grep -q 'node_rd / best stock' '$tmp/doc.md' \
           && grep -q '16 rows checked' '$tmp/doc.md' && grep -q 'Projection to 8192 nodes' '$tmp/doc.md' \
           && grep -q 'choice: s = 2' '$tmp/doc.md' && grep -q 'T_rdma_byte' '$tmp/doc.md'"
check "report.py: the skew sweep's table, at its largest size, a row per layout and skew" \
    sh -c "grep -q 'Time in MPI_Bcast against skew (64 B' '$tmp/doc.md' \
           && grep -qF '| 4:4 | 400 | 98.00 | 515.25 |' '$tmp/doc.md'"
check "benchdata: a skew-sweep line without its skew is skipped, not a point" \
    "$PY" -c "import sys; sys.path.insert(0, 'bench'); import benchdata as bd
d = bd.read_bcast('$out/bcast/raw.txt')
sys.exit(0 if d.skipped == 1 and all(999.0 not in v for v in d.sweep.values()) else 1)"
if [ -n "$plotpy" ]; then
    check "report.py: links the 10 figures relative to the doc" \
        sh -c "test \$(grep -c '](docimg/[a-z_]*\.png)' '$tmp/doc.md') -eq 10"
fi

cp "$fx/tiny-doc-nomarkers.md" "$tmp/nomarkers.md"
"$reportpy" bench/report.py "$out" --doc "$tmp/nomarkers.md" --img "$tmp/docimg" --no-plots > /dev/null 2>&1
check "report.py: markers inserted after the heading line, then a blank line, rest unchanged" \
    "$PY" - "$fx/tiny-doc-nomarkers.md" "$tmp/nomarkers.md" <<'EOF'
import sys
old = open(sys.argv[1]).read().splitlines(keepends=True)
new = open(sys.argv[2]).read().splitlines(keepends=True)
end = next(i for i, l in enumerate(new) if l == "<!-- bench-all:end -->\n")
ok = (new[0] == old[0] and new[1] == "<!-- bench-all:begin -->\n"
      and new[end + 1] == "\n" and new[end + 2:] == old[1:])
sys.exit(0 if ok else 1)
EOF

printf '# two regions\n<!-- bench-all:begin -->\n<!-- bench-all:end -->\n<!-- bench-all:begin -->\n<!-- bench-all:end -->\n' \
    > "$tmp/two.md"
cp "$tmp/two.md" "$tmp/two-orig.md"
if "$reportpy" bench/report.py "$out" --doc "$tmp/two.md" --img "$tmp/docimg" --no-plots > /dev/null 2>&1; then
    bad "report.py accepted a doc with two regions"
else
    check "report.py refuses a doc with two regions and leaves it unchanged" cmp "$tmp/two-orig.md" "$tmp/two.md"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
