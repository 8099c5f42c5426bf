#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Files as upstream perf (6.16 and later) writes them.
#
# tests/perf/helpers/upstream.py rewrites a file into upstream's layouts, record for
# record the same data: PERF_RECORD_COMPRESSED2 made with libzstd (one
# stream, flushed at each record, pushes cut inside events, records capped
# and padded), attrs of 136, 144 and 200 bytes, BPF_METADATA and SCHEDSTAT
# records, header features after 6.1, pipe streams, a 16-byte TRACING_DATA
# record.  On each, perf script, perf report --stdio, perf stitch -o (read
# by the system perf), -F folded and --stats (text and JSON) must print
# exactly what they print for the same records written the 6.1 way; the
# newer records and features are named (-D, --stats, --header-only); a
# record of the 6.16 size-wrap bug, records of unknown type and samples
# that cannot be read make perf stitch fail (-f: a warning), -q hiding
# only the summary.
#
# build/perf is perf 7.2, which reads these layouts itself (COMPRESSED2,
# records 84-86 and features 32-34 by name, bigger attrs); what our series
# adds is the stitching and, for records of unknown type, skipping them.
# Where perf 7.2 reads a file its own way (-D, --header-only, its
# warnings, what it refuses), our perf must read it as pristine perf 7.2
# (build/perf-upstream) does; where our 6.1 series said more (the file and
# the reason of a refusal), the checks say what 7.2 says instead.
#
# usage: tests/perf/test-upstream-files.sh     (after make -f Makefile.perf-patch
#                                               and make perf-upstream)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (reads the converted
#   files), PYTHON, CC, KEEP, VERBOSE, and
#   UPSTREAM_PERF=...  pristine perf 7.2 (default: build/perf-upstream)
# Needs root (or perf_event_paranoid <= 1 and tracefs access) for the
# tracepoint recording.  Output and exit status: see lib.sh.

PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_runs || abort "no system perf ($SYS_PERF) to read the converted files"
UP="$PY $here/helpers/upstream.py"
require_upstream_perf

