#!/bin/bash
# Projection of MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ibmc_mcast (a reduce to
# rank 0, then the result by multicast) to 8..8192 nodes on the platform of
# project.sh, against SMPI's ports of MPICH's MPI_Allreduce algorithms.  One
# process per node.  Every figure this prints is SIMULATED.
#
# Up to 128 bytes (a sum of doubles: commutative, contiguous), ibmc_mcast
# is ibmc_sim --coll allreduce --boards --fanout FANOUT: the channel's real
# engine for both steps, ibmc_mcast_reduce (each member's partial result
# written by RDMA into its slot of its parent's board, then its count, up
# an F-ary tree to rank 0) then rank 0's ibmc_mcast_bcast of the result;
# the members' ACKs of it are board writes too.  A board write costs its
# writer one message's CPU and its owner none (the owner only polls the
# word), and the combine costs nothing (a few additions).  Its time runs
# from the common start to the last process done; its reduce (to rank 0
# holding the total) and its multicast (the rest) are shown beside it.
#
# Above 128 bytes MPIR runs the k-nomial path instead, and so does this
# script for such a size of SIZES: the reduce up the k-nomial tree of radix
# KVAL (smpi_allreduce knomial:KVAL, the algorithm's own plan, ibmc_knomial.h,
# on SMPI's point-to-point calls, from a common start to rank 0 holding the
# result) plus ibmc_sim's broadcast latency of the result (the real
# engine); the sum is exact for this model as the members wait in the
# broadcast when the reduce ends at the root.  That path also serves
# non-contiguous data and non-commutative operations at any size; RADICES
# times its reduce alone.
#
# Baselines: SMPI's rdb (recursive doubling) and its mpich selector, on the
# same platform file.  What was validated against published results is the
# broadcast (validate.sh); the board writes (transfers of 8 bytes) and the
# baselines run on the point-to-point costs validate.sh fitted, and no
# published allreduce figure was reproduced.
#
#   ./project-allreduce.sh [OUTDIR]        writes OUTDIR/allreduce.md and .tsv
#   REPORT_ONLY=1 ./project-allreduce.sh   the same from OUTDIR's finished run
#   ./project-allreduce.sh --doc FILE OUTDIR  also replaces the generated
#                                  region of FILE (doc/results.md,
#                                  <!-- sim-allreduce:begin/end -->) and
#                                  the selection file's MPI_Allreduce rule
#                                  (maint/tuning/coll/ibmc, tuning.py), and
#                                  draws doc/img/sim_allreduce.png
#
# Under loss, only the result's multicast changes (the reduce and the
# baselines go over reliable point-to-point): at the first size, LOSSES
# gives the multicast loss rates at which ibmc_sim runs ibmc_mcast again
# (--loss, the engine's NAK recovery; above 128 B the broadcast alone, with
# the same reduce time added).
#
# Environment (defaults): NODES="8 64 256 1024 4096 8192", SIZES="8 1024"
# (a size up to 128 must be a multiple of 8), ITERS=10, FANOUT=32 (children
# per parent in the board tree, MPIR_CVAR_IBMC_ALLREDUCE_FANOUT's default),
# FANOUTS="4 8 16 32 64" (the whole allreduce at each fanout, at the first
# size if it is at most 128, up to RADIX_NODES=1024 nodes), KVAL=4
# (MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL's default), RADICES="2 4 8 16" (the
# k-nomial reduce alone at each radix, at the first size, up to RADIX_NODES;
# 2 is MPICH's binomial reduce), LOSSES="0.0001 0.01" (0.01 % and 1 %),
# SELECTOR_NODES=1024 (SMPI's mpich selector only up to there: it took
# minutes a point above, and was stopped at 4,096), CPU_US=0.2,
# ONEWAY_US=1.0, BW=25e9.
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-"8 64 256 1024 4096 8192"}
SIZES=${SIZES:-"8 1024"}
ITERS=${ITERS:-10}
FANOUT=${FANOUT:-32}
FANOUTS=${FANOUTS:-"4 8 16 32 64"}
RADIX_NODES=${RADIX_NODES:-1024}
KVAL=${KVAL:-4}
RADICES=${RADICES:-"2 4 8 16"}
LOSSES=${LOSSES:-"0.0001 0.01"}
SELECTOR_NODES=${SELECTOR_NODES:-1024}
PARTIAL=128 # IBMC_MCAST_PARTIAL_BYTES: the board tree's largest result
hdr_fabric
MTU=4096
first=${SIZES%% *}
for s in $SIZES; do
    if [ "$s" -le $PARTIAL ] && [ $((s % 8)) -ne 0 ]; then
        echo "FAIL: SIZES: $s is at most $PARTIAL B but no multiple of 8 (ibmc_sim sums doubles)" >&2
        exit 1
    fi
