// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The stitch engine, one requirement per test: each scenario is fed by
 * hand and the delivered samples are compared entry by entry.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind-cookie/stitcher.h>

#define W	100	/* the window every test uses, unless it says otherwise */
#define MAX_OUT	256

struct out {
	enum unwind_stitch_status status;
	enum unwind_orphan_reason reason;
	long id;		/* the payload */
	uint32_t tid;
	uint64_t user[8];
	size_t nr_user;
	size_t nr_kernel;
	uint64_t kernel0;
	uint32_t record_cpu;
	uint64_t record_time;
	bool late;
};

static struct out outs[MAX_OUT];
static size_t nr_outs;

static void collect(void *ctx, const struct unwind_stitched_sample *s)
{
	struct out *o = &outs[nr_outs++];

	(void)ctx;
	ck_assert_uint_le(nr_outs, MAX_OUT);
	memset(o, 0, sizeof(*o));
	o->status = s->status;
	o->reason = s->reason;
	o->id = (long)(intptr_t)s->payload;
	o->tid = s->tid;
	o->nr_user = s->nr_user;
	ck_assert_uint_le(s->nr_user, 8);
	if (s->nr_user)
		memcpy(o->user, s->user, s->nr_user * sizeof(uint64_t));
	o->nr_kernel = s->nr_kernel;
	o->kernel0 = s->nr_kernel ? s->kernel[0] : 0;
	o->record_cpu = s->record_cpu;
	o->record_time = s->record_time;
	o->late = s->late;
}

static struct unwind_stitcher *new_stitcher(enum unwind_stitcher_order order, size_t max_bytes)
{
	struct unwind_stitcher_opts opts = {
		.sz = sizeof(opts),
		.deliver = collect,
		.order = order,
		.window = W,
		.max_pending_bytes = max_bytes,
		.layout = UNWIND_COOKIE_LAYOUT_MERGED_LE,
	};
	struct unwind_stitcher *st = unwind_stitcher__new(&opts);

	ck_assert_ptr_nonnull(st);
	nr_outs = 0;
	return st;
}

/* Time-ordered input (opts.sorted) delivered in input order, as perf uses it. */
static struct unwind_stitcher *new_sorted_stitcher(void)
{
	struct unwind_stitcher_opts opts = {
		.sz = sizeof(opts), .deliver = collect, .order = UNWIND_STITCHER_ORDER_INPUT,
		.window = W, .layout = UNWIND_COOKIE_LAYOUT_MERGED_LE, .sorted = true,
	};
	struct unwind_stitcher *st = unwind_stitcher__new(&opts);

	ck_assert_ptr_nonnull(st);
	nr_outs = 0;
	return st;
}

static const uint64_t kchain[] = { UNWIND_COOKIE_CONTEXT_KERNEL, 0xffffffff81000010ULL };

/* The sample @id of @pid/@tid, its kernel part kchain */
static struct unwind_stitcher_sample sample_of(long id, uint32_t pid, uint32_t tid,
					       uint64_t time, uint64_t cookie)
{
	return (struct unwind_stitcher_sample){
		.sz = sizeof(struct unwind_stitcher_sample), .pid = pid, .tid = tid,
		.cpu = 0, .time = time, .kernel = kchain, .nr_kernel = 2, .cookie = cookie,
		.payload = (void *)(intptr_t)id,
	};
}

static void sample(struct unwind_stitcher *st, long id, uint32_t pid, uint32_t tid,
		   uint64_t time, uint64_t cookie)
{
	struct unwind_stitcher_sample s = sample_of(id, pid, tid, time, cookie);

	ck_assert_int_eq(unwind_stitcher__add_sample(st, &s), 0);
}

static void record(struct unwind_stitcher *st, uint32_t pid, uint32_t tid, uint32_t cpu,
		   uint64_t time, uint64_t cookie, const uint64_t *ips, size_t nr)
{
	struct unwind_stitcher_record r = {
		.sz = sizeof(r), .pid = pid, .tid = tid, .cpu = cpu, .time = time,
		.cookie = cookie, .ips = ips, .nr = nr,
	};

	ck_assert_int_eq(unwind_stitcher__add_record(st, &r), 0);
}

/* An event of an unrelated task, only to move the engine's clock. */
static void tick(struct unwind_stitcher *st, uint64_t time)
{
	ck_assert_int_eq(unwind_stitcher__task_exec(st, 999, 999, time), 0);
}

static struct unwind_stitcher_stats stats_of(struct unwind_stitcher *st)
{
	struct unwind_stitcher_stats s = { .sz = sizeof(s) };

	ck_assert_int_eq(unwind_stitcher__stats(st, &s), 0);
	return s;
}

/* The outputs with a given payload id. */
static const struct out *find(long id)
{
	size_t i;

	for (i = 0; i < nr_outs; i++)
		if (outs[i].id == id)
			return &outs[i];
	return NULL;
}

static const uint64_t U1[] = { 0x401000, 0x402000, 0x403000 };
static const uint64_t U2[] = { 0x501000, 0x502000 };

/* cnt 11 on CPU 5, the upstream example; cnt 13, 15 and 17 on CPU 5. */
#define C1 0xb00000006ULL
#define C2 0xd00000006ULL
#define C3 0xf00000006ULL
#define C4 0x1100000006ULL

static void assert_stitched(const struct out *o, const uint64_t *user, size_t nr)
{
	size_t i;

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(o->status, UNWIND_STITCH_STITCHED);
	ck_assert_int_eq(o->reason, UNWIND_ORPHAN_NONE);
	ck_assert_uint_eq(o->nr_user, nr);
	for (i = 0; i < nr; i++)
		ck_assert_uint_eq(o->user[i], user[i]);
	ck_assert_uint_eq(o->nr_kernel, 2);
	ck_assert_uint_eq(o->kernel0, UNWIND_COOKIE_CONTEXT_KERNEL);
}

static void assert_orphan(const struct out *o, enum unwind_orphan_reason reason)
{
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(o->status, UNWIND_STITCH_ORPHAN);
	ck_assert_int_eq(o->reason, reason);
	ck_assert_uint_eq(o->nr_user, 0);
}

/* Every sample fed came back exactly once and the counters agree. */
static void assert_reconciled(struct unwind_stitcher *st)
{
	struct unwind_stitcher_stats s = stats_of(st);
	uint64_t orphans = 0;
	int r;

	for (r = 0; r < UNWIND_ORPHAN__MAX; r++)
		orphans += s.orphans[r];
	ck_assert_uint_eq(orphans, s.orphans_total);
	ck_assert_uint_eq(s.samples + s.passthrough, nr_outs + s.pending_samples);
	ck_assert_uint_eq(s.deferred_samples, s.stitched + s.orphans_total +
			  s.pending_samples);
}

START_TEST(test_sample_then_record)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	struct unwind_stitcher_stats s;

	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_uint_eq(nr_outs, 0);
	record(st, 10, 11, 5, 1040, C1, U1, 3);
	/* Joined, but held a window for an exec or exit fed late. */
	tick(st, 1040 + W);
	ck_assert_uint_eq(nr_outs, 0);
	tick(st, 1040 + W + 1);
	ck_assert_uint_eq(nr_outs, 1);
	assert_stitched(&outs[0], U1, 3);
	ck_assert_uint_eq(outs[0].record_cpu, 5);
	ck_assert_uint_eq(outs[0].record_time, 1040);
	ck_assert(!outs[0].late);
	s = stats_of(st);
	ck_assert_uint_eq(s.samples, 1);
	ck_assert_uint_eq(s.deferred_samples, 1);
	ck_assert_uint_eq(s.records, 1);
	ck_assert_uint_eq(s.stitched, 1);
	ck_assert_uint_eq(s.cross_cpu_records, 0);
	ck_assert_uint_eq(s.latency.count, 1);
	ck_assert_int_eq(s.latency.min, 40);
	ck_assert_int_eq(s.latency.max, 40);
	ck_assert_int_eq(s.latency.median, 40);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* The record sits earlier in the file: another CPU's buffer, earlier round. */