# Two lines differ by design: perf report's random tip, and the count of
# records in "Processed N events and lost M chunks!", which takes each
# compressed record for one more, in 6.1 (COMPRESSED) as upstream.
# And perf 7.2's warnings about a pipe's features, which differ with the
# layout: a feature it does not know (40): "unknown feature 40 for data
# file version (...) in this version of perf (...)"; and, from pristine
# 7.2 only, of a pipe written the perf 6.1 way, whose features end with
# id 32 (6.1's HEADER_LAST_FEATURE), which it reads as
# HEADER_CPU_DOMAIN_INFO (32 since 6.19): "Invalid HEADER_CPU_DOMAIN_INFO:
# section too small (0) for N CPUs" (MARKWARN).  Ours reads that record
# as the end mark it is.  They are left out of the comparisons between
# layouts and checked on their own: our perf warns as pristine 7.2 does,
# but for MARKWARN (hdr_warn).
MARKWARN='^Invalid HEADER_CPU_DOMAIN_INFO: section too small \(0\) for [0-9]+ CPUs$'
HDRWARN='^(Invalid HEADER_CPU_DOMAIN_INFO: section too small \(0\) for [0-9]+ CPUs|unknown feature [0-9]+ for data file version \(.*\) in this version of perf \(.*\))$'
normal() {
	sed -E -e '/^# \(Tip: /d' -e 's/^Processed [0-9]+ events and lost/Processed N events and lost/' \
		-e "/$HDRWARN/d"
}
# hdr_warn F IN: perf 7.2's warnings about IN's features (HDRWARN) in what
# our perf script printed (F.script.raw), as F.hdrwarn; in what pristine
# perf 7.2's did, as F.upallwarn, and but for MARKWARN, as F.uphdrwarn
hdr_warn() {
	grep -E "$HDRWARN" "$1.script.raw" > "$1.hdrwarn"
	"$UP_PERF" script -i "$2" $KS 2>&1 > /dev/null | grep -E "$HDRWARN" > "$1.upallwarn"
	grep -vE "$MARKWARN" "$1.upallwarn" > "$1.uphdrwarn"
}
# perf report's callchain graphs are compared as trees (perfout.py graph):
# perf prints sibling branches of equal value in the order of the
# addresses of their struct dso in its heap, which differ with the layout
# read (decompression buffers, attr sizes, features: what perf allocated
# before), so that the same records in another layout, or in the same one
# under other malloc settings, may print 33.33% branches in another order.
# The frames, the values and the order of unequal branches are compared.
graph() { $PY "$here/helpers/perfout.py" graph; }
# views F IN: what every tool prints for the input IN, as files F.*; but
# how much waited at its peak, which depends on the layout: a file's
# samples take their records read ahead from an index of the file once
# they hold 1 MiB, a compressed file's wait for them (util/deferred-index.c)
views() {
	local f=$1 in=$2

	"$PERF" script -i "$in" $KS > "$f.script.raw" 2>&1
	normal < "$f.script.raw" > "$f.script"
	hdr_warn "$f" "$in"
	"$PERF" report -i "$in" --stdio $KS 2>&1 | normal > "$f.report.raw"
	graph < "$f.report.raw" > "$f.report"
	rm -f "$f.conv"
	"$PERF" stitch -q -i "$in" -o "$f.conv" 2>&1 | sed -E "/$HDRWARN/d" > "$f.conv.out"
	"$SYS_PERF" script -i "$f.conv" $KS > "$f.conv.script" 2>&1
	"$PERF" stitch -F folded -i "$in" -o - > "$f.folded" 2> /dev/null
	"$PERF" stitch --stats -i "$in" 2>&1 | normal | sed '/^peak pending:/d' > "$f.stats"
	"$PERF" stitch --stats=json -i "$in" 2>&1 | normal |
		sed -E 's/"peak_pending_samples": [0-9]+, "peak_pending_bytes": [0-9]+, //' > "$f.json"
}
# compare NAME BASE VARIANT: every view of VARIANT as BASE's
compare() {
	local v

	for v in script report conv.out conv.script folded stats json; do
		check "$1: $v as the 6.1 layout's" same "$2.$v" "$3.$v"
	done
	check "$1: perf 7.2's feature warnings, as pristine 7.2's but the end mark's" \
		same "$3.uphdrwarn" "$3.hdrwarn"
}

# ------------------------------------------------------------ writer-made files
build_workload "$top/tests/workloads/workload.c" workload -O0 -fno-inline -no-pie -pthread
scen="cross_cpu record_first one_cookie_two_events late_sample duplicates lost zero_entries
	bogus_ip dummy_no_cpu"
# shellcheck disable=SC2086
$PY "$here/helpers/scenarios.py" gen --workload workload --out . $scen > scenarios.list 2> gen.log ||
	{ cat gen.log; abort "scenarios.py gen"; }
KS=--kallsyms=$tmp/kallsyms

