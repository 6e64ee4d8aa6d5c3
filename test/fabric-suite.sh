#!/bin/bash
# Tests that need RDMA verbs: run on a host with an HCA, or inside the test VM
# (test/vm/run-fabric).  The cases are the lines of test/fabric/cases.txt
# (what each column means is written at its top); the checkers and the
# special launches they name are shell functions in test/fabric/checks.sh.
# Prints one "ok: NAME: detail" or "FAIL: NAME: detail (see LOG)" line per
# check and ends with "N passed, N failed"; exits 0 only when none failed.
#
# Env: IBMC_PREFIX  installed MPICH with ch4:ibmc
#      IBMC_BIN     directory with the compiled test/ibmc programs
#      IBMC_OUT     directory for logs (one per case, NAME.log with / as -)
#      IBMC_INTRA_VIA_NETMOD=1  the build has no shared-memory module: the
#                   cases that need it (NEEDS shm) are left out
#      IBMC_MPICH_TESTS  a built MPICH test/mpi tree (optional; the cases
#                   that need it, NEEDS mpich, are left out without it)
#      IBMC_MPICH_TESTLISTS  MAXNP:CLIQUES[:MINNP] configurations to run it in,
#                   e.g. "4:2 8:4:5"; MINNP leaves out the test lines of fewer ranks
#      IBMC_MPICH_DIRS  directories (default: all built), IBMC_MPICH_LEVEL ci|full
#      IBMC_MPICH_ONLY=1  run only MPICH's test suite (area mpich)
#      IBMC_MCAST_ONLY=1  run only the multicast broadcast, allgather,
#                   allreduce and barrier checks (areas bcast, allgather,
#                   allreduce and barrier)
#      IBMC_JOB_TIMEOUT  seconds a job of TIME "job" may take (300)
#      IBMC_TIMEOUT_MULTIPLIER  MPITEST_TIMEOUT_MULTIPLIER for MPICH's runtests (3)
#      IBMC_CASES=REGEX  run only the cases whose name matches the extended
#                   regular expression (an area: IBMC_CASES=^rndv/; one case:
#                   IBMC_CASES='^errors/bad-port$'); a follow-on check
#                   (log:CASE) brings the case whose log it reads
#      IBMC_DRY_RUN=1  print the table lines of the cases that would run, one
#                   per line, and exit 0 (nothing runs; IBMC_PREFIX, IBMC_BIN
#                   and IBMC_OUT may be unset)
#      IBMC_TABLE   the table (default test/fabric/cases.txt)
set -u
testdir=$(cd "$(dirname "$0")" && pwd)
table=${IBMC_TABLE:-$testdir/fabric/cases.txt}
dry=${IBMC_DRY_RUN:-0}; [ "$dry" = 0 ] && dry=
intra=${IBMC_INTRA_VIA_NETMOD:+--intranode-via-netmod}
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
die() { echo "fabric-suite: $*" >&2; exit 2; }

if [ -n "$dry" ]; then
    # the table may name these; a listing needs none of them
    : "${IBMC_PREFIX=\$IBMC_PREFIX}" "${IBMC_BIN=\$IBMC_BIN}" "${IBMC_OUT=\$IBMC_OUT}"
else
    : "${IBMC_PREFIX:?set IBMC_PREFIX}" "${IBMC_BIN:?set IBMC_BIN}" "${IBMC_OUT:?set IBMC_OUT}"
fi
# shellcheck source=fabric/checks.sh
. "$testdir/fabric/checks.sh"

