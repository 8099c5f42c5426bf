// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Callchain split, sanitize and stitch against chains shaped like the ones
 * a 6.19 kernel writes, and against the malformed ones it must reject.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unwind-cookie/cookie.h>
#include <unwind-cookie/callchain.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define CTX_KERNEL	UNWIND_COOKIE_CONTEXT_KERNEL
#define CTX_USER	UNWIND_COOKIE_CONTEXT_USER
#define CTX_DEFERRED	UNWIND_COOKIE_CONTEXT_USER_DEFERRED

/* The x86 example cookie of ABI.md. */
#define COOKIE		0xb00000006ULL

/* A canary the functions must not touch past what they report. */
#define POISON		0x5a5a5a5a5a5a5a5aULL

static void assert_ips_eq(const uint64_t *got, const uint64_t *want, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		ck_assert_msg(got[i] == want[i], "entry %zu: 0x%llx, want 0x%llx", i,
			      (unsigned long long)got[i], (unsigned long long)want[i]);
}

/* Split */

START_TEST(test_split_kernel_mode)
{
	const uint64_t ips[] = { CTX_KERNEL, 0xffffffff81000010ULL, 0xffffffff81000020ULL,
				 CTX_DEFERRED, COOKIE };
	struct unwind_callchain_split split;

	ck_assert_int_eq(unwind_callchain__split(ips, ARRAY_SIZE(ips), &split), 0);
	ck_assert(split.deferred);
	ck_assert_uint_eq(split.cookie, COOKIE);
	/* Points into the input, markers included. */
	ck_assert_ptr_eq(split.kernel, ips);
	ck_assert_uint_eq(split.nr_kernel, 3);
	ck_assert_uint_eq(split.kernel[0], CTX_KERNEL);
	ck_assert_uint_eq(split.kernel[2], 0xffffffff81000020ULL);
}
END_TEST

START_TEST(test_split_user_mode)
{
	/* Taken in user mode, or with exclude_callchain_kernel. */
	const uint64_t ips[] = { CTX_DEFERRED, 0x400000079ULL };
	struct unwind_callchain_split split;

	ck_assert_int_eq(unwind_callchain__split(ips, ARRAY_SIZE(ips), &split), 0);
	ck_assert(split.deferred);
	ck_assert_uint_eq(split.cookie, 0x400000079ULL);
	ck_assert_ptr_eq(split.kernel, ips);
	ck_assert_uint_eq(split.nr_kernel, 0);
}
END_TEST

START_TEST(test_split_not_deferred)
{
	/* A kernel thread: kernel part only. */
	const uint64_t kthread[] = { CTX_KERNEL, 0xffffffff81000010ULL };
	/* Unwound in place, the way older kernels write it. */
	const uint64_t inplace[] = { CTX_KERNEL, 0xffffffff81000010ULL, CTX_USER, 0x401000,
				     0x401100 };
	struct unwind_callchain_split split;

	memset(&split, 0xff, sizeof(split));
	ck_assert_int_eq(unwind_callchain__split(kthread, ARRAY_SIZE(kthread), &split), 0);
	ck_assert(!split.deferred);
	ck_assert_uint_eq(split.cookie, 0);
	ck_assert_ptr_eq(split.kernel, kthread);
	ck_assert_uint_eq(split.nr_kernel, 2);

	memset(&split, 0xff, sizeof(split));
	ck_assert_int_eq(unwind_callchain__split(inplace, ARRAY_SIZE(inplace), &split), 0);
	ck_assert(!split.deferred);
	ck_assert_uint_eq(split.cookie, 0);
	ck_assert_ptr_eq(split.kernel, inplace);
	ck_assert_uint_eq(split.nr_kernel, 5);
}
END_TEST

START_TEST(test_split_empty)
{
	const uint64_t one = 0;
	struct unwind_callchain_split split;

	ck_assert_int_eq(unwind_callchain__split(NULL, 0, &split), 0);
	ck_assert(!split.deferred);
	ck_assert_uint_eq(split.nr_kernel, 0);
	ck_assert_uint_eq(split.cookie, 0);

	ck_assert_int_eq(unwind_callchain__split(&one, 0, &split), 0);
	ck_assert_ptr_eq(split.kernel, &one);
	ck_assert_uint_eq(split.nr_kernel, 0);
}
END_TEST

