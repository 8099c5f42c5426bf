// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Unit tests of the kernel model (kmodel.c). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unwind-cookie/cookie.h>
#include <unwind-cookie/kmodel.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define KERNEL	UNWIND_COOKIE_CONTEXT_KERNEL
#define DEFER	UNWIND_COOKIE_CONTEXT_USER_DEFERRED

static const uint64_t K[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
static const uint64_t U1[] = { 0x401000, 0x401100, 0x401200 };
static const uint64_t U2[] = { 0x501000, 0x501100 };

static struct unwind_kmodel *mk(uint32_t nr_cpus, enum unwind_cookie_layout layout,
				uint64_t counter_start, uint32_t nr_listeners, uint64_t first_id)
{
	struct unwind_kmodel_opts opts = {
		.sz = sizeof(opts),
		.nr_cpus = nr_cpus,
		.layout = layout,
		.counter_start = counter_start,
		.nr_listeners = nr_listeners,
		.first_listener_id = first_id,
	};
	struct unwind_kmodel *km = unwind_kmodel__new(&opts);

	ck_assert_ptr_nonnull(km);
	return km;
}

static struct unwind_kmodel *mk_le(uint32_t nr_cpus)
{
	return mk(nr_cpus, UNWIND_COOKIE_LAYOUT_MERGED_LE, 1, 0, 0);
}

/* A user task @tid (pid == tid) on @cpu with user stack @ips. */
static void task(struct unwind_kmodel *km, uint32_t tid, uint32_t cpu, const uint64_t *ips,
		 size_t nr)
{
	ck_assert_int_eq(unwind_kmodel__task_new(km, tid, tid, cpu, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, tid, ips, nr), 0);
}

static size_t nr_events(struct unwind_kmodel *km)
{
	size_t nr;

	unwind_kmodel__events(km, &nr);
	return nr;
}

static const struct unwind_kmodel_event *ev(struct unwind_kmodel *km, size_t i)
{
	size_t nr;
	const struct unwind_kmodel_event *e = unwind_kmodel__events(km, &nr);

	ck_assert_uint_lt(i, nr);
	ck_assert_uint_eq(e[i].seq, i);
	return &e[i];
}

static void assert_ips(const uint64_t *got, size_t nr, const uint64_t *exp, size_t nr_exp)
{
	size_t i;

	ck_assert_uint_eq(nr, nr_exp);
	if (!nr) {
		ck_assert_ptr_null(got);
		return;
	}
	for (i = 0; i < nr; i++)
		ck_assert_uint_eq(got[i], exp[i]);
}

/* A kernel mode sample with the two frames of K. */
static long ksample(struct unwind_kmodel *km, uint32_t tid, uint64_t time, uint64_t id)
{
	return unwind_kmodel__sample(km, tid, time, id, K, ARRAY_SIZE(K), false);
}

/* The cookie a sample of @tid at @time gets (asserting it was deferred). */
static uint64_t sample_cookie(struct unwind_kmodel *km, uint32_t tid, uint64_t time)
{
	long idx = ksample(km, tid, time, 1);

	ck_assert_int_ge(idx, 0);
	ck_assert_uint_ne(ev(km, idx)->cookie, 0);
	return ev(km, idx)->cookie;
}

static void assert_deferred_chain(const struct unwind_kmodel_event *e, uint64_t cookie)
{
	const uint64_t exp[] = { KERNEL, K[0], K[1], DEFER, cookie };

	ck_assert_int_eq(e->type, UNWIND_KMODEL_SAMPLE);
	ck_assert_uint_eq(e->cookie, cookie);
	assert_ips(e->ips, e->nr, exp, ARRAY_SIZE(exp));
}

static void assert_record(const struct unwind_kmodel_event *e, uint32_t tid, uint32_t cpu,
			  uint64_t time, uint64_t id, uint64_t cookie,
			  const uint64_t *ips, size_t nr)
{
	ck_assert_int_eq(e->type, UNWIND_KMODEL_RECORD);
	ck_assert_uint_eq(e->tid, tid);
	ck_assert(!e->truth_known);
	ck_assert(!e->late);
	ck_assert_uint_eq(e->cpu, cpu);
	ck_assert_uint_eq(e->time, time);
	ck_assert_uint_eq(e->id, id);
	ck_assert_uint_eq(e->cookie, cookie);
	assert_ips(e->ips, e->nr, ips, nr);
}

static void assert_truth(const struct unwind_kmodel_event *e, const uint64_t *ips, size_t nr)
{
	ck_assert(e->truth_known);
	assert_ips(e->truth, e->nr_truth, ips, nr);
}

static void assert_no_truth(const struct unwind_kmodel_event *e)
{
	ck_assert(!e->truth_known);
	ck_assert_ptr_null(e->truth);
	ck_assert_uint_eq(e->nr_truth, 0);
}

static void noop_callback(void *ctx, uint32_t tid, const struct unwind_kmodel_trace *trace,
			  uint64_t cookie)
{
	(void)ctx; (void)tid; (void)trace; (void)cookie;
}

/* ---- options ---- */

START_TEST(test_opts)
{
	struct unwind_kmodel_opts opts = { .sz = sizeof(opts), .nr_cpus = 2 };
	struct {
		struct unwind_kmodel_opts opts;
		uint64_t future_field;
	} big = { .opts = { .nr_cpus = 1 }, .future_field = 0 };
	struct unwind_kmodel *km;

	errno = 0;
	ck_assert_ptr_null(unwind_kmodel__new(NULL));
	ck_assert_int_eq(errno, EINVAL);

	opts.nr_cpus = 0;
	errno = 0;
	ck_assert_ptr_null(unwind_kmodel__new(&opts));
	ck_assert_int_eq(errno, EINVAL);
	opts.nr_cpus = 2;

	opts.sz = 0;
	ck_assert_ptr_null(unwind_kmodel__new(&opts));
	opts.sz = offsetof(struct unwind_kmodel_opts, first_listener_id);
	ck_assert_ptr_null(unwind_kmodel__new(&opts));
	opts.sz = sizeof(opts);

	opts.layout = UNWIND_COOKIE_LAYOUT__MAX;
	ck_assert_ptr_null(unwind_kmodel__new(&opts));
	opts.layout = UNWIND_COOKIE_LAYOUT_MERGED_LE;

	opts.counter_start = 0x100000000ULL;	/* not a 32-bit counter */
	ck_assert_ptr_null(unwind_kmodel__new(&opts));
	opts.layout = UNWIND_COOKIE_LAYOUT_SEED;
	opts.counter_start = 1ULL << 48;	/* not a 48-bit counter */
	ck_assert_ptr_null(unwind_kmodel__new(&opts));
	opts.counter_start = 0;
	opts.nr_cpus = 65537;			/* cpu must fit in 16 bits */
	ck_assert_ptr_null(unwind_kmodel__new(&opts));
	opts.nr_cpus = 65536;
	km = unwind_kmodel__new(&opts);
	ck_assert_ptr_nonnull(km);
	unwind_kmodel__delete(km);

	/* A newer caller's larger struct: refused if what we do not know is set... */
	big.opts.sz = sizeof(big);
	big.future_field = 1;
	errno = 0;
	ck_assert_ptr_null(unwind_kmodel__new(&big.opts));
	ck_assert_int_eq(errno, EINVAL);
	/* ...accepted with it zero. */
	big.future_field = 0;
	km = unwind_kmodel__new(&big.opts);
	ck_assert_ptr_nonnull(km);

	/* Defaults: merged-LE, counter 1, one listener with id 1. */
	task(km, 10, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 10, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 10, 1), 0x100000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 10, 2), 0);
	ck_assert_uint_eq(nr_events(km), 2);
	assert_record(ev(km, 1), 10, 0, 2, 1, 0x100000001ULL, U1, ARRAY_SIZE(U1));
	unwind_kmodel__delete(km);
	unwind_kmodel__delete(NULL);
}
END_TEST

