// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Cookie encode/decode against the values the ABI fixes: the upstream
 * examples for both host byte orders, the never-released seed layout, and
 * every input the kernel could not have produced.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unwind-cookie/cookie.h>

/* Loop tests run once per merged byte order, _i indexing this table. */
static const enum unwind_cookie_layout merged_layouts[] = {
	UNWIND_COOKIE_LAYOUT_MERGED_LE,
	UNWIND_COOKIE_LAYOUT_MERGED_BE,
};

#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))
#define NR_MERGED ((int)ARRAY_SIZE(merged_layouts))

START_TEST(test_constants)
{
	/* Values of enum perf_callchain_context and the 6.19 additions. */
	ck_assert_uint_eq(UNWIND_COOKIE_CONTEXT_USER_DEFERRED, 0xfffffffffffffd80ULL);
	ck_assert_uint_eq(UNWIND_COOKIE_CONTEXT_KERNEL, 0xffffffffffffff80ULL);
	ck_assert_uint_eq(UNWIND_COOKIE_CONTEXT_USER, 0xfffffffffffffe00ULL);
	ck_assert_uint_eq(UNWIND_COOKIE_CONTEXT_MAX, 0xfffffffffffff001ULL);
	ck_assert_uint_eq(UNWIND_COOKIE_RECORD_CALLCHAIN_DEFERRED, 22);
	ck_assert_uint_eq(UNWIND_COOKIE_ATTR_DEFER_CALLCHAIN, 0x4000000000ULL);
	ck_assert_uint_eq(UNWIND_COOKIE_ATTR_DEFER_OUTPUT, 0x8000000000ULL);
	ck_assert_uint_eq(UNWIND_COOKIE_MAX_DEFERRED_DEPTH, 510);
}
END_TEST

START_TEST(test_attr_defers)
{
	ck_assert(!unwind_cookie__attr_defers(0));
	/* bit 37 is sigtrap, not ours */
	ck_assert(!unwind_cookie__attr_defers(1ULL << 37));
	ck_assert(unwind_cookie__attr_defers(1ULL << 38));
	ck_assert(unwind_cookie__attr_defers(1ULL << 39));
	ck_assert(unwind_cookie__attr_defers((1ULL << 38) | (1ULL << 39) | 1));
}
END_TEST

START_TEST(test_layout_name)
{
	ck_assert_str_eq(unwind_cookie__layout_name(UNWIND_COOKIE_LAYOUT_MERGED_LE), "merged-le");
	ck_assert_str_eq(unwind_cookie__layout_name(UNWIND_COOKIE_LAYOUT_MERGED_BE), "merged-be");
	ck_assert_str_eq(unwind_cookie__layout_name(UNWIND_COOKIE_LAYOUT_SEED), "seed");
	ck_assert_ptr_null(unwind_cookie__layout_name(UNWIND_COOKIE_LAYOUT__MAX));
	ck_assert_ptr_null(unwind_cookie__layout_name((enum unwind_cookie_layout)-1));
	ck_assert_ptr_null(unwind_cookie__layout_name((enum unwind_cookie_layout)1000));
}
END_TEST

/* ABI.md: 0xb00000006 seen on x86, cnt 11 on CPU 5. */
START_TEST(test_x86_example)
{
	struct unwind_cookie_fields f = { 0 };
	uint64_t cookie = 0;

	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_LE, 5, 11, &cookie), 0);
	ck_assert_uint_eq(cookie, 0xb00000006ULL);

	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_MERGED_LE, 0xb00000006ULL, &f),
			 0);
	ck_assert_uint_eq(f.cpu, 5);
	ck_assert_uint_eq(f.counter, 11);
	ck_assert(unwind_cookie__valid(UNWIND_COOKIE_LAYOUT_MERGED_LE, 0xb00000006ULL));

	/* Read with the other byte order the counter half is 6: even, invalid. */
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_MERGED_BE, 0xb00000006ULL, &f),
			 -EINVAL);
	ck_assert(!unwind_cookie__valid(UNWIND_COOKIE_LAYOUT_MERGED_BE, 0xb00000006ULL));
}
END_TEST

/* ABI.md: 0x400000079 seen on s390, CPU 3, cnt 0x79. */
START_TEST(test_s390_example)
{
	struct unwind_cookie_fields f = { 0 };
	uint64_t cookie = 0;

	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_BE, 3, 0x79, &cookie),
			 0);
	ck_assert_uint_eq(cookie, 0x400000079ULL);

	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_MERGED_BE, 0x400000079ULL, &f),
			 0);
	ck_assert_uint_eq(f.cpu, 3);
	ck_assert_uint_eq(f.counter, 0x79);
	ck_assert(unwind_cookie__valid(UNWIND_COOKIE_LAYOUT_MERGED_BE, 0x400000079ULL));

	/* Read as little-endian the counter half is 4: even, invalid. */
	ck_assert(!unwind_cookie__valid(UNWIND_COOKIE_LAYOUT_MERGED_LE, 0x400000079ULL));
}
END_TEST