START_TEST(test_split_marker_without_cookie)
{
	const uint64_t alone[] = { CTX_DEFERRED };
	const uint64_t last[] = { CTX_KERNEL, 0xffffffff81000010ULL, CTX_DEFERRED };
	struct unwind_callchain_split split;

	ck_assert_int_eq(unwind_callchain__split(alone, ARRAY_SIZE(alone), &split), -EINVAL);
	ck_assert_int_eq(unwind_callchain__split(last, ARRAY_SIZE(last), &split), -EINVAL);
}
END_TEST

START_TEST(test_split_marker_not_second_to_last)
{
	/* Entries after the cookie. */
	const uint64_t trailing[] = { CTX_KERNEL, 0xffffffff81000010ULL, CTX_DEFERRED, COOKIE,
				      0x401000 };
	/* Marker first, then a user chain. */
	const uint64_t early[] = { CTX_DEFERRED, COOKIE, CTX_USER, 0x401000 };
	/* Two deferred tails. */
	const uint64_t twice[] = { CTX_DEFERRED, COOKIE, CTX_DEFERRED, COOKIE };
	struct unwind_callchain_split split;

	ck_assert_int_eq(unwind_callchain__split(trailing, ARRAY_SIZE(trailing), &split),
			 -EINVAL);
	ck_assert_int_eq(unwind_callchain__split(early, ARRAY_SIZE(early), &split), -EINVAL);
	ck_assert_int_eq(unwind_callchain__split(twice, ARRAY_SIZE(twice), &split), -EINVAL);
}
END_TEST

START_TEST(test_split_cookie_zero)
{
	const uint64_t kernel[] = { CTX_KERNEL, 0xffffffff81000010ULL, CTX_DEFERRED, 0 };
	const uint64_t user[] = { CTX_DEFERRED, 0 };
	struct unwind_callchain_split split;

	ck_assert_int_eq(unwind_callchain__split(kernel, ARRAY_SIZE(kernel), &split), -EINVAL);
	ck_assert_int_eq(unwind_callchain__split(user, ARRAY_SIZE(user), &split), -EINVAL);
}
END_TEST

START_TEST(test_split_null)
{
	const uint64_t ips[] = { CTX_DEFERRED, COOKIE };
	struct unwind_callchain_split split;

	ck_assert_int_eq(unwind_callchain__split(ips, ARRAY_SIZE(ips), NULL), -EINVAL);
	ck_assert_int_eq(unwind_callchain__split(NULL, 2, &split), -EINVAL);
}
END_TEST

/* Sanitize */

START_TEST(test_sanitize_clean)
{
	const uint64_t ips[] = { 0x401000, 0x401100, 0x7f0000001000ULL };
	size_t dropped = 99;

	ck_assert_uint_eq(unwind_callchain__sanitize(ips, ARRAY_SIZE(ips), &dropped), 3);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(unwind_callchain__sanitize(ips, ARRAY_SIZE(ips), NULL), 3);
}
END_TEST

/* The kernel's unwinder stores 0 return addresses: they are entries. */
START_TEST(test_sanitize_zero)
{
	const uint64_t middle[] = { 0x401000, 0x401100, 0, 0x401200, 0x401300 };
	const uint64_t first[] = { 0, 0x401000 };
	const uint64_t outermost[] = { 0x401000, 0x401100, 0 };
	const uint64_t only[] = { 0 };
	const uint64_t then_junk[] = { 0x401000, 0, 0xfffffffffffffe98ULL, 0x401100 };
	size_t dropped = 99;

	ck_assert_uint_eq(unwind_callchain__sanitize(middle, ARRAY_SIZE(middle), &dropped), 5);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(unwind_callchain__sanitize(first, ARRAY_SIZE(first), &dropped), 2);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(unwind_callchain__sanitize(outermost, ARRAY_SIZE(outermost), &dropped),
			  3);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(unwind_callchain__sanitize(only, ARRAY_SIZE(only), &dropped), 1);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(unwind_callchain__sanitize(then_junk, ARRAY_SIZE(then_junk), &dropped),
			  2);
	ck_assert_uint_eq(dropped, 2);
}
END_TEST

