#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only helper for tests/perf/test-demo.sh: summary-parse.py LINE
parses a "deferred callchains: ..." summary line and prints its fields,
one "name value" per line ("parsed 0" when it does not parse), with the
sum of the orphan reasons and whether the percentage is the stitched
share rounded to 0.1.
"""
import re, sys
line = sys.argv[1]
m = re.match(r"deferred callchains: (\d+) deferred samples, (\d+) stitched \((\d+\.\d)%\), "
             r"(\d+) orphans(?: \(([^)]*)\))?, (\d+) records, (\d+) duplicate records", line)
if not m:
    print("parsed 0")
    sys.exit()
n, s, pct, o, reasons, r, d = m.groups()
n, s, o = int(n), int(s), int(o)
print("parsed 1")
print("deferred", n)
print("stitched", s)
print("orphans", o)
print("records", r)
print("reasons_sum", sum(int(x.rsplit(" ", 1)[1]) for x in reasons.split(", ")) if reasons else 0)
print("pct_ok", int(pct == "%.1f" % (100.0 * s / n)))