START_TEST(test_merged_edges)
{
	struct unwind_cookie_fields f = { 0 };
	uint64_t cookie = 0;

	/* CPU 0 is stored as 1. */
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_LE, 0, 1, &cookie), 0);
	ck_assert_uint_eq(cookie, 0x100000001ULL);
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_BE, 0, 1, &cookie), 0);
	ck_assert_uint_eq(cookie, 0x100000001ULL);

	/* The largest values that fit: cpu + 1 == UINT32_MAX, odd counter UINT32_MAX. */
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_LE, 0xfffffffe,
					       0xffffffff, &cookie), 0);
	ck_assert_uint_eq(cookie, 0xffffffffffffffffULL);
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_MERGED_LE, cookie, &f), 0);
	ck_assert_uint_eq(f.cpu, 0xfffffffe);
	ck_assert_uint_eq(f.counter, 0xffffffff);

	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_LE, 7, 0x80000001,
					       &cookie), 0);
	ck_assert_uint_eq(cookie, 0x8000000100000008ULL);
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_BE, 7, 0x80000001,
					       &cookie), 0);
	ck_assert_uint_eq(cookie, 0x0000000880000001ULL);
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_MERGED_BE, cookie, &f), 0);
	ck_assert_uint_eq(f.cpu, 7);
	ck_assert_uint_eq(f.counter, 0x80000001);
}
END_TEST

START_TEST(test_merged_encode_einval)
{
	enum unwind_cookie_layout layout = merged_layouts[_i];
	uint64_t cookie = 0x1234;

	/* Even counters are never handed out. */
	ck_assert_int_eq(unwind_cookie__encode(layout, 0, 0, &cookie), -EINVAL);
	ck_assert_int_eq(unwind_cookie__encode(layout, 5, 10, &cookie), -EINVAL);
	/* The counter is 32 bits. */
	ck_assert_int_eq(unwind_cookie__encode(layout, 5, 0x100000001ULL, &cookie), -EINVAL);
	/* cpu + 1 must fit 32 bits. */
	ck_assert_int_eq(unwind_cookie__encode(layout, UINT32_MAX, 1, &cookie), -EINVAL);
	/* No output. */
	ck_assert_int_eq(unwind_cookie__encode(layout, 5, 11, NULL), -EINVAL);
	/* A failed call leaves the output alone. */
	ck_assert_uint_eq(cookie, 0x1234);
}
END_TEST

/*
 * Cookies the kernel cannot write, spelled out per byte order:
 * [0] little-endian host (cnt << 32 | cpu + 1), [1] big-endian host.
 */
static const uint64_t merged_invalid[][5] = {
	{
		0,			/* never a cookie */
		0xb00000000ULL,		/* cnt 11, cpu + 1 half 0 */
		0xffffffff00000000ULL,	/* cnt 0xffffffff, cpu + 1 half 0 */
		0xa00000006ULL,		/* cnt 10: even */
		0x00000001ULL,		/* cpu + 1 = 1, cnt 0: even */
	},
	{
		0,
		0x0000000bULL,		/* cpu + 1 half 0, cnt 11 */
		0x00000000ffffffffULL,	/* cpu + 1 half 0, cnt 0xffffffff */
		0x60000000aULL,		/* cnt 10: even */
		0x0000000100000000ULL,	/* cpu + 1 = 1, cnt 0: even */
	},
};

START_TEST(test_merged_decode_einval)
{
	enum unwind_cookie_layout layout = merged_layouts[_i];
	struct unwind_cookie_fields f = { .cpu = 42, .counter = 43 };
	size_t j;

	for (j = 0; j < ARRAY_SIZE(merged_invalid[0]); j++) {
		uint64_t cookie = merged_invalid[_i][j];

		ck_assert_msg(unwind_cookie__decode(layout, cookie, &f) == -EINVAL,
			      "%s accepted 0x%llx", unwind_cookie__layout_name(layout),
			      (unsigned long long)cookie);
		ck_assert(!unwind_cookie__valid(layout, cookie));
	}
	/* Failed decodes leave the fields alone. */
	ck_assert_uint_eq(f.cpu, 42);
	ck_assert_uint_eq(f.counter, 43);
}
END_TEST

START_TEST(test_merged_roundtrip)
{
	enum unwind_cookie_layout layout = merged_layouts[_i];
	static const uint32_t cpus[] = { 0, 1, 5, 255, 4095, 65535, 0x7fffffff, 0xfffffffe };
	static const uint32_t cnts[] = { 1, 3, 11, 0x79, 0xfffffffd, 0xffffffff };
	struct unwind_cookie_fields f;
	uint64_t cookie;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(cpus); i++) {
		for (j = 0; j < ARRAY_SIZE(cnts); j++) {
			ck_assert_int_eq(unwind_cookie__encode(layout, cpus[i], cnts[j], &cookie),
					 0);
			ck_assert_uint_ne(cookie, 0);
			ck_assert(unwind_cookie__valid(layout, cookie));
			ck_assert_int_eq(unwind_cookie__decode(layout, cookie, &f), 0);
			ck_assert_uint_eq(f.cpu, cpus[i]);
			ck_assert_uint_eq(f.counter, cnts[j]);
		}
	}
}
END_TEST

