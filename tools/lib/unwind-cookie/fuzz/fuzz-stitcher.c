// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer harness: arbitrary bytes become a stream of engine calls over a
 * few tids and cookies, so that collisions, duplicates, reuse and disorder
 * are frequent. Whatever the stream, every sample must come back exactly
 * once, a stitched sample must carry the user chain of a record fed for
 * its own tid and cookie, and the statistics must add up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unwind-cookie/callchain.h>
#include <unwind-cookie/stitcher.h>

#define MAX_OPS		512
#define MAX_NR		6

struct fed_record {
	uint32_t tid;
	uint64_t cookie;
	uint64_t time;
	uint64_t ips[MAX_NR];
	size_t nr;
};

static unsigned char delivered[MAX_OPS];
static unsigned char passed[MAX_OPS];
static struct fed_record records[MAX_OPS];
static size_t nr_records;
static uint32_t sample_tid[MAX_OPS];
static uint64_t sample_cookie[MAX_OPS];

static void check_stitched(const struct unwind_stitched_sample *s)
{
	size_t i;

	for (i = 0; i < nr_records; i++) {
		const struct fed_record *r = &records[i];
		size_t n = unwind_callchain__sanitize(r->ips, r->nr, NULL);

		if (r->tid != s->tid || r->cookie != s->cookie || r->time != s->record_time)
			continue;
		if (n == s->nr_user && !memcmp(r->ips, s->user, n * sizeof(uint64_t)))
			return;
	}
	abort();	/* stitched to something that was never fed for it */
}

static void deliver(void *ctx, const struct unwind_stitched_sample *s)
{
	uintptr_t id = (uintptr_t)s->payload;

	(void)ctx;
	if (s->status == UNWIND_STITCH_PASSTHROUGH) {
		if (id >= MAX_OPS || passed[id]++)
			abort();
		return;
	}
	if (id >= MAX_OPS || delivered[id]++)
		abort();	/* unknown or delivered twice */
	if (s->tid != sample_tid[id] || s->cookie != sample_cookie[id])
		abort();
	if (s->status == UNWIND_STITCH_STITCHED)
		check_stitched(s);
	else if (s->nr_user)
		abort();
	if (s->status == UNWIND_STITCH_ORPHAN &&
	    (s->reason <= UNWIND_ORPHAN_NONE || s->reason >= UNWIND_ORPHAN__MAX))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t kernel[] = { (uint64_t)-128, 0xffffffff81000000ULL };
	struct unwind_stitcher_opts opts = {
		.sz = sizeof(opts), .deliver = deliver, .window = 50,
		.max_pending_bytes = 8192,
	};
	struct unwind_stitcher_stats stats;
	struct unwind_stitcher *st;
	uint64_t time = 1000, nr_samples = 0, nr_passed = 0, orphans = 0;
	size_t pos = 0, i;

	if (size < 1)
		return 0;
	opts.order = data[0] & 1 ? UNWIND_STITCHER_ORDER_INPUT : UNWIND_STITCHER_ORDER_RESOLVED;
	st = unwind_stitcher__new(&opts);
	if (!st)
		return 0;
	memset(delivered, 0, sizeof(delivered));
	memset(passed, 0, sizeof(passed));
	nr_records = 0;

	for (pos = 1; pos + 4 <= size && nr_samples < MAX_OPS && nr_records < MAX_OPS &&
	     nr_passed < MAX_OPS; pos += 4) {
		uint8_t op = data[pos] % 7, a = data[pos + 1], b = data[pos + 2], c = data[pos + 3];
		uint32_t tid = a & 3, pid = (a >> 2) & 1 ? tid + 100 : tid;
		uint64_t cookie = ((uint64_t)(2 * (b & 7) + 1) << 32) | ((b >> 3) & 3);
		/* Time mostly advances, sometimes steps back: disorder. */
		uint64_t t = (c & 0x80) ? time - (c & 0x3f) : (time += c & 0x3f);

		switch (op) {
		case 0:
		case 1: {
			struct unwind_stitcher_sample s = {
				.sz = sizeof(s), .pid = pid, .tid = tid, .cpu = c & 3, .time = t,
				.kernel = kernel, .nr_kernel = (c >> 6) & 1 ? 2 : 0,
				.cookie = (c & 0x40) && op ? 0 : cookie,
				.payload = (void *)(uintptr_t)nr_samples,
			};

			sample_tid[nr_samples] = tid;
			sample_cookie[nr_samples] = s.cookie;
			nr_samples++;
			if (unwind_stitcher__add_sample(st, &s))
				abort();
			break;
		}
		case 2: {
			struct fed_record *r = &records[nr_records++];
			struct unwind_stitcher_record in;

			r->tid = tid;
			r->cookie = cookie;
			r->time = t;
			r->nr = c % (MAX_NR + 1);
			for (i = 0; i < r->nr; i++) {
				/* a context marker inside the trace now and then */
				if ((c & 0x20) && i == 2)
					r->ips[i] = (uint64_t)-600;
				else
					r->ips[i] = 0x400000 + a * 16 + i;
			}
			in = (struct unwind_stitcher_record){
				.sz = sizeof(in), .pid = pid, .tid = tid, .cpu = b & 3, .time = t,
				.cookie = cookie, .ips = r->ips, .nr = r->nr,
			};
			if (unwind_stitcher__add_record(st, &in))
				abort();
			break;
		}
		case 3:
			unwind_stitcher__task_exit(st, pid, tid, t);
			break;
		case 4:
			unwind_stitcher__task_exec(st, pid, tid, t);
			break;
		case 5:
			unwind_stitcher__lost(st, c & 3, t);
			break;
		case 6:
			if (unwind_stitcher__add_passthrough(st, t, (void *)(uintptr_t)nr_passed++,
							     c))
				abort();
			break;
		}
	}
	unwind_stitcher__finish(st);
	stats.sz = sizeof(stats);
	unwind_stitcher__stats(st, &stats);
	for (i = 0; i < nr_samples; i++)
		if (delivered[i] != 1)
			abort();	/* lost silently */
	for (i = 0; i < nr_passed; i++)
		if (passed[i] != 1)
			abort();
	for (i = 0; i < UNWIND_ORPHAN__MAX; i++)
		orphans += stats.orphans[i];
	if (stats.samples != nr_samples || stats.passthrough != nr_passed ||
	    stats.pending_samples || stats.pending_bytes ||
	    orphans != stats.orphans_total ||
	    stats.deferred_samples != stats.stitched + stats.orphans_total ||
	    stats.records + stats.invalid_inputs < nr_records)
		abort();
	unwind_stitcher__delete(st);
	return 0;
}
