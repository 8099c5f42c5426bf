// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains (Linux 6.19): the samples whose callchain ends in
 * PERF_CONTEXT_USER_DEFERRED, cookie joined to the
 * PERF_RECORD_CALLCHAIN_DEFERRED record holding their user part, by
 * libunwind-cookie's stitch engine, while the session delivers them; the
 * summaries.  The pseudo-frames shown where a user part is missing are in
 * deferred-frames.c, what the perf stitch modes share in deferred-stitch.c.
 */
#include <endian.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/build_bug.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <perf/event.h>
#include <subcmd/parse-options.h>
#include <unwind-cookie/callchain.h>
#include <unwind-cookie/cookie.h>
#include <unwind-cookie/stitcher.h>
#include "callchain.h"
#include "comm.h"
#include "debug.h"
#include "event.h"
#include "events_stats.h"
#include "header.h"
#include "evlist.h"
#include "evsel.h"
#include "machine.h"
#include "map.h"
#include "session.h"
#include "thread.h"
#include "time-utils.h"
#include "tool.h"
#include "units.h"
#include "deferred-callchain.h"
#include "deferred-index.h"
#include "deferred-maps.h"

/*
 * Stitching.
 *
 * Every event perf_session__deliver_event() parsed comes here while the
 * session has a struct deferred_callchain (its events have callchains):
 *
 *  - a sample whose callchain ends in PERF_CONTEXT_USER_DEFERRED, cookie
 *    goes to the stitch engine (libunwind-cookie), the event held as its
 *    payload (struct deferred_item);
 *  - a PERF_RECORD_CALLCHAIN_DEFERRED goes to the engine as the record of
 *    its cookie; the tool sees it only if it has its own
 *    callchain_deferred callback;
 *  - exits, exec comms and lost records are boundaries the engine needs;
 *  - everything else, and the events above, is handed back to the tool in
 *    the order fed (UNWIND_STITCHER_ORDER_INPUT): while the engine holds a
 *    sample, later events are held and queued behind it; when nothing is
 *    held they are delivered at once, without the engine.
 *
 * The engine hands each held sample back once: stitched (its callchain
 * rebuilt as kernel..., PERF_CONTEXT_USER, user...) or as an orphan (the
 * chain kept, perf_sample::deferred naming the reason). Both go on through
 * perf_session__deliver_parsed_event().
 */

/* malformed deferred samples reported one by one; the rest are only counted */
#define DEFERRED_SAMPLE_REPORT_MAX	10

/*
 * An event the engine holds: where it is in the session's mapping of the
 * file, or a copy.  perf maps a file whole on 64-bit hosts
 * (session->one_mmap) and keeps it mapped until the session ends, as
 * ordered_events, which queues pointers into it, relies on; events read
 * elsewhere (a pipe, a decompressed or realigned record, a directory of
 * files) are copied.
 */
struct deferred_item {
	u64			file_offset;
	const char		*file_path;
	union perf_event	*event;
	u64			copy[];		/* header.size bytes, if copied */
};

struct deferred_callchain {
	struct perf_session		*session;
	struct unwind_stitcher		*st;
	bool				stitch;
	bool				st_failed;
	/*
	 * Where events go when they leave: perf_session__deliver_parsed_event()
	 * (NULL), or perf top's own delivery.
	 */
	deferred_callchain_deliver_fn	deliver;
	void				*deliver_ctx;
	/* the engine's settings: the tool's, or perf top's */
	u64				window;
	u64				max_bytes;
	bool				sorted;
	/* the tool has its own callchain_deferred callback: records go on */
	bool				pass_records;
	/* samples the engine took, and handed back stitched or orphaned */
	u64				nr_engine_samples;
	u64				nr_stitched;
	u64				nr_orphans;
	/* perf top's header: the counts at its last refresh */
	u64				shown_stitched;
	u64				shown_orphans;
	enum unwind_cookie_layout	layout;
	/* items fed to the engine and not yet handed back, and their bytes */
	u64				outstanding;
	u64				held_bytes;
	/* said once that the memory cap made orphans */
	bool				cap_warned;
	/* user mappings held behind samples (reading a file) */
	struct deferred_maps		maps;
	/* a seekable file's records, read ahead (made at the first deferred sample) */
	struct deferred_index		*index;
	bool				index_tried;
	u64				nr_ahead;
	u64				nr_no_record;	/* none in the rest of the file */
	/* first error of a delivery from inside the engine */
	int				err;
	/* counted whether stitching or not */
	u64				nr_samples;
	/* samples kept as DEFERRED_ORPHAN_MALFORMED orphans */
	u64				nr_malformed;
	u64				nr_records;
	/* records written by an event without PERF_SAMPLE_CPU */
	u64				nr_records_no_cpu;
	/* the newest time fed to the engine: the time of an item without one */
	u64				clock;
	/* perf top: CLOCK_MONOTONIC when the clock last moved (rdclock()) */
	u64				clock_read_at;
	/* the clock at the last PERF_RECORD_FINISHED_ROUND */
	u64				round_clock;
	/* in file order, nothing still to come is older (the rounds say) */
	u64				horizon;
	struct deferred_sample_info	info;
	struct ip_callchain		*chain;
	size_t				chain_cap;
};

static const char * const deferred_status_names[] = {
	[DEFERRED_SAMPLE__UNSTITCHED]	= "unstitched",
	[DEFERRED_SAMPLE__STITCHED]	= "stitched",
	[DEFERRED_SAMPLE__ORPHAN]	= "orphan",
};

const char *deferred_sample_info__status(const struct deferred_sample_info *info)
{
	if (!info || info->status >= ARRAY_SIZE(deferred_status_names))
		return "unknown";
	return deferred_status_names[info->status];
}

const char *deferred_sample_info__reason(const struct deferred_sample_info *info)
{
	if (!info || info->status != DEFERRED_SAMPLE__ORPHAN)
		return deferred_stitch__reason_name(UNWIND_ORPHAN_NONE);
	return deferred_stitch__reason_name(info->reason);
}

const char *deferred_sample_info__reason_key(const struct deferred_sample_info *info)
{
	if (!info || info->status != DEFERRED_SAMPLE__ORPHAN)
		return deferred_stitch__reason_key(UNWIND_ORPHAN_NONE);
	return deferred_stitch__reason_key(info->reason);
}

/* ---- options ---- */

struct unit_suffix {
	const char	*suffix;
	u64		mult;
};

