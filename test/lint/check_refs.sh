#!/bin/sh
# doc/cvars.md and doc/pvars.md must say what the code says: maint/gen-refs
# --check regenerates both from src/ and maint/patches/ and diffs them.
# Then the same check on a copy of the sources with one CVAR description and
# one pvar description changed must fail, so that a generator that stopped
# reading descriptions cannot pass unnoticed.
# Prints ok:/FAIL: lines; exits non-zero on any failure.
#   test/lint/check_refs.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
gen="python3 $top/maint/gen-refs"
fail=0

$gen --check || fail=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/maint"
cp -R "$top/src" "$tmp/src"
cp -R "$top/maint/patches" "$tmp/maint/patches"

drift() { # label, source file, cvar or pvar: the copy with "DRIFT " put into
          # the first line after (cvar) or at (pvar) the pattern must fail --check
    label=$1 file=$2 mode=$3
    cp -R "$top/src/." "$tmp/src/"
    f=$tmp/$file
    if [ -z "$file" ] || [ ! -f "$f" ]; then echo "FAIL: drift check ($label): no source file"; fail=1; return; fi
    python3 - "$f" "$mode" <<'EOF_PY'
import re, sys
path, mode = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
if mode == "cvar":   # the first line of a CVAR's block-scalar description
    i = next(n for n, l in enumerate(lines) if re.search(r"description\s*:\s*[>|]", l)) + 1
else:                # the first description literal of a pvar registration
    i = next(n for n, l in enumerate(lines) if re.match(r'^\s*"[A-Z]', l))
lines[i] = re.sub(r'^(\s*"?)', r"\1DRIFT ", lines[i])
open(path, "w").write("\n".join(lines))
EOF_PY
    if cmp -s "$f" "$top/$file"; then
        echo "FAIL: drift check ($label): the edit changed nothing in $file"; fail=1; return
    fi
    if $gen --check --src "$tmp" > "$tmp/out" 2>&1; then
        echo "FAIL: gen-refs --check passed sources with $label"; fail=1
    elif ! grep -q DRIFT "$tmp/out"; then
        echo "FAIL: gen-refs --check failed on $label, but its diff does not show the edit"; fail=1
    else
        echo "ok: gen-refs --check fails on $label ($file)"
    fi
}
cvar_file=$(cd "$top" && grep -rl -- '- name *: MPIR_CVAR_' src | sort | head -1)
pvar_file=$(cd "$top" && grep -rl 'MPIR_T_PVAR_REGISTER_impl' src --include='*.c' | sort | head -1)
drift "an edited CVAR description" "$cvar_file" cvar
drift "an edited pvar description" "$pvar_file" pvar
exit $fail
