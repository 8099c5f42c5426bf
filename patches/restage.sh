#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# restage.sh [HOOKDIR]: make the stages again after an edit of our files.
#
# A stage (HOOKDIR/stages/NAME.diff, see series.sh) is a later mail's
# change to a file of ours an earlier mail adds.  Once one of those files
# is edited where a stage changes it, the stage no longer undoes on it and
# make series stops.  This takes the edit (the working tree against HEAD),
# applies it to the file as each stage leaves it (HEAD's files with the
# later stages undone; patch with fuzz, a hunk whose lines a stage has not
# written yet is left out of that state, and said), and writes each stage
# again as the difference of the states before and after it.  Then it
# checks that series.sh can undo them all on the working tree.
#
# Commit the edit and the stages together; read the stages' diff first:
# a hunk left out of a state is right only when that state lacks the lines.
set -eo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
hookdir=${1:-$here/perf-7.2}
die() { echo "restage: $*" >&2; exit 1; }

cd "$repo"
mapfile -t stages < <(grep -v '^[[:space:]]*#' "$hookdir/series" |
	grep -o '+[A-Za-z0-9._-]*\.diff' | sed 's/^+//')
[ ${#stages[@]} -gt 0 ] || die "$hookdir/series names no stages"
# the files the stages change
mapfile -t files < <(for s in "${stages[@]}"; do
	sed -n 's|^+++ b/||p' "$hookdir/stages/$s"; done | sort -u)
git diff --quiet HEAD -- "${files[@]}" && die "no edit of the stages' files against HEAD"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git diff HEAD -- "${files[@]}" > "$work/edit.diff"

# state k: HEAD's files with stages k+1.. undone (k = n: HEAD's own)
n=${#stages[@]}
mkdir -p "$work/old.$n"
git archive HEAD "${files[@]}" | tar -x -C "$work/old.$n"
for ((k = n; k > 0; k--)); do
	cp -a "$work/old.$k" "$work/old.$((k - 1))"
	(cd "$work/old.$((k - 1))" && git apply -R "$hookdir/stages/${stages[$((k - 1))]}") ||
		die "${stages[$((k - 1))]} does not undo on HEAD's files"
done
# the edit on each state
for ((k = 0; k <= n; k++)); do
	cp -a "$work/old.$k" "$work/new.$k"
	if ! (cd "$work/new.$k" && patch -s -p1 -F2 --no-backup-if-mismatch -r - \
		< "$work/edit.diff" > "$work/patch.$k.log" 2>&1); then
		echo "restage: state $k (before ${stages[$k]:-none: HEAD}): hunks left out:"
		sed 's/^/  /' "$work/patch.$k.log"
	fi
done
cmp -s <(cd "$work/new.$n" && cat "${files[@]}") <(cat "${files[@]}") ||
	die "the edit on HEAD's files is not the working tree's"
# each stage again
for ((k = 1; k <= n; k++)); do
	s=${stages[$((k - 1))]}
	out=$work/$s
	: > "$out"
	for f in $(sed -n 's|^+++ b/||p' "$hookdir/stages/$s"); do
		diff -u --label "a/$f" --label "b/$f" "$work/new.$((k - 1))/$f" "$work/new.$k/$f" \
			>> "$out" || [ $? -eq 1 ] || die "diff of $f failed"
	done
	cmp -s "$out" "$hookdir/stages/$s" || { cp "$out" "$hookdir/stages/$s"; echo "restage: $s made again"; }
done
# series.sh's check: every stage undoes on the working tree, last first
mkdir "$work/check"
tar -c "${files[@]}" | tar -x -C "$work/check"
for ((k = n - 1; k >= 0; k--)); do
	(cd "$work/check" && git apply -R "$hookdir/stages/${stages[$k]}") ||
		die "${stages[$k]} does not undo on the working tree"
done
echo "restage: the ${n} stages undo on the working tree"