/* ---- cookies ---- */

START_TEST(test_cookies_merged_le)
{
	struct unwind_kmodel *km = mk_le(4);
	uint64_t cookie;
	int user;

	task(km, 100, 0, U1, ARRAY_SIZE(U1));
	task(km, 200, 2, U1, ARRAY_SIZE(U1));

	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 100, 1), 0x100000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 2), 0);

	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 3), 0);
	ck_assert_uint_eq(sample_cookie(km, 100, 4), 0x300000001ULL);
	/* Same entry, same cookie, counter not advanced. */
	ck_assert_uint_eq(sample_cookie(km, 100, 5), 0x300000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 6), 0);

	/* CPU 2 has a counter of its own: cnt 1, cpu + 1 = 3. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 200, 7), 0);
	ck_assert_uint_eq(sample_cookie(km, 200, 8), 0x100000003ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 200, 9), 0);

	/* The cookie takes the CPU the task is on at the first request. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 10), 0);
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 100, 2), 0);
	ck_assert_uint_eq(sample_cookie(km, 100, 11), 0x300000003ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 12), 0);

	/* A registered user's request gets the same cookie as perf's (still on CPU 2). */
	user = unwind_kmodel__user_register(km, noop_callback, NULL);
	ck_assert_int_eq(user, 1);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 13), 0);
	ck_assert_int_eq(unwind_kmodel__request(km, 100, user, &cookie), 0);
	ck_assert_uint_eq(cookie, 0x500000003ULL);
	ck_assert_uint_eq(sample_cookie(km, 100, 14), 0x500000003ULL);
	ck_assert_int_eq(unwind_kmodel__user_unregister(km, user), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 15), 0);
	unwind_kmodel__delete(km);

	/* counter_start is made odd: 0 -> 1, 4 -> 5. */
	km = mk(1, UNWIND_COOKIE_LAYOUT_MERGED_LE, 0, 0, 0);
	task(km, 1, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 1), 0x100000001ULL);
	unwind_kmodel__delete(km);
	km = mk(1, UNWIND_COOKIE_LAYOUT_MERGED_LE, 4, 0, 0);
	task(km, 1, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 1), 0x500000001ULL);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_cookies_merged_be)
{
	struct unwind_kmodel *km = mk(4, UNWIND_COOKIE_LAYOUT_MERGED_BE, 1, 0, 0);

	task(km, 100, 2, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 100, 1), 0x300000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 2), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 3), 0);
	ck_assert_uint_eq(sample_cookie(km, 100, 4), 0x300000003ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 5), 0);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_counter_wrap)
{
	const uint64_t exp[] = {
		0xfffffffd00000001ULL, 0xffffffff00000001ULL, 0x0000000100000001ULL,
		0x0000000300000001ULL,
	};
	struct unwind_kmodel *km = mk(1, UNWIND_COOKIE_LAYOUT_MERGED_LE, 0xfffffffdULL, 0, 0);
	size_t i;

	task(km, 1, 0, U1, ARRAY_SIZE(U1));
	for (i = 0; i < ARRAY_SIZE(exp); i++) {
		ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 10 * i), 0);
		ck_assert_uint_eq(sample_cookie(km, 1, 10 * i + 1), exp[i]);
		ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 10 * i + 2), 0);
	}
	unwind_kmodel__delete(km);

	/* An even start near the top: 0xfffffffe -> 0xffffffff, then wraps to 1. */
	km = mk(1, UNWIND_COOKIE_LAYOUT_MERGED_LE, 0xfffffffeULL, 0, 0);
	task(km, 1, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 1), 0xffffffff00000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 2), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 3), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 4), 0x100000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 5), 0);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_seed_layout)
{
	struct unwind_kmodel *km = mk(3, UNWIND_COOKIE_LAYOUT_SEED, 0, 0, 0);

	task(km, 1, 0, U1, ARRAY_SIZE(U1));
	task(km, 2, 2, U1, ARRAY_SIZE(U1));
	/* CPU 0, counter 0 would be cookie 0: skipped. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 1), 0x1ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 2), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 3), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 4), 0x2ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 5), 0);
	/* Other CPUs may use counter 0; +1 per cookie. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 2, 6), 0);
	ck_assert_uint_eq(sample_cookie(km, 2, 7), 0x0002000000000000ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 2, 8), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 2, 9), 0);
	ck_assert_uint_eq(sample_cookie(km, 2, 10), 0x0002000000000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 2, 11), 0);
	ck_assert_uint_eq(nr_events(km), 8);
	assert_record(ev(km, 7), 2, 2, 11, 1, 0x0002000000000001ULL, U1, ARRAY_SIZE(U1));
	unwind_kmodel__delete(km);

	/* The 48-bit counter wraps; on CPU 0 it skips 0. */
	km = mk(2, UNWIND_COOKIE_LAYOUT_SEED, 0xffffffffffffULL, 0, 0);
	task(km, 1, 0, U1, ARRAY_SIZE(U1));
	task(km, 2, 1, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 1), 0xffffffffffffULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 2), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 3), 0);
	ck_assert_uint_eq(sample_cookie(km, 1, 4), 0x1ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 5), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 2, 6), 0);
	ck_assert_uint_eq(sample_cookie(km, 2, 7), 0x1ffffffffffffULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 2, 8), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 2, 9), 0);
	ck_assert_uint_eq(sample_cookie(km, 2, 10), 0x1000000000000ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 2, 11), 0);
	unwind_kmodel__delete(km);
}
END_TEST

