/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred user callchains (Linux 6.19): the user part of a callchain comes
 * in a PERF_RECORD_CALLCHAIN_DEFERRED record, unwound when the task returned
 * to user space, matched to the samples that asked for it by a cookie.
 */
#ifndef __PERF_DEFERRED_CALLCHAIN_H
#define __PERF_DEFERRED_CALLCHAIN_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

union perf_event;
struct perf_sample;

struct evlist;
struct ip_callchain;
struct option;
struct perf_session;
struct thread;
struct unwind_stitcher_stats;

enum deferred_sample_status {
	DEFERRED_SAMPLE__UNSTITCHED,	/* stitching off: marker and cookie kept */
	DEFERRED_SAMPLE__STITCHED,	/* callchain has the record's user part */
	DEFERRED_SAMPLE__ORPHAN,	/* its record will not come: see reason */
};

/*
 * perf_sample::deferred of a sample whose user callchain was deferred, NULL
 * for every other sample.  Valid while the sample is delivered only.
 *
 * A stitched sample's callchain is kernel..., PERF_CONTEXT_USER, user...;
 * an orphan's and an unstitched one's still end in
 * PERF_CONTEXT_USER_DEFERRED, cookie, which callchain resolution shows as
 * the pseudo-frame "[user stack lost: <reason>]" or
 * "[user stack deferred: cookie 0x...]".
 */
struct deferred_sample_info {
	u64	cookie;
	/* decoded from the cookie (6.19 layout of the recording host) */
	bool	cookie_valid;
	u32	cookie_cpu;		/* the CPU that assigned the cookie */
	u64	cookie_counter;		/* that CPU's entry counter */
	enum deferred_sample_status status;
	/* orphans: enum unwind_orphan_reason or DEFERRED_ORPHAN_MALFORMED */
	int	reason;
	/* stitched samples: the record joined */
	u32	record_cpu;		/* CPU whose buffer had the record */
	bool	record_cpu_known;	/* false: its event has no PERF_SAMPLE_CPU */
	u64	record_time;
	bool	late;			/* taken after the record was written */
	/*
	 * The sample's thread with the maps of the record's time, when the
	 * task mapped code in between (an exec); NULL: its own thread's.
	 */
	struct thread *user_thread;
};

/*
 * The thread whose maps resolve an address of @sample's callchain in
 * context @cpumode: the user part of a stitched chain was taken when its
 * record was written, and resolves against the maps of then.
 */
struct thread *deferred_callchain__ip_thread(const struct perf_sample *sample,
					     struct thread *thread, u8 cpumode);

/* "stitched", "orphan", "unstitched" */
const char *deferred_sample_info__status(const struct deferred_sample_info *info);
/* orphans: "record lost", "task exited", ...; others: "none" */
const char *deferred_sample_info__reason(const struct deferred_sample_info *info);
/* the same as identifiers: "record_lost", "task_exited", ... */
const char *deferred_sample_info__reason_key(const struct deferred_sample_info *info);

/*
 * Where @chain defers its user part: the index of PERF_CONTEXT_USER_DEFERRED
 * when it comes before any PERF_CONTEXT_USER (after that marker everything
 * is a user stack unwound in place, whose garbage may take any value), else
 * -1.  A well-formed chain has it second to last, before the cookie:
 * callchain__has_deferred_tail().
 */
s64 callchain__deferred_marker(const struct ip_callchain *chain);
bool callchain__has_deferred_tail(const struct ip_callchain *chain);
/*
 * Stitching: every event the session delivers goes through a per-session
 * struct deferred_callchain (see perf_session__deliver_event()), which joins
 * the samples whose callchain ends in PERF_CONTEXT_USER_DEFERRED, cookie to
 * the PERF_RECORD_CALLCHAIN_DEFERRED record carrying their user part, using
 * libunwind-cookie's streaming stitch engine.  Events reach the tool in the
 * order they were fed (timestamp order behind ordered_events); a sample
 * waiting for its record holds back the events after it, for about one
 * window after the record (perf_tool::deferred_stitch_window) and at most
 * perf_tool::deferred_stitch_max_bytes of copies.
 */
struct deferred_callchain;

/*
 * Called for every event perf_session__deliver_event() parsed, when
 * session->deferred is set (see deferred_callchain__session_init()).
 */
int deferred_callchain__deliver(struct perf_session *session, union perf_event *event,
				struct perf_sample *sample, u64 file_offset,
				const char *file_path);
/*
 * Sets up session->deferred at the first event delivered, once the attrs
 * are known (pipe mode): when an event has callchains.
 */
void deferred_callchain__session_init(struct perf_session *session);
/*
 * perf top: its event loop does not go through the session's delivery.
 * deferred_callchain__live_init() gives @session a stitcher whose events
 * leave through @deliver (with @ctx) instead of the tool; feed every event
 * parsed with deferred_callchain__feed().  A sample whose user callchain
 * was deferred comes back about @window (0: the default, 1s) after its
 * record, stitched, or as an orphan with its reason (exec also when the
 * thread exec'd before it could be shown: its maps are the new
 * program's); every other event goes through at once.
 */
