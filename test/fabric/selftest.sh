#!/bin/bash
# test/fabric/selftest.sh: a host test of the fabric suite's driver
# (test/fabric-suite.sh), no MPI and no RDMA needed, a few seconds.
#
# It runs the driver on a table of its own whose programs are small shell
# scripts, with a fake mpiexec first in PATH (it runs the program once, with
# FAKE_NP set), and checks the ok/FAIL lines and the count, the exit status,
# the logs, IBMC_CASES, IBMC_DRY_RUN, the NEEDS and area filters, the
# follow-on checks (log:CASE), a time limit, a missing MPICH program, and
# that a broken table stops the suite before any case.  Last, the real table
# test/fabric/cases.txt must list in a dry run.
#
# Prints one "ok: ..." or "FAIL: ..." line per check and "N passed, N failed";
# exits 0 only when all passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
suite=$here/../fabric-suite.sh
t=$(mktemp -d /tmp/fabric-selftest.XXXXXX) || exit 2
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
expect() { # name, command...: a check that the command succeeds
    local name=$1; shift
    if "$@"; then ok "$name"; else bad "$name"; fi
}
has() { grep -qxF -- "$2" "$1"; }           # FILE LINE: the file has exactly that line
hasre() { grep -qE -- "$2" "$1"; }          # FILE REGEX
lacks() { ! grep -qE -- "$2" "$1"; }        # FILE REGEX: no line matches