/* ---- one unwind, one record per entry ---- */

START_TEST(test_shared_record)
{
	struct unwind_kmodel *km = mk_le(2);
	const uint64_t c = 0x100000002ULL;	/* cnt 1 on CPU 1 */
	const uint64_t exp1[] = { DEFER, c };
	const uint64_t exp2[] = { KERNEL, K[0], DEFER, c };
	const struct unwind_kmodel_event *e;
	size_t i;

	ck_assert_int_eq(unwind_kmodel__task_new(km, 99, 100, 1, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 100, U1, ARRAY_SIZE(U1)), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 10), 0);

	/* Three samples from two events in one kernel entry. */
	ck_assert_int_eq(ksample(km, 100, 100, 10), 0);
	ck_assert_int_eq(unwind_kmodel__sample(km, 100, 101, 11, NULL, 0, false), 1);
	ck_assert_int_eq(unwind_kmodel__sample(km, 100, 102, 10, K, 1, false), 2);
	ck_assert_uint_eq(nr_events(km), 3);
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 0);

	e = ev(km, 0);
	assert_deferred_chain(e, c);
	ck_assert_uint_eq(e->pid, 99);
	ck_assert_uint_eq(e->tid, 100);
	ck_assert_uint_eq(e->cpu, 1);
	ck_assert_uint_eq(e->time, 100);
	ck_assert_uint_eq(e->id, 10);
	/* nr_kernel 0: no PERF_CONTEXT_KERNEL, just the marker and the cookie. */
	e = ev(km, 1);
	ck_assert_uint_eq(e->id, 11);
	ck_assert_uint_eq(e->cookie, c);
	assert_ips(e->ips, e->nr, exp1, ARRAY_SIZE(exp1));
	e = ev(km, 2);
	assert_ips(e->ips, e->nr, exp2, ARRAY_SIZE(exp2));
	for (i = 0; i < 3; i++) {
		assert_no_truth(ev(km, i));	/* not yet */
		ck_assert(!ev(km, i)->late);
	}

	ck_assert_int_eq(unwind_kmodel__task_work(km, 100, 110), 0);
	ck_assert_uint_eq(nr_events(km), 4);
	e = ev(km, 3);
	assert_record(e, 100, 1, 110, 1, c, U1, ARRAY_SIZE(U1));
	ck_assert_uint_eq(e->pid, 99);
	ck_assert(!e->truth_known);
	for (i = 0; i < 3; i++) {
		assert_truth(ev(km, i), U1, ARRAY_SIZE(U1));
		ck_assert(!ev(km, i)->late);
	}
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);

	/* Return: the work already ran, nothing more is written. */
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 111), 0);
	ck_assert_uint_eq(nr_events(km), 4);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 100, 112), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 112), -EINVAL);

	/* An entry without a request unwinds nothing. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 120), 0);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 100, 121), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 122), 0);
	ck_assert_uint_eq(nr_events(km), 4);
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);

	/* The next entry: new cookie, its own unwind and record. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 100, 130), 0);
	ck_assert_uint_eq(sample_cookie(km, 100, 131), 0x300000002ULL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 100, 132), 0);
	ck_assert_uint_eq(nr_events(km), 6);
	assert_record(ev(km, 5), 100, 1, 132, 1, 0x300000002ULL, U1, ARRAY_SIZE(U1));
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 2);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_two_listeners)
{
	struct unwind_kmodel *km = mk(1, UNWIND_COOKIE_LAYOUT_MERGED_LE, 1, 2, 7);

	task(km, 5, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 5, 0), 0);
	ck_assert_int_eq(ksample(km, 5, 1, 3), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 5, 2), 0);
	ck_assert_uint_eq(nr_events(km), 3);
	assert_record(ev(km, 1), 5, 0, 2, 7, 0x100000001ULL, U1, ARRAY_SIZE(U1));
	assert_record(ev(km, 2), 5, 0, 2, 8, 0x100000001ULL, U1, ARRAY_SIZE(U1));
	assert_truth(ev(km, 0), U1, ARRAY_SIZE(U1));
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_migration)
{
	struct unwind_kmodel *km = mk_le(4);
	const uint64_t c = 0x100000002ULL;	/* assigned on CPU 1 */

	task(km, 7, 1, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 7, 2), -EINVAL);	/* in user space */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 7, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 7, 4), -EINVAL);	/* no such CPU */
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 8, 2), -ESRCH);

	ck_assert_int_eq(ksample(km, 7, 5, 1), 0);
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 7, 3), 0);
	ck_assert_int_eq(ksample(km, 7, 6, 1), 1);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 7, 7), 0);

	ck_assert_uint_eq(nr_events(km), 3);
	ck_assert_uint_eq(ev(km, 0)->cpu, 1);
	ck_assert_uint_eq(ev(km, 1)->cpu, 3);
	assert_deferred_chain(ev(km, 0), c);
	assert_deferred_chain(ev(km, 1), c);
	/* The record is in CPU 3's buffer; its cookie names CPU 1. */
	assert_record(ev(km, 2), 7, 3, 7, 1, c, U1, ARRAY_SIZE(U1));
	assert_truth(ev(km, 0), U1, ARRAY_SIZE(U1));
	assert_truth(ev(km, 1), U1, ARRAY_SIZE(U1));
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_late_sample)
{
	struct unwind_kmodel *km = mk_le(1);
	const uint64_t c = 0x100000001ULL;
	const struct unwind_kmodel_event *e;

	task(km, 3, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 3, 0), 0);
	ck_assert_int_eq(ksample(km, 3, 1, 1), 0);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 3, 2), 0);
	ck_assert_uint_eq(nr_events(km), 2);

	/* After the task_work, before the return: old cookie, no new record. */
	ck_assert_int_eq(ksample(km, 3, 3, 1), 2);
	ck_assert_int_eq(ksample(km, 3, 4, 2), 3);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 3, 5), 0);
	ck_assert_uint_eq(nr_events(km), 4);
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);

	e = ev(km, 0);
	ck_assert(!e->late);
	assert_truth(e, U1, ARRAY_SIZE(U1));
	assert_record(ev(km, 1), 3, 0, 2, 1, c, U1, ARRAY_SIZE(U1));
	e = ev(km, 2);
	assert_deferred_chain(e, c);
	ck_assert(e->late);
	assert_truth(e, U1, ARRAY_SIZE(U1));
	ck_assert(ev(km, 3)->late);
	assert_truth(ev(km, 3), U1, ARRAY_SIZE(U1));
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_user_mode_sample)
{
	struct unwind_kmodel *km = mk_le(2);
	const uint64_t c1 = 0x100000002ULL, c2 = 0x300000002ULL;
	const uint64_t exp1[] = { DEFER, c1 }, exp2[] = { DEFER, c2 };
	const struct unwind_kmodel_event *e;

	task(km, 4, 1, U1, ARRAY_SIZE(U1));
	/* Kernel frames are ignored: the interrupted context is user space. */
	ck_assert_int_eq(unwind_kmodel__sample(km, 4, 50, 3, K, ARRAY_SIZE(K), true), 0);
	ck_assert_uint_eq(nr_events(km), 2);
	e = ev(km, 0);
	ck_assert_int_eq(e->type, UNWIND_KMODEL_SAMPLE);
	ck_assert_uint_eq(e->time, 50);
	ck_assert_uint_eq(e->id, 3);
	ck_assert_uint_eq(e->cookie, c1);
	assert_ips(e->ips, e->nr, exp1, ARRAY_SIZE(exp1));
	assert_truth(e, U1, ARRAY_SIZE(U1));
	ck_assert(!e->late);
	assert_record(ev(km, 1), 4, 1, 51, 1, c1, U1, ARRAY_SIZE(U1));

	/* Back in user space. */
	ck_assert_int_eq(unwind_kmodel__task_work(km, 4, 52), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 4, 52), -EINVAL);

	/* Another user mode sample: a cookie and a record of its own. */
	ck_assert_int_eq(unwind_kmodel__sample(km, 4, 60, 3, NULL, 0, true), 2);
	ck_assert_uint_eq(nr_events(km), 4);
	assert_ips(ev(km, 2)->ips, ev(km, 2)->nr, exp2, ARRAY_SIZE(exp2));
	assert_record(ev(km, 3), 4, 1, 61, 1, c2, U1, ARRAY_SIZE(U1));
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 2);

	/* Not in user space: refused. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 4, 70), 0);
	ck_assert_int_eq(unwind_kmodel__sample(km, 4, 71, 3, NULL, 0, true), -EINVAL);
	ck_assert_uint_eq(nr_events(km), 4);
	unwind_kmodel__delete(km);
}
END_TEST

/* ---- refusals ---- */

