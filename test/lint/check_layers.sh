#!/bin/bash
# test/lint/check_layers.sh: no call in ibmc goes upward (maint/layers.txt,
# maint/check-layers), read from the built objects.
#
#   test/lint/check_layers.sh BUILDDIR     the MPICH build directory (mpich-build):
#                                          checks its objects of the netmod
#                                          (src/mpid/ch4/netmod/ibmc, mcast/
#                                          included) and of src/mpi/coll/ibmc
#   test/lint/check_layers.sh OBJDIR...    any other directories, as given
#   test/lint/check_layers.sh --selftest   the check itself, on tiny objects
#                                          built here with gcc: it must fail
#                                          on an upward call, a same-layer
#                                          cycle, an object without a line, a
#                                          stale known-upward line, and pass
#                                          on a clean graph
#
# Prints check-layers' lines (one per offending edge) and its summary, or,
# with --selftest, one "ok: ..."/"FAIL: ..." line per case and "N passed, N
# failed"; exits 0 only when all is well.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
check=$top/maint/check-layers

if [ "${1:-}" != --selftest ]; then
    [ $# -ge 1 ] || { echo "usage: $0 BUILDDIR | OBJDIR... | --selftest" >&2; exit 2; }
    if [ $# -eq 1 ] && [ -d "$1/src/mpid/ch4/netmod/ibmc" ]; then
        # a build directory: its Makefile says which objects are built, so
        # that one left over from a removed file is not read
        mk=()
        [ ! -f "$1/Makefile" ] || mk=(--makefile "$1/Makefile")
        set -- "${mk[@]}" "$1/src/mpid/ch4/netmod/ibmc" "$1/src/mpi/coll/ibmc"
    fi
    exec python3 "$check" "$@"
fi

command -v gcc > /dev/null || { echo "FAIL: gcc is needed for the self-test"; exit 1; }
t=$(mktemp -d /tmp/check-layers-selftest.XXXXXX) || exit 2
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); sed 's/^/    /' "$t/out"; }

# cc DIR/NAME.o 'C code': one object, named the way the build names them
cc() { mkdir -p "$(dirname "$t/$1")"; printf '%s\n' "$2" > "$t/src.c"; gcc -c -O0 -o "$t/$1" "$t/src.c" || exit 2; }
# run NAME EXPECTED-STATUS LAYERS-FILE [REGEX]...: the check on $t/obj
# must exit with the status and print a line for every regex
run() {
    local name=$1 want=$2 map=$3 rc re; shift 3
    python3 "$check" --layers "$t/$map" --where "$t/obj" > "$t/out" 2>&1; rc=$?
    if [ "$rc" != "$want" ]; then bad "$name (exit $rc, expected $want)"; return; fi
    for re in "$@"; do
        grep -qE -- "$re" "$t/out" || { bad "$name (no line /$re/)"; return; }
    done
    ok "$name"
}
map() { # FILE KNOWN-UPWARD-LINES...: a map of the fake netmod
    local f=$1; shift
    {
        echo "layers:"
        echo "L0 pure"
        echo "L1 base"
        echo "L2 top"
        echo "L2.1 low-half"
        echo "L2.2 high-half"
        echo "objects:"
        echo "lo    L0   # a pure file"
        echo "mid   L1"
        echo "sub/deep   L1   # an object of a subdirectory"
        echo "hi    L2"
        echo "hia   L2.1"
        echo "hib   L2.2"
        echo "reentry:"
        echo "ext_progress  L2  @progress   # outside, but drives the top layer"
        echo "known-upward:"
        for l in "$@"; do echo "$l"; done
    } > "$t/$f"
}

