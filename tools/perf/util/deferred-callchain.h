/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PERF_RECORD_CALLCHAIN_DEFERRED (Linux 6.19): the user part of a callchain,
 * unwound when the task returned to user space and matched to the samples
 * that asked for it by a cookie.
 */
#ifndef __PERF_DEFERRED_CALLCHAIN_H
#define __PERF_DEFERRED_CALLCHAIN_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

union perf_event;
struct evlist;
struct machine;
struct perf_sample;
struct perf_tool;

/*
 * Checks that the record holds its fixed part, nr ips and the sample_id
 * trailer of the event that wrote it (found by its id; a record naming no
 * event is malformed too).  A malformed record is reported (with its file
 * offset) and counted in evlist->stats.nr_invalid_callchain_deferred; the
 * caller must then skip it without looking at its contents.
 */
bool perf_event__callchain_deferred_valid(union perf_event *event,
					  struct evlist *evlist,
					  u64 file_offset);

/*
 * Default perf_tool::callchain_deferred: nothing to do with the record yet
 * (the session already counted it and -D printed it).
 */
int perf_event__process_callchain_deferred(struct perf_tool *tool,
					   union perf_event *event,
					   struct perf_sample *sample,
					   struct machine *machine);

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
struct callchain_cursor;
struct ip_callchain;
struct option;
struct perf_file_section;
struct perf_header;
struct perf_session;
struct thread;

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
	/* orphans: enum unwind_orphan_reason, see deferred_sample_info__reason() */
	int	reason;
	/* stitched samples: the record joined */
	u32	record_cpu;		/* CPU whose buffer had the record */
	bool	record_cpu_known;	/* false: its event has no PERF_SAMPLE_CPU */
	u64	record_time;
	bool	late;			/* taken after the record was written */
};

/* "stitched", "orphan", "unstitched" */
const char *deferred_sample_info__status(const struct deferred_sample_info *info);
/* orphans: "record lost", "task exited", ...; others: "none" */
const char *deferred_sample_info__reason(const struct deferred_sample_info *info);
/* the same as identifiers: "record_lost", "task_exited", ... */
const char *deferred_sample_info__reason_key(const struct deferred_sample_info *info);

/* Default window with time-ordered input (ordered_events), in ns. */
#define DEFERRED_STITCH_WINDOW_ORDERED	(100ULL * 1000 * 1000)

/* --stitch-window and --stitch-max-mem, value: u64 */
int deferred_stitch__parse_window(const struct option *opt, const char *str, int unset);
int deferred_stitch__parse_max_mem(const struct option *opt, const char *str, int unset);

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
/* End of the stream: hand every held event to the tool. */
int deferred_callchain__flush(struct perf_session *session);
void deferred_callchain__delete(struct deferred_callchain *dc);

/* True when the session saw deferred samples or records. */
bool perf_session__has_deferred(struct perf_session *session);

/*
 * perf stitch reads every input through a session.  A pipe sends its
 * attrs, features and tracing data as records: give @tool the callbacks
 * that read them where it has none of its own, so that every mode reads
 * every pipe (a compressed one: HEADER_COMPRESSED sizes the buffer).
 */
void deferred_stitch__tool_read_header(struct perf_tool *tool);
/*
 * perf_header__process_sections() callback for convert and emulate, which
 * copy the input's features: notes where each is, in @data's
 * struct perf_file_section[HEADER_FEAT_BITS].
 */
int deferred_stitch__save_section(struct perf_file_section *section, struct perf_header *ph,
				  int feat, int fd, void *data);

/*
 * HEADER_EVENT_DESC as written: u32 nr, u32 attr_size, then per event its
 * attr (attr_size bytes), u32 nr_ids, u32 len, a name of len bytes and
 * u64 ids[nr_ids], nothing aligned.  Walked in place by convert (defer
 * bits cleared) and emulate (set).
 */
struct event_desc_iter {
	char	*p;
	char	*end;
	u32	nr;
	u32	attr_size;
	u32	i;
};

struct event_desc_entry {
	char	*attr;		/* attr_size bytes */
	u32	nr_ids;
	u32	name_len;
	char	*name;
	char	*ids;		/* nr_ids u64s, unaligned */
	size_t	size;		/* of the whole entry, attr included */
};

/* 0, or -EINVAL: shorter than its header, or an attr size below VER0 */
int event_desc__begin(struct event_desc_iter *it, void *buf, size_t size);
/* 1 and *@e for the next event, 0 after the last, -EINVAL past the buffer */
int event_desc__next(struct event_desc_iter *it, struct event_desc_entry *e);
/*
 * After a perf stitch mode read @session: what it could not read must not
 * pass for a result.  Records of types this perf does not know were
 * skipped, or the data held samples but none was delivered to the tool
 * (@delivered): said naming @path, and -EINVAL, or with @force only a
 * warning and 0.  Malformed CALLCHAIN_DEFERRED records and deferred
 * samples (reported with their offsets, skipped, counted in each mode's
 * summary) are an error only with @strict.
 */
int deferred_stitch__check_read(struct perf_session *session, const char *path,
				u64 delivered, bool force, bool strict);