typedef int (*deferred_callchain_deliver_fn)(void *ctx, union perf_event *event,
					     struct perf_sample *sample);
int deferred_callchain__live_init(struct perf_session *session, u64 window, u64 max_bytes,
				  deferred_callchain_deliver_fn deliver, void *ctx);
int deferred_callchain__feed(struct perf_session *session, union perf_event *event,
			     struct perf_sample *sample);
/*
 * perf top's input is quiet: the engine is told the time has gone on, so
 * that the samples it holds leave when their window has passed.
 */
int deferred_callchain__live_tick(struct perf_session *session);
/*
 * For perf top's header: " deferred: N waiting, stitched: N/N orphans:
 * N/N", samples held for their record now, then as many as since the
 * last call / in all.
 */
size_t deferred_callchain__snprintf_live(struct perf_session *session, char *bf, size_t size);
/* A PERF_RECORD_FINISHED_ROUND: in file order, bounds how old what follows is. */
int deferred_callchain__finished_round(struct perf_session *session);
/* End of the stream: hand every held event to the tool. */
int deferred_callchain__flush(struct perf_session *session);
void deferred_callchain__delete(struct deferred_callchain *dc);

/* --stitch-window and --stitch-max-mem, value: u64 */
int deferred_stitch__parse_window(const struct option *opt, const char *str, int unset);
int deferred_stitch__parse_max_mem(const struct option *opt, const char *str, int unset);

/*
 * Whether a PERF_RECORD_CALLCHAIN_DEFERRED holds its fixed part, nr ips
 * and the sample_id trailer of the event that wrote it, found by its id as
 * evlist__parse_sample() finds it: 0; -ENOENT when its id names no event,
 * -EMSGSIZE when it is smaller than its fixed part and trailer (@need),
 * -E2BIG when nr is more than its @room for entries.  The ips of a record
 * that does not would run into its trailer or past its end.
 */
int perf_event__callchain_deferred_check(union perf_event *event, struct evlist *evlist,
					 size_t *need, u64 *room);

/* The records' events have PERF_SAMPLE_CPU: cross_cpu_records is known. */
bool perf_session__deferred_cpu_known(struct perf_session *session);
/* "record lost", "task exited", ... (unwind_orphan_reason__name) */
const char *deferred_stitch__reason_name(int reason);
/* the same as identifiers: "record_lost", ... (unwind_orphan_reason__key) */
const char *deferred_stitch__reason_key(int reason);
/*
 * For every summary: " (record lost N, task exited N)", the non-zero of
 * @nr counts indexed by enum unwind_orphan_reason; nothing if all are 0
 */
size_t deferred_stitch__fprintf_orphans(FILE *fp, const u64 *by_reason, int nr);
/*
 * One line, prefixed with @prefix:
 * "deferred callchains: N deferred samples, N stitched (x%), N orphans
 * (record lost N, ...), N records, N duplicate records, N cross-CPU records,
 * N late samples".  Prints nothing for a session without deferred
 * callchains.
 */
size_t perf_session__fprintf_deferred_summary(struct perf_session *session, FILE *fp,
					      const char *prefix);

/* Bound on the orphan reasons (DEFERRED_ORPHAN__MAX), for arrays indexed by them. */
#define DEFERRED_STITCH_REASONS_MAX	16
/*
 * The orphan reasons: libunwind-cookie's enum unwind_orphan_reason, then
 * perf's own, of a sample no record can join: its deferred callchain is
 * malformed (cookie 0, or the marker not second to last).
 */
#define DEFERRED_ORPHAN_MALFORMED	7	/* UNWIND_ORPHAN__MAX */
#define DEFERRED_ORPHAN__MAX		(DEFERRED_ORPHAN_MALFORMED + 1)

/*
 * The stitch engine's counters, libunwind-cookie's struct
 * unwind_stitcher_stats as unwind_stitcher__stats() gives them (set
 * @stats->sz first; copied up to it), for perf stitch --stats.  Read them
 * after perf_session__process_events(), before the session is deleted.
 * Returns 1 when the engine ran, 0 when it did not (stitching off or
 * impossible: only deferred_samples and records are set; zeros for a
 * session without deferred callchains), or -EINVAL for a bad @stats->sz.
 * deferred_samples and orphans_total include the samples kept as
 * DEFERRED_ORPHAN_MALFORMED orphans, which orphans[] (the library's
 * reasons) has no place for: events_stats::nr_invalid_deferred_samples.
 */
int perf_session__deferred_stats(struct perf_session *session,
				 struct unwind_stitcher_stats *stats);

#endif /* __PERF_DEFERRED_CALLCHAIN_H */