/*
 * @str: a decimal number > 0 and one of @units' suffixes ("" for a bare
 * number); *@value: the number times that suffix's multiplier.
 */
static int parse_scaled(const char *str, const struct unit_suffix *units, size_t nr_units,
			u64 *value)
{
	char *end;
	size_t i;
	u64 val;

	if (!isdigit((unsigned char)*str))
		return -1;
	errno = 0;
	val = strtoull(str, &end, 10);
	if (errno || !val)
		return -1;
	for (i = 0; i < nr_units; i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (val > UINT64_MAX / units[i].mult)
			return -1;
		*value = val * units[i].mult;
		return 0;
	}
	return -1;
}

/* "100ms", "2s", "500us", "1000ns"; a bare number is in milliseconds */
int deferred_stitch__parse_window(const struct option *opt, const char *str, int unset)
{
	static const struct unit_suffix units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "", 1000000 },
	};
	u64 *window = opt->value;

	if (unset || !str) {
		*window = 0;
		return 0;
	}
	if (!parse_scaled(str, units, ARRAY_SIZE(units), window))
		return 0;
	pr_err("invalid --%s '%s': expected a time > 0 such as 100ms, 2s, 500us\n",
	       opt->long_name, str);
	return -1;
}

/*
 * "512M", "2G", "64K", "4096B" as perf's other sizes (parse_tag_value());
 * a bare number is in MiB
 */
int deferred_stitch__parse_max_mem(const struct option *opt, const char *str, int unset)
{
	static struct parse_tag tags[] = {
		{ .tag = 'B', .mult = 1 },
		{ .tag = 'K', .mult = 1 << 10 },
		{ .tag = 'M', .mult = 1 << 20 },
		{ .tag = 'G', .mult = 1 << 30 },
		{ .tag = 0 },
	};
	static const struct unit_suffix mib[] = { { "", 1ULL << 20 } };
	u64 *max_bytes = opt->value;
	unsigned long val;

	if (unset || !str) {
		*max_bytes = 0;
		return 0;
	}
	val = parse_tag_value(str, tags);
	if (val != (unsigned long)-1 && val) {
		*max_bytes = val;
		return 0;
	}
	if (!parse_scaled(str, mib, ARRAY_SIZE(mib), max_bytes))
		return 0;
	pr_err("invalid --%s '%s': expected a size > 0 such as 256M, 2G\n",
	       opt->long_name, str);
	return -1;
}

s64 callchain__deferred_marker(const struct ip_callchain *chain)
{
	u64 i;

	for (i = 0; chain && i < chain->nr; i++) {
		if (chain->ips[i] == PERF_CONTEXT_USER_DEFERRED)
			return i;
		if (chain->ips[i] == PERF_CONTEXT_USER)
			return -1;
	}
	return -1;
}

bool callchain__has_deferred_tail(const struct ip_callchain *chain)
{
	s64 marker = callchain__deferred_marker(chain);

	return marker >= 0 && (u64)marker + 2 == chain->nr;
}

struct thread *deferred_callchain__ip_thread(const struct perf_sample *sample,
					     struct thread *thread, u8 cpumode)
{
	const struct deferred_sample_info *info = sample->deferred;

	if (info && info->user_thread && cpumode == PERF_RECORD_MISC_USER)
		return info->user_thread;
	return thread;
}

/* ---- the session side ---- */

/*
 * The library's own messages, in its words ("libunwind-cookie: ..."), as
 * perf shows libbpf's: with -v.  What a user must know of it, perf says in
 * its own (deferred__warn_cap()).
 */
static int deferred__print(enum libunwind_cookie_print_level level, const char *fmt, va_list ap)
{
	switch (level) {
	case LIBUNWIND_COOKIE_ERR:
	case LIBUNWIND_COOKIE_WARN:
	case LIBUNWIND_COOKIE_INFO:
		return veprintf(1, verbose, fmt, ap);
	case LIBUNWIND_COOKIE_DEBUG:
	default:
		return veprintf(2, verbose, fmt, ap);
	}
}

/* The first sample the memory cap made an orphan: say so once, as perf. */
static void deferred__warn_cap(struct deferred_callchain *dc)
{
	static const char * const units[] = { "B", "KiB", "MiB", "GiB" };
	u64 size = dc->max_bytes ?: UNWIND_STITCHER_DEFAULT_MAX_BYTES;
	unsigned int unit = 0;

	if (dc->cap_warned)
		return;
	dc->cap_warned = true;
	/* as --stitch-max-mem takes it: 1M is 1 MiB */
	while (unit + 1 < ARRAY_SIZE(units) && size >= 1024 && !(size % 1024)) {
		size /= 1024;
		unit++;
	}
	pr_warning("Deferred user callchains: the samples waiting for their records reached the memory cap of %" PRIu64 " %s (--stitch-max-mem): the oldest leave without their user part, as '[user stack lost: memory cap]'; raise the cap to keep them.\n",
		   size, units[unit]);
}

static enum unwind_cookie_layout deferred__layout(struct perf_session *session)
{
	bool host_le = __BYTE_ORDER == __LITTLE_ENDIAN;

	/* the producer's byte order decides where the halves of a cookie are */
	if (host_le != session->header.needs_swap)
		return UNWIND_COOKIE_LAYOUT_MERGED_LE;
	return UNWIND_COOKIE_LAYOUT_MERGED_BE;
}

static void deferred__set_info(struct deferred_callchain *dc, u64 cookie,
			       enum deferred_sample_status status)
{
	struct deferred_sample_info *info = &dc->info;
	struct unwind_cookie_fields fields;

	memset(info, 0, sizeof(*info));
	info->cookie = cookie;
	info->status = status;
	if (!unwind_cookie__decode(dc->layout, cookie, &fields)) {
		info->cookie_valid = true;
		info->cookie_cpu = fields.cpu;
		info->cookie_counter = fields.counter;
	}
}

/* dc->chain, for a callchain of @need entries */
static int deferred__chain_reserve(struct deferred_callchain *dc, size_t need)
{
	struct ip_callchain *bigger;

	if (need <= dc->chain_cap)
		return 0;
	bigger = realloc(dc->chain, sizeof(*bigger) + need * sizeof(u64));
	if (!bigger)
		return -ENOMEM;
	dc->chain = bigger;
	dc->chain_cap = need;
	return 0;
}