START_TEST(test_record_before_sample)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	record(st, 10, 11, 2, 1040, C1, U1, 3);
	sample(st, 1, 10, 11, 1000, C1);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 1);
	assert_stitched(&outs[0], U1, 3);
	ck_assert(!outs[0].late);
	/* Written on CPU 2, the cookie is CPU 5's. */
	ck_assert_uint_eq(stats_of(st).cross_cpu_records, 1);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(stats_of(st).unclaimed_records, 0);
	unwind_stitcher__delete(st);
}
END_TEST

/* A record of an event without PERF_SAMPLE_CPU: its CPU is not "another". */
START_TEST(test_record_cpu_unknown)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, UNWIND_STITCHER_CPU_UNKNOWN, 1040, C1, U1, 3);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 1);
	assert_stitched(&outs[0], U1, 3);
	ck_assert_uint_eq(outs[0].record_cpu, UNWIND_STITCHER_CPU_UNKNOWN);
	ck_assert_uint_eq(stats_of(st).cross_cpu_records, 0);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* Three samples of one kernel entry from two events share one record. */
START_TEST(test_one_entry_many_samples)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 10, 11, 1005, C1);
	sample(st, 3, 10, 12, 1006, C1);	/* other tid, same cookie: not ours */
	sample(st, 4, 10, 11, 1010, C1);
	record(st, 10, 11, 5, 1040, C1, U1, 3);
	tick(st, 1141);
	ck_assert_uint_eq(nr_outs, 3);
	ck_assert_int_eq(outs[0].id, 1);
	ck_assert_int_eq(outs[1].id, 2);
	ck_assert_int_eq(outs[2].id, 4);
	assert_stitched(&outs[0], U1, 3);
	assert_stitched(&outs[1], U1, 3);
	assert_stitched(&outs[2], U1, 3);
	unwind_stitcher__finish(st);
	assert_orphan(find(3), UNWIND_ORPHAN_STREAM_ENDED);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* An NMI late on the exit path: taken after its record was written. */
START_TEST(test_late_sample)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	struct unwind_stitcher_stats s;

	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, 5, 1040, C1, U1, 3);
	sample(st, 2, 10, 11, 1043, C1);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 2);
	assert_stitched(&outs[1], U1, 3);
	ck_assert(outs[1].late);
	s = stats_of(st);
	ck_assert_uint_eq(s.late_samples, 1);
	ck_assert_int_eq(s.latency.min, -3);
	ck_assert_int_eq(s.latency.max, 40);
	unwind_stitcher__delete(st);
}
END_TEST

/* A record stays for late samples one window, then it is gone. */
START_TEST(test_record_window)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	record(st, 10, 11, 5, 1000, C1, U1, 3);
	sample(st, 1, 10, 11, 1001, C1);
	tick(st, 1100);			/* watermark = record + W: nothing settled */
	ck_assert_ptr_null(find(1));
	tick(st, 1101);			/* first deadline: joined samples settle */
	assert_stitched(find(1), U1, 3);
	/* Timed 1005, it may arrive until the watermark passes 1105. */
	tick(st, 1104);
	sample(st, 2, 10, 11, 1005, C1);
	record(st, 10, 11, 5, 1001, C1, U1, 3);	/* a copy, as late as allowed */
	ck_assert_ptr_null(find(2));
	tick(st, 1202);			/* second deadline: settled and released */
	assert_stitched(find(2), U1, 3);
	ck_assert(find(2)->late);
	ck_assert_uint_eq(stats_of(st).duplicates, 1);
	ck_assert_uint_eq(stats_of(st).unclaimed_records, 0);
	sample(st, 3, 10, 11, 1002, C1);	/* beyond any promised disorder */
	ck_assert_ptr_null(find(3));
	unwind_stitcher__finish(st);
	assert_orphan(find(3), UNWIND_ORPHAN_STREAM_ENDED);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* A huge window must neither wrap around nor hang. */
START_TEST(test_huge_window)
{
	struct unwind_stitcher_opts opts = {
		.sz = sizeof(opts), .deliver = collect, .window = UINT64_MAX,
	};
	struct unwind_stitcher *st = unwind_stitcher__new(&opts);

	ck_assert_ptr_nonnull(st);
	nr_outs = 0;
	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, 5, 1040, C1, U1, 3);
	tick(st, 1ULL << 61);		/* within the clamped window (2^62) */
	ck_assert_uint_eq(nr_outs, 0);
	unwind_stitcher__finish(st);
	assert_stitched(find(1), U1, 3);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_duplicates)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	static const uint64_t other[] = { 0x401000, 0x402000, 0x4030ff };
	struct unwind_stitcher_stats s;

	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, 5, 1040, C1, U1, 3);
	record(st, 10, 11, 5, 1040, C1, U1, 3);		/* second defer_output event */
	record(st, 10, 11, 5, 1040, C1, other, 3);	/* disagrees: first one wins */
	sample(st, 2, 10, 11, 1041, C1);
	unwind_stitcher__finish(st);
	s = stats_of(st);
	ck_assert_uint_eq(s.records, 3);
	ck_assert_uint_eq(s.duplicates, 1);
	ck_assert_uint_eq(s.duplicates_conflicting, 1);
	ck_assert_uint_eq(s.stitched, 2);
	assert_stitched(find(1), U1, 3);
	assert_stitched(find(2), U1, 3);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * The record of entry C1 never comes; entry C2 of the same task completes.
 * The first check (at watermark > 1000 + W) finds that evidence, the second
 * one, a window later, orphans the sample.
 */
START_TEST(test_lost_by_later_entry)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 10, 11, 1020, C2);
	record(st, 10, 11, 5, 1030, C2, U2, 2);
	tick(st, 1101);			/* first check: evidence noted */
	ck_assert_ptr_null(find(1));
	tick(st, 1201);			/* deadline 1101 + W not passed yet */
	ck_assert_ptr_null(find(1));
	tick(st, 1202);
	assert_orphan(find(1), UNWIND_ORPHAN_RECORD_LOST);
	assert_stitched(find(2), U2, 2);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * A slot without evidence is idle, off the deadline queue: a later entry's
 * record wakes it a window later, and with an exit too, the earlier
 * evidence names the reason (the record was written before the exit).
 */
START_TEST(test_idle_slot_woken)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	tick(st, 1101);			/* first check: nothing, idle */
	tick(st, 5000);			/* idle: not checked again */
	ck_assert_ptr_null(find(1));
	sample(st, 2, 10, 11, 5010, C2);
	record(st, 10, 11, 5, 5020, C2, U2, 2);	/* wakes slot C1 */
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 11, 5030), 0);
	tick(st, 5121);			/* check: evidence noted */
	ck_assert_ptr_null(find(1));
	tick(st, 5222);
	assert_orphan(find(1), UNWIND_ORPHAN_RECORD_LOST);
	assert_stitched(find(2), U2, 2);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* A task sleeping in a syscall for long is not declared lost. */
