#!/bin/bash
# Broadcasts along the rows of a process grid, every row at once (issue #49
# part 1): 1,024 nodes as 32 rows of 32, each row a communicator of
# MPI_Comm_split and a channel of its own (ibmc_sim --grid), on the
# HDR-class fabric of project.sh.  With one multicast group for all rows
# (--groups shared, what a netmod does that gives disjoint sibling
# communicators the same group) every node receives every row's packets
# and its channel refuses the other rows' as foreign, at the CPU cost of
# handling each; with a group a row (--groups separate) it receives only
# its own row's.  For each: the multicast packets a node receives per
# broadcast of its row (own row, other rows), the latency, and the rate.
# Every figure is SIMULATED.
#
#   ./project-grid.sh [OUTDIR]          writes OUTDIR/grid.md and grid.tsv
#   REPORT_ONLY=1 ./project-grid.sh ... the same from OUTDIR's finished run
#   ./project-grid.sh --doc FILE OUTDIR also replaces the generated region of
#                                       FILE (doc/results.md,
#                                       <!-- sim-grid:begin/end -->)
#
# Environment (defaults): NODES=1024, ROWS=32, SIZES="1 1024",
# LAT_ITERS=20 (latency: an ideal barrier across the whole grid between
# broadcasts, every row's root starting at once), RATE_ITERS=100 (rate:
# every row back to back, no barrier), LONG_ITERS=300 (a second, longer
# rate run with a group a row, the count project-rate.sh uses; 0 skips
# it), SHARED_RATE_SIZES="1" (the sizes whose rate is also run with one
# shared group), CPU_US=0.2, ONEWAY_US=1.0, BW=25e9.  The shared-group rate
# runs take most of the time: every node handles every row's packets, so
# there are about ROWS times the messages of a separate-groups run, and
# SimGrid solves the copies under a leaf switch, which share its link, as
# one max-min system.  Hence RATE_ITERS=100 (a window and a half of 64),
# not project-rate.sh's 300; the rate with a group a row is read from both
# runs, to show how far the shorter one is from the steady state.  At
# 1 KiB every row's first window reaches every node's link at once, the
# copies in flight pile up, and the shared-group rate run outgrew the
# machine (README.md, "Grid"): it is not run by default.
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-1024}
ROWS=${ROWS:-32}
SIZES=${SIZES:-"1 1024"}
SHARED_RATE_SIZES=${SHARED_RATE_SIZES-"1"}
LAT_ITERS=${LAT_ITERS:-20}
RATE_ITERS=${RATE_ITERS:-100}
LONG_ITERS=${LONG_ITERS:-300}
hdr_fabric
MTU=4096
COLS=$((NODES / ROWS))

make -j1 ibmc_sim >/dev/null || { echo "FAIL: build" >&2; exit 1; }

