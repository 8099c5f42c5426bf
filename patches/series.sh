#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The perf series as a maintainer takes them: our perf code (tools/perf/
# of this repository, plain files) and the hooks into upstream's files
# (patches/perf-7.2/0*.patch) as git format-patch series, each on the one
# before it, the first against pristine perf 7.2, and their check.
#
#   series.sh make PRISTINE HOOKDIR REPO OUT
#       patches/perf-7.2/series names, patch by patch, the hook and the
#       new files: a git tree of PRISTINE gets each hook with 'git am' and
#       its files added to the same commit (a NAME.msg line: a commit of
#       new files only, with that message); a line 'series NAME' starts
#       a series.  Each series' mails go to OUT/N-NAME/, with
#       0000-cover-letter.patch from HOOKDIR/cover-NAME.txt (subject
#       line, blank line, text; @BASE@ there is what the series applies
#       on, @UPSTREAM_CHANGES@ its count of upstream's files changed).  A file is named from tools/perf/, or
#       from the top of the tree when under tools/lib/.  Every file of
#       REPO/tools/perf and REPO/tools/lib/unwind-cookie and every hook
#       must be in the series exactly once.  Commit dates are the
#       hooks' own and a fixed one, so that the same input gives the same
#       mails.
#   series.sh check PRISTINE SERIES BUILDTREE WORK [full|touched|ends|none]
#       git am of SERIES/1-*/0001..., then of each series after it, on a
#       fresh copy of PRISTINE, each mail
#       first read by checkpatch.pl (an ERROR fails, and a warning that
#       perf-7.2/checkpatch-accepted does not accept); after each patch
#       ('full', the default) all of perf built, incrementally, in one
#       object directory; 'touched': a compile of every .c file it touches
#       and of every file touched so far that includes a header it touches
#       (a patch that needs a later one fails, naming itself; after one of
#       Makefile.perf, its 'prepare', libraries included); after a patch of
#       tools/lib/unwind-cookie/ (full or touched), the library and its unit
#       tests; 'ends': all of perf built at the last mail of each
#       series, before the next series; 'none': no build between mails (make check's run, inside
#       CI's time: the last tree's build is build/perf's, which the suites
#       test).  Then the last patch's tree must equal BUILDTREE, byte for
#       byte: the tree build/perf was built and linked from (so that build
#       is the series' full build).
#       PERF_MAKE (the environment): the perf make command without -C, O=
#       or targets.
#
# checkpatch.pl: the one of linux-source-7.2 (build/linux-7.2-src, when
# the sources came from sid), else Debian 12's linux-source-6.1 (said so).
set -eo pipefail

git() { command git -c user.name=perf-deferred -c user.email=perf-deferred@localhost \
	-c core.autocrlf=false "$@"; }
