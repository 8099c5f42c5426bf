/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_STITCHER_H
#define __LIBUNWIND_COOKIE_STITCHER_H

/*
 * The streaming stitch engine. Feed it samples whose user callchain was
 * deferred and the PERF_RECORD_CALLCHAIN_DEFERRED records that carry those
 * callchains, in any order, plus the task events that bound a task's life.
 * It hands every sample back exactly once through the deliver callback:
 * stitched to its user callchain, or as an orphan with the reason its user
 * callchain will never come. See Documentation/stitching.md.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unwind-cookie/core.h>
#include <unwind-cookie/cookie.h>

#ifdef __cplusplus
extern "C" {
#endif

struct unwind_stitcher;

enum unwind_stitch_status {
	UNWIND_STITCH_NOT_DEFERRED,	/* the sample had no cookie: passed through */
	UNWIND_STITCH_STITCHED,		/* joined to its deferred user callchain */
	UNWIND_STITCH_ORPHAN,		/* its user callchain will not come */
	UNWIND_STITCH_PASSTHROUGH,	/* not a sample: see unwind_stitcher__add_passthrough */
};

enum unwind_orphan_reason {
	UNWIND_ORPHAN_NONE,
	UNWIND_ORPHAN_RECORD_LOST,	/* covered by a lost notice, or the task moved on */
	UNWIND_ORPHAN_TASK_EXITED,	/* the task exited before its record came */
	UNWIND_ORPHAN_STREAM_ENDED,	/* the input ended first */
	UNWIND_ORPHAN_MEMORY_CAP,	/* released early to honour max_pending_bytes */
	UNWIND_ORPHAN_EXEC,		/* the record shows the program exec'd after the sample */
	UNWIND_ORPHAN_UNWIND_FAILED,	/* the record came with no usable user entry */
	UNWIND_ORPHAN__MAX,
};

/* A short name ("task exited") for pseudo-frames and summaries. */
LIBUNWIND_COOKIE_API const char *unwind_orphan_reason__name(enum unwind_orphan_reason reason);
/* A machine-friendly name ("task_exited") for JSON and scripting. */
LIBUNWIND_COOKIE_API const char *unwind_orphan_reason__key(enum unwind_orphan_reason reason);

/* One sample. All fields are copied; @kernel may be freed on return. */
struct unwind_stitcher_sample {
	size_t		sz;	/* sizeof(struct unwind_stitcher_sample) */
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	cpu;
	uint64_t	time;
	/* The chain before the deferred marker (see unwind_callchain__split). */
	const uint64_t	*kernel;
	size_t		nr_kernel;
	/* 0 for a sample without a deferred user chain. */
	uint64_t	cookie;
	/* Owned by the caller, handed back on delivery. */
	void		*payload;
	/* Bytes the payload keeps alive, counted against max_pending_bytes. */
	size_t		payload_bytes;
};

/*
 * The CPU of a record written by an event without PERF_SAMPLE_CPU (perf
 * reads (u32)-1 there): such a record is not counted as cross-CPU.
 */
#define UNWIND_STITCHER_CPU_UNKNOWN	UINT32_MAX

/* One PERF_RECORD_CALLCHAIN_DEFERRED. @ips is copied. */
struct unwind_stitcher_record {
	size_t		sz;	/* sizeof(struct unwind_stitcher_record) */
	uint32_t	pid;
	uint32_t	tid;
	/* where the record was written (sample_id), or UNWIND_STITCHER_CPU_UNKNOWN */
	uint32_t	cpu;
	uint64_t	time;
	uint64_t	cookie;
	const uint64_t	*ips;
	size_t		nr;
};

/* What the deliver callback gets. Pointers are valid during the call only. */
struct unwind_stitched_sample {
	enum unwind_stitch_status	status;
	enum unwind_orphan_reason	reason;		/* for orphans */
	uint32_t			pid;
	uint32_t			tid;
	uint32_t			cpu;
	uint64_t			time;
	uint64_t			cookie;
	const uint64_t			*kernel;
	size_t				nr_kernel;
	/* The sanitised user trace, for stitched samples. */
	const uint64_t			*user;
	size_t				nr_user;
	/* Where and when the joined record was written (stitched only). */
	uint32_t			record_cpu;
	uint64_t			record_time;
	bool				late;	/* taken after its record was written */
	void				*payload;
};

typedef void (*unwind_stitcher_deliver_fn)(void *ctx, const struct unwind_stitched_sample *s);

enum unwind_stitcher_order {
	/*
	 * A sample is handed back as soon as it is resolved: a non-deferred
	 * sample at once; a deferred one a window after its record arrived
	 * (the time an exec or exit written before the record may still take
	 * to arrive; with opts.sorted, when it arrives), or when it is known
	 * to be an orphan. Samples of one
	 * kernel entry come back in the order they were fed.
	 */
	UNWIND_STITCHER_ORDER_RESOLVED,
	/*
	 * Samples are handed back in exactly the order they were fed; a
	 * resolved sample waits for the unresolved ones fed before it.
	 */
	UNWIND_STITCHER_ORDER_INPUT,
};