/*
 * For every summary: " (record lost N, task exited N)", the non-zero of
 * @nr counts indexed by enum unwind_orphan_reason; nothing if all are 0
 */
size_t deferred_stitch__fprintf_orphans(FILE *fp, const u64 *by_reason, int nr);
/* For a mode's summary: what was skipped as malformed, each part after @sep */
void deferred_stitch__fprintf_malformed(FILE *fp, const char *sep, u64 records, u64 samples);
/*
 * One line, prefixed with @prefix:
 * "deferred callchains: N deferred samples, N stitched (x%), N orphans
 * (record lost N, ...), N records, N duplicate records, N cross-CPU records,
 * N late samples".  Prints nothing for a session without deferred
 * callchains.
 */
size_t perf_session__fprintf_deferred_summary(struct perf_session *session, FILE *fp,
					      const char *prefix);

/*
 * The stitch engine's counters (struct unwind_stitcher_stats, whose header
 * only deferred-callchain.o sees), for perf stitch --stats.  Read them after
 * perf_session__process_events(), before the session is deleted.
 */
#define DEFERRED_STITCH_REASONS_MAX	16

struct deferred_stitch_stats {
	bool	stitching;		/* the engine ran: the counters below are its */
	bool	cpu_known;		/* PERF_SAMPLE_CPU: cross_cpu_records is known */
	u64	samples;
	u64	deferred_samples;
	u64	records;
	u64	stitched;
	/* [reason], reason from 1 to nr_reasons - 1; [0] unused */
	u64	orphans[DEFERRED_STITCH_REASONS_MAX];
	int	nr_reasons;
	u64	orphans_total;
	u64	duplicates;
	u64	duplicates_conflicting;
	u64	late_samples;
	u64	cross_cpu_records;
	u64	truncated_records;
	u64	empty_records;
	u64	unclaimed_records;
	u64	lost_notices;
	u64	peak_pending_samples;
	u64	peak_pending_bytes;
	struct {
		u64	count;
		s64	min;
		s64	median;
		s64	p99;
		s64	max;
	} latency;			/* record time - sample time, ns */
};

/*
 * Zeros for a session without deferred callchains; without the engine
 * (stitching off or impossible), only the deferred samples and records.
 */
void perf_session__deferred_stats(struct perf_session *session,
				  struct deferred_stitch_stats *stats);
/* "record lost", ... and "record_lost", ... (unwind_orphan_reason__name/key) */
const char *deferred_stitch__reason_name(int reason);
const char *deferred_stitch__reason_key(int reason);

/*
 * The chain ends in PERF_CONTEXT_USER_DEFERRED, cookie: the pseudo-frame
 * for it goes to @cursor: "[user stack lost: <reason>]" for an orphan,
 * else "[user stack deferred]", or with deferred_callchain__cookie_frames()
 * on "[user stack deferred: cookie 0x...]" (the cookie is then also the
 * frame's address; for the first 65536 cookies).
 */
bool callchain__has_deferred_tail(const struct ip_callchain *chain);
/*
 * On: a frame per cookie, to find the record of an unstitched sample (perf
 * script). Off (default): one for all, so that histograms aggregate.
 */
void deferred_callchain__cookie_frames(bool on);
int callchain_cursor__append_deferred(struct callchain_cursor *cursor, struct thread *thread,
				      const struct perf_sample *sample);

/*
 * "PERF_RECORD_CALLCHAIN_DEFERRED cookie 0x... (cpu N, counter N) nr N\n";
 * a cookie that does not decode shows "(not a 6.19 cookie)".
 */
size_t perf_event__fprintf_callchain_deferred_cookie(struct perf_session *session,
						     union perf_event *event, FILE *fp);
/*
 * The record's ips as a sample callchain (PERF_CONTEXT_USER, ips...), to
 * resolve and print like a sample's, in @buf (@cap u64s, nr + 2 needed);
 * NULL when it does not fit.
 */
struct ip_callchain *perf_event__callchain_deferred_chain(union perf_event *event, u64 *buf,
							  size_t cap);

/* " cookie: ... nr: ...\n" and one "..... i: ip" line per entry, as -D shows */
size_t perf_event__fprintf_callchain_deferred(union perf_event *event, FILE *fp);


/*
 * perf record: asking the kernel to defer user callchains (Linux 6.19+,
 * --call-graph deferred or fp,defer, callchain_param::defer).
 */

/*
 * After the events are configured: when any of them has
 * attr.defer_callchain, sets attr.defer_output on the tracking event and
 * clears it on all others.  The kernel writes each
 * PERF_RECORD_CALLCHAIN_DEFERRED once per defer_output event, so a
 * second one would duplicate every record.
 */
void evlist__config_callchain_deferred(struct evlist *evlist);

/*
 * After the events are open, when the kernel refused the defer bits
 * (perf_missing_features.defer_callchain) and they were dropped: prints
 * one line for the whole session, prefixed with @cmd ("perf record").
 * A user-space emulation on such kernels would hook in here.
 */
void callchain_deferred__warn_fallback(const char *cmd);

#endif /* __PERF_DEFERRED_CALLCHAIN_H */