START_TEST(test_long_syscall)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	uint64_t t;

	sample(st, 1, 10, 11, 1000, C1);
	for (t = 1100; t < 10000; t += 50)
		tick(st, t);
	ck_assert_ptr_null(find(1));
	record(st, 10, 11, 3, 10000, C1, U1, 3);
	unwind_stitcher__finish(st);
	assert_stitched(find(1), U1, 3);
	ck_assert_int_eq(stats_of(st).latency.max, 9000);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * A lost notice names the reason only where the task is known to have left
 * the kernel entry: here it exited, so its record was due and was lost.
 */
START_TEST(test_lost_notice)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 20, 21, 1000, C2);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 11, 1005), 0);
	ck_assert_int_eq(unwind_stitcher__lost(st, 5, 1010), 0);
	sample(st, 3, 30, 31, 1020, C3);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 30, 31, 1200), 0);
	unwind_stitcher__finish(st);
	assert_orphan(find(1), UNWIND_ORPHAN_RECORD_LOST);
	/* Still in the kernel as far as anyone knows: the notice proves nothing. */
	assert_orphan(find(2), UNWIND_ORPHAN_STREAM_ENDED);
	/* Sampled after the notice: not covered by it. */
	assert_orphan(find(3), UNWIND_ORPHAN_TASK_EXITED);
	ck_assert_uint_eq(stats_of(st).lost_notices, 1);
	ck_assert_uint_eq(stats_of(st).orphans[UNWIND_ORPHAN_RECORD_LOST], 1);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * The record of an entry with a late sample is written (and here lost)
 * before that sample: a notice after the entry's first sample covers it.
 */
START_TEST(test_lost_notice_late_sample)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__lost(st, 5, 1010), 0);
	sample(st, 2, 10, 11, 1011, C1);	/* on the way out, after the record */
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 11, 1040), 0);
	unwind_stitcher__finish(st);
	assert_orphan(find(1), UNWIND_ORPHAN_RECORD_LOST);
	assert_orphan(find(2), UNWIND_ORPHAN_RECORD_LOST);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_task_exit)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 10, 12, 1000, C2);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 11, 1050), 0);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 12, 1050), 0);
	/* tid 12's record was written at exit, before PERF_RECORD_EXIT. */
	record(st, 10, 12, 5, 1049, C2, U2, 2);
	tick(st, 1101);
	ck_assert_ptr_null(find(1));
	tick(st, 1202);
	/* a record may still follow the exit: a window after it is conclusive */
	ck_assert_ptr_null(find(1));
	tick(st, 1303);
	assert_orphan(find(1), UNWIND_ORPHAN_TASK_EXITED);
	assert_stitched(find(2), U2, 2);
	ck_assert_uint_eq(stats_of(st).orphans[UNWIND_ORPHAN_TASK_EXITED], 1);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * Seen on 7.2 system-wide: the record of an exiting task's last entry
 * comes after its PERF_RECORD_EXIT. Within a window of the exit it joins;
 * a record that far after the exit belongs to nothing this task sampled.
 */
START_TEST(test_record_after_exit)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 10, 12, 1000, C2);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 11, 1050), 0);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 12, 1050), 0);
	record(st, 10, 11, 5, 1051, C1, U1, 3);
	tick(st, 1120);
	record(st, 10, 12, 5, 1050 + W + 1, C2, U2, 2);
	tick(st, 1500);
	assert_stitched(find(1), U1, 3);
	assert_orphan(find(2), UNWIND_ORPHAN_TASK_EXITED);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(stats_of(st).unclaimed_records, 1);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* The same in time order, where the exit's evidence is settled soonest. */
START_TEST(test_record_after_exit_sorted)
{
	struct unwind_stitcher *st = new_sorted_stitcher();

	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 11, 1050), 0);
	tick(st, 1050);
	record(st, 10, 11, 5, 1050, C1, U1, 3);
	assert_stitched(find(1), U1, 3);
	unwind_stitcher__finish(st);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * File order with long rounds: the record came a round before its late
 * sample, and the other CPUs' buffers moved the watermark far past the
 * window meanwhile. The rounds say the sample may still come
 * (unwind_stitcher__horizon()); without them the record is gone.
 */
static void long_round(bool rounds)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	uint64_t t;

	if (rounds)
		ck_assert_int_eq(unwind_stitcher__horizon(st, 900), 0);
	record(st, 10, 11, 5, 1000, C1, U1, 3);
	record(st, 10, 11, 5, 1500, C2, U2, 2);		/* the next entry */
	for (t = 1000; t <= 1000 + 10 * W; t += 50)
		tick(st, t);
	sample(st, 1, 10, 11, 1004, C1);		/* late, a round later */
	if (rounds)
		ck_assert_int_eq(unwind_stitcher__horizon(st, 1000 + 10 * W), 0);
	tick(st, 1000 + 20 * W);
	unwind_stitcher__finish(st);
	if (rounds)
		assert_stitched(find(1), U1, 3);
	else
		ck_assert_int_eq(find(1)->status, UNWIND_STITCH_ORPHAN);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}

START_TEST(test_horizon_long_round)
{
	long_round(true);
	long_round(false);
}
END_TEST

/* A horizon only ever moves forward, and is refused without a stitcher. */
START_TEST(test_horizon_monotonic)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	ck_assert_int_eq(unwind_stitcher__horizon(NULL, 1), -EINVAL);
	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__horizon(st, 1000), 0);
	ck_assert_int_eq(unwind_stitcher__horizon(st, 10), 0);	/* ignored */
	record(st, 10, 11, 5, 1200, C2, U2, 2);		/* the task moved on */
	tick(st, 2000);
	ck_assert_ptr_null(find(1));		/* horizon 1000: not yet decided */
	ck_assert_int_eq(unwind_stitcher__horizon(st, 1900), 0);
	ck_assert_ptr_null(find(1));		/* evidence noted at 2000 */
	tick(st, 2200);
	ck_assert_int_eq(unwind_stitcher__horizon(st, 2150), 0);
	assert_orphan(find(1), UNWIND_ORPHAN_RECORD_LOST);
	unwind_stitcher__finish(st);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * A live reader's input goes quiet: the clock it passes decides what waited
 * for the window, a stitched sample and one whose task moved on, without a
 * next input; an earlier time changes nothing.
 */
START_TEST(test_advance)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	ck_assert_int_eq(unwind_stitcher__advance(NULL, 1), -EINVAL);
	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, 5, 1010, C1, U1, 3);
	sample(st, 2, 20, 21, 1020, C2);
	record(st, 20, 21, 5, 1030, C3, U2, 2);	/* task 21's next entry */
	ck_assert_int_eq(unwind_stitcher__advance(st, 1110), 0);
	ck_assert_ptr_null(find(1));		/* a window after the record: not yet */
	ck_assert_int_eq(unwind_stitcher__advance(st, 500), 0);	/* earlier: nothing */
	ck_assert_ptr_null(find(1));
	ck_assert_int_eq(unwind_stitcher__advance(st, 1111), 0);
	assert_stitched(find(1), U1, 3);
	ck_assert_ptr_null(find(2));
	ck_assert_int_eq(unwind_stitcher__advance(st, 1300), 0);
	ck_assert_ptr_null(find(2));		/* first check: evidence noted */
	ck_assert_int_eq(unwind_stitcher__advance(st, 1401), 0);
	assert_orphan(find(2), UNWIND_ORPHAN_RECORD_LOST);
	ck_assert_uint_eq(stats_of(st).pending_samples, 0);
	ck_assert_uint_eq(stats_of(st).samples, 2);	/* advancing is no input */
	ck_assert_uint_eq(stats_of(st).passthrough, 0);
	unwind_stitcher__finish(st);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* A task blocked in the kernel: its sample's record comes many windows later. */
