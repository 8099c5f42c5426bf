#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf-test-install.sh DIR: makes every tests/perf/test-*.sh suite one of
# perf's own shell tests, a wrapper in DIR (the built perf's
# libexec/perf-core/tests/shell, where 'perf test' finds them):
#
#   build/perf test list 'deferred suite'     # lists them
#   build/perf test -v 'deferred suite'       # runs them
#
# The wrappers run the suites of this checkout; the series' own shell tests
# (tools/perf/tests/shell/*deferred*.sh) need nothing of it.  A suite's
# status is perf test's: 0 Ok, 2 Skip, anything else FAILED.
set -eu
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
rm -f "$dir"/deferred_suite_*.sh
for t in "$here"/test-*.sh; do
	name=$(basename "$t" .sh)
	cat > "$dir/deferred_suite_${name#test-}.sh.tmp" <<-WRAPPER
	#!/bin/sh
	# deferred suite ${name#test-} (tests/perf/$name.sh)
	# SPDX-License-Identifier: GPL-2.0
	exec bash '$t'
	WRAPPER
	chmod +x "$dir/deferred_suite_${name#test-}.sh.tmp"
	mv "$dir/deferred_suite_${name#test-}.sh.tmp" "$dir/deferred_suite_${name#test-}.sh"
done
