/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_CALLCHAIN_H
#define __LIBUNWIND_COOKIE_CALLCHAIN_H

/*
 * Helpers for the callchains a 6.19 kernel writes: take a sample's chain
 * apart, sanitise a deferred user trace, and build the stitched chain in the
 * PERF_CONTEXT_KERNEL ... PERF_CONTEXT_USER ... form that every perf reads.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unwind-cookie/core.h>

#ifdef __cplusplus
extern "C" {
#endif

struct unwind_callchain_split {
	/*
	 * Everything before the deferred marker, context markers included
	 * (usually PERF_CONTEXT_KERNEL, k0, k1, ...). Points into the input.
	 */
	const uint64_t	*kernel;
	size_t		nr_kernel;
	/* The chain ends in PERF_CONTEXT_USER_DEFERRED, cookie. */
	bool		deferred;
	uint64_t	cookie;		/* 0 unless deferred */
};

/*
 * Take a sample's callchain apart. A chain without the deferred marker is
 * returned whole in @split->kernel with deferred false. Errors (-EINVAL):
 * the marker anywhere but second to last (a marker without a cookie, or
 * entries after the cookie), or a cookie of 0.
 */
LIBUNWIND_COOKIE_API int unwind_callchain__split(const uint64_t *ips, size_t nr,
						 struct unwind_callchain_split *split);

/*
 * Length of the usable prefix of a deferred user trace: it stops at the
 * first ip >= PERF_CONTEXT_MAX, which perf would take for a context marker.
 * A 0 is kept: the kernel's unwinder stores 0 return addresses like any
 * other, as in-place callchains carry them. *@nr_dropped (when not NULL)
 * gets how many entries were cut.
 */
LIBUNWIND_COOKIE_API size_t unwind_callchain__sanitize(const uint64_t *ips, size_t nr,
						       size_t *nr_dropped);

/* Entries unwind_callchain__stitch() writes for these inputs. */
LIBUNWIND_COOKIE_API size_t unwind_callchain__stitched_len(size_t nr_kernel, size_t nr_user);

/*
 * Write kernel..., PERF_CONTEXT_USER, user... into @out (capacity @cap
 * entries), where kernel is a split's kernel part, copied as is. With no
 * user entries no PERF_CONTEXT_USER is written. Returns the number of
 * entries written, -ENOSPC when @cap is too small (nothing is written), or
 * -EINVAL for a NULL array with a non-zero count. @kernel may be @out itself
 * and @user may follow it there: the stitch can be done in place.
 */
LIBUNWIND_COOKIE_API long unwind_callchain__stitch(const uint64_t *kernel, size_t nr_kernel,
						   const uint64_t *user, size_t nr_user,
						   uint64_t *out, size_t cap);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __LIBUNWIND_COOKIE_CALLCHAIN_H */