mkdir -p "$t/prefix/bin" "$t/bin" "$t/mpitests/coll"
fake() { printf '#!/bin/bash\n%s\n' "$2" > "$1"; chmod +x "$1"; }
# mpiexec [OPTIONS] -n N PROG ARGS [: ...]: runs PROG once
fake "$t/prefix/bin/mpiexec" '
while [ $# -gt 0 ] && [ "$1" != -n ]; do shift; done
np=$2; shift 2
a=(); for w in "$@"; do [ "$w" = : ] && break; a+=("$w"); done
FAKE_NP=$np PMI_RANK=0 exec "${a[@]}"'
fake "$t/bin/exchange" 'echo "exchange: cliques=${MPIR_CVAR_NUM_CLIQUES:-} nolocal=${MPIR_CVAR_NOLOCAL:-} np=$FAKE_NP args=$* stats=${MPIR_CVAR_IBMC_STATS:-}"
echo "exchange: $FAKE_NP ranks: all bytes verified"'
fake "$t/bin/broken" 'echo "broken: FAIL: byte 7 is wrong"; exit 3'
fake "$t/bin/hello" 'if [ -n "${MPIR_CVAR_IBMC_PORT:-}" ]; then echo "no device has an active port $MPIR_CVAR_IBMC_PORT" >&2; exit 1; fi
echo "hello from $FAKE_NP"'
fake "$t/bin/sleeper" 'exec sleep 30'
fake "$t/bin/dier" 'echo "rank 1 died"; exit 1'
fake "$t/mpitests/coll/fine" 'echo "in $PWD"; echo " No Errors"'

cat > "$t/cases.txt" <<'EOF'
# a table for the self-test
demo/exchange-2x2      -      2   2    job  verified    MPIR_CVAR_IBMC_STATS=1 exchange 123
demo/exchange-2x2/env  -      -   -    -    log_has:'cliques=2 nolocal= np=2 args=123 stats=1'  log:demo/exchange-2x2
demo/own               -      3   own  job  says:'nolocal=1 np=3'  exchange   # a trailing comment
demo/broken            -      2   2    job  verified    broken
demo/error-ok          -      1   -    10   error:'no device has an active port [0-9]+'  MPIR_CVAR_IBMC_PORT=7 hello
demo/error-succeeds    -      1   -    10   error:'no device'  hello
demo/time-limit        -      1   -    1    says:never  sleeper
demo/shm-only          shm    1   -    job  says:'hello from 1'  hello
demo/wrapped           -      2   2    job  ended:'rank 1 died'  -disable-auto-cleanup @shell_stays dier
other/mpich            mpich  2   2    job  says:'No Errors'  mpich:coll/fine
other/mpich-missing    mpich  2   2    job  says:'No Errors'  mpich:coll/missing
bcast/hello            -      1   -    job  says:'hello from'  hello
EOF

run() { # OUTNAME ENV...: the driver on the self-test table; output in $t/OUTNAME, status in $t/OUTNAME.rc
    local o=$1; shift
    env -u IBMC_CASES -u IBMC_DRY_RUN -u IBMC_INTRA_VIA_NETMOD -u IBMC_MCAST_ONLY -u IBMC_MPICH_ONLY \
        -u IBMC_MPICH_TESTS -u IBMC_JOB_TIMEOUT \
        IBMC_TABLE="$t/cases.txt" IBMC_PREFIX="$t/prefix" IBMC_BIN="$t/bin" IBMC_OUT="$t/out-$o" \
        IBMC_MPICH_TESTS="$t/mpitests" "$@" bash "$suite" > "$t/$o" 2> "$t/$o.err"
    echo $? > "$t/$o.rc"
}
names() { awk '{print $1}' "$t/$1" | xargs; }

# ---- a whole run -------------------------------------------------------------
run all
L=$t/out-all
expect "whole run: the count line" has "$t/all" "8 passed, 4 failed"
expect "whole run: exit status 1 when a case failed" [ "$(cat "$t/all.rc")" = 1 ]
expect "whole run: 12 ok/FAIL lines, in table order" \
    [ "$(grep -E '^(ok|FAIL): ' "$t/all" | sed -E 's/^(ok|FAIL): ([^ :]+).*/\2/' | xargs)" = \
      "demo/exchange-2x2 demo/exchange-2x2/env demo/own demo/broken demo/error-ok demo/error-succeeds demo/time-limit demo/shm-only demo/wrapped other/mpich other/mpich-missing bcast/hello" ]
expect "verified: detail is the program's line" has "$t/all" "ok: demo/exchange-2x2: exchange: 2 ranks: all bytes verified"
expect "NODES, NP, the environment and the arguments reach the program; a follow-on reads its log" \
    has "$t/all" "ok: demo/exchange-2x2/env: cliques=2 nolocal= np=2 args=123 stats=1"
expect "NODES own sets MPIR_CVAR_NOLOCAL=1; a trailing comment is no argument" \
    has "$t/all" "ok: demo/own: nolocal=1 np=3 args= stats="
expect "a failing program: FAIL with its exit status and log" \
    has "$t/all" "FAIL: demo/broken: exit status 3 (see $L/demo-broken.log)"
expect "a FAIL shows the log's last lines, indented" has "$t/all" "  broken: FAIL: byte 7 is wrong"
expect "the log holds the program's output" has "$L/demo-broken.log" "broken: FAIL: byte 7 is wrong"
expect "error: the matching message is the detail" has "$t/all" "ok: demo/error-ok: no device has an active port 7"
expect "error: a job that succeeds fails" \
    has "$t/all" "FAIL: demo/error-succeeds: the job succeeded (see $L/demo-error-succeeds.log)"
expect "TIME: the limit ends the job (exit 124)" \
    hasre "$t/all" "^FAIL: demo/time-limit: exit status 124: the time limit of 1 s ended it \(see "
expect "@shell_stays: the rank's shell reports its exit" hasre "$L/demo-wrapped.log" '^dier: rank 0 exited with 1$'
expect "ended: detail" hasre "$t/all" "^ok: demo/wrapped: the job ended after [0-9]+s with: rank 1 died$"
expect "mpich:DIR/PROG runs ./PROG in its directory" has "$L/other-mpich.log" "in $t/mpitests/coll"
expect "an MPICH program not built is a FAIL" \
    has "$t/all" "FAIL: other/mpich-missing: MPICH coll/missing was not built (see $L/other-mpich-missing.log)"
expect "one log per job, none for a follow-on" [ "$(find "$L" -name '*.log' | wc -l)" = 11 ]
expect "the header line comes first" hasre <(head -1 "$t/all") '^fabric-suite: .* on '

run pass IBMC_CASES='^demo/(exchange|own|error-ok)'
expect "IBMC_CASES: only the matching cases run" [ "$(grep -v '^fabric-suite: slowest: ' "$t/pass" | awk '{print $1}' | xargs)" = "fabric-suite: ok: ok: ok: ok: 4" ]
timed() { # each case's time is in case-times.txt, and the slowest are printed
    [ "$(awk '{print $2}' "$t/out-pass/case-times.txt" | xargs)" = \
      "demo/exchange-2x2 demo/exchange-2x2/env demo/own demo/error-ok" ] &&
        [ "$(grep -Ec '^fabric-suite: slowest: +[0-9]+ s  demo/' "$t/pass")" = 4 ]
}
expect "each case's time is recorded, and the slowest printed before the count" timed
expect "IBMC_CASES: all passed" [ "$(tail -1 "$t/pass")" = "4 passed, 0 failed" ]
expect "all passed: exit status 0" [ "$(cat "$t/pass.rc")" = 0 ]
run one IBMC_CASES='/env$'
expect "IBMC_CASES: a follow-on check brings the case whose log it reads" \
    [ "$(grep -E '^(ok|FAIL): ' "$t/one" | cut -d' ' -f2 | xargs)" = "demo/exchange-2x2: demo/exchange-2x2/env:" ]
run none IBMC_CASES='^nothing$'
expect "IBMC_CASES matching nothing: 0 passed, 0 failed" has "$t/none" "0 passed, 0 failed"
expect "IBMC_CASES matching nothing: exit status 0" [ "$(cat "$t/none.rc")" = 0 ]
run badre IBMC_CASES='('
expect "IBMC_CASES not a regex: exit status 2" [ "$(cat "$t/badre.rc")" = 2 ]
expect "IBMC_CASES not a regex: no count line" lacks "$t/badre" ' passed, '

# ---- dry runs and filters ------------------------------------------------------
dry() { # OUTNAME ENV...: a dry run without IBMC_PREFIX, IBMC_BIN, IBMC_OUT
    local o=$1; shift
    env -u IBMC_PREFIX -u IBMC_BIN -u IBMC_OUT -u IBMC_CASES -u IBMC_INTRA_VIA_NETMOD -u IBMC_MCAST_ONLY \
        -u IBMC_MPICH_ONLY -u IBMC_MPICH_TESTS IBMC_TABLE="$t/cases.txt" IBMC_DRY_RUN=1 "$@" \
        bash "$suite" > "$t/$o" 2> "$t/$o.err"
    echo $? > "$t/$o.rc"
}
before=$(ls -A "$t" | wc -l)
dry d1 IBMC_MPICH_TESTS=/nowhere
expect "dry run: exit status 0" [ "$(cat "$t/d1.rc")" = 0 ]
expect "dry run: every case's table line, as written" \
    [ "$(grep -v '^#' "$t/cases.txt" | sed 's/[[:space:]]*$//')" = "$(cat "$t/d1")" ]
expect "dry run: nothing runs, no log directory" [ "$(ls -A "$t" | wc -l)" = $((before + 3)) ]  # d1, d1.err, d1.rc
dry d2
expect "NEEDS mpich: left out without IBMC_MPICH_TESTS" [ "$(names d2 | wc -w)" = 10 ]
expect "NEEDS mpich: the two of them" lacks "$t/d2" '^other/'
dry d3 IBMC_INTRA_VIA_NETMOD=1
expect "NEEDS shm: left out with IBMC_INTRA_VIA_NETMOD" [ "$(names d3 | wc -w)" = 9 ]
expect "NEEDS shm: that one" lacks "$t/d3" '^demo/shm-only'
dry d4 IBMC_MCAST_ONLY=1 IBMC_MPICH_TESTS=/nowhere
expect "IBMC_MCAST_ONLY: areas bcast, allgather, allreduce and barrier only" [ "$(names d4)" = "bcast/hello" ]
dry d5 IBMC_MPICH_ONLY=1 IBMC_MPICH_TESTS=/nowhere
expect "IBMC_MPICH_ONLY: area mpich only (none here)" [ ! -s "$t/d5" ]
dry d6 IBMC_CASES=mpich IBMC_MPICH_TESTS=/nowhere
expect "dry run with IBMC_CASES" [ "$(names d6)" = "other/mpich other/mpich-missing" ]

# ---- a broken table stops the suite -------------------------------------------
broken() { # NAME LINE MESSAGE-REGEX
    printf '%s\n' "$2" > "$t/bad.txt"
    env -u IBMC_CASES IBMC_TABLE="$t/bad.txt" IBMC_PREFIX="$t/prefix" IBMC_BIN="$t/bin" \
        IBMC_OUT="$t/out-bad" bash "$suite" > "$t/bad.out" 2> "$t/bad.err"
    local rc=$?
    if [ $rc = 2 ] && grep -Eq "$3" "$t/bad.err" && ! grep -q ' passed, ' "$t/bad.out"; then ok "broken table: $1"
    else bad "broken table: $1 (exit $rc: $(cat "$t/bad.err"))"; fi
}
broken "NP not a number" 'a/b - x 2 job verified exchange' 'NP is a number'
broken "unknown checker" 'a/b - 2 2 job nosuch exchange' 'no checker check_nosuch'
broken "unknown wrapper" 'a/b - 2 2 job verified @nosuch exchange' 'no function wrap_nosuch'
broken "unbalanced quote" "a/b - 2 2 job error:'x exchange" 'cannot split'
broken "duplicate name" $'a/b - 2 2 job verified exchange\na/b - 2 2 job verified exchange' 'already on line 1'
broken "follow-on of no case" 'a/c - - - - log_has:x log:a/b' 'names no earlier case'
broken "mpich program without NEEDS mpich" 'a/b - 2 2 job verified mpich:coll/x' 'NEEDS mpich'

# ---- the real table -----------------------------------------------------------
env -u IBMC_PREFIX -u IBMC_BIN -u IBMC_OUT -u IBMC_CASES -u IBMC_INTRA_VIA_NETMOD -u IBMC_MCAST_ONLY \
    -u IBMC_MPICH_ONLY -u IBMC_TABLE IBMC_MPICH_TESTS=/nowhere IBMC_DRY_RUN=1 bash "$suite" > "$t/real" 2> "$t/real.err"
rc=$?
want=$(grep -cEv '^[[:space:]]*(#|$)' "$here/cases.txt")
if [ $rc = 0 ] && [ "$(wc -l < "$t/real")" = "$want" ]; then ok "test/fabric/cases.txt: all $want cases list in a dry run"
else bad "test/fabric/cases.txt: dry run exit $rc, $(wc -l < "$t/real") of $want cases: $(cat "$t/real.err")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
