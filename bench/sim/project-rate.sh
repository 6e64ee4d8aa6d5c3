#!/bin/bash
# The MPI_Bcast rate of ibmc_mcast at 8..8192 nodes on the HDR-class fabric
# of project.sh, against SMPI's binomial tree on the same platform file:
# back-to-back 1 B broadcasts from one root (seed 000 §6.3's throughput
# test), and how the co-root subgroup (MPIR_CVAR_IBMC_MCAST_SUBGROUP), the
# ACK interval (MPIR_CVAR_IBMC_MCAST_ACK_EVERY) and the window
# (MPIR_CVAR_IBMC_MCAST_WINDOW) move it.  validate.sh reproduces seed 000's
# small-message throughput gain within 25 % at 0.5, 1 and 2 us per message,
# which is what lets this be projected.  Every figure is SIMULATED.
#
#   ./project-rate.sh [OUTDIR]          writes OUTDIR/rate.md and rate.tsv
#   REPORT_ONLY=1 ./project-rate.sh ... the same from OUTDIR's finished run
#   ./project-rate.sh --doc FILE OUTDIR also replaces the generated region of
#                                       FILE (doc/results.md,
#                                       <!-- sim-rate:begin/end -->)
#
# Environment (defaults): NODES="8 64 256 1024 4096", ITERS=300 (4.7 windows
# of 64: the rate is the steady state's; a window sweep run has 4 windows or
# more), WINDOW_MAX_N=256, NONE_MAX_N=1024 (the largest node count that
# runs without co-roots: there the root takes an ACK from every member, N
# RC messages per ACK round, and it streams at a tenth of binomial's rate
# already at 1,024), SMPI_ITERS=100, CPU_US=0.2, ONEWAY_US=1.0, BW=25e9,
# DEFAULT_NODES="8192": node counts run with the defaults only, beside the
# binomial tree.  One rate run at 8,192 nodes takes about 2 minutes and
# 8 GB on the 2-core machine (README.md, "Wall-clock growth with N").
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-"8 64 256 1024 4096"}
DEFAULT_NODES=${DEFAULT_NODES-"8192"}
NONE_MAX_N=${NONE_MAX_N:-1024}
ITERS=${ITERS:-300}
SMPI_ITERS=${SMPI_ITERS:-100}
hdr_fabric
MTU=4096
SUBGROUPS="4 8 16 32 64 128"    # 8 = 16 / 2, the default with the default ACK interval
ACKS="4 8 16 32 64"             # with the default subgroup rule, ACK interval / 2
WINDOWS="16 32 64 128 256"
WINDOW_MAX_N=${WINDOW_MAX_N:-256}   # the window sweep's largest node count

make -j1 ibmc_sim smpi_bcast >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_rate.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
SMPI_CFG="$(smpi_bcast_cfg "$CPU_S") --cfg=smpi/bcast:binomial_tree"

