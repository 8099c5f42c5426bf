/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf stitch -F ... --count=off-cpu: the time a task spends switched out,
 * from a sched:sched_switch recording.  The switch-out sample of a task
 * (prev_pid: its stitched stack, prev_state) weighs the nanoseconds until
 * a later switch names the task as next_pid or a switch-in record of it
 * comes, what perf sched timehist shows as the task's "wait time" when it
 * runs again (from the switch-out record, when there are switch events);
 * a task still switched out when the recording ends weighs until the last
 * sample.
 * util/deferred-export.c exports the stacks; this holds the switches
 * waiting for their task to come back.
 */
#ifndef __PERF_DEFERRED_EXPORT_OFFCPU_H
#define __PERF_DEFERRED_EXPORT_OFFCPU_H

#include <stdbool.h>
#include <linux/types.h>

struct evsel;
struct hashmap;
struct perf_sample;

/* A task switched out: what the export weighs when it comes back */
struct offcpu_switch {
	u64	time;		/* of the switch-out */
	u32	stack;		/* the stitched stack, without the state frame */
	u32	root;		/* folded: the root frame */
	u32	thread;		/* speedscope and pprof: the thread */
	u32	comm;		/* pprof: the comm then */
	u32	status;		/* pprof: enum export_status (+ reason) */
	char	state;		/* prev_state, as perf sched timehist --state */
	bool	switched_out;	/* time is its switch-out record's */
	/* perf stitch -o: where the sample's period is in the output */
	u64	period_pos;
};

/*
 * --count=wall: a task's run on CPU, from the switch that let it in to the
 * one that takes it out, split among the clock samples it took: each
 * weighs from its start (the switch-in for the run's first) to the next
 * sample or the switch-out.  The clock's periods would say less on a busy
 * machine: a timer that fires late drops the periods it missed (the
 * kernel's perf_swevent_hrtimer() forwards over them), a run shorter than
 * a period may take no sample at all.
 */
struct oncpu_run {
	u64			since;		/* its switch-in */
	bool			running;	/* since is known */
	bool			sampled;	/* sample waits to be weighed */
	struct offcpu_switch	sample;		/* time: the start of what it weighs */
};

/* The switches whose task has not come back yet, by tid; the runs on CPU */
struct offcpu_switches {
	struct hashmap	*tasks;
	struct hashmap	*runs;
};

int offcpu_switches__init(struct offcpu_switches *switches);
void offcpu_switches__exit(struct offcpu_switches *switches);
/*
 * @tid switched out: @sw waits for it.  A switch of @tid still waiting
 * (its switch-in was not recorded: lost events) is dropped, and given in
 * @replaced (when not NULL): returns 1, else 0 or -ENOMEM.
 */
int offcpu_switches__out(struct offcpu_switches *switches, int tid,
			 const struct offcpu_switch *sw, struct offcpu_switch *replaced);
/*
 * The switch-out record of @tid at @time (perf record --switch-events):
 * the switch's start, later than its sched_switch sample by what taking
 * that sample cost, on CPU.
 */
void offcpu_switches__switched_out(struct offcpu_switches *switches, int tid, u64 time);
/* @tid comes back: true, with the switch that waited for it in @sw */
bool offcpu_switches__in(struct offcpu_switches *switches, int tid, struct offcpu_switch *sw);
/*
 * Each switch still waiting, in the order of their switch-out times, to
 * @fn, then dropped; stops at the first non-zero return, which it returns.
 */
int offcpu_switches__drain(struct offcpu_switches *switches,
			   int (*fn)(void *ctx, const struct offcpu_switch *sw), void *ctx);

/* The switch of @tid waiting for it to come back, or NULL */
const struct offcpu_switch *offcpu_switches__waiting(struct offcpu_switches *switches, int tid);
/* @tid's run on CPU, added not running: NULL when out of memory */
struct oncpu_run *offcpu_switches__run(struct offcpu_switches *switches, int tid);
/* Each run with a sample waiting, to @fn; stops at the first non-zero return */
int offcpu_switches__drain_runs(struct offcpu_switches *switches,
				int (*fn)(void *ctx, struct oncpu_run *run), void *ctx);

/* sched:sched_switch, whose samples carry prev_pid, prev_state and next_pid */
bool evsel__is_sched_switch(struct evsel *evsel);

struct sched_switch_fields {
	int	prev_pid;
	int	next_pid;
	char	prev_state;	/* 'R' (preempted), 'S', 'D', ...; 'X', 'Z': exiting */
};

void sched_switch__fields(struct perf_sample *sample, struct sched_switch_fields *fields);

/*
 * 0 when this perf reads sched_switch's fields, else -EOPNOTSUPP, said for
 * @count ("off-cpu", "wall"): without libtraceevent it has no format
 */
int sched_switch__check_readable(const char *count);

/* What a switch does with the task it takes off the CPU (prev_pid) */
enum sched_switch_out {
	SCHED_SWITCH_OUT__WAITS,	/* off CPU until it comes back */
	SCHED_SWITCH_OUT__IDLE,		/* the idle task: never off CPU */
	SCHED_SWITCH_OUT__EXITING,	/* 'X', 'Z': it does not come back */
};

enum sched_switch_out sched_switch__out(const struct sched_switch_fields *fields);

#endif /* __PERF_DEFERRED_EXPORT_OFFCPU_H */