START_TEST(test_seed_layout)
{
	struct unwind_cookie_fields f = { 0 };
	uint64_t cookie = 0;

	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 5, 11, &cookie), 0);
	ck_assert_uint_eq(cookie, 0x000500000000000bULL);
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_SEED, cookie, &f), 0);
	ck_assert_uint_eq(f.cpu, 5);
	ck_assert_uint_eq(f.counter, 11);

	/* Seed cookies need no odd counter and CPU 0 is stored as 0. */
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 0, 2, &cookie), 0);
	ck_assert_uint_eq(cookie, 2);
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 3, 0, &cookie), 0);
	ck_assert_uint_eq(cookie, 0x0003000000000000ULL);
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_SEED, cookie, &f), 0);
	ck_assert_uint_eq(f.cpu, 3);
	ck_assert_uint_eq(f.counter, 0);

	/* The largest values that fit. */
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 65535,
					       0xffffffffffffULL, &cookie), 0);
	ck_assert_uint_eq(cookie, 0xffffffffffffffffULL);
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_SEED, cookie, &f), 0);
	ck_assert_uint_eq(f.cpu, 65535);
	ck_assert_uint_eq(f.counter, 0xffffffffffffULL);

	/* The ABI examples are valid seed cookies too, with other meanings. */
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_SEED, 0xb00000006ULL, &f), 0);
	ck_assert_uint_eq(f.cpu, 0);
	ck_assert_uint_eq(f.counter, 0xb00000006ULL);
	ck_assert(unwind_cookie__valid(UNWIND_COOKIE_LAYOUT_SEED, 1));
}
END_TEST

START_TEST(test_seed_einval)
{
	struct unwind_cookie_fields f = { .cpu = 42, .counter = 43 };
	uint64_t cookie = 0x1234;

	/* cpu < 65536 */
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 65536, 1, &cookie),
			 -EINVAL);
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, UINT32_MAX, 1, &cookie),
			 -EINVAL);
	/* counter < 2^48 */
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 1, 1ULL << 48, &cookie),
			 -EINVAL);
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 1, UINT64_MAX, &cookie),
			 -EINVAL);
	/* CPU 0, counter 0 would be 0. */
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 0, 0, &cookie), -EINVAL);
	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_SEED, 1, 1, NULL), -EINVAL);
	ck_assert_uint_eq(cookie, 0x1234);

	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT_SEED, 0, &f), -EINVAL);
	ck_assert(!unwind_cookie__valid(UNWIND_COOKIE_LAYOUT_SEED, 0));
	ck_assert_uint_eq(f.cpu, 42);
	ck_assert_uint_eq(f.counter, 43);
}
END_TEST

START_TEST(test_unknown_layout)
{
	struct unwind_cookie_fields f;
	uint64_t cookie = 0x1234;

	ck_assert_int_eq(unwind_cookie__encode(UNWIND_COOKIE_LAYOUT__MAX, 5, 11, &cookie),
			 -EINVAL);
	ck_assert_int_eq(unwind_cookie__encode((enum unwind_cookie_layout)-1, 5, 11, &cookie),
			 -EINVAL);
	ck_assert_uint_eq(cookie, 0x1234);
	ck_assert_int_eq(unwind_cookie__decode(UNWIND_COOKIE_LAYOUT__MAX, 0xb00000006ULL, &f),
			 -EINVAL);
	ck_assert_int_eq(unwind_cookie__decode((enum unwind_cookie_layout)99, 0xb00000006ULL, &f),
			 -EINVAL);
	ck_assert(!unwind_cookie__valid(UNWIND_COOKIE_LAYOUT__MAX, 0xb00000006ULL));
}
END_TEST

static Suite *cookie_suite(void)
{
	Suite *s = suite_create("cookie");
	TCase *tc;

	tc = tcase_create("abi");
	tcase_add_test(tc, test_constants);
	tcase_add_test(tc, test_attr_defers);
	tcase_add_test(tc, test_layout_name);
	suite_add_tcase(s, tc);

	tc = tcase_create("merged");
	tcase_add_test(tc, test_x86_example);
	tcase_add_test(tc, test_s390_example);
	tcase_add_test(tc, test_merged_edges);
	tcase_add_loop_test(tc, test_merged_encode_einval, 0, NR_MERGED);
	tcase_add_loop_test(tc, test_merged_decode_einval, 0, NR_MERGED);
	tcase_add_loop_test(tc, test_merged_roundtrip, 0, NR_MERGED);
	suite_add_tcase(s, tc);

	tc = tcase_create("seed");
	tcase_add_test(tc, test_seed_layout);
	tcase_add_test(tc, test_seed_einval);
	suite_add_tcase(s, tc);

	tc = tcase_create("layout");
	tcase_add_test(tc, test_unknown_layout);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cookie_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