START_TEST(test_kthread)
{
	struct unwind_kmodel *km = mk_le(2);
	const uint64_t exp[] = { KERNEL, K[0], K[1] };
	const struct unwind_kmodel_event *e;
	uint64_t cookie = 123;

	ck_assert_int_eq(unwind_kmodel__task_new(km, 2, 2, 0, UNWIND_KMODEL_KTHREAD), 0);
	ck_assert_int_eq(unwind_kmodel__request(km, 2, 0, &cookie), -EINVAL);
	ck_assert_uint_eq(cookie, 0);

	ck_assert_int_eq(ksample(km, 2, 1, 1), 0);
	e = ev(km, 0);
	ck_assert_uint_eq(e->cookie, 0);
	assert_ips(e->ips, e->nr, exp, ARRAY_SIZE(exp));
	assert_no_truth(e);
	ck_assert(!e->late);
	/* No kernel frames either: an empty chain. */
	ck_assert_int_eq(unwind_kmodel__sample(km, 2, 2, 1, NULL, 0, false), 1);
	assert_ips(ev(km, 1)->ips, ev(km, 1)->nr, NULL, 0);

	/* Always in the kernel, never returns to user space. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 2, 3), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 2, 3), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 2, 3), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__sample(km, 2, 3, 1, NULL, 0, true), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 2, U1, 1), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_exec(km, 2, 3, U1, 1), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 2, 1), 0);
	ck_assert_int_eq(ksample(km, 2, 4, 1), 2);
	ck_assert_uint_eq(ev(km, 2)->cpu, 1);
	ck_assert_uint_eq(ev(km, 2)->cookie, 0);

	ck_assert_int_eq(unwind_kmodel__task_exit(km, 2, 5, true), 0);
	ck_assert_uint_eq(nr_events(km), 4);
	ck_assert_int_eq(ev(km, 3)->type, UNWIND_KMODEL_EXIT);
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 0);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_not_in_kernel)
{
	struct unwind_kmodel *km = mk_le(1);
	const uint64_t exp[] = { KERNEL, K[0], K[1] };
	uint64_t cookie = 1;

	task(km, 8, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__request(km, 8, 0, &cookie), -EINVAL);
	ck_assert_uint_eq(cookie, 0);
	/* A kernel mode sample of a task not in the kernel: not deferred. */
	ck_assert_int_eq(ksample(km, 8, 1, 1), 0);
	ck_assert_uint_eq(ev(km, 0)->cookie, 0);
	assert_ips(ev(km, 0)->ips, ev(km, 0)->nr, exp, ARRAY_SIZE(exp));
	assert_no_truth(ev(km, 0));
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_exiting)
{
	struct unwind_kmodel *km = mk_le(2);
	const uint64_t exp[] = { KERNEL, K[0], K[1] };
	const struct unwind_kmodel_event *e;
	uint64_t cookie = 1;

	task(km, 9, 1, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 9, 10), 0);
	ck_assert_int_eq(unwind_kmodel__task_exit(km, 9, 20, true), 0);
	ck_assert_uint_eq(nr_events(km), 1);
	e = ev(km, 0);
	ck_assert_int_eq(e->type, UNWIND_KMODEL_EXIT);
	ck_assert_uint_eq(e->tid, 9);
	ck_assert_uint_eq(e->cpu, 1);
	ck_assert_uint_eq(e->time, 20);

	ck_assert_int_eq(unwind_kmodel__request(km, 9, 0, &cookie), -EINVAL);
	ck_assert_uint_eq(cookie, 0);
	ck_assert_int_eq(ksample(km, 9, 21, 1), 1);
	e = ev(km, 1);
	ck_assert_uint_eq(e->cookie, 0);
	assert_ips(e->ips, e->nr, exp, ARRAY_SIZE(exp));
	assert_no_truth(e);

	ck_assert_int_eq(unwind_kmodel__sample(km, 9, 22, 1, NULL, 0, true), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_exit(km, 9, 22, true), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 9, 22), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 9, 22), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 9, 22), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 9, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 9, U1, 1), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_exec(km, 9, 22, U1, 1), -EINVAL);
	ck_assert_uint_eq(nr_events(km), 2);
	unwind_kmodel__delete(km);
}
END_TEST

