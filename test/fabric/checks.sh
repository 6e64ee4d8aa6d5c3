# shellcheck shell=bash
# The functions share the variables of the driver's run_case (dynamic scope):
# shellcheck disable=SC2034,SC2154
# test/fabric/checks.sh: the checkers, launch wrappers and suites that the
# lines of test/fabric/cases.txt name; sourced by test/fabric-suite.sh.
#
# check_NAME ARG  the CHECK column NAME or NAME:ARG.  Called after the job
#     with ARG (empty without one) and these variables of the case:
#       log   the job's output, stdout and stderr (for a follow-on check,
#             log:CASE, that case's log)
#       rc    the job's exit status (124: the time limit ended it)
#       secs  the seconds it took
#       np    its process count, prog the program's name (bcast_peerdeath),
#             args its arguments, exe the program as run
#       intra --intranode-via-netmod when IBMC_INTRA_VIA_NETMOD is set
#     Returns 0 when the case passed, and may set:
#       detail  what follows "ok: NAME: "
#       why     what follows "FAIL: NAME: " (the driver sets "exit status RC")
#       show    an extended regex: after a FAIL, the log's lines matching it
#               (the first $shown, default 5) are shown, instead of its last
#               5 lines; "-" shows nothing
#       note    lines printed after the ok or FAIL line
#     Each checker's pass criteria are the conditions before its "return 1"s;
#     the detail and why texts only report.
# before_NAME     run before the job of a case whose checker is NAME
# wrap_NAME       @NAME in a command: sets mpiargs, the arguments after
#                 mpiexec's own options, from np, exe, prog and args
# suite_NAME CASE ...  a CHECK of "suite": runs and counts its checks itself
#
# The suite's history lives in these regexes: change one only with the
# program or message it matches.

# ---- launch wrappers ------------------------------------------------------------

# Each rank runs under a shell that reports its exit status, so that hydra
# sees a normal exit: even with -disable-auto-cleanup hydra sometimes (1 run
# in 3) kills the other ranks when one dies of a signal, and the survivor
# then vanishes without a word.
wrap_shell() {
    mpiargs=(-n "$np" sh -c "'$exe'${args[*]:+ ${args[*]}}; echo \"$prog: a rank exited with \$?\" >&2")
}