/* Rebuilds @sample's callchain with the record's user part. */
static int deferred__stitch(struct deferred_callchain *dc, struct perf_sample *sample,
			    const struct unwind_stitched_sample *s)
{
	const struct ip_callchain *chain = sample->callchain;
	struct unwind_callchain_split split;
	long len;
	int err;

	/* fed only after a successful split */
	if (!chain || unwind_callchain__split(chain->ips, chain->nr, &split) || !split.deferred)
		return -EINVAL;

	err = deferred__chain_reserve(dc, unwind_callchain__stitched_len(split.nr_kernel,
									  s->nr_user));
	if (err)
		return err;
	len = unwind_callchain__stitch(split.kernel, split.nr_kernel, s->user, s->nr_user,
				       dc->chain->ips, dc->chain_cap);
	if (len < 0)
		return (int)len;
	dc->chain->nr = len;
	sample->callchain = dc->chain;
	return 0;
}

/* A marker before the user part that no record can be joined by */
static bool callchain__deferred_malformed(const struct ip_callchain *chain)
{
	struct unwind_callchain_split split;

	return callchain__deferred_marker(chain) >= 0 &&
	       (unwind_callchain__split(chain->ips, chain->nr, &split) || !split.deferred);
}

/*
 * A sample whose deferred callchain is malformed (cookie 0, the marker not
 * second to last) joins no record, but keeps its weight and its kernel
 * part, the entries before the marker, as an orphan: its chain ends in
 * PERF_CONTEXT_USER_DEFERRED, 0, shown "[user stack lost: malformed]".
 */
static int deferred__keep_malformed(struct deferred_callchain *dc, struct perf_sample *sample)
{
	const struct ip_callchain *chain = sample->callchain;
	u64 nr_kernel = callchain__deferred_marker(chain);
	int err = deferred__chain_reserve(dc, nr_kernel + 2);

	if (err)
		return err;
	memcpy(dc->chain->ips, chain->ips, nr_kernel * sizeof(u64));
	dc->chain->ips[nr_kernel] = PERF_CONTEXT_USER_DEFERRED;
	dc->chain->ips[nr_kernel + 1] = 0;
	dc->chain->nr = nr_kernel + 2;
	sample->callchain = dc->chain;
	deferred__set_info(dc, 0, DEFERRED_SAMPLE__ORPHAN);
	dc->info.reason = DEFERRED_ORPHAN_MALFORMED;
	sample->deferred = &dc->info;
	return 0;
}

/* An event leaves: to the tool, or to perf top */
static int deferred__pass(struct deferred_callchain *dc, union perf_event *event,
			  struct perf_sample *sample, u64 file_offset, const char *file_path)
{
	if (dc->deliver)
		return dc->deliver(dc->deliver_ctx, event, sample);
	return perf_session__deliver_parsed_event(dc->session, event, sample, file_offset,
						  file_path);
}

/*
 * perf top resolves a sample's frames against the thread's maps when the
 * sample leaves, seconds after it was taken: if the thread exec'd since,
 * they are the new program's, and the user part of the old one cannot be
 * resolved.  Said as the exec orphan it is, not shown with wrong symbols.
 * (Reading a file, events leave in their order: the maps are those of the
 * sample's time.)
 */
static bool deferred__exec_since(struct deferred_callchain *dc, const struct perf_sample *sample)
{
	struct thread *thread;
	struct comm *comm;
	bool exec = false;

	if (!dc->deliver)
		return false;
	thread = machine__find_thread(&dc->session->machines.host, sample->pid, sample->tid);
	if (!thread)
		return false;
	comm = thread__exec_comm(thread);
	if (comm && comm->exec && comm->start > sample->time)
		exec = true;
	thread__put(thread);
	return exec;
}

/* The engine hands an item back: deliver it as if it had not been held. */
static void deferred__deliver_held(void *ctx, const struct unwind_stitched_sample *s)
{
	struct deferred_callchain *dc = ctx;
	struct deferred_item *item = s->payload;
	struct perf_sample sample;
	int err;

	dc->outstanding--;
	dc->held_bytes -= sizeof(*item) + item->event->header.size;
	deferred_maps__release(&dc->maps, item->event);
	if (dc->err)
		goto out;

	perf_sample__init(&sample, /*all=*/false);
	err = perf_session__parse_sample(dc->session, item->event, &sample, item->file_offset);
	if (err)
		goto out_err;

	switch (s->status) {
	case UNWIND_STITCH_STITCHED:
		if (deferred__exec_since(dc, &sample)) {
			deferred__set_info(dc, s->cookie, DEFERRED_SAMPLE__ORPHAN);
			dc->info.reason = UNWIND_ORPHAN_EXEC;
			sample.deferred = &dc->info;
			dc->nr_orphans++;
			break;
		}
		err = deferred__stitch(dc, &sample, s);
		if (err)
			goto out_err;
		deferred__set_info(dc, s->cookie, DEFERRED_SAMPLE__STITCHED);
		dc->info.record_cpu = s->record_cpu;
		dc->info.record_cpu_known = s->record_cpu != UNWIND_STITCHER_CPU_UNKNOWN;
		dc->info.record_time = s->record_time;
		dc->info.late = s->late;
		/* perf top resolves when the sample leaves, after its record */
		if (!dc->deliver && s->record_time > sample.time)
			dc->info.user_thread = deferred_maps__thread_at(&dc->maps,
									&dc->session->machines.host,
									&sample, s->record_time);
		sample.deferred = &dc->info;
		dc->nr_stitched++;
		break;
	case UNWIND_STITCH_ORPHAN:
		if (s->reason == UNWIND_ORPHAN_MEMORY_CAP)
			deferred__warn_cap(dc);
		dc->nr_orphans++;
		deferred__set_info(dc, s->cookie, DEFERRED_SAMPLE__ORPHAN);
		dc->info.reason = s->reason;
		sample.deferred = &dc->info;
		break;
	case UNWIND_STITCH_PASSTHROUGH:
		/* held behind another sample: kept as when it came */
		if (item->event->header.type == PERF_RECORD_SAMPLE &&
		    callchain__deferred_malformed(sample.callchain)) {
			err = deferred__keep_malformed(dc, &sample);
			if (err)
				goto out_err;
		}
		break;
	case UNWIND_STITCH_NOT_DEFERRED:
	default:
		break;
	}

	err = deferred__pass(dc, item->event, &sample, item->file_offset, item->file_path);
	thread__zput(dc->info.user_thread);
out_err:
	perf_sample__exit(&sample);
	if (err)
		dc->err = err;
out:
	free(item);
}