# a clean graph: everything calls down, a libtool object in .libs/, one in
# a subdirectory, and a program's object that must be skipped; a table of
# function pointers (data relocations) in the top layer
base() {
    rm -rf "$t/obj"
    if [ -d "$t/base" ]; then cp -a "$t/base" "$t/obj"; return; fi
    cc obj/.libs/lib_libmpi_la-lo.o 'int lo_fn(int x) { return x + 1; }'
    cc obj/.libs/lib_libmpi_la-mid.o 'int lo_fn(int); int deep_fn(void); int mid_fn(int x) { return lo_fn(x) + deep_fn(); }'
    cc obj/sub/.libs/lib_libmpi_la-deep.o 'int lo_fn(int); int deep_fn(void) { return lo_fn(2); }'
    cc obj/.libs/lib_libmpi_la-hia.o 'int mid_fn(int); int hia_fn(void) { return mid_fn(1); }'
    cc obj/.libs/lib_libmpi_la-hib.o 'int hia_fn(void); int hib_fn(void) { return hia_fn(); }'
    cc obj/.libs/lib_libmpi_la-hi.o 'int hib_fn(void); int mid_fn(int); int ext_progress(void);
int hi_fn(void) { return hib_fn() + mid_fn(3) + ext_progress(); }
int (*const hi_table[])(void) = { hib_fn };'
    cc obj/tools_prog-lo.o 'int lo_fn(int x) { return x; } int hi_fn(void) { return 0; }'
    cp -a "$t/obj" "$t/base"
}

base
map clean.txt
run "a clean graph passes" 0 clean.txt '^ok$' 'check-layers: 6 objects \(1 of other targets skipped\)' \
    'check-layers: 0 known upward edges left'

# lo (L0) calls hi (L2): upward
cc obj/.libs/lib_libmpi_la-lo.o 'int hi_fn(void); int lo_fn(int x) { return x + hi_fn(); }'
run "an upward call fails" 1 clean.txt '^UPWARD lo \(L0\) -> hi \(L2\): hi_fn  \[in lo_fn\]$' \
    'FAIL: 1 problems'
map listed.txt 'lo -> hi: hi_fn   # fault-1 lo waits for hi'
run "the same call, listed in known-upward, passes" 0 listed.txt '^ok$' \
    'check-layers: 1 known upward edges left'
map noreason.txt 'lo -> hi: hi_fn'
run "a known-upward line without its reason fails" 1 noreason.txt '^BADLINE .*needs its reason'

# a known-upward line for an edge that is gone: stale
base
run "the listed call removed: its line is stale" 1 listed.txt \
    '^STALE .*listed.txt:[0-9]+: lo -> hi: hi_fn: the edge no longer exists \(delete the line\)'
# hi_fn moved from hi to mid: the listed edge lo -> hi is gone, and
# lo -> mid is a new upward edge
cc obj/.libs/lib_libmpi_la-hi.o 'int hib_fn(void); int hi_other(void) { return hib_fn(); }'
cc obj/.libs/lib_libmpi_la-mid.o 'int lo_fn(int); int deep_fn(void); int mid_fn(int x) { return lo_fn(x) + deep_fn(); } int hi_fn(void) { return 0; }'
cc obj/.libs/lib_libmpi_la-lo.o 'int hi_fn(void); int lo_fn(int x) { return x + hi_fn(); }'
run "a listed symbol that moved: stale line and a new upward edge" 1 listed.txt \
    '^STALE .*lo -> hi: hi_fn: the edge no longer exists; hi_fn is now in mid' \
    '^UPWARD lo \(L0\) -> mid \(L1\): hi_fn'

# a listed edge that is now downward (its callee's file moved down)
base
cc obj/.libs/lib_libmpi_la-hia.o 'int mid_fn(int); int hib_fn(void); int hia_fn(void) { return mid_fn(1) + hib_fn(); }'
run "a call up the sub-layers of one layer fails" 1 clean.txt '^UPWARD hia \(L2.1\) -> hib \(L2.2\): hib_fn'
map hia.txt 'hia -> hib: hib_fn   # listed'
sed -E 's/^hia +L2.1$/hia L2.2/; s/^hib +L2.2$/hib L2.1/' "$t/hia.txt" > "$t/swapped.txt"
cc obj/.libs/lib_libmpi_la-hib.o 'int hib_fn(void) { return 0; }'
run "a listed edge that no longer goes up is stale" 1 swapped.txt '^STALE .*hia -> hib: hib_fn: no longer upward nor on a cycle'

# same layer: mid and sub/deep call each other
base
cc obj/sub/.libs/lib_libmpi_la-deep.o 'int lo_fn(int); int mid_fn(int); int deep_fn(void) { return lo_fn(2) + mid_fn(0); }'
run "a cycle between two files of one layer fails" 1 clean.txt \
    '^CYCLE mid \(L1\) -> sub/deep \(L1\): deep_fn  \[cycle: mid sub/deep\]' \
    '^CYCLE sub/deep \(L1\) -> mid \(L1\): mid_fn'
