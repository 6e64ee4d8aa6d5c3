#!/bin/bash
# The rate of posted broadcasts (MPI_Ibcast on ibmc_mcast) with K in flight
# against the blocking rate (MPI_Bcast, K = 0) and SMPI's baselines, on the
# HDR-class fabric of project.sh: back-to-back 1 B broadcasts from root 0,
# every node keeping K posted (ibmc_sim --inflight K: ibmc_mcast_op_post,
# driven by ibmc_mcast_chan_progress only) and waiting for the oldest.
# SMPI's MPI_Ibcast has one algorithm in SimGrid 3.32, the root sending to
# every other rank (--cfg=smpi/bcast does not reach it), so the binomial
# baseline is SMPI's blocking MPI_Bcast, as in project-rate.sh; SMPI's
# MPI_Ibcast with K in flight is reported beside it.  The issue's target:
# with 4 in flight, the rate at 1,024 nodes at least the blocking rate.
# Every figure is SIMULATED.
#
#   ./project-ibcast.sh [OUTDIR]          writes OUTDIR/ibcast.md and ibcast.tsv
#   REPORT_ONLY=1 ./project-ibcast.sh ... the same from OUTDIR's finished run
#   ./project-ibcast.sh --doc FILE OUTDIR also replaces the generated region of
#                                         FILE (doc/results.md,
#                                         <!-- sim-ibcast:begin/end -->)
#
# Environment (defaults): NODES="64 1024", INFLIGHT="1 4 16", ITERS=300
# (project-rate.sh's count: 4.7 windows of 64), SMPI_ITERS=100, LOSS=0.01
# (the same sweep again with this multicast loss; empty: none), CPU_US=0.2,
# ONEWAY_US=1.0, BW=25e9.  One run per cell: a run is deterministic for
# its seed (1).  About 1 minute on the 2-core machine, most of it the
# ibmc_sim runs at 1,024 nodes (about 5 s each).
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-"64 1024"}
INFLIGHT=${INFLIGHT:-"1 4 16"}
ITERS=${ITERS:-300}
SMPI_ITERS=${SMPI_ITERS:-100}
LOSS=${LOSS-0.01}
hdr_fabric
MTU=4096

make -j1 ibmc_sim smpi_bcast >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_ibcast.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
SMPI_CFG="$(smpi_bcast_cfg "$CPU_S") --cfg=smpi/bcast:binomial_tree"

tsv=$OUT/ibcast.tsv
fail=0
# row NODES WHO K LOSS RATE ROOT_IN NAKS WALL: one tsv row; WHO is ibmc or
# an SMPI baseline, K 0 for a blocking one
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$tsv"; }
# sim N K LOSS: one ibmc_sim rate run
sim() {
    l=$(./ibmc_sim --nodes "$1" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU \
        --size 1 --iters "$ITERS" --mode rate --inflight "$2" --loss "$3" 2>&1 | grep '^SIMULATED')
    sim_ok "$l" "ibmc_sim --nodes $1 --inflight $2 --loss $3" || { fail=1; return; }
    row "$1" ibmc "$2" "$3" "$(field "$l" bcasts_per_s)" "$(field "$l" root_in_per_bcast)" \
        "$(field "$l" naks_sent)" "$(field "$l" wall_s)"
    echo "project-ibcast: ibmc_sim $1 nodes, $2 in flight, loss $3: $(field "$l" bcasts_per_s)/s, wall $(field "$l" wall_s) s" >&2
}
# smpi N WHO K ARGS...: one smpi_bcast run on N's platform
smpi() {
    n=$1 who=$2 k=$3; shift 3
    w0=$(date +%s.%N)
    # shellcheck disable=SC2086
    l=$(smpirun -np "$n" -platform "$TMP/p$n.xml" -hostfile "$TMP/h$n" ./smpi_bcast "$@" \
        $SMPI_CFG 2>&1 | grep '^SIMULATED smpi_bcast')
    sim_ok "$l" "smpi $n $*" || { fail=1; return; }
    w=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    row "$n" "$who" "$k" 0 "$(field "$l" bcasts_per_s)" "" "" "$w"
    echo "project-ibcast: smpi $n nodes $*: $(field "$l" bcasts_per_s)/s, wall $w s" >&2
}
if [ "${REPORT_ONLY:-0}" != 1 ]; then
    printf 'nodes\twho\tinflight\tloss\tbcasts_per_s\troot_in\tnaks\twall_s\n' >"$tsv"
    t0=$(date +%s)
    for n in $NODES; do
        ./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --platform-out "$TMP/p$n.xml" \
            --platform-only || { echo "FAIL: platform $n" >&2; exit 1; }
        i=0; : >"$TMP/h$n"
        while [ $i -lt "$n" ]; do echo "n$i" >>"$TMP/h$n"; i=$((i + 1)); done
        smpi "$n" smpi-bcast 0 rate 1 "$SMPI_ITERS"
        for k in $INFLIGHT; do
            smpi "$n" smpi-ibcast "$k" irate 1 "$SMPI_ITERS" "$k"
        done
        for loss in 0 $LOSS; do
            for k in 0 $INFLIGHT; do
                sim "$n" "$k" "$loss"
            done
        done
    done
    run_stamp $(($(date +%s) - t0)) >"$OUT/ibcast-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/ibcast-run.txt" || { echo "FAIL: no run in $OUT" >&2; exit 1; }

