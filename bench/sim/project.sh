#!/bin/bash
# Projection of ibmc_mcast to 8..8192 nodes on an HDR-class fabric, against
# SMPI's ports of MPICH's MPI_Bcast algorithms on the same SimGrid platform.
# Only what validate.sh reproduced is projected: small-message latency (1 B
# and 1 KiB, inside the validated 1..1836 B), plus the counts that do not
# depend on the CPU-cost assumption's accuracy (the root's messages per
# broadcast, NAKs, recoveries).  The small-message rate is project-rate.sh's;
# skew failed validation and is not projected.  Every figure this prints is
# SIMULATED.
#
#   ./project.sh [OUTDIR]          writes OUTDIR/projection.md and .tsv
#   REPORT_ONLY=1 ./project.sh ... the same from OUTDIR's finished run, no runs
#   ./project.sh --doc FILE OUTDIR also replaces the generated region of FILE
#                                  (doc/results.md, between
#                                  <!-- sim-projection:begin/end -->), draws
#                                  doc/img/sim_projection.png and writes
#                                  maint/tuning/coll/ibmc/ibmc-sim-tuning.json
#                                  (tuning.py; needs MPICH's source, ./autogen.sh;
#                                  with OUTDIR/allgather.tsv of project-allgather.sh
#                                  it also picks MPI_Allgather's algorithm)
#
# Environment (defaults): NODES="2 4 8 64 256 1024 4096 8192", SIZES="1 1024",
# ITERS=20, SMPI_MAX=1024 (largest N run under SMPI: 8192 ranks took 671 s
# for 20 broadcasts on the 2-core machine), LR_MAX=256 (the same for
# scatter_LR_allgather), LOSS_N="64 1024 8192" (node counts of the loss
# sweep), LOSS_ITERS=200, CPU_US=0.2, ONEWAY_US=1.0, BW=25e9, QUICK=1
# (NODES="2 4 8 64 256 1024", ITERS=10, LOSS_N="64 1024", LOSS_ITERS=100).
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
if [ "${QUICK:-0}" = 1 ]; then
    NODES=${NODES:-"2 4 8 64 256 1024"} ITERS=${ITERS:-10} LOSS_ITERS=${LOSS_ITERS:-100}
    LOSS_N=${LOSS_N:-"64 1024"}
fi
NODES=${NODES:-"2 4 8 64 256 1024 4096 8192"}
SIZES=${SIZES:-"1 1024"}
ITERS=${ITERS:-20}
SMPI_MAX=${SMPI_MAX:-1024}
LR_MAX=${LR_MAX:-256}
LOSS_N=${LOSS_N:-"64 1024 8192"}
LOSS_ITERS=${LOSS_ITERS:-200}
LOSSES=${LOSSES:-"0 0.0001 0.001 0.01"}
hdr_fabric
MTU=4096

make -j1 ibmc_sim smpi_bcast >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_project.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

SMPI_CFG=$(smpi_bcast_cfg "$CPU_S")
platform() { sim_platform "$TMP" "$1"; } # N: $TMP/p$N.xml and $TMP/h$N
sim() { # N ARGS...
    n=$1; shift
    ./ibmc_sim --nodes "$n" --bw "$BW" --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU "$@" 2>&1 |
        grep '^SIMULATED'
}
smpi() { # N ALGO SIZE K
    # shellcheck disable=SC2086
    smpirun -np "$1" -platform "$TMP/p$1.xml" -hostfile "$TMP/h$1" ./smpi_bcast latency "$3" "$4" \
        $SMPI_CFG --cfg=smpi/bcast:"$2" 2>&1 | grep '^SIMULATED smpi_bcast'
}

