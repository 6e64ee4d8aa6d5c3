#!/bin/sh
# Validation of noderd_sim against seed 001 (Mamidala, Vishnu, Panda,
# "Efficient Shared Memory and RDMA based design for MPI_Allgather over
# InfiniBand", §5): ibmc_node_rd's plan (noderd_sim) against the
# point-to-point recursive-doubling MPI_Allgather over processes (SMPI,
# allgather:rdb, the paper's "original"), on the SAME SimGrid platform,
# 16 and 32 nodes with 2 processes each, with the network figures of the
# paper's Cluster B (Mellanox MT23108 on PCI-X, the HCA of seed 000's
# testbed, so the figures of validate.sh).  See README.md, "Allgather:
# validation against seed 001".
#
#   ./validate-allgather.sh [COPY_BW]   COPY_BW: memory copy B/s, default 1e9
#
# Every figure printed is SIMULATED.  The whole run takes under a minute.
set -u
cd "$(dirname "$0")" || exit 1

COPY_BW=${1:-1e9}                # memcpy bandwidth of a 2.66 GHz Xeon node (assumption, README)
CPU_US=1.0                       # per-message CPU cost, as validate.sh
COPY_US=0.2                      # per-memcpy call cost (assumption)
EAGER=8192                       # MVAPICH eager limit: copies below, zero-copy above (assumption)
LINK_S=2.75e-6                   # host link latency, as validate.sh: one-way MPI latency 7.5 us
BW=857e6                         # MVAPICH peak bandwidth, B/s (ICS'03), as validate.sh
PPN=2
ITERS=5
SIZES="1 16 128 512 1024 2048 4096 8192"
NODES="16 32"

make -j1 ibmc_sim noderd_sim smpi_allgather >/dev/null || { echo "FAIL: build"; exit 1; }

TMP=$(mktemp -d /tmp/ibmc_validate_ag.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
PLAT=$TMP/platform.xml
max=0
for n in $NODES; do [ "$n" -gt "$max" ] && max=$n; done
./ibmc_sim --nodes "$max" --bw $BW --lat $LINK_S --platform-out "$PLAT" --platform-only ||
    { echo "FAIL: platform"; exit 1; }

CPU_S=$(awk -v c="$CPU_US" 'BEGIN { printf "%.6g", c * 1e-6 }')
PER_BYTE=$(awk -v b="$COPY_BW" 'BEGIN { printf "%.6g", 1 / b }')
# shellcheck source=sim-lib.sh
. ./sim-lib.sh
SMPI_CFG=$(smpi_copy_cfg "$CPU_S" "$PER_BYTE" "$EAGER")
check() { sim_ok "$1" "$2" 2>/dev/null || { echo "FAIL: $2: $1"; exit 1; }; }
SIM="./noderd_sim --platform $PLAT --ppn $PPN --iters $ITERS --copy-bw $COPY_BW
 --copy-us $COPY_US --post-us $CPU_US"

echo "# validate-allgather.sh $(date -u +%Y-%m-%dT%H:%MZ): ${PPN} processes per node," \
    "bw=$BW B/s host link lat=2.75 us cpu/msg=$CPU_US us copy=$COPY_BW B/s + $COPY_US us" \
    "eager<$EAGER B; every figure SIMULATED"
echo
echo "layout size  new_us  new_no_overlap_us  rdb_us  rdb/new  overlap_gain"
: >"$TMP/table"
for n in $NODES; do
    np=$((n * PPN))
    : >"$TMP/hosts"
    i=0
    while [ $i -lt "$n" ]; do
        j=0
        while [ $j -lt $PPN ]; do echo "n$i" >>"$TMP/hosts"; j=$((j + 1)); done
        i=$((i + 1))
    done
    for s in $SIZES; do
        a=$($SIM --nodes "$n" --size "$s"); check "$a" "noderd_sim $n $s"
        b=$($SIM --nodes "$n" --size "$s" --no-overlap); check "$b" "noderd_sim $n $s no overlap"
        # shellcheck disable=SC2086
        c=$(smpirun -np $np -platform "$PLAT" -hostfile "$TMP/hosts" ./smpi_allgather latency \
            "$s" $ITERS $SMPI_CFG --cfg=smpi/allgather:rdb 2>&1 | grep '^SIMULATED')
        check "$c" "smpi rdb $np $s"
        echo "${n}x$PPN $s $(field "$a" mean_lat_us) $(field "$b" mean_lat_us)" \
            "$(field "$c" mean_lat_us)" >>"$TMP/table"
    done
done
awk '{ printf "%-6s %5s %8.1f %18.1f %7.1f %8.2f %11.1f%%\n", $1, $2, $3, $4, $5, $5 / $3,
       100 * ($4 / $3 - 1) }' "$TMP/table"

# seed 001 §5.2: new over original up to 1.97x (16x2) and 1.82x (32x2) on
# Cluster B; overlap improves the new design up to 43 % on Cluster B
echo
echo "quantity | paper | SIMULATED | within 25%"
awk '
function row(q, p, v) { printf "%s | %.2f | %.2f | %s\n", q, p, v, (v >= 0.75 * p && v <= 1.25 * p) ? "yes" : "no" }
{ r = $5 / $3; o = $4 / $3 - 1; if (r > mr[$1]) mr[$1] = r; if (o > mo[$1]) mo[$1] = o }
END {
    row("speed-up over point-to-point rdb, max over sizes, 16x2", 1.97, mr["16x2"])
    row("speed-up over point-to-point rdb, max over sizes, 32x2", 1.82, mr["32x2"])
    row("overlap gain, max over sizes, 32x2 (t_no_overlap / t - 1)", 0.43, mo["32x2"])
}' "$TMP/table"
