// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Property test: thousands of random scenarios run through the kernel
 * model (migrations, late samples, execs, exits, tid reuse, several
 * listeners), then through fault injection (dropped, duplicated and
 * corrupted records, lost notices) and into the stitcher, in time order or
 * in perf record's file order. For every scenario:
 *
 * - every sample comes back exactly once;
 * - a sample whose record reached the stitcher is stitched to exactly the
 *   user chain the model unwound for it (cut at a corrupted ip), or is an
 *   "unwind failed" orphan when nothing usable was unwound;
 * - a sample the model has no truth for (exec in between, exit without a
 *   record, still in the kernel at the end) or whose record was dropped is
 *   an orphan, never stitched;
 * - the statistics reconcile, and duplicates, cross-CPU records and late
 *   samples are counted exactly;
 * - the same input gives the same output.
 *
 * PROPERTY_SCENARIOS overrides the count (default 3000).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind-cookie/kmodel.h>
#include <unwind-cookie/stitcher.h>

#define NR_TASKS	4
#define BOGUS_IP	0xfffffffffffffe98ULL

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static unsigned int pick(struct rng *r, unsigned int n)
{
	return rnd(r) % n;
}

static bool chance(struct rng *r, unsigned int percent)
{
	return pick(r, 100) < percent;
}

struct gtask {
	uint32_t tid;
	uint32_t pid;
	bool alive;
	bool in_kernel;
};

/* What the scenario fed and what came back. */
struct run {
	const struct unwind_kmodel_event *ev;
	size_t nr_ev;
	/* per log index */
	bool *dropped;		/* a record not fed */
	bool *corrupt;		/* a record fed with BOGUS_IP at index 1 */
	unsigned int *delivered;
	struct unwind_stitched_sample *out;	/* copied fields, user not kept */
	uint64_t (*user)[8];
	size_t *order;		/* delivery sequence */
	size_t nr_order;
	bool fault;
	char why[160];
};

static struct run *cur;

/* Totals over all scenarios: the run must have exercised every case. */
static struct unwind_stitcher_stats total;
static uint64_t total_file_order, total_input_order, total_sorted;

static void deliver(void *ctx, const struct unwind_stitched_sample *s)
{
	size_t idx = (size_t)(uintptr_t)s->payload;

	(void)ctx;
	if (idx >= cur->nr_ev || cur->ev[idx].type != UNWIND_KMODEL_SAMPLE) {
		cur->fault = true;
		snprintf(cur->why, sizeof(cur->why), "unknown payload %zu", idx);
		return;
	}
	if (cur->delivered[idx]++) {
		cur->fault = true;
		snprintf(cur->why, sizeof(cur->why), "sample %zu delivered twice", idx);
		return;
	}
	cur->out[idx] = *s;
	if (s->nr_user > 8) {
		cur->fault = true;
		snprintf(cur->why, sizeof(cur->why), "sample %zu: %zu user ips", idx, s->nr_user);
		return;
	}
	if (s->nr_user)
		memcpy(cur->user[idx], s->user, s->nr_user * sizeof(uint64_t));
	cur->order[cur->nr_order++] = idx;
}

static void random_stack(struct rng *r, struct unwind_kmodel *km, uint32_t tid, uint32_t gen)
{
	uint64_t ips[6];
	/* Mostly a real stack; sometimes none, so the unwind fails. */
	size_t nr = chance(r, 8) ? 0 : 1 + pick(r, 6), i;

	for (i = 0; i < nr; i++)
		ips[i] = 0x400000 + ((uint64_t)tid << 16) + ((uint64_t)gen << 8) + i * 16 +
			 pick(r, 8);
	/*
	 * The kernel's unwinder stores 0 return addresses like any other: the
	 * outermost frame's, and now and then one with more frames after it.
	 * They are part of the truth a stitched chain must give back.
	 */
	if (nr > 1 && chance(r, 30))
		ips[nr - 1] = 0;
	if (nr > 2 && chance(r, 10))
		ips[pick(r, nr)] = 0;
	ck_assert_int_eq(unwind_kmodel__task_set_user_stack(km, tid, ips, nr), 0);
}

