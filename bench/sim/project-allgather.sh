#!/bin/bash
# Projection of ibmc_node_rd's MPI_Allgather to 8..8192 nodes on an
# HDR-class fabric (the platform of project.sh), against SMPI's ports of
# MPICH's MPI_Allgather algorithms on the same SimGrid platform files.
# validate-allgather.sh reproduced seed 001's speed-up over point-to-point
# recursive doubling; the overlap gain it reproduced only at one copy
# bandwidth, so the projection reports both orders of copying but draws no
# conclusion from their difference.  Every figure this prints is SIMULATED.
#
#   ./project-allgather.sh [OUTDIR]       writes OUTDIR/allgather.md and .tsv
#   REPORT_ONLY=1 ./project-allgather.sh  the same from OUTDIR's finished run
#   ./project-allgather.sh --doc FILE OUTDIR  also replaces the generated
#                                  region of FILE (doc/results.md,
#                                  <!-- sim-allgather:begin/end -->)
#                                  and draws doc/img/sim_allgather.png
#
# Environment (defaults): NODES="8 64 256 1024 4096 8192", PPN=4,
# SIZES="8 1024" (bytes per rank), ITERS=5, SMPI_BYTES_MAX=1073741824 (SMPI
# runs while ranks^2 x size stays under it: its receive and temporary
# buffers are real memory, 33 GB for bruck at 4,096 ranks x 1 KiB),
# RING_MAX=64 (nodes; a ring of ranks-1 steps), CPU_US=0.2, ONEWAY_US=1.0,
# BW=25e9, COPY_BW=10e9, COPY_US=0.05, EAGER=16384, QUICK=1 (NODES="8 64
# 256 1024", ITERS=3).
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
if [ "${QUICK:-0}" = 1 ]; then
    NODES=${NODES:-"8 64 256 1024"} ITERS=${ITERS:-3}
fi
NODES=${NODES:-"8 64 256 1024 4096 8192"}
PPN=${PPN:-4}
SIZES=${SIZES:-"8 1024"}
ITERS=${ITERS:-5}
SMPI_BYTES_MAX=${SMPI_BYTES_MAX:-1073741824}
RING_MAX=${RING_MAX:-64}
# the HDR-class figures of project.sh (README, "Projection"), and a node's
# memory copy (README, "Allgather: projection")
hdr_fabric
COPY_BW=${COPY_BW:-10e9}
COPY_US=${COPY_US:-0.05}
EAGER=${EAGER:-16384}
PER_BYTE=$(awk -v b="$COPY_BW" 'BEGIN { printf "%.6g", 1 / b }')

make -j1 ibmc_sim noderd_sim smpi_allgather >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_project_ag.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

# as validate-allgather.sh: an eager message costs a copy at each end
SMPI_CFG=$(smpi_copy_cfg "$CPU_S" "$PER_BYTE" "$EAGER")
platform() { sim_platform "$TMP" "$1" "$PPN"; } # N: $TMP/p$N.xml, $TMP/h$N of PPN ranks a node
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

tsv=$OUT/allgather.tsv
fail=0
if [ "${REPORT_ONLY:-0}" != 1 ]; then
printf 'what\tnodes\tppn\tsize\tvariant\tmean_lat_us\twrites_per_call\tcopies_per_call\twall_s\n' >"$tsv"
t0=$(date +%s)
for n in $NODES; do
    platform "$n" || { echo "FAIL: platform $n" >&2; exit 1; }
    np=$((n * PPN))
    for s in $SIZES; do
        for v in overlap no_overlap; do
            flag=; [ $v = no_overlap ] && flag=--no-overlap
            w0=$(now)
            l=$(./noderd_sim --platform "$TMP/p$n.xml" --nodes "$n" --ppn "$PPN" --size "$s" \
                --iters "$ITERS" --copy-bw "$COPY_BW" --copy-us "$COPY_US" --post-us "$CPU_US" $flag)
            sim_ok "$l" "noderd_sim $n $s $v" || { fail=1; continue; }
            printf 'ag\t%s\t%s\t%s\tibmc_node_rd:%s\t%s\t%s\t%s\t%s\n' "$n" "$PPN" "$s" $v \
                "$(field "$l" mean_lat_us)" "$(field "$l" writes_per_call)" \
                "$(field "$l" copies_per_call)" "$(since "$w0")" >>"$tsv"
        done
        awk -v p="$np" -v s="$s" -v m="$SMPI_BYTES_MAX" 'BEGIN { exit !(p * p * s <= m) }' || continue
        for a in rdb bruck ring mpich; do
            [ $a = ring ] && [ "$n" -gt "$RING_MAX" ] && continue
            w0=$(now)
            # shellcheck disable=SC2086
            l=$(smpirun -np "$np" -platform "$TMP/p$n.xml" -hostfile "$TMP/h$n" ./smpi_allgather \
                latency "$s" "$ITERS" $SMPI_CFG --cfg=smpi/allgather:$a 2>&1 | grep '^SIMULATED')
            sim_ok "$l" "smpi $n $s $a" || { fail=1; continue; }
            printf 'ag\t%s\t%s\t%s\tsmpi:%s\t%s\t\t\t%s\n' "$n" "$PPN" "$s" $a \
                "$(field "$l" mean_lat_us)" "$(since "$w0")" >>"$tsv"
        done
    done
    echo "project-allgather: $n nodes done ($(($(date +%s) - t0)) s)" >&2
