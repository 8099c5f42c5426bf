#!/bin/bash
# perf names the perf.data file it cannot read
# SPDX-License-Identifier: GPL-2.0

# perf report --input, perf diff, perf script -i in a loop over many
# files, perf inject: the user must not have to guess which file an
# error is about.  A file that is not a perf.data and one whose events
# cannot be processed (a compressed record in a file without
# HEADER_COMPRESSED) must each be named in perf script's error.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init name_file
record_or_skip -e cpu-clock -c 100000 -- sleep 0.1
# another magic number; a PERF_RECORD_COMPRESSED (81) inserted
python3 -c 'import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[0:8] = b"PERFILE9"
open(sys.argv[2], "wb").write(d)' "$data" "$data.magic" || exit 1
python3 "$shelldir/lib/perf_data_insert.py" "$data" "$data.damaged" 81 16 > /dev/null || exit 1

err=0
for spec in "magic|incompatible file format" "damaged|failed to process the events"; do
	IFS='|' read -r what said <<< "$spec"
	perf script -i "$data.$what" > /dev/null 2> "$data.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "$what: exit status 0 [Failed]"
		err=1
	elif ! grep -q "^$data.$what: $said" "$data.err"; then
		echo "$what: the error does not name the file [Failed]"
		cat "$data.err"
		err=1
	else
		echo "$what: '$data.$what: $said'"
	fi
done
exit $err
