#!/bin/bash
# What a lost release costs ibmc_mcast's MPI_Barrier and a lost result its
# 8-byte MPI_Allreduce, by the first NAK timeout (MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT,
# the timer's floor): ibmc_sim --coll barrier|allreduce --boards at 0.01 %
# and 1 % multicast loss, on the platform of project.sh.  Every figure this
# prints is SIMULATED.
#
# The release (the result) is the stream's last packet, so no later packet
# shows a member that it lost it: it is recovered when the root's question
# comes, after the first NAK timeout.  The default (200 us) suits the
# Soft-RoCE VM; a fabric whose round trip is a few microseconds can take a
# far shorter one.  This table says how much of the loss penalty that
# removes; the lossless times and dissemination / recursive doubling are
# in the barrier and allreduce projections.
#
#   ./project-sync-loss.sh [OUTDIR]          writes OUTDIR/sync-loss.md and .tsv
#   REPORT_ONLY=1 ./project-sync-loss.sh     the same from OUTDIR's finished run
#   ./project-sync-loss.sh --doc FILE OUTDIR also replaces the generated
#                                  region of FILE (doc/results.md,
#                                  <!-- sim-sync-loss:begin/end -->)
#
# Environment (defaults): NODES="64 1024 4096", NAK_US="200 20 5",
# LOSSES="0.0001 0.01", FANOUT=32, ITERS=10, SEED=7, CPU_US=0.2,
# ONEWAY_US=1.0, BW=25e9.
set -u
# shellcheck source=sim-lib.sh
. "$(dirname "$0")/sim-lib.sh"
projection_dirs "$@" || exit 1
NODES=${NODES:-"64 1024 4096"}
NAK_US=${NAK_US:-"200 20 5"}
LOSSES=${LOSSES:-"0.0001 0.01"}
FANOUT=${FANOUT:-32}
ITERS=${ITERS:-10}
SEED=${SEED:-7}
hdr_fabric
MTU=4096

make -j1 ibmc_sim >/dev/null || { echo "FAIL: build" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ibmc_project_sl.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

# WHAT N SIZE VARIANT US: size is the row's NAK timeout, us
add() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$tsv"; }
sim() { # COLL N ARGS...: one line of ibmc_sim's COLL mode with boards
    local coll=$1 n=$2
    shift 2
    ./ibmc_sim --coll "$coll" --boards --fanout "$FANOUT" --nodes "$n" --bw "$BW" \
        --lat "$LINK_S" --cpu-per-pkt "$CPU_US" --mtu $MTU --iters "$ITERS" "$@" 2>&1 |
        grep '^SIMULATED'
}

tsv=$OUT/sync-loss.tsv
fail=0
if [ "${REPORT_ONLY:-0}" != 1 ]; then
printf 'what\tnodes\tsize\tvariant\tmean_lat_us\n' >"$tsv"
t0=$(date +%s)
for n in $NODES; do
    for coll in barrier allreduce; do
        size=(); [ "$coll" = allreduce ] && size=(--size 8)
        l=$(sim "$coll" "$n" "${size[@]}")
        sim_ok "$l" "ibmc_sim $coll $n" || { fail=1; continue; }
        for t in $NAK_US; do
            add "$coll" "$n" "$t" lossless "$(field "$l" mean_lat_us)"
            for p in $LOSSES; do
                l=$(sim "$coll" "$n" "${size[@]}" --loss "$p" --seed "$SEED" --nak-timeout-us "$t")
                sim_ok "$l" "ibmc_sim $coll $n loss $p nak $t" || { fail=1; continue; }
                add "$coll" "$n" "$t" "loss:$p" "$(field "$l" mean_lat_us)"
            done
        done
    done
    echo "project-sync-loss: $n nodes done ($(($(date +%s) - t0)) s)" >&2
done
run_stamp $(($(date +%s) - t0)) >"$OUT/sync-loss-run.txt"
fi
read -r run_day run_time run_tz run_s run_commit <"$OUT/sync-loss-run.txt" ||
    { echo "FAIL: no run in $OUT" >&2; exit 1; }

md=$OUT/sync-loss.md
first=${LOSSES%% *} last=${LOSSES##* }
pct() { awk -v p="$1" 'BEGIN { printf "%g", p * 100 }'; }
{
    stamp_line bench/sim/project-sync-loss.sh "$run_day" "$run_time" "$run_tz" "$run_s" "${run_commit:-}"
    echo "**Every figure is SIMULATED** (SimGrid 3.32, ibmc_sim running the channel's real engine;"
    echo "parameters of the broadcast projection: ${BW} B/s per host link and direction, one-way MPI"
    echo "latency ${ONEWAY_US} us, ${CPU_US} us of CPU per message, a fat tree above 64 nodes), one"
    echo "process per node, $ITERS calls per point, loss seed $SEED, arrival and reduce trees of"
    echo "$FANOUT children a parent with board writes. Each multicast copy is lost independently; the"
    echo "arrivals and partial results go over reliable RC and lose nothing. Columns: the first NAK"
    echo "timeout (MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT, us); cells: mean latency, us, common start to"
    echo "the last process out."
    echo
    for coll in barrier allreduce; do
        what=MPI_Barrier; [ "$coll" = allreduce ] && what="MPI_Allreduce of 8 B"
        echo "$what, lossless, then $(pct "$first") % and $(pct "$last") % loss:"
        echo
        python3 - "$tsv" "$coll" "$NAK_US" "$LOSSES" <<'PY'
import csv, sys
tsv, coll, naks, losses = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
lat, nodes = {}, set()
with open(tsv) as f:
    for r in csv.DictReader(f, delimiter="\t"):
        if r["what"] == coll:
            nodes.add(int(r["nodes"]))
            lat[(int(r["nodes"]), r["size"], r["variant"])] = r["mean_lat_us"]
head = ["nodes", "lossless"] + ["%g %% loss, NAK timeout %s us" % (float(p) * 100, t)
                                for p in losses for t in naks]
print("| " + " | ".join(head) + " |")
print("|" + "---:|" * len(head))
for n in sorted(nodes):
    cells = [str(n), lat.get((n, naks[0], "lossless"), "-")]
    cells += [lat.get((n, t, "loss:" + p), "-") for p in losses for t in naks]
    print("| " + " | ".join(cells) + " |")
PY
        echo
    done
} >"$md"
cat "$md"
if [ -n "$doc" ]; then
    splice_doc "$doc" "$md" sim-sync-loss \
        "MPI_Barrier and MPI_Allreduce under loss, by NAK timeout (SIMULATED)" \
        bench/sim/project-sync-loss.sh || fail=1
fi
exit $fail