# ---- read and check the table ------------------------------------------------
# Per case: its columns, the rest of its line (CHECK and the command, split
# like a shell command line when it runs) and the line itself.
names=() needs=() nps=() nodes=() times=() rests=() lines=() srcs=()
declare -A index=() logname=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    where="$table:$lineno"
    read -r name need np nd tm rest <<< "$line"
    [ -n "${rest:-}" ] || die "$where: want NAME NEEDS NP NODES TIME CHECK COMMAND"
    [[ $name =~ ^[a-z]+/[A-Za-z0-9._,=+/-]+$ ]] || die "$where: bad name '$name' (AREA/CASE)"
    [ -z "${index[$name]:-}" ] || die "$where: case $name is already on line ${index[$name]%%:*}"
    [[ $need =~ ^(-|(shm|mpich|mem=[0-9]+G)(,(shm|mpich|mem=[0-9]+G))*)$ ]] ||
        die "$where: NEEDS is - or a list of shm, mpich, mem=NG, not '$need'"
    [[ $np =~ ^(-|[0-9]+)$ ]] || die "$where: NP is a number or -, not '$np'"
    [[ $nd =~ ^(-|own|[0-9]+)$ ]] || die "$where: NODES is a number, own or -, not '$nd'"
    [[ $tm =~ ^(-|job|[0-9]+)$ ]] || die "$where: TIME is seconds, job or -, not '$tm'"
    # split in a subshell first, so that a bad quote or an unset variable
    # names its line instead of ending the suite
    ( eval "w=($rest"$'\n'")" ) 2> /dev/null || die "$where: cannot split: $rest"
    eval "w=($rest"$'\n'")"
    check=${w[0]} cmd=("${w[@]:1}") src=
    ((${#cmd[@]})) || die "$where: no command"
    if [ "$check" = suite ]; then
        declare -F "suite_${cmd[0]}" > /dev/null || die "$where: no function suite_${cmd[0]} in checks.sh"
    else
        declare -F "check_${check%%:*}" > /dev/null || die "$where: no checker check_${check%%:*} in checks.sh"
    fi
    if [[ ${cmd[0]} == log:* ]]; then
        src=${cmd[0]#log:}
        ((${#cmd[@]} == 1)) || die "$where: log:CASE is the whole command"
        [ -n "${index[$src]:-}" ] || die "$where: log:$src names no earlier case"
        [ "$np" = - ] || die "$where: a follow-on check (log:CASE) runs no job: NP -"
    else
        for word in "${cmd[@]}"; do
            if [[ $word == mpich:* || $word == mpich-path:* ]] && [[ ,$need, != *,mpich,* ]]; then
                die "$where: $word needs IBMC_MPICH_TESTS: NEEDS mpich"
            fi
            [[ $word == @* ]] || continue
            [ "$np" != - ] || die "$where: $word wraps the ranks of a job: NP must be a number"
            declare -F "wrap_${word#@}" > /dev/null || die "$where: no function wrap_${word#@} in checks.sh"
        done
        lf=${name//\//-}
        [ -z "${logname[$lf]:-}" ] || die "$where: log $lf.log is also case ${logname[$lf]}'s"
        logname[$lf]=$name
    fi
    index[$name]=$lineno:${#names[@]}
    names+=("$name") needs+=("$need") nps+=("$np") nodes+=("$nd") times+=("$tm")
    rests+=("$rest") lines+=("$line") srcs+=("$src")
done < "$table" || die "cannot read $table"
((${#names[@]})) || die "$table has no case"

# ---- which cases run ----------------------------------------------------------
# the area is the name up to its first /
wanted() { # I: the filters of the environment, the static needs
    local area=${names[$1]%%/*} n
    if [ -n "${IBMC_MPICH_ONLY:-}" ] && [ "$area" != mpich ]; then return 1; fi
    if [ -n "${IBMC_MCAST_ONLY:-}" ] && [ "$area" != bcast ] && [ "$area" != allgather ] &&
        [ "$area" != allreduce ] && [ "$area" != barrier ]; then return 1; fi
    for n in ${needs[$1]//,/ }; do
        case $n in
            shm) [ -z "$intra" ] || return 1 ;;
            mpich) [ -n "${IBMC_MPICH_TESTS:-}" ] || return 1 ;;
        esac
    done
    return 0
}
selected=()
for i in "${!names[@]}"; do
    selected[i]=
    wanted "$i" || continue
    if [ -n "${IBMC_CASES:-}" ]; then
        [[ ${names[i]} =~ $IBMC_CASES ]]; st=$?
        [ $st != 2 ] || die "IBMC_CASES='$IBMC_CASES' is not an extended regular expression"
        [ $st = 0 ] || continue
    fi
    selected[i]=1
done
# a follow-on check runs only with the case whose log it reads, and brings it
for i in "${!names[@]}"; do
    [ -n "${selected[i]}" ] && [ -n "${srcs[i]}" ] || continue
    s=${index[${srcs[i]}]#*:}
    if wanted "$s"; then selected[s]=1; else selected[i]=; fi
done

if [ -n "$dry" ]; then
    for i in "${!names[@]}"; do
        [ -z "${selected[i]}" ] || printf '%s\n' "$(sed 's/[[:space:]]*$//' <<< "${lines[i]}")"
    done
    exit 0
fi

# ---- run ----------------------------------------------------------------------
export PATH=$IBMC_PREFIX/bin:$PATH
mkdir -p "$IBMC_OUT"
declare -A logs=() rcs=()

# run_case I: runs case I's job (if any), its checker, and prints its line.
# The checker sees log, rc, secs, np, prog (the program's name), args (its
# arguments) and exe; it sets detail (what an ok line says), why (what a
# FAIL line says; default the job's exit status), show/shown (the log lines
# a FAIL shows) and note (lines printed after the result).
# shellcheck disable=SC2034 # secs, args, mpiargs...: for the checkers and wrappers
run_case() {
    local i=$1 name=${names[$1]} np=${nps[$1]} nd=${nodes[$1]} tm=${times[$1]}
    local w check cname carg envs=() mopts=() wrap='' prog='' exe='' dir='' args=() mpiargs=()
    local log rc=0 secs=0 t0 limit='' detail='' why='' show='' shown=5 note='' n memkb
    eval "w=(${rests[i]}"$'\n'")"
    check=${w[0]}; w=("${w[@]:1}")
    if [ "$check" = suite ]; then "suite_${w[0]}" "$name" "${w[@]:1}"; return; fi
    cname=${check%%:*} carg=
    [[ $check == *:* ]] && carg=${check#*:}
    if [ -n "${srcs[i]}" ]; then
        if [ -z "${logs[${srcs[i]}]:-}" ]; then bad "$name: ${srcs[i]}, whose log it reads, did not run"; return; fi
        log=${logs[${srcs[i]}]} rc=${rcs[${srcs[i]}]}
    else
        log=$IBMC_OUT/${name//\//-}.log
        while ((${#w[@]})) && [[ ${w[0]} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do envs+=("${w[0]}"); w=("${w[@]:1}"); done
        if [ "$np" != - ]; then
            while ((${#w[@]})) && [[ ${w[0]} == -* ]]; do mopts+=("${w[0]}"); w=("${w[@]:1}"); done
            if [[ ${w[0]:-} == @* ]]; then wrap=${w[0]#@}; w=("${w[@]:1}"); fi
        fi
        prog=${w[0]:-} args=("${w[@]:1}")
        case $prog in
            mpich:*/*) dir=$IBMC_MPICH_TESTS/${prog#mpich:}; dir=${dir%/*}; exe=./${prog##*/} ;;
            mpich-path:*/*) exe=$IBMC_MPICH_TESTS/${prog#mpich-path:} ;;
            */*) exe=$prog ;;
            *) exe=$IBMC_BIN/$prog ;;
        esac
        # an MPICH program that is not there is a failed build, not a reason to skip
        if [[ $prog == mpich* ]] && [ ! -x "${dir:+$dir/}$exe" ]; then
            echo "fabric-suite: ${dir:+$dir/}$exe was not built" > "$log"
            bad "$name: MPICH ${prog#*:} was not built (see $log)"; return
        fi
        prog=${prog##*/}
        for n in ${needs[i]//,/ }; do
            [[ $n == mem=* ]] || continue
            memkb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
            n=${n#mem=}; n=${n%G}
            if [ "$memkb" -lt $((n * 1024 * 1024)) ]; then
                echo "note: $name not run: $((memkb / 1024)) MiB of RAM, it needs $n GiB"; return
            fi
        done
        case $nd in
            own) envs=(MPIR_CVAR_NOLOCAL=1 "${envs[@]}") ;;
            -) ;;
            *) envs=("MPIR_CVAR_NUM_CLIQUES=$nd" "${envs[@]}") ;;
        esac
        local run=("$exe" "${args[@]}")
        if [ "$np" != - ]; then
            mpiargs=(-n "$np" "$exe" "${args[@]}")
            [ -z "$wrap" ] || "wrap_$wrap"
            run=(mpiexec "${mopts[@]}" "${mpiargs[@]}")
        fi
        case $tm in
            -) limit='' ;;
            job) limit=${IBMC_JOB_TIMEOUT:-300} ;;
            *) limit=$tm ;;
        esac
        [ -z "$limit" ] || run=(timeout -k 5 "$limit" "${run[@]}")
        ! declare -F "before_$cname" > /dev/null || "before_$cname"
        t0=$(date +%s)
        ( if [ -n "$dir" ]; then cd "$dir" || exit; fi; exec env "${envs[@]}" "${run[@]}" ) > "$log" 2>&1
        rc=$? secs=$(( $(date +%s) - t0 ))
        logs[$name]=$log rcs[$name]=$rc
        case $rc in
            0) why="exit status 0, but the log lacks what check_$cname requires" ;;
            124) why="exit status 124${limit:+: the time limit of $limit s ended it}" ;;
            *) why="exit status $rc" ;;
        esac
    fi
    if "check_$cname" "$carg"; then
        ok "$name${detail:+: $detail}"
    else
        bad "$name${why:+: $why} (see $log)"
        if [ "$show" = - ]; then :
        elif [ -n "$show" ]; then grep -E "$show" "$log" | head -"$shown"
        else
            # a program's own verdict first: MPI_Finalize's statistics come
            # after it and would hide it from the tail
            grep -E 'FAIL|Fatal error|Assertion' "$log" | head -5
            tail -5 "$log"
        fi | sed 's/^/  /'
    fi
    [ -z "$note" ] || printf '%s\n' "$note"
}

echo "fabric-suite: $(ibv_devices 2>/dev/null | awk 'NR>2{print $1}' | xargs) on $(uname -r)"
# every case's wall time, checker included, in $IBMC_OUT/case-times.txt;
# the slowest are printed at the end: they are what CI's time is made of
: > "$IBMC_OUT/case-times.txt"
for i in "${!names[@]}"; do
    [ -n "${selected[i]}" ] || continue
    t_case=$(date +%s)
    run_case "$i"
    echo "$(($(date +%s) - t_case)) ${names[i]}" >> "$IBMC_OUT/case-times.txt"
done
sort -rn "$IBMC_OUT/case-times.txt" | head -10 | awk '{printf "fabric-suite: slowest: %5d s  %s\n", $1, $2}'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