START_TEST(test_blocked_record_first)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	/* in file order the record's buffer came first: 30 windows apart */
	record(st, 10, 11, 3, 1000 + 30 * W, C1, U1, 3);
	sample(st, 1, 10, 11, 1000, C1);
	unwind_stitcher__finish(st);
	assert_stitched(find(1), U1, 3);
	ck_assert_int_eq(stats_of(st).latency.max, 30 * W);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_stream_ended)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_uint_eq(stats_of(st).pending_samples, 1);
	ck_assert_int_eq(unwind_stitcher__finish(st), 0);
	assert_orphan(find(1), UNWIND_ORPHAN_STREAM_ENDED);
	ck_assert_uint_eq(stats_of(st).pending_samples, 0);
	ck_assert_uint_eq(stats_of(st).pending_bytes, 0);
	ck_assert_uint_gt(stats_of(st).peak_pending_bytes, 0);
	ck_assert_uint_eq(stats_of(st).peak_pending_samples, 1);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

static int nr_warnings;
static char last_warning[256];

static int capture_print(enum libunwind_cookie_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBUNWIND_COOKIE_WARN) {
		nr_warnings++;
		vsnprintf(last_warning, sizeof(last_warning), fmt, ap);
	}
	return 0;
}

START_TEST(test_memory_cap)
{
	struct unwind_stitcher *st;
	libunwind_cookie_print_fn_t old = libunwind_cookie_set_print(capture_print);
	size_t one, per, cap;

	/* Measure what the task and each pending entry cost; allow 3.5 entries. */
	st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	sample(st, 1, 10, 11, 1000, C1);
	one = stats_of(st).pending_bytes;
	sample(st, 2, 10, 11, 1000, C2);
	per = stats_of(st).pending_bytes - one;
	unwind_stitcher__delete(st);

	cap = one + 2 * per + per / 2;
	st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, cap);
	nr_warnings = 0;
	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 10, 11, 1001, C2);
	sample(st, 3, 10, 11, 1002, C3);
	ck_assert_uint_eq(nr_outs, 0);
	sample(st, 4, 10, 11, 1003, C3 + (2ULL << 32));
	ck_assert_uint_eq(nr_outs, 1);
	assert_orphan(find(1), UNWIND_ORPHAN_MEMORY_CAP);
	sample(st, 5, 10, 11, 1004, C3 + (4ULL << 32));
	assert_orphan(find(2), UNWIND_ORPHAN_MEMORY_CAP);
	ck_assert_int_eq(nr_warnings, 1);
	ck_assert_ptr_nonnull(strstr(last_warning, "memory cap"));
	ck_assert_uint_le(stats_of(st).peak_pending_bytes, cap + per);
	record(st, 10, 11, 5, 1010, C3, U1, 3);
	unwind_stitcher__finish(st);
	assert_stitched(find(3), U1, 3);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
	libunwind_cookie_set_print(old);
}
END_TEST

/*
 * tid 11 exits; a new task gets tid 11 and, after a counter wrap, the same
 * cookie. The old sample must not borrow the new task's stack.
 */
START_TEST(test_tid_reuse)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__task_exit(st, 10, 11, 1010), 0);
	sample(st, 2, 40, 11, 1030, C1);
	record(st, 40, 11, 5, 1040, C1, U2, 2);
	unwind_stitcher__finish(st);
	assert_stitched(find(2), U2, 2);
	assert_orphan(find(1), UNWIND_ORPHAN_TASK_EXITED);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* Same tid and cookie, another pid, no exit seen: still not joined. */
START_TEST(test_pid_mismatch)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	record(st, 40, 11, 5, 1040, C1, U2, 2);
	ck_assert_ptr_null(find(1));
	unwind_stitcher__finish(st);
	ck_assert_int_eq(find(1)->status, UNWIND_STITCH_ORPHAN);
	ck_assert_uint_eq(stats_of(st).unclaimed_records, 1);
	unwind_stitcher__delete(st);
}
END_TEST

/* A cookie seen again far later (counter wrap) is another entry. */
START_TEST(test_cookie_wrap)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, 5, 1010, C1, U1, 3);
	sample(st, 2, 10, 11, 1000 + 10 * W, C1);	/* same cookie, wrapped */
	ck_assert_ptr_null(find(2));
	record(st, 10, 11, 5, 1010 + 10 * W, C1, U2, 2);
	unwind_stitcher__finish(st);
	assert_stitched(find(1), U1, 3);
	assert_stitched(find(2), U2, 2);
	ck_assert_uint_eq(stats_of(st).duplicates, 0);
	unwind_stitcher__delete(st);
}
END_TEST

/* execve: the record shows the new program; samples before exec are orphans. */
START_TEST(test_exec)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__task_exec(st, 10, 11, 1015), 0);
	sample(st, 2, 10, 11, 1017, C1);
	record(st, 10, 11, 5, 1020, C1, U2, 2);
	/* A sample of a later entry is not affected by the old exec. */
	sample(st, 3, 10, 11, 1030, C2);
	record(st, 10, 11, 5, 1040, C2, U2, 2);
	/* a late sample after an exec that followed the unwind: not the record's program */
	record(st, 10, 11, 5, 1050, C3, U1, 3);
	ck_assert_int_eq(unwind_stitcher__task_exec(st, 10, 11, 1052), 0);
	sample(st, 4, 10, 11, 1054, C3);
	unwind_stitcher__finish(st);
	assert_orphan(find(1), UNWIND_ORPHAN_EXEC);
	assert_stitched(find(2), U2, 2);
	assert_stitched(find(3), U2, 2);
	assert_orphan(find(4), UNWIND_ORPHAN_EXEC);
	ck_assert_uint_eq(stats_of(st).orphans[UNWIND_ORPHAN_EXEC], 2);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_unwind_failed_and_bogus_ips)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	static const uint64_t bogus[] = { 0x401000, 0x402000, 0xfffffffffffffe98ULL, 0x403000 };
	static const uint64_t zero_first[] = { 0, 0x401000 };
	static const uint64_t zero_middle[] = { 0x401000, 0, 0x402000, 0x403000, 0 };
	struct unwind_stitcher_stats s;

	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, 5, 1010, C1, NULL, 0);
	sample(st, 2, 10, 11, 1020, C2);
	record(st, 10, 11, 5, 1030, C2, bogus, 4);
	sample(st, 3, 10, 11, 1040, C3);
	record(st, 10, 11, 5, 1050, C3, zero_first, 2);
	sample(st, 4, 10, 11, 1060, C4);
	record(st, 10, 11, 5, 1070, C4, zero_middle, 5);
	unwind_stitcher__finish(st);
	assert_orphan(find(1), UNWIND_ORPHAN_UNWIND_FAILED);
	assert_stitched(find(2), bogus, 2);
	/* 0 return addresses are what the kernel wrote: kept, not an end */
	assert_stitched(find(3), zero_first, 2);
	assert_stitched(find(4), zero_middle, 5);

	s = stats_of(st);
	ck_assert_uint_eq(s.truncated_records, 1);
	ck_assert_uint_eq(s.empty_records, 1);
	ck_assert_uint_eq(s.orphans[UNWIND_ORPHAN_UNWIND_FAILED], 1);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_not_deferred)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);

	sample(st, 1, 10, 11, 1000, 0);
	ck_assert_uint_eq(nr_outs, 1);
	ck_assert_int_eq(outs[0].status, UNWIND_STITCH_NOT_DEFERRED);
	ck_assert_uint_eq(outs[0].nr_kernel, 2);
	ck_assert_uint_eq(stats_of(st).samples, 1);
	ck_assert_uint_eq(stats_of(st).deferred_samples, 0);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_input_order)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_INPUT, 0);

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 20, 21, 1001, 0);
	sample(st, 3, 20, 21, 1002, C2);
	record(st, 20, 21, 5, 1003, C2, U2, 2);
	ck_assert_uint_eq(nr_outs, 0);		/* all wait for sample 1 */
	record(st, 10, 11, 5, 1004, C1, U1, 3);
	ck_assert_uint_eq(nr_outs, 0);
	tick(st, 1104);			/* sample 3 is settled... */
	ck_assert_uint_eq(stats_of(st).stitched, 1);
	ck_assert_uint_eq(nr_outs, 0);	/* ...but waits for sample 1 */
	tick(st, 1105);
	ck_assert_uint_eq(nr_outs, 3);
	ck_assert_int_eq(outs[0].id, 1);
	ck_assert_int_eq(outs[1].id, 2);
	ck_assert_int_eq(outs[2].id, 3);
	assert_stitched(&outs[0], U1, 3);
	ck_assert_int_eq(outs[1].status, UNWIND_STITCH_NOT_DEFERRED);
	assert_stitched(&outs[2], U2, 2);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * opts.sorted: in time order a record settles its samples when it arrives,
 * a late sample settles when it does, and the queue behind them moves on;
 * an exec before the record still makes an orphan, and a record without
 * its samples still waits a window for late ones.
 */
