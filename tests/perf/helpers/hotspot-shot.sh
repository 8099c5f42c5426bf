#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run inside an X server (xvfb-run): opens FILE in hotspot, switches to its
# Flame Graph tab and writes a screenshot of the screen to PNG once the
# flame graph is drawn, at most TIMEOUT seconds (default 120) after the
# start.  Exit 1 when it never is.
#
# usage: hotspot-shot.sh FILE PNG         (HOTSPOT_ARGS: more of hotspot's options)
#        hotspot-shot.sh --full-rows PNG   the flame graph's pixel rows at
#                                          least 80% coloured (its bars)
#
# Drawn means: the flame graph's area is the same in two screenshots in a
# row and has a row of bars across it (a flame graph's root spans it);
# still without one, the graph is scrolled down (its root is at the
# bottom) and looked at again.
# Stable alone is not enough: while hotspot loads a file its page of
# "Loading Results..." can stay the same for seconds on a busy machine.
# The tab is clicked where hotspot 1.3.0 (Debian 12) puts it in a window at
# the X server's origin, with no window manager: (343, 54).  hotspot keeps
# its settings (last tab, paths, ...) in a configuration and cache of this
# run's own, not the user's.
set -u

# full_rows PNG: per pixel row of the flame graph's area, its share of
# coloured (saturated) pixels, 0 to 65535; the rows above 80%
full_rows() {
	convert "$1" -crop 1020x340+40+130 +repage -colorspace HSL -channel G -separate \
		+channel -threshold 30% -scale '1x340!' -depth 16 txt:- |
		sed -nE 's/^0,([0-9]+): \(([0-9]+)[,)].*/\2/p' |
		awk '$1 > 52428 { n++ } END { print n + 0 }'
}
if [ "${1:-}" = --full-rows ]; then
	full_rows "$2"
	exit
fi

file=$1 png=$2
timeout=${TIMEOUT:-120}
home=$(mktemp -d) || exit 1
export XDG_RUNTIME_DIR=$home/run XDG_CONFIG_HOME=$home/config XDG_CACHE_HOME=$home/cache \
	XDG_DATA_HOME=$home/data
mkdir -m 700 "$XDG_RUNTIME_DIR"

# shellcheck disable=SC2086 # HOTSPOT_ARGS: options, split
hotspot ${HOTSPOT_ARGS:-} "$file" > "$png.log" 2>&1 &
pid=$!
trap 'kill $pid 2> /dev/null; wait $pid 2> /dev/null; rm -rf "$home"' EXIT
xdotool search --sync --onlyvisible --name hotspot > /dev/null 2>&1 &
prev= start=$SECONDS
while [ $((SECONDS - start)) -lt "$timeout" ]; do
	sleep 2
	kill -0 $pid 2> /dev/null || { echo "hotspot exited" >&2; exit 1; }
	xdotool mousemove 343 54 click 1 2> /dev/null
	sleep 1
	import -window root "png:$png.new" 2> /dev/null || continue
	# the flame graph's area only: a text cursor blinks elsewhere
	sum=$(convert "png:$png.new" -crop 1020x340+40+130 rgb:- 2> /dev/null | md5sum)
	if [ "$sum" = "$prev" ]; then
		if [ "$(full_rows "$png.new")" -gt 0 ]; then
			mv -f "$png.new" "$png"
			exit 0
		fi
		# drawn and still, but no root row in view: a graph taller than
		# its view that hotspot left scrolled to the top (it scrolls to
		# the root when the graph comes before the tab is shown, not
		# always after).  Scroll it down, and look again.
		xdotool mousemove 540 300 click --repeat 30 5 2> /dev/null
	fi
	prev=$sum
done
echo "hotspot-shot: no flame graph drawn in $timeout s" >&2
exit 1
