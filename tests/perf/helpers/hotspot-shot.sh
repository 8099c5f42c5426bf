#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run inside an X server (xvfb-run): opens FILE in hotspot, switches to its
# Flame Graph tab and writes a screenshot of the screen to PNG once the
# flame graph is drawn (its area the same in two screenshots in a row), at most
# TIMEOUT seconds (default 90) after the start.  Exit 1 when it never is.
#
# usage: hotspot-shot.sh FILE PNG
#
# The tab is clicked where hotspot 1.3.0 (Debian 12) puts it in a window at
# the X server's origin, with no window manager: (343, 54).
set -u
file=$1 png=$2
timeout=${TIMEOUT:-90}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}

hotspot "$file" > "$png.log" 2>&1 &
pid=$!
trap 'kill $pid 2> /dev/null; wait $pid 2> /dev/null' EXIT
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
		mv -f "$png.new" "$png"
		exit 0
	fi
	prev=$sum
done
echo "hotspot-shot: no stable picture in $timeout s" >&2
exit 1
