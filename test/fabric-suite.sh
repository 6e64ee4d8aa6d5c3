#!/bin/bash
# Tests that need RDMA verbs: run on a host with an HCA, or inside the test VM
# (test/vm/run-fabric).  Prints one "ok: NAME" or "FAIL: NAME" line per check
# and ends with "N passed, N failed".
#
# Env: IBMC_PREFIX  installed MPICH with ch4:ibmc
#      IBMC_BIN     directory with the compiled test/ibmc programs
#      IBMC_OUT     directory for logs
#      IBMC_INTRA_VIA_NETMOD=1  the build has no shared-memory module
#      IBMC_MPICH_TESTS  a built MPICH test/mpi tree (optional)
#      IBMC_MPICH_TESTLISTS  MAXNP:CLIQUES[:MINNP] configurations to run it in,
#                   e.g. "4:2 8:4:3"; MINNP leaves out the test lines of fewer ranks
#      IBMC_MPICH_DIRS  directories (default: all built), IBMC_MPICH_LEVEL ci|full
#      IBMC_MPICH_ONLY=1  run only MPICH's test suite (section 4)
#      IBMC_MCAST_ONLY=1  run only the multicast broadcast and allgather checks
#                   (sections 5 and 6)
set -u
export PATH=$IBMC_PREFIX/bin:$PATH
mkdir -p "$IBMC_OUT"
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
here=$(cd "$(dirname "$0")" && pwd)
mpx() { timeout -k 5 "${IBMC_JOB_TIMEOUT:-300}" mpiexec "$@"; }

echo "fabric-suite: $(ibv_devices 2>/dev/null | awk 'NR>2{print $1}' | xargs) on $(uname -r)"