START_TEST(test_sorted_input)
{
	struct unwind_stitcher *st = new_sorted_stitcher();

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 20, 21, 1001, 0);
	ck_assert_uint_eq(nr_outs, 0);		/* sample 2 waits for sample 1 */
	record(st, 10, 11, 5, 1004, C1, U1, 3);
	ck_assert_uint_eq(nr_outs, 2);		/* no window to wait */
	assert_stitched(&outs[0], U1, 3);
	ck_assert_int_eq(outs[1].id, 2);
	sample(st, 3, 10, 11, 1005, C1);	/* late: its record is in */
	ck_assert_uint_eq(nr_outs, 3);
	assert_stitched(&outs[2], U1, 3);
	ck_assert(outs[2].late);
	sample(st, 4, 10, 11, 1010, C2);
	ck_assert_int_eq(unwind_stitcher__task_exec(st, 10, 11, 1015), 0);
	record(st, 10, 11, 5, 1020, C2, U2, 2);
	ck_assert_uint_eq(nr_outs, 4);
	assert_orphan(&outs[3], UNWIND_ORPHAN_EXEC);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 4);
	assert_reconciled(st);
	unwind_stitcher__delete(st);
}
END_TEST

static int sample_ahead(struct unwind_stitcher *st, long id, uint32_t pid, uint32_t tid,
			uint64_t time, uint64_t cookie, uint64_t rtime, const uint64_t *ips,
			size_t nr)
{
	struct unwind_stitcher_sample s = sample_of(id, pid, tid, time, cookie);
	struct unwind_stitcher_record r = {
		.sz = sizeof(r), .pid = pid, .tid = tid, .cpu = 5, .time = rtime,
		.cookie = cookie, .ips = ips, .nr = nr,
	};

	return unwind_stitcher__add_sample_ahead(st, &s, &r);
}

/*
 * A record read ahead settles its samples at once, and nothing fed after
 * them waits; when the record comes in its place it is counted as it would
 * be otherwise: the same answers and counters as test_sorted_input's
 * waiting, without the wait.
 */
/* test_sample_ahead's input, its first two samples with their record ahead or not */
static struct unwind_stitcher_stats sample_ahead_run(bool ahead, struct out *out)
{
	struct unwind_stitcher *st = new_sorted_stitcher();
	struct unwind_stitcher_stats s;

	if (ahead)
		ck_assert_int_eq(sample_ahead(st, 1, 10, 11, 1000, C1, 5000, U1, 3), 0);
	else
		sample(st, 1, 10, 11, 1000, C1);
	ck_assert_uint_eq(nr_outs, ahead);	/* no wait for a record 4000 later */
	sample(st, 2, 20, 21, 1001, 0);
	ck_assert_uint_eq(nr_outs, ahead ? 2 : 0);	/* nothing waits behind it */
	/* a second sample of the same kernel entry */
	if (ahead)
		ck_assert_int_eq(sample_ahead(st, 3, 10, 11, 1002, C1, 5000, U1, 3), 0);
	else
		sample(st, 3, 10, 11, 1002, C1);
	tick(st, 4000);				/* past the slot's window */
	ck_assert_uint_eq(stats_of(st).records, 0);
	record(st, 10, 11, 5, 5000, C1, U1, 3);	/* the record in its place */
	record(st, 10, 11, 5, 5000, C1, U1, 3);	/* a copy */
	sample(st, 4, 10, 11, 5010, C1);	/* late: joins the record */
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 4);
	memcpy(out, outs, 4 * sizeof(*out));
	assert_reconciled(st);
	s = stats_of(st);
	unwind_stitcher__delete(st);
	return s;
}

/*
 * A record read ahead settles its samples at once, and nothing fed after
 * them waits; when the record comes in its place it is counted as it would
 * be otherwise: the same answers and counters as waiting for it, except
 * what waited.
 */
START_TEST(test_sample_ahead)
{
	struct out ahead[4], waiting[4];
	struct unwind_stitcher_stats a = sample_ahead_run(true, ahead);
	struct unwind_stitcher_stats w = sample_ahead_run(false, waiting);
	int i;

	/* in input order, the same as waiting */
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(ahead[i].id, waiting[i].id);
		ck_assert_int_eq(ahead[i].status, waiting[i].status);
		ck_assert_uint_eq(ahead[i].nr_user, waiting[i].nr_user);
		ck_assert_uint_eq(ahead[i].record_time, waiting[i].record_time);
		ck_assert_uint_eq(ahead[i].record_cpu, waiting[i].record_cpu);
		ck_assert_int_eq(ahead[i].late, waiting[i].late);
	}
	assert_stitched(&ahead[0], U1, 3);
	ck_assert_uint_eq(ahead[0].record_time, 5000);
	ck_assert(ahead[3].late);
	ck_assert_uint_eq(a.records, 2);
	ck_assert_uint_eq(a.duplicates, 1);
	ck_assert_uint_eq(a.stitched, 3);
	ck_assert_uint_eq(a.late_samples, 1);
	ck_assert_uint_eq(a.unclaimed_records, 0);
	ck_assert_uint_eq(a.records, w.records);
	ck_assert_uint_eq(a.duplicates, w.duplicates);
	ck_assert_uint_eq(a.stitched, w.stitched);
	ck_assert_uint_eq(a.late_samples, w.late_samples);
	ck_assert_uint_eq(a.cross_cpu_records, w.cross_cpu_records);
	ck_assert_uint_eq(a.unclaimed_records, w.unclaimed_records);
	ck_assert_mem_eq(&a.latency, &w.latency, sizeof(a.latency));
	/* what waited: the three samples fed before the record */
	ck_assert_uint_eq(w.peak_pending_samples, 3);
	ck_assert_uint_eq(a.peak_pending_samples, 1);
}
END_TEST

static int sample_no_record(struct unwind_stitcher *st, long id, uint32_t pid, uint32_t tid,
			    uint64_t time, uint64_t cookie)
{
	struct unwind_stitcher_sample s = sample_of(id, pid, tid, time, cookie);

	return unwind_stitcher__add_sample_ahead(st, &s, NULL);
}

/*
 * No record in the rest of the stream (a task blocked until the end): the
 * orphan finish() makes of a waiting sample, at once, nothing held behind
 * it; a late sample whose record is already in still joins it.
 */
