#!/bin/bash
# bench/bcast-counts.sh: what one MPI_Bcast costs in counted work, root and
# receivers apart, for ibmc_mcast and MPICH's binomial tree: multicast
# packets and the ibv_post_send calls and completions behind them, echoes,
# ACKs, NAKs (sent, those a root's question revealed, spared by the last
# poll, premature), retransmissions, the questions (ACK requests) of a root
# whose last packets stayed unacknowledged and how many went by multicast,
# duplicates, fragment copies (ibmc_mcast_copies) and fragments received in
# place (ibmc_mcast_in_place, with the packets the in-place queues took,
# ibmc_mcast_place_recvd), and the point-to-point
# packets a broadcast took.  Counts, not
# times, so the VM's scheduling does not blur them (bench/README.md, "Counted work");
# the last column, the time per call of the slowest rank over the same
# calls, is there to set the algorithms of one run beside each other (a
# ratio from one boot), with the counts that explain it.
#
#   [IBMC_PREFIX=...] [LAYOUTS="2:2 4:4 8:8 8:4"] [SIZES="1 1024 16384 65536"]
#   [ALGS="ibmc_mcast binomial"] [ITERS=200] [SYSCALLS=0|1] [CALLGRIND=0|1]
#   bench/bcast-counts.sh
#
# LAYOUTS are RANKS:NODES (pretend nodes, MPIR_CVAR_NUM_CLIQUES).  Each run
# is bench/ibmc_bcast_counts.c: ITERS back-to-back broadcasts from rank 0,
# every byte checked.  An ALGS entry ALG:nonblocking or ALG:persistent runs
# them as MPI_Ibcast + MPI_Wait or as MPI_Start + MPI_Wait of one
# MPI_Bcast_init request (MPIR_CVAR_IBCAST_INTRA_ALGORITHM=ALG, binomial
# being sched_binomial there), and ALG:persistent-ordered the same with the
# receivers' MPI_Start before the root's (a barrier between, counted); ALG:barrier runs MPI_Barrier calls
# (MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ALG, SIZE ignored) and ALG:allreduce
# MPI_Allreduce calls of SIZE bytes of doubles
# (MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ALG), rank 0 as the root.  SYSCALLS=1 also counts system calls per broadcast
# with `strace -f -c` of the job at ITERS and 3 x ITERS broadcasts (the
# difference over 2 x ITERS, so start-up drops out), all ranks together.
# CALLGRIND=1 also counts instructions per broadcast, root and receivers
# apart: every rank under callgrind, the receivers entering late (every
# packet already queued, no timer running; ibmc_bcast_counts.c "late"),
# only the measured MPI_Bcast calls collected, K of them with K * fragments
# <= 32 (half the default window, so the root never waits for an ACK; at
# most CG_ITERS=8, fragments of CG_PAYLOAD=4048 bytes: IBMC_VM_MTU=4200).
# Extra MPIR_CVAR_* settings in the environment reach every rank (for
# instance MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT); IBMC_VM_MTU=4200 gives the VM
# RoCE MTU 4096.  On a host without an RDMA device it runs inside the
# Soft-RoCE VM.
#
# Output: a markdown table on stdout, one row per layout, size, algorithm
# and side; the raw output under _build/bench/counts-<date>-<time>/.  With
# DOC=FILE (doc/results.md), a run that passed also writes the table,
# stamped with the commit and date, into FILE's region REGION (vm-counts;
# vm-counts-colls holds the barrier and allreduce runs).
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
top=$(dirname "$here")
self=$here/bcast-counts.sh
home=$(getent passwd "$(id -un)" | cut -d: -f6)
cache=${IBMC_CACHE:-${home:-${HOME:-/tmp}}/.cache/ibmc}
msg() { echo "bcast-counts: $*" >&2; }
die() { msg "error: $*"; exit 1; }

