# SPDX-License-Identifier: GPL-2.0
"""Test-only perf script -s script for tests/perf/test-script-report.sh: prints
each sample's callchain as its symbol names joined by ';', as a Python
script sees them."""
import os, sys
sys.path.append(os.environ['PERF_EXEC_PATH'] + '/scripts/python/Perf-Trace-Util/lib/Perf/Trace')
def process_event(param):
    names = [f.get('sym', {}).get('name', '?') for f in param.get('callchain', [])]
    print(';'.join(names))