START_TEST(test_sample_without_record)
{
	struct unwind_stitcher *st = new_sorted_stitcher();
	struct unwind_stitcher_stats a, w;

	ck_assert_int_eq(sample_no_record(st, 1, 10, 11, 1000, C1), 0);
	ck_assert_uint_eq(nr_outs, 1);
	assert_orphan(&outs[0], UNWIND_ORPHAN_STREAM_ENDED);
	sample(st, 2, 20, 21, 1001, 0);
	ck_assert_uint_eq(nr_outs, 2);		/* nothing waits behind it */
	record(st, 30, 31, 5, 1002, C2, U2, 2);
	ck_assert_int_eq(sample_no_record(st, 3, 30, 31, 1003, C2), 0);
	ck_assert_uint_eq(nr_outs, 3);
	assert_stitched(&outs[2], U2, 2);
	ck_assert(outs[2].late);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 3);
	assert_reconciled(st);
	a = stats_of(st);
	unwind_stitcher__delete(st);

	/* the same input, the first sample waiting: the same answer, at the end */
	nr_outs = 0;
	st = new_sorted_stitcher();
	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 20, 21, 1001, 0);
	ck_assert_uint_eq(nr_outs, 0);
	record(st, 30, 31, 5, 1002, C2, U2, 2);
	sample(st, 3, 30, 31, 1003, C2);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 3);
	assert_orphan(&outs[0], UNWIND_ORPHAN_STREAM_ENDED);
	assert_stitched(&outs[2], U2, 2);
	w = stats_of(st);
	unwind_stitcher__delete(st);
	ck_assert_uint_eq(a.orphans[UNWIND_ORPHAN_STREAM_ENDED], 1);
	ck_assert_mem_eq(a.orphans, w.orphans, sizeof(a.orphans));
	ck_assert_uint_eq(a.stitched, w.stitched);
	ck_assert_uint_eq(a.late_samples, w.late_samples);
	ck_assert_uint_eq(w.peak_pending_samples, 3);
	ck_assert_uint_eq(a.peak_pending_samples, 1);
}
END_TEST

/* What the promise cannot settle at once is taken as add_sample() takes it. */
START_TEST(test_sample_ahead_falls_back)
{
	struct unwind_stitcher *st = new_sorted_stitcher();
	static const uint64_t none[] = { UNWIND_COOKIE_CONTEXT_MAX };

	/* a record without a usable entry: the orphan, at once */
	ck_assert_int_eq(sample_ahead(st, 1, 10, 11, 1000, C1, 3000, none, 1), 0);
	ck_assert_uint_eq(nr_outs, 1);
	assert_orphan(&outs[0], UNWIND_ORPHAN_UNWIND_FAILED);
	/* a record before the sample: not ahead, the sample waits for it */
	ck_assert_int_eq(sample_ahead(st, 2, 20, 21, 1001, C2, 900, U2, 2), 0);
	ck_assert_uint_eq(nr_outs, 1);
	record(st, 20, 21, 5, 1002, C2, U2, 2);
	ck_assert_uint_eq(nr_outs, 2);
	assert_stitched(&outs[1], U2, 2);
	unwind_stitcher__finish(st);
	assert_reconciled(st);
	unwind_stitcher__delete(st);

	/* unsorted input: waits as usual */
	st = new_stitcher(UNWIND_STITCHER_ORDER_INPUT, 0);
	ck_assert_int_eq(sample_ahead(st, 1, 10, 11, 1000, C1, 3000, U1, 3), 0);
	ck_assert_uint_eq(nr_outs, 0);
	ck_assert_int_eq(sample_ahead(NULL, 1, 10, 11, 1000, C1, 3000, U1, 3), -EINVAL);
	ck_assert_int_eq(sample_ahead(st, 2, 10, 11, 1000, 0, 3000, U1, 3), -EINVAL);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 1);
	assert_orphan(&outs[0], UNWIND_ORPHAN_STREAM_ENDED);
	unwind_stitcher__delete(st);
}
END_TEST

/* read_ahead()'s callback: what the test's "file" holds for each cookie */
struct find_calls {
	int		calls;
	uint64_t	asked_time[4];
	uint32_t	asked_tid[4];
	int		stop_with;	/* returned instead of -ENOENT for C3 */
	size_t		record_sz;	/* C1's record's sz, if not the library's */
};

static int find_ahead(void *ctx, const struct unwind_stitcher_sample *first,
		      struct unwind_stitcher_record *ahead)
{
	struct find_calls *calls = ctx;

	if (calls->calls < 4) {
		calls->asked_time[calls->calls] = first->time;
		calls->asked_tid[calls->calls] = first->tid;
	}
	calls->calls++;
	switch (first->cookie) {
	case C1:	/* its record, later in the file */
		*ahead = (struct unwind_stitcher_record){
			.sz = sizeof(*ahead), .pid = first->pid, .tid = first->tid, .cpu = 5,
			.time = 5000, .cookie = C1, .ips = U1, .nr = 3,
		};
		if (calls->record_sz)
			ahead->sz = calls->record_sz;
		return 0;
	case C2:	/* none in the rest of the file */
		return -ENODATA;
	default:	/* not known: it waits */
		return calls->stop_with ?: -ENOENT;
	}
}

/*
 * Samples already waiting, settled from records read ahead: the same
 * answers and counters as waiting for the records, at the time of the
 * call; what the reader cannot say keeps waiting.
 */
START_TEST(test_read_ahead)
{
	struct unwind_stitcher *st = new_sorted_stitcher();
	struct find_calls calls = { 0 };
	struct unwind_stitcher_stats a;

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 20, 21, 1001, C2);
	sample(st, 3, 10, 11, 1002, C1);
	sample(st, 4, 30, 31, 1003, C3);
	sample(st, 5, 40, 41, 1004, 0);
	ck_assert_uint_eq(nr_outs, 0);
	ck_assert_int_eq(unwind_stitcher__read_ahead(st, find_ahead, &calls), 0);
	/* one question per kernel entry, oldest first, with its earliest time */
	ck_assert_int_eq(calls.calls, 3);
	ck_assert_uint_eq(calls.asked_tid[0], 11);
	ck_assert_uint_eq(calls.asked_time[0], 1000);
	ck_assert_uint_eq(calls.asked_tid[1], 21);
	ck_assert_uint_eq(calls.asked_tid[2], 31);
	/* 1-3 settled; 4 waits for its record, 5 behind it */
	ck_assert_uint_eq(nr_outs, 3);
	assert_stitched(&outs[0], U1, 3);
	ck_assert_uint_eq(outs[0].record_time, 5000);
	assert_orphan(&outs[1], UNWIND_ORPHAN_STREAM_ENDED);
	assert_stitched(&outs[2], U1, 3);
	record(st, 30, 31, 5, 1500, C3, U2, 2);
	ck_assert_uint_eq(nr_outs, 5);
	assert_stitched(&outs[3], U2, 2);
	ck_assert_int_eq(outs[4].id, 5);
	/* the record read ahead comes in its place: counted, not joined twice */
	record(st, 10, 11, 5, 5000, C1, U1, 3);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 5);
	assert_reconciled(st);
	a = stats_of(st);
	ck_assert_uint_eq(a.records, 2);
	ck_assert_uint_eq(a.stitched, 3);
	ck_assert_uint_eq(a.duplicates, 0);
	ck_assert_uint_eq(a.unclaimed_records, 0);
	ck_assert_uint_eq(a.orphans[UNWIND_ORPHAN_STREAM_ENDED], 1);
	unwind_stitcher__delete(st);
}
END_TEST

