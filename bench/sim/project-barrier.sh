#!/bin/bash
# Projection of MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast (arrivals up a
# k-nomial tree to rank 0, then a one-byte release by multicast) to
# 8..8192 nodes on the platform of project.sh, against SMPI's ports of
# MPICH's and Open MPI's MPI_Barrier algorithms.  One process per node.
# Every figure this prints is SIMULATED.
#
# ibmc_mcast's time is the sum of its two steps, each simulated on the same
# platform file: the arrival up the tree of radix KVAL (smpi_allreduce
# arrive:KVAL, the algorithm's own plan on SMPI's point-to-point), from a
# common start to rank 0 holding every arrival, and ibmc_sim's broadcast of
# one byte (the real engine; project.sh's validated small-message case),
# from the root's start to the last member done.  Baselines: SMPI's
# ompi_bruck (the dissemination barrier, MPICH's algorithm) and its mpich
# selector.  What was validated against published results is the broadcast
# (validate.sh); the arrival step and the baselines run on the
# point-to-point costs validate.sh fitted, and no published barrier figure
# was reproduced.
#
#   ./project-barrier.sh [OUTDIR]          writes OUTDIR/barrier.md and .tsv
#   REPORT_ONLY=1 ./project-barrier.sh     the same from OUTDIR's finished run
#   ./project-barrier.sh --doc FILE OUTDIR also replaces the generated region
#                                  of FILE (doc/results.md,
#                                  <!-- sim-barrier:begin/end -->)
#
# Under loss, only the release changes (the arrivals and the baselines go
# over reliable point-to-point): LOSSES gives the multicast loss rates at
# which ibmc_sim runs the release again (its NAK recovery, real engine), with
# the same arrival time added.
#
# Environment (defaults): NODES="8 64 256 1024 4096 8192", ITERS=10, KVAL=4
# (MPIR_CVAR_IBMC_BARRIER_TREE_KVAL's default), RADICES="2 4 8 16" (the
# arrival step alone at each radix, up to RADIX_NODES=1024 nodes: SMPI
# takes minutes a run beyond), LOSSES="0.0001 0.01" (0.01 % and 1 %),
# CPU_US=0.2, ONEWAY_US=1.0, BW=25e9.
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-"8 64 256 1024 4096 8192"}
RADIX_NODES=${RADIX_NODES:-1024}
ITERS=${ITERS:-10}
KVAL=${KVAL:-4}
RADICES=${RADICES:-"2 4 8 16"}
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

tsv=$OUT/barrier.tsv
fail=0
if [ "${REPORT_ONLY:-0}" != 1 ]; then
printf 'what\tnodes\tsize\tvariant\tmean_lat_us\n' >"$tsv"
t0=$(date +%s)
for n in $NODES; do
    sim_platform "$TMP" "$n" || { echo "FAIL: platform $n" >&2; exit 1; }
    l=$(./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU \
        --size 1 --iters "$ITERS" 2>&1 | grep '^SIMULATED')
    sim_ok "$l" "ibmc_sim $n 1" || { fail=1; continue; }
    b=$(field "$l" mean_lat_us)
    l=$(smpi "$n" arrive:"$KVAL")
    sim_ok "$l" "smpi arrive:$KVAL $n" || { fail=1; continue; }
    a=$(field "$l" mean_lat_us)
    add bar "$n" step:arrive "$a"
    add bar "$n" step:mcast "$b"
    add bar "$n" ibmc_mcast "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a + b }')"
    for p in $LOSSES; do
        l=$(./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU \
            --size 1 --iters "$ITERS" --loss "$p" --seed 7 2>&1 | grep '^SIMULATED')
        sim_ok "$l" "ibmc_sim $n 1 loss $p" || { fail=1; continue; }
        add bar "$n" "loss:$p" "$(awk -v a="$a" -v b="$(field "$l" mean_lat_us)" \
            'BEGIN { printf "%.3f", a + b }')"
    done
    for alg in ompi_bruck mpich; do
        l=$(smpi "$n" barrier --cfg=smpi/barrier:$alg)
        sim_ok "$l" "smpi barrier $n $alg" || { fail=1; continue; }
        add bar "$n" "smpi:$alg" "$(field "$l" mean_lat_us)"
    done
    for k in $RADICES; do
        [ "$n" -le "$RADIX_NODES" ] || break
        l=$(smpi "$n" arrive:"$k")
        sim_ok "$l" "smpi arrive:$k $n" || { fail=1; continue; }
        add radix "$n" "k$k" "$(field "$l" mean_lat_us)"
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
    echo "the release, SMPI runs the arrival tree and Open MPI's and MPICH's barrier algorithms on"
    echo "the same platform file). Parameters: those of the broadcast projection (${BW} B/s per host"
    echo "link and direction, one-way MPI latency ${ONEWAY_US} us, ${CPU_US} us of CPU per message"
    echo "sent or handled, a fat tree above 64 nodes), one process per node, $ITERS calls per point,"
    echo "all processes starting together. ibmc_mcast = its arrivals up a k-nomial tree of radix"
    echo "$KVAL (the algorithm's plan on SMPI's point-to-point) + ibmc_sim's broadcast of one byte;"
    echo "only the broadcast step was validated against published results."
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
    echo "Above 1x ibmc_mcast is faster. Its arrival step alone at each radix of the tree, us"
    echo "(k=2: a binomial tree):"
    echo
    python3 latency_table.py "$tsv" radix 0 \
        "$(echo $RADICES | awk '{ for (i = 1; i <= NF; i++) printf "%sk%s=k=%s", (i > 1 ? "," : ""), $i, $i }')" \
        "k2/k$KVAL=k=2 / k=$KVAL"
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    splice_doc "$doc" "$md" sim-barrier "MPI_Barrier projection to 8-8192 nodes (SIMULATED)" \
        bench/sim/project-barrier.sh || fail=1
fi
exit $fail