/* Drive the model through one random scenario; the log is the result. */
static struct unwind_kmodel *generate(struct rng *r)
{
	static const uint64_t kernel[] = { 0xffffffff81000100ULL, 0xffffffff81000200ULL };
	struct unwind_kmodel_opts opts = {
		.sz = sizeof(opts),
		.nr_cpus = 1 + pick(r, 4),
		.layout = pick(r, UNWIND_COOKIE_LAYOUT__MAX),
		.counter_start = chance(r, 20) ? 0xfffffff1 : 1,
		.nr_listeners = chance(r, 25) ? 2 : 1,
	};
	struct unwind_kmodel *km;
	struct gtask tasks[NR_TASKS];
	unsigned int steps = 10 + pick(r, 150), i, gen = 0;
	uint64_t t = 1000;
	long n;
	int err;

	if (opts.layout == UNWIND_COOKIE_LAYOUT_SEED)
		opts.counter_start = 1;
	km = unwind_kmodel__new(&opts);
	ck_assert_ptr_nonnull(km);
	for (i = 0; i < NR_TASKS; i++) {
		/* Two threads of one process and two processes. */
		tasks[i].tid = 100 + i;
		tasks[i].pid = i < 2 ? 100 : 100 + i;
		tasks[i].alive = true;
		tasks[i].in_kernel = false;
		ck_assert_int_eq(unwind_kmodel__task_new(km, tasks[i].pid, tasks[i].tid,
							 pick(r, opts.nr_cpus), 0), 0);
		random_stack(r, km, tasks[i].tid, gen++);
	}
	if (chance(r, 30))
		ck_assert_int_eq(unwind_kmodel__task_new(km, 2, 2, 0, UNWIND_KMODEL_KTHREAD), 0);

	for (i = 0; i < steps; i++) {
		struct gtask *g = &tasks[pick(r, NR_TASKS)];
		unsigned int what = pick(r, 100);

		t += 1 + pick(r, 20);
		if (chance(r, 5) && !unwind_kmodel__sample(km, 2, t, 1, kernel, 2, false))
			continue;
		if (!g->alive) {
			if (what < 30) {
				/* tid reuse by another process */
				g->pid += 1000;
				err = unwind_kmodel__task_new(km, g->pid, g->tid,
							      pick(r, opts.nr_cpus), 0);
				ck_assert_int_eq(err, 0);
				random_stack(r, km, g->tid, gen++);
				g->alive = true;
				g->in_kernel = false;
			}
			continue;
		}
		if (!g->in_kernel) {
			if (what < 40) {
				ck_assert_int_eq(unwind_kmodel__task_enter(km, g->tid, t), 0);
				g->in_kernel = true;
			} else if (what < 70) {
				n = unwind_kmodel__sample(km, g->tid, t, 1 + pick(r, 2),
							  kernel, 2, true);
				ck_assert_int_ge(n, 0);
			} else if (what < 80) {
				random_stack(r, km, g->tid, gen++);
			} else if (what < 83) {
				ck_assert_int_eq(unwind_kmodel__task_exit(km, g->tid, t,
									  chance(r, 50)), 0);
				g->alive = false;
			}
			continue;
		}
		if (what < 45) {
			ck_assert_int_ge(unwind_kmodel__sample(km, g->tid, t, 1 + pick(r, 2),
							       kernel, 1 + pick(r, 2), false), 0);
		} else if (what < 55) {
			ck_assert_int_eq(unwind_kmodel__task_migrate(km, g->tid,
								     pick(r, opts.nr_cpus)), 0);
		} else if (what < 85) {
			/* Back to user space, sometimes with an NMI on the way. */
			ck_assert_int_eq(unwind_kmodel__task_work(km, g->tid, t), 0);
			if (chance(r, 30))
				ck_assert_int_ge(unwind_kmodel__sample(km, g->tid, t + 1, 1, kernel,
								       2, false), 0);
			ck_assert_int_eq(unwind_kmodel__task_return(km, g->tid, t + 2), 0);
			t += 2;
			g->in_kernel = false;
		} else if (what < 90) {
			uint64_t ips[3] = { 0x700000 + gen * 64, 0x700010 + gen * 64,
					    0x700020 + gen * 64 };

			gen++;
			ck_assert_int_eq(unwind_kmodel__task_exec(km, g->tid, t, ips, 3), 0);
		} else if (what < 93) {
			ck_assert_int_eq(unwind_kmodel__task_exit(km, g->tid, t, chance(r, 50)), 0);
			g->alive = false;
		}
	}
	return km;
}