tsv=$OUT/grid.tsv
fail=0
# sim MODE GROUPS SIZE ITERS: one run, one tsv row
sim() {
    l=$(./ibmc_sim --nodes "$NODES" --grid "$ROWS" --groups "$2" --bw "$BW" --lat "$LINK_S" \
        --cpu-per-pkt "$CPU_US" --mtu $MTU --size "$3" --iters "$4" --mode "$1" 2>&1 |
        grep '^SIMULATED')
    sim_ok "$l" "ibmc_sim --grid $ROWS --groups $2 --mode $1 --size $3 --iters $4" || { fail=1; return; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" \
        "$(field "$l" mcast_in_per_bcast)" "$(field "$l" own_per_bcast)" \
        "$(field "$l" foreign_per_bcast)" "$(field "$l" row_lat_us)" "$(field "$l" mean_lat_us)" \
        "$(field "$l" bcasts_per_s)" "$(field "$l" grid_bcasts_per_s)" \
        "$(field "$l" root_in_per_bcast)" "$(field "$l" wall_s)" >>"$tsv"
    echo "project-grid: $1 $2 $3 B x $4: wall $(field "$l" wall_s) s" >&2
}
if [ "${REPORT_ONLY:-0}" != 1 ]; then
    [ $((NODES % ROWS)) = 0 ] || { echo "FAIL: $ROWS rows do not divide $NODES nodes" >&2; exit 1; }
    printf 'mode\tgroups\tsize\titers\tin\town\tforeign\trow_lat_us\tgrid_lat_us\tbcasts_per_s\tgrid_bcasts_per_s\troot_in\twall_s\n' >"$tsv"
    t0=$(date +%s)
    for s in $SIZES; do
        sim latency separate "$s" "$LAT_ITERS"
        sim latency shared "$s" "$LAT_ITERS"
        sim rate separate "$s" "$RATE_ITERS"
        [[ " $SHARED_RATE_SIZES " == *" $s "* ]] && sim rate shared "$s" "$RATE_ITERS"
        [ "$LONG_ITERS" -gt 0 ] && sim rate separate "$s" "$LONG_ITERS"
    done
    run_stamp $(($(date +%s) - t0)) >"$OUT/grid-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/grid-run.txt" || { echo "FAIL: no run in $OUT" >&2; exit 1; }

# table MODE: one row per size, groups and run length
table() {
    awk -F'\t' -v mode="$1" '
        NR > 1 && $1 == mode {
            if (mode == "latency")
                printf "| %s B | %s | %s | %s | %s | %s | %.2f | %.2f | %s |\n", $3, $2, $4, $5, $6, $7, $8, $9, $12
            else
                printf "| %s B | %s | %s | %s | %s | %s | %.0f | %.1f | %s |\n", $3, $2, $4, $5, $6, $7, $10 / 1000, $11 / 1e6, $12
        }' "$tsv"
}
# ratio SIZE COLUMN ITERS_SEPARATE ITERS_SHARED MODE: separate / shared, or
# shared / separate for a latency column
ratio() {
    awk -F'\t' -v s="$1" -v c="$2" -v is="$3" -v ih="$4" -v mode="$5" '
        NR > 1 && $1 == mode && $3 == s && $2 == "separate" && $4 == is { a = $c }
        NR > 1 && $1 == mode && $3 == s && $2 == "shared" && $4 == ih { b = $c }
        END { if (a == "" || b == "" || a == 0 || b == 0) print "-"
              else if (mode == "latency") printf "%.1fx", b / a
              else printf "%.1fx", a / b }' "$tsv"
}
md=$OUT/grid.md
{
    stamp_line bench/sim/project-grid.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; ibmc_sim runs the real engine, one"
    echo "channel per row). $NODES nodes as $ROWS rows of $COLS consecutive nodes, each row a"
    echo "communicator of its own (as MPI_Comm_split makes them: the same context id and"
    echo "epoch in every row), every row broadcasting from its rank 0 at once. The platform"
    echo "and costs of the latency projection: ${BW} B/s per host link and direction, one-way"
    echo "MPI latency ${ONEWAY_US} us, ${CPU_US} us of CPU per message sent or handled, MTU $MTU;"
    if [ "$NODES" -gt 64 ]; then
        echo "a fat tree of 32 hosts a leaf switch (with rows of 32, a row is one leaf's hosts, and"
        echo "a row's own group never leaves its leaf)."
    else
        echo "one switch."
    fi
    echo "**shared**: one multicast group for all rows (a netmod giving disjoint"
    echo "sibling communicators the same group): the switches replicate every row's packets to"
    echo "every node, whose channel refuses the other rows' as foreign (their sender is no"
    echo "member), at the CPU cost of handling each. **separate**: a group a row."
    echo "Packets: multicast packets the fabric delivers to a node per broadcast of its row,"
    echo "mean over the nodes (a row's root receives none of its own row's data, so own row"
    echo "is $((COLS - 1)) / $COLS, plus the roots' ACK questions); root in: the messages row 0's"
    echo "root handles per broadcast."
    echo
    echo "Latency, $LAT_ITERS broadcasts, an ideal barrier across the whole grid between them:"
    echo "a row's broadcast from its root's start to its last member's completion, and the"
    echo "grid's from the first root's start to the last member's completion in any row (us)."
    echo
    echo "| size | groups | broadcasts | packets, all | own row | other rows | row latency | grid latency | root in |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    table latency
    echo
    echo "Rate, every row back to back with no barrier: each row's broadcasts per second"
    echo "(k/s; every row made its broadcasts within the run's span) and all rows' together"
    echo "(M/s). With one shared group, only at ${SHARED_RATE_SIZES:-no size} B: larger packets"
    echo "pile up on every node's link in the rows' first windows, which SimGrid could not"
    echo "simulate in the time this script has (bench/sim/README.md, \"Grid\")."
    echo
    echo "| size | groups | broadcasts | packets, all | own row | other rows | per row (k/s) | all rows (M/s) | root in |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    table rate
    echo
    for s in $SIZES; do
        r=$(ratio "$s" 10 "$RATE_ITERS" "$RATE_ITERS" rate)
        echo "- $s B: a row's broadcast takes $(ratio "$s" 8 "$LAT_ITERS" "$LAT_ITERS" latency) as long with one shared group as"
        if [ "$r" = - ]; then
            echo "  with a group a row (rate: not run with a shared group)."
        else
            echo "  with a group a row; a group a row gives $r the shared group's rate over"
            echo "  $RATE_ITERS broadcasts$([ "$LONG_ITERS" -gt 0 ] && echo " ($(ratio "$s" 10 "$LONG_ITERS" "$RATE_ITERS" rate) with its rate over $LONG_ITERS)")."
        fi
    done
    echo
    echo "Wall-clock per run (s): $(awk -F'\t' 'NR > 1 && $2 == "separate" && $13 > m { m = $13 } END { print m }' "$tsv") at most with separate groups, $(awk -F'\t' 'NR > 1 && $2 == "shared" && $13 > m { m = $13 } END { print m }' "$tsv") with one shared group."
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    splice_doc "$doc" "$md" sim-grid "Broadcasts along the rows of a $ROWS x $COLS grid (SIMULATED)" \
        bench/sim/project-grid.sh || fail=1
fi
exit $fail