tsv=$OUT/projection.tsv
fail=0
if [ "${REPORT_ONLY:-0}" != 1 ]; then
printf 'what\tnodes\tsize\tvariant\tmean_lat_us\troot_in\troot_out\tnaks\trecoveries\trecovery_mean_us\trecovery_worst_us\twall_s\n' >"$tsv"
t0=$(date +%s)
for n in $NODES; do
    platform "$n" || { echo "FAIL: platform $n" >&2; exit 1; }
    for s in $SIZES; do
        for v in coroots nocoroots; do
            sg=0; [ $v = nocoroots ] && sg=$n
            l=$(sim "$n" --size "$s" --iters "$ITERS" --subgroup "$sg")
            sim_ok "$l" "ibmc_sim $n $s $v" || { fail=1; continue; }
            printf 'lat\t%s\t%s\tibmc_mcast:%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$s" $v \
                "$(field "$l" mean_lat_us)" "$(field "$l" root_in_per_bcast)" \
                "$(field "$l" root_out_per_bcast)" "$(field "$l" naks_sent)" \
                "$(field "$l" recoveries)" "$(field "$l" recovery_mean_us)" \
                "$(field "$l" recovery_worst_us)" "$(field "$l" wall_s)" >>"$tsv"
        done
        [ "$n" -le "$SMPI_MAX" ] || continue
        for a in binomial_tree scatter_rdb_allgather scatter_LR_allgather mpich; do
            # a ring of N-1 steps per broadcast: minutes of wall-clock at
            # 1024 ranks, for an algorithm made for large messages
            [ $a = scatter_LR_allgather ] && [ "$n" -gt "$LR_MAX" ] && continue
            w0=$(date +%s.%N)
            l=$(smpi "$n" $a "$s" "$ITERS")
            sim_ok "$l" "smpi $n $s $a" || { fail=1; continue; }
            w=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
            printf 'lat\t%s\t%s\tsmpi:%s\t%s\t\t\t\t\t\t\t%s\n' "$n" "$s" $a "$(field "$l" mean_lat_us)" \
                "$w" >>"$tsv"
        done
    done
    echo "project: $n nodes done ($(($(date +%s) - t0)) s)" >&2
done
for ln in $LOSS_N; do
  for p in $LOSSES; do
    for nt in 200 20; do
      l=$(sim "$ln" --size 1 --iters "$LOSS_ITERS" --loss "$p" --nak-timeout-us $nt)
      sim_ok "$l" "ibmc_sim loss $p at $ln" || { fail=1; continue; }
      printf 'loss\t%s\t1\tloss=%s nak_timeout_us=%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ln" "$p" $nt \
          "$(field "$l" mean_lat_us)" "$(field "$l" root_in_per_bcast)" \
          "$(field "$l" root_out_per_bcast)" "$(field "$l" naks_sent)" "$(field "$l" recoveries)" \
          "$(field "$l" recovery_mean_us)" "$(field "$l" recovery_worst_us)" "$(field "$l" wall_s)" >>"$tsv"
    done
  done
  echo "project: loss sweep at $ln nodes done ($(($(date +%s) - t0)) s)" >&2
done
run_stamp $(($(date +%s) - t0)) >"$OUT/run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/run.txt" || { echo "FAIL: no run in $OUT" >&2; exit 1; }