# bad input gives a clear error, not a hang or a crash
expect_error() { # name, regex, env..., -- args...
    local name=$1 re=$2; shift 2
    local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    local log=$IBMC_OUT/err-${name// /_}.log
    if env "${envs[@]}" timeout -k 5 120 mpiexec "$@" > "$log" 2>&1; then
        bad "$name: the job succeeded"
    elif grep -Eq "$re" "$log"; then ok "$name: $(grep -Eo "$re" "$log" | head -1)"
    else bad "$name: no message matching /$re/ (see $log)"; tail -5 "$log"; fi
}

intra=${IBMC_INTRA_VIA_NETMOD:+--intranode-via-netmod}
if [ -z "${IBMC_MPICH_ONLY:-}${IBMC_MCAST_ONLY:-}" ]; then
# 0. ibmc_info: the device listed, the GID ibmc would pick explained, and a
#    multicast group joined, sent to and received from
if out=$("$here/ibmc/check_info.sh" "$IBMC_PREFIX/bin/ibmc_info" vm 2> "$IBMC_OUT/ibmc_info.log"); then
    ok "${out#PASS: }"
else bad "${out#FAIL: } (see $IBMC_OUT/ibmc_info.log)"; tail -5 "$IBMC_OUT/ibmc_info.log"; fi

# 1. the demo job: 8 ranks on 4 pretend nodes, 1 B - 4 MiB, every byte checked,
#    and proof from the counters that inter-node traffic went over RC QPs.
log=$IBMC_OUT/exchange-8x4.log
if MPIR_CVAR_NUM_CLIQUES=4 MPIR_CVAR_IBMC_STATS=1 mpx -n 8 "$IBMC_BIN/exchange" > "$log" 2>&1 &&
   grep -q "all bytes verified" "$log"; then ok "exchange 8 ranks / 4 nodes, 1 B - 4 MiB bit-exact"
else bad "exchange 8 ranks / 4 nodes (see $log)"; tail -5 "$log"; fi
if python3 "$here/ibmc/check_rc_path.py" "$log" 65536 $intra; then ok "inter-node traffic went over RC queue pairs"
else bad "RC path counters ($log)"; fi

# 1b. no shared memory at all in this build: every process is its own node
#     (MPIR_CVAR_NOLOCAL=1), so CH4's shared-memory module carries nothing and
#     every pair of processes on this host talks through ibmc; the counters
#     must show all 12 pairs on RC.  This is what a --with-ch4-shmmods=none
#     build does at run time; that build itself (its compile-time dispatch)
#     is tested under maint/run-tests --full.
if [ -z "$intra" ]; then
    log=$IBMC_OUT/exchange-4-nolocal.log
    if MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_IBMC_STATS=1 mpx -n 4 "$IBMC_BIN/exchange" 1048576 > "$log" 2>&1 &&
       grep -q "all bytes verified" "$log" && python3 "$here/ibmc/check_rc_path.py" "$log" 65536 >> "$log"; then
        ok "exchange 4 ranks, each its own node (MPIR_CVAR_NOLOCAL=1): bit-exact, every pair over RC"
    else bad "exchange with MPIR_CVAR_NOLOCAL=1 (see $log)"; tail -5 "$log"; fi
fi

# 2. the same with small packets: many more fragments per message
log=$IBMC_OUT/exchange-4x2-small-packets.log
if MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_PACKET_SIZE=1024 MPIR_CVAR_IBMC_SEND_BUFFERS=8 \
   MPIR_CVAR_IBMC_SQ_DEPTH=4 mpx -n 4 "$IBMC_BIN/exchange" 1048576 > "$log" 2>&1 &&
   grep -q "all bytes verified" "$log"; then ok "exchange with 1 KiB packets, 8 send buffers, SQ depth 4"
else bad "exchange with 1 KiB packets (see $log)"; tail -5 "$log"; fi

# 2a. eager windows under contention: 2 credits per peer, windows lent up to
#     8 out of a 32-buffer pool that 6 inter-node peers share, 1 KiB packets so
#     that every eager message is a train: senders starve, receivers lend and
#     take back (ibmc_credit.h); bytes must still arrive intact
log=$IBMC_OUT/exchange-8x4-lent-windows.log
if MPIR_CVAR_NUM_CLIQUES=4 MPIR_CVAR_IBMC_PACKET_SIZE=1024 MPIR_CVAR_IBMC_EAGER_CREDITS=2 \
   MPIR_CVAR_IBMC_EAGER_CREDITS_MAX=8 MPIR_CVAR_IBMC_RECV_BUFFERS=32 MPIR_CVAR_IBMC_STATS=1 \
   mpx -n 8 "$IBMC_BIN/exchange" 65536 > "$log" 2>&1 && grep -q "all bytes verified" "$log"; then
    lends=$(grep -Eo ' lends [0-9]+' "$log" | awk '{s += $2} END {print s + 0}')
    if [ "$lends" -gt 0 ]; then ok "exchange with 2-credit windows lent up to 8 from a shared pool ($lends lends)"
    else bad "exchange with lent windows: no window was ever lent (see $log)"; fi
else bad "exchange with lent windows (see $log)"; tail -5 "$log"; fi

# 2b. the zero-copy rendezvous protocol and its registration cache (rndv.c):
#     expected/unexpected/truncated/strided/ssend/mprobe/any-source receives,
#     reused, freed, reallocated and remapped buffers, bit-exact, and the
#     counters proving the data was pulled with RDMA READ, not copied.
rndv_case() { # name, bytes, check(1/0), env...
    local name=$1 bytes=$2 chk=$3; shift 3
    local log=$IBMC_OUT/rndv-${name// /_}.log
    if env MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_STATS=1 "$@" timeout -k 5 300 mpiexec -n 2 \
         "$IBMC_BIN/rndv" "$bytes" > "$log" 2>&1 && grep -q "rndv: all" "$log" &&
       { [ "$chk" = 0 ] || python3 "$here/ibmc/check_rndv.py" "$log" "$bytes" >> "$log"; }; then
        ok "rendezvous, $name: $(grep -h -E 'rndv: all|rndv path' "$log" | tail -1)"
    else bad "rendezvous, $name (see $log)"; grep -E "FAIL|rror" "$log" | head -5; fi
}
rndv_case "1 MiB" 1048576 1
rndv_case "64 KiB, eager limit 0" 65536 1 MPIR_CVAR_IBMC_EAGER_LIMIT=0
rndv_case "4 MiB, cache off" 4194304 0 MPIR_CVAR_IBMC_RCACHE_SIZE=0
rndv_case "1 MiB, 1 MiB cache limit" 1048576 0 MPIR_CVAR_IBMC_RCACHE_SIZE=1
# another allocator returns memory the cache cannot see: the cache must be
# off (and say so), every transfer registered for itself, the data bit-exact
tcm=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
rndv_case "1 MiB, tcmalloc preloaded" 1048576 0 LD_PRELOAD=$tcm
log=$IBMC_OUT/rndv-1_MiB,_tcmalloc_preloaded.log
if [ "$(grep -c 'registration cache off: malloc is not glibc' "$log")" = 2 ] &&
   [ "$(grep -Ec 'rcache hits 0 misses 0 .* uncached_regs [1-9]' "$log")" = 2 ]; then
    ok "registration cache off under tcmalloc, every transfer registered for itself"
else bad "registration cache under tcmalloc (see $log)"; grep -E "rcache|cache off" "$log" | head -4; fi
# an application that changes its heap's pages without moving the break
# (mallopt(M_TRIM_THRESHOLD) after MPI_Init, malloc_trim, its own madvise):
# the cache must notice, and a second transfer from the same addresses with
# new contents must be bit-exact on both sides
heap_case() { # mode, what each rank's stats must show
    local mode=$1 want=$2 log=$IBMC_OUT/rcache-heap-$1.log
    if MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_STATS=1 mpx -n 2 "$IBMC_BIN/rcache_heap" "$mode" \
           > "$log" 2>&1 && grep -q "rcache_heap $mode: .*all bytes verified" "$log" &&
       [ "$(grep -Ec "$want" "$log")" = 2 ]; then
        ok "registration cache and the application's $mode: $(grep -Eo "$want" "$log" | head -1); same addresses reused: $(grep -o 'on both ranks: [a-z]*' "$log" | cut -d' ' -f4)"
    else bad "registration cache and the application's $mode (see $log)"; grep -E "FAIL|rcache|cache off|rror" "$log" | head -4; fi
}
heap_case trim_threshold 'registration cache off: the application set M_TRIM_THRESHOLD with mallopt'
heap_case malloc_trim 'registration cache off: the application called malloc_trim'
heap_case madvise 'rcache hits 0 misses 2 evictions [0-9]+ invalidations [1-9]'
log=$IBMC_OUT/exchange-4x2-all-rndv.log
if MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_EAGER_LIMIT=0 mpx -n 4 "$IBMC_BIN/exchange" > "$log" 2>&1 &&
   grep -q "all bytes verified" "$log"; then ok "exchange, every contiguous message with data by rendezvous (eager limit 0)"
else bad "exchange with eager limit 0 (see $log)"; tail -5 "$log"; fi
# pvars_case: the MPI_T counter checks of test/ibmc/pvars.c under a setting;
# the program prints the settings MPICH parsed, so an ignored variable cannot
# pass as the other case.
pvars_case() { # log name, what, compact (on/off), lightweight (on/off), env...
    local log=$IBMC_OUT/$1 what=$2 compact=$3 light=$4; shift 4
    if env MPIR_CVAR_NUM_CLIQUES=2 "$@" timeout -k 5 "${IBMC_JOB_TIMEOUT:-300}" mpiexec -n 2 "$IBMC_BIN/pvars" > "$log" 2>&1 &&
       grep -q "pvars: all checks passed" "$log" && grep -q "pvars: compact send headers $compact" "$log" &&
       grep -q "pvars: lightweight sends $light" "$log"; then
        ok "$what"
    else bad "$what (see $log)"; grep -E "FAIL|rror" "$log" | head -5; fi
}
pvars_case pvars.log "MPI_T counters, defaults: 4 MiB zero-copy, 64 B compact and lightweight" on on
grep -Eo 'rank 1, 4194304 B receive: .*' "$IBMC_OUT/pvars.log" | sed 's/^/  /'
pvars_case pvars-full-headers.log \
    "MPI_T counters with MPIR_CVAR_IBMC_COMPACT_SEND_HEADER=0: every path, no compact header, no lightweight send" \
    off off MPIR_CVAR_IBMC_COMPACT_SEND_HEADER=0
pvars_case pvars-no-lightweight.log \
    "MPI_T counters with MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0: every send through an MPIDIG request" \
    on off MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND=0

# 2d. connections on first use: a ring of 8 processes on 8 nodes, each talking
#     to its two neighbours only, must hold at most 2 connections each.
log=$IBMC_OUT/ring-8.log
if MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_IBMC_STATS=1 mpx -n 8 "$IBMC_BIN/ring" > "$log" 2>&1 &&
   grep -q "all bytes verified" "$log"; then
    maxc=$(grep -Eo "rank [0-9]+ connections [0-9]+" "$log" | awk '{print $4}' | sort -n | tail -1)
    n=$(grep -c "connections" "$log")
    if [ "$n" = 8 ] && [ "${maxc:-99}" -le 2 ]; then ok "ring of 8 on 8 nodes: at most $maxc connections per process"
    else bad "ring of 8: $n stats lines, up to ${maxc:-?} connections per process (see $log)"; fi
else bad "ring of 8 (see $log)"; tail -5 "$log"; fi

# 2c. a peer dies (SIGKILL) after connecting; the sender must abort with an
#     error naming the peer and the verbs status, within the RC retry budget
#     (7 tries of about 1 s), not hang.  hydra must not kill the sender
#     first: auto-cleanup is off, and each rank runs under a shell so that
#     hydra sees a normal exit, because even with -disable-auto-cleanup it
#     sometimes (1 run in 3 here) kills the other ranks when one dies of a
#     signal, and the sender then vanishes without a word.
for sz in 1048576 64; do
    log=$IBMC_OUT/peerdeath-$sz.log
    t0=$(date +%s)
    MPIR_CVAR_NUM_CLIQUES=2 timeout -k 5 120 mpiexec -disable-auto-cleanup -n 2 \
        sh -c "'$IBMC_BIN/peerdeath' $sz; echo \"peerdeath: a rank exited with \$?\" >&2" > "$log" 2>&1
    rc=$? t=$(( $(date +%s) - t0 ))
    re='(to or from|with) rank 1 failed with verbs status: [a-zA-Z ]+'
    if [ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -Eq "$re" "$log" && ! grep -q "peerdeath: FAIL" "$log"; then
        ok "dead peer, $sz-byte sends: aborted after ${t}s: $(grep -Eo "$re" "$log" | head -1)"
    else bad "dead peer, $sz-byte sends: exit $rc after ${t}s (see $log)"; tail -5 "$log"; fi
done

# a queue pair broken on purpose (MPIR_CVAR_IBMC_FAULT_QP_ERROR) in the middle
# of a packet train and of a rendezvous READ: the job ends with the error
# naming the operation and the peer, not a hang and not a wrong result
qp_fault() { # fault, program, args...
    local fault=$1; shift
    local log=$IBMC_OUT/qpfault-${fault/=/-}.log t0 rc t
    t0=$(date +%s)
    MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_FAULT_QP_ERROR=$fault timeout -k 5 120 \
        mpiexec -n 2 "$@" > "$log" 2>&1
    rc=$? t=$(( $(date +%s) - t0 ))
    local re='(RC send|RC receive|rendezvous [a-zA-Z -]+) to or from rank [01] failed with verbs status: [a-zA-Z ]+'
    if [ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -q "FAULT_QP_ERROR moved QP" "$log" &&
       grep -Eq "$re" "$log" && ! grep -Eq "all bytes verified|rndv: all" "$log"; then
        ok "QP broken at $fault: job ended after ${t}s: $(grep -Eo "$re" "$log" | head -1)"
    else bad "QP broken at $fault: exit $rc after ${t}s (see $log)"; tail -5 "$log"; fi
}
qp_fault send=40 "$IBMC_BIN/exchange"
qp_fault read=2 "$IBMC_BIN/rndv" 1048576

# forged connection datagrams with the job's key from the wrong source (rank 1
# claims to be rank 2, a REQ and a REP): rank 0 drops both and says why, the
# job's data is right
log=$IBMC_OUT/forged-datagrams.log
if MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_STATS=1 MPIR_CVAR_IBMC_FAULT_QP_ERROR=forge_cm=1 \
       timeout -k 5 300 mpiexec -n 4 "$IBMC_BIN/exchange" > "$log" 2>&1 &&
   grep -q "all bytes verified" "$log" && grep -q "claim to come from rank 2" "$log" &&
   [ "$(grep -c 'rank 0 dropped a datagram: a connection message not sent from the rank it names' "$log")" = 2 ]; then
    ok "forged REQ and REP from the wrong source: both dropped by rank 0, data bit-exact"
else bad "forged connection datagrams (see $log)"; grep -E "dropped|claim|rror" "$log" | head -5; fi

# a finished rendezvous leaves the sender's memory closed: a read with its
# rkey one second after the FIN fails (the window is gone) and ends the job;
# without windows (MPIR_CVAR_IBMC_RNDV_WINDOW=false) the same read succeeds,
# which is what the windows are for
log=$IBMC_OUT/stale-read.log
MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_FAULT_QP_ERROR=stale_read=1 timeout -k 5 120 \
    mpiexec -n 2 "$IBMC_BIN/rndv" 1048576 > "$log" 2>&1
rc=$?
re='rendezvous RDMA READ to or from rank [01] failed with verbs status: remote access error'
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "again with the rkey" "$log" &&
   grep -Eq "$re" "$log" && ! grep -q "rkey from rank [01] succeeded" "$log"; then
    ok "a finished rendezvous's rkey reads nothing: $(grep -Eo "$re" "$log" | head -1)"
else bad "stale rendezvous read: exit $rc (see $log)"; tail -5 "$log"; fi
log=$IBMC_OUT/stale-read-no-windows.log
MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_IBMC_FAULT_QP_ERROR=stale_read=1 MPIR_CVAR_IBMC_RNDV_WINDOW=false \
    timeout -k 5 120 mpiexec -n 2 "$IBMC_BIN/rndv" 1048576 > "$log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "rkey from rank [01] succeeded" "$log"; then
    ok "without memory windows the same stale read succeeds (the exposure they close)"
else bad "stale rendezvous read without windows: exit $rc (see $log)"; tail -5 "$log"; fi

# finalize of a process connected to 15 peers, which has grown its receive
# buffers by chunks that finalize must deregister before the device goes,
# under valgrind: no invalid read, write or free, and no block lost for good.  Only rank 0 runs under valgrind; the device's own
# writes into memory are invisible to it, so undefined-value checks are off.
log=$IBMC_OUT/valgrind-finalize.log
t0=$(date +%s)
if MPIR_CVAR_NUM_CLIQUES=16 MPIR_CVAR_IBMC_STATS=1 timeout -k 5 1200 mpiexec \
       -n 1 valgrind --error-exitcode=97 --undef-value-errors=no --leak-check=full \
       --show-leak-kinds=definite --errors-for-leak-kinds=definite "$IBMC_BIN/exchange" 65536 : \
       -n 15 "$IBMC_BIN/exchange" 65536 > "$log" 2>&1 &&
   grep -q "all bytes verified" "$log" && grep -Eq "ibmc-stats: rank 0 connections 15 recv_chunks [1-9]" "$log" &&
   grep -q "ERROR SUMMARY: 0 errors" "$log"; then
    ok "finalize after 15 connections under valgrind: 0 errors, nothing definitely lost ($(( $(date +%s) - t0 )) s)"
else bad "finalize after 15 connections under valgrind (see $log)"; grep -E "ERROR SUMMARY|definitely|Invalid|rror" "$log" | head -6; fi

# 3. bad input gives a clear error, not a hang or a crash
expect_error "nonexistent device" 'device "mlx5_99" does not exist \(this host has: [a-z0-9_, ]+\)' \
    MPIR_CVAR_IBMC_DEVICE=mlx5_99 -- -n 2 "$IBMC_BIN/hello"
expect_error "nonexistent port" 'no device has an active port 7' MPIR_CVAR_IBMC_PORT=7 -- -n 1 "$IBMC_BIN/hello"
expect_error "malformed QP fault knob" "MPIR_CVAR_IBMC_FAULT_QP_ERROR='write=3' is not valid" \
    MPIR_CVAR_IBMC_FAULT_QP_ERROR=write=3 -- -n 1 "$IBMC_BIN/hello"
expect_error "packet size out of range" 'MPIR_CVAR_IBMC_PACKET_SIZE=100 is not valid: it must be between 1024 and [0-9]+' \
    MPIR_CVAR_IBMC_PACKET_SIZE=100 -- -n 2 "$IBMC_BIN/hello"
expect_error "unknown enum value" 'MPIR_CVAR_IBMC_PROGRESS_YIELD.*sometimes' \
    MPIR_CVAR_IBMC_PROGRESS_YIELD=sometimes -- -n 1 "$IBMC_BIN/hello"
expect_error "window limit below the base window" \
    'MPIR_CVAR_IBMC_EAGER_CREDITS_MAX=8 is not valid: it must be between 16 and 65535' \
    MPIR_CVAR_IBMC_EAGER_CREDITS_MAX=8 -- -n 1 "$IBMC_BIN/hello"
expect_error "CH4 pack buffer too small for a packet" \
    'MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE=512 is not valid: it must be between 1024 and [0-9]+' \
    MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE=512 -- -n 1 "$IBMC_BIN/hello"
expect_error "registration cache size out of range" 'MPIR_CVAR_IBMC_RCACHE_SIZE=-1 is not valid' \
    MPIR_CVAR_IBMC_RCACHE_SIZE=-1 -- -n 1 "$IBMC_BIN/hello"
expect_error "missing GID index" 'GID index 4000 is not populated' \
    MPIR_CVAR_IBMC_GID_INDEX=4000 -- -n 1 "$IBMC_BIN/hello"

# 3b. MPICH 4.0.2's node-aware Reduce composition lost rank 0's data when rank
#     0 was alone on its node (pmodels/mpich#6893); maint/patches/0003 fixes it.
#     Our own program builds exactly that layout; MPICH's coll/reduce at 5 ranks
#     on 4 pretend nodes hits it through its split communicators.
log=$IBMC_OUT/reduce-lone-root.log
if MPIR_CVAR_NUM_CLIQUES=2 mpx -n 4 "$IBMC_BIN/reduce_lone_root" > "$log" 2>&1 &&
   grep -q "reduce_lone_root: all correct" "$log"; then ok "Reduce with rank 0 alone on its node: every element correct"
else bad "Reduce with rank 0 alone on its node (see $log)"; grep -m3 "wrong\|expected" "$log"; fi
# test/mpich/build-tests.sh builds coll/reduce and pt2pt/large_message at every
# level, so a missing program is a failed build, not a reason to skip.
if [ -n "${IBMC_MPICH_TESTS:-}" ] && [ ! -x "$IBMC_MPICH_TESTS/coll/reduce" ]; then
    bad "MPICH coll/reduce, 5 ranks on 4 uneven nodes: $IBMC_MPICH_TESTS/coll/reduce was not built"
elif [ -n "${IBMC_MPICH_TESTS:-}" ]; then
    log=$IBMC_OUT/reduce-uneven.log
    if (cd "$IBMC_MPICH_TESTS/coll" && MPIR_CVAR_NUM_CLIQUES=4 mpx -n 5 ./reduce) > "$log" 2>&1 &&
       grep -q "No Errors" "$log"; then ok "MPICH coll/reduce, 5 ranks on 4 uneven nodes: No Errors"
    else bad "MPICH coll/reduce, 5 ranks on 4 uneven nodes (see $log)"; fi
fi

# 2e. MPICH's pt2pt/large_message: 2.16 GB messages (270M long longs, a count
#     past 2^31 bytes) from rank 0 to ranks 1 and 2, each rank on its own
#     pretend node, so the data goes through ibmc's rendezvous (split into
#     RDMA READs of at most 1 GiB).  Three ranks hold 6.5 GB between them,
#     so it runs when the machine has 8 GiB (test/vm: IBMC_VM_MEM=12G, which
#     maint/run-tests sets); MPICH's runtests leaves it out
#     (test/mpich/exclude.txt).
if [ -n "${IBMC_MPICH_TESTS:-}" ] && [ ! -x "$IBMC_MPICH_TESTS/pt2pt/large_message" ]; then
    bad "MPICH pt2pt/large_message: $IBMC_MPICH_TESTS/pt2pt/large_message was not built"
elif [ -n "${IBMC_MPICH_TESTS:-}" ]; then
    memkb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
    if [ "$memkb" -ge $((7 * 1024 * 1024)) ]; then
        log=$IBMC_OUT/large_message.log
        t0=$(date +%s)
        if MPIR_CVAR_NUM_CLIQUES=3 MPIR_CVAR_IBMC_STATS=1 timeout -k 5 1800 mpiexec -n 3 \
               "$IBMC_MPICH_TESTS/pt2pt/large_message" > "$log" 2>&1 && grep -q "No Errors" "$log" &&
           [ "$(grep -Ec 'rank [12] peer 0 .* rndv_read_bytes 2160000000 ' "$log")" = 2 ]; then
            ok "MPICH pt2pt/large_message, 2 x 2.16 GB over RC by RDMA READ, in $(( $(date +%s) - t0 )) s"
        else bad "MPICH pt2pt/large_message (see $log)"; grep -E "rror|rndv_read_bytes" "$log" | head -5; fi
    else
        echo "note: MPICH pt2pt/large_message not run: $((memkb / 1024)) MiB of RAM, it needs 8 GiB"
    fi
fi

fi # IBMC_MPICH_ONLY, IBMC_MCAST_ONLY

# 5. MPI_Bcast over hardware multicast (MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast):
#    every byte of 0 B .. 64 KiB broadcasts from every root, on the world and
#    a sub-communicator, and the MPI_T counters proving the path: multicast
#    used and nothing over RC without loss; injected loss, duplication and
#    reordering recovered by NAK and RC retransmission; the channel turned
#    off falls back to binomial.
if [ -z "${IBMC_MPICH_ONLY:-}" ] && [ -z "$intra" ]; then
mcast_case() { # name, expect, ranks, cliques, max bytes, env...
    local name=$1 expect=$2 np=$3 cl=$4 max=$5; shift 5
    local log=$IBMC_OUT/bcast-mcast-${name// /_}.log
    if env MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast MPIR_CVAR_NUM_CLIQUES=$cl MPIR_CVAR_IBMC_STATS=1 "$@" \
         timeout -k 5 "${IBMC_JOB_TIMEOUT:-300}" mpiexec -n "$np" "$IBMC_BIN/bcast_mcast" \
         --expect="$expect" "$max" > "$log" 2>&1 && grep -q "bcast_mcast: all checks passed" "$log"; then
        ok "ibmc_mcast, $name: $(grep -Eo 'counters as expected.*' "$log")"
    else bad "ibmc_mcast, $name (see $log)"; grep -E "FAIL|rror" "$log" | head -5; fi
}
# Without loss nothing may go over RC.  The emulated VM's multicast latency
# (milliseconds when 8 processes share 2 vCPUs, far more on a loaded host) is
# far above the default NAK timeout, which would then ask for packets that
# are merely slow (harmless, and the timeout adapts, but not what these cases
# prove): they run with a 1 s floor.
slow=MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT=1000000
mcast_case "4 ranks on 2 nodes" lossless 4 2 65536 $slow
mcast_case "8 ranks on 4 nodes" lossless 8 4 65536 $slow
mcast_case "5 ranks on 3 uneven nodes" lossless 5 3 65536 $slow
mcast_case "8 ranks on 4 nodes, 10% loss, 5% duplicates, 5% reordering" recovery 8 4 65536 \
    MPIR_CVAR_IBMC_MCAST_FAULTS=drop=0.1,dup=0.05,reorder=0.05,seed=7
mcast_case "4 ranks on 2 nodes, 30% loss" recovery 4 2 16384 \
    MPIR_CVAR_IBMC_MCAST_FAULTS=drop=0.3,reorder=0.1,seed=3
mcast_case "4 ranks on 2 nodes, window of 4, ACK every 2" lossless 4 2 16384 \
    MPIR_CVAR_IBMC_MCAST_WINDOW=4 MPIR_CVAR_IBMC_MCAST_ACK_EVERY=2 $slow
mcast_case "channel off (MPIR_CVAR_IBMC_MCAST=0)" fallback 4 2 4096 MPIR_CVAR_IBMC_MCAST=0
# a port address rdma_cm cannot join with (rxe's GID 0 is link-local IPv6):
# every rank falls back together, and says why
mcast_case "no IPv4 address for rdma_cm (GID index 0)" fallback 4 2 4096 MPIR_CVAR_IBMC_GID_INDEX=0
log="$IBMC_OUT/bcast-mcast-no_IPv4_address_for_rdma_cm_(GID_index_0).log"
re='falls back to binomial on communicator [^ ]+ \(size 2\): GID 0 of [a-z0-9_]+ port [0-9]+ maps no IPv4 address'
if grep -Eq "$re" "$log"; then ok "the fallback's reason is printed: $(grep -Eo "$re" "$log" | head -1)"
else bad "no fallback reason matching /$re/ in $log"; fi
# a group that the fabric does not deliver (every multicast packet dropped
# at the receivers): the routing probe before first use finds it, and all
# members fall back together, saying which member it missed
mcast_case "group not delivered (every packet dropped)" fallback 4 2 4096 \
    MPIR_CVAR_IBMC_MCAST_FAULTS=drop=1 MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT=2
log="$IBMC_OUT/bcast-mcast-group_not_delivered_(every_packet_dropped).log"
re="falls back to binomial on communicator [^ ]+ \(size 2\): the group's probe did not reach rank 1 within 2 s"
if grep -Eq "$re" "$log"; then ok "the routing probe's fallback is explained: $(grep -Eo "$re" "$log" | head -1)"
else bad "no probe fallback reason matching /$re/ in $log"; fi
log=$IBMC_OUT/bcast-mcast-threads.log
if MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast MPIR_CVAR_NUM_CLIQUES=2 \
   MPIR_CVAR_IBMC_MCAST_FAULTS=drop=0.05,reorder=0.05,seed=5 mpx -n 4 "$IBMC_BIN/bcast_mcast_threads" > "$log" 2>&1 &&
   grep -q "bcast_mcast_threads: all checks passed" "$log"; then
    ok "ibmc_mcast under MPI_THREAD_MULTIPLE, 5% loss: $(grep -Eo 'all checks passed.*' "$log")"
else bad "ibmc_mcast under MPI_THREAD_MULTIPLE (see $log)"; grep -E "FAIL|rror" "$log" | head -5; fi
# a member killed in the middle of multicast broadcasts: the root, whose
# window the dead member holds, asks it for an ACK over RC, and that fails
# naming it.  The killed rank's shell lives on, so that hydra does not see a
# process die and end the job itself: what ends it must be ibmc.
log=$IBMC_OUT/bcast-mcast-peerdeath.log
t0=$(date +%s)
MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast MPIR_CVAR_NUM_CLIQUES=4 timeout -k 5 180 mpiexec -n 4 \
    sh -c "'$IBMC_BIN/bcast_peerdeath'; rc=\$?; echo \"bcast_peerdeath: rank \$PMI_RANK exited with \$rc\" >&2
           [ \$rc = 137 ] && sleep 600; exit \$rc" > "$log" 2>&1
rc=$? t=$(( $(date +%s) - t0 ))
re='(to or from|with) rank 3 failed with verbs status: [a-zA-Z ]+'
if [ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -q "rank 3 exited with 137" "$log" &&
   grep -Eq "$re" "$log" && ! grep -q "bcast_peerdeath: FAIL" "$log"; then
    ok "member killed during multicast broadcasts: the job ended after ${t}s with: $(grep -Eo "$re" "$log" | head -1)"
else bad "member killed during multicast broadcasts: exit $rc after ${t}s (see $log)"; grep -E "rror|exited|FAIL" "$log" | head -6; fi
# 10,000 communicators created, broadcast over by multicast and freed, a
# few kept alive across cycles, with a pool of 2 groups (so live
# communicators share them): groups held never exceed the pool, every
# broadcast went by multicast, resident memory stays flat
log=$IBMC_OUT/bcast-mcast-churn.log
t0=$(date +%s)
if MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast MPIR_CVAR_NUM_CLIQUES=4 MPIR_CVAR_IBMC_MCAST_GROUPS=2 \
       timeout -k 5 900 mpiexec -n 4 "$IBMC_BIN/bcast_churn" 10000 > "$log" 2>&1 &&
   grep -q "bcast_churn: all checks passed" "$log"; then
    ok "communicator churn over multicast in $(( $(date +%s) - t0 )) s: $(grep -Eo '10000 communicators.*' "$log")"
else bad "communicator churn over multicast (see $log)"; grep -E "FAIL|rror" "$log" | head -5; fi
expect_error "multicast group pool of 0" \
    'MPIR_CVAR_IBMC_MCAST_GROUPS=0 is not valid: it must be between 1 and 64' \
    MPIR_CVAR_IBMC_MCAST_GROUPS=0 -- -n 1 "$IBMC_BIN/hello"
expect_error "multicast fault string" \
    "MPIR_CVAR_IBMC_MCAST_FAULTS='drop=2' is not valid: drop=2 is not a probability between 0 and 1" \
    MPIR_CVAR_IBMC_MCAST_FAULTS=drop=2 -- -n 1 "$IBMC_BIN/hello"
expect_error "multicast window not a power of two" \
    'MPIR_CVAR_IBMC_MCAST_WINDOW=48 is not valid: it must be a power of two from 2 to 32768' \
    MPIR_CVAR_IBMC_MCAST_WINDOW=48 -- -n 1 "$IBMC_BIN/hello"
# MPICH's own broadcast tests with the algorithm forced (intercommunicators
# take MPICH's inter-communicator algorithm, through the same CVAR switch)
if [ -n "${IBMC_MPICH_TESTS:-}" ]; then
    for spec in "coll bcasttest 8 4" "coll bcasttest 4 2" "coll bcastzerotype 5 3" \
                "coll bcastzerotype 4 2" "coll icbcast 4 2" "coll coll2 5 3"; do
        read -r d prog np cl <<< "$spec"
        for fault in "" "drop=0.1,dup=0.05,reorder=0.05,seed=11"; do
            log=$IBMC_OUT/mpich-mcast-$prog-$np${fault:+-faults}.log
            if [ ! -x "$IBMC_MPICH_TESTS/$d/$prog" ]; then bad "MPICH $d/$prog was not built"; break; fi
            if (cd "$IBMC_MPICH_TESTS/$d" && MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast MPIR_CVAR_NUM_CLIQUES=$cl \
                MPIR_CVAR_IBMC_MCAST_FAULTS=$fault mpx -n "$np" "./$prog") > "$log" 2>&1 &&
               grep -q "No Errors" "$log"; then
                ok "MPICH $d/$prog, $np ranks on $cl nodes, ibmc_mcast${fault:+, faults $fault}: No Errors"
            else bad "MPICH $d/$prog, $np ranks on $cl nodes, ibmc_mcast${fault:+, faults $fault} (see $log)"; tail -3 "$log"; fi
        done
    done
fi
fi # section 5

# 6. MPI_Allgather over node-shared registered segments
#    (MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd): every byte of 1 B ..
#    64 KiB per rank, in place, strided, on the world and on a communicator
#    whose nodes' ranks are neither consecutive nor in order; the counters
#    proving the path (node leaders' RDMA writes as the plan says, no eager
#    RC packet); uneven and round-robin placements; data larger than the
#    segment in pieces; fallbacks; bad input.
if [ -z "${IBMC_MPICH_ONLY:-}" ] && [ -z "$intra" ]; then
ag_case() { # name, expect, ranks, cliques, max bytes, env...
    local name=$1 expect=$2 np=$3 cl=$4 max=$5; shift 5
    local log=$IBMC_OUT/allgather-${name// /_}.log
    if env MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd MPIR_CVAR_NUM_CLIQUES=$cl MPIR_CVAR_IBMC_STATS=1 "$@" \
         timeout -k 5 "${IBMC_JOB_TIMEOUT:-300}" mpiexec -n "$np" "$IBMC_BIN/allgather_node" \
         --expect "$expect" --max "$max" $ag_args > "$log" 2>&1 && grep -q "allgather_node: all checks passed" "$log"; then
        ok "ibmc_node_rd, $name: $(grep -Eo '[0-9]+ nodes: .*' "$log")"
    else bad "ibmc_node_rd, $name (see $log)"; grep -E "FAIL|rror" "$log" | head -5; fi
}
ag_args=""
ag_case "4 ranks on 2 nodes" segments 4 2 65536
ag_case "8 ranks on 4 nodes" segments 8 4 65536
ag_case "6 ranks on 3 nodes (uneven rounds)" segments 6 3 65536
ag_case "7 ranks on 3 nodes (uneven processes per node)" segments 7 3 16384
ag_case "8 ranks on 8 nodes" segments 8 8 16384
ag_case "5 ranks on 5 nodes" segments 5 5 16384
ag_case "8 ranks on 4 nodes, in pieces (64 KiB segments)" segments 8 4 65536 MPIR_CVAR_IBMC_NODE_SEG_SIZE=65536
ag_case "8 ranks on 4 nodes, no overlap" segments 8 4 16384 MPIR_CVAR_IBMC_NODE_RD_OVERLAP=0
ag_args="--bcast"
ag_case "4 ranks on 2 nodes, with ibmc_mcast broadcasts on the same communicator" segments 4 2 4096 \
    MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast
ag_args="--watch-shm"
ag_case "4 ranks on 2 nodes, segment files watched" segments 4 2 1024
log="$IBMC_OUT/allgather-4_ranks_on_2_nodes,_segment_files_watched.log"
if grep -Eq "watcher saw segment files [1-9][0-9]* times, 0 with another mode" "$log"; then
    ok "segment files are 0600 while they exist, none left after MPI_Finalize: $(grep -Eo 'saw segment files [0-9]+ times' "$log")"
else bad "segment files not seen or not 0600 (see $log)"; grep -E "watcher|left behind" "$log" | head -3; fi
ag_args=""
ag_case "segments off (MPIR_CVAR_IBMC_NODE_SEG=0)" fallback 4 2 1024 MPIR_CVAR_IBMC_NODE_SEG=0
ag_case "one node" fallback 4 1 1024
log="$IBMC_OUT/allgather-one_node.log"
re="ibmc_node_rd falls back to a stock allgather on communicator [^ ]+ \(size 4\): all members are on one node"
if grep -Eq "$re" "$log"; then ok "the one-node fallback is explained: $(grep -Eo "$re" "$log" | head -1)"
else bad "no fallback reason matching /$re/ in $log"; fi
# both algorithms under MPI_THREAD_MULTIPLE, each thread on a communicator
# of its own carrying both
log=$IBMC_OUT/coll-threads.log
if MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast \
   MPIR_CVAR_NUM_CLIQUES=2 mpx -n 4 "$IBMC_BIN/coll_threads" > "$log" 2>&1 &&
   grep -q "coll_threads: all checks passed" "$log"; then
    ok "ibmc_node_rd and ibmc_mcast under MPI_THREAD_MULTIPLE: $(grep -Eo 'all checks passed.*' "$log")"
else bad "ibmc_node_rd and ibmc_mcast under MPI_THREAD_MULTIPLE (see $log)"; grep -E "FAIL|rror" "$log" | head -5; fi
# MPI_Abort right after the first call: no segment file is left
log=$IBMC_OUT/allgather-abort.log
rm -f /dev/shm/ibmc-* 2>/dev/null
MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd MPIR_CVAR_NUM_CLIQUES=2 mpx -n 4 "$IBMC_BIN/allgather_node" --abort > "$log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && ! ls /dev/shm/ibmc-* > /dev/null 2>&1; then
    ok "MPI_Abort after an ibmc_node_rd call (exit $rc): no segment file left in /dev/shm"
else bad "abort: exit $rc, /dev/shm: $(ls /dev/shm | grep ibmc- | head -3) (see $log)"; fi
# a process killed in the middle of allgathers, once a node's leader (whose
# partners' RDMA reads fail) and once another process (whose node's
# processes see its pid gone); as for the broadcast, its shell lives on
for victim in 1 5; do
    log=$IBMC_OUT/allgather-peerdeath-$victim.log
    t0=$(date +%s)
    MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd MPIR_CVAR_NUM_CLIQUES=4 timeout -k 5 180 mpiexec -n 8 \
        sh -c "'$IBMC_BIN/allgather_peerdeath' $victim; rc=\$?; echo \"allgather_peerdeath: rank \$PMI_RANK exited with \$rc\" >&2
               [ \$rc = 137 ] && sleep 600; exit \$rc" > "$log" 2>&1
    rc=$? t=$(( $(date +%s) - t0 ))
    re="(Rank $victim, a process on this node, ended|(to or from|with) rank $victim failed with verbs status)[a-zA-Z ,:]*"
    if [ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -q "rank $victim exited with 137" "$log" &&
       grep -Eq "$re" "$log" && ! grep -q "allgather_peerdeath: FAIL" "$log"; then
        ok "rank $victim killed during ibmc_node_rd allgathers: the job ended after ${t}s with: $(grep -Eo "$re" "$log" | head -1)"
    else bad "rank $victim killed during ibmc_node_rd allgathers: exit $rc after ${t}s (see $log)"; grep -E "rror|exited|FAIL" "$log" | head -6; fi
done
expect_error "node segment size too small" \
    'MPIR_CVAR_IBMC_NODE_SEG_SIZE=4096 is not valid: it must be from 65536 to 1073741824' \
    MPIR_CVAR_IBMC_NODE_SEG_SIZE=4096 -- -n 1 "$IBMC_BIN/hello"
# MPICH's own allgather tests with the algorithm forced, block and
# round-robin placement
if [ -n "${IBMC_MPICH_TESTS:-}" ]; then
    for spec in "coll allgather2 4 2" "coll allgather2 8 4" "coll allgather3 5 3" "coll allgather3 7 3" \
                "coll allgather_struct 6 3" "coll allgather2 3 3" "coll icallgather 4 2" "coll coll7 5 3"; do
        read -r d prog np cl <<< "$spec"
        for byblock in 0 1; do
            log=$IBMC_OUT/mpich-noderd-$prog-$np-$byblock.log
            if [ ! -x "$IBMC_MPICH_TESTS/$d/$prog" ]; then bad "MPICH $d/$prog was not built"; break; fi
            place=round-robin; [ $byblock = 1 ] && place=block
            if (cd "$IBMC_MPICH_TESTS/$d" && MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd MPIR_CVAR_NUM_CLIQUES=$cl \
                MPIR_CVAR_CLIQUES_BY_BLOCK=$byblock mpx -n "$np" "./$prog") > "$log" 2>&1 &&
               grep -q "No Errors" "$log"; then
                ok "MPICH $d/$prog, $np ranks on $cl nodes ($place), ibmc_node_rd: No Errors"
            else bad "MPICH $d/$prog, $np ranks on $cl nodes ($place), ibmc_node_rd (see $log)"; tail -3 "$log"; fi
        done
    done
fi
fi # section 6

if [ -z "${IBMC_MCAST_ONLY:-}" ]; then

# 4. MPICH's own test suite.  Every test counts as one check.
if [ -n "${IBMC_MPICH_TESTS:-}" ]; then
    dirs=${IBMC_MPICH_DIRS:-$(cat "$IBMC_MPICH_TESTS/ibmc-testlist")}
    dirs_csv=$(echo $dirs | tr ' ' ',')
    # runtests runs "make PROGRAM" before each test.  The programs were built
    # on the host; under emulation make costs about a second a test, and it
    # must not try to regenerate anything here, so make is a no-op.
    mkdir -p "$IBMC_OUT/nomake"
    printf '#!/bin/sh\nexit 0\n' > "$IBMC_OUT/nomake/make"
    chmod +x "$IBMC_OUT/nomake/make"
    level=${IBMC_MPICH_LEVEL:-ci}
    for spec in ${IBMC_MPICH_TESTLISTS:-}; do
        # spec: MAXNP:CLIQUES[:MINNP].  MINNP skips the test lines of fewer
        # ranks: MPIR_CVAR_NUM_CLIQUES places ranks round-robin, so a job of
        # 2 ranks or fewer gets the same layout (one rank per node) at 8 ranks
        # on 4 nodes as at 4 on 2, and running it again proves nothing new.
        IFS=: read -r np cl minnp <<< "$spec"
        minnp=${minnp:-1}
        # testlist.capped: tests that cannot run with their count capped to np
        for d in $dirs; do
            awk -v np="$np" -v minnp="$minnp" 'FILENAME == ARGV[1] { if (np <= $3) cap[$1 " " $2] = 1; next }
                /^[ \t]*(#|$)/ { next }
                { n = ($2 ~ /^[0-9]+$/) ? $2 + 0 : 1 }
                !(($1 " " $2) in cap) && n >= minnp' \
                "$IBMC_MPICH_TESTS/$d/testlist.capped" "$IBMC_MPICH_TESTS/$d/testlist.$level" \
                > "$IBMC_MPICH_TESTS/$d/testlist"
        done
        xml=$IBMC_OUT/mpich-np$np-cliques$cl.xml
        t0=$(date +%s)
        (cd "$IBMC_MPICH_TESTS" && PATH=$IBMC_OUT/nomake:$PATH MPIR_CVAR_NUM_CLIQUES=$cl MPITEST_TIMEOUT_MULTIPLIER=${IBMC_TIMEOUT_MULTIPLIER:-3} \
            perl runtests -srcdir=. -tests=testlist -testdirs="$dirs_csv" -maxnp="$np" -mpiexec="$IBMC_PREFIX/bin/mpiexec" \
            -xmlfile="$xml" > "$IBMC_OUT/mpich-np$np-cliques$cl.log" 2>&1)
        t=$(grep -c '<STATUS>' "$xml" 2>/dev/null); t=${t:-0}
        f=$(grep -c '<STATUS>fail' "$xml" 2>/dev/null); f=${f:-0}
        lines="at most $np ranks"; [ "$minnp" = 1 ] || lines="$minnp to $np ranks"
        echo "MPICH test/mpi, $level set ($dirs), $lines on $cl nodes: $((t - f)) of $t passed in $(($(date +%s) - t0)) s"
        if [ "$t" = 0 ]; then bad "MPICH test suite ran no test (see $IBMC_OUT/mpich-np$np-cliques$cl.log)"; fi
        pass=$((pass + t - f)); fail=$((fail + f))
        python3 - "$xml" <<'PY'
import re, sys
x = open(sys.argv[1], errors="replace").read()
for m in re.finditer(r"<MPITEST>(.*?)</MPITEST>", x, re.S):
    b = m.group(1)
    if "<STATUS>fail" in b:
        name = re.search(r"<NAME>(.*?)</NAME>", b)
        np_ = re.search(r"<NP>(.*?)</NP>", b)
        wd = re.search(r"<WORKDIR>(.*?)</WORKDIR>", b)
        print("FAIL-MPICH:", (wd.group(1) if wd else "?") + "/" + (name.group(1) if name else "?"),
              "np", np_.group(1) if np_ else "?")
PY
    done
fi

fi # IBMC_MCAST_ONLY

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
