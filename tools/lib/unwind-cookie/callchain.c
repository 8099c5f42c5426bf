// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Callchain helpers. A 6.19 sample ends in PERF_CONTEXT_USER_DEFERRED,
 * cookie; the stitched form replaces that tail with PERF_CONTEXT_USER and
 * the user ips, which is what every perf release understands.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unwind-cookie/cookie.h>
#include <unwind-cookie/callchain.h>

int unwind_callchain__split(const uint64_t *ips, size_t nr, struct unwind_callchain_split *split)
{
	size_t i;

	if (!split || (!ips && nr))
		return -EINVAL;

	/*
	 * Only the first marker counts: the kernel writes it once, right
	 * before the cookie, so one found earlier means a malformed chain.
	 * Stopping there also lets a cookie that happens to equal the
	 * marker's value through.
	 */
	for (i = 0; i < nr; i++) {
		if (ips[i] == UNWIND_COOKIE_CONTEXT_USER_DEFERRED)
			break;
	}

	if (i == nr) {
		split->kernel = ips;
		split->nr_kernel = nr;
		split->deferred = false;
		split->cookie = 0;
		return 0;
	}

	/* The marker must be second to last and the cookie must be real. */
	if (i + 2 != nr || !ips[nr - 1])
		return -EINVAL;

	split->kernel = ips;
	split->nr_kernel = i;
	split->deferred = true;
	split->cookie = ips[nr - 1];
	return 0;
}

size_t unwind_callchain__sanitize(const uint64_t *ips, size_t nr, size_t *nr_dropped)
{
	size_t len = 0;

	/*
	 * The kernel's frame-pointer unwinder stores every return address it
	 * reads, 0 included (the outermost frame's, or one in the middle with
	 * more frames after it), as in-place callchains do: those are kept.
	 * Anything in the marker range would be read as a context switch by
	 * perf (and make perf 6.1 drop the whole chain), so the trace is cut
	 * before it.
	 */
	if (ips) {
		while (len < nr && ips[len] < UNWIND_COOKIE_CONTEXT_MAX)
			len++;
	}

	if (nr_dropped)
		*nr_dropped = nr - len;
	return len;
}

size_t unwind_callchain__stitched_len(size_t nr_kernel, size_t nr_user)
{
	if (!nr_user)
		return nr_kernel;
	/* Saturate rather than wrap: no buffer can hold SIZE_MAX entries. */
	if (nr_user > SIZE_MAX - 1 - nr_kernel)
		return SIZE_MAX;
	return nr_kernel + 1 + nr_user;
}

long unwind_callchain__stitch(const uint64_t *kernel, size_t nr_kernel, const uint64_t *user,
			      size_t nr_user, uint64_t *out, size_t cap)
{
	size_t len = unwind_callchain__stitched_len(nr_kernel, nr_user);

	if ((!kernel && nr_kernel) || (!user && nr_user) || (!out && cap))
		return -EINVAL;
	/* A saturated length, or one a long cannot return, never fits. */
	if (len > cap || len > LONG_MAX)
		return -ENOSPC;

	/*
	 * memmove, user part first: a caller may stitch in place, with
	 * @kernel being @out itself and @user sitting in @out right behind
	 * it; moving the user entries up before the marker goes in keeps
	 * both sources intact until they are read.
	 */
	if (nr_user) {
		memmove(out + nr_kernel + 1, user, nr_user * sizeof(*out));
		out[nr_kernel] = UNWIND_COOKIE_CONTEXT_USER;
	}
	if (nr_kernel)
		memmove(out, kernel, nr_kernel * sizeof(*out));
	return (long)len;
}
