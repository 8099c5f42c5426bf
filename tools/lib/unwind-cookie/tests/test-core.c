// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The library-wide bits: version string and the print hook. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unwind-cookie/core.h>

static int print_a(enum libunwind_cookie_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int print_b(enum libunwind_cookie_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 1;	/* differs from print_a so the two are never folded */
}

START_TEST(test_version)
{
	ck_assert_str_eq(libunwind_cookie_version(), "0.5");
	ck_assert_int_eq(LIBUNWIND_COOKIE_MAJOR_VERSION, 0);
	ck_assert_int_eq(LIBUNWIND_COOKIE_MINOR_VERSION, 5);
}
END_TEST

START_TEST(test_set_print)
{
	libunwind_cookie_print_fn_t def;

	/* The default printer is installed at start. */
	def = libunwind_cookie_set_print(print_a);
	ck_assert_ptr_nonnull(def);
	ck_assert_ptr_eq(libunwind_cookie_set_print(print_b), print_a);
	/* NULL silences, and is handed back as the previous function. */
	ck_assert_ptr_eq(libunwind_cookie_set_print(NULL), print_b);
	ck_assert_ptr_null(libunwind_cookie_set_print(def));
	ck_assert_ptr_eq(libunwind_cookie_set_print(def), def);
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("core");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_set_print);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(core_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
