# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# One package of Debian sid, pinned by version and sha256, through apt-get
# with a private source list and state directory ($apt_dir, build/apt-sid):
# the machine's apt configuration is never changed.  Sourced by
# tests/vm/fetch-kernel.sh (the 7.2 kernel) and tests/upstream/get-linux-7.2.sh
# (its sources), get-babeltrace2-ctf-writer.sh and tests/hotspot/build-perfparser.sh,
# which define say() and set apt_dir.
#
#   apt_private LINE, apt_private_get ARGS...
#	a private state in $apt_dir whose only source is LINE; apt-get on it
#
#   sid_deb PKG VER DEBNAME SHA256 LOG
#	prints the path of the .deb, downloaded before or now, once its
#	sha256 is the pinned one; fails (status 1, saying why) when sid no
#	longer has that version, the network fails or the checksum differs.
#	apt-get's output goes to $apt_dir/{update,download}-LOG.log.
#	MIRROR=URI replaces the machine's Debian mirror.

sid_sha() { sha256sum "$1" | cut -d' ' -f1; }

# The mirror of the machine's Debian suites (not -security), from its
# deb822 source file.
sid_mirror() {
	[ -z "${MIRROR:-}" ] || { echo "$MIRROR"; return; }
	f=/etc/apt/sources.list.d/debian.sources
	[ -r "$f" ] || { echo http://deb.debian.org/debian; return; }
	awk '
		/^[ \t]*$/ { if (uri != "" && !sec) { print uri; found = 1; exit }
			     uri = ""; sec = 0; next }
		/^URIs:/ { uri = $2 }
		/^Suites:/ { if ($0 ~ /-security/) sec = 1 }
		END { if (!found && uri != "" && !sec) print uri }
	' "$f" | head -n 1
}

# apt_private LINE: $apt_dir made a private apt state whose only source is LINE
apt_private() {
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	echo "$1" > "$apt_dir/sources.list"
}

# apt_private_get ARGS...: apt-get ARGS on the state of $apt_dir.
# Debug::NoLocking: the private lists need no lock, and the machine's
# own apt may be busy (make deps) meanwhile.
apt_private_get() {
	apt-get -o Dir::Etc::sourcelist="$apt_dir/sources.list" \
		-o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$apt_dir/lists" \
		-o Dir::Cache="$apt_dir/cache" \
		-o Acquire::Languages=none \
		-o APT::Sandbox::User=root \
		-o Debug::NoLocking=1 "$@"
}

sid_deb() {
	sid_pkg=$1 sid_ver=$2 sid_debname=$3 sid_want=$4 sid_log=$5
	sid_got=$apt_dir/$sid_debname
	if [ -f "$sid_got" ] && [ "$(sid_sha "$sid_got")" = "$sid_want" ]; then
		say "using $sid_got (downloaded before, sha256 ok)"
		echo "$sid_got"
		return 0
	fi
	rm -f "$sid_got"
	sid_m=$(sid_mirror)
	[ -n "$sid_m" ] || return 1
	apt_private "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $sid_m sid main"
	say "apt-get update of sid ($sid_m) into $apt_dir"
	if ! apt_private_get -q update > "$apt_dir/update-$sid_log.log" 2>&1; then
		say "apt-get update failed (see $apt_dir/update-$sid_log.log)"
		return 1
	fi
	grep '^[WE]:' "$apt_dir/update-$sid_log.log" | head -n 3 | sed 's/^/  /' >&2 || true
	say "apt-get download $sid_pkg=$sid_ver"
	if ! (cd "$apt_dir" && apt_private_get -q download "$sid_pkg=$sid_ver") \
		> "$apt_dir/download-$sid_log.log" 2>&1 || [ ! -f "$sid_got" ]; then
		say "sid has no $sid_pkg=$sid_ver any more, or the download failed (see $apt_dir/download-$sid_log.log)"
		return 1
	fi
	sid_s=$(sid_sha "$sid_got")
	if [ "$sid_s" != "$sid_want" ]; then
		say "$sid_got from sid has sha256 $sid_s, not $sid_want: not used"
		rm -f "$sid_got"
		return 1
	fi
	say "downloaded $sid_debname from sid, sha256 ok"
	echo "$sid_got"
}