static uint64_t cookie_cpu_differs(enum unwind_cookie_layout layout, uint64_t cookie,
				   uint32_t cpu)
{
	struct unwind_cookie_fields f;

	return !unwind_cookie__decode(layout, cookie, &f) && f.cpu != cpu;
}

/*
 * Feed the log in @order. With @round (file order cut in rounds of that
 * time, unwind_kmodel__file_order()), pass the horizon as perf does at each
 * PERF_RECORD_FINISHED_ROUND: 0 first, then the newest time fed before the
 * previous round.
 */
static void feed(struct unwind_stitcher *st, struct run *run, const size_t *order,
		 uint64_t round, struct rng *r, uint64_t *fed, uint64_t *distinct,
		 uint64_t *cross, enum unwind_cookie_layout layout)
{
	uint64_t clock = 0, round_clock = 0, cur_round = 0;
	size_t i, j;
	int err;

	if (round)
		ck_assert_int_eq(unwind_stitcher__horizon(st, 0), 0);
	for (i = 0; i < run->nr_ev; i++) {
		const struct unwind_kmodel_event *e = &run->ev[order[i]];

		if (round && e->time / round > cur_round) {
			ck_assert_int_eq(unwind_stitcher__horizon(st, round_clock), 0);
			round_clock = clock;
			cur_round = e->time / round;
		}
		if (e->time > clock)
			clock = e->time;

		switch (e->type) {
		case UNWIND_KMODEL_SAMPLE: {
			struct unwind_stitcher_sample s = {
				.sz = sizeof(s), .pid = e->pid, .tid = e->tid, .cpu = e->cpu,
				.time = e->time, .payload = (void *)(uintptr_t)order[i],
			};

			s.nr_kernel = e->cookie ? e->nr - 2 : e->nr;
			s.kernel = e->ips;
			s.cookie = e->cookie;
			ck_assert_int_eq(unwind_stitcher__add_sample(st, &s), 0);
			break;
		}
		case UNWIND_KMODEL_RECORD: {
			uint64_t ips[UNWIND_COOKIE_MAX_DEFERRED_DEPTH];
			struct unwind_stitcher_record rec = {
				.sz = sizeof(rec), .pid = e->pid, .tid = e->tid, .cpu = e->cpu,
				.time = e->time, .cookie = e->cookie, .ips = ips, .nr = e->nr,
			};
			unsigned int copies = 1;

			if (run->dropped[order[i]]) {
				if (chance(r, 50))
					unwind_stitcher__lost(st, e->cpu, e->time);
				break;
			}
			if (e->nr)
				memcpy(ips, e->ips, e->nr * sizeof(uint64_t));
			if (run->corrupt[order[i]])
				ips[1] = BOGUS_IP;
			/* A duplicate fed right after the original. */
			if (chance(r, 5))
				copies = 2;
			for (j = 0; j < copies; j++) {
				ck_assert_int_eq(unwind_stitcher__add_record(st, &rec), 0);
				*cross += cookie_cpu_differs(layout, e->cookie, e->cpu);
				(*fed)++;
			}
			break;
		}
		case UNWIND_KMODEL_EXEC:
			err = unwind_stitcher__task_exec(st, e->pid, e->tid, e->time);
			ck_assert_int_eq(err, 0);
			break;
		case UNWIND_KMODEL_EXIT:
			err = unwind_stitcher__task_exit(st, e->pid, e->tid, e->time);
			ck_assert_int_eq(err, 0);
			break;
		}
	}
	/* Distinct records that reached the stitcher: one per (tid, cookie). */
	for (i = 0; i < run->nr_ev; i++) {
		const struct unwind_kmodel_event *e = &run->ev[i];
		bool first = true;

		if (e->type != UNWIND_KMODEL_RECORD || run->dropped[i])
			continue;
		for (j = 0; j < i && first; j++)
			first = !(run->ev[j].type == UNWIND_KMODEL_RECORD && !run->dropped[j] &&
				  run->ev[j].tid == e->tid && run->ev[j].cookie == e->cookie);
		*distinct += first;
	}
}