if [[ -z ${IBMC_BENCH_INNER:-} ]]; then
    IBMC_PREFIX=${IBMC_PREFIX:-$cache/install/ibmc-default}
    LAYOUTS=${LAYOUTS:-2:2 4:4 8:8 8:4}
    SIZES=${SIZES:-1 1024 16384 65536}
    ALGS=${ALGS:-ibmc_mcast binomial}
    ITERS=${ITERS:-200}
    SYSCALLS=${SYSCALLS:-0}
    CALLGRIND=${CALLGRIND:-0}
    ((CALLGRIND)) && ! command -v valgrind >/dev/null && die "valgrind is not installed (apt-get install valgrind)"
    [[ $ITERS =~ ^[1-9][0-9]*$ ]] || die "ITERS must be a positive integer (got '$ITERS')"
    for l in $LAYOUTS; do
        [[ $l =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || die "LAYOUTS are RANKS:NODES (got '$l')"
    done
    for s in $SIZES; do
        [[ $s =~ ^[0-9]+$ ]] || die "SIZES must be byte counts (got '$s')"
    done
    ((SYSCALLS)) && ! command -v strace >/dev/null && die "strace is not installed (apt-get install strace)"
    [[ -x $IBMC_PREFIX/bin/mpicc ]] || die "IBMC_PREFIX=$IBMC_PREFIX has no bin/mpicc (build ibmc first)"
    raw=$top/_build/bench/counts-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$raw" || die "cannot create $raw"
    "$IBMC_PREFIX/bin/mpicc" -std=c11 -O2 -Wall -o "$raw/counts" "$here/ibmc_bcast_counts.c" ||
        die "cannot build the benchmark with $IBMC_PREFIX/bin/mpicc"
    inner=(env IBMC_BENCH_INNER=1 IBMC_PREFIX="$IBMC_PREFIX" LAYOUTS="$LAYOUTS" SIZES="$SIZES"
           ALGS="$ALGS" ITERS="$ITERS" SYSCALLS="$SYSCALLS" CALLGRIND="$CALLGRIND"
           CG_ITERS="${CG_ITERS:-8}" CG_PAYLOAD="${CG_PAYLOAD:-4048}" IBMC_BENCH_RAW="$raw" bash "$self")
    t0=$(date +%s)
    if compgen -G '/sys/class/infiniband/*' >/dev/null; then
        "${inner[@]}" | tee "$raw/table.md"
    else
        msg "no RDMA device here: running inside the Soft-RoCE VM (test/vm/run-fabric)"
        "$top/test/vm/run-fabric" "${inner[@]}" | tee "$raw/table.md"
    fi
    rc=${PIPESTATUS[0]}
    if [[ -n ${DOC:-} ]] && ((rc == 0)); then
        . "$here/sim/sim-lib.sh"
        {
            echo "Generated by bench/bcast-counts.sh on commit $(cd "$top" && git rev-parse --short HEAD)," \
                "$(date -u '+%Y-%m-%d %H:%M UTC'), in $(($(date +%s) - t0)) s of wall-clock time" \
                "(LAYOUTS=\"$LAYOUTS\" SIZES=\"$SIZES\" ALGS=\"$ALGS\" ITERS=$ITERS), in the Soft-RoCE VM" \
                "unless the host has an RDMA device."
            echo
            grep -v '^# raw output' "$raw/table.md"
        } > "$raw/region.md"
        case ${REGION:=vm-counts} in
            vm-counts) title="MPI_Bcast, MPI_Ibcast and MPI_Bcast_init: counted work" ;;
            *) title="MPI_Barrier and MPI_Allreduce: counted work" ;;
        esac
        splice_doc "$DOC" "$raw/region.md" "$REGION" "$title" bench/bcast-counts.sh
    fi
    exit "$rc"
fi

# ---- on the fabric ----
raw=$IBMC_BENCH_RAW
cd /tmp || exit 1
cols=(ibmc_mcast_pkts_sent ibmc_mcast_post_calls ibmc_mcast_send_cqes ibmc_mcast_pkts_recvd
      ibmc_mcast_echoes ibmc_mcast_acks_sent ibmc_mcast_acks_written ibmc_mcast_naks_sent
      ibmc_mcast_naks_asked ibmc_mcast_naks_spared ibmc_mcast_naks_premature ibmc_mcast_naks_deferred
      ibmc_mcast_retransmits ibmc_mcast_ack_probes ibmc_mcast_asks_multicast
      ibmc_mcast_duplicates ibmc_mcast_foreign ibmc_mcast_bcasts_posted ibmc_mcast_copies
      ibmc_mcast_in_place ibmc_mcast_place_recvd ibmc_mcast_arrivals_sent ibmc_mcast_arrivals_written ibmc_mcast_arrivals_read
      ibmc_eager_pkts_sent ibmc_eager_pkts_recvd ibmc_rdma_reads us_per_call)
heads=(posts post_calls send_cqes mcast_recvd echoes acks acks_written naks naks_asked naks_spared
       naks_premature naks_deferred retransmits ack_probes asks_multicast duplicates foreign posted
       copies in_place place_recvd arrivals arrivals_written arrivals_read pt2pt_sent pt2pt_recvd rdma_reads
       "us/call (slowest rank; compare rows of one run only)")