struct unwind_stitcher_opts {
	size_t				sz;	/* sizeof(struct unwind_stitcher_opts) */
	unwind_stitcher_deliver_fn	deliver;
	void				*ctx;
	enum unwind_stitcher_order	order;
	/*
	 * Disorder the input may have, in sample time units (ns for perf):
	 * an item arrives before the engine has seen a time more than this
	 * past it; with sorted input, the longest a late sample may follow
	 * its record. A record stays available to late samples for two
	 * windows (one with sorted input), and no sample is declared lost
	 * before one has passed. 0 picks
	 * UNWIND_STITCHER_DEFAULT_WINDOW; values above 2^62 are clamped.
	 */
	uint64_t			window;
	/* Cap on pending bytes; 0 picks UNWIND_STITCHER_DEFAULT_MAX_BYTES. */
	size_t				max_pending_bytes;
	/* Layout used to find a cookie's CPU for the cross-CPU statistic. */
	enum unwind_cookie_layout	layout;
	/*
	 * The input is in time order (perf's ordered_events): every exec and
	 * exit written before a record is fed before it, so the samples a
	 * record joins are settled when it arrives, and a late sample when
	 * it does, instead of a window later, and a record is kept one
	 * window for late samples and copies instead of two (they cannot
	 * arrive later than their time), or only until its task's next
	 * kernel entry shows (it went back to user space in between: they
	 * all came before). The window still bounds the wait
	 * for late samples, copies and evidence. A caller whose input is
	 * only roughly ordered leaves it false.
	 */
	bool				sorted;
};

#define UNWIND_STITCHER_DEFAULT_WINDOW		1000000000ULL	/* 1 s */
#define UNWIND_STITCHER_DEFAULT_MAX_BYTES	(512ULL << 20)

struct unwind_stitcher_latency {
	uint64_t	count;
	int64_t		min;
	int64_t		median;
	int64_t		p99;
	int64_t		max;
};

struct unwind_stitcher_stats {
	size_t		sz;	/* set by the caller: sizeof(struct unwind_stitcher_stats) */
	uint64_t	samples;		/* every sample fed */
	uint64_t	passthrough;		/* other items fed for ordering */
	uint64_t	deferred_samples;	/* those with a cookie */
	uint64_t	records;		/* every record fed */
	uint64_t	stitched;
	uint64_t	orphans[UNWIND_ORPHAN__MAX];	/* [UNWIND_ORPHAN_NONE] unused */
	uint64_t	orphans_total;
	uint64_t	duplicates;		/* identical repeats, dropped */
	uint64_t	duplicates_conflicting;	/* repeats with other ips, dropped */
	uint64_t	late_samples;		/* stitched to a record written earlier */
	/* written on another CPU than the cookie's (a record's CPU known) */
	uint64_t	cross_cpu_records;
	uint64_t	truncated_records;	/* cut at a marker-range ip */
	uint64_t	empty_records;		/* no usable user entry */
	uint64_t	unclaimed_records;	/* released without stitching a sample */
	uint64_t	lost_notices;
	uint64_t	invalid_inputs;		/* rejected with -EINVAL */
	/* Not yet handed back: waiting, or (ORDER_INPUT) queued behind one. */
	uint64_t	pending_samples;
	uint64_t	pending_bytes;		/* now */
	uint64_t	peak_pending_samples;
	uint64_t	peak_pending_bytes;
	/* record time - sample time of stitched samples; late ones are < 0 */
	struct unwind_stitcher_latency latency;
};

LIBUNWIND_COOKIE_API struct unwind_stitcher *
unwind_stitcher__new(const struct unwind_stitcher_opts *opts);
/* Hands back nothing: call unwind_stitcher__finish() first to drain. */
LIBUNWIND_COOKIE_API void unwind_stitcher__delete(struct unwind_stitcher *st);

/*
 * 0, -EINVAL for a malformed input (counted; an sz below the struct's first
 * version or a non-zero unknown tail is malformed), -ENOMEM. A sample
 * refused with an error was not taken: it is not counted and never handed
 * back.
 */
LIBUNWIND_COOKIE_API int unwind_stitcher__add_sample(struct unwind_stitcher *st,
						     const struct unwind_stitcher_sample *sample);
LIBUNWIND_COOKIE_API int unwind_stitcher__add_record(struct unwind_stitcher *st,
						     const struct unwind_stitcher_record *record);

/*
 * A sample whose record the caller has read ahead of its place in the
 * stream: a reader of a seekable file that indexed the file's records
 * first.  With sorted input, the sample is settled at once (stitched to
 * @ahead, or an orphan if @ahead has no usable entry) instead of waiting
 * for the record, and so, with ORDER_INPUT, is nothing fed after it.  The
 * caller promises that @ahead is the record add_record() gets later for
 * the sample's (tid, cookie), written by the sample's pid after it, and
 * that the task neither exec'd nor exited between the two (such a sample
 * is fed with add_sample(), the record deciding when it comes).  The
 * record is then counted when it comes, as without reading ahead; its
 * kernel entry is kept until then, not its samples.  A NULL @ahead
 * promises that the rest of the stream has no record of the sample's
 * kernel entry, no later record of its task, and neither its exit nor an
 * exec: the sample is an orphan at once (UNWIND_ORPHAN_STREAM_ENDED, what
 * finish() would make it), unless its record is already in.  Anything
 * else (unsorted input, a record earlier than the sample, other ids) is
 * taken as add_sample() takes it.  Errors as add_sample()'s.
 */
