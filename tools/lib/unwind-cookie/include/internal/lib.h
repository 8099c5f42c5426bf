/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_INTERNAL_LIB_H
#define __LIBUNWIND_COOKIE_INTERNAL_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <unwind-cookie/core.h>

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

__printf(2, 3)
void libunwind_cookie_print(enum libunwind_cookie_print_level level, const char *fmt, ...);

#define __pr(level, fmt, ...) \
	libunwind_cookie_print(level, "libunwind-cookie: " fmt, ##__VA_ARGS__)

#define pr_err(fmt, ...)	__pr(LIBUNWIND_COOKIE_ERR, fmt, ##__VA_ARGS__)
#define pr_warning(fmt, ...)	__pr(LIBUNWIND_COOKIE_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	__pr(LIBUNWIND_COOKIE_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...)	__pr(LIBUNWIND_COOKIE_DEBUG, fmt, ##__VA_ARGS__)

/*
 * Size-versioned opts, as libbpf takes them: a caller built against a newer
 * header may pass a larger struct, but only with the fields this library
 * does not know zero; anything else asks for what it cannot do.
 */
static inline bool uc_opts_tail_zero(const void *opts, size_t sz, size_t known)
{
	const unsigned char *p = opts;
	size_t i;

	for (i = known; i < sz; i++) {
		if (p[i])
			return false;
	}
	return true;
}

#endif /* __LIBUNWIND_COOKIE_INTERNAL_LIB_H */
