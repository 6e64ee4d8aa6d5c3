#!/bin/bash
# Prepare ./mpich: a pristine MPICH 4.0.2 with the ibmc overlay and patch
# series applied and MPICH's own generators run.  Then ./configure && make.
#
#   ./autogen.sh [--with-mpich-tarball=FILE | --with-mpich-tree=DIR] [--force]
#
# Without options the tarball comes from Debian 12's source package, cached
# under $IBMC_CACHE (default ~/.cache/ibmc).  Its sha256 is verified.  A tree
# given with --with-mpich-tree must be an unmodified MPICH 4.0.2; it is copied,
# never changed.  Running autogen.sh again with the same inputs does nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
. "$top/maint/mpich-source.sh"

tarball= tree= force=
for arg in "$@"; do
    case $arg in
        --with-mpich-tarball=*) tarball=${arg#*=} ;;
        --with-mpich-tree=*) tree=${arg#*=} ;;
        --force) force=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) ibmc_die "unknown option $arg (see ./autogen.sh --help)" ;;
    esac
done
[ -z "$tarball" ] || [ -z "$tree" ] || ibmc_die "give --with-mpich-tarball or --with-mpich-tree, not both"

for tool in autoconf automake libtoolize python3 patch; do
    command -v $tool >/dev/null || ibmc_die "$tool is missing (Debian: apt-get install autoconf automake libtool python3 patch)"
done

# the overlay: the netmod and algorithms under src/, and the selection file
# beside MPICH's own tuning files under maint/tuning/coll/
overlay_files() { (cd "$top" && find src maint/tuning -type f | LC_ALL=C sort); }
patch_files() { (cd "$top" && ls maint/patches/*.patch | LC_ALL=C sort); }

# The key names everything that goes into ./mpich.
if [ -n "$tree" ]; then
    [ -f "$tree/maint/version.m4" ] || ibmc_die "$tree is not an MPICH source tree"
    grep -q "MPICH_VERSION_m4],\[$MPICH_VERSION\]" "$tree/maint/version.m4" ||
        ibmc_die "$tree is not MPICH $MPICH_VERSION"
    source_id="tree:$(cd "$tree" && pwd)"
else
    tarball=$(ibmc_mpich_tarball "$tarball")
    source_id="sha256:$MPICH_SHA256"
fi
key=$( { echo "$source_id"; cd "$top"; sha256sum autogen.sh maint/mpich-source.sh $(patch_files) $(overlay_files); } | sha256sum | cut -c1-16)

# The top-level ./configure (configure.ac), made again whenever it is older
top_configure() {
    [ "$top/configure" -nt "$top/configure.ac" ] && return 0
    (cd "$top" && autoconf && rm -rf autom4te.cache) || ibmc_die "autoconf of $top/configure.ac failed"
    echo "ibmc: made ./configure"
}

out=$top/mpich
if [ -z "$force" ] && [ -f "$out/.ibmc-key" ] && [ "$(cat "$out/.ibmc-key")" = "$key" ]; then
    top_configure
    echo "ibmc: mpich/ is up to date ($key)"
    exit 0
fi

stage=$top/mpich.stage.$$
trap 'rm -rf "$stage"' EXIT
rm -rf "$stage"
mkdir -p "$stage"
if [ -n "$tree" ]; then
    echo "ibmc: copying MPICH tree $tree"
    cp -a "$tree/." "$stage/"
else
    echo "ibmc: unpacking $(basename "$tarball")"
    tar -xf "$tarball" -C "$stage" --strip-components=1
fi

# The patch series: every change to a file MPICH already has.
for p in $(patch_files); do
    if ! (cd "$stage" && patch -p1 --dry-run --batch --forward --silent < "$top/$p" >/dev/null); then
        (cd "$stage" && patch -p1 --dry-run --batch --forward < "$top/$p") >&2 || true
        ibmc_die "$p does not apply cleanly: the MPICH tree is not a pristine MPICH $MPICH_VERSION"
    fi
    (cd "$stage" && patch -p1 --batch --forward --silent < "$top/$p")
    echo "ibmc: applied $(basename "$p")"
done

# The overlay: files ibmc adds.  It never replaces an upstream file; changes
# to those belong in the patch series.
for f in $(overlay_files); do
    [ ! -e "$stage/$f" ] || ibmc_die "overlay file $f already exists in MPICH; change it with a patch instead"
    mkdir -p "$stage/$(dirname "$f")"
    cp "$top/$f" "$stage/$f"
done
echo "ibmc: laid $(overlay_files | wc -l) overlay files"

# MPICH's generators: CH4 API glue, CVARs, collective tables, autotools.
# -quick skips the bundled libraries whose release build files stay valid.
echo "ibmc: running MPICH's autogen.sh (about 1-2 minutes)"
(cd "$stage" && ./autogen.sh -quick) > "$stage/ibmc-autogen.log" 2>&1 ||
    { tail -30 "$stage/ibmc-autogen.log" >&2; ibmc_die "MPICH's autogen.sh failed (log above)"; }

# extractcvars stamps its output with the time it ran and names each
# CVAR's source by its absolute path, here the staging folder's: the
# generated files would differ every run, and since every file of MPICH
# includes mpir_cvars.h, ccache would miss them all.  Leave the time out
# and name the sources relative to the tree.  Not enough yet: another file
# of MPICH's generators still differs between runs (a tree made again
# hit ccache for 35 % of its compiles).
sed -i -e "s|$stage/maint/\.\./||g; s|$stage/||g" -e 's|^ \*   on:   .*$| *   on:   (time left out by ibmc'"'"'s autogen.sh)|' \
    "$stage/src/include/mpir_cvars.h" "$stage/src/util/mpir_cvars.c"

echo "$key" > "$stage/.ibmc-key"
rm -rf "$out"
mv "$stage" "$out"
trap - EXIT
top_configure
echo "ibmc: mpich/ is ready ($key). Next: ./configure --prefix=DIR && make && make install"
