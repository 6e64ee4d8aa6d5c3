#!/bin/bash
# Projection of MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast (arrivals up an
# F-ary tree to rank 0, then a one-byte release by multicast) to 8..8192
# nodes on the platform of project.sh, against SMPI's ports of MPICH's and
# Open MPI's MPI_Barrier algorithms.  One process per node.  Every figure
# this prints is SIMULATED.
#
# ibmc_mcast is ibmc_sim --coll barrier --boards --fanout FANOUT: the
# channel's real engine for both steps, ibmc_mcast_arrive (each member's
# count written by RDMA into its parent's arrival board) then rank 0's
# ibmc_mcast_bcast of one byte; the members' ACKs of the release are board
# writes too.  A board write costs its writer one message's CPU and its
# owner none (the owner only polls the word, which the engine does anyway).
# Its time runs from the common start to the last process out; the
# arrival step alone (to rank 0 holding every arrival) and the release
# (the rest) are shown beside it.  Baselines: SMPI's ompi_bruck (the
# dissemination barrier, MPICH's algorithm) and its mpich selector, on the
# same platform file.  What was validated against published results is
# the broadcast (validate.sh); the arrivals' board writes (8-byte
# transfers) and the baselines run on the point-to-point costs validate.sh
# fitted, and no published barrier figure was reproduced.
#
#   ./project-barrier.sh [OUTDIR]          writes OUTDIR/barrier.md and .tsv
#   REPORT_ONLY=1 ./project-barrier.sh     the same from OUTDIR's finished run
#   ./project-barrier.sh --doc FILE OUTDIR also replaces the generated region
#                                  of FILE (doc/results.md,
#                                  <!-- sim-barrier:begin/end -->) and
#                                  the selection file's MPI_Barrier rule
#                                  (maint/tuning/coll/ibmc, tuning.py), and
#                                  draws doc/img/sim_barrier.png
#
# Under loss, only the release changes (the arrivals and the baselines go
# over reliable point-to-point): LOSSES gives the multicast loss rates at
# which ibmc_sim runs the whole barrier again (--loss, the engine's NAK
# recovery of the release).
#
# Environment (defaults): NODES="8 64 256 1024 4096 8192", ITERS=10,
# FANOUT=32 (children per parent in the arrival tree,
# MPIR_CVAR_IBMC_BARRIER_FANOUT's default), FANOUTS="4 8 16 32 64" (the
# whole barrier at each fanout, up to RADIX_NODES=1024 nodes),
# LOSSES="0.0001 0.01" (0.01 % and 1 %), SELECTOR_NODES=4096 (SMPI's mpich
# selector only up to there: it chose ompi_bruck's figures at every size
# it finished, and at 8,192 it had not finished one barrier in 3 minutes),
# CPU_US=0.2, ONEWAY_US=1.0, BW=25e9.
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-"8 64 256 1024 4096 8192"}
RADIX_NODES=${RADIX_NODES:-1024}
ITERS=${ITERS:-10}
FANOUT=${FANOUT:-32}
FANOUTS=${FANOUTS:-"4 8 16 32 64"}
SELECTOR_NODES=${SELECTOR_NODES:-4096}
LOSSES=${LOSSES:-"0.0001 0.01"}
hdr_fabric
MTU=4096

make -j1 ibmc_sim smpi_allreduce >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_project_bar.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

