// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <unwind-cookie/core.h>
#include <internal/lib.h>

#define STR(x) #x
#define XSTR(x) STR(x)

static int default_print(enum libunwind_cookie_print_level level, const char *fmt, va_list ap)
{
	if (level > LIBUNWIND_COOKIE_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static libunwind_cookie_print_fn_t print_fn = default_print;

libunwind_cookie_print_fn_t libunwind_cookie_set_print(libunwind_cookie_print_fn_t fn)
{
	libunwind_cookie_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void libunwind_cookie_print(enum libunwind_cookie_print_level level, const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

const char *libunwind_cookie_version(void)
{
	return XSTR(LIBUNWIND_COOKIE_MAJOR_VERSION) "." XSTR(LIBUNWIND_COOKIE_MINOR_VERSION);
}
