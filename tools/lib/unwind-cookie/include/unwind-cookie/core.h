/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_CORE_H
#define __LIBUNWIND_COOKIE_CORE_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef LIBUNWIND_COOKIE_API
#define LIBUNWIND_COOKIE_API __attribute__((visibility("default")))
#endif

#define LIBUNWIND_COOKIE_MAJOR_VERSION	0
#define LIBUNWIND_COOKIE_MINOR_VERSION	5

enum libunwind_cookie_print_level {
	LIBUNWIND_COOKIE_ERR,
	LIBUNWIND_COOKIE_WARN,
	LIBUNWIND_COOKIE_INFO,
	LIBUNWIND_COOKIE_DEBUG,
};

typedef int (*libunwind_cookie_print_fn_t)(enum libunwind_cookie_print_level level,
					   const char *fmt, va_list ap);

/*
 * Route the library's warnings (for example "memory cap reached") to the
 * caller. The default prints warnings and errors to stderr. Passing NULL
 * silences the library. Returns the previous function.
 */
LIBUNWIND_COOKIE_API libunwind_cookie_print_fn_t
libunwind_cookie_set_print(libunwind_cookie_print_fn_t fn);

LIBUNWIND_COOKIE_API const char *libunwind_cookie_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __LIBUNWIND_COOKIE_CORE_H */