static bool deferred__in_mapping(const struct perf_session *session,
				  const union perf_event *event)
{
	const char *start = session->one_mmap_addr, *p = (const char *)event;

	return session->one_mmap && start && p >= start &&
	       (u64)(p - start) <= session->one_mmap_size &&
	       session->one_mmap_size - (u64)(p - start) >= event->header.size;
}

/*
 * @bytes: what holding it counts against the engine's memory cap: the event
 * whether copied or mapped, so that the cap, and the counters perf stitch
 * --stats shows, are the same however the file is read (a pipe, -z).
 */
static struct deferred_item *deferred__hold(struct deferred_callchain *dc,
					    union perf_event *event, u64 file_offset,
					    const char *file_path, size_t *bytes)
{
	bool mapped = deferred__in_mapping(dc->session, event);
	struct deferred_item *item;

	*bytes = sizeof(*item) + event->header.size;
	item = malloc(mapped ? sizeof(*item) : *bytes);
	if (!item)
		return NULL;
	item->file_offset = file_offset;
	item->file_path = file_path;
	item->event = event;
	if (!mapped) {
		memcpy(item->copy, event, event->header.size);
		item->event = (union perf_event *)item->copy;
	}
	return item;
}

/*
 * An event whose deferred samples or PERF_RECORD_CALLCHAIN_DEFERRED records
 * have no time, if any.  The engine places every sample and record in time:
 * when a record may still come, which incarnation of a tid it belongs to,
 * whether an exec or exit came between.  An untimed one cannot be placed:
 * the session delivers events without a time at once, ahead of the timed
 * ones ordered_events still holds, so neither the time of the events
 * delivered before it nor its place in the file says when it was written,
 * and a guess seconds off would join it to nothing, or as a late record.
 *
 * Records come from the events with defer_output; a file that marks none
 * may have them from any event.
 */
static struct evsel *deferred__untimed_source(struct evlist *evlist)
{
	struct evsel *evsel;
	bool marked_output = false;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel->core.attr.defer_output)
			marked_output = true;
	}
	evlist__for_each_entry(evlist, evsel) {
		const struct perf_event_attr *attr = &evsel->core.attr;
		bool source = (attr->sample_type & PERF_SAMPLE_CALLCHAIN) ||
			      attr->defer_output || !marked_output;

		if (source && !(attr->sample_type & PERF_SAMPLE_TIME))
			return evsel;
	}
	return NULL;
}

static bool deferred__start(struct deferred_callchain *dc)
{
	struct perf_session *session = dc->session;
	struct unwind_stitcher_opts opts = {
		.sz			= sizeof(opts),
		.deliver		= deferred__deliver_held,
		.ctx			= dc,
		.order			= dc->deliver ? UNWIND_STITCHER_ORDER_RESOLVED :
						    UNWIND_STITCHER_ORDER_INPUT,
		.window			= dc->window,
		.max_pending_bytes	= dc->max_bytes,
		.layout			= dc->layout,
		.sorted			= dc->sorted,
	};
	struct evsel *untimed;

	if (dc->st)
		return true;
	if (dc->st_failed)
		return false;

	/* the engine works on sample times: records and samples need them */
	if (!(evlist__combined_sample_type(session->evlist) & PERF_SAMPLE_TIME) ||
	    !evlist__sample_id_all(session->evlist)) {
		pr_warning("No sample times: deferred user callchains are not stitched.\n");
		goto fail;
	}
	untimed = deferred__untimed_source(session->evlist);
	if (untimed) {
		pr_warning("Event '%s' has no sample times (PERF_SAMPLE_TIME): deferred user callchains are not stitched.\n",
			   evsel__name(untimed));
		goto fail;
	}
	/* only printing by default; perf's own output routes it */
	libunwind_cookie_set_print(deferred__print);
	dc->st = unwind_stitcher__new(&opts);
	/* in file order, nothing is older than the rounds seen so far allow */
	if (dc->st && !dc->sorted && !dc->deliver)
		unwind_stitcher__horizon(dc->st, dc->horizon);
	if (dc->st)
		return true;
	pr_err("Cannot set up the deferred callchain stitcher: %s, showing them unstitched.\n",
	       strerror(errno));
fail:
	dc->st_failed = true;
	dc->stitch = false;
	return false;
}

/* The result of a call that may have delivered held items. */
static int deferred__result(struct deferred_callchain *dc, int err)
{
	if (dc->err)
		return dc->err;
	return err;
}

/*
 * The time to give the engine for an item: its own, or, for an event
 * without PERF_SAMPLE_TIME (or without sample_id), the newest time fed so
 * far.  Never (u64)-1, which would move the engine's clock to the end of
 * time: nothing after it could be released before the end of the input.
 * Only events that are neither samples with a deferred callchain nor
 * records get here without a time (deferred__untimed_source()).
 */
static u64 deferred__time(struct deferred_callchain *dc, const struct perf_sample *sample)
{
	if (sample->time == (u64)-1)
		return dc->clock;
	if (sample->time > dc->clock)
		dc->clock = sample->time;
	return sample->time;
}

/* A record read from the index, as the engine takes it */
static void deferred__record_ahead(const struct deferred_index_record *rec,
				   struct unwind_stitcher_record *ahead)
{
	*ahead = (struct unwind_stitcher_record){
		.sz	= sizeof(*ahead),
		.pid	= rec->pid,
		.tid	= rec->tid,
		.cpu	= rec->cpu,
		.time	= rec->time,
		.cookie	= rec->cookie,
		.ips	= (const uint64_t *)rec->ips,
		.nr	= rec->nr,
	};
}

/* unwind_stitcher__read_ahead()'s question: the record of a waiting kernel entry */
static int deferred__find_ahead(void *ctx, const struct unwind_stitcher_sample *first,
				struct unwind_stitcher_record *ahead)
{
	struct deferred_callchain *dc = ctx;
	struct deferred_index_record rec;
	struct perf_sample sample;
	int err;

	perf_sample__init(&sample, /*all=*/false);
	sample.pid = first->pid;
	sample.tid = first->tid;
	sample.time = first->time;
	err = deferred_index__find(dc->index, &sample, first->cookie, &rec);
	perf_sample__exit(&sample);
	if (err == -ENODATA)
		dc->nr_no_record++;
	if (err)
		return err;
	deferred__record_ahead(&rec, ahead);
	dc->nr_ahead++;
	return 0;
}