for n in $(cat scenarios.list); do
	$UP $n.raw.data $n.same.data > /dev/null || bad "$n: upstream.py"
	check "$n: upstream.py without options writes the file as it was" cmp -s $n.raw.data $n.same.data
	views $n.base $n.raw.data
	check "$n: the 6.1 layout reads (perf script)" has $n.base.script 'deferred callchains:'
	check "$n: the 6.1 layout: perf 7.2's feature warnings, as pristine 7.2's" \
		same $n.base.upallwarn $n.base.hdrwarn
	check "$n: perf report's graphs read whole as trees, every frame kept" \
		eval "[ $(grep -cvE '^[ |]*\|[ |]*$' $n.base.report.raw) -eq $(wc -l < $n.base.report) ] &&
			hasnt $n.base.report '^\?\? ' && has $n.base.report '^ +--'"
	$UP $n.raw.data $n.base.pipe --pipe > /dev/null
	views $n.basep $n.base.pipe
	check "$n: the 6.1 pipe reads (perf script)" has $n.basep.script 'deferred callchains:'
	check "$n: the 6.1 pipe: its end-of-features mark, which pristine 7.2 takes for HEADER_CPU_DOMAIN_INFO, says nothing" \
		eval "grep -qE '$MARKWARN' $n.basep.upallwarn && [ ! -s $n.basep.hdrwarn ]"

	# --cap cuts the zstd stream into records of that many bytes, blocks
	# included, as upstream's writer (zstd_compress_stream_to_records())
	# does at 65519 bytes: perf record -z writes such records when a push
	# compresses to more than that (incompressible data: --call-graph
	# dwarf of random stack contents does it).  A record that completes no
	# zstd block decompresses to nothing, and perf 7.2 (pristine too)
	# then fails "Couldn't decompress data"; our 6.1 series read them:
	# z-cut, all and zpipe must read as the 6.1 layout does
	while read -r name opts; do
		# shellcheck disable=SC2086
		$UP $n.raw.data $n.$name.data $opts > $n.$name.log || bad "$n: upstream.py $opts"
		views $n.$name $n.$name.data
		case $opts in
		*--pipe*) compare "$n: $name" $n.basep $n.$name ;;
		*) compare "$n: $name" $n.base $n.$name ;;
		esac
	done <<-EOF
	z --compress
	z-cut --compress --push 211 --cap 64 --plain 3
	attr136 --attr-size 136
	attr144 --attr-size 144
	attr200 --attr-size 200
	newer --newer-records --newer-features
	all --compress --attr-size 144 --newer-records --newer-features --push 333 --cap 100
	allwhole --compress --attr-size 144 --newer-records --newer-features --push 333
	zpipe --pipe --compress --push 211 --cap 64
	allpipe --pipe --compress --attr-size 144 --newer-records --newer-features --push 333
	EOF
	check "$n: records cut at 64 bytes of zstd data, several per push" \
		gt "$(count $n.z-cut.log '^compressed2 ')" "$(count $n.z.log '^compressed2 ')"
done

# one scenario, looked at closer: allwhole (compressed, records whole
# zstd blocks as upstream's writer makes them but for a push compressing
# to more than 64 KiB, attrs of 144 bytes, records 84-86, features 32-34
# and 40) and allpipe, which perf 7.2 reads itself
n=cross_cpu
"$PERF" report --stats -i $n.allwhole.data > all.stats 2> all.stats.err
check "report --stats: COMPRESSED2 records counted" gt "$(stat all.stats COMPRESSED2)" 0
for t in BPF_METADATA SCHEDSTAT_CPU SCHEDSTAT_DOMAIN; do
	check "report --stats: $t by name" eq "$(stat all.stats $t)" 1
done
check "report --stats: nothing unknown" eq "$(stat all.stats UNKNOWN)" 0
check "no 'unknown events' warning anywhere" hasnt $n.allwhole.script 'unknown'
# perf 7.2 names records 84-86 itself and dumps them (6.1 with our series
# named them "not read by this perf, skipped"): our -D is pristine 7.2's,
# but for the deferred callchain summary line of --stats at its end
"$PERF" report -D -i $n.newer.data > newer.dump 2>&1
"$UP_PERF" report -D -i $n.newer.data > newer.updump 2>&1
check "-D: BPF_METADATA named" has newer.dump '^0 0 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_BPF_METADATA prog bpf_prog_d3adbeef_handler$'
check "-D: SCHEDSTAT_CPU, SCHEDSTAT_DOMAIN named" \
	eval "has newer.dump ': PERF_RECORD_SCHEDSTAT_CPU$' && has newer.dump ': PERF_RECORD_SCHEDSTAT_DOMAIN$'"
grep -v '^deferred callchains: ' newer.dump > newer.dump.cmp
check "-D: as pristine perf 7.2's (but our summary of deferred callchains)" \
	eval "same newer.updump newer.dump.cmp && [ \$(grep -c '^deferred callchains: ' newer.dump) -eq 1 ]"