SMPI_CFG=$(smpi_bcast_cfg "$CPU_S")
smpi() { # N MODE [CFG]: one line of smpi_allreduce MODE
    # shellcheck disable=SC2086
    smpirun -np "$1" -platform "$TMP/p$1.xml" -hostfile "$TMP/h$1" ./smpi_allreduce "$2" 0 \
        "$ITERS" $SMPI_CFG ${3:-} 2>&1 | grep '^SIMULATED smpi_allreduce'
}
add() { printf '%s\t%s\t0\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$tsv"; } # WHAT N VARIANT US
ibmc_bar() { # N FANOUT [ARGS]: one line of ibmc_sim's barrier mode with boards
    local n=$1 f=$2
    shift 2
    ./ibmc_sim --coll barrier --boards --fanout "$f" --nodes "$n" --bw "$BW" --lat "$LINK_S" \
        --cpu-per-pkt "$CPU_US" --mtu $MTU --iters "$ITERS" "$@" 2>&1 | grep '^SIMULATED'
}

tsv=$OUT/barrier.tsv
fail=0
if [ "${REPORT_ONLY:-0}" != 1 ]; then
printf 'what\tnodes\tsize\tvariant\tmean_lat_us\n' >"$tsv"
t0=$(date +%s)
for n in $NODES; do
    sim_platform "$TMP" "$n" || { echo "FAIL: platform $n" >&2; exit 1; }
    l=$(ibmc_bar "$n" "$FANOUT")
    sim_ok "$l" "ibmc_sim barrier $n fanout $FANOUT" || { fail=1; continue; }
    b=$(field "$l" mean_lat_us)
    a=$(field "$l" arrive_us)
    add bar "$n" step:arrive "$a"
    add bar "$n" step:mcast "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }')"
    add bar "$n" ibmc_mcast "$b"
    for p in $LOSSES; do
        l=$(ibmc_bar "$n" "$FANOUT" --loss "$p" --seed 7)
        sim_ok "$l" "ibmc_sim barrier $n loss $p" || { fail=1; continue; }
        add bar "$n" "loss:$p" "$(field "$l" mean_lat_us)"
    done
    for alg in ompi_bruck mpich; do
        [ "$alg" = mpich ] && [ "$n" -gt "$SELECTOR_NODES" ] && continue
        l=$(smpi "$n" barrier --cfg=smpi/barrier:$alg)
        sim_ok "$l" "smpi barrier $n $alg" || { fail=1; continue; }
        add bar "$n" "smpi:$alg" "$(field "$l" mean_lat_us)"
    done
    for f in $FANOUTS; do
        [ "$n" -le "$RADIX_NODES" ] || break
        l=$(ibmc_bar "$n" "$f")
        sim_ok "$l" "ibmc_sim barrier $n fanout $f" || { fail=1; continue; }
        add fanout "$n" "f$f" "$(field "$l" mean_lat_us)"
    done
    echo "project-barrier: $n nodes done ($(($(date +%s) - t0)) s)" >&2
done
run_stamp $(($(date +%s) - t0)) >"$OUT/barrier-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/barrier-run.txt" ||
    { echo "FAIL: no run in $OUT" >&2; exit 1; }

md=$OUT/barrier.md
{
    stamp_line bench/sim/project-barrier.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; ibmc_sim runs the channel's real engine for"
    echo "both steps of ibmc_mcast, SMPI runs Open MPI's and MPICH's barrier algorithms on the same"
    echo "platform file). Parameters: those of the broadcast projection (${BW} B/s per host link and"
    echo "direction, one-way MPI latency ${ONEWAY_US} us, ${CPU_US} us of CPU per message sent or"
    echo "handled, a fat tree above 64 nodes), one process per node, $ITERS calls per point, all"
    echo "processes starting together. ibmc_mcast = its arrivals up a tree of $FANOUT children a"
    echo "parent, each member's count an RDMA write into its parent's board (the writer pays one"
    echo "message's CPU, the board's owner none: it only polls the word), then rank 0's release, a"
    echo "broadcast of one byte whose ACKs are board writes too; its arrivals = common start to rank 0"
    echo "holding every arrival, its release = the rest. Only the broadcast was validated against"
    echo "published results."
    echo
    echo "MPI_Barrier latency, us (common start to the last process out):"
    echo
    python3 latency_table.py "$tsv" bar 0 \
        "ibmc_mcast=ibmc_mcast,step:arrive=its arrivals,step:mcast=its release,smpi:ompi_bruck=dissemination,smpi:mpich=mpich" \
        "smpi:ompi_bruck/ibmc_mcast=dissemination / ibmc_mcast"
    echo
    echo "ibmc_mcast with the release's multicast packets lost at random (ibmc_sim --loss, the"
    echo "engine's NAK recovery), us; the arrivals and dissemination lose nothing:"
    echo
    python3 latency_table.py "$tsv" bar 0 \
        "ibmc_mcast=lossless$(for p in $LOSSES; do awk -v p="$p" 'BEGIN { printf ",loss:%s=%g %% loss", p, p * 100 }'; done)" \
        "smpi:ompi_bruck/loss:${LOSSES##* }=dissemination / ibmc_mcast at $(awk -v p="${LOSSES##* }" 'BEGIN { printf "%g", p * 100 }') %"
    echo
    echo "Above 1x ibmc_mcast is faster. The whole ibmc_mcast barrier at each fanout of the arrival"
    echo "tree, us (F=$FANOUT is the rows above; above 1x it is faster than F=${FANOUTS%% *}):"
    echo
    python3 latency_table.py "$tsv" fanout 0 \
        "$(echo "$FANOUTS" | awk '{ for (i = 1; i <= NF; i++) printf "%sf%s=F=%s", (i > 1 ? "," : ""), $i, $i }')" \
        "f${FANOUTS%% *}/f$FANOUT=F=${FANOUTS%% *} / F=$FANOUT"
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    publish_sync barrier "$tsv" "$md" "$doc" "MPI_Barrier projection to 8-8192 nodes (SIMULATED)" || fail=1
fi
exit $fail