/*
 * The index is made once samples hold this much behind them: where few
 * wait (a task not blocked gets its record microseconds after its
 * sample), a pass over the whole file costs more than holding them (perf
 * script of a 3 s generated file: 10% more cpu); past it, a task blocked
 * for long would hold everything after its sample.  A sixteenth of
 * --stitch-max-mem if less, so that a file never reaches the cap (the
 * engine's own bytes for a waiting sample come on top of the event's).
 */
#define DEFERRED_INDEX_AFTER_BYTES	(1ULL << 20)

/* The file indexed once samples hold enough behind them: 0 or -errno */
static int deferred__index(struct deferred_callchain *dc)
{
	u64 cap = dc->max_bytes ?: UNWIND_STITCHER_DEFAULT_MAX_BYTES;
	u64 records;

	if (dc->index_tried || !dc->sorted || dc->deliver ||
	    dc->held_bytes < min_t(u64, DEFERRED_INDEX_AFTER_BYTES, cap / 16))
		return 0;
	dc->index_tried = true;
	dc->index = deferred_index__new(dc->session, &records);
	if (!dc->index)
		return 0;
	deferred_maps__set_index(&dc->maps, dc->index);
	pr_debug("deferred callchains: %" PRIu64 " records indexed, %" PRIu64
		 " bytes held behind waiting samples\n", records, dc->held_bytes);
	/* the samples already waiting take theirs too */
	return unwind_stitcher__read_ahead(dc->st, deferred__find_ahead, dc);
}

static int deferred__forward(struct deferred_callchain *dc, union perf_event *event,
			     struct perf_sample *sample, u64 file_offset, const char *file_path)
{
	struct deferred_item *item;
	size_t bytes;
	u64 time;
	int err;

	/* perf top: only deferred samples wait, see deferred_callchain__live_init() */
	if (!dc->outstanding || dc->deliver)
		return deferred__pass(dc, event, sample, file_offset, file_path);

	item = deferred__hold(dc, event, file_offset, file_path, &bytes);
	if (!item)
		return -ENOMEM;
	time = deferred__time(dc, sample);
	err = deferred_maps__hold(&dc->maps, item->event, time);
	if (err) {
		free(item);
		return deferred__result(dc, err);
	}
	dc->outstanding++;
	dc->held_bytes += bytes;
	err = deferred__index(dc);
	if (!err)
		err = unwind_stitcher__add_passthrough(dc->st, time, item, bytes);
	if (err) {
		dc->outstanding--;
		dc->held_bytes -= bytes;
		deferred_maps__release(&dc->maps, item->event);
		free(item);
	}
	return deferred__result(dc, err);
}

static int deferred__invalid_sample(struct perf_session *session, union perf_event *event,
				    const struct ip_callchain *chain, u64 file_offset)
{
	struct events_stats *stats = evlist__stats(session->evlist);
	char what[96] = "cookie 0";
	u64 i;

	if (stats->nr_invalid_deferred_samples++ >= DEFERRED_SAMPLE_REPORT_MAX)
		return 0;

	for (i = 0; i < chain->nr; i++) {
		if (chain->ips[i] == PERF_CONTEXT_USER_DEFERRED)
			break;
	}
	if (i + 2 != chain->nr) {
		scnprintf(what, sizeof(what),
			  "PERF_CONTEXT_USER_DEFERRED at entry %" PRIu64 " of %" PRIu64
			  ", not second to last", i, (u64)chain->nr);
	}
	pr_err("%#" PRIx64 " [%#x]: malformed deferred callchain in a sample: %s, its user part lost\n",
	       file_offset, event->header.size, what);
	if (stats->nr_invalid_deferred_samples == DEFERRED_SAMPLE_REPORT_MAX)
		pr_err("further samples with a malformed deferred callchain are only counted\n");
	return 0;
}

/*
 * Reading a seekable file in time order, the sample's record read ahead
 * from the file's index instead of waiting for it, and everything after
 * the sample with it (deferred-index.c): 1 when the engine took the
 * sample so, 0 to feed it as usual, or -errno.
 */
static int deferred__sample_ahead(struct deferred_callchain *dc, const struct perf_sample *sample,
				  const struct unwind_stitcher_sample *in)
{
	struct deferred_index_record rec;
	struct unwind_stitcher_record ahead;
	int err;

	err = deferred__index(dc);
	if (err || !dc->index)
		return err;
	err = deferred_index__find(dc->index, sample, in->cookie, &rec);
	if (err == -ENODATA) {
		err = unwind_stitcher__add_sample_ahead(dc->st, in, NULL);
		if (!err)
			dc->nr_no_record++;
		return err ?: 1;
	}
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	deferred__record_ahead(&rec, &ahead);
	err = unwind_stitcher__add_sample_ahead(dc->st, in, &ahead);
	if (err)
		return err;
	dc->nr_ahead++;
	return 1;
}

static int deferred__sample(struct deferred_callchain *dc, union perf_event *event,
			    struct perf_sample *sample, u64 file_offset, const char *file_path)
{
	const struct ip_callchain *chain = sample->callchain;
	struct unwind_callchain_split split;
	struct unwind_stitcher_sample in;
	struct deferred_item *item;
	size_t bytes;
	int err;

	/* a marker anywhere before the user part: stitched or reported */
	if (callchain__deferred_marker(chain) < 0)
		return deferred__forward(dc, event, sample, file_offset, file_path);

	if (unwind_callchain__split(chain->ips, chain->nr, &split) || !split.deferred) {
		deferred__invalid_sample(dc->session, event, chain, file_offset);
		/* -D shows every event as it is in the file */
		if (dump_trace)
			return deferred__pass(dc, event, sample, file_offset, file_path);
		dc->nr_malformed++;
		/* when held, kept again as it leaves (deferred__deliver_held()) */
		err = deferred__keep_malformed(dc, sample);
		return err ?: deferred__forward(dc, event, sample, file_offset, file_path);
	}

	dc->nr_samples++;
	if (!dc->stitch || !deferred__start(dc)) {
		/* shown raw: machine.c adds the [user stack deferred] frame */
		deferred__set_info(dc, split.cookie, DEFERRED_SAMPLE__UNSTITCHED);
		sample->deferred = &dc->info;
		return deferred__forward(dc, event, sample, file_offset, file_path);
	}