map cycle.txt 'mid -> sub/deep: deep_fn   # pair' 'sub/deep -> mid: mid_fn   # pair'
run "the cycle, listed, passes" 0 cycle.txt '^ok$' 'check-layers: 2 known upward edges left'
cc obj/sub/.libs/lib_libmpi_la-deep.o 'int lo_fn(int); int deep_fn(void) { return lo_fn(2); }'
run "one direction of the cycle removed: the other's line is stale" 1 cycle.txt \
    '^STALE .*mid -> sub/deep: deep_fn: no longer upward nor on a cycle' \
    '^STALE .*sub/deep -> mid: mid_fn: the edge no longer exists'

# an object without a line; a line without an object
base
cc obj/.libs/lib_libmpi_la-newfile.o 'int lo_fn(int); int new_fn(void) { return lo_fn(0); }'
run "an object without a line in the map fails" 1 clean.txt '^MISSING newfile: .*lib_libmpi_la-newfile.o has no line'
base
rm "$t/obj/.libs/lib_libmpi_la-hib.o"
cc obj/.libs/lib_libmpi_la-hi.o 'int mid_fn(int); int hi_fn(void) { return mid_fn(3); }'
run "a line in the map without an object fails" 1 clean.txt '^GONE hib: no object'

# outside symbols placed in a layer: a low file that drives progress
base
cc obj/.libs/lib_libmpi_la-mid.o 'int lo_fn(int); int deep_fn(void); int ext_progress(void);
int mid_fn(int x) { while (ext_progress()) ; return lo_fn(x) + deep_fn(); }'
run "a call from below into progress (reentry) fails" 1 clean.txt '^UPWARD mid \(L1\) -> @progress \(L2\): ext_progress  \[in mid_fn\]'

# a data reference counts too: a low table of pointers to high functions
base
cc obj/.libs/lib_libmpi_la-lo.o 'int lo_fn(int x) { return x + 1; } int hi_fn(void);
int (*const lo_ops[])(void) = { hi_fn };'
run "a table of pointers to a higher layer fails" 1 clean.txt '^UPWARD lo \(L0\) -> hi \(L2\): hi_fn  \[in lo_ops\]'

# a static and a shared copy of one file (x.o beside .libs/x.o) are one
# object; a subdirectory folded into the name (sub_deep) is found too
base
cp "$t/obj/.libs/lib_libmpi_la-lo.o" "$t/obj/lib_libmpi_la-lo.o"
mv "$t/obj/sub/.libs/lib_libmpi_la-deep.o" "$t/obj/lib_libmpi_la-sub_deep.o"
run "static and shared copies, and a folded subdirectory name" 0 clean.txt '^ok$' \
    'check-layers: 6 objects \(1 of other targets skipped\)'

# a build directory's Makefile says which objects are built: one left over
# from a removed file is skipped
base
cc obj/.libs/lib_libmpi_la-removed.o 'int hi_fn(void); int removed_fn(void) { return hi_fn(); }'
printf 'am_objs = obj/lib_libmpi_la-lo.lo obj/lib_libmpi_la-mid.lo \\\n obj/sub/lib_libmpi_la-deep.lo obj/lib_libmpi_la-hi.lo\nx = obj/lib_libmpi_la-hia.lo obj/lib_libmpi_la-hib.lo\n' > "$t/Makefile"
rc=0; python3 "$check" --layers "$t/clean.txt" --makefile "$t/Makefile" "$t/obj" > "$t/out" 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q '^note: skipped .*lib_libmpi_la-removed.o' "$t/out"; then
    ok "an object the Makefile does not build is skipped"
else bad "an object the Makefile does not build is skipped"; fi
rc=0; python3 "$check" --layers "$t/clean.txt" "$t/obj" > "$t/out" 2>&1 || rc=$?
if [ "$rc" = 1 ] && grep -q '^MISSING removed' "$t/out"; then
    ok "... and read without the Makefile"
else bad "... and read without the Makefile"; fi

# nothing to check is not a pass
rm -rf "$t/obj"; mkdir -p "$t/obj"
run "a directory without objects fails" 2 clean.txt 'no lib_libmpi_la objects'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
