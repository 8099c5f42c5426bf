/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_COOKIE_H
#define __LIBUNWIND_COOKIE_COOKIE_H

/*
 * The deferred user callchain ABI of Linux 6.19: constants and the cookie
 * that joins a sample to the PERF_RECORD_CALLCHAIN_DEFERRED record carrying
 * its user stack.
 */

#include <stdbool.h>
#include <stdint.h>
#include <unwind-cookie/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* struct perf_event_header.type of the record carrying the user stack. */
#define UNWIND_COOKIE_RECORD_CALLCHAIN_DEFERRED	22

/* Callchain context markers (enum perf_callchain_context). */
#define UNWIND_COOKIE_CONTEXT_HV		((uint64_t)-32)
#define UNWIND_COOKIE_CONTEXT_KERNEL		((uint64_t)-128)
#define UNWIND_COOKIE_CONTEXT_USER		((uint64_t)-512)
#define UNWIND_COOKIE_CONTEXT_USER_DEFERRED	((uint64_t)-640)
#define UNWIND_COOKIE_CONTEXT_GUEST		((uint64_t)-2048)
#define UNWIND_COOKIE_CONTEXT_GUEST_KERNEL	((uint64_t)-2176)
#define UNWIND_COOKIE_CONTEXT_GUEST_USER	((uint64_t)-2560)
#define UNWIND_COOKIE_CONTEXT_MAX		((uint64_t)-4095)

/* Bits of the perf_event_attr flags word (the u64 at attr offset 40). */
#define UNWIND_COOKIE_ATTR_BIT_DEFER_CALLCHAIN	38
#define UNWIND_COOKIE_ATTR_BIT_DEFER_OUTPUT	39
#define UNWIND_COOKIE_ATTR_DEFER_CALLCHAIN	(1ULL << UNWIND_COOKIE_ATTR_BIT_DEFER_CALLCHAIN)
#define UNWIND_COOKIE_ATTR_DEFER_OUTPUT		(1ULL << UNWIND_COOKIE_ATTR_BIT_DEFER_OUTPUT)

/* Deepest deferred user trace a 64-bit kernel writes. */
#define UNWIND_COOKIE_MAX_DEFERRED_DEPTH	510

/*
 * How a cookie's 64 bits are laid out. The producer's byte order matters
 * even after a reader byte-swaps the u64: the kernel builds the cookie from
 * a union of two u32, so the halves trade places between host orders.
 */
enum unwind_cookie_layout {
	/* Merged 6.19 layout, little-endian host: cnt << 32 | (cpu + 1). */
	UNWIND_COOKIE_LAYOUT_MERGED_LE,
	/* Merged 6.19 layout, big-endian host: (cpu + 1) << 32 | cnt. */
	UNWIND_COOKIE_LAYOUT_MERGED_BE,
	/* Seed series v4 (never released): cpu << 48 | 48-bit counter. */
	UNWIND_COOKIE_LAYOUT_SEED,
	UNWIND_COOKIE_LAYOUT__MAX,
};

struct unwind_cookie_fields {
	uint32_t cpu;		/* the CPU that assigned the cookie, from 0 */
	uint64_t counter;	/* that CPU's entry counter */
};

/* "merged-le", "merged-be", "seed"; NULL for an unknown value. */
LIBUNWIND_COOKIE_API const char *unwind_cookie__layout_name(enum unwind_cookie_layout layout);

/*
 * Build a cookie. -EINVAL when the fields cannot be expressed in @layout:
 * merged layouts need an odd 32-bit counter and cpu < UINT32_MAX; the seed
 * layout needs cpu < 65536, counter < 2^48 and a non-zero result.
 */
LIBUNWIND_COOKIE_API int unwind_cookie__encode(enum unwind_cookie_layout layout, uint32_t cpu,
					       uint64_t counter, uint64_t *cookie);

/*
 * Split a cookie into its fields. -EINVAL when @cookie is not a valid cookie
 * of @layout: 0 never is; merged cookies need an odd counter and a non-zero
 * cpu + 1 half.
 */
LIBUNWIND_COOKIE_API int unwind_cookie__decode(enum unwind_cookie_layout layout, uint64_t cookie,
					       struct unwind_cookie_fields *fields);

LIBUNWIND_COOKIE_API bool unwind_cookie__valid(enum unwind_cookie_layout layout, uint64_t cookie);

/* True when @flags (the attr flags word) sets either defer bit. */
static inline bool unwind_cookie__attr_defers(uint64_t flags)
{
	return flags & (UNWIND_COOKIE_ATTR_DEFER_CALLCHAIN | UNWIND_COOKIE_ATTR_DEFER_OUTPUT);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __LIBUNWIND_COOKIE_COOKIE_H */