	item = deferred__hold(dc, event, file_offset, file_path, &bytes);
	if (!item)
		return -ENOMEM;
	/* the kernel part is taken from the event again when it comes back */
	in = (struct unwind_stitcher_sample){
		.sz		= sizeof(in),
		.pid		= sample->pid,
		.tid		= sample->tid,
		.cpu		= sample->cpu,
		.time		= deferred__time(dc, sample),
		.cookie		= split.cookie,
		.payload	= item,
		.payload_bytes	= bytes,
	};
	dc->outstanding++;
	dc->held_bytes += bytes;
	dc->nr_engine_samples++;
	err = deferred__sample_ahead(dc, sample, &in);
	if (!err)
		err = unwind_stitcher__add_sample(dc->st, &in);
	else if (err > 0)
		err = 0;
	if (err) {
		/* not taken: never handed back */
		dc->outstanding--;
		dc->held_bytes -= bytes;
		dc->nr_engine_samples--;
		free(item);
	}
	return deferred__result(dc, err);
}

static int deferred__record(struct deferred_callchain *dc, union perf_event *event,
			    struct perf_sample *sample, u64 file_offset, const char *file_path)
{
	const struct perf_record_callchain_deferred *cd = &event->callchain_deferred;
	struct unwind_stitcher_record in;
	int err;

	/* nr was checked against the record's size before it was queued */
	if (!cd->cookie) {
		struct events_stats *stats = evlist__stats(dc->session->evlist);

		if (stats->nr_invalid_callchain_deferred++ < CALLCHAIN_DEFERRED_REPORT_MAX) {
			pr_err("%#" PRIx64 " [%#x]: malformed PERF_RECORD_CALLCHAIN_DEFERRED: cookie 0, skipping it\n",
			       file_offset, event->header.size);
			if (stats->nr_invalid_callchain_deferred == CALLCHAIN_DEFERRED_REPORT_MAX)
				pr_err("further malformed PERF_RECORD_CALLCHAIN_DEFERRED records are only counted\n");
		}
		/* -D shows every event as it is in the file */
		if (dump_trace)
			return deferred__pass(dc, event, sample, file_offset, file_path);
		return 0;
	}

	dc->nr_records++;
	if (!dc->stitch || !deferred__start(dc))
		return deferred__forward(dc, event, sample, file_offset, file_path);

	/* (u32)-1 without PERF_SAMPLE_CPU: not counted as cross-CPU */
	if (sample->cpu == (u32)-1)
		dc->nr_records_no_cpu++;
	in = (struct unwind_stitcher_record){
		.sz	= sizeof(in),
		.pid	= sample->pid,
		.tid	= sample->tid,
		.cpu	= sample->cpu,
		.time	= deferred__time(dc, sample),
		.cookie	= cd->cookie,
		.ips	= (const uint64_t *)cd->ips,
		.nr	= cd->nr,
	};
	err = unwind_stitcher__add_record(dc->st, &in);
	if (err == -EINVAL) {
		/* deeper than any kernel writes: counted by the engine */
		pr_debug("%#" PRIx64 " [%#x]: PERF_RECORD_CALLCHAIN_DEFERRED not used\n",
			 file_offset, event->header.size);
		err = 0;
	}
	if (err || !dc->pass_records)
		return deferred__result(dc, err);
	return deferred__forward(dc, event, sample, file_offset, file_path);
}

static int deferred__feed(struct deferred_callchain *dc, union perf_event *event,
			  struct perf_sample *sample, u64 file_offset, const char *file_path)
{
	u64 time = deferred__time(dc, sample);
	int err = 0;

	switch (event->header.type) {
	case PERF_RECORD_SAMPLE:
		return deferred__sample(dc, event, sample, file_offset, file_path);
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		return deferred__record(dc, event, sample, file_offset, file_path);
	case PERF_RECORD_EXIT:
		if (dc->st)
			err = unwind_stitcher__task_exit(dc->st, event->fork.pid, event->fork.tid,
							 time);
		break;
	case PERF_RECORD_COMM:
		if (dc->st && (event->header.misc & PERF_RECORD_MISC_COMM_EXEC))
			err = unwind_stitcher__task_exec(dc->st, event->comm.pid, event->comm.tid,
							 time);
		break;
	case PERF_RECORD_LOST:
		/*
		 * Not PERF_RECORD_LOST_SAMPLES: that counts samples the
		 * kernel dropped, records are only lost with the buffer.
		 */
		if (dc->st)
			err = unwind_stitcher__lost(dc->st, sample->cpu, time);
		break;
	default:
		break;
	}
	err = deferred__result(dc, err);
	if (err)
		return err;
	return deferred__forward(dc, event, sample, file_offset, file_path);
}

int deferred_callchain__deliver(struct perf_session *session, union perf_event *event,
				struct perf_sample *sample, u64 file_offset,
				const char *file_path)
{
	return deferred__feed(session->deferred, event, sample, file_offset, file_path);
}

void deferred_callchain__session_init(struct perf_session *session)
{
	struct deferred_callchain *dc;
	struct evsel *evsel;
	bool callchains = false;

	session->deferred_checked = true;
	evlist__for_each_entry(session->evlist, evsel) {
		if (evsel->core.attr.sample_type & PERF_SAMPLE_CALLCHAIN)
			callchains = true;
	}
	if (!callchains)
		return;

	dc = zalloc(sizeof(*dc));
	if (!dc) {
		pr_err("not enough memory to stitch deferred callchains\n");
		return;
	}
	dc->session = session;
	dc->layout = deferred__layout(session);
	deferred_maps__init(&dc->maps);
	/* -D shows the events as they are in the file */
	dc->stitch = session->tool->merge_deferred_callchains && !dump_trace;
	/*
	 * Behind ordered_events the input is in time order: a record settles
	 * its samples when it comes.  The window is the engine's default in
	 * every reading mode, so that all give the same answer: it bounds how
	 * long after its record a late sample joins it, and a task preempted
	 * on its way back to user space after the unwind can take more than
	 * 100ms (seen on 7.2).
	 */
	dc->sorted = session->tool->ordered_events;
	dc->window = session->tool->deferred_stitch_window;
	dc->max_bytes = session->tool->deferred_stitch_max_bytes;
	dc->pass_records = session->tool->callchain_deferred != process_event_sample_stub;
	session->deferred = dc;
}