START_TEST(test_sanitize_marker_range)
{
	/* The junk ABI.md quotes from a library without frame pointers. */
	const uint64_t junk[] = { 0x401000, 0x401100, 0x401200, 0xfffffffffffffe98ULL,
				  0x401300 };
	/* PERF_CONTEXT_MAX itself is cut; one below it is a (kernel-range) ip. */
	const uint64_t at_max[] = { 0x401000, UNWIND_COOKIE_CONTEXT_MAX, 0x401100 };
	const uint64_t below_max[] = { 0x401000, UNWIND_COOKIE_CONTEXT_MAX - 1, 0x401100 };
	const uint64_t marker[] = { CTX_USER, 0x401000 };
	const uint64_t top[] = { 0x401000, 0x401100, UINT64_MAX };
	size_t dropped = 99;

	ck_assert_uint_eq(unwind_callchain__sanitize(junk, ARRAY_SIZE(junk), &dropped), 3);
	ck_assert_uint_eq(dropped, 2);
	ck_assert_uint_eq(unwind_callchain__sanitize(at_max, ARRAY_SIZE(at_max), &dropped), 1);
	ck_assert_uint_eq(dropped, 2);
	ck_assert_uint_eq(unwind_callchain__sanitize(below_max, ARRAY_SIZE(below_max), &dropped),
			  3);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(unwind_callchain__sanitize(marker, ARRAY_SIZE(marker), &dropped), 0);
	ck_assert_uint_eq(dropped, 2);
	ck_assert_uint_eq(unwind_callchain__sanitize(top, ARRAY_SIZE(top), &dropped), 2);
	ck_assert_uint_eq(dropped, 1);
}
END_TEST

START_TEST(test_sanitize_empty)
{
	const uint64_t ips[] = { 0x401000 };
	size_t dropped = 99;

	ck_assert_uint_eq(unwind_callchain__sanitize(NULL, 0, &dropped), 0);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(unwind_callchain__sanitize(ips, 0, &dropped), 0);
	ck_assert_uint_eq(dropped, 0);
}
END_TEST

START_TEST(test_sanitize_max_depth)
{
	uint64_t ips[UNWIND_COOKIE_MAX_DEFERRED_DEPTH];
	size_t dropped = 99;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ips); i++)
		ips[i] = 0x400000 + i * 0x10;
	ck_assert_uint_eq(unwind_callchain__sanitize(ips, ARRAY_SIZE(ips), &dropped), 510);
	ck_assert_uint_eq(dropped, 0);

	ips[509] = 0;
	ck_assert_uint_eq(unwind_callchain__sanitize(ips, ARRAY_SIZE(ips), &dropped), 510);
	ck_assert_uint_eq(dropped, 0);

	ips[509] = UNWIND_COOKIE_CONTEXT_MAX;
	ck_assert_uint_eq(unwind_callchain__sanitize(ips, ARRAY_SIZE(ips), &dropped), 509);
	ck_assert_uint_eq(dropped, 1);
}
END_TEST

/* Stitch */

START_TEST(test_stitched_len)
{
	ck_assert_uint_eq(unwind_callchain__stitched_len(0, 0), 0);
	ck_assert_uint_eq(unwind_callchain__stitched_len(3, 0), 3);
	ck_assert_uint_eq(unwind_callchain__stitched_len(0, 2), 3);
	ck_assert_uint_eq(unwind_callchain__stitched_len(3, 2), 6);
	ck_assert_uint_eq(unwind_callchain__stitched_len(3, 510), 514);
}
END_TEST