/* A record that is not the entry's leaves it waiting; the reader's error stops it. */
START_TEST(test_read_ahead_refuses)
{
	struct unwind_stitcher *st = new_sorted_stitcher();
	struct find_calls calls = { .stop_with = -EIO };

	/* C1's record ahead (time 5000) is earlier than this sample: not its */
	sample(st, 1, 10, 11, 6000, C1);
	sample(st, 2, 30, 31, 6001, C3);
	sample(st, 3, 20, 21, 6002, C2);
	ck_assert_int_eq(unwind_stitcher__read_ahead(st, find_ahead, &calls), -EIO);
	ck_assert_int_eq(calls.calls, 2);	/* stopped at C3's */
	ck_assert_uint_eq(nr_outs, 0);
	ck_assert_int_eq(unwind_stitcher__read_ahead(NULL, find_ahead, &calls), -EINVAL);
	ck_assert_int_eq(unwind_stitcher__read_ahead(st, NULL, &calls), -EINVAL);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 3);
	assert_reconciled(st);
	unwind_stitcher__delete(st);

	/* a record of another size than the library's: not read past, refused */
	nr_outs = 0;
	calls = (struct find_calls){ .record_sz = sizeof(struct unwind_stitcher_record) + 8 };
	st = new_sorted_stitcher();
	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__read_ahead(st, find_ahead, &calls), 0);
	ck_assert_int_eq(calls.calls, 1);
	ck_assert_uint_eq(nr_outs, 0);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 1);
	assert_orphan(&outs[0], UNWIND_ORPHAN_STREAM_ENDED);
	unwind_stitcher__delete(st);

	/* unsorted input: nothing is asked, everything waits */
	nr_outs = 0;
	calls.calls = 0;
	st = new_stitcher(UNWIND_STITCHER_ORDER_INPUT, 0);
	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__read_ahead(st, find_ahead, &calls), 0);
	ck_assert_int_eq(calls.calls, 0);
	ck_assert_uint_eq(nr_outs, 0);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 1);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * Time-ordered input: the next entry of a task retires the slot of the one
 * before at once (its late samples and copies came first), so a task
 * entering the kernel every tick holds one record, not a window of them.
 */
START_TEST(test_sorted_next_entry_retires)
{
	struct unwind_stitcher *st = new_sorted_stitcher();
	struct unwind_stitcher_stats s;
	uint64_t one = 0;
	int i;

	for (i = 0; i < 50; i++) {
		uint64_t cookie = ((uint64_t)(11 + 2 * i) << 32) | 6;

		sample(st, i, 10, 11, 1000 + 2 * i, cookie);
		record(st, 10, 11, 5, 1001 + 2 * i, cookie, U1, 3);
		if (!i)
			one = stats_of(st).pending_bytes;
	}
	/* 50 entries in less than a window: one record held */
	s = stats_of(st);
	ck_assert_uint_gt(one, 0);
	ck_assert_uint_eq(s.pending_bytes, one);
	ck_assert_uint_le(s.peak_pending_bytes, 3 * one);
	ck_assert_uint_eq(nr_outs, 50);
	for (i = 0; i < 50; i++)
		assert_stitched(&outs[i], U1, 3);
	/* the one before stays for its own late sample */
	sample(st, 50, 10, 11, 1100, ((uint64_t)(11 + 2 * 49) << 32) | 6);
	ck_assert_uint_eq(nr_outs, 51);
	assert_stitched(&outs[50], U1, 3);
	ck_assert(outs[50].late);
	unwind_stitcher__finish(st);
	assert_reconciled(st);
	ck_assert_uint_eq(stats_of(st).unclaimed_records, 0);
	unwind_stitcher__delete(st);
}
END_TEST

/*
 * Records with the same user stack share one copy of it: samples queued
 * behind a waiting one (ORDER_INPUT) hold it, not a copy each.
 */
static uint64_t queued_bytes(bool same_stack)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_INPUT, 0);
	uint64_t bytes;
	int i;

	sample(st, 0, 20, 21, 1000, C1);	/* waits: everything queues behind it */
	for (i = 1; i <= 20; i++) {
		uint64_t cookie = ((uint64_t)(101 + 2 * i) << 32) | 6;
		uint64_t ips[3] = { U1[0], U1[1], same_stack ? U1[2] : U1[2] + i };

		sample(st, i, 10, 11 + i, 1000 + i, cookie);
		record(st, 10, 11 + i, 5, 1000 + i, cookie, ips, 3);
	}
	tick(st, 1000 + 3 * W);	/* every record settled and its slot freed */
	ck_assert_uint_eq(nr_outs, 0);
	bytes = stats_of(st).pending_bytes;
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 21);
	for (i = 1; i <= 20; i++) {
		ck_assert_int_eq(outs[i].id, i);
		ck_assert_int_eq(outs[i].status, UNWIND_STITCH_STITCHED);
		ck_assert_uint_eq(outs[i].user[2], same_stack ? U1[2] : U1[2] + i);
	}
	assert_reconciled(st);
	unwind_stitcher__delete(st);
	return bytes;
}

START_TEST(test_shared_stacks)
{
	uint64_t shared = queued_bytes(true), distinct = queued_bytes(false);

	ck_assert_uint_ge(distinct - shared, 19 * 3 * sizeof(uint64_t));
}
END_TEST

/*
 * Stats are copied up to the caller's sz: an older caller's smaller struct
 * gets its members and nothing past them; too small an sz is refused.
 */
START_TEST(test_stats_size)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	struct unwind_stitcher_stats s;
	size_t old_sz = offsetof(struct unwind_stitcher_stats, records) + sizeof(s.records);

	sample(st, 1, 10, 11, 1000, C1);
	record(st, 10, 11, 5, 1040, C1, U1, 3);
	memset(&s, 0xab, sizeof(s));
	s.sz = old_sz;
	ck_assert_int_eq(unwind_stitcher__stats(st, &s), 0);
	ck_assert_uint_eq(s.sz, old_sz);
	ck_assert_uint_eq(s.samples, 1);
	ck_assert_uint_eq(s.records, 1);
	ck_assert_uint_eq(s.stitched, 0xababababababababULL);	/* past sz: untouched */
	s.sz = sizeof(s.sz);
	ck_assert_int_eq(unwind_stitcher__stats(st, &s), -EINVAL);
	ck_assert_int_eq(unwind_stitcher__stats(NULL, &s), -EINVAL);
	unwind_stitcher__finish(st);
	unwind_stitcher__delete(st);
}
END_TEST