/*
 * perf top reads the ring buffers through two ordered_events queues taking
 * turns: each is flushed whole, sorted, but the next may hold events older
 * than the last one delivered (they waited longer in their buffer).  So the
 * engine takes its input as not sorted: the window bounds that disorder,
 * and a deferred sample leaves a window after its record came.  Only the
 * deferred samples wait (UNWIND_STITCHER_ORDER_RESOLVED): a histogram does
 * not need the order of a file, and one thread blocked in a system call
 * must not stop the screen until it wakes up.
 */
int deferred_callchain__live_init(struct perf_session *session, u64 window, u64 max_bytes,
				  deferred_callchain_deliver_fn deliver, void *ctx)
{
	struct deferred_callchain *dc = zalloc(sizeof(*dc));

	if (!dc)
		return -ENOMEM;
	dc->session = session;
	dc->layout = deferred__layout(session);
	deferred_maps__init(&dc->maps);
	dc->stitch = true;
	dc->window = window;
	dc->max_bytes = max_bytes;
	dc->deliver = deliver;
	dc->deliver_ctx = ctx;
	session->deferred = dc;
	session->deferred_checked = true;
	return 0;
}

/*
 * The session checked a record's nr against its size before queueing it
 * (perf_event__callchain_deferred_valid()); perf top reads the ring buffer
 * itself.
 */
static bool deferred__record_fits(const union perf_event *event)
{
	const struct perf_record_callchain_deferred *cd = &event->callchain_deferred;
	size_t fixed = sizeof(*cd);

	return event->header.size >= fixed &&
	       cd->nr <= (event->header.size - fixed) / sizeof(u64);
}

int deferred_callchain__feed(struct perf_session *session, union perf_event *event,
			     struct perf_sample *sample)
{
	struct deferred_callchain *dc = session->deferred;
	u64 clock = dc->clock;
	int err;

	if (event->header.type == PERF_RECORD_CALLCHAIN_DEFERRED &&
	    !deferred__record_fits(event)) {
		evlist__stats(dc->session->evlist)->nr_invalid_callchain_deferred++;
		return 0;
	}
	err = deferred__feed(dc, event, sample, 0, NULL);
	if (dc->clock != clock)
		dc->clock_read_at = rdclock();
	return err;
}

/*
 * The engine only learns of time from its input: without this a task that
 * sleeps or exited would leave its last window of samples held until it
 * runs again, or for good.  The kernel's clock went on since the newest
 * event was read, by at least the CLOCK_MONOTONIC time since then (it was
 * written before it was read); less a window, as an event may still wait
 * in a ring buffer the reader has not got to (what comes later than that
 * goes on as a late arrival would).
 */
int deferred_callchain__live_tick(struct perf_session *session)
{
	struct deferred_callchain *dc = session->deferred;
	u64 window = dc->window ?: UNWIND_STITCHER_DEFAULT_WINDOW;
	u64 quiet_for;

	if (!dc->st || !dc->clock_read_at)
		return 0;
	quiet_for = rdclock() - dc->clock_read_at;
	if (quiet_for <= window)
		return 0;
	return deferred__result(dc, unwind_stitcher__advance(dc->st,
							     dc->clock + quiet_for - window));
}

size_t deferred_callchain__snprintf_live(struct perf_session *session, char *bf, size_t size)
{
	struct deferred_callchain *dc = session->deferred;
	u64 stitched = dc->nr_stitched, orphans = dc->nr_orphans;
	u64 waiting = dc->nr_engine_samples - stitched - orphans;
	int ret;

	ret = scnprintf(bf, size, " deferred: %" PRIu64 " waiting, stitched: %" PRIu64
			"/%" PRIu64 " orphans: %" PRIu64 "/%" PRIu64,
			waiting, stitched - dc->shown_stitched, stitched,
			orphans - dc->shown_orphans, orphans);
	dc->shown_stitched = stitched;
	dc->shown_orphans = orphans;
	return ret;
}

/*
 * perf record writes a round after each pass over its ring buffers, and
 * nothing after a round is older than what came before the previous one
 * (what ordered_events flushes by); before the second round, anything may
 * come.  Read in file order, that is the bound on the disorder: a pass can
 * cover seconds (a guest's did), more than any window, and a late sample
 * or an exiting task's samples can then come a round after their record.
 * In time order the engine needs no bound.
 */
int deferred_callchain__finished_round(struct perf_session *session)
{
	struct deferred_callchain *dc = session->deferred;

	if (!dc || dc->sorted)
		return 0;
	dc->horizon = dc->round_clock;
	dc->round_clock = dc->clock;
	if (!dc->st)
		return 0;
	return deferred__result(dc, unwind_stitcher__horizon(dc->st, dc->horizon));
}

int deferred_callchain__flush(struct perf_session *session)
{
	struct deferred_callchain *dc = session->deferred;

	if (!dc || !dc->st)
		return 0;
	unwind_stitcher__finish(dc->st);
	return deferred__result(dc, 0);
}

void deferred_callchain__delete(struct deferred_callchain *dc)
{
	if (!dc)
		return;
	if (dc->st) {
		/* hand back what an error left held, only to free it */
		if (!dc->err)
			dc->err = -ECANCELED;
		unwind_stitcher__finish(dc->st);
		unwind_stitcher__delete(dc->st);
	}
	if (dc->index) {
		struct deferred_index *idx = dc->index;

		pr_debug("deferred callchains: %" PRIu64 " records read ahead, %" PRIu64 " samples or kernel entries without a record in the rest of the file\n",
			 dc->nr_ahead, dc->nr_no_record);
		pr_debug("deferred callchains: left to wait in the stream: %" PRIu64 " another entry's record first, %" PRIu64 " an exit or exec first, %" PRIu64 " only after an exit or exec, %" PRIu64 " unreadable\n",
			 deferred_index__refused(idx, DEFERRED_INDEX__OTHER_ENTRY),
			 deferred_index__refused(idx, DEFERRED_INDEX__BOUNDS),
			 deferred_index__refused(idx, DEFERRED_INDEX__NOT_YET),
			 deferred_index__refused(idx, DEFERRED_INDEX__UNREADABLE));
	}
	deferred_maps__set_index(&dc->maps, NULL);
	deferred_index__delete(dc->index);
	deferred_maps__exit(&dc->maps);
	free(dc->chain);
	free(dc);
}

/* ---- summaries ---- */