# perf 7.2 knows features 32-34 and shows them; feature 40 it skips
# without a word in a file and with a warning in a pipe (6.1 with our
# series named them all "of a newer perf"): our --header-only is pristine
# 7.2's
for f in $n.allwhole.data $n.allpipe.data; do
	"$PERF" report --header-only -i $f > $f.header 2>&1
	"$UP_PERF" report --header-only -i $f > $f.upheader 2>&1
	check "$f --header-only: cpu_domain_info named" \
		has $f.header '^# CPU_DOMAIN_INFO info available, use -I to display$'
	check "$f --header-only: e_machine, cln_size named" \
		eval "has $f.header '^# e_machine : 62$' && has $f.header '^# cacheline size: 64$'"
	check "$f --header-only: as pristine perf 7.2's" same $f.upheader $f.header
done
check "pipe --header-only: the unknown feature said" \
	has $n.allpipe.data.header '^unknown feature 40 for data file version \(6\.19\.0\) in this version of perf \(7\.2\.[0-9]+\)$'
check "pipe --header-only: the features it knows read as before (event descriptions)" \
	has $n.allpipe.data.header '^# event : name = cpu-clock'
check "file --header-only: the features it knows as before" has $n.allwhole.data.header '^# hostname : scenario-'
# perf stitch leaves out the features "unknown to this perf": on perf 7.2
# feature 40 only (6.1 did not know 32-34 either); the system perf reads
# the output's header without a word about any (below)
for f in $n.allwhole.data $n.allpipe.data; do
	"$PERF" stitch -i $f -o $f.st > /dev/null 2> $f.st.err
	check "perf stitch -o $f: the feature unknown to perf 7.2 left out, counted" \
		has $f.st.err ' 1 header features unknown to this perf left out; wrote '
done
"$PERF" report --stats -i $n.allwhole.conv > conv.stats 2>&1
"$PERF" report --header-only -i $n.allwhole.conv > conv.header 2>&1
check "perf stitch -o of a compressed file writes it uncompressed" \
	eval "[ $(stat conv.stats COMPRESSED2) -eq 0 ] && [ $(stat conv.stats SAMPLE) -gt 0 ] && hasnt conv.header 'compressed'"
"$SYS_PERF" report --header-only -i $n.allwhole.conv > conv.header6 2>&1
check "the system perf reads its header: attrs at its size, no newer feature" \
	eval "has conv.header6 '^# event : name = cpu-clock' && hasnt conv.header6 'newer perf|unknown'"

# through real pipes (no lseek to fall back on), compressed
cat $n.allpipe.data | "$PERF" stitch -i - -o - 2> pp.err | "$SYS_PERF" script -i - $KS > pp.script 2>&1
check "pipe to pipe through real pipes: the system perf reads it as the file's" \
	same pp.script $n.base.conv.script
check "pipe to pipe: HEADER_COMPRESSED and the feature unknown to perf 7.2 left out" \
	has pp.err ', 1 header features unknown to this perf left out; wrote stdout$'
cat $n.allpipe.data | "$PERF" script -i - $KS 2>&1 | normal > pp.ours
check "perf script from a real pipe: as from the file" same pp.ours $n.allpipe.script

# ------------------------------------------------------------ what cannot be read
$UP $n.raw.data wrap.data --compress --push 1000000 --wrap-size > wrap.log
off=$(sed -nE '$s/^compressed2 offset=(0x[0-9a-f]+) .*/\1/p' wrap.log)
"$PERF" script -i wrap.data $KS > wrap.script 2> wrap.err
check "COMPRESSED2 of the 6.16 size wrap: perf script fails" [ $? -ne 0 ]
# perf 7.2 refuses the record itself ("Couldn't decompress data": its
# data_size is past its header.size): the offset, as pristine 7.2 says
# it, then the file (patches/perf-7.2, "Name the file perf cannot read")
"$UP_PERF" script -i wrap.data $KS > /dev/null 2> wrap.up.err
grep -v '^wrap.data: failed to process the events$' wrap.err > wrap.err.up-lines
check "size wrap: the offset, as pristine perf 7.2 says it" \
	eval "has wrap.err '^$off \[0x[0-9a-f]+\]: processing failed for event of type: COMPRESSED2 \(83\)' &&
		same wrap.up.err wrap.err.up-lines"