START_TEST(test_stitch_kernel_and_user)
{
	const uint64_t sample[] = { CTX_KERNEL, 0xffffffff81000010ULL, 0xffffffff81000020ULL,
				    CTX_DEFERRED, COOKIE };
	const uint64_t user[] = { 0x401000, 0x401100 };
	const uint64_t want[] = { CTX_KERNEL, 0xffffffff81000010ULL, 0xffffffff81000020ULL,
				  CTX_USER, 0x401000, 0x401100, POISON };
	struct unwind_callchain_split split;
	uint64_t out[7];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(out); i++)
		out[i] = POISON;
	ck_assert_int_eq(unwind_callchain__split(sample, ARRAY_SIZE(sample), &split), 0);
	ck_assert_int_eq(unwind_callchain__stitch(split.kernel, split.nr_kernel, user,
						  ARRAY_SIZE(user), out, 6), 6);
	assert_ips_eq(out, want, ARRAY_SIZE(want));
}
END_TEST

START_TEST(test_stitch_user_only)
{
	const uint64_t user[] = { 0x401000, 0x401100, 0x401200 };
	const uint64_t want[] = { CTX_USER, 0x401000, 0x401100, 0x401200 };
	uint64_t out[4];

	ck_assert_int_eq(unwind_callchain__stitch(NULL, 0, user, ARRAY_SIZE(user), out,
						  ARRAY_SIZE(out)), 4);
	assert_ips_eq(out, want, ARRAY_SIZE(want));
}
END_TEST

START_TEST(test_stitch_no_user)
{
	/* An unwind that failed, or one sanitised down to nothing. */
	const uint64_t kernel[] = { CTX_KERNEL, 0xffffffff81000010ULL };
	const uint64_t user[] = { 0 };
	const uint64_t want[] = { CTX_KERNEL, 0xffffffff81000010ULL, POISON, POISON };
	uint64_t out[4] = { POISON, POISON, POISON, POISON };

	ck_assert_int_eq(unwind_callchain__stitch(kernel, ARRAY_SIZE(kernel), user, 0, out,
						  ARRAY_SIZE(out)), 2);
	assert_ips_eq(out, want, ARRAY_SIZE(want));

	/* No PERF_CONTEXT_USER when there are no user entries, even with room. */
	ck_assert_int_eq(unwind_callchain__stitch(kernel, ARRAY_SIZE(kernel), NULL, 0, out,
						  ARRAY_SIZE(out)), 2);
	assert_ips_eq(out, want, ARRAY_SIZE(want));

	/* Nothing at all. */
	ck_assert_int_eq(unwind_callchain__stitch(NULL, 0, NULL, 0, out, ARRAY_SIZE(out)), 0);
	ck_assert_int_eq(unwind_callchain__stitch(NULL, 0, NULL, 0, NULL, 0), 0);
	assert_ips_eq(out, want, ARRAY_SIZE(want));
}
END_TEST

START_TEST(test_stitch_enospc)
{
	const uint64_t kernel[] = { CTX_KERNEL, 0xffffffff81000010ULL };
	const uint64_t user[] = { 0x401000, 0x401100 };
	const uint64_t want[] = { POISON, POISON, POISON, POISON, POISON };
	uint64_t out[5] = { POISON, POISON, POISON, POISON, POISON };

	/* Needs 5: one short fails without writing anything. */
	ck_assert_int_eq(unwind_callchain__stitch(kernel, 2, user, 2, out, 4), -ENOSPC);
	ck_assert_int_eq(unwind_callchain__stitch(kernel, 2, user, 2, out, 0), -ENOSPC);
	ck_assert_int_eq(unwind_callchain__stitch(kernel, 2, user, 2, NULL, 0), -ENOSPC);
	ck_assert_int_eq(unwind_callchain__stitch(kernel, 2, NULL, 0, out, 1), -ENOSPC);
	ck_assert_int_eq(unwind_callchain__stitch(NULL, 0, user, 2, out, 2), -ENOSPC);
	assert_ips_eq(out, want, ARRAY_SIZE(want));

	/* Exactly enough. */
	ck_assert_int_eq(unwind_callchain__stitch(kernel, 2, user, 2, out, 5), 5);
}
END_TEST