/* ---- registered users ---- */

struct call {
	int		user;
	uint32_t	tid;
	uint64_t	cookie;
	size_t		nr;
	uint64_t	ip0;
	int		reentry[3];
};

struct recorder {
	struct unwind_kmodel	*km;
	struct call		calls[16];
	size_t			nr_calls;
};

struct user_ctx {
	struct recorder	*rec;
	int		user;
	bool		reenter;
};

static void record_call(void *ctx, uint32_t tid, const struct unwind_kmodel_trace *trace,
			uint64_t cookie)
{
	struct user_ctx *u = ctx;
	struct call *c;
	uint64_t ck;

	ck_assert_uint_lt(u->rec->nr_calls, ARRAY_SIZE(u->rec->calls));
	c = &u->rec->calls[u->rec->nr_calls++];
	c->user = u->user;
	c->tid = tid;
	c->cookie = cookie;
	c->nr = trace->nr;
	c->ip0 = trace->nr ? trace->ips[0] : 0;
	if (u->reenter) {
		/* The model refuses to be changed from a callback. */
		c->reentry[0] = unwind_kmodel__request(u->rec->km, tid, u->user, &ck);
		c->reentry[1] = unwind_kmodel__task_exit(u->rec->km, tid, 0, true);
		c->reentry[2] = (int)ksample(u->rec->km, tid, 0, 1);
	}
}

