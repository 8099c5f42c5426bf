#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# series-check.sh: the perf series as a maintainer would take it.
#
#   series-check.sh PRISTINE PATCHDIR WORKDIR [full]
#
# Copies the pristine 6.1 sources (PRISTINE, an extracted linux-source
# tree) to WORKDIR/tree, makes it a git repository and applies
# PATCHDIR/0001-*.patch... one by one with 'git am' (0000, the cover
# letter, is not a patch), each first read by the tree's
# scripts/checkpatch.pl (an ERROR fails).  After each patch it compiles, in one object
# directory kept across the steps, every .c file of tools/perf the patch
# touches and every file touched so far that includes a header the patch
# touches: a patch that needs a later one to compile fails here, naming
# itself.  With 'full', each step builds the whole of perf instead (an
# hour on two cores).  At the end perf is built and linked from the
# series alone.
#
# PERF_MAKE (the environment) is the perf make command without -C, O= or
# targets, as Makefile.perf-patch runs it.
set -eo pipefail

pristine=$1 patchdir=$2 work=$3 mode=${4:-}
[ -d "$pristine/tools/perf" ] || { echo "series-check: $pristine has no tools/perf" >&2; exit 2; }
[ -n "$PERF_MAKE" ] || { echo "series-check: PERF_MAKE is not set" >&2; exit 2; }
mapfile -t patches < <(find "$patchdir" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' | sort)
[ ${#patches[@]} -gt 1 ] || { echo "series-check: no patches in $patchdir" >&2; exit 2; }

# the numbers run 0000 (cover letter), 0001, 0002, ... without a gap
n=0
for p in "${patches[@]}"; do
	num=$(basename "$p"); num=${num%%-*}
	if [ $((10#$num)) -ne $n ]; then
		echo "series-check: $(basename "$p"): expected number $(printf %04d $n)" >&2
		exit 1
	fi
	n=$((n + 1))
done
case $(basename "${patches[0]}") in
0000-cover-letter.patch) ;;
*) echo "series-check: no cover letter (0000-cover-letter.patch)" >&2; exit 1 ;;
esac

tree=$work/tree obj=$work/obj log=$work/log
rm -rf "$work"
mkdir -p "$tree" "$obj"
echo "series-check: copying $pristine to $tree"
(cd "$pristine" && cp -a --parents tools include arch/x86 scripts lib Makefile COPYING \
	kernel/bpf/disasm.c kernel/bpf/disasm.h "$tree/")
git() { command git -c user.name=series-check -c user.email=series-check@localhost "$@"; }
(cd "$tree" && git init -q && git add -A && git commit -q -m "pristine 6.1")

perf_make() {
	# shellcheck disable=SC2086 # PERF_MAKE is a command line
	$PERF_MAKE -C "$tree/tools/perf" O="$obj" "$@" >> "$log" 2>&1
}

touched_so_far=()
step=0
for p in "${patches[@]:1}"; do
	step=$((step + 1))
	name=$(basename "$p")
	if ! (cd "$tree" && git am -q --whitespace=error-all "$p") >> "$log" 2>&1; then
		echo "series-check: $name does not apply with git am" >&2
		tail -20 "$log" >&2
		exit 1
	fi
	# checkpatch as the list runs it, on the mail: an error fails; its
	# warnings are mostly long, greppable messages and MAINTAINERS
	perl "$tree/scripts/checkpatch.pl" --no-tree -q --terse - < "$p" > "$work/checkpatch.out" 2>&1 || true
	if grep -q 'ERROR:' "$work/checkpatch.out"; then
		echo "series-check: $name: checkpatch.pl reports errors:" >&2
		grep 'ERROR:' "$work/checkpatch.out" >&2
		exit 1
	fi
	mapfile -t files < <(cd "$tree" && git diff-tree --no-commit-id --name-only -r HEAD)
	objs=() headers=()
	for f in "${files[@]}"; do
		case $f in
		tools/perf/*.c)
			[ -e "$tree/$f" ] && objs+=("${f#tools/perf/}") && touched_so_far+=("$f") ;;
		tools/perf/*.h|tools/include/*.h|tools/lib/perf/include/*.h)
			headers+=("$(basename "$f")") ;;
		esac
	done
	for f in "${touched_so_far[@]}"; do
		for h in "${headers[@]}"; do
			if grep -q "^#include [\"<].*\\b$h[\">]" "$tree/$f" 2>/dev/null; then
				objs+=("${f#tools/perf/}"); break
			fi
		done
	done
	mapfile -t objs < <(printf '%s\n' "${objs[@]}" | grep . | sed 's/\.c$/.o/' | sort -u)
	if [ "$mode" = full ]; then
		what="perf"
		perf_make && ok=1 || ok=
	elif [ ${#objs[@]} -gt 0 ]; then
		what="${objs[*]}"
		perf_make "${objs[@]/#/$obj/}" && ok=1 || ok=
	else
		what="(no C file)"
		ok=1
	fi
	if [ -z "$ok" ]; then
		echo "series-check: $name: building $what failed" >&2
		grep -E 'error|Error' "$log" | tail -20 >&2
		exit 1
	fi
	printf '  %-68.68s %s\n' "$name" "$what"
done

echo "series-check: building perf from the series"
if ! perf_make; then
	echo "series-check: the full build of the series failed (log: $log)" >&2
	grep -E 'error|Error' "$log" | tail -20 >&2
	exit 1
fi
"$obj/perf" version >/dev/null
echo "series-check: ${#patches[@]} files ($((${#patches[@]} - 1)) patches + cover letter) apply with git am and build: $obj/perf"
