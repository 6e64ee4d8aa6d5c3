#!/bin/bash
# Projection of MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ibmc_mcast (a reduce to
# rank 0, then the result by multicast) to 8..4096 nodes on the platform of
# project.sh, against SMPI's ports of MPICH's MPI_Allreduce algorithms.  One
# process per node.  Every figure this prints is SIMULATED.
#
# ibmc_mcast's time is the sum of its two steps, each simulated on the same
# platform file: its reduce up the k-nomial tree of radix KVAL
# (smpi_allreduce knomial:KVAL, the algorithm's own plan, ibmc_knomial.h,
# ported to SMPI's point-to-point calls), from a common start to rank 0
# holding the result, and ibmc_sim's broadcast latency (the real engine;
# project.sh's validated small-message case), from the root's start to the
# last member done.  The sum is exact for this model as the members wait in the
# broadcast when the reduce ends at the root; it leaves out the node's own
# shared-memory steps, which neither side has here.  What was validated
# against published results is the broadcast (validate.sh); SMPI's reduce
# and allreduce ports are SMPI's own, run with the point-to-point costs that
# validate.sh fitted, and were not checked against a published allreduce.
#
#   ./project-allreduce.sh [OUTDIR]        writes OUTDIR/allreduce.md and .tsv
#   REPORT_ONLY=1 ./project-allreduce.sh   the same from OUTDIR's finished run
#   ./project-allreduce.sh --doc FILE OUTDIR  also replaces the generated
#                                  region of FILE (doc/results.md,
#                                  <!-- sim-allreduce:begin/end -->)
#
# Under loss, only the result's multicast changes (the reduce and the
# baselines go over reliable point-to-point): at the first size, ibmc_sim
# runs the broadcast again at each multicast loss rate of LOSSES (its NAK
# recovery, real engine), with the same reduce time added.
#
# Environment (defaults): NODES="8 64 256 1024 4096", SIZES="8 1024",
# ITERS=10, KVAL=4 (MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL's default),
# RADICES="2 4 8 16" (the reduce step alone at each radix, at the first
# size; 2 is MPICH's binomial reduce), LOSSES="0.0001 0.01", CPU_US=0.2,
# ONEWAY_US=1.0, BW=25e9.
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-"8 64 256 1024 4096"}
SIZES=${SIZES:-"8 1024"}
ITERS=${ITERS:-10}
KVAL=${KVAL:-4}
RADICES=${RADICES:-"2 4 8 16"}
LOSSES=${LOSSES:-"0.0001 0.01"}
hdr_fabric
MTU=4096

make -j1 ibmc_sim smpi_allreduce >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_project_ar.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

SMPI_CFG=$(smpi_bcast_cfg "$CPU_S")
platform() { sim_platform "$TMP" "$1"; } # N: $TMP/p$N.xml and $TMP/h$N
smpi() { # N MODE SIZE [CFG]: smpi_allreduce MODE (allreduce under CFG, or knomial:R)
    # shellcheck disable=SC2086
    smpirun -np "$1" -platform "$TMP/p$1.xml" -hostfile "$TMP/h$1" ./smpi_allreduce "$2" "$3" \
        "$ITERS" $SMPI_CFG ${4:-} 2>&1 | grep '^SIMULATED smpi_allreduce'
}