START_TEST(test_register_ebusy)
{
	struct unwind_kmodel *km = mk_le(1);
	int i;

	/* unwind_kmodel__new() registered the perf user (bit 0): 61 are left. */
	for (i = 1; i < UNWIND_KMODEL_MAX_USERS; i++)
		ck_assert_int_eq(unwind_kmodel__user_register(km, noop_callback, NULL), i);
	ck_assert_int_eq(unwind_kmodel__user_register(km, noop_callback, NULL), -EBUSY);

	ck_assert_int_eq(unwind_kmodel__user_unregister(km, 30), 0);
	ck_assert_int_eq(unwind_kmodel__user_unregister(km, 30), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__user_register(km, noop_callback, NULL), 30);
	ck_assert_int_eq(unwind_kmodel__user_register(km, noop_callback, NULL), -EBUSY);

	/* the model's own */
	ck_assert_int_eq(unwind_kmodel__user_unregister(km, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__user_unregister(km, -1), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__user_unregister(km, UNWIND_KMODEL_MAX_USERS), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__user_register(km, NULL, NULL), -EINVAL);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_callbacks)
{
	struct unwind_kmodel *km = mk_le(2);
	struct recorder rec = { .km = km };
	struct user_ctx ua = { &rec, 0, false }, ub = { &rec, 0, false }, uc = { &rec, 0, true };
	const uint64_t c = 0x100000001ULL;
	uint64_t cookie;
	size_t i;

	ua.user = unwind_kmodel__user_register(km, record_call, &ua);
	ub.user = unwind_kmodel__user_register(km, record_call, &ub);
	uc.user = unwind_kmodel__user_register(km, record_call, &uc);
	ck_assert_int_eq(ua.user, 1);
	ck_assert_int_eq(ub.user, 2);
	ck_assert_int_eq(uc.user, 3);

	task(km, 20, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 20, 0), 0);
	ck_assert_int_eq(unwind_kmodel__request(km, 20, uc.user, &cookie), 0);
	ck_assert_uint_eq(cookie, c);
	ck_assert_int_eq(unwind_kmodel__request(km, 20, ua.user, &cookie), 0);
	ck_assert_uint_eq(cookie, c);
	ck_assert_int_eq(unwind_kmodel__request(km, 20, ua.user, &cookie), 1);	/* queued */
	ck_assert_uint_eq(cookie, c);
	ck_assert_int_eq(unwind_kmodel__request(km, 20, 5, &cookie), -EINVAL);	/* no such user */
	ck_assert_int_eq(unwind_kmodel__request(km, 20, -1, &cookie), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__request(km, 20, 62, &cookie), -EINVAL);
	ck_assert_int_eq(ksample(km, 20, 1, 1), 0);
	ck_assert_uint_eq(rec.nr_calls, 0);

	/* Bit order: perf (0, the record), then 1, then 3; 2 did not ask. */
	ck_assert_int_eq(unwind_kmodel__task_work(km, 20, 5), 0);
	ck_assert_uint_eq(rec.nr_calls, 2);
	ck_assert_int_eq(rec.calls[0].user, 1);
	ck_assert_int_eq(rec.calls[1].user, 3);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(rec.calls[i].tid, 20);
		ck_assert_uint_eq(rec.calls[i].cookie, c);
		ck_assert_uint_eq(rec.calls[i].nr, 3);
		ck_assert_uint_eq(rec.calls[i].ip0, U1[0]);
	}
	ck_assert_int_eq(rec.calls[1].reentry[0], -EINVAL);
	ck_assert_int_eq(rec.calls[1].reentry[1], -EINVAL);
	ck_assert_int_eq(rec.calls[1].reentry[2], -EINVAL);
	ck_assert_uint_eq(nr_events(km), 2);
	assert_record(ev(km, 1), 20, 0, 5, 1, c, U1, ARRAY_SIZE(U1));
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);

	/* Already called this entry: 1, nothing queued. */
	ck_assert_int_eq(unwind_kmodel__request(km, 20, ua.user, &cookie), 1);
	ck_assert_uint_eq(cookie, c);
	/* A user that has not been called yet is queued; the return calls it. */
	ck_assert_int_eq(unwind_kmodel__request(km, 20, ub.user, &cookie), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 20, 6), 0);
	ck_assert_uint_eq(rec.nr_calls, 3);
	ck_assert_int_eq(rec.calls[2].user, 2);
	ck_assert_uint_eq(rec.calls[2].cookie, c);
	ck_assert_uint_eq(rec.calls[2].nr, 3);
	/* The entry's one unwind is shared: no second unwind, no second record. */
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);
	ck_assert_uint_eq(nr_events(km), 2);

	/* Unregistered before the task_work: not called, bit free again. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 20, 10), 0);
	ck_assert_int_eq(unwind_kmodel__request(km, 20, ub.user, &cookie), 0);
	ck_assert_uint_eq(cookie, 0x300000001ULL);
	ck_assert_int_eq(unwind_kmodel__user_unregister(km, ub.user), 0);
	ck_assert_int_eq(unwind_kmodel__request(km, 20, ub.user, &cookie), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 20, 11), 0);
	ck_assert_uint_eq(rec.nr_calls, 3);
	/* The work was queued: the kernel still unwinds, with nobody to call. */
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 2);
	ck_assert_uint_eq(nr_events(km), 2);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_unwind_failed)
{
	struct unwind_kmodel *km = mk_le(1);
	struct recorder rec = { .km = km };
	struct user_ctx ua = { &rec, 0, false };
	uint64_t cookie;

	ua.user = unwind_kmodel__user_register(km, record_call, &ua);
	ck_assert_int_eq(unwind_kmodel__task_new(km, 30, 30, 0, 0), 0);	/* no user stack */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 30, 0), 0);
	ck_assert_int_eq(ksample(km, 30, 1, 1), 0);
	ck_assert_int_eq(unwind_kmodel__request(km, 30, ua.user, &cookie), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 30, 2), 0);

	/* Callbacks are still called, with nr 0; the record is empty. */
	ck_assert_uint_eq(rec.nr_calls, 1);
	ck_assert_uint_eq(rec.calls[0].nr, 0);
	ck_assert_uint_eq(rec.calls[0].cookie, 0x100000001ULL);
	ck_assert_uint_eq(nr_events(km), 2);
	assert_record(ev(km, 1), 30, 0, 2, 1, 0x100000001ULL, NULL, 0);
	/* Truth known: the kernel's record says "nothing". */
	assert_truth(ev(km, 0), NULL, 0);
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_depth_limit)
{
	struct unwind_kmodel *km = mk_le(1);
	uint64_t stack[600];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stack); i++)
		stack[i] = 0x400000 + i;
	task(km, 31, 0, stack, ARRAY_SIZE(stack));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 31, 0), 0);
	ck_assert_int_eq(ksample(km, 31, 1, 1), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 31, 2), 0);
	assert_record(ev(km, 1), 31, 0, 2, 1, 0x100000001ULL, stack,
		      UNWIND_COOKIE_MAX_DEFERRED_DEPTH);
	assert_truth(ev(km, 0), stack, UNWIND_COOKIE_MAX_DEFERRED_DEPTH);
	unwind_kmodel__delete(km);
}
END_TEST

/* ---- exit, exec, tid reuse ---- */

