#!/bin/sh
# Validation of ibmc_sim against seed 000 (Liu, Mamidala, Panda, "Fast and
# Scalable MPI-Level Broadcast using InfiniBand's Hardware Multicast
# Support", §6): the multicast engine (ibmc_sim) and the point-to-point
# binomial-tree MPI_Bcast (SMPI, bcast:binomial_tree) on the SAME SimGrid
# platform (written by ibmc_sim --platform-out), 8 nodes, with link and CPU
# figures for the paper's testbed (InfiniHost MT23108 4X on PCI-X 133 MHz,
# 2.4 GHz Xeon).  See README.md, "Validation against seed 000".
#
#   ./validate.sh [CPU_US]     CPU_US: per-message CPU cost, default 1.0
#
# Every figure printed is SIMULATED.  Runs take a few seconds (single-threaded).
set -u
cd "$(dirname "$0")" || exit 1

CPU_US=${1:-1.0}                 # per-message CPU cost (assumption, README)
MPI_LAT_US=7.5                   # MVAPICH one-way small-message latency (ICS'03)
BW=857e6                         # MVAPICH peak bandwidth, B/s (ICS'03)
# host link latency: one-way MPI latency = os + 2 * link + or, os = or = CPU_US
LINK_US=$(awk -v l="$MPI_LAT_US" -v c="$CPU_US" 'BEGIN { printf "%.6g", (l - 2 * c) / 2 }')
LINK_S=$(awk -v l="$LINK_US" 'BEGIN { printf "%.6g", l * 1e-6 }')
CPU_S=$(awk -v c="$CPU_US" 'BEGIN { printf "%.6g", c * 1e-6 }')
MTU=1884                         # payload 1884 - 48 = 1836 B per packet, as in seed 000 §6.2
N=8
ITERS=50                         # latency: broadcasts per size
RITERS=200                       # rate: back-to-back broadcasts per size
SITERS=100                       # skew: broadcasts per skew value
SIZES="1 2 4 8 16 32 64 128 256 512 1024 1836 2048 4096 8192"
SKEWS="400 800"
SKEW_SIZE=1

make -j1 ibmc_sim smpi_bcast >/dev/null || { echo "FAIL: build"; exit 1; }

TMP=$(mktemp -d /tmp/ibmc_validate.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
PLAT=$TMP/platform.xml
HOSTS=$TMP/hostfile
./ibmc_sim --nodes $N --bw $BW --lat "$LINK_S" --platform-out "$PLAT" --platform-only ||
    { echo "FAIL: platform"; exit 1; }
# the compute hosts: <cluster prefix="n" suffix="" radical="0-(N-1)">
prefix=$(sed -n 's/.*<cluster [^>]*prefix="\([^"]*\)".*/\1/p' "$PLAT")
radical=$(sed -n 's/.*radical="\([0-9]*\)-\([0-9]*\)".*/\1 \2/p' "$PLAT")
set -- $radical
i=$1
: >"$HOSTS"
while [ "$i" -le "$2" ]; do echo "$prefix$i" >>"$HOSTS"; i=$((i + 1)); done

SIM="./ibmc_sim --nodes $N --bw $BW --lat $LINK_S --cpu-per-pkt $CPU_US --mtu $MTU"
# SMPI: the same platform, the same network model as ibmc_sim (CM02, no
# correction factors, no cross traffic), eager messages delivered into a
# permanent receive mailbox (as ibmc_sim's RC and multicast messages), the
# same per-message CPU cost on send (os, ois) and receive (or), no
# benchmarking of real CPU time; smpi_execute(d) lasts d (host-speed = the
# platform's 1 Gf).
SMPI_CFG="--cfg=network/model:CM02 --cfg=network/crosstraffic:0
 --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1e9 --cfg=smpi/wtime:0
 --cfg=smpi/async-small-thresh:65536 --cfg=smpi/send-is-detached-thresh:65536
 --cfg=smpi/os:0:$CPU_S:0 --cfg=smpi/or:0:$CPU_S:0 --cfg=smpi/ois:0:$CPU_S:0
 --cfg=smpi/bcast:binomial_tree
 --log=root.thresh:error --log=smpi_config.thresh:error --log=smpi_coll.thresh:error
 --log=xbt_cfg.thresh:error"
smpi() { # NP ARGS...: the result line of smpi_bcast
    np=$1; shift
    # shellcheck disable=SC2086
    smpirun -np "$np" -platform "$PLAT" -hostfile "$HOSTS" ./smpi_bcast "$@" $SMPI_CFG 2>&1 |
        grep '^SIMULATED smpi_bcast'
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
check() { # the line must say result=ok
    case "$1" in *result=ok*) ;; *) echo "FAIL: $2: $1"; exit 1 ;; esac
}

echo "# validate.sh $(date -u +%Y-%m-%dT%H:%MZ): N=$N bw=$BW B/s host link lat=${LINK_US} us" \
    "cpu/msg=${CPU_US} us mtu=$MTU (payload 1836 B); every figure SIMULATED"

# calibration: one-way MPI latency between two nodes (should be MPI_LAT_US)
l=$(smpi 2 latency 1 10); check "$l" "smpi 2-node"
echo "# SMPI one-way 1 B latency, 2 nodes: $(field "$l" mean_lat_us) us (target $MPI_LAT_US)"
l=$(smpi 2 latency 65000 5); check "$l" "smpi 2-node 65000"
echo "# SMPI one-way 65000 B, 2 nodes: $(field "$l" mean_lat_us) us" \
    "= $(awk -v t="$(field "$l" mean_lat_us)" 'BEGIN { printf "%.0f", 65000 / t }') MB/s"