done

make -j1 ibmc_sim smpi_allreduce >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_project_ar.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

SMPI_CFG=$(smpi_bcast_cfg "$CPU_S")
smpi() { # N MODE SIZE [CFG]: smpi_allreduce MODE (allreduce under CFG, or knomial:R)
    # shellcheck disable=SC2086
    smpirun -np "$1" -platform "$TMP/p$1.xml" -hostfile "$TMP/h$1" ./smpi_allreduce "$2" "$3" \
        "$ITERS" $SMPI_CFG ${4:-} 2>&1 | grep '^SIMULATED smpi_allreduce'
}
sim() { # N SIZE [ARGS]: one line of ibmc_sim (a broadcast, or ARGS' collective)
    local n=$1 s=$2
    shift 2
    ./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU \
        --size "$s" --iters "$ITERS" "$@" 2>&1 | grep '^SIMULATED'
}
ibmc_ar() { # N SIZE FANOUT [ARGS]: ibmc_sim's whole allreduce with boards
    local n=$1 s=$2 f=$3
    shift 3
    sim "$n" "$s" --coll allreduce --boards --fanout "$f" "$@"
}
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }
add() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$tsv"; } # WHAT N SIZE VARIANT US

tsv=$OUT/allreduce.tsv
fail=0
if [ "${REPORT_ONLY:-0}" != 1 ]; then
printf 'what\tnodes\tsize\tvariant\tmean_lat_us\n' >"$tsv"
t0=$(date +%s)
for n in $NODES; do
    sim_platform "$TMP" "$n" || { echo "FAIL: platform $n" >&2; exit 1; }
    for s in $SIZES; do
        if [ "$s" -le $PARTIAL ]; then
            # the board tree: the engine's reduce and broadcast in one run
            l=$(ibmc_ar "$n" "$s" "$FANOUT")
            sim_ok "$l" "ibmc_sim allreduce $n $s fanout $FANOUT" || { fail=1; continue; }
            b=$(field "$l" mean_lat_us)
            r=$(field "$l" arrive_us)
            add ar "$n" "$s" step:reduce "$r"
            add ar "$n" "$s" step:mcast "$(awk -v a="$r" -v b="$b" 'BEGIN { printf "%.3f", b - a }')"
            add ar "$n" "$s" ibmc_mcast "$b"
            for p in $LOSSES; do
                [ "$s" = "$first" ] || break
                l=$(ibmc_ar "$n" "$s" "$FANOUT" --loss "$p" --seed 7)
                sim_ok "$l" "ibmc_sim allreduce $n $s loss $p" || { fail=1; continue; }
                add ar "$n" "$s" "loss:$p" "$(field "$l" mean_lat_us)"
            done
        else
            # the k-nomial path: SMPI's reduce + ibmc_sim's broadcast
            l=$(sim "$n" "$s")
            sim_ok "$l" "ibmc_sim $n $s" || { fail=1; continue; }
            b=$(field "$l" mean_lat_us)
            l=$(smpi "$n" knomial:"$KVAL" "$s")
            sim_ok "$l" "smpi knomial:$KVAL $n $s" || { fail=1; continue; }
            r=$(field "$l" mean_lat_us)
            add ar "$n" "$s" step:reduce "$r"
            add ar "$n" "$s" step:mcast "$b"
            add ar "$n" "$s" ibmc_mcast "$(sum "$r" "$b")"
            for p in $LOSSES; do
                [ "$s" = "$first" ] || break
                l=$(sim "$n" "$s" --loss "$p" --seed 7)
                sim_ok "$l" "ibmc_sim $n $s loss $p" || { fail=1; continue; }
                add ar "$n" "$s" "loss:$p" "$(sum "$r" "$(field "$l" mean_lat_us)")"
            done
        fi
        for a in rdb mpich; do
            [ "$a" = mpich ] && [ "$n" -gt "$SELECTOR_NODES" ] && continue
            l=$(smpi "$n" allreduce "$s" --cfg=smpi/allreduce:$a)
            sim_ok "$l" "smpi allreduce $n $s $a" || { fail=1; continue; }
            add ar "$n" "$s" "smpi:$a" "$(field "$l" mean_lat_us)"
        done
    done
    if [ "$n" -le "$RADIX_NODES" ]; then
        if [ "$first" -le $PARTIAL ]; then
            for f in $FANOUTS; do
                l=$(ibmc_ar "$n" "$first" "$f")
                sim_ok "$l" "ibmc_sim allreduce $n $first fanout $f" || { fail=1; continue; }
                add fanout "$n" "$first" "f$f" "$(field "$l" mean_lat_us)"
            done
        fi
        for k in $RADICES; do
            l=$(smpi "$n" knomial:"$k" "$first")
            sim_ok "$l" "smpi knomial:$k $n $first" || { fail=1; continue; }
            add radix "$n" "$first" "k$k" "$(field "$l" mean_lat_us)"
        done
    fi
    echo "project-allreduce: $n nodes done ($(($(date +%s) - t0)) s)" >&2