START_TEST(test_exit_records)
{
	struct unwind_kmodel *km = mk_le(2);
	struct recorder rec = { .km = km };
	struct user_ctx ua = { &rec, 0, false };
	const struct unwind_kmodel_event *e;
	uint64_t cookie;

	/* CPU-wide listener: the record comes after the EXIT, as on 7.2. */
	task(km, 40, 1, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 40, 0), 0);
	ck_assert_int_eq(ksample(km, 40, 1, 1), 0);
	ck_assert_int_eq(unwind_kmodel__task_exit(km, 40, 5, true), 0);
	ck_assert_uint_eq(nr_events(km), 3);
	e = ev(km, 1);
	ck_assert_int_eq(e->type, UNWIND_KMODEL_EXIT);
	ck_assert_uint_eq(e->time, 5);
	ck_assert_uint_eq(e->cpu, 1);
	assert_record(ev(km, 2), 40, 1, 6, 1, 0x100000002ULL, U1, ARRAY_SIZE(U1));
	assert_truth(ev(km, 0), U1, ARRAY_SIZE(U1));
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);

	/* Per-task listener: the callbacks run, no record reaches it. */
	ua.user = unwind_kmodel__user_register(km, record_call, &ua);
	task(km, 41, 0, U2, ARRAY_SIZE(U2));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 41, 6), 0);
	ck_assert_int_eq(ksample(km, 41, 7, 1), 3);
	ck_assert_int_eq(unwind_kmodel__request(km, 41, ua.user, &cookie), 0);
	ck_assert_int_eq(unwind_kmodel__task_exit(km, 41, 9, false), 0);
	ck_assert_uint_eq(nr_events(km), 5);
	ck_assert_int_eq(ev(km, 4)->type, UNWIND_KMODEL_EXIT);
	ck_assert_uint_eq(ev(km, 4)->tid, 41);
	assert_deferred_chain(ev(km, 3), 0x100000001ULL);
	assert_no_truth(ev(km, 3));
	ck_assert_uint_eq(rec.nr_calls, 1);
	ck_assert_uint_eq(rec.calls[0].nr, ARRAY_SIZE(U2));
	ck_assert_uint_eq(rec.calls[0].cookie, 0x100000001ULL);
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 2);

	/* Exit from user space: nothing pending, just the EXIT. */
	task(km, 42, 0, U2, ARRAY_SIZE(U2));
	ck_assert_int_eq(unwind_kmodel__task_exit(km, 42, 10, true), 0);
	ck_assert_uint_eq(nr_events(km), 6);
	ck_assert_int_eq(ev(km, 5)->type, UNWIND_KMODEL_EXIT);
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_exec)
{
	struct unwind_kmodel *km = mk_le(1);
	const uint64_t c1 = 0x100000001ULL, c2 = 0x300000001ULL;
	const struct unwind_kmodel_event *e;

	task(km, 50, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_exec(km, 50, 0, U2, ARRAY_SIZE(U2)), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 50, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_exec(km, 50, 0, NULL, 1), -EINVAL);
	ck_assert_int_eq(ksample(km, 50, 1, 1), 0);				/* old program */
	ck_assert_int_eq(unwind_kmodel__task_exec(km, 50, 2, U2, ARRAY_SIZE(U2)), 0);
	ck_assert_int_eq(ksample(km, 50, 3, 1), 2);				/* new program */
	ck_assert_int_eq(unwind_kmodel__task_return(km, 50, 4), 0);

	ck_assert_uint_eq(nr_events(km), 4);
	e = ev(km, 1);
	ck_assert_int_eq(e->type, UNWIND_KMODEL_EXEC);
	ck_assert_uint_eq(e->tid, 50);
	ck_assert_uint_eq(e->time, 2);
	ck_assert_uint_eq(e->cookie, 0);
	assert_deferred_chain(ev(km, 0), c1);
	assert_deferred_chain(ev(km, 2), c1);
	/* One record for the entry, unwound after the exec: the new stack. */
	assert_record(ev(km, 3), 50, 0, 4, 1, c1, U2, ARRAY_SIZE(U2));
	/* The sample before the exec did not interrupt that stack. */
	assert_no_truth(ev(km, 0));
	assert_truth(ev(km, 2), U2, ARRAY_SIZE(U2));
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1);

	/* Exec after the task_work: a late sample of the new program. */
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 50, 10), 0);
	ck_assert_int_eq(ksample(km, 50, 11, 1), 4);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 50, 12), 0);
	ck_assert_int_eq(unwind_kmodel__task_exec(km, 50, 13, U1, ARRAY_SIZE(U1)), 0);
	ck_assert_int_eq(ksample(km, 50, 14, 1), 7);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 50, 15), 0);
	ck_assert_uint_eq(nr_events(km), 8);
	assert_truth(ev(km, 4), U2, ARRAY_SIZE(U2));
	assert_record(ev(km, 5), 50, 0, 12, 1, c2, U2, ARRAY_SIZE(U2));
	ck_assert_int_eq(ev(km, 6)->type, UNWIND_KMODEL_EXEC);
	e = ev(km, 7);
	assert_deferred_chain(e, c2);
	ck_assert(e->late);
	assert_no_truth(e);

	/* The next entry sees the new program. */
	ck_assert_int_eq(unwind_kmodel__sample(km, 50, 20, 1, NULL, 0, true), 8);
	assert_record(ev(km, 9), 50, 0, 21, 1, 0x500000001ULL, U1, ARRAY_SIZE(U1));
	assert_truth(ev(km, 8), U1, ARRAY_SIZE(U1));
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_tid_reuse)
{
	struct unwind_kmodel *km = mk_le(2);
	uint64_t cookie;

	ck_assert_int_eq(unwind_kmodel__task_new(km, 60, 60, 0, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_new(km, 60, 60, 1, 0), -EEXIST);
	ck_assert_int_eq(unwind_kmodel__task_new(km, 61, 61, 2, 0), -EINVAL);	/* no CPU 2 */
	ck_assert_int_eq(unwind_kmodel__task_new(km, 61, 61, 0, 0x80), -EINVAL);	/* flags */
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 60, U1, ARRAY_SIZE(U1)), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 60, 0), 0);
	ck_assert_uint_eq(sample_cookie(km, 60, 1), 0x100000001ULL);
	ck_assert_int_eq(unwind_kmodel__task_exit(km, 60, 2, true), 0);
	ck_assert_uint_eq(nr_events(km), 3);

	/* The tid comes back: a new incarnation, in user space, no stack. */
	ck_assert_int_eq(unwind_kmodel__task_new(km, 70, 60, 0, 0), 0);
	ck_assert_int_eq(unwind_kmodel__request(km, 60, 0, &cookie), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 60, 3), 0);
	/* CPU 0's counter continues. */
	ck_assert_uint_eq(sample_cookie(km, 60, 4), 0x300000001ULL);
	ck_assert_uint_eq(ev(km, 3)->pid, 70);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 60, U2, ARRAY_SIZE(U2)), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 60, 5), 0);
	ck_assert_uint_eq(nr_events(km), 5);
	assert_record(ev(km, 4), 60, 0, 5, 1, 0x300000001ULL, U2, ARRAY_SIZE(U2));
	ck_assert_uint_eq(ev(km, 4)->pid, 70);
	assert_truth(ev(km, 3), U2, ARRAY_SIZE(U2));
	/* The old incarnation's sample kept its own truth. */
	assert_truth(ev(km, 0), U1, ARRAY_SIZE(U1));
	unwind_kmodel__delete(km);
}
END_TEST

START_TEST(test_many_tasks)
{
	struct unwind_kmodel *km = mk_le(4);
	const struct unwind_kmodel_event *e;
	size_t nr, i;
	uint32_t tid;

	/* Enough tasks to make the task table grow. */
	for (tid = 1; tid <= 1000; tid++) {
		task(km, tid, tid % 4, &U1[tid % 3], 1);
		ck_assert_int_eq(unwind_kmodel__task_enter(km, tid, tid), 0);
		ck_assert_int_ge(ksample(km, tid, tid, 1), 0);
	}
	for (tid = 1000; tid >= 1; tid--)
		ck_assert_int_eq(unwind_kmodel__task_return(km, tid, 2000 + tid), 0);
	e = unwind_kmodel__events(km, &nr);
	ck_assert_uint_eq(nr, 2000);
	for (i = 0; i < 1000; i++) {
		tid = (uint32_t)i + 1;
		ck_assert_uint_eq(e[i].tid, tid);
		ck_assert_uint_eq(e[i].cookie,
				  (uint64_t)(2 * ((tid - 1) / 4) + 1) << 32 | (tid % 4 + 1));
		assert_truth(&e[i], &U1[tid % 3], 1);
		ck_assert_uint_eq(e[1000 + i].tid, 1000 - i);
	}
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(km), 1000);
	unwind_kmodel__delete(km);
}
END_TEST

