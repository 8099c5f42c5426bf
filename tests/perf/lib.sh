# SPDX-License-Identifier: GPL-2.0
#
# Shared by the tests/perf/test-*.sh suites: the check counters and the
# assertions every suite uses. Source it after setting "here".

pass=0
fail=0
ok()  { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }
# check DESCRIPTION COMMAND...: passes when COMMAND succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
# has FILE REGEX: a line of FILE matches the extended regex
has() { grep -Eq -- "$2" "$1"; }
hasnt() { ! grep -Eq -- "$2" "$1"; }
# count FILE REGEX: lines of FILE matching the extended regex
count() { grep -Ec -- "$2" "$1"; }
eq() { [ "$1" = "$2" ] || { echo "     expected '$2', got '$1'"; return 1; }; }