/* True when the session saw deferred samples or records. */
static bool perf_session__has_deferred(struct perf_session *session)
{
	struct deferred_callchain *dc = session->deferred;

	return dc && (dc->nr_samples || dc->nr_records);
}

/*
 * Is the count of cross-CPU records complete?  A record's CPU is only known
 * when the event that wrote it has PERF_SAMPLE_CPU.
 */
bool perf_session__deferred_cpu_known(struct perf_session *session)
{
	struct deferred_callchain *dc = session->deferred;

	if (!session->evlist ||
	    !(evlist__combined_sample_type(session->evlist) & PERF_SAMPLE_CPU))
		return false;
	return !dc || !dc->nr_records_no_cpu;
}

const char *deferred_stitch__reason_name(int reason)
{
	if (reason == DEFERRED_ORPHAN_MALFORMED)
		return "malformed";
	return unwind_orphan_reason__name(reason);
}

const char *deferred_stitch__reason_key(int reason)
{
	if (reason == DEFERRED_ORPHAN_MALFORMED)
		return "malformed";
	return unwind_orphan_reason__key(reason);
}

size_t deferred_stitch__fprintf_orphans(FILE *fp, const u64 *by_reason, int nr)
{
	const char *sep = " (";
	size_t ret = 0;
	int r;

	for (r = 0; r < nr; r++) {
		if (!by_reason[r])
			continue;
		ret += fprintf(fp, "%s%s %" PRIu64, sep,
			       (r ? deferred_stitch__reason_name(r) : NULL) ?: "unknown",
			       by_reason[r]);
		sep = ", ";
	}
	if (ret)
		ret += fprintf(fp, ")");
	return ret;
}

size_t perf_session__fprintf_deferred_summary(struct perf_session *session, FILE *fp,
					      const char *prefix)
{
	struct deferred_callchain *dc = session->deferred;
	struct unwind_stitcher_stats stats = { .sz = sizeof(stats) };
	u64 by_reason[DEFERRED_STITCH_REASONS_MAX] = { 0 };
	size_t ret;

	if (!perf_session__has_deferred(session))
		return 0;

	if (!dc->st) {
		return fprintf(fp, "%sdeferred callchains: %" PRIu64 " deferred samples, %" PRIu64
			       " records, not stitched\n", prefix, dc->nr_samples, dc->nr_records);
	}

	perf_session__deferred_stats(session, &stats);
	memcpy(by_reason, stats.orphans, sizeof(stats.orphans));
	by_reason[DEFERRED_ORPHAN_MALFORMED] = dc->nr_malformed;
	ret = fprintf(fp, "%sdeferred callchains: %" PRIu64 " deferred samples, %" PRIu64
		      " stitched (%.1f%%), %" PRIu64 " orphans", prefix, stats.deferred_samples,
		      stats.stitched, stats.deferred_samples ?
		      100.0 * stats.stitched / stats.deferred_samples : 0.0, stats.orphans_total);
	ret += deferred_stitch__fprintf_orphans(fp, by_reason, DEFERRED_ORPHAN__MAX);
	ret += fprintf(fp, ", %" PRIu64 " records, %" PRIu64 " duplicate records",
		       stats.records, stats.duplicates + stats.duplicates_conflicting);
	if (stats.duplicates_conflicting)
		ret += fprintf(fp, " (%" PRIu64 " conflicting)", stats.duplicates_conflicting);
	if (perf_session__deferred_cpu_known(session))
		ret += fprintf(fp, ", %" PRIu64 " cross-CPU records", stats.cross_cpu_records);
	else
		ret += fprintf(fp, ", cross-CPU records unknown");
	ret += fprintf(fp, ", %" PRIu64 " late samples\n", stats.late_samples);
	if (verbose > 0) {
		ret += fprintf(fp, "%sdeferred callchains: peak %" PRIu64 " samples, %" PRIu64
			       " KiB held; %" PRIu64 " truncated, %" PRIu64 " empty, %" PRIu64
			       " unclaimed records; record - sample time (ns): min %" PRId64
			       ", median %" PRId64 ", p99 %" PRId64 ", max %" PRId64 "\n", prefix,
			       stats.peak_pending_samples, stats.peak_pending_bytes / 1024,
			       stats.truncated_records, stats.empty_records,
			       stats.unclaimed_records,
			       stats.latency.min, stats.latency.median, stats.latency.p99,
			       stats.latency.max);
	}
	return ret;
}

int perf_event__callchain_deferred_check(union perf_event *event, struct evlist *evlist,
					 size_t *need, u64 *room)
{
	const struct perf_record_callchain_deferred *cd = &event->callchain_deferred;
	size_t size = event->header.size;
	size_t id_hdr_size = 0;

	/* the trailer of the event with defer_output: not the first's sample_type */
	if (evlist__sample_id_all(evlist)) {
		struct evsel *evsel = evlist__event2evsel(evlist, event);

		if (!evsel)
			return -ENOENT;
		id_hdr_size = evsel__id_hdr_size(evsel);
	}
	*need = sizeof(*cd) + id_hdr_size;
	if (size < *need)
		return -EMSGSIZE;
	*room = (size - *need) / sizeof(u64);
	return cd->nr <= *room ? 0 : -E2BIG;
}

int perf_session__deferred_stats(struct perf_session *session,
				 struct unwind_stitcher_stats *stats)
{
	struct deferred_callchain *dc = session->deferred;
	size_t sz = stats->sz;

	BUILD_BUG_ON(DEFERRED_ORPHAN__MAX > DEFERRED_STITCH_REASONS_MAX);
	BUILD_BUG_ON(DEFERRED_ORPHAN_MALFORMED != UNWIND_ORPHAN__MAX);
	if (sz < offsetof(struct unwind_stitcher_stats, records) + sizeof(stats->records))
		return -EINVAL;
	if (dc && dc->st) {
		int err = unwind_stitcher__stats(dc->st, stats);

		if (err)
			return err;
		/* the malformed samples: orphans the engine never saw */
		stats->deferred_samples += dc->nr_malformed;
		if (sz >= offsetof(struct unwind_stitcher_stats, orphans_total) +
			  sizeof(stats->orphans_total))
			stats->orphans_total += dc->nr_malformed;
		return 1;
	}

	memset(stats, 0, sz);
	stats->sz = sz;
	if (dc) {
		stats->deferred_samples = dc->nr_samples;
		stats->records = dc->nr_records;
	}
	return 0;
}