/* ---- file order ---- */

START_TEST(test_file_order)
{
	struct unwind_kmodel *km = mk_le(2);
	size_t order[6];

	ck_assert_int_eq(unwind_kmodel__file_order(km, 10, NULL, 0), 0);

	/* Sample on CPU 1 at 5, migrated, the record on CPU 0 at 6. */
	task(km, 1, 1, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), 0);
	ck_assert_int_eq(ksample(km, 1, 5, 1), 0);
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 1, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 1, 6), 0);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 7), 0);
	ck_assert_uint_eq(ev(km, 1)->cpu, 0);

	/* One round: CPU 0's buffer first, the record before its sample. */
	ck_assert_int_eq(unwind_kmodel__file_order(km, 10, order, 2), 0);
	ck_assert_uint_eq(order[0], 1);
	ck_assert_uint_eq(order[1], 0);
	/* Rounds of 1: time decides. */
	ck_assert_int_eq(unwind_kmodel__file_order(km, 1, order, 2), 0);
	ck_assert_uint_eq(order[0], 0);
	ck_assert_uint_eq(order[1], 1);

	/* A second round with both CPUs. */
	task(km, 2, 1, U2, ARRAY_SIZE(U2));
	task(km, 3, 0, U2, ARRAY_SIZE(U2));
	/* +3 at 13, +5 at 16 */
	ck_assert_int_eq(unwind_kmodel__sample(km, 2, 12, 1, NULL, 0, true), 2);
	ck_assert_int_eq(unwind_kmodel__sample(km, 3, 15, 1, NULL, 0, true), 4);
	ck_assert_int_eq(unwind_kmodel__file_order(km, 10, order, 6), 0);
	ck_assert_uint_eq(order[0], 1);
	ck_assert_uint_eq(order[1], 0);
	ck_assert_uint_eq(order[2], 4);
	ck_assert_uint_eq(order[3], 5);
	ck_assert_uint_eq(order[4], 2);
	ck_assert_uint_eq(order[5], 3);

	ck_assert_int_eq(unwind_kmodel__file_order(km, 10, order, 5), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__file_order(km, 0, order, 6), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__file_order(km, 10, NULL, 6), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__file_order(NULL, 10, order, 6), -EINVAL);
	unwind_kmodel__delete(km);
}
END_TEST

/* ---- misuse ---- */

START_TEST(test_errors)
{
	struct unwind_kmodel *km = mk_le(1);
	uint64_t cookie;
	size_t nr = 5;

	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 1, U1, 1), -ESRCH);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), -ESRCH);
	ck_assert_int_eq(unwind_kmodel__task_migrate(km, 1, 0), -ESRCH);
	ck_assert_int_eq(unwind_kmodel__task_work(km, 1, 0), -ESRCH);
	ck_assert_int_eq(unwind_kmodel__task_return(km, 1, 0), -ESRCH);
	ck_assert_int_eq(unwind_kmodel__task_exec(km, 1, 0, U1, 1), -ESRCH);
	ck_assert_int_eq(unwind_kmodel__task_exit(km, 1, 0, true), -ESRCH);
	ck_assert_int_eq(ksample(km, 1, 0, 1), -ESRCH);
	ck_assert_int_eq(unwind_kmodel__request(km, 1, 0, &cookie), -ESRCH);

	task(km, 1, 0, U1, ARRAY_SIZE(U1));
	ck_assert_int_eq(unwind_kmodel__request(km, 1, 0, NULL), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 1, NULL, 2), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, 1, NULL, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), 0);
	ck_assert_int_eq(unwind_kmodel__task_enter(km, 1, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__sample(km, 1, 0, 1, NULL, 2, false), -EINVAL);
	ck_assert_uint_eq(nr_events(km), 0);

	ck_assert_ptr_null(unwind_kmodel__events(NULL, &nr));
	ck_assert_uint_eq(nr, 0);
	ck_assert_uint_eq(unwind_kmodel__nr_unwinds(NULL), 0);
	ck_assert_int_eq(unwind_kmodel__user_register(NULL, noop_callback, NULL), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__user_unregister(NULL, 1), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__request(NULL, 1, 0, &cookie), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_new(NULL, 1, 1, 0, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(NULL, 1, U1, 1), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_enter(NULL, 1, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_migrate(NULL, 1, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_work(NULL, 1, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_return(NULL, 1, 0), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_exec(NULL, 1, 0, U1, 1), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__task_exit(NULL, 1, 0, true), -EINVAL);
	ck_assert_int_eq(unwind_kmodel__sample(NULL, 1, 0, 1, NULL, 0, false), -EINVAL);
	unwind_kmodel__delete(km);
}
END_TEST

static Suite *kmodel_suite(void)
{
	Suite *s = suite_create("kmodel");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_opts);
	tcase_add_test(tc, test_cookies_merged_le);
	tcase_add_test(tc, test_cookies_merged_be);
	tcase_add_test(tc, test_counter_wrap);
	tcase_add_test(tc, test_seed_layout);
	tcase_add_test(tc, test_shared_record);
	tcase_add_test(tc, test_two_listeners);
	tcase_add_test(tc, test_migration);
	tcase_add_test(tc, test_late_sample);
	tcase_add_test(tc, test_user_mode_sample);
	tcase_add_test(tc, test_kthread);
	tcase_add_test(tc, test_not_in_kernel);
	tcase_add_test(tc, test_exiting);
	tcase_add_test(tc, test_register_ebusy);
	tcase_add_test(tc, test_callbacks);
	tcase_add_test(tc, test_unwind_failed);
	tcase_add_test(tc, test_depth_limit);
	tcase_add_test(tc, test_exit_records);
	tcase_add_test(tc, test_exec);
	tcase_add_test(tc, test_tid_reuse);
	tcase_add_test(tc, test_many_tasks);
	tcase_add_test(tc, test_file_order);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(kmodel_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