tsv=$OUT/rate.tsv
fail=0
# sim N VARIANT ARGS...: one rate run, one tsv row
sim() {
    n=$1 v=$2; shift 2
    l=$(./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU \
        --size 1 --iters "$ITERS" --mode rate "$@" 2>&1 | grep '^SIMULATED')
    sim_ok "$l" "ibmc_sim $n $v" || { fail=1; return; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$v" "$(field "$l" bcasts_per_s)" \
        "$(field "$l" root_in_per_bcast)" "$(field "$l" acks_sent)" "$(field "$l" subgroup)" \
        "$(field "$l" wall_s)" >>"$tsv"
}
if [ "${REPORT_ONLY:-0}" != 1 ]; then
    printf 'nodes\tvariant\tbcasts_per_s\troot_in\tacks\tsubgroup\twall_s\n' >"$tsv"
    t0=$(date +%s)
    for n in $NODES $DEFAULT_NODES; do
        ./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --platform-out "$TMP/p.xml" \
            --platform-only || { echo "FAIL: platform $n" >&2; exit 1; }
        i=0; : >"$TMP/h"
        while [ $i -lt "$n" ]; do echo "n$i" >>"$TMP/h"; i=$((i + 1)); done
        w0=$(date +%s.%N)
        # shellcheck disable=SC2086
        l=$(smpirun -np "$n" -platform "$TMP/p.xml" -hostfile "$TMP/h" ./smpi_bcast rate 1 \
            "$SMPI_ITERS" $SMPI_CFG 2>&1 | grep '^SIMULATED smpi_bcast')
        if sim_ok "$l" "smpi $n"; then
            w=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
            printf '%s\tbinomial\t%s\t\t\t\t%s\n' "$n" "$(field "$l" bcasts_per_s)" "$w" >>"$tsv"
        else
            fail=1
        fi
        if [[ " $DEFAULT_NODES " == *" $n "* ]]; then
            sim "$n" subgroup=8 --subgroup 8
            echo "project-rate: $n nodes done ($(($(date +%s) - t0)) s)" >&2
            continue
        fi
        [ "$n" -le "$NONE_MAX_N" ] && sim "$n" none --subgroup "$n"
        for s in $SUBGROUPS; do
            [ "$s" -lt "$n" ] && sim "$n" "subgroup=$s" --subgroup "$s"
        done
        for m in $ACKS; do
            [ "$m" = 16 ] || sim "$n" "ack_every=$m" --ack-every "$m"
        done
        # at least 4 windows of broadcasts, or a large window never fills
        # and the rate is that of a burst, not of the steady state
        [ "$n" -le "$WINDOW_MAX_N" ] && for w in $WINDOWS; do
            k=$((4 * w > ITERS ? 4 * w : ITERS))
            [ "$w" = 64 ] || sim "$n" "window=$w" --window "$w" --sq "$w" --iters "$k"
        done
        echo "project-rate: $n nodes done ($(($(date +%s) - t0)) s)" >&2
    done
    run_stamp $(($(date +%s) - t0)) >"$OUT/rate-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/rate-run.txt" || { echo "FAIL: no run in $OUT" >&2; exit 1; }

# table VARIANTS DEFAULT [MAXN]: one row per node count up to MAXN, the rate
# of each variant (k broadcasts/s) and the root's messages handled per
# broadcast.  A variant that was not run is the default run (DEFAULT, the
# default value of the swept CVAR) or, for a subgroup at least the
# communicator's size, the run without co-roots; otherwise "-".
table() {
    awk -F'\t' -v vars="$1" -v dflt="$2" -v maxn="${3:-0}" -v def="subgroup=8" '
        function pick(k, v,    x) {
            x = k "|" v
            if (x in r) return x
            if (v ~ /^subgroup=/ && substr(v, 10) + 0 >= k + 0) return k "|none"
            if (v == dflt) return (k "|" def) in r ? k "|" def : k "|none"
            return ""
        }
        NR > 1 { r[$1 "|" $2] = $3; in_[$1 "|" $2] = $4; N[$1] = 1 }
        END {
            nv = split(vars, V, " ")
            printf "| nodes | binomial |"
            for (i = 1; i <= nv; i++) printf " %s |", V[i]
            printf " default / binomial |\n|---:|---:|"
            for (i = 1; i <= nv; i++) printf "---:|"
            printf "---:|\n"
            n = 0; for (k in N) if (maxn == 0 || k + 0 <= maxn) L[++n] = k + 0
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (L[j] < L[i]) { t = L[i]; L[i] = L[j]; L[j] = t }
            for (i = 1; i <= n; i++) {
                k = L[i]; b = r[k "|binomial"]
                printf "| %d | %s |", k, b == "" ? "-" : sprintf("%.0f", b / 1000)
                for (j = 1; j <= nv; j++) {
                    x = pick(k, V[j])
                    printf " %s |", x == "" ? "-" : sprintf("%.0f (%s)", r[x] / 1000, in_[x])
                }
                d = (k "|" def) in r ? k "|" def : k "|none"
                printf " %s |\n", b == "" || !(d in r) ? "-" : sprintf("%.2fx", r[d] / b)
            }
        }' "$tsv"
}
md=$OUT/rate.md
{
    stamp_line bench/sim/project-rate.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; ibmc_sim runs the real"
    echo "engine, SMPI runs MPICH's binomial tree on the same platform file). The platform and"
    echo "costs of the latency projection: ${BW} B/s per host link and direction, one-way MPI"
    echo "latency ${ONEWAY_US} us, ${CPU_US} us of CPU per message sent or handled, MTU $MTU."
    echo "Back-to-back 1 B broadcasts from root 0 with no barrier ($ITERS for ibmc_mcast,"
    echo "$SMPI_ITERS for SMPI): thousands of broadcasts per second, and in brackets the"
    echo "messages the root handles per broadcast (its ACK load). Unless a column says"
    echo "otherwise: window 64, ACK every 16, subgroups of 8 (the defaults; co-roots from 9"
    echo "members on). At ${DEFAULT_NODES:-no} nodes only the defaults ran, and none (no co-roots)"
    echo "ran up to $NONE_MAX_N nodes; \"-\" marks a variant not run."
    echo
    echo "Co-root subgroup size (\`MPIR_CVAR_IBMC_MCAST_SUBGROUP\`; none = every member ACKs the root):"
    echo
    table "none subgroup=4 subgroup=8 subgroup=16 subgroup=32 subgroup=64 subgroup=128" subgroup=8
    echo
    echo "ACK interval (\`MPIR_CVAR_IBMC_MCAST_ACK_EVERY\`, subgroups of half of it):"
    echo
    table "ack_every=4 ack_every=8 ack_every=16 ack_every=32 ack_every=64" ack_every=16
    echo
    echo "Window (\`MPIR_CVAR_IBMC_MCAST_WINDOW\`, a send queue as deep; at least 4 windows of broadcasts"
    echo "a run, up to $WINDOW_MAX_N nodes):"
    echo
    table "window=16 window=32 window=64 window=128 window=256" window=64 "$WINDOW_MAX_N"
    echo
    echo "Wall-clock per run (s): ibmc_sim $(awk -F'\t' 'NR > 1 && $2 != "binomial" && $7 > m { m = $7 } END { print m }' "$tsv") at most; SMPI $(awk -F'\t' 'NR > 1 && $2 == "binomial" && $7 > m { m = $7 } END { print m }' "$tsv") at most."
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    splice_doc "$doc" "$md" sim-rate "MPI_Bcast rate at 8-8192 nodes (SIMULATED)" \
        bench/sim/project-rate.sh || fail=1
fi
exit $fail