/* Did any copy of the record this sample's truth came from reach the stitcher? */
static bool record_fed(const struct run *run, const struct unwind_kmodel_event *s, bool *corrupt)
{
	size_t i;
	bool fed = false;

	*corrupt = false;
	for (i = 0; i < run->nr_ev; i++) {
		const struct unwind_kmodel_event *e = &run->ev[i];

		if (e->type == UNWIND_KMODEL_RECORD && e->tid == s->tid &&
		    e->cookie == s->cookie && !run->dropped[i]) {
			if (!fed)
				*corrupt = run->corrupt[i];
			fed = true;
		}
	}
	return fed;
}

static void check_scenario(unsigned int seed)
{
	struct rng r = { 0x9e3779b97f4a7c15ULL ^ ((uint64_t)seed * 0x100000001b3ULL) };
	struct unwind_kmodel *km;
	struct run run = { 0 };
	struct unwind_stitcher_opts opts = { .sz = sizeof(opts), .deliver = deliver };
	struct unwind_stitcher_stats stats;
	struct unwind_stitcher *st;
	bool file_order, rounds;
	uint64_t round = 1 + pick(&r, 200), fed = 0, distinct = 0, cross = 0;
	uint64_t late = 0, stitched = 0, samples = 0, deferred = 0;
	size_t *order, i, pass;
	size_t *first_order = NULL, first_nr = 0;
	enum unwind_cookie_layout layout;

	km = generate(&r);
	run.ev = unwind_kmodel__events(km, &run.nr_ev);
	file_order = chance(&r, 60);
	order = calloc(run.nr_ev + 1, sizeof(*order));
	run.dropped = calloc(run.nr_ev + 1, sizeof(bool));
	run.corrupt = calloc(run.nr_ev + 1, sizeof(bool));
	ck_assert(order && run.dropped && run.corrupt);
	if (file_order) {
		ck_assert_int_eq(unwind_kmodel__file_order(km, round, order, run.nr_ev), 0);
	} else {
		for (i = 0; i < run.nr_ev; i++)
			order[i] = i;
	}
	/* Faults are decided per record copy, so a listener's copy may survive. */
	for (i = 0; i < run.nr_ev; i++) {
		if (run.ev[i].type != UNWIND_KMODEL_RECORD)
			continue;
		run.dropped[i] = chance(&r, 10);
		run.corrupt[i] = run.ev[i].nr > 1 && chance(&r, 5);
		/* Copies of one record are corrupted alike: a bad unwind, not a bad copy. */
		if (i && run.ev[i - 1].type == UNWIND_KMODEL_RECORD &&
		    run.ev[i - 1].cookie == run.ev[i].cookie && run.ev[i - 1].tid == run.ev[i].tid)
			run.corrupt[i] = run.corrupt[i - 1];
	}
	opts.order = chance(&r, 50) ? UNWIND_STITCHER_ORDER_INPUT : UNWIND_STITCHER_ORDER_RESOLVED;
	/*
	 * The disorder a perf.data file has is one round; time order has none.
	 * In file order the rounds may be passed as perf does
	 * (unwind_stitcher__horizon()), and the window then needs to cover only
	 * late samples, not the disorder.
	 */
	rounds = file_order && chance(&r, 50);
	opts.window = (file_order && !rounds ? round : 0) + 10;
	/* Time order may say so: the same outcome, settled as records arrive. */
	opts.sorted = !file_order && chance(&r, 50);
	layout = opts.layout = chance(&r, 80) ? UNWIND_COOKIE_LAYOUT_MERGED_LE : pick(&r, 3);

	for (pass = 0; pass < 2; pass++) {
		struct rng fr = { r.s };	/* same fault choices both passes */

		run.delivered = calloc(run.nr_ev + 1, sizeof(unsigned int));
		run.out = calloc(run.nr_ev + 1, sizeof(*run.out));
		run.user = calloc(run.nr_ev + 1, sizeof(*run.user));
		run.order = calloc(run.nr_ev + 1, sizeof(size_t));
		run.nr_order = 0;
		ck_assert(run.delivered && run.out && run.user && run.order);
		cur = &run;
		st = unwind_stitcher__new(&opts);
		ck_assert_ptr_nonnull(st);
		fed = distinct = cross = 0;
		feed(st, &run, order, rounds ? round : 0, &fr, &fed, &distinct, &cross, layout);
		ck_assert_int_eq(unwind_stitcher__finish(st), 0);
		stats.sz = sizeof(stats);
		ck_assert_int_eq(unwind_stitcher__stats(st, &stats), 0);
		ck_assert_msg(!run.fault, "seed %u: %s", seed, run.why);

		if (pass == 0) {
			first_order = run.order;
			first_nr = run.nr_order;
		} else {
			/* Deterministic: the same delivery sequence. */
			ck_assert_uint_eq(run.nr_order, first_nr);
			ck_assert_msg(!memcmp(first_order, run.order, first_nr * sizeof(size_t)),
				      "seed %u: second run delivered in another order", seed);
			free(first_order);
			free(run.order);
			free(run.delivered);
			free(run.out);
			free(run.user);
			unwind_stitcher__delete(st);
			break;
		}

		samples = deferred = late = stitched = 0;
		for (i = 0; i < run.nr_ev; i++) {
			const struct unwind_kmodel_event *e = &run.ev[i];
			const struct unwind_stitched_sample *o = &run.out[i];
			bool corrupt, have;
			size_t want;

			if (e->type != UNWIND_KMODEL_SAMPLE)
				continue;
			samples++;
			ck_assert_msg(run.delivered[i] == 1, "seed %u: sample %zu delivered %u times",
				      seed, i, run.delivered[i]);
			if (!e->cookie) {
				ck_assert_int_eq(o->status, UNWIND_STITCH_NOT_DEFERRED);
				continue;
			}
			deferred++;
			have = record_fed(&run, e, &corrupt);
			if (!e->truth_known || !have) {
				ck_assert_msg(o->status == UNWIND_STITCH_ORPHAN,
					      "seed %u: sample %zu (truth %d, record fed %d) stitched",
					      seed, i, e->truth_known, have);
				ck_assert_int_ne(o->reason, UNWIND_ORPHAN_MEMORY_CAP);
				continue;
			}
			want = corrupt && e->nr_truth > 1 ? 1 : e->nr_truth;
			if (!want) {
				ck_assert_msg(o->status == UNWIND_STITCH_ORPHAN &&
					      o->reason == UNWIND_ORPHAN_UNWIND_FAILED,
					      "seed %u: sample %zu: empty unwind not reported",
					      seed, i);
				continue;
			}
			ck_assert_msg(o->status == UNWIND_STITCH_STITCHED,
				      "seed %u: sample %zu with its record fed is an orphan (%s)",
				      seed, i, unwind_orphan_reason__name(o->reason));
			ck_assert_uint_eq(o->nr_user, want);
			ck_assert_msg(!memcmp(run.user[i], e->truth, want * sizeof(uint64_t)),
				      "seed %u: sample %zu stitched to the wrong user chain",
				      seed, i);
			ck_assert_int_eq(o->late, e->late);
			late += e->late;
			stitched++;
		}
		ck_assert_uint_eq(stats.samples, samples);
		ck_assert_uint_eq(stats.deferred_samples, deferred);
		ck_assert_uint_eq(stats.stitched, stitched);
		ck_assert_uint_eq(stats.late_samples, late);
		ck_assert_uint_eq(stats.orphans_total, deferred - stitched);
		ck_assert_uint_eq(stats.pending_samples, 0);
		ck_assert_uint_eq(stats.pending_bytes, 0);
		ck_assert_uint_eq(stats.records, fed);
		ck_assert_uint_eq(stats.duplicates, fed - distinct);
		ck_assert_uint_eq(stats.duplicates_conflicting, 0);
		ck_assert_uint_eq(stats.cross_cpu_records, cross);
		total.samples += stats.samples;
		total.stitched += stats.stitched;
		total.late_samples += stats.late_samples;
		total.duplicates += stats.duplicates;
		total.cross_cpu_records += stats.cross_cpu_records;
		total.truncated_records += stats.truncated_records;
		for (i = 0; i < UNWIND_ORPHAN__MAX; i++)
			total.orphans[i] += stats.orphans[i];
		total_file_order += file_order;
		total_input_order += opts.order == UNWIND_STITCHER_ORDER_INPUT;
		total_sorted += opts.sorted;
		if (opts.order == UNWIND_STITCHER_ORDER_INPUT) {
			/* Handed back exactly in the order fed. */
			size_t k = 0;

			for (i = 0; i < run.nr_ev; i++)
				if (run.ev[order[i]].type == UNWIND_KMODEL_SAMPLE)
					ck_assert_uint_eq(run.order[k++], order[i]);
		}
		free(run.delivered);
		free(run.out);
		free(run.user);
		unwind_stitcher__delete(st);
	}
	free(order);
	free(run.dropped);
	free(run.corrupt);
	unwind_kmodel__delete(km);
}