START_TEST(test_stitch_einval)
{
	const uint64_t ips[] = { 0x401000 };
	uint64_t out[4];

	ck_assert_int_eq(unwind_callchain__stitch(NULL, 1, ips, 1, out, 4), -EINVAL);
	ck_assert_int_eq(unwind_callchain__stitch(ips, 1, NULL, 1, out, 4), -EINVAL);
	ck_assert_int_eq(unwind_callchain__stitch(ips, 1, ips, 1, NULL, 4), -EINVAL);
}
END_TEST

START_TEST(test_stitch_in_place)
{
	/*
	 * The sample's buffer reused: kernel part at the start, the user
	 * trace copied right behind it where the marker and cookie were.
	 */
	uint64_t buf[8] = { CTX_KERNEL, 0xffffffff81000010ULL, 0x401000, 0x401100, 0x401200 };
	const uint64_t want[] = { CTX_KERNEL, 0xffffffff81000010ULL, CTX_USER, 0x401000,
				  0x401100, 0x401200 };

	ck_assert_int_eq(unwind_callchain__stitch(buf, 2, buf + 2, 3, buf, ARRAY_SIZE(buf)), 6);
	assert_ips_eq(buf, want, ARRAY_SIZE(want));
}
END_TEST

/* The whole path: split the sample, sanitise the record, stitch. */
START_TEST(test_split_sanitize_stitch)
{
	const uint64_t sample[] = { CTX_KERNEL, 0xffffffff81000010ULL, CTX_DEFERRED, COOKIE };
	const uint64_t record[] = { 0x401000, 0x401100, 0xfffffffffffffe98ULL, 0x401200 };
	const uint64_t want[] = { CTX_KERNEL, 0xffffffff81000010ULL, CTX_USER, 0x401000,
				  0x401100 };
	struct unwind_callchain_split split;
	uint64_t out[8];
	size_t nr_user, dropped;
	long n;

	ck_assert_int_eq(unwind_callchain__split(sample, ARRAY_SIZE(sample), &split), 0);
	nr_user = unwind_callchain__sanitize(record, ARRAY_SIZE(record), &dropped);
	ck_assert_uint_eq(nr_user, 2);
	ck_assert_uint_eq(dropped, 2);
	ck_assert_uint_eq(unwind_callchain__stitched_len(split.nr_kernel, nr_user), 5);
	n = unwind_callchain__stitch(split.kernel, split.nr_kernel, record, nr_user, out,
				     ARRAY_SIZE(out));
	ck_assert_int_eq(n, 5);
	assert_ips_eq(out, want, ARRAY_SIZE(want));
}
END_TEST

static Suite *callchain_suite(void)
{
	Suite *s = suite_create("callchain");
	TCase *tc;

	tc = tcase_create("split");
	tcase_add_test(tc, test_split_kernel_mode);
	tcase_add_test(tc, test_split_user_mode);
	tcase_add_test(tc, test_split_not_deferred);
	tcase_add_test(tc, test_split_empty);
	tcase_add_test(tc, test_split_marker_without_cookie);
	tcase_add_test(tc, test_split_marker_not_second_to_last);
	tcase_add_test(tc, test_split_cookie_zero);
	tcase_add_test(tc, test_split_null);
	suite_add_tcase(s, tc);

	tc = tcase_create("sanitize");
	tcase_add_test(tc, test_sanitize_clean);
	tcase_add_test(tc, test_sanitize_zero);
	tcase_add_test(tc, test_sanitize_marker_range);
	tcase_add_test(tc, test_sanitize_empty);
	tcase_add_test(tc, test_sanitize_max_depth);
	suite_add_tcase(s, tc);

	tc = tcase_create("stitch");
	tcase_add_test(tc, test_stitched_len);
	tcase_add_test(tc, test_stitch_kernel_and_user);
	tcase_add_test(tc, test_stitch_user_only);
	tcase_add_test(tc, test_stitch_no_user);
	tcase_add_test(tc, test_stitch_enospc);
	tcase_add_test(tc, test_stitch_einval);
	tcase_add_test(tc, test_stitch_in_place);
	tcase_add_test(tc, test_split_sanitize_stitch);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(callchain_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