tsv=$OUT/allreduce.tsv
fail=0
if [ "${REPORT_ONLY:-0}" != 1 ]; then
printf 'what\tnodes\tsize\tvariant\tmean_lat_us\n' >"$tsv"
t0=$(date +%s)
for n in $NODES; do
    platform "$n" || { echo "FAIL: platform $n" >&2; exit 1; }
    for s in $SIZES; do
        l=$(./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU \
            --size "$s" --iters "$ITERS" 2>&1 | grep '^SIMULATED')
        sim_ok "$l" "ibmc_sim $n $s" || { fail=1; continue; }
        b=$(field "$l" mean_lat_us)
        l=$(smpi "$n" knomial:"$KVAL" "$s")
        sim_ok "$l" "smpi knomial:$KVAL $n $s" || { fail=1; continue; }
        r=$(field "$l" mean_lat_us)
        printf 'ar\t%s\t%s\tstep:reduce\t%s\n' "$n" "$s" "$r" >>"$tsv"
        printf 'ar\t%s\t%s\tstep:mcast\t%s\n' "$n" "$s" "$b" >>"$tsv"
        printf 'ar\t%s\t%s\tibmc_mcast\t%s\n' "$n" "$s" \
            "$(awk -v a="$r" -v b="$b" 'BEGIN { printf "%.3f", a + b }')" >>"$tsv"
        for p in $LOSSES; do
            [ "$s" = "${SIZES%% *}" ] || break
            l=$(./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" \
                --mtu $MTU --size "$s" --iters "$ITERS" --loss "$p" --seed 7 2>&1 | grep '^SIMULATED')
            sim_ok "$l" "ibmc_sim $n $s loss $p" || { fail=1; continue; }
            printf 'ar\t%s\t%s\tloss:%s\t%s\n' "$n" "$s" "$p" \
                "$(awk -v a="$r" -v b="$(field "$l" mean_lat_us)" 'BEGIN { printf "%.3f", a + b }')" \
                >>"$tsv"
        done
        for a in rdb mpich; do
            l=$(smpi "$n" allreduce "$s" --cfg=smpi/allreduce:$a)
            sim_ok "$l" "smpi allreduce $n $s $a" || { fail=1; continue; }
            printf 'ar\t%s\t%s\tsmpi:%s\t%s\n' "$n" "$s" $a "$(field "$l" mean_lat_us)" >>"$tsv"
        done
    done
    first=$(echo "$SIZES" | awk '{ print $1 }')
    for k in $RADICES; do
        l=$(smpi "$n" knomial:"$k" "$first")
        sim_ok "$l" "smpi knomial:$k $n $first" || { fail=1; continue; }
        printf 'radix\t%s\t%s\tk%s\t%s\n' "$n" "$first" "$k" "$(field "$l" mean_lat_us)" >>"$tsv"
    done
    echo "project-allreduce: $n nodes done ($(($(date +%s) - t0)) s)" >&2
done
run_stamp $(($(date +%s) - t0)) >"$OUT/allreduce-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/allreduce-run.txt" ||
    { echo "FAIL: no run in $OUT" >&2; exit 1; }

md=$OUT/allreduce.md
{
    stamp_line bench/sim/project-allreduce.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; ibmc_sim runs the channel's real engine for"
    echo "the broadcast step, SMPI runs MPICH's reduce and allreduce algorithms on the same"
    echo "platform file). Parameters: those of the broadcast projection (${BW} B/s per host link and"
    echo "direction, one-way MPI latency ${ONEWAY_US} us, ${CPU_US} us of CPU per message sent or"
    echo "handled, a fat tree above 64 nodes), one process per node, $ITERS calls per point, all"
    echo "processes starting together. ibmc_mcast = its reduce to rank 0 up a k-nomial tree of radix"
    echo "$KVAL (the algorithm's plan on SMPI's point-to-point) + ibmc_sim's broadcast of the result;"
    echo "only the broadcast step was validated against published results."
    echo
    echo "MPI_Allreduce latency, us (common start to the last process done):"
    echo
    python3 latency_table.py "$tsv" ar "$SIZES" \
        "ibmc_mcast=ibmc_mcast,step:reduce=its reduce,step:mcast=its multicast,smpi:rdb=rdb,smpi:mpich=mpich" \
        "smpi:rdb/ibmc_mcast=rdb / ibmc_mcast"
    echo
    first=$(echo "$SIZES" | awk '{ print $1 }')
    echo "ibmc_mcast at $first B with the result's multicast packets lost at random (ibmc_sim"
    echo "--loss, the engine's NAK recovery), us; the reduce and rdb lose nothing:"
    echo
    python3 latency_table.py "$tsv" ar "$first" \
        "ibmc_mcast=lossless$(for p in $LOSSES; do awk -v p="$p" 'BEGIN { printf ",loss:%s=%g %% loss", p, p * 100 }'; done)" \
        "smpi:rdb/loss:${LOSSES##* }=rdb / ibmc_mcast at $(awk -v p="${LOSSES##* }" 'BEGIN { printf "%g", p * 100 }') %"
    echo
    echo "rdb / ibmc_mcast above 1x: ibmc_mcast is faster. Its reduce step alone at each radix of"
    echo "the tree, us, at $(echo "$SIZES" | awk '{ print $1 }') B (k=2: a binomial tree, MPICH's reduce):"
    echo
    python3 latency_table.py "$tsv" radix "$(echo "$SIZES" | awk '{ print $1 }')" \
        "$(echo $RADICES | awk '{ for (i = 1; i <= NF; i++) printf "%sk%s=k=%s", (i > 1 ? "," : ""), $i, $i }')" \
        "k2/k$KVAL=k=2 / k=$KVAL"
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    splice_doc "$doc" "$md" sim-allreduce "MPI_Allreduce projection to 8-4096 nodes (SIMULATED)" \
        bench/sim/project-allreduce.sh || fail=1
fi
exit $fail