START_TEST(test_random_scenarios)
{
	const char *env = getenv("PROPERTY_SCENARIOS");
	unsigned int n = env ? strtoul(env, NULL, 0) : 3000, seed;

	for (seed = 0; seed < n; seed++)
		check_scenario(seed);
	printf("property: %u scenarios (%llu file order, %llu sorted, %llu input-order delivery): %llu samples, %llu stitched (%llu late), %llu duplicates, %llu cross-CPU records, %llu truncated; orphans: lost %llu, exited %llu, ended %llu, exec %llu, unwind failed %llu\n",
	       n, (unsigned long long)total_file_order, (unsigned long long)total_sorted,
	       (unsigned long long)total_input_order,
	       (unsigned long long)total.samples, (unsigned long long)total.stitched,
	       (unsigned long long)total.late_samples, (unsigned long long)total.duplicates,
	       (unsigned long long)total.cross_cpu_records,
	       (unsigned long long)total.truncated_records,
	       (unsigned long long)total.orphans[UNWIND_ORPHAN_RECORD_LOST],
	       (unsigned long long)total.orphans[UNWIND_ORPHAN_TASK_EXITED],
	       (unsigned long long)total.orphans[UNWIND_ORPHAN_STREAM_ENDED],
	       (unsigned long long)total.orphans[UNWIND_ORPHAN_EXEC],
	       (unsigned long long)total.orphans[UNWIND_ORPHAN_UNWIND_FAILED]);
	if (n >= 1000) {
		/* A generator that stopped producing a case would pass silently. */
		ck_assert_uint_gt(total.late_samples, 100);
		ck_assert_uint_gt(total.duplicates, 100);
		ck_assert_uint_gt(total.cross_cpu_records, 100);
		ck_assert_uint_gt(total.truncated_records, 100);
		ck_assert_uint_gt(total.orphans[UNWIND_ORPHAN_RECORD_LOST], 100);
		ck_assert_uint_gt(total.orphans[UNWIND_ORPHAN_TASK_EXITED], 100);
		ck_assert_uint_gt(total.orphans[UNWIND_ORPHAN_STREAM_ENDED], 100);
		ck_assert_uint_gt(total.orphans[UNWIND_ORPHAN_EXEC], 100);
		ck_assert_uint_gt(total.orphans[UNWIND_ORPHAN_UNWIND_FAILED], 100);
		ck_assert_uint_eq(total.orphans[UNWIND_ORPHAN_MEMORY_CAP], 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("property");
	TCase *tc = tcase_create("property");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_random_scenarios);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