done
run_stamp $(($(date +%s) - t0)) >"$OUT/allreduce-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/allreduce-run.txt" ||
    { echo "FAIL: no run in $OUT" >&2; exit 1; }

large=
for s in $SIZES; do
    [ "$s" -le $PARTIAL ] || large="$large $s"
done
md=$OUT/allreduce.md
{
    stamp_line bench/sim/project-allreduce.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; ibmc_sim runs the channel's real engine, SMPI"
    echo "runs MPICH's reduce and allreduce algorithms on the same platform file). Parameters: those"
    echo "of the broadcast projection (${BW} B/s per host link and direction, one-way MPI latency"
    echo "${ONEWAY_US} us, ${CPU_US} us of CPU per message sent or handled, a fat tree above 64 nodes),"
    echo "one process per node, $ITERS calls per point, all processes starting together, a sum of"
    echo "doubles. ibmc_mcast up to $PARTIAL B = ibmc_sim's whole allreduce: the reduce up a tree of"
    echo "$FANOUT children a parent, each member's partial result and then its count RDMA writes"
    echo "into its parent's board (the writer pays one message's CPU, the board's owner none: it"
    echo "only polls; the combine costs nothing), then rank 0's broadcast of the result, whose ACKs"
    echo "are board writes too; its reduce = common start to rank 0 holding the total, its"
    echo "multicast = the rest."
    if [ -n "$large" ]; then
        echo "Above $PARTIAL B (here$large B) MPIR runs its k-nomial path instead, and so does"
        echo "ibmc_mcast's column there: its reduce up a k-nomial tree of radix $KVAL (the algorithm's"
        echo "plan on SMPI's point-to-point) + ibmc_sim's broadcast of the result."
    fi
    echo "Only the broadcast was validated against published results. mpich (SMPI's selector) ran"
    echo "up to $SELECTOR_NODES nodes."
    echo
    echo "MPI_Allreduce latency, us (common start to the last process done):"
    echo
    python3 latency_table.py "$tsv" ar "$SIZES" \
        "ibmc_mcast=ibmc_mcast,step:reduce=its reduce,step:mcast=its multicast,smpi:rdb=rdb,smpi:mpich=mpich" \
        "smpi:rdb/ibmc_mcast=rdb / ibmc_mcast"
    echo
    echo "ibmc_mcast at $first B with the result's multicast packets lost at random (ibmc_sim"
    echo "--loss, the engine's NAK recovery), us; the reduce and rdb lose nothing:"
    echo
    python3 latency_table.py "$tsv" ar "$first" \
        "ibmc_mcast=lossless$(for p in $LOSSES; do awk -v p="$p" 'BEGIN { printf ",loss:%s=%g %% loss", p, p * 100 }'; done)" \
        "smpi:rdb/loss:${LOSSES##* }=rdb / ibmc_mcast at $(awk -v p="${LOSSES##* }" 'BEGIN { printf "%g", p * 100 }') %"
    echo
    echo "rdb / ibmc_mcast above 1x: ibmc_mcast is faster."
    if [ "$first" -le $PARTIAL ]; then
        echo "The whole ibmc_mcast allreduce at each fanout of the board tree, us, at $first B"
        echo "(F=$FANOUT is the rows above; above 1x it is faster than F=${FANOUTS%% *}):"
        echo
        python3 latency_table.py "$tsv" fanout "$first" \
            "$(echo "$FANOUTS" | awk '{ for (i = 1; i <= NF; i++) printf "%sf%s=F=%s", (i > 1 ? "," : ""), $i, $i }')" \
            "f${FANOUTS%% *}/f$FANOUT=F=${FANOUTS%% *} / F=$FANOUT"
        echo
    fi
    echo "The k-nomial path's reduce step alone (above $PARTIAL B, non-contiguous data or a"
    echo "non-commutative operation) at each radix of the tree, us, at $first B (k=2: a binomial"
    echo "tree, MPICH's reduce):"
    echo
    python3 latency_table.py "$tsv" radix "$first" \
        "$(echo "$RADICES" | awk '{ for (i = 1; i <= NF; i++) printf "%sk%s=k=%s", (i > 1 ? "," : ""), $i, $i }')" \
        "k2/k$KVAL=k=2 / k=$KVAL"
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    publish_sync allreduce "$tsv" "$md" "$doc" "MPI_Allreduce projection to 8-8192 nodes (SIMULATED)" || fail=1
fi
exit $fail