run() { # out iters np nodes alg[:mode] size [wrapper...]
    local out=$1 iters=$2 np=$3 nodes=$4 name=$5 alg=${5%%:*} mode=blocking size=$6 ialg cv; shift 6
    [[ $name == *:* ]] && mode=${name#*:}
    ialg=$alg; [[ $alg == binomial ]] && ialg=sched_binomial
    case $mode in
        barrier) cv=(MPIR_CVAR_BARRIER_INTRA_ALGORITHM="$alg") ;;
        allreduce) cv=(MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM="$alg") ;;
        *) cv=(MPIR_CVAR_BCAST_INTRA_ALGORITHM="$alg" MPIR_CVAR_IBCAST_INTRA_ALGORITHM="$ialg") ;;
    esac
    env MPIR_CVAR_NUM_CLIQUES="$nodes" "${cv[@]}" \
        timeout -k 10 600 "$@" "$IBMC_PREFIX/bin/mpiexec" -n "$np" "$raw/counts" "$size" "$iters" \
        "$mode" >"$out" 2>&1
}
hdr="| ranks:nodes | bytes | algorithm | side |"
sep="|---|---:|---|---|"
for h in "${heads[@]}"; do hdr="$hdr $h |"; sep="$sep---:|"; done
((SYSCALLS)) && { hdr="$hdr syscalls (all ranks) |"; sep="$sep---:|"; }
((CALLGRIND)) && { hdr="$hdr instructions (late receivers) |"; sep="$sep---:|"; }
# instructions per broadcast from callgrind files base.cg.RANK: root (rank 0)
# or the receivers' mean, over K broadcasts
cg_side() { # base side k
    local f n=0 sum=0 v
    for f in "$1".cg.*; do
        [[ -f $f ]] || continue
        v=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$f" | head -1)
        [[ -n $v ]] || v=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f" | head -1)
        [[ -n $v ]] || continue
        if [[ $2 = root ]]; then [[ $f = "$1.cg.0" ]] || continue
        else [[ $f = "$1.cg.0" ]] && continue; fi
        sum=$((sum + v)) n=$((n + 1))
    done
    ((n)) && awk -v s="$sum" -v n="$n" -v k="$3" 'BEGIN { printf "%.0f", s / n / k }' || echo n/a
}
echo "# work per call: counter changes over $ITERS back-to-back calls (broadcasts from rank 0, barriers or allreduces), divided by $ITERS"
echo "# (root: rank 0; recv: mean of the other ranks; one closing barrier included)"
echo
echo "$hdr"
echo "$sep"
fails=0
for layout in $LAYOUTS; do
    np=${layout%%:*} nodes=${layout##*:}
    for size in $SIZES; do
        for alg in $ALGS; do
            base=$raw/$np-$nodes-$size-$alg
            if ! run "$base.out" "$ITERS" "$np" "$nodes" "$alg" "$size" ||
               ! grep -q '^bcast-counts: ok' "$base.out"; then
                msg "FAIL: $layout $size B $alg (see $base.out)"
                fails=$((fails + 1))
                continue
            fi
            sc=
            if ((SYSCALLS)); then
                run "$base.s1" "$ITERS" "$np" "$nodes" "$alg" "$size" strace -f -c -o "$base.strace1" &&
                run "$base.s3" $((3 * ITERS)) "$np" "$nodes" "$alg" "$size" strace -f -c -o "$base.strace3" &&
                sc=$(awk -v it="$ITERS" '
                        FNR == 1 { f++ }
                        $NF == "total" { t[f] = $4 }
                        END { if (t[1] != "" && t[2] != "") printf "%.1f", (t[2] - t[1]) / (2 * it) }' \
                        "$base.strace1" "$base.strace3")
                [[ -n $sc ]] || sc="n/a"
            fi
            cgk=
            if ((CALLGRIND)); then
                frags=$(( (size + CG_PAYLOAD - 1) / CG_PAYLOAD )); ((frags)) || frags=1
                cgk=$((32 / frags)); ((cgk > CG_ITERS)) && cgk=$CG_ITERS; ((cgk)) || cgk=1
                rm -f "$base".cg.*
                env MPIR_CVAR_NUM_CLIQUES="$nodes" MPIR_CVAR_BCAST_INTRA_ALGORITHM="${alg%%:*}" \
                    timeout -k 10 1200 "$IBMC_PREFIX/bin/mpiexec" -n "$np" \
                    valgrind --tool=callgrind --collect-atstart=no \
                    --callgrind-out-file="$base.cg.%q{PMI_RANK}" "$raw/counts" "$size" "$cgk" late \
                    >"$base.cg.out" 2>&1 && grep -q '^bcast-counts: ok' "$base.cg.out" ||
                    { msg "FAIL: callgrind $layout $size B $alg (see $base.cg.out)"; fails=$((fails + 1)); }
            fi
            for side in root recv; do
                row="| $layout | $size | $alg | $side |"
                for c in "${cols[@]}"; do
                    v=$(awk -v s="$side" -v c="$c" '$1 == "bcast-counts:" && $2 == s && $3 == c { print $4 }' "$base.out")
                    row="$row ${v:-n/a} |"
                done
                ((SYSCALLS)) && row="$row ${sc} |"
                ((CALLGRIND)) && row="$row $(cg_side "$base" $side "$cgk") (K=$cgk) |"
                echo "$row"
            done
        done
    done
done
echo
echo "# raw output: $raw"
((fails == 0))
