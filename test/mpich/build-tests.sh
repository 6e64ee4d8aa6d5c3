#!/bin/bash
# test/mpich/build-tests.sh PREFIX DIR
# Configure MPICH's own test suite (mpich/test/mpi) against the installed
# PREFIX in DIR and compile the directories ibmc is tested with, on the host
# (compiling inside the emulated test VM would be ten times slower).  Then
# write DIR/ibmc-testlist naming those directories, with the tests listed in
# test/mpich/exclude.txt removed from their testlists.
set -euo pipefail
prefix=$1 dir=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/test/mpich
dirs=$(grep -v '^#' "$here/dirs.txt" | xargs)
stamp=$dir/.ibmc-built
want="$prefix $(sha256sum "$here/dirs.txt" "$here/exclude.txt" "$0" | sha256sum)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "build-tests: $dir is up to date" >&2
    exit 0
fi
mkdir -p "$dir"
cd "$dir"
export MPICH_CC="ccache gcc" CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=1
if [ ! -f config.status ] || ! grep -q -- "--with-mpi=$prefix" config.status; then
    "$top/mpich/test/mpi/configure" --with-mpi="$prefix" --disable-fortran --disable-cxx \
        --disable-romio --disable-spawn --disable-ft-tests > configure.log 2>&1 ||
        { tail -20 configure.log >&2; exit 1; }
fi
make -j"$(nproc)" -C util > make-util.log 2>&1 || { tail -20 make-util.log >&2; exit 1; }
make -j"$(nproc)" -C dtpools > make-dtpools.log 2>&1 || { tail -20 make-dtpools.log >&2; exit 1; }
for d in $dirs; do
    make -j"$(nproc)" -C "$d" > "make-$d.log" 2>&1 || { tail -20 "make-$d.log" >&2; exit 1; }
done
# Drop excluded tests: "dir program np" lines in exclude.txt (np * = every np).
for d in $dirs; do
    awk -v d="$d" 'NR==FNR { if ($0 !~ /^#/ && NF >= 3 && $1 == d) ex[$2 " " $3] = 1; next }
        { key = $1 " " $2; star = $1 " *"; if (!(key in ex) && !(star in ex)) print }' \
        "$here/exclude.txt" "$d/testlist" > "$d/testlist.ibmc"
    cp "$d/testlist.ibmc" "$d/testlist"
done
printf '%s\n' $dirs > ibmc-testlist
echo "$want" > "$stamp"