md=$OUT/projection.md
{
    stamp_line bench/sim/project.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32; ibmc_sim runs the"
    echo "real engine, SMPI runs MPICH's algorithms on the same platform file). Parameters:"
    echo "up to 64 nodes a star (one switch), above a two-level fat tree of 32 nodes a leaf switch"
    echo "(non-blocking; a path between leaves crosses 4 links, so 2 link latencies more);"
    echo "${BW} B/s per host link and direction, one-way MPI latency ${ONEWAY_US} us across one switch"
    echo "(link latency $(awk -v l="$LINK_S" 'BEGIN { printf "%.3g", l * 1e6 }') us), ${CPU_US} us of CPU per message sent or handled, MTU $MTU;"
    echo "$ITERS broadcasts per point, root 0, an ideal barrier between broadcasts."
    echo
    echo "Small-message MPI_Bcast latency, us (root's start to the last member done):"
    echo
    python3 latency_table.py "$tsv" lat "$SIZES" \
        "ibmc_mcast:coroots=mcast (co-roots),ibmc_mcast:nocoroots=mcast (none),smpi:binomial_tree=binomial,smpi:scatter_rdb_allgather=scatter_rdb_allgather,smpi:scatter_LR_allgather=scatter_LR_allgather,smpi:mpich=mpich" \
        "smpi:binomial_tree/ibmc_mcast:coroots=binomial / mcast"
    echo
    echo "The root's load: messages it handles (in) and sends (out) per 1 B broadcast:"
    echo
    echo "| nodes | co-roots: in | out | no co-roots: in | out |"
    echo "|---:|---:|---:|---:|---:|"
    awk -F'\t' '$1 == "lat" && $3 == 1 && $4 ~ /^ibmc_mcast/ { k = $2; if ($4 ~ /nocoroots/) { ni[k] = $6; no[k] = $7 } else { ci[k] = $6; co[k] = $7 } ; N[k] = 1 }
        END { n = 0; for (k in N) L[++n] = k + 0
              for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (L[j] < L[i]) { t = L[i]; L[i] = L[j]; L[j] = t }
              for (i = 1; i <= n; i++) printf "| %d | %s | %s | %s | %s |\n", L[i], ci[L[i]], co[L[i]], ni[L[i]], no[L[i]] }' "$tsv"
    echo
    echo "Loss at $(echo "$LOSS_N" | sed 's/ /, /g') nodes, 1 B x $LOSS_ITERS (each copy to each receiver lost independently;"
    echo "recovery: from a receiver's first NAK to its message complete; the NAK timeout starts at"
    echo "MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT, 200 us by default or 20 us, and learns from answered NAKs):"
    echo
    echo "| nodes | loss | first NAK timeout us | mean latency us | root in / bcast | NAKs | recoveries | mean recovery us | worst recovery us | wall s |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -F'\t' '$1 == "loss" { split($4, f, " "); sub("loss=", "", f[1]); sub("nak_timeout_us=", "", f[2])
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $2, f[1], f[2], $5, $6, $8, $9, $10, $11, $12 }' "$tsv"
    echo
    echo "Wall-clock per run (s): ibmc_sim $(awk -F'\t' '($1 == "lat" && $4 ~ /^ibmc/ || $1 == "loss") && $12 > m { m = $12 } END { print m }' "$tsv") at most; SMPI $(awk -F'\t' '$1 == "lat" && $4 ~ /^smpi/ && $12 > m { m = $12 } END { print m }' "$tsv") at most."
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    # the figure (python3-matplotlib) and the selection file, next to the doc
    top=$(cd ../.. && pwd)
    if py=$(matplotlib_python); then
        "$py" plot_projection.py "$tsv" "$top/doc/img/sim_projection.png" || fail=1
    else
        echo "project: no matplotlib (python3-matplotlib): no figure" >&2
    fi
    generic=${MPICH_GENERIC_JSON:-$top/mpich/maint/tuning/coll/mpir/generic.json}
    if [ -f "$generic" ]; then
        # with the Allgather projection's table when project-allgather.sh
        # ran into the same OUTDIR first (maint/bench-all --sim)
        ag=; [ -f "$OUT/allgather.tsv" ] && ag="--allgather $OUT/allgather.tsv"
        # and the barrier's and allreduce's, likewise
        [ -f "$OUT/barrier.tsv" ] && ag="$ag --barrier $OUT/barrier.tsv"
        [ -f "$OUT/allreduce.tsv" ] && ag="$ag --allreduce $OUT/allreduce.tsv"
        # shellcheck disable=SC2086
        python3 tuning.py "$tsv" "$generic" "$top/maint/tuning/coll/ibmc/ibmc-sim-tuning.json" $ag || fail=1
    else
        echo "project: $generic not found (run ./autogen.sh first): no selection file" >&2
    fi
    splice_doc "$doc" "$md" sim-projection "Projection to 8-8192 nodes (SIMULATED)" \
        bench/sim/project.sh "$top/doc/img/sim_projection.png" || fail=1
fi
exit $fail