check "size wrap: then the file" has wrap.err '^wrap.data: failed to process the events$'
"$PERF" stitch -i wrap.data -o wrap.out > /dev/null 2> wrap.st.err
check "size wrap: perf stitch -o fails" [ $? -ne 0 ]
no_output "size wrap: perf stitch -o" wrap.out
"$PERF" stitch -F folded -i wrap.data -o wrap.folded > /dev/null 2>&1
check "size wrap: perf stitch -F folded fails" [ $? -ne 0 ]
no_output "size wrap: -F folded" wrap.folded

# records of a type nobody knows: said, and an error unless -f
$PY "$here/helpers/inject-deferred.py" --raw-type 99 --raw-type 99 $n.raw.data unknown.data > /dev/null
for mode in "-o unknown.out" "-F folded -o unknown.out" "--stats" "--stats=json"; do
	rm -f unknown.out
	# shellcheck disable=SC2086
	"$PERF" stitch -i unknown.data $mode > unknown.stdout 2> unknown.err
	check "unknown records, perf stitch $mode: fails" [ $? -ne 0 ]
	check "unknown records, perf stitch $mode: says what was skipped" \
		has unknown.err '^unknown.data: error: 2 records of types this perf does not know were skipped \(the first: type 99 at 0x[0-9a-f]+\); -f to go on without them$'
	no_output "unknown records, perf stitch $mode" unknown.out
	# shellcheck disable=SC2086
	"$PERF" stitch -f -q -i unknown.data $mode > unknown.stdout 2> unknown.err
	check "unknown records, perf stitch -f -q $mode: goes on, warning kept" \
		eval "[ $? -eq 0 ] && has unknown.err '^unknown.data: warning: 2 records of types'"
done
check "unknown records, -f -o: the summary counts them" \
	eval "'$PERF' stitch -f -i unknown.data -o unknown2.out 2>&1 | grep -q ', 2 records of unknown type skipped'"
# every deferred callchain malformed (cookie 0): perf reports each and
# keeps the samples, with their kernel part, as "malformed" orphans
"$SYS_PERF" record -q -g -e cpu-clock -o tiny.data -- ./workload > /dev/null 2>&1 ||
	bad "perf record ./workload"
$PY "$here/helpers/inject-deferred.py" --defer --bad-sample cookie0:all tiny.data bad.data > /dev/null
nbad=$("$PERF" script -G -i tiny.data 2> /dev/null | wc -l)
rm -f bad.out
"$PERF" stitch -i bad.data -F folded -o bad.out > /dev/null 2> bad.err
check "every callchain malformed, perf stitch -F folded: written, every sample a malformed orphan ($nbad)" \
	eval "[ $? -eq 0 ] && grep -q ';\[user stack lost: malformed\]' bad.out &&
	      has bad.err '^perf stitch: $nbad cpu-clock samples exported \($nbad deferred: 0 stitched, $nbad orphans \(malformed $nbad\)\)'"
"$PERF" stitch -i bad.data --stats=json > bad.json 2> bad.err
check "every callchain malformed, perf stitch --stats: the orphans counted by reason ($nbad)" \
	eval "[ $? -eq 0 ] && [ \"\$(js bad.json 'd[\"orphans\"][\"malformed\"]')\" -eq $nbad ]"
# every deferred sample unreadable: leader sampling, the ids of each
# sample's PERF_SAMPLE_READ values rewritten to ones no event has, so
# perf counts the samples and delivers none ("samples with id not present
# in the header"): nothing to make a result of, said so, no output; -f
# goes on, the warning kept
"$SYS_PERF" record -q -g -e '{cpu-clock,task-clock}:S' -o tiny-read.data -- ./workload > /dev/null 2>&1 ||
	bad "perf record -e '{cpu-clock,task-clock}:S' ./workload"
