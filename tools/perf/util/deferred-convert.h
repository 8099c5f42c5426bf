/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf stitch (convert mode): a recording with deferred user callchains
 * (Linux 6.19) rewritten into one every perf reads, the session's stitching
 * (util/deferred-callchain.c) providing the joined callchains.  See
 * Documentation/perf-stitch.txt.
 */
#ifndef __PERF_DEFERRED_CONVERT_H
#define __PERF_DEFERRED_CONVERT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "deferred-callchain.h"

struct deferred_convert_opts {
	const char	*input;		/* a perf.data path, or "-" (pipe) */
	/* a path; "-", a FIFO or a terminal get the pipe format */
	const char	*output;
	bool		force;		/* overwrite the output; perf_data::force */
	bool		strict;		/* malformed deferred records or samples: fail */
	/*
	 * --count=off-cpu: the period of each sched:sched_switch sample is
	 * the nanoseconds its task stays switched out (0 for the idle task,
	 * an exiting one, a switch whose task came back unrecorded); a file
	 * output only, patched when the task comes back
	 */
	bool		off_cpu;
};

/* What the conversion did, for the summary; the counts reconcile. */
struct deferred_convert_stats {
	u64	samples;		/* every sample written */
	u64	deferred;		/* of those: user callchain deferred */
	u64	stitched;		/* ... written with the record's user part */
	u64	orphans[DEFERRED_STITCH_REASONS_MAX];	/* ... by reason */
	u64	orphans_total;
	u64	records_removed;	/* PERF_RECORD_CALLCHAIN_DEFERRED */
	u64	lost_maps;		/* MMAP2 of the "[user stack lost: ...]" frames */
	u64	events;			/* records written, rounds and maps included */
	u64	rounds;			/* PERF_RECORD_FINISHED_ROUND written */
	u64	unknown_skipped;	/* records of types perf does not know */
	u64	malformed_records;	/* CALLCHAIN_DEFERRED, skipped */
	u64	malformed_samples;	/* deferred callchain malformed, left out */
	u64	out_of_order;		/* events the input had before earlier ones */
	u64	features_dropped;	/* pipe to pipe: features of a newer perf */
	u64	attrs_cut;		/* attrs with non-zero fields this perf does not know */
	/* --count=off-cpu: switches weighed, and of them still out at the end */
	u64	offcpu_weighed;
	u64	offcpu_open;
	u64	offcpu_ns;
	u64	offcpu_zero;		/* idle, exiting, unmatched: period 0 */
	/* stitched samples too large for a record: user frames cut */
	u64	cut_samples;
	u64	cut_frames;		/* the user frames left out of them */
	int	nr_reasons;
	bool	pipe_in;		/* the input in pipe format */
	bool	pipe_out;		/* the output in pipe format */
	/* stdout, a device, a FIFO: on failure, what was written stays there */
	bool	output_in_place;
};

/*
 * Reads opts->input and writes opts->output (util/stitch-output.h: a file
 * through a temporary file renamed only on success, "-", a device or a
 * FIFO in place).  Returns 0 or a negative error, having printed why.
 */
int deferred_convert(const struct deferred_convert_opts *opts,
		     struct deferred_convert_stats *stats);

/* One line: what deferred_convert() did, prefixed with @cmd. */
void deferred_convert__fprintf_stats(const struct deferred_convert_stats *stats,
				     const struct deferred_convert_opts *opts,
				     const char *cmd, FILE *fp);

#endif /* __PERF_DEFERRED_CONVERT_H */
