/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf stitch (convert mode): what its files share, each calling only
 * those below it.
 *
 *   deferred-convert.c         the session, the events: what is written
 *   deferred-convert-offcpu.c  --count=off-cpu: where a sample's period went
 *   deferred-convert-header.c  the header: a file's at the end, or the
 *                              records a pipe starts with, made from the
 *                              input's (attrs, features, tracing data)
 *   deferred-convert-write.c   the data section: events and rounds
 */
#ifndef __PERF_DEFERRED_CONVERT_INTERNAL_H
#define __PERF_DEFERRED_CONVERT_INTERNAL_H

#include <stdbool.h>
#include <linux/types.h>

#include "data.h"
#include "event.h"
#include "header.h"
#include "tool.h"
#include "stitch-output.h"
#include "deferred-convert.h"
#include "deferred-export-offcpu.h"

struct evlist;
struct intlist;
struct perf_event_attr;
struct perf_session;

/* The largest record: its size is a u16. */
#define CONVERT_MAX_EVENT	65535

struct cvt {
	struct perf_tool		tool;
	const struct deferred_convert_opts *opts;
	struct deferred_convert_stats	*stats;
	struct perf_data		data;		/* the session points to it */
	struct perf_session		*session;
	bool				pipe_in;	/* -i - */
	bool				pipe_out;	/* -o -, a FIFO */
	struct stitch_output		output;
	struct stitch_buf			*out;
	bool				data_started;
	u64				data_offset;	/* of the file written */
	u64				round_bytes;	/* written since the last round */
	u64				last_time;	/* of the last timed event written */
	/* per process: a bit per reason whose lost map it has */
	struct intlist			*lost_maps;
	struct perf_file_section	secs[HEADER_FEAT_BITS];
	/* pipe to file: the features and the tracing data the pipe had */
	void				*feat_data[HEADER_LAST_FEATURE];
	size_t				feat_size[HEADER_LAST_FEATURE];
	/* the last feature record, if without data and of a known id, else 0 */
	int				feat_end;
	union perf_event		*ev;		/* CONVERT_MAX_EVENT + 1 bytes */
	/* --count=off-cpu (util/deferred-export-offcpu.h) */
	struct offcpu_switches		offcpu;
	struct evsel			*offcpu_evsel;	/* sched:sched_switch */
	u64				period_off;	/* of its samples' period */
	u64				data_written;	/* ->written at data_offset */
	u64				end_time;
	int				err;
};

/* ---- deferred-convert-write.c: the data section ---- */

/* Where the data starts: a file's after its attrs, known once they are. */
int cvt__start_data(struct cvt *cvt);
/* Writes a record that happened at @time (-1: none), rounds between records. */
int cvt__write(struct cvt *cvt, const union perf_event *event, u64 time);
/* The same, saying at which ->written it starts in *@pos */
int cvt__write_event(struct cvt *cvt, const union perf_event *event, u64 time, u64 *pos);
/* Keeps the first error for the end of the run; returns @err. */
int cvt__fail(struct cvt *cvt, int err);

/* ---- deferred-convert-offcpu.c: --count=off-cpu ---- */

/* Before the output is written (-EINVAL for a pipe output) */
int cvt__offcpu_start(struct cvt *cvt);
void cvt__offcpu_exit(struct cvt *cvt);
/* A sample just written, at @pos (a value of cvt->out->written) */
int cvt__offcpu_sample(struct cvt *cvt, struct perf_sample *sample, u64 pos);
/* A PERF_RECORD_SWITCH(_CPU_WIDE): the task switched in comes back */
int cvt__offcpu_switch_event(struct cvt *cvt, union perf_event *event,
			     struct perf_sample *sample);
/* After the input: the tasks still out, to the last event */
int cvt__offcpu_finish(struct cvt *cvt);

/* ---- deferred-convert-header.c ---- */

/*
 * perf's feature table (util/header.c): which features a pipe carries
 * (.synthesize), their names.  util/synthetic-events.c declares it too.
 */
extern const struct perf_header_feature_ops feat_ops[HEADER_LAST_FEATURE];

/*
 * The smallest attr size perf has known (PERF_ATTR_SIZE_VERn) that holds
 * every non-zero field of @attr.
 */
u32 deferred_convert__attr_size(const struct perf_event_attr *attr);
/*
 * An attr of @size bytes from the input, of the event @name: non-zero
 * bytes beyond this perf's struct (a newer perf's config3, ...) cannot be
 * written; counted and said.
 */
void deferred_convert__check_attr_tail(struct cvt *cvt, const void *attr, size_t size,
				       const char *name, int name_len);
/* An attr as every output has it: no defer_callchain, no defer_output. */
void deferred_convert__clear_attr(struct perf_event_attr *attr);
/* Every attr of @evlist cleared, at this perf's size. */
void deferred_convert__clear_attrs(struct evlist *evlist);
/*
 * HEADER_EVENT_DESC (@size bytes at @in) with the attrs cleared and at
 * most this perf's size, into @out (as large as @in); *@out_size its size.
 */
int deferred_convert__fix_event_desc(struct cvt *cvt, const char *in, size_t size,
				     char *out, size_t *out_size);
/* File to pipe: the pipe header and the records before the data. */
int deferred_convert__write_pipe_header(struct cvt *cvt);
/* A file's header, after its data: attrs, features copied from the input. */
int deferred_convert__write_header(struct cvt *cvt);

#endif /* __PERF_DEFERRED_CONVERT_INTERNAL_H */
