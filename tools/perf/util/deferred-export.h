/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf stitch -F folded|speedscope|pprof: the stitched stacks of a
 * recording as folded stacks (flamegraph.pl's input, stackcollapse-perf.pl's
 * output), a speedscope profile or a pprof profile.
 *
 * The input is read through a perf_session like perf script reads it: in
 * time order, each sample joined to its deferred user callchain by the
 * session; an orphan shows "[user stack lost: <reason>]" where its user
 * part belongs.  Stacks are aggregated while streaming: every distinct
 * address is resolved once, frames and stacks are interned, so folded
 * output needs memory for the distinct stacks only; speedscope keeps one
 * run-length list of stack ids per thread (16 bytes per run of identical
 * consecutive stacks).
 */
#ifndef __PERF_DEFERRED_EXPORT_H
#define __PERF_DEFERRED_EXPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "deferred-callchain.h"

enum deferred_export_format {
	DEFERRED_EXPORT__FOLDED,
	DEFERRED_EXPORT__SPEEDSCOPE,
	DEFERRED_EXPORT__PPROF,
};

struct deferred_export_opts {
	const char			*input;		/* "-": a pipe */
	const char			*output;	/* NULL or "-": stdout */
	bool				force;
	bool				strict;		/* malformed deferred data: fail */
	enum deferred_export_format	format;
	/*
	 * The event whose samples are exported; NULL: as stackcollapse-perf.pl
	 * picks them from perf script (deferred_export__keeps() in
	 * deferred-export.c)
	 */
	const char			*event;
	/* weigh each sample 1, not by its period as stackcollapse-perf.pl does */
	bool				count_samples;
	/*
	 * weigh each sched:sched_switch sample by the nanoseconds its task
	 * stays switched out (util/deferred-export-offcpu.h)
	 */
	bool				off_cpu;
	/*
	 * with off_cpu: cpu-clock and task-clock samples too, each weighing
	 * its share of its thread's run on CPU (the switches say how long):
	 * each thread's time on CPU and off it, its wall clock
	 */
	bool				wall;
	unsigned int			max_stack;
	/* folded only, as stackcollapse-perf.pl's --kernel, --pid, --tid */
	bool				kernel_suffix;	/* "_[k]" on kernel frames */
	bool				separator;	/* "-" between user and kernel */
	bool				pid;		/* root frame "comm-PID" */
	bool				tid;		/* root frame "comm-PID/TID" */
};

struct deferred_export_stats {
	char	event[64];		/* the event exported */
	u64	samples;		/* all samples read */
	u64	exported;		/* samples in the output */
	u64	unfiltered;		/* of them, of events stackcollapse-perf.pl cannot filter */
	u64	weight;			/* their weights: periods, or 1 each */
	bool	count_samples;		/* the weights are samples (--count=samples) */
	bool	off_cpu;		/* the weights are ns off-CPU (--count=off-cpu) */
	bool	wall;			/* and ns on CPU (--count=wall) */
	u64	on_cpu;			/* --count=wall: the clock samples exported */
	u64	unsampled_runs;		/* runs on CPU without one: on their switch's stack */
	/* --count=off-cpu: switches left out, and those weighed to the end */
	u64	idle_switches;		/* switching out the idle task */
	u64	exiting_switches;	/* of a task that exits (prev_state X, Z) */
	u64	unmatched_switches;	/* out again before a switch-in was recorded */
	u64	open_switches;		/* still switched out at the end: weighed to it */
	u64	other_events;		/* samples of other events, left out */
	u64	no_callchain;		/* printed by perf script without a callchain: left out */
	u64	unresolved;		/* no thread for them: reported, left out */
	u64	malformed_records;	/* CALLCHAIN_DEFERRED, skipped */
	u64	malformed_samples;	/* deferred callchain malformed, left out */
	u64	deferred;		/* exported samples with a deferred user part */
	u64	stitched;
	u64	orphans;
	u64	orphan_reasons[DEFERRED_STITCH_REASONS_MAX];	/* by reason */
	u64	unstitched;		/* stitching was off */
	u64	frames;			/* distinct frames */
	u64	stacks;			/* distinct stacks */
	u64	lines;			/* folded: lines written */
	u64	threads;		/* speedscope: profiles written */
	u64	runs;			/* speedscope: stored runs of samples */
};

int deferred_export__parse_format(const char *str, enum deferred_export_format *format);
/* --count: "period" (or NULL), "samples", "off-cpu" or "wall"; -EINVAL for anything else */
int deferred_export__parse_count(const char *str, struct deferred_export_opts *opts);

/*
 * Reads opts->input and writes the export to opts->output (a temporary file
 * next to it, renamed when complete) or stdout.  Nothing is written unless
 * the whole input was read.  Returns 0 or a negative errno, after saying
 * why.
 */
int deferred_export(const struct deferred_export_opts *opts, struct deferred_export_stats *stats);

/* "perf stitch: N cpu-clock samples exported (N stitched, N orphans: ...), ..." */
void deferred_export__fprintf_stats(const struct deferred_export_stats *stats, FILE *fp,
				    const char *prefix);

#endif /* __PERF_DEFERRED_EXPORT_H */
