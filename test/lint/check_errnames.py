#!/usr/bin/env python3
"""MPICH formats an error message by consuming the arguments in the order in
which the message *text* uses its specifiers, while callers pass them in the
order of the *key* ("**name %s %d:...").  A mismatch reads an int as a char *
and crashes MPI_Init while it reports an error.  Check every ibmc message.
Prints ok:/FAIL: lines and exits non-zero on a mismatch."""
import re
import sys

path = sys.argv[1]
bad = n = 0
for lineno, line in enumerate(open(path), 1):
    m = re.match(r'^(\*\*\w+)((?: %\w)+):(.*)$', line.rstrip('\n'))
    if not m:
        continue
    n += 1
    key, text = re.findall(r'%\w', m.group(2)), re.findall(r'%\w', m.group(3))
    if key != text:
        bad += 1
        print(f"FAIL: {path}:{lineno}: {m.group(1)} key {' '.join(key)} but text uses {' '.join(text)}")
if n == 0:
    print(f"FAIL: no parametrised messages found in {path}")
    sys.exit(1)
print(f"ok: {n} parametrised error messages use their arguments in key order" if not bad else "")
sys.exit(1 if bad else 0)