# rate NODES WHO K LOSS: broadcasts per second of one cell, or nothing
rate() {
    awk -F'\t' -v n="$1" -v w="$2" -v k="$3" -v l="$4" \
        'NR > 1 && $1 == n && $2 == w && $3 == k && $4 + 0 == l + 0 { print $5 }' "$tsv"
}
# kps RATE: thousands per second, or "-"
kps() { [ -n "$1" ] && awk -v r="$1" 'BEGIN { printf "%.0f", r / 1000 }' || echo -; }
# ratio A B: A / B as "1.23x", or "-"
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }' || echo -; }
set -f
# shellcheck disable=SC2086
set -- $INFLIGHT
set +f
md=$OUT/ibcast.md
{
    stamp_line bench/sim/project-ibcast.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; ibmc_sim runs the real engine, SMPI"
    echo "runs on the same platform file). The platform and costs of the latency projection:"
    echo "${BW} B/s per host link and direction, one-way MPI latency ${ONEWAY_US} us, ${CPU_US} us of"
    echo "CPU per message sent or handled, MTU $MTU; a fat tree of 32 hosts a leaf above 64 nodes."
    echo "Back-to-back 1 B broadcasts from root 0 with no barrier, window 64, ACK every 16,"
    echo "subgroups of 8. **K in flight**: every node keeps K broadcasts posted"
    echo "(\`ibmc_mcast_op_post\`, as MPI_Ibcast does) and waits for the oldest, and only the"
    echo "channel's progress turn (\`ibmc_mcast_chan_progress\`) starts, tests and finishes"
    echo "them; **blocking**: \`ibmc_mcast_bcast\` (MPI_Bcast), the \`sim-rate\` region's run."
    echo "SMPI: MPI_Bcast with MPICH's \`binomial_tree\`, and MPI_Ibcast with K in flight, which"
    echo "SimGrid 3.32 implements one way whatever \`smpi/bcast\` says: the root sends to every"
    echo "other rank, so its rate is one broadcast per (N - 1) x ${CPU_US} us. One run per cell"
    echo "(deterministic for its seed), $ITERS broadcasts per ibmc_sim run, $SMPI_ITERS per SMPI run."
    echo "What K in flight can and cannot change in this model: bench/sim/README.md, \"Posted"
    echo "broadcasts\"."
    echo
    echo "Broadcasts per second (thousands), lossless:"
    echo
    printf '| nodes | ibmc blocking |'
    for k in "$@"; do printf ' ibmc %s in flight |' "$k"; done
    printf ' SMPI MPI_Bcast, binomial |'
    for k in "$@"; do printf ' SMPI MPI_Ibcast, %s in flight |' "$k"; done
    printf '\n|---:|---:|'
    for k in "$@" x "$@"; do printf -- '---:|'; done
    printf '\n'
    for n in $NODES; do
        printf '| %s | %s |' "$n" "$(kps "$(rate "$n" ibmc 0 0)")"
        for k in "$@"; do printf ' %s |' "$(kps "$(rate "$n" ibmc "$k" 0)")"; done
        printf ' %s |' "$(kps "$(rate "$n" smpi-bcast 0 0)")"
        for k in "$@"; do printf ' %s |' "$(kps "$(rate "$n" smpi-ibcast "$k" 0)")"; done
        printf '\n'
    done
    echo
    echo "Ratios, lossless: ibmc with K in flight against the blocking ibmc rate, SMPI's"
    echo "binomial MPI_Bcast, and SMPI's MPI_Ibcast with the same K in flight:"
    echo
    echo "| nodes | in flight | / ibmc blocking | / SMPI MPI_Bcast binomial | / SMPI MPI_Ibcast |"
    echo "|---:|---:|---:|---:|---:|"
    for n in $NODES; do
        for k in "$@"; do
            r=$(rate "$n" ibmc "$k" 0)
            echo "| $n | $k | $(ratio "$r" "$(rate "$n" ibmc 0 0)") | $(ratio "$r" "$(rate "$n" smpi-bcast 0 0)") | $(ratio "$r" "$(rate "$n" smpi-ibcast "$k" 0)") |"
        done
    done
    if [ -n "$LOSS" ]; then
        echo
        echo "With $(awk -v l="$LOSS" 'BEGIN { print l * 100 }') % multicast loss (each copy to each receiver; seed 1): broadcasts per"
        echo "second (thousands), and in brackets the NAKs of the whole run:"
        echo
        printf '| nodes | ibmc blocking |'
        for k in "$@"; do printf ' ibmc %s in flight |' "$k"; done
        printf '\n|---:|---:|'
        for k in "$@"; do printf -- '---:|'; done
        printf '\n'
        for n in $NODES; do
            printf '| %s |' "$n"
            for k in 0 "$@"; do
                c=$(awk -F'\t' -v n="$n" -v k="$k" -v l="$LOSS" \
                    'NR > 1 && $1 == n && $2 == "ibmc" && $3 == k && $4 + 0 == l + 0 { printf "%.0f (%s)", $5 / 1000, $7 }' "$tsv")
                printf ' %s |' "${c:--}"
            done
            printf '\n'
        done
    fi
    echo
    big=$(for n in $NODES; do echo "$n"; done | sort -n | tail -1)
    r4=$(rate "$big" ibmc 4 0) r0=$(rate "$big" ibmc 0 0)
    if [ -z "$r4" ] || [ -z "$r0" ]; then
        echo "Target (4 in flight at least the blocking rate at $big nodes): not run."
    elif awk -v a="$r4" -v b="$r0" 'BEGIN { exit !(a >= b) }'; then
        echo "Target, 4 in flight at least the blocking rate at $big nodes: **holds**, $r4"
        echo "broadcasts/s against $r0 ($(ratio "$r4" "$r0"))."
    else
        echo "Target, 4 in flight at least the blocking rate at $big nodes: **does not hold**,"
        echo "$r4 broadcasts/s against $r0 ($(ratio "$r4" "$r0"))."
    fi
    echo
    echo "Wall-clock per run (s): ibmc_sim $(awk -F'\t' 'NR > 1 && $2 == "ibmc" && $8 > m { m = $8 } END { print m }' "$tsv") at most; SMPI $(awk -F'\t' 'NR > 1 && $2 != "ibmc" && $8 > m { m = $8 } END { print m }' "$tsv") at most."
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    splice_doc "$doc" "$md" sim-ibcast "MPI_Ibcast rate with broadcasts in flight (SIMULATED)" \
        bench/sim/project-ibcast.sh || fail=1
fi
exit $fail