$PY "$here/helpers/inject-deferred.py" --defer --bad-sample unknownid:all tiny-read.data unread.data > /dev/null
"$PERF" report --stats -i unread.data > unread.stats 2> /dev/null
nread=$(stat unread.stats SAMPLE)
for mode in "-F folded -o unread.out" "--stats"; do
	rm -f unread.out
	# shellcheck disable=SC2086
	"$PERF" stitch -i unread.data $mode > /dev/null 2> unread.err
	check "no readable sample, perf stitch $mode: fails, says so ($nread samples)" \
		eval "[ $? -ne 0 ] && [ $nread -gt 0 ] && has unread.err '^unread.data: error: $nread samples in the data, none could be read; -f to go on$'"
	no_output "no readable sample, perf stitch $mode" unread.out
done
"$PERF" stitch -f -i unread.data --stats > /dev/null 2> unread.err
check "no readable sample, perf stitch -f --stats: goes on, the warning kept" \
	eval "[ $? -eq 0 ] && has unread.err '^unread.data: warning: $nread samples in the data, none could be read$'"
# -q hides the summary, never an error
: > exists.out
"$PERF" stitch -q -i $n.raw.data -o exists.out > /dev/null 2> exists.err
check "-q: an existing output is still refused out loud" \
	eval "[ $? -ne 0 ] && has exists.err 'exists, not overwriting'"
"$PERF" stitch -q -f -i $n.raw.data -o exists.out > /dev/null 2> quiet.err
check "-q: no summary" [ ! -s quiet.err ]

# ------------------------------------------------------------ a real recording
# tracepoints (tracing data in a pipe), --emulate of a compressed input.
# The recording may have lost chunks (small buffers, a loaded machine):
# then every perf reading it warns on stderr "Processed N events and lost
# M chunks!", N counting all records read, more in a pipe than in a file
# (attrs, features and tracing data come as records), and the warning
# lands in stdout wherever its buffer was last flushed.  Output and
# warnings are compared apart.
# same_out A B: the same stdout (A, B) and stderr but for N (A.err, B.err)
same_out() {
	normal < "$1.err" > "$1.err.n"
	normal < "$2.err" > "$2.err.n"
	same "$1" "$2" && same "$1.err.n" "$2.err.n"
}
record_fp fp.data 200
$UP fp.data fpz.data --compress --push 3000 > /dev/null
"$PERF" stitch --emulate -q --seed 7 --drop 0.2 -i fp.data -o emu.data
"$PERF" stitch --emulate -q --seed 7 --drop 0.2 -i fpz.data -o emuz.data
"$PERF" script -i emu.data > emu.script 2>&1
"$PERF" script -i emuz.data > emuz.script 2>&1
check "--emulate of a COMPRESSED2 input: the same deferred file" same emu.script emuz.script
FIELDS="-F comm,tid,time,event,ip,sym,trace"
"$PERF" script -i emu.data $FIELDS > tp.file 2> tp.file.err
for sz in 12 16; do
	$UP emu.data tp$sz.pipe --pipe --tracing-data-size $sz > /dev/null
	"$PERF" script -i tp$sz.pipe $FIELDS > tp$sz.script 2> tp$sz.script.err
	check "pipe with a $sz-byte TRACING_DATA record: tracepoints as from the file" \
		same_out tp.file tp$sz.script
	"$UP_PERF" script -i tp$sz.pipe $FIELDS > /dev/null 2> tp$sz.up.err
	check "pipe with a $sz-byte TRACING_DATA record: perf 7.2's feature warnings, as pristine 7.2's but the end mark's" \
		eval "[ \"\$(grep -E '$HDRWARN' tp$sz.script.err)\" = \"\$(grep -E '$HDRWARN' tp$sz.up.err | grep -vE '$MARKWARN')\" ]"
	"$PERF" stitch -i tp$sz.pipe -o - 2> /dev/null |
		"$SYS_PERF" script -i - $FIELDS > tp$sz.conv 2> tp$sz.conv.err
	"$PERF" stitch -q -i emu.data -o - | "$SYS_PERF" script -i - $FIELDS > tp.conv 2> tp.conv.err
	check "pipe with a $sz-byte TRACING_DATA record: perf stitch -o - as from the file" \
		same_out tp.conv tp$sz.conv