/* Other items of the stream keep their place among held samples. */
START_TEST(test_passthrough)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_INPUT, 0);
	struct unwind_stitcher_stats s;

	ck_assert_int_eq(unwind_stitcher__add_passthrough(st, 990, (void *)(intptr_t)7, 64), 0);
	ck_assert_uint_eq(nr_outs, 1);		/* nothing ahead of it */
	sample(st, 1, 10, 11, 1000, C1);
	ck_assert_int_eq(unwind_stitcher__add_passthrough(st, 1001, (void *)(intptr_t)8, 64), 0);
	record(st, 10, 11, 5, 1010, C1, U1, 3);
	ck_assert_uint_eq(nr_outs, 1);		/* 8 waits behind sample 1 */
	s = stats_of(st);
	ck_assert_uint_eq(s.passthrough, 2);
	ck_assert_uint_eq(s.samples, 1);
	ck_assert_uint_eq(s.pending_samples, 1);
	unwind_stitcher__finish(st);
	ck_assert_uint_eq(nr_outs, 3);
	ck_assert_int_eq(outs[0].id, 7);
	ck_assert_int_eq(outs[0].status, UNWIND_STITCH_PASSTHROUGH);
	ck_assert_int_eq(outs[1].id, 1);
	assert_stitched(&outs[1], U1, 3);
	ck_assert_int_eq(outs[2].id, 8);
	ck_assert_int_eq(outs[2].status, UNWIND_STITCH_PASSTHROUGH);
	s = stats_of(st);
	ck_assert_uint_eq(s.pending_bytes, 0);
	ck_assert_uint_eq(s.pending_samples, 0);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_latency_percentiles)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	struct unwind_stitcher_stats s;
	uint64_t i;

	/* 100 entries with latencies 1..100: median 50, p99 99 (exact below 32). */
	for (i = 1; i <= 100; i++) {
		uint64_t cookie = ((2 * i + 1) << 32) | 1;

		sample(st, i, 10, 11, 10000 + 200 * i, cookie);
		record(st, 10, 11, 0, 10000 + 200 * i + i, cookie, U1, 3);
	}
	unwind_stitcher__finish(st);
	s = stats_of(st);
	ck_assert_uint_eq(s.latency.count, 100);
	ck_assert_int_eq(s.latency.min, 1);
	ck_assert_int_eq(s.latency.max, 100);
	/* Buckets are 1/16 wide above 32: 50 is in [50, 52), 99 in [96, 100). */
	ck_assert_int_eq(s.latency.median, 50);
	ck_assert_int_eq(s.latency.p99, 96);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_invalid_input)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_RESOLVED, 0);
	struct unwind_stitcher_record r = { .sz = sizeof(r), .tid = 1, .cookie = 0 };
	struct unwind_stitcher_sample s = { .sz = sizeof(s), .tid = 1, .nr_kernel = 3,
					    .kernel = NULL };
	struct unwind_stitcher_opts bad = { .sz = 4 };

	ck_assert_int_eq(unwind_stitcher__add_record(st, &r), -EINVAL);
	r.cookie = C1;
	r.nr = 2;
	ck_assert_int_eq(unwind_stitcher__add_record(st, &r), -EINVAL);
	ck_assert_int_eq(unwind_stitcher__add_sample(st, &s), -EINVAL);
	ck_assert_uint_eq(stats_of(st).invalid_inputs, 3);
	{
		/* size-versioned inputs: no sz, or a newer one with its tail set */
		struct {
			struct unwind_stitcher_sample s;
			uint64_t newer_field;
		} newer = { .s = { .sz = sizeof(newer), .tid = 1, .cookie = C1 } };
		struct unwind_stitcher_sample no_sz = { .tid = 1, .cookie = C1 };

		ck_assert_int_eq(unwind_stitcher__add_sample(st, &no_sz), -EINVAL);
		newer.newer_field = 1;
		ck_assert_int_eq(unwind_stitcher__add_sample(st, &newer.s), -EINVAL);
		r.sz = 0;
		ck_assert_int_eq(unwind_stitcher__add_record(st, &r), -EINVAL);
		r.sz = sizeof(r);
		ck_assert_uint_eq(stats_of(st).invalid_inputs, 6);
		newer.newer_field = 0;
		ck_assert_int_eq(unwind_stitcher__add_sample(st, &newer.s), 0);
		ck_assert_uint_eq(stats_of(st).samples, 1);
		unwind_stitcher__finish(st);
	}
	ck_assert_uint_eq(stats_of(st).records, 0);
	ck_assert_ptr_null(unwind_stitcher__new(&bad));
	ck_assert_ptr_null(unwind_stitcher__new(NULL));
	{
		/* a newer caller's opts: accepted with its unknown tail zero only */
		struct {
			struct unwind_stitcher_opts opts;
			uint64_t newer_field;
		} newer = { .opts = { .sz = sizeof(newer), .deliver = collect } };
		struct unwind_stitcher *st2;

		st2 = unwind_stitcher__new(&newer.opts);
		ck_assert_ptr_nonnull(st2);
		unwind_stitcher__delete(st2);
		newer.newer_field = 1;
		errno = 0;
		ck_assert_ptr_null(unwind_stitcher__new(&newer.opts));
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_int_eq(unwind_stitcher__add_sample(NULL, &s), -EINVAL);
	unwind_stitcher__delete(NULL);
	unwind_stitcher__delete(st);
}
END_TEST

START_TEST(test_reason_names)
{
	ck_assert_str_eq(unwind_orphan_reason__name(UNWIND_ORPHAN_TASK_EXITED), "task exited");
	ck_assert_str_eq(unwind_orphan_reason__key(UNWIND_ORPHAN_RECORD_LOST), "record_lost");
	ck_assert_str_eq(unwind_orphan_reason__key(UNWIND_ORPHAN_MEMORY_CAP), "memory_cap");
	ck_assert_ptr_null(unwind_orphan_reason__name(UNWIND_ORPHAN__MAX));
}
END_TEST

/* Delete without finish frees what is pending, hands nothing back. */
START_TEST(test_delete_pending)
{
	struct unwind_stitcher *st = new_stitcher(UNWIND_STITCHER_ORDER_INPUT, 0);

	sample(st, 1, 10, 11, 1000, C1);
	sample(st, 2, 10, 11, 1001, 0);
	record(st, 20, 21, 5, 1010, C2, U1, 3);
	unwind_stitcher__delete(st);
	ck_assert_uint_eq(nr_outs, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stitcher");
	TCase *tc = tcase_create("stitcher");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_sample_then_record);
	tcase_add_test(tc, test_record_before_sample);
	tcase_add_test(tc, test_record_cpu_unknown);
	tcase_add_test(tc, test_one_entry_many_samples);
	tcase_add_test(tc, test_late_sample);
	tcase_add_test(tc, test_record_window);
	tcase_add_test(tc, test_huge_window);
	tcase_add_test(tc, test_duplicates);
	tcase_add_test(tc, test_lost_by_later_entry);
	tcase_add_test(tc, test_long_syscall);
	tcase_add_test(tc, test_idle_slot_woken);
	tcase_add_test(tc, test_lost_notice);
	tcase_add_test(tc, test_lost_notice_late_sample);
	tcase_add_test(tc, test_task_exit);
	tcase_add_test(tc, test_record_after_exit);
	tcase_add_test(tc, test_record_after_exit_sorted);
	tcase_add_test(tc, test_horizon_long_round);
	tcase_add_test(tc, test_horizon_monotonic);
	tcase_add_test(tc, test_advance);
	tcase_add_test(tc, test_blocked_record_first);
	tcase_add_test(tc, test_stream_ended);
	tcase_add_test(tc, test_memory_cap);
	tcase_add_test(tc, test_tid_reuse);
	tcase_add_test(tc, test_pid_mismatch);
	tcase_add_test(tc, test_cookie_wrap);
	tcase_add_test(tc, test_exec);
	tcase_add_test(tc, test_unwind_failed_and_bogus_ips);
	tcase_add_test(tc, test_not_deferred);
	tcase_add_test(tc, test_input_order);
	tcase_add_test(tc, test_sorted_input);
	tcase_add_test(tc, test_sample_ahead);
	tcase_add_test(tc, test_sample_ahead_falls_back);
	tcase_add_test(tc, test_read_ahead);
	tcase_add_test(tc, test_read_ahead_refuses);
	tcase_add_test(tc, test_sample_without_record);
	tcase_add_test(tc, test_stats_size);
	tcase_add_test(tc, test_passthrough);
	tcase_add_test(tc, test_sorted_next_entry_retires);
	tcase_add_test(tc, test_shared_stacks);
	tcase_add_test(tc, test_latency_percentiles);
	tcase_add_test(tc, test_invalid_input);
	tcase_add_test(tc, test_reason_names);
	tcase_add_test(tc, test_delete_pending);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