echo
echo "size  lat_mcast_us lat_binom_us lat_improv  rate_mcast/s rate_binom/s rate_improv"
: >"$TMP/table"
for s in $SIZES; do
    a=$($SIM --size "$s" --iters $ITERS); check "$a" "ibmc_sim latency $s"
    b=$(smpi $N latency "$s" $ITERS); check "$b" "smpi latency $s"
    c=$($SIM --size "$s" --iters $RITERS --mode rate); check "$c" "ibmc_sim rate $s"
    d=$(smpi $N rate "$s" $RITERS); check "$d" "smpi rate $s"
    echo "$s $(field "$a" mean_lat_us) $(field "$b" mean_lat_us) $(field "$c" bcasts_per_s)" \
        "$(field "$d" bcasts_per_s)" >>"$TMP/table"
done
awk '{ printf "%-5s %12.3f %12.3f %9.1f%% %13.0f %12.0f %10.1f%%\n", $1, $2, $3,
       100 * (1 - $2 / $3), $4, $5, 100 * ($4 / $5 - 1) }' "$TMP/table"

echo
echo "skew_us(max) mean_skew_us size  in_bcast_mcast_us in_bcast_binom_us ratio"
: >"$TMP/skew"
for k in $SKEWS; do
    a=$($SIM --size $SKEW_SIZE --iters $SITERS --mode skew --skew-us "$k"); check "$a" "ibmc_sim skew $k"
    b=$(smpi $N skew $SKEW_SIZE $SITERS "$k"); check "$b" "smpi skew $k"
    echo "$k $(field "$a" mean_in_bcast_us) $(field "$b" mean_in_bcast_us)" >>"$TMP/skew"
done
awk -v s=$SKEW_SIZE '{ printf "%-12s %12s %5s %17.3f %17.3f %6.1f\n", $1, $1 / 2, s, $2, $3, $3 / $2 }' \
    "$TMP/skew"
# Without skew every receiver waits in MPI_Bcast for the data; seed 000
# §6.4 finds the multicast line of its Figure 9 "not affected by process
# skew at all", so its value under skew is this one.
a=$($SIM --size $SKEW_SIZE --iters $SITERS --mode skew --skew-us 0); check "$a" "ibmc_sim skew 0"
b=$(smpi $N skew $SKEW_SIZE $SITERS 0); check "$b" "smpi skew 0"
mc0=$(field "$a" mean_in_bcast_us)
printf '%-12s %12s %5s %17.3f %17.3f %6.1f\n' 0 0 $SKEW_SIZE "$mc0" "$(field "$b" mean_in_bcast_us)" \
    "$(awk -v a="$mc0" -v b="$(field "$b" mean_in_bcast_us)" 'BEGIN { print b / a }')"

# the paper's figures against the simulated ones; "yes" if within +-25 % of the paper's
echo
echo "quantity | paper | SIMULATED | within 25%"
awk -v fskew="$TMP/skew" -v mc0="$mc0" '
function row(q, p, v) { printf "%s | %s | %.2f | %s\n", q, p, v, (v >= 0.75 * p && v <= 1.25 * p) ? "yes" : "no" }
{ sz[NR] = $1; li[NR] = 1 - $2 / $3; lr[NR] = $3 / $2 - 1; ri[NR] = $4 / $5 - 1 }
END {
    ml = -1; mla = -1; mr = -1; mra = -1; smin = 1e9; smax = -1
    for (i = 1; i <= NR; i++) {
        if (sz[i] <= 256 && ri[i] < smin) smin = ri[i]
        if (sz[i] <= 256 && ri[i] > smax) smax = ri[i]
        if (sz[i] <= 1836 && li[i] > ml) ml = li[i]
        if (li[i] > mla) mla = li[i]
        if (sz[i] <= 1836 && ri[i] > mr) mr = ri[i]
        if (ri[i] > mra) mra = ri[i]
        if (sz[i] == 2048) l2k = lr[i]
        if (sz[i] == 8192) l8k = lr[i]
    }
    row("latency improvement, max over 1..1836 B (1 - t_mc/t_bin), %", 58, 100 * ml)
    row("latency improvement, max over 1 B..8 KiB, %", 58, 100 * mla)
    row("large-message latency gain at 2 KiB (t_bin/t_mc - 1), %", 210, 100 * l2k)
    row("large-message latency gain at 8 KiB (t_bin/t_mc - 1), %", 86, 100 * l8k)
    row("throughput improvement, max over 1..1836 B (r_mc/r_bin - 1), %", 112, 100 * mr)
    row("throughput improvement, max over 1 B..8 KiB, %", 112, 100 * mra)
    # where no link is the bound (a binomial root sends 3 copies of 256 B
    # in under 1 us of link time), per-message costs decide the rate
    row("small-message throughput improvement, 1..256 B, lowest, %", 112, 100 * smin)
    row("small-message throughput improvement, 1..256 B, highest, %", 112, 100 * smax)
    while ((getline line < fskew) > 0) {
        split(line, f, " ")
        row(sprintf("skew ratio t_bin/t_mc, receivers uniform 0..%s us", f[1]), 10, f[3] / f[2])
        row(sprintf("skew ratio t_bin/t_mc(no skew), receivers uniform 0..%s us", f[1]), 10, f[3] / mc0)
    }
}' "$TMP/table"