LIBUNWIND_COOKIE_API int
unwind_stitcher__add_sample_ahead(struct unwind_stitcher *st,
				  const struct unwind_stitcher_sample *sample,
				  const struct unwind_stitcher_record *ahead);

/*
 * What unwind_stitcher__read_ahead() asks for each kernel entry whose
 * samples wait: @first holds the entry's pid, tid, cookie, the CPU of its
 * first sample and the time of its earliest.  0 with the entry's record
 * in *@ahead, a record of this library's size (@ahead->sz is set; its
 * @ips valid until the callback is called again or read_ahead()
 * returns); -ENODATA when the rest of the stream has none of
 * what add_sample_ahead()'s NULL promises; -ENOENT to leave the samples
 * waiting; any other -errno stops read_ahead(), which returns it.
 */
typedef int (*unwind_stitcher_find_fn)(void *ctx, const struct unwind_stitcher_sample *first,
				       struct unwind_stitcher_record *ahead);

/*
 * The samples already waiting, settled from records read ahead, as
 * add_sample_ahead() settles a new sample: for a caller that indexes its
 * file only once samples have waited long, so that a stream where few
 * wait never pays for the index.  @find is asked once per waiting kernel
 * entry, oldest first, with the promises add_sample_ahead() asks of its
 * caller for every sample of the entry; a record that is not the entry's
 * own (other ids, or earlier than a sample) leaves it waiting.  Without
 * opts.sorted nothing is read ahead.  0, -EINVAL, -ENOMEM or @find's
 * error.
 */
LIBUNWIND_COOKIE_API int unwind_stitcher__read_ahead(struct unwind_stitcher *st,
						     unwind_stitcher_find_fn find, void *ctx);

/*
 * Any other item of the caller's stream (an mmap, a comm, ...), to be
 * handed back in its place among the samples: with ORDER_INPUT it waits
 * behind the samples fed before it, so that a caller replaying its stream
 * through the engine sees every item in the original order. @time (0 if
 * none) moves the engine's clock like any input. Not counted as a sample.
 */
LIBUNWIND_COOKIE_API int unwind_stitcher__add_passthrough(struct unwind_stitcher *st,
							  uint64_t time, void *payload,
							  size_t payload_bytes);

/*
 * Every input still to come has a time at or after @time: for input out
 * of time order whose disorder has known bounds, such as perf.data read in
 * file order, where everything written before the last but one
 * PERF_RECORD_FINISHED_ROUND is older than anything after the last one.
 * Until the horizon passes an item's time, nothing that depends on an
 * older input not arriving is decided, however far past the window the
 * watermark has moved: with long rounds the disorder can exceed the
 * window. Without calls, the window alone bounds the disorder. Ignored
 * with opts.sorted.
 */
LIBUNWIND_COOKIE_API int unwind_stitcher__horizon(struct unwind_stitcher *st, uint64_t time);

/*
 * The stream's clock has reached @time though no input says so: a live
 * reader whose sources went quiet (the profiled task sleeps or exited)
 * passes the time its own clock shows, so that what waits for the window
 * to pass, a stitched sample kept for copies of its record, a sample whose
 * task moved on, is decided without a next input. Moves the clock as an
 * input of that time would; an earlier @time changes nothing. The caller
 * promises that what it still has to feed is at most a window older.
 */
LIBUNWIND_COOKIE_API int unwind_stitcher__advance(struct unwind_stitcher *st, uint64_t time);

/* Records written on @cpu up to @time may have been lost (PERF_RECORD_LOST). */
LIBUNWIND_COOKIE_API int unwind_stitcher__lost(struct unwind_stitcher *st, uint32_t cpu,
					       uint64_t time);
/* PERF_RECORD_EXIT of @tid. */
LIBUNWIND_COOKIE_API int unwind_stitcher__task_exit(struct unwind_stitcher *st, uint32_t pid,
						    uint32_t tid, uint64_t time);
/* PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC: @tid exec'd. */
LIBUNWIND_COOKIE_API int unwind_stitcher__task_exec(struct unwind_stitcher *st, uint32_t pid,
						    uint32_t tid, uint64_t time);
/* End of stream: every pending sample is handed back. */
LIBUNWIND_COOKIE_API int unwind_stitcher__finish(struct unwind_stitcher *st);

/*
 * Fills *@stats up to @stats->sz bytes and no further, so that a caller
 * built against an older, smaller struct keeps working when counters are
 * added; sz itself is left as the caller set it. 0, or -EINVAL for a NULL
 * argument or an sz that does not reach the first counter.
 */
LIBUNWIND_COOKIE_API int unwind_stitcher__stats(const struct unwind_stitcher *st,
						struct unwind_stitcher_stats *stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __LIBUNWIND_COOKIE_STITCHER_H */
