#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# mix.sh BINDIR [SECONDS]: the system-wide mix, all at once for about
# SECONDS (default 2): many threads, fork/exit churn, an exec loop, threads
# blocked in the kernel, and a shell loop exec'ing /bin/true.
bin=${1:?usage: mix.sh BINDIR [SECONDS]}
s=${2:-2}
"$bin/threads" 6 "$s" &
"$bin/forker" "$s" 2 &
"$bin/execloop" 2 &
"$bin/blocker" "$(awk "BEGIN { print $s / 4 }")" &
i=0
while [ $i -lt 4 ]; do /bin/true; i=$((i + 1)); done
wait
