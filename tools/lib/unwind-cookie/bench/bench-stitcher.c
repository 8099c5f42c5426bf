// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Engine throughput with 10, 1,000 and 100,000 kernel entries pending.
 * Each step feeds the record of the oldest pending entry (stitching its two
 * samples) and opens a new entry with two samples, so the pending count
 * stays put. The cost per record must not grow with it: upstream perf walks
 * every pending sample per record, this engine does a hash look-up.
 *
 * The engine runs as perf runs it: the input is in time order (opts.sorted,
 * behind ordered_events), the window is the late-sample gap (10 us), and a
 * task has one kernel entry pending at a time, as a task does (pending +
 * 4096 tasks take turns), so a record is late for its own entry only.
 *
 * Beside it, for the ratio, runs the matching scheme upstream perf 6.19
 * uses (every pending sample on one list, each record walks the list),
 * re-implemented here on the same input as the peer.
 *
 *   bench-stitcher [records-per-size [pending]]
 *
 * Wall-clock figures include cache misses, which grow with the working set;
 * run one size under callgrind for the instruction count per record.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unwind-cookie/stitcher.h>

#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

static uint64_t delivered;

static void count(void *ctx, const struct unwind_stitched_sample *s)
{
	(void)ctx;
	delivered += s->status == UNWIND_STITCH_STITCHED;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t nr_tasks = 4096;

/* Entry i: task i % nr_tasks, cookie with an odd counter i, CPU i % 64. */
static uint64_t cookie_of(uint64_t i)
{
	return ((2 * i + 1) << 32) | (i % 64 + 1);
}

static void add_entry(struct unwind_stitcher *st, uint64_t i)
{
	static const uint64_t kernel[] = { (uint64_t)-128, 0xffffffff81001000ULL,
					   0xffffffff81002000ULL };
	struct unwind_stitcher_sample s = {
		.sz = sizeof(s), .pid = 1000 + i % nr_tasks, .tid = 1000 + i % nr_tasks,
		.cpu = i % 64,
		.time = 1000 * i, .kernel = kernel, .nr_kernel = 3,
		.cookie = cookie_of(i),
	};

	unwind_stitcher__add_sample(st, &s);
	s.time += 10;
	unwind_stitcher__add_sample(st, &s);
}

static void add_record(struct unwind_stitcher *st, uint64_t i, uint64_t time)
{
	static const uint64_t user[] = { 0x401000, 0x402000, 0x403000, 0x404000, 0x405000,
					 0x406000, 0x407000, 0x408000 };
	struct unwind_stitcher_record r = {
		.sz = sizeof(r), .pid = 1000 + i % nr_tasks, .tid = 1000 + i % nr_tasks,
		.cpu = (i + 1) % 64,
		.time = time, .cookie = cookie_of(i), .ips = user, .nr = 8,
	};

	unwind_stitcher__add_record(st, &r);
}

static const uint64_t sizes[] = { 10, 1000, 100000 };
/* ns per record of the last run at each of sizes[], for the ratios */
static double run_ns[ARRAY_SIZE(sizes)];

static int run(uint64_t pending, uint64_t n)
{
	struct unwind_stitcher_opts opts = {
		.sz = sizeof(opts), .deliver = count,
		.window = 10000, .max_pending_bytes = SIZE_MAX, .sorted = true,
	};
	struct unwind_stitcher_stats stats;
	struct unwind_stitcher *st = unwind_stitcher__new(&opts);
	uint64_t i;
	double t0, t1;

	if (!st)
		return -1;
	nr_tasks = pending + 4096;
	delivered = 0;
	for (i = 0; i < pending; i++)
		add_entry(st, i);
	t0 = now();
	for (i = 0; i < n; i++) {
		add_entry(st, pending + i);
		add_record(st, i, 1000 * (pending + i) + 20);
	}
	t1 = now();
	stats.sz = sizeof(stats);
	unwind_stitcher__stats(st, &stats);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		if (pending == sizes[i])
			run_ns[i] = (t1 - t0) * 1e9 / n;
	printf("pending %7llu  records %8llu  %6.2f Mrecords/s  %6.1f ns/record  peak %llu samples, %.1f MiB\n",
	       (unsigned long long)pending, (unsigned long long)n, n / (t1 - t0) / 1e6,
	       (t1 - t0) * 1e9 / n, (unsigned long long)stats.peak_pending_samples,
	       stats.peak_pending_bytes / 1048576.0);
	unwind_stitcher__finish(st);
	unwind_stitcher__delete(st);
	return delivered >= 2 * n ? 0 : -1;
}

/* The peer: one list of pending samples, a full walk per record. */
struct naive_sample {
	struct naive_sample *next;
	uint32_t tid;
	uint64_t cookie;
};

static void naive_add(struct naive_sample ***tail, uint64_t i)
{
	int k;

	for (k = 0; k < 2; k++) {
		struct naive_sample *s = calloc(1, sizeof(*s));

		if (!s)
			abort();
		s->tid = 1000 + i % nr_tasks;
		s->cookie = cookie_of(i);
		**tail = s;
		*tail = &s->next;
	}
}

static double run_naive(uint64_t pending, uint64_t n)
{
	struct naive_sample *head = NULL, **tail = &head;
	uint64_t i, merged = 0;
	double t0;

	nr_tasks = pending + 4096;
	for (i = 0; i < pending; i++)
		naive_add(&tail, i);
	t0 = now();
	for (i = 0; i < n; i++) {
		struct naive_sample **pp = &head, *s;
		uint32_t tid = 1000 + i % nr_tasks;
		uint64_t cookie = cookie_of(i);

		naive_add(&tail, pending + i);
		/* Upstream releases every sample of the record's tid it meets. */
		while ((s = *pp)) {
			if (s->tid == tid && s->cookie == cookie) {
				merged++;
				*pp = s->next;
				if (tail == &s->next)
					tail = pp;
				free(s);
				continue;
			}
			pp = &s->next;
		}
	}
	t0 = now() - t0;
	while (head) {
		struct naive_sample *next = head->next;

		free(head);
		head = next;
	}
	if (merged != 2 * n)
		abort();
	return t0 * 1e9 / n;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	double naive_ns[ARRAY_SIZE(sizes)];
	size_t i;

	if (argc > 2)
		return run(strtoull(argv[2], NULL, 0), n) ? 1 : 0;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		if (run(sizes[i], n)) {
			fprintf(stderr, "bench-stitcher: samples were not stitched\n");
			return 1;
		}
	}
	/* The list walk is slow at size: fewer records, same per-record figure. */
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint64_t m = sizes[i] >= 100000 ? 2000 : 200000;

		naive_ns[i] = run_naive(sizes[i], m);
		printf("peer (list walk per record, as upstream perf 6.19): pending %7llu  %10.1f ns/record\n",
		       (unsigned long long)sizes[i], naive_ns[i]);
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		printf("ratio engine / list walk at %7llu pending: %8.3fx\n",
		       (unsigned long long)sizes[i], run_ns[i] / naive_ns[i]);
	printf("ratio engine at 100,000 / at 10 pending:   %8.2fx\n", run_ns[2] / run_ns[0]);
	return 0;
}