# The same, and the shell of a rank killed with SIGKILL (exit 137) lives on,
# so that hydra sees no process die and end the job itself: what ends it must
# be ibmc.
wrap_shell_stays() {
    mpiargs=(-n "$np" sh -c "'$exe'${args[*]:+ ${args[*]}}; rc=\$?; echo \"$prog: rank \$PMI_RANK exited with \$rc\" >&2
[ \$rc = 137 ] && sleep 600; exit \$rc")
}

# Each rank without CAP_IPC_LOCK (root keeps it otherwise, and with it no
# limit on registered memory) and with 32 MiB of RLIMIT_MEMLOCK: the netmod's
# own buffers fit, a segment for a large allgather does not.
wrap_memlock_32m() {
    mpiargs=(-n "$np" setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock
             prlimit --memlock=33554432:33554432 "$exe" "${args[@]}")
}

# Rank 0 under valgrind, the other NP-1 ranks as they are.  The device's own
# writes into memory are invisible to valgrind, so undefined-value checks
# are off.
wrap_valgrind_rank0() {
    mpiargs=(-n 1 valgrind --error-exitcode=97 --undef-value-errors=no --leak-check=full
             --show-leak-kinds=definite --errors-for-leak-kinds=definite "$exe" "${args[@]}"
             : -n $((np - 1)) "$exe" "${args[@]}")
}

# ---- checkers of a program's own verdict -----------------------------------

# test/ibmc/check_info.sh's verdict, one PASS: or FAIL: line
check_info() {
    if [ "$rc" = 0 ]; then detail=$(sed -n 's/^PASS: //p' "$log" | head -1); return 0; fi
    why=$(sed -n 's/^FAIL: //p' "$log" | head -1)
    return 1
}

# exit 0 and "all bytes verified" (exchange, ring)
check_verified() {
    [ "$rc" = 0 ] && grep -q "all bytes verified" "$log" || return 1
    detail=$(grep -h "all bytes verified" "$log" | tail -1)
}

# says:TEXT  exit 0 and a line with TEXT (a basic regex); the line from TEXT on
# is the detail
check_says() {
    [ "$rc" = 0 ] && grep -q "$1" "$log" || return 1
    detail=$(grep -o "$1.*" "$log" | head -1)
}

# says_timed:TEXT  the same, and how long it took
check_says_timed() {
    check_says "$1" || return 1
    detail="$detail; in $secs s"
}

# error:REGEX  bad input gives a clear error, not a hang or a crash: the job
# fails and its output has a line matching the extended REGEX
check_error() {
    if [ "$rc" = 0 ]; then why="the job succeeded"; return 1; fi
    grep -Eq "$1" "$log" || { why="no message matching /$1/"; return 1; }
    detail=$(grep -Eo "$1" "$log" | head -1)
}

# log_has:REGEX  (a follow-on check) the case's log has a line matching it
check_log_has() {
    show=-
    grep -Eq "$1" "$log" || { why="no line matching /$1/"; return 1; }
    detail=$(grep -Eo "$1" "$log" | head -1)
}

# ---- the RC path and the eager protocol ------------------------------------

# rc_path:MIN_BYTES  test/ibmc/check_rc_path.py: every inter-node pair carried
# at least MIN_BYTES over RC, and (with shared memory) no same-node pair did
check_rc_path() {
    local out st
    out=$(python3 "$testdir/ibmc/check_rc_path.py" "$log" "$1" $intra); st=$?
    printf '%s\n' "$out" >> "$log"
    if [ $st = 0 ]; then detail=$(grep '^rc-path: ' <<< "$out" | tail -1); return 0; fi
    why=$(grep -m1 '^FAIL: ' <<< "$out" | sed 's/^FAIL: //')
    note=$(grep '^FAIL: ' <<< "$out" | sed 1d | sed 's/^/  /')
    show=-
    return 1
}

# all_rc:MIN_BYTES  exchange verified, and check_rc_path.py on its log
check_all_rc() {
    local v
    check_verified || return 1
    v=$detail
    check_rc_path "$1" || return 1
    detail="$v; $detail"
}

# eager windows lent: exchange verified and the counters show windows lent
check_lent() {
    local lends
    check_verified || return 1
    lends=$(grep -Eo ' lends [0-9]+' "$log" | awk '{s += $2} END {print s + 0}')
    [ "$lends" -gt 0 ] || { why="no window was ever lent"; return 1; }
    detail="$lends lends; $detail"
}

# pvars:COMPACT:LIGHTWEIGHT  test/ibmc/pvars.c's MPI_T counter checks passed
# under the setting MPICH parsed (on or off), so that an ignored variable
# cannot pass as the other case; the 4 MiB receive's counters are shown
check_pvars() {
    local compact=${1%%:*} light=${1#*:}
    show='FAIL|rror'
    note=$(grep -Eo 'rank 1, 4194304 B receive: .*' "$log" | sed 's/^/  /')
    [ "$rc" = 0 ] && grep -q "pvars: all checks passed" "$log" &&
        grep -q "pvars: compact send headers $compact" "$log" &&
        grep -q "pvars: lightweight sends $light" "$log" || return 1
    detail="all checks passed; compact send headers $compact, lightweight sends $light"
}

# ---- connections -------------------------------------------------------------

# connections:MAX  ring verified, NP stats lines, no process with more than
# MAX connections made by the job; every process went through MPI_Finalize's
# barrier over RC in ceil(log2 NP) rounds, whose connections are counted
# apart
check_connections() {
    local maxc n fin rounds=0 added
    check_verified || return 1
    while [ $((1 << rounds)) -lt "$np" ]; do rounds=$((rounds + 1)); done
    maxc=$(grep -Eo "rank [0-9]+ connections [0-9]+" "$log" | awk '{print $4}' | sort -n | tail -1)
    n=$(grep -Ec "rank [0-9]+ connections [0-9]+" "$log")
    fin=$(grep -Ec "rank [0-9]+ finalize rounds $rounds " "$log")
    added=$(grep -Eo "finalize rounds [0-9]+ connections_added [0-9]+" "$log" | awk '{print $5}' |
        sort -n | tail -1)
    if [ "$n" = "$np" ] && [ "${maxc:-99}" -le "$1" ] && [ "$fin" = "$np" ]; then
        detail="at most $maxc connections per process; MPI_Finalize's barrier: $rounds rounds, at most ${added:-?} more"
        return 0
    fi
    why="$n stats lines, up to ${maxc:-?} connections per process, $fin of $np through a $rounds-round finalize barrier"; show=-
    return 1
}

# forged REQ and REP (forge_cm=1): rank 0 drops both and says why, the data
# is right
check_forged() {
    show='dropped|claim|rror'
    [ "$rc" = 0 ] && grep -q "all bytes verified" "$log" && grep -q "claim to come from rank 2" "$log" &&
        [ "$(grep -c 'rank 0 dropped a datagram: a connection message not sent from the rank it names' "$log")" = 2 ] ||
        return 1
    detail="REQ and REP from the wrong source both dropped by rank 0, all bytes verified"
}

# ---- rendezvous and the registration cache ---------------------------------

# exit 0 and "rndv: all"
check_rndv() {
    show='FAIL|rror'
    [ "$rc" = 0 ] && grep -q "rndv: all" "$log" || return 1
    detail=$(grep -h -E 'rndv: all|rndv path' "$log" | tail -1)
}

# the same, and test/ibmc/check_rndv.py (the program's first argument is the
# size): the data was pulled with RDMA READ, not copied
check_rndv_read() {
    show='FAIL|rror'
    [ "$rc" = 0 ] && grep -q "rndv: all" "$log" &&
        python3 "$testdir/ibmc/check_rndv.py" "$log" "${args[0]}" >> "$log" || return 1
    detail=$(grep -h -E 'rndv: all|rndv path' "$log" | tail -1)
}

# (a follow-on check of rndv under a preloaded tcmalloc) the cache is off on
# both ranks, and says so, and every transfer was registered for itself
check_tcmalloc_uncached() {
    show='rcache|cache off' shown=4 why="registration cache under tcmalloc"
    [ "$(grep -c 'registration cache off: malloc is not glibc' "$log")" = 2 ] &&
        [ "$(grep -Ec 'rcache hits 0 misses 0 .* uncached_regs [1-9]' "$log")" = 2 ] || return 1
    detail="registration cache off under tcmalloc on both ranks, every transfer registered for itself"
}

# rcache_heap:REGEX  the second transfer from the same addresses is bit-exact,
# and both ranks' output matches REGEX (the program's first argument is the mode)
check_rcache_heap() {
    local mode=${args[0]}
    show='FAIL|rcache|cache off|rror' shown=4
    [ "$rc" = 0 ] && grep -q "rcache_heap $mode: .*all bytes verified" "$log" &&
        [ "$(grep -Ec "$1" "$log")" = 2 ] || return 1
    detail="$(grep -Eo "$1" "$log" | head -1); same addresses reused: $(grep -o 'on both ranks: [a-z]*' "$log" | cut -d' ' -f4)"
}

# ---- errors --------------------------------------------------------------------

# ended:REGEX  the job ended with an error (not 0, not the time limit), its
# output matches REGEX, and the program reported no FAIL of its own
check_ended() {
    show='rror|exited|FAIL' shown=6 why="exit $rc after ${secs}s"
    [ "$rc" -ne 124 ] && [ "$rc" -ne 0 ] && grep -Eq "$1" "$log" && ! grep -q "$prog: FAIL" "$log" ||
        return 1
    detail="the job ended after ${secs}s with: $(grep -Eo "$1" "$log" | head -1)"
}

# killed:RANK:REGEX  the same, and RANK was the one killed (exit 137)
check_killed() {
    local victim=${1%%:*}
    check_ended "${1#*:}" && grep -q "rank $victim exited with 137" "$log" ||
        { why="exit $rc after ${secs}s"; return 1; }
}

# a queue pair broken on purpose (MPIR_CVAR_IBMC_FAULT_QP_ERROR): the job ends
# with the error naming the operation and the peer, not a hang and not a
# wrong result
check_qp_broken() {
    local re='(RC send|RC receive|rendezvous [a-zA-Z -]+) to or from rank [01] failed with verbs status: [a-zA-Z ]+'
    why="exit $rc after ${secs}s"
    [ "$rc" -ne 124 ] && [ "$rc" -ne 0 ] && grep -q "FAULT_QP_ERROR moved QP" "$log" &&
        grep -Eq "$re" "$log" && ! grep -Eq "all bytes verified|rndv: all" "$log" || return 1
    detail="job ended after ${secs}s: $(grep -Eo "$re" "$log" | head -1)"
}

# stale_read=1: a read with a finished rendezvous's rkey fails and ends the job
check_stale_read() {
    local re='rendezvous RDMA READ to or from rank [01] failed with verbs status: remote access error'
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "again with the rkey" "$log" &&
        grep -Eq "$re" "$log" && ! grep -q "rkey from rank [01] succeeded" "$log" || return 1
    detail="a finished rendezvous's rkey reads nothing: $(grep -Eo "$re" "$log" | head -1)"
}

# stale_read=1 without memory windows: the same read succeeds (the exposure
# the windows close)
check_stale_read_succeeds() {
    [ "$rc" -eq 0 ] && grep -q "rkey from rank [01] succeeded" "$log" || return 1
    detail="without memory windows: $(grep -o "[^ ]* rkey from rank [01] succeeded" "$log" | head -1)"
}

# valgrind on rank 0 (@valgrind_rank0): bytes verified, rank 0 connected to
# the NP-1 others and grew its receive buffers, valgrind found 0 errors and
# nothing definitely lost
check_valgrind() {
    show='ERROR SUMMARY|definitely|Invalid|rror' shown=6
    [ "$rc" = 0 ] && grep -q "all bytes verified" "$log" &&
        grep -Eq "ibmc-stats: rank 0 connections $((np - 1)) recv_chunks [1-9]" "$log" &&
        grep -q "ERROR SUMMARY: 0 errors" "$log" || return 1
    detail="finalize after $((np - 1)) connections: 0 errors, nothing definitely lost ($secs s)"
}

# ---- MPICH programs -----------------------------------------------------------

# MPICH's pt2pt/large_message on 2 pretend nodes: No Errors, and rank 1
# pulled its 2.16 GB from rank 0 by RDMA READ; rank 2, on rank 0's node,
# took its copy through shared memory (read nothing), or by RDMA READ too
# when the build has no shared memory
check_large_message() {
    local net=1 whole pulled shm=''
    [ -z "$intra" ] || net=2
    show='rror|rndv_read_bytes'
    whole=$(grep -Ec 'rank [12] peer 0 .* rndv_read_bytes 2160000000 ' "$log")
    pulled=$(grep -Ec 'rank [12] peer 0 .* rndv_read_bytes [1-9]' "$log")
    [ "$rc" = 0 ] && grep -q "No Errors" "$log" &&
        grep -Eq 'rank 1 peer 0 .* rndv_read_bytes 2160000000 ' "$log" &&
        [ "$whole" = "$net" ] && [ "$pulled" = "$net" ] || return 1
    [ "$net" = 2 ] || shm=", 1 through shared memory"
    detail="$net x 2.16 GB over RC by RDMA READ$shm, in $secs s"
}

# ---- collectives ----------------------------------------------------------------

# test/ibmc/bcast_mcast.c passed; its counters line is the detail.
# Soft-RoCE takes no QP creation flag, so the netmod's request for the
# self-loopback block must have fallen back: no process has it, and roots
# counted their own packets coming back (and dropped them).
check_bcast_mcast() {
    show='FAIL|rror'
    [ "$rc" = 0 ] && grep -q "bcast_mcast: all checks passed" "$log" || return 1
    detail=$(grep -Eo 'counters as expected.*' "$log" | head -1)
    if [[ $(ibv_devices 2> /dev/null) == *rxe* ]] && [[ $detail != *"(fallback)"* ]] &&
        ! [[ $detail =~ \ [1-9][0-9]*\ echoes\ \(loopback\ blocked\ on\ 0\ of ]]; then
        why="on Soft-RoCE no process may block its loopback, and roots must count echoes"
        return 1
    fi
}

# test/ibmc/allgather_node.c passed; its per-call counters line is the detail
check_allgather() {
    show='FAIL|rror'
    [ "$rc" = 0 ] && grep -q "allgather_node: all checks passed" "$log" || return 1
    detail=$(grep -Eo '[0-9]+ nodes: .*' "$log" | head -1)
}

# MPI_Abort right after the first ibmc_node_rd call: the job fails and no
# segment file is left in /dev/shm
before_abort_clean() { rm -f /dev/shm/ibmc-* 2> /dev/null; }
check_abort_clean() {
    local left
    left=$(cd /dev/shm 2> /dev/null && compgen -G 'ibmc-*' | head -3 | xargs)
    show=- why="exit $rc, /dev/shm: $left"
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ -z "$left" ] || return 1
    detail="MPI_Abort (exit $rc): no segment file left in /dev/shm"
}

# ---- MPICH's test suite -----------------------------------------------------------

# suite_runtests CASE: MPICH's test/mpi, run by its runtests in each
# MAXNP:CLIQUES[:MINNP] layout of IBMC_MPICH_TESTLISTS, over IBMC_MPICH_DIRS
# (default: all built) at IBMC_MPICH_LEVEL (ci).  Every test counts as one
# check; failures are listed as "FAIL-MPICH: DIR/TEST np N".
suite_runtests() {
    local name=$1 dirs dirs_csv level spec np cl minnp d xml t0 t f lines log
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
        # a new file each time, never written through: the tree may be a
        # hard-linked copy of the cached one (maint/run-tests)
        for d in $dirs; do
            rm -f "$IBMC_MPICH_TESTS/$d/testlist"
            awk -v np="$np" -v minnp="$minnp" 'FILENAME == ARGV[1] { if (np <= $3) cap[$1 " " $2] = 1; next }
                /^[ \t]*(#|$)/ { next }
                { n = ($2 ~ /^[0-9]+$/) ? $2 + 0 : 1 }
                !(($1 " " $2) in cap) && n >= minnp' \
                "$IBMC_MPICH_TESTS/$d/testlist.capped" "$IBMC_MPICH_TESTS/$d/testlist.$level" \
                > "$IBMC_MPICH_TESTS/$d/testlist"
        done
        xml=$IBMC_OUT/mpich-np$np-cliques$cl.xml log=$IBMC_OUT/mpich-np$np-cliques$cl.log
        t0=$(date +%s)
        (cd "$IBMC_MPICH_TESTS" && PATH=$IBMC_OUT/nomake:$PATH MPIR_CVAR_NUM_CLIQUES=$cl MPITEST_TIMEOUT_MULTIPLIER=${IBMC_TIMEOUT_MULTIPLIER:-3} \
            perl runtests -srcdir=. -tests=testlist -testdirs="$dirs_csv" -maxnp="$np" -mpiexec="$IBMC_PREFIX/bin/mpiexec" \
            -xmlfile="$xml" > "$log" 2>&1)
        t=$(grep -c '<STATUS>' "$xml" 2>/dev/null); t=${t:-0}
        f=$(grep -c '<STATUS>fail' "$xml" 2>/dev/null); f=${f:-0}
        lines="at most $np ranks"; [ "$minnp" = 1 ] || lines="$minnp to $np ranks"
        echo "MPICH test/mpi, $level set ($dirs), $lines on $cl nodes: $((t - f)) of $t passed in $(($(date +%s) - t0)) s"
        if [ "$t" = 0 ]; then bad "$name: MPICH test suite ran no test at $np ranks on $cl nodes (see $log)"; fi
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
}