done
run_stamp $(($(date +%s) - t0)) >"$OUT/allgather-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/allgather-run.txt" ||
    { echo "FAIL: no run in $OUT" >&2; exit 1; }

md=$OUT/allgather.md
{
    stamp_line bench/sim/project-allgather.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; noderd_sim carries out"
    echo "ibmc_node_rd's own plan, SMPI runs MPICH's algorithms on the same platform file)."
    echo "Parameters: the platform of the broadcast projection (a star up to 64 nodes, above a"
    echo "two-level fat tree of 32 nodes a leaf switch; ${BW} B/s per host link and direction,"
    echo "one-way MPI latency ${ONEWAY_US} us, ${CPU_US} us of CPU per message sent, handled or RDMA"
    echo "write posted), $PPN processes per node, memory copies at ${COPY_BW} B/s + ${COPY_US} us each,"
    echo "SMPI's eager messages (below $EAGER B) copied at both ends; $ITERS calls per point."
    echo
    echo "MPI_Allgather latency, us (common start to the last process done); \`-\`: not run"
    echo "(SMPI's buffers past $SMPI_BYTES_MAX B, or a ring past $RING_MAX nodes):"
    echo
    python3 latency_table.py "$tsv" ag "$SIZES" \
        "ibmc_node_rd:overlap=ibmc_node_rd,ibmc_node_rd:no_overlap=no overlap,smpi:rdb=rdb,smpi:bruck=bruck,smpi:ring=ring,smpi:mpich=mpich" \
        "smpi:mpich/ibmc_node_rd:overlap=mpich / node_rd"
    echo
    echo "ibmc_node_rd's work per call (all nodes): RDMA writes and copies out of the segments, at"
    echo "$(echo "$SIZES" | awk '{ print $1 }') B per rank:"
    echo
    echo "| nodes | writes | copies | wall s |"
    echo "|---:|---:|---:|---:|"
    first=$(echo "$SIZES" | awk '{ print $1 }')
    awk -F'\t' -v s="$first" '$1 == "ag" && $4 == s && $5 == "ibmc_node_rd:overlap" {
        printf "| %s | %s | %s | %s |\n", $2, $7, $8, $9 }' "$tsv"
    echo
    echo "Wall-clock per run (s): noderd_sim $(awk -F'\t' '$5 ~ /^ibmc/ && $9 > m { m = $9 } END { print m }' "$tsv") at most; SMPI $(awk -F'\t' '$5 ~ /^smpi/ && $9 > m { m = $9 } END { print m }' "$tsv") at most."
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    top=$(cd ../.. && pwd)
    if py=$(matplotlib_python); then
        "$py" plot_projection.py "$tsv" "$top/doc/img/sim_allgather.png" || fail=1
    else
        echo "project-allgather: no matplotlib (python3-matplotlib): no figure" >&2
    fi
    splice_doc "$doc" "$md" sim-allgather "Allgather projection to 8-8192 nodes (SIMULATED)" \
        bench/sim/project-allgather.sh "$top/doc/img/sim_allgather.png" || fail=1
fi
exit $fail
