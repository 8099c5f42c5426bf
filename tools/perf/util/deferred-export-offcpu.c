// SPDX-License-Identifier: GPL-2.0
/*
 * The switches waiting for their task to come back, for perf stitch -F
 * --count=off-cpu (util/deferred-export-offcpu.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/zalloc.h>

#include "debug.h"
#include "deferred-export-offcpu.h"
#include "evsel.h"
#include "hashmap.h"
#include "sample.h"

static size_t tid__hash(long key, void *ctx __maybe_unused)
{
	return key;
}

static bool tid__equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

int offcpu_switches__init(struct offcpu_switches *switches)
{
	switches->tasks = hashmap__new(tid__hash, tid__equal, NULL);
	if (IS_ERR(switches->tasks))
		return PTR_ERR(switches->tasks);
	switches->runs = hashmap__new(tid__hash, tid__equal, NULL);
	if (IS_ERR(switches->runs)) {
		hashmap__free(switches->tasks);
		switches->tasks = NULL;
		return PTR_ERR(switches->runs);
	}
	return 0;
}

static void tasks__free(struct hashmap **map)
{
	struct hashmap_entry *cur;
	size_t bkt;

	if (IS_ERR_OR_NULL(*map))
		return;
	hashmap__for_each_entry(*map, cur, bkt)
		free(cur->pvalue);
	hashmap__free(*map);
	*map = NULL;
}

void offcpu_switches__exit(struct offcpu_switches *switches)
{
	tasks__free(&switches->tasks);
	tasks__free(&switches->runs);
}

int offcpu_switches__out(struct offcpu_switches *switches, int tid,
			 const struct offcpu_switch *sw, struct offcpu_switch *replaced)
{
	struct offcpu_switch *waiting;

	if (hashmap__find(switches->tasks, tid, &waiting)) {
		if (replaced)
			*replaced = *waiting;
		*waiting = *sw;
		return 1;
	}
	waiting = malloc(sizeof(*waiting));
	if (!waiting)
		return -ENOMEM;
	*waiting = *sw;
	if (hashmap__add(switches->tasks, tid, waiting)) {
		free(waiting);
		return -ENOMEM;
	}
	return 0;
}

void offcpu_switches__switched_out(struct offcpu_switches *switches, int tid, u64 time)
{
	struct offcpu_switch *waiting;

	/* once: another would be a switch whose switch-in was not recorded */
	if (hashmap__find(switches->tasks, tid, &waiting) && !waiting->switched_out &&
	    waiting->time <= time) {
		waiting->time = time;
		waiting->switched_out = true;
	}
}

bool offcpu_switches__in(struct offcpu_switches *switches, int tid, struct offcpu_switch *sw)
{
	struct offcpu_switch *waiting;

	if (!hashmap__delete(switches->tasks, tid, NULL, &waiting))
		return false;
	*sw = *waiting;
	free(waiting);
	return true;
}

const struct offcpu_switch *offcpu_switches__waiting(struct offcpu_switches *switches, int tid)
{
	struct offcpu_switch *waiting;

	return hashmap__find(switches->tasks, tid, &waiting) ? waiting : NULL;
}

struct oncpu_run *offcpu_switches__run(struct offcpu_switches *switches, int tid)
{
	struct oncpu_run *run;

	if (hashmap__find(switches->runs, tid, &run))
		return run;
	run = zalloc(sizeof(*run));
	if (run && hashmap__add(switches->runs, tid, run))
		zfree(&run);
	return run;
}

int offcpu_switches__drain_runs(struct offcpu_switches *switches,
				int (*fn)(void *ctx, struct oncpu_run *run), void *ctx)
{
	struct hashmap_entry *cur;
	size_t bkt;
	int err = 0;

	hashmap__for_each_entry(switches->runs, cur, bkt) {
		struct oncpu_run *run = cur->pvalue;

		if (run->sampled && !err)
			err = fn(ctx, run);
		run->sampled = false;
	}
	return err;
}

static int offcpu_switch__cmp_time(const void *a, const void *b)
{
	const struct offcpu_switch *x = *(struct offcpu_switch * const *)a;
	const struct offcpu_switch *y = *(struct offcpu_switch * const *)b;

	return x->time < y->time ? -1 : x->time > y->time;
}

int offcpu_switches__drain(struct offcpu_switches *switches,
			   int (*fn)(void *ctx, const struct offcpu_switch *sw), void *ctx)
{
	size_t i, n = hashmap__size(switches->tasks), bkt;
	struct offcpu_switch **waiting;
	struct hashmap_entry *cur;
	int err = 0;

	if (!n)
		return 0;
	waiting = calloc(n, sizeof(*waiting));
	if (!waiting)
		return -ENOMEM;
	i = 0;
	hashmap__for_each_entry(switches->tasks, cur, bkt)
		waiting[i++] = cur->pvalue;
	qsort(waiting, n, sizeof(*waiting), offcpu_switch__cmp_time);
	for (i = 0; i < n && !err; i++)
		err = fn(ctx, waiting[i]);
	for (i = 0; i < n; i++)
		free(waiting[i]);
	free(waiting);
	hashmap__clear(switches->tasks);
	return err;
}

#ifdef HAVE_LIBTRACEEVENT
bool evsel__is_sched_switch(struct evsel *evsel)
{
	return evsel->core.attr.type == PERF_TYPE_TRACEPOINT &&
	       evsel__name_is(evsel, "sched:sched_switch") &&
	       evsel__field(evsel, "prev_pid") && evsel__field(evsel, "next_pid") &&
	       evsel__field(evsel, "prev_state");
}

void sched_switch__fields(struct perf_sample *sample, struct sched_switch_fields *fields)
{
	fields->prev_pid = perf_sample__intval(sample, "prev_pid");
	fields->next_pid = perf_sample__intval(sample, "next_pid");
	/* 'R' also for a preempted task (TASK_REPORT_MAX), as timehist */
	fields->prev_state = perf_sample__taskstate(sample, "prev_state");
}

int sched_switch__check_readable(const char *count __maybe_unused)
{
	return 0;
}
#else
/* no format, no field: never reached, sched_switch__check_readable() refuses */
bool evsel__is_sched_switch(struct evsel *evsel __maybe_unused)
{
	return false;
}

void sched_switch__fields(struct perf_sample *sample __maybe_unused,
			  struct sched_switch_fields *fields)
{
	memset(fields, 0, sizeof(*fields));
}

int sched_switch__check_readable(const char *count)
{
	pr_err("--count=%s reads sched_switch's fields, and this perf was built without libtraceevent\n",
	       count);
	return -EOPNOTSUPP;
}
#endif

enum sched_switch_out sched_switch__out(const struct sched_switch_fields *fields)
{
	if (!fields->prev_pid)
		return SCHED_SWITCH_OUT__IDLE;
	if (fields->prev_state == 'X' || fields->prev_state == 'Z')
		return SCHED_SWITCH_OUT__EXITING;
	return SCHED_SWITCH_OUT__WAITS;
}