die() { echo "series: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

# stage_bases HOOKDIR TOP BASE: BASE/ gets our files as their first mail
# adds them.  A file of ours is mailed whole, but a later mail may change
# it: HOOKDIR/stages/NAME.diff (a unified diff of files of ours, named
# +NAME.diff in that mail's line of the series) is that change, so the
# file an earlier mail adds is the one of TOP with the series' stages
# undone, last first.  Each must undo cleanly: a stage no longer fits the
# file it changes once the file was edited where it changes it, and is
# then made again.
stage_bases() {
	local hookdir=$1 top=$2 base=$3 name files f stages=() i

	rm -rf "$base"
	mkdir -p "$base/tools"
	cp -a "$top/tools/perf" "$top/tools/lib" "$base/tools/"
	while read -r name files; do
		case $name in ''|'#'*) continue ;; esac
		for f in $files; do
			[[ $f == +* ]] || continue
			[ -f "$hookdir/stages/${f#+}" ] || die "series names $f: no $hookdir/stages/${f#+}"
			stages+=("$hookdir/stages/${f#+}")
		done
	done < "$hookdir/series"
	for ((i = ${#stages[@]} - 1; i >= 0; i--)); do
		(cd "$base" && git apply -R "${stages[$i]}") ||
			die "$(basename "${stages[$i]}") cannot be undone on the files of $top: make it again"
	done
}

make_series() {
	local pristine=$1 hookdir=$2 top=$3 out=$4
	local tree=$out.git date name files hook msg used=() listed=()
	local names=() i from to dir changes base mails

	[ -f "$hookdir/series" ] || die "no $hookdir/series"
	rm -rf "$tree" "$out"
	cp -a "$pristine" "$tree"
	# one fixed date for what has none of its own: the last hook's
	date=$(sed -n 's/^Date: //p' "$(ls "$hookdir"/0*.patch | tail -n 1)")
	export GIT_COMMITTER_DATE="$date" GIT_AUTHOR_DATE="$date"
	(cd "$tree" && git init -q -b deferred-callchains && git add -A &&
		git commit -q -m "Linux 7.2.13 (tools/perf/MANIFEST)" && git tag base)
	stage_bases "$hookdir" "$top" "$out.base"
	while read -r name files; do
		case $name in ''|'#'*) continue ;; esac
		if [ "$name" = series ]; then
			# the series before this one ends here
			[ ${#names[@]} -eq 0 ] || (cd "$tree" && git tag "end-${names[-1]}")
			[[ $files =~ ^[a-z][a-z0-9-]*$ ]] || die "series line names '$files', not one lower-case word"
			[ -f "$hookdir/cover-$files.txt" ] || die "no $hookdir/cover-$files.txt"
			names+=("$files")
			continue
		fi
		[ ${#names[@]} -gt 0 ] || die "$hookdir/series: $name comes before the first 'series NAME' line"
		if [[ $name == *.msg ]]; then
			msg=$hookdir/$name
			[ -f "$msg" ] || die "series: no $msg"
		else
			hook=$(ls "$hookdir"/[0-9][0-9][0-9][0-9]-"$name" 2> /dev/null) ||
				die "series names $name: no such hook in $hookdir"
			(cd "$tree" && git am -q --signoff --committer-date-is-author-date "$hook") ||
				die "$(basename "$hook") does not apply"
			used+=("$(basename "$hook")")
		fi
		for f in $files; do
			if [[ $f == +* ]]; then
				# a later step of files an earlier mail added
				(cd "$tree" && git apply --index "$hookdir/stages/${f#+}") ||
					die "stages/${f#+} does not apply to the files of the mails before it"
				continue
			fi
			case $f in tools/lib/*) ;; *) f=tools/perf/$f ;; esac
			[ -f "$top/$f" ] || die "series names $f: no such file"
			mkdir -p "$tree/$(dirname "$f")"
			cp -p "$out.base/$f" "$tree/$f"
			(cd "$tree" && git add "$f")
			listed+=("$f")
		done
		if [[ $name == *.msg ]]; then
			(cd "$tree" && git commit -q --signoff -F "$msg")
		elif [ -n "$files" ]; then
			(cd "$tree" && git commit -q --amend --no-edit)
		fi
	done < "$hookdir/series"
	[ ${#names[@]} -gt 0 ] || die "$hookdir/series has no 'series NAME' line"
	(cd "$tree" && git tag "end-${names[-1]}")

	# every hook and every file once
	local missing
	missing=$(comm -23 <(cd "$hookdir" && ls 0*.patch | sort) <(printf '%s\n' "${used[@]}" | sort))
	[ -z "$missing" ] || die "hooks not in the series: $missing"
	missing=$(comm -23 <(cd "$top" && git ls-files --cached --others --exclude-standard \
				tools/perf tools/lib/unwind-cookie | sort) <(printf '%s\n' "${listed[@]}" | sort))
	[ -z "$missing" ] || die "files not in the series: $missing"
	[ "$(printf '%s\n' "${listed[@]}" | sort | uniq -d)" = "" ] || die "a file is in the series twice"

	# the stages lead to the files as they are
	for f in "${listed[@]}"; do
		cmp -s "$top/$f" "$tree/$f" || die "$f after the last mail is not the file of $top"
	done
	rm -rf "$out.base"
	# each series its own mails and cover letter, in OUT/N-NAME/: its
	# count of upstream's files changed, and its base (@BASE@: pristine
	# 7.2 for the first, the series before it for the others)
	from=base base="Linux 7.2.13 (v7.2.13)"
	for i in "${!names[@]}"; do
		to=end-${names[$i]}
		dir=$out/$((i + 1))-${names[$i]}
		changes=$(cd "$tree" && git diff --numstat --diff-filter=M "$from" "$to" |
			awk '{ f++; a += $1; d += $2 } END { printf "%d files (%d lines added, %d removed)", f, a, d }')
		# git takes a cover letter's text from the description of
		# the branch it formats
		(cd "$tree" && git branch -f "${names[$i]}" "$to" &&
			git config "branch.${names[$i]}.description" \
			"$(sed -e "s/@UPSTREAM_CHANGES@/$changes/" -e "s|@BASE@|$base|" \
				"$hookdir/cover-${names[$i]}.txt")" &&
			git format-patch -q --numbered --no-signature --zero-commit --cover-letter \
				--cover-from-description=subject -o "$dir" "$from..${names[$i]}")
		base="the series\\n\\n  $(head -n 1 "$hookdir/cover-${names[$i]}.txt")\\n\\n($((i + 1))-${names[$i]}/ of make series), and so on the ones before it"
		from=$to
	done
	rm -rf "$tree"
	account "$hookdir" "$out" > "$out/series.md"
	mails=("$out"/*/0*.patch)
	echo "series: $out: ${#names[@]} series, ${#mails[@]} mails" \
		"($((${#mails[@]} - ${#names[@]})) patches and ${#names[@]} cover letters)"
}

# checkpatch_verdict ACCEPTED MAIL OUTPUT: the lines of checkpatch.pl's
# OUTPUT (--terse --show-types) on MAIL that ACCEPTED does not accept, on
# stderr, and the status 1 if there are any; the number it accepts on
# stdout
checkpatch_verdict() {
	perl -e '
		my ($rules, $mail, $out) = @ARGV;
		my (%accept, @lines, $ok, $bad) = ();
		open(my $r, "<", $rules) or die "$rules: $!\n";
		while (<$r>) {
			next if /^\s*(#|$)/;
			chomp;
			my ($type, $re) = split /\t+/;
			push @{$accept{$type}}, qr/$re/;
		}
		open(my $m, "<", $mail) or die "$mail: $!\n";
		@lines = <$m>;
		open(my $o, "<", $out) or die "$out: $!\n";
		while (<$o>) {
			next unless /^-:(\d+): (ERROR|WARNING|CHECK):(\w+):/;
			my ($n, $level, $type) = ($1, $2, $3);
			my $text = $lines[$n - 1] // "";
			if ($level ne "ERROR" && grep { $text =~ $_ } @{$accept{$type} // []}) {
				$ok++;
			} else {
				print STDERR $_, "    $text";
				$bad++;
			}
		}
		print $ok // 0, "\n";
		exit($bad ? 1 : 0);
	' "$@"
}

checkpatch_script() {
	local dir=$1 t
	mkdir -p "$dir"
	t=$repo/build/linux-7.2-src/linux-source-7.2.tar.xz
	if [ -f "$t" ] && tar -xf "$t" -C "$dir" --strip-components=1 \
		linux-source-7.2/scripts/checkpatch.pl linux-source-7.2/scripts/spelling.txt \
		linux-source-7.2/scripts/const_structs.checkpatch 2> /dev/null; then
		echo "series-check: checkpatch.pl of linux-source-7.2" >&2
	elif t=/usr/src/linux-source-6.1.tar.xz && [ -f "$t" ] &&
	     tar -xf "$t" -C "$dir" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch 2> /dev/null; then
		echo "series-check: checkpatch.pl of Debian 12's linux-source-6.1 (no linux-source-7.2 here)" >&2
	else
		die "no checkpatch.pl: neither linux-source-7.2 (build/linux-7.2-src) nor /usr/src/linux-source-6.1.tar.xz"
	fi
	echo "$dir/scripts/checkpatch.pl"
}

# prove_fix MAIL: after perf is built with MAIL (in $obj; $work/perf.before
# the one built just before it), the test of MAIL's fix, if
# patches/perf-7.2/fix-tests gives it one, as it is in the tree with MAIL
# (a later mail may extend it), must fail with the perf before and pass
# with this one (tests/upstream/fix-tests.sh ONLY=MAIL); says so on
# stdout after a ', ', and keeps this perf as the next one's before
prove_fix() {
	local mail said

	mail=$(basename "$1" | sed 's/^[0-9]*-//')
	if awk -F '\t' -v m="$mail" '$1 == m && $2 !~ /^(no test|feature|to do): / { ok = 1 }
		END { exit !ok }' "$here/perf-7.2/fix-tests"; then
		said=$(ONLY=$mail PERF=$obj/perf UPSTREAM_PERF=$work/perf.before \
			BEFORE="the tree before it" AFTER="the tree with it" OUT=$work/fix-tests \
			SHELL_TESTS=$tree/tools/perf/tests/shell "$repo/tests/upstream/fix-tests.sh" \
			2>&1) || { echo "$said" >&2; die "$(basename "$1"): its fix is not proved mail by mail"; }
		echo "$said" >> "$work/fix-proofs"
		echo ", its fix's test fails before it and passes with it"
	fi
	cp "$obj/perf" "$work/perf.before"
}

check_series() {
	local pristine=$1 series=$2 buildtree=$3 work=$4 mode=${5:-full}
	local tree=$work/tree obj=$work/obj log=$work/log checkpatch p name step=0 files objs headers
	local touched_so_far=() patches=() accepted nr_accepted=0 dirs=() ends=() d mails
	local first_done='' proof

	case $mode in
	touched|full|fixes|ends|none) ;;
	*) die "check: the build after each mail is full, touched, fixes, ends or none, not '$mode'" ;;
	esac
	[ "$mode" = none ] || [ -n "$PERF_MAKE" ] || die "PERF_MAKE is not set"
	# the series in turn, each on the one before it: their mails, the
	# last of each marked
	mapfile -t dirs < <(cd "$series" && ls -d [0-9]*-*/ | sort -n | tr -d /)
	[ ${#dirs[@]} -gt 0 ] || die "no series in $series"
	for d in "${dirs[@]}"; do
		mapfile -t mails < <(ls "$series/$d"/[0-9][0-9][0-9][0-9]-*.patch | sort)
		[ "$(basename "${mails[0]}")" = 0000-cover-letter.patch ] || die "no cover letter in $series/$d"
		[ ${#mails[@]} -gt 1 ] || die "$series/$d has no patch"
		patches+=("${mails[@]:1}")
		ends+=("${mails[-1]}")
	done
	rm -rf "$work"
	mkdir -p "$obj"
	: > "$work/fix-proofs"
	checkpatch=$(checkpatch_script "$work/checkpatch")
	cp -a "$pristine" "$tree"
	(cd "$tree" && git init -q && git add -A && git commit -q -m pristine)
	perf_make() {
		# PERF_MAKE is a command line, its quotes included
		eval "$PERF_MAKE" -C '"$tree/tools/perf"' O='"$obj"' '"$@"' >> "$log" 2>&1
	}
	# upstream's 'prepare' (the prerequisite of a single object) leaves
	# out libsymbol, whose headers util/*.c include: built once, first
	if [ "$mode" != none ]; then
		perf_make "$obj/libsymbol/libsymbol.a" ||
			{ tail -20 "$log" >&2; die "building libsymbol of the pristine sources failed"; }
	fi
	# the perf before the first mail, for the proof of a fix mail by mail
	if [ "$mode" = full ] || [ "$mode" = fixes ]; then
		perf_make || { tail -20 "$log" >&2; die "building perf of the pristine sources failed"; }
		cp "$obj/perf" "$work/perf.before"
	fi
	for p in "${patches[@]}"; do
		step=$((step + 1))
		name=$(basename "$(dirname "$p")")/$(basename "$p")
		(cd "$tree" && git am -q --whitespace=error-all "$p") >> "$log" 2>&1 ||
			{ tail -20 "$log" >&2; die "$name does not apply with git am"; }
		# as the list runs it, on the mail: an error fails, and a
		# warning of a kind checkpatch-accepted does not accept
		perl "$checkpatch" --no-tree -q --terse --show-types - < "$p" \
			> "$work/checkpatch.out" 2>&1 || true
		accepted=$(checkpatch_verdict "$here/perf-7.2/checkpatch-accepted" "$p" \
				"$work/checkpatch.out") ||
			die "$name: checkpatch.pl reports the above, which patches/perf-7.2/checkpatch-accepted does not accept"
		nr_accepted=$((nr_accepted + accepted))
		# 'fixes': the first series mail by mail, each fix proved
		if [ "$mode" = fixes ] && [ -z "$first_done" ]; then
			perf_make || { grep -E 'error|Error' "$log" | tail -20 >&2; die "$name: building perf failed"; }
			proof=$(prove_fix "$p") || exit 1
			printf '  %-66.66s perf%s\n' "$name" "$proof"
			[ "$p" != "${ends[0]}" ] || first_done=1
			continue
		fi
		if [ "$mode" = none ] || [ "$mode" = ends ] || [ "$mode" = fixes ]; then
			printf '  %s\n' "$name"
			if [ "$mode" = none ] || [[ " ${ends[*]} " != *" $p "* ]]; then
				continue
			fi
			# each series builds at its last mail, without the ones after
			perf_make || { grep -E 'error|Error' "$log" | tail -20 >&2; die "$name: building perf failed"; }
			printf '  %s: perf builds\n' "$(dirname "$name")"
			continue
		fi
		mapfile -t files < <(cd "$tree" && git diff-tree --no-commit-id --name-only -r HEAD)
		objs=() headers=() lib= makefile=
		for f in "${files[@]}"; do
			case $f in
			tools/lib/unwind-cookie/*)
				lib=1 ;;
			tools/perf/Makefile.perf)
				makefile=1 ;;
			tools/perf/*.c)
				[ -e "$tree/$f" ] && objs+=("${f#tools/perf/}") && touched_so_far+=("$f") ;;
			tools/perf/*.h|tools/include/*.h|tools/lib/perf/include/*.h)
				headers+=("$(basename "$f")") ;;
			esac
		done
		for f in "${touched_so_far[@]}"; do
			for h in "${headers[@]}"; do
				if grep -q "^#include [\"<].*\\b$h[\">]" "$tree/$f" 2> /dev/null; then
					objs+=("${f#tools/perf/}"); break
				fi
			done
		done
		mapfile -t objs < <(printf '%s\n' "${objs[@]}" | grep . | sed 's/\.c$/.o/' | sort -u)
		if [ "$mode" = full ]; then
			perf_make || { grep -E 'error|Error' "$log" | tail -20 >&2; die "$name: building perf failed"; }
			proof=$(prove_fix "$p") || exit 1
			what=perf$proof
		elif [ ${#objs[@]} -gt 0 ]; then
			what="${objs[*]}"
			perf_make "${objs[@]/#/$obj/}" ||
				{ grep -E 'error|Error' "$log" | tail -20 >&2; die "$name: building $what failed"; }
		elif [ -n "$makefile" ]; then
			# perf's build changed: what every object needs first,
			# the libraries perf builds included
			what="prepare"
			perf_make prepare ||
				{ grep -E 'error|Error' "$log" | tail -20 >&2; die "$name: perf's prepare failed"; }
		elif [ -z "$lib" ]; then
			what="(no C file)"
		fi
		# a library patch: the library as it stands, and its unit tests
		if [ -n "$lib" ]; then
			what="libunwind-cookie and its tests${objs[*]:+, ${objs[*]}}"
			env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS make -s -C "$tree/tools/lib/unwind-cookie" \
				OUTPUT="$work/libunwind-cookie/" run-tests >> "$log" 2>&1 ||
				{ tail -20 "$log" >&2; die "$name: the library's build or tests failed"; }
		fi
		printf '  %-66.66s %s\n' "$name" "$what"
	done
	# the whole tree, byte for byte, is the one build/perf was built (and
	# linked) from: that build is the series' full build
	if ! diff -r -q --no-dereference --exclude=.git "$tree" "$buildtree" > "$work/tree.diff"; then
		cat "$work/tree.diff" >&2
		die "the series' result is not the tree build/perf was built from (above)"
	fi
	# one account of the series: Documentation/series.md is the one the
	# mails give, and the prose names mails by subject, not by a hook's
	# number, and leaves the counts to it
	if ! diff -u "$repo/Documentation/series.md" "$series/series.md" > "$work/series-md.diff"; then
		cat "$work/series-md.diff" >&2
		die "Documentation/series.md is not the account of this series: cp $series/series.md $repo/Documentation/"
	fi
	if (cd "$repo" && grep -nE '\bhooks? [0-9]+\b|\b[0-9]+ (hook )?(patches|mails)\b|\b00[0-9]{2}-' \
			--exclude=series.md README.md Documentation/*.md) >&2; then
		die "the lines above name a mail by a hook's number or count mails: name it by subject, leave counts to Documentation/series.md"
	fi
	echo "series-check: checkpatch.pl: no errors, $nr_accepted warnings, each of a kind patches/perf-7.2/checkpatch-accepted accepts"
	case $mode in
	touched) built="each compiles what it touches" ;;
	full) built="perf builds after each, each fix's test failing before its mail and passing with it ($(grep -c '^fix-tests: ok' "$work/fix-proofs" || true) of them)" ;;
	ends) built="perf builds at the end of each series" ;;
	fixes) built="perf builds after each mail of the first series, each of its fixes' tests failing before its mail and passing with it ($(grep -c '^fix-tests: ok' "$work/fix-proofs" || true) of them), and at the end of each series after it" ;;
	none) built="not built one by one (make series-check does)" ;;
	esac
	echo "series-check: ${#dirs[@]} series, ${#patches[@]} patches, each series with its cover letter, apply with git am, pass checkpatch.pl, $built; the result is the tree build/perf is built from"
}

# mail_subject MAIL: its Subject: header, continuation lines joined,
# without [PATCH n/m]
mail_subject() {
	awk '/^Subject: / { s = $0; getline; while (/^ /) { s = s $0; getline } print s; exit }' \
		"$1" | sed -e 's/^Subject: \[PATCH[^]]*\] //' -e 's/  */ /g'
}

# account HOOKDIR SERIES: the series as Documentation/series.md tells it,
# from the mails themselves: for each series its mails, each mail's
# subject, what it changes (git's diffstat line) and what it is made of
# (a hook patch of HOOKDIR, named by file, and how many of our files it
# adds whole)
account() {
	local hookdir=$1 series=$2 mail n=0 name files subject stat from
	local mails=() hooks=0 added=0 largest=0 largest_subject lines stages
	local rows=() dirs=() k=-1 nr cover

	mapfile -t dirs < <(cd "$series" && ls -d [0-9]*-*/ | sort -n | tr -d /)
	while read -r name files; do
		case $name in ''|'#'*) continue ;; esac
		if [ "$name" = series ]; then
			k=$((k + 1))
			[ -n "${dirs[$k]}" ] || die "account: no series $files in $series"
			mapfile -t mails < <(ls "${series}/${dirs[$k]}"/[0-9][0-9][0-9][0-9]-*.patch | sort | tail -n +2)
			cover=$(mail_subject "$series/${dirs[$k]}/0000-cover-letter.patch")
			rows+=("" "## ${dirs[$k]}: $cover" "" "${#mails[@]} patches and the cover letter" \
				"(\`build/series/${dirs[$k]}/\`)." ""
				"| # | subject | changes | made of |" "|---|---------|---------|---------|")
			nr=0
			continue
		fi
		mail=${mails[$nr]}
		n=$((n + 1)) nr=$((nr + 1))
		[ -n "$mail" ] || die "account: ${dirs[$k]} has fewer mails than its lines in $hookdir/series"
		subject=$(mail_subject "$mail")
		stat=$(grep -E '^ [0-9]+ files? changed' "$mail" | head -n 1 | sed 's/^ //')
		lines=$(echo "$stat" | sed -n 's/.* \([0-9][0-9]*\) insertions\{0,1\}(+).*/\1/p')
		lines=${lines:-0}
		if [ "$lines" -gt "$largest" ]; then
			largest=$lines largest_subject=$subject
		fi
		stages=$(printf '%s\n' $files | grep -c '^+' || true)
		set -- $(printf '%s\n' $files | grep -v '^+' || true)
		if [[ $name == *.msg ]]; then
			from="new files only ($# of ours)"
			[ "$stages" -eq 0 ] || from="changes to files of ours$([ $# -eq 0 ] || echo ", $# new")"
		else
			hooks=$((hooks + 1))
			from="hook \`$(basename "$(ls "$hookdir"/[0-9][0-9][0-9][0-9]-"$name")")\`"
			[ $# -eq 0 ] || from="$from and $# of our files"
			[ "$stages" -eq 0 ] || from="$from, changes to files of ours"
		fi
		added=$((added + $#))
		rows+=("| $nr | $subject | $stat | $from |")
	done < "$hookdir/series"
	[ $((k + 1)) -eq "${#dirs[@]}" ] || die "account: $series has more series than $hookdir/series"
	cat <<-END
	# The series, mail by mail

	Generated by \`make series\` (\`patches/series.sh account\`) from the
	mails it writes; \`make series-check\` fails when this file is not
	the one the series gives (\`cp build/series/series.md Documentation/\`).
	How the series are made and checked:
	[perf-build.md](perf-build.md#the-series-a-maintainer-gets).

	${#dirs[@]} series, each with its cover letter, applied in turn on
	pristine 7.2, $n patches in all: $hooks made from the hook patches of
	\`patches/perf-7.2/\` (changes to upstream's own files, each with the
	new files it is the first user of), $((n - hooks)) without a hook (new
	files only, or changes to files of ours an earlier mail added);
	together they add $added files of this repository's \`tools/perf/\`
	and \`tools/lib/unwind-cookie/\`.  The largest adds $largest lines:
	"$largest_subject".
	END
	printf '%s\n' "${rows[@]}"
}

case ${1:-} in
account) shift; [ $# -eq 2 ] || die "usage: series.sh account HOOKDIR SERIES"; account "$@" ;;
make)	shift; [ $# -eq 4 ] || die "usage: series.sh make PRISTINE HOOKDIR REPO OUT"; make_series "$@" ;;
check)	shift; [ $# -ge 4 ] || die "usage: series.sh check PRISTINE SERIES BUILDTREE WORK [full|touched|none]"; check_series "$@" ;;
*)	die "usage: series.sh make|check ..." ;;
esac