done
check "the recording has tracepoint samples" has tp.file 'raw_syscalls:sys_exit'

# ------------------------------------------------------------ 6.1's perf record -z
# PERF_RECORD_COMPRESSED of unaligned sizes, so the records after them are
# unaligned in the mapped file (read from aligned copies since 0044)
legacy=$here/fuzz-corpus/legacy-compressed-unaligned.data
# perf 7.2 prints samples otherwise than 6.1 (user addresses as recorded,
# inlined frames): our perf script prints what pristine perf 7.2's does,
# and every sample 6.1 reads (tid, CPU, time of each, in order)
# samples FILE: the tid, [CPU] and time of every sample perf script printed
samples() { grep -v $'^\t' "$1" | grep -oE '[0-9]+ +(\[[0-9]+\] +)?[0-9]+\.[0-9]+: ' | tr -s ' '; }
"$SYS_PERF" script -i "$legacy" > legacy.sys 2>&1
"$UP_PERF" script -i "$legacy" > legacy.up 2>&1
"$PERF" script -i "$legacy" > legacy.ours 2> legacy.err
check "6.1 perf record -z file: perf script reads it as pristine perf 7.2 does" \
	eval "same legacy.up legacy.ours && [ -s legacy.ours ] && [ ! -s legacy.err ]"
check "6.1 perf record -z file: every sample 6.1 reads" \
	eval "[ \"\$(samples legacy.sys)\" = \"\$(samples legacy.ours)\" ]"
check "6.1 perf record -z file: it has samples" has legacy.ours 'cpu-clock'
# perf inject -b: HEADER_BUILD_ID records (4 bytes past a multiple of 8) in
# the data, the kernel's records after them unaligned in the mapped file.
# Pristine perf 7.2 refuses a record whose size is not a multiple of 8 but
# for TRACING_DATA, COMPRESSED and HEADER_FEATURE ("event size 100 is not
# 8-byte aligned, aborting"); ours exempts HEADER_BUILD_ID too and reads the
# records after it from aligned copies: the file as 6.1 wrote it is read,
# every sample 6.1 reads in it
"$SYS_PERF" inject -b -i fp.data -o fpb.data 2> /dev/null
"$SYS_PERF" script -i fpb.data > fpb.sys 2> fpb.sys.err
"$UP_PERF" script -i fpb.data > fpb.up 2> fpb.up.err
"$PERF" script -i fpb.data > fpb.ours 2> fpb.err
check "perf inject -b file: build ids in the data, of unaligned size (6.1's -D)" \
	eval "'$SYS_PERF' report -D -i fpb.data 2> /dev/null | grep -Eq '\\[0x[0-9a-f]*[4c]\\]: event: 67'"
check "perf inject -b file: pristine perf 7.2 refuses it ($(grep -c . fpb.up) lines printed)" \
	has fpb.up.err 'BUILD_ID \(67\) event size [0-9]+ is not 8-byte aligned'
check "perf inject -b file: ours reads it without a message" eval "[ ! -s fpb.err ]"
check "perf inject -b file: every sample 6.1 reads" \
	eval "[ -s fpb.sys ] && [ \"\$(samples fpb.sys)\" = \"\$(samples fpb.ours)\" ]"
if [ -x "$top/build/perf-asan" ]; then
	# the same perf under ASan and UBSan: no report (the records after
	# an unaligned one are read from aligned copies), the same output
	for f in "$legacy" fpb.data; do
		ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
			"$top/build/perf-asan" script -i "$f" > asan.out 2> asan.err
		"$PERF" script -i "$f" > ours.out 2> /dev/null
		check "$(basename "$f"): no sanitizer report in build/perf-asan, the same output as build/perf ($(grep -c . ours.out) lines)" \
			eval "[ -s ours.out ] && same ours.out asan.out && hasnt asan.err 'runtime error|ERROR: [A-Za-z]*Sanitizer|SUMMARY: [A-Za-z]*Sanitizer'"
	done
fi

finish
