// SPDX-License-Identifier: GPL-2.0
/*
 * perf stitch (convert mode): deferred user callchains made standard.
 *
 * The input is read through a session like perf script reads it: in time
 * order (ordered_events), every sample going through the deferred callchain
 * stitcher (util/deferred-callchain.c), which hands each sample whose user
 * part was deferred back stitched or as an orphan, the events after it
 * held back behind it.  So the tool sees the whole input in time order and
 * writes each event as it comes:
 *
 *  - a stitched sample: the raw event with its callchain replaced by the
 *    stitched one (kernel..., PERF_CONTEXT_USER, user...), every other byte
 *    as it was, header.size fixed;
 *  - an orphan: the same length, its last two entries (the deferred marker
 *    and the cookie) become PERF_CONTEXT_USER and the address of its reason
 *    in a map named "[user stack lost: <reason>]".  That map is a
 *    PERF_RECORD_MMAP2 written for the sample's process just before its
 *    first orphan of that reason (again after an exec, a new process with
 *    that pid, or the end of the process), at the sample's time.  Its
 *    addresses lie above any user address space (47-bit, LA57 and arm64
 *    52-bit ones), so the map never covers a real one.  perf before 6.19
 *    shows the frame as "[unknown] ([user stack lost: <reason>])"; a
 *    chain ending in PERF_CONTEXT_USER_DEFERRED, which it would throw
 *    away as invalid, is never written;
 *  - PERF_RECORD_CALLCHAIN_DEFERRED records: left out (the stitcher took
 *    them);
 *  - the input's PERF_RECORD_FINISHED_ROUND markers: left out; the output
 *    gets its own, one per CONVERT_ROUND_BYTES written.  Everything is
 *    written in time order, so a reader flushing at a round never meets an
 *    event older than what it flushed, and holds at most about two rounds;
 *  - everything else: as it was.
 *
 * The attrs lose defer_callchain and defer_output (file header, pipe
 * HEADER_ATTR events, HEADER_EVENT_DESC); a file's are written at the
 * smallest size that holds their fields (perf before 5.13 refuses one
 * larger than its own), a pipe's at most at this perf's.  A file's header
 * features are copied from the input (HEADER_EVENT_DESC patched);
 * HEADER_COMPRESSED goes, the data being written uncompressed.
 *
 * The input is a file, a directory (perf record --threads: read as one
 * file, the output a file without HEADER_DIR_FORMAT) or a pipe; the
 * output a file or a pipe (-o -, or a FIFO):
 *
 *  - file to pipe: the pipe header, then what perf record writes to a pipe
 *    before the data, taken from the input's header: a HEADER_ATTR per
 *    event, a HEADER_FEATURE per feature section pipe readers take (as
 *    perf_event__synthesize_features() sends them; not the features of
 *    the host converting), the tracing data and the build ids;
 *  - pipe to file: the attrs the HEADER_ATTR records made, the features
 *    and the tracing data as the pipe had them go into the header, written
 *    at the end; the data starts after the attrs seen before the first
 *    event, and an attr coming later is refused;
 *  - pipe to pipe: the header records are written as they come.
 *
 * The header is deferred-convert-header.c's business, the writing of
 * events and rounds deferred-convert-write.c's; this file reads the
 * session and decides what to write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <perf/event.h>
#include <internal/lib.h>
#include <unwind-cookie/stitcher.h>

#include "data.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "intlist.h"
#include "sample.h"
#include "session.h"
#include "synthetic-events.h"
#include "tool.h"
#include "util.h"
#include "deferred-callchain.h"
#include "deferred-convert.h"
#include "deferred-convert-internal.h"
#include "deferred-stitch.h"
#include "stitch-output.h"

/*
 * The "[user stack lost: <reason>]" maps: one page per reason from
 * CONVERT_LOST_BASE, the frame at the start of its page.
 */
#define CONVERT_LOST_BASE	0x7ffe000000000000ULL
#define CONVERT_LOST_STRIDE	0x10000ULL
#define CONVERT_LOST_LEN	0x1000ULL

/* A sample, and with --count=off-cpu where its period went */
static int cvt__write_sample(struct cvt *cvt, const union perf_event *event,
			     struct perf_sample *sample)
{
	u64 pos;
	int err = cvt__write_event(cvt, event, sample->time, &pos);

	if (err || !cvt->opts->off_cpu)
		return err;
	err = cvt__offcpu_sample(cvt, sample, pos);
	return err ? cvt__fail(cvt, err) : 0;
}

/* ---- the lost-stack maps ---- */

static u64 cvt__lost_addr(int reason)
{
	return CONVERT_LOST_BASE + CONVERT_LOST_STRIDE * reason;
}

/* A new program, a new process with that pid, or its end: maps go. */
static void cvt__forget_maps(struct cvt *cvt, u32 pid)
{
	struct int_node *node = intlist__find(cvt->lost_maps, pid);

	if (node)
		node->priv = NULL;
}

static int cvt__write_lost_map(struct cvt *cvt, struct evsel *evsel,
			       const struct perf_sample *sample, int reason)
{
	struct perf_record_mmap2 *mm = &cvt->ev->mmap2;
	struct int_node *node = intlist__findnew(cvt->lost_maps, sample->pid);
	unsigned long have;
	size_t len;

	if (!node)
		return -ENOMEM;
	have = (unsigned long)node->priv;
	if (have & (1UL << reason))
		return 0;

	memset(mm, 0, sizeof(*mm));
	mm->header.type = PERF_RECORD_MMAP2;
	mm->header.misc = PERF_RECORD_MISC_USER;
	mm->pid = sample->pid;
	mm->tid = sample->tid;
	mm->start = cvt__lost_addr(reason);
	mm->len = CONVERT_LOST_LEN;
	mm->prot = PROT_READ | PROT_EXEC;
	mm->flags = MAP_PRIVATE;
	len = scnprintf(mm->filename, sizeof(mm->filename), "[user stack lost: %s]",
			deferred_stitch__reason_name(reason)) + 1;
	len = PERF_ALIGN(len, sizeof(u64));
	mm->header.size = sizeof(*mm) - sizeof(mm->filename) + len;
	/* the sample_id of the orphan itself: its pid, tid, time, cpu, id */
	mm->header.size += perf_event__synthesize_id_sample((void *)mm + mm->header.size,
							    evsel->core.attr.sample_type,
							    sample);
	node->priv = (void *)(have | (1UL << reason));
	cvt->stats->lost_maps++;
	return cvt__write(cvt, cvt->ev, sample->time);
}

/* ---- samples ---- */

/*
 * @event with its callchain (at @chain_off, @old_nr entries) replaced by
 * @nr entries from @ips, in cvt->ev.
 */
static int cvt__rebuild(struct cvt *cvt, const union perf_event *event, size_t chain_off,
			u64 old_nr, const u64 *ips, u64 nr)
{
	size_t tail_off = chain_off + (1 + old_nr) * sizeof(u64);
	size_t tail_len = event->header.size - tail_off;
	size_t size = tail_off - old_nr * sizeof(u64) + nr * sizeof(u64) + tail_len;
	char *p = (char *)cvt->ev;

	if (size > CONVERT_MAX_EVENT)
		return -E2BIG;
	memcpy(p, event, chain_off);
	memcpy(p + chain_off, &nr, sizeof(nr));
	memcpy(p + chain_off + sizeof(nr), ips, nr * sizeof(u64));
	memcpy(p + chain_off + (1 + nr) * sizeof(u64), (const char *)event + tail_off, tail_len);
	cvt->ev->header.size = size;
	return 0;
}

/*
 * How many entries of @sample's stitched callchain fit in a record, @event
 * having @old_nr: all of them, or fewer, the outermost user frames cut
 * (the kernel part and PERF_CONTEXT_USER always fit: @event had them and
 * two more entries).  A cut is counted and said once.
 */
static u64 cvt__fit_chain(struct cvt *cvt, const union perf_event *event, u64 old_nr,
			  const struct perf_sample *sample)
{
	size_t rest = event->header.size - old_nr * sizeof(u64);
	u64 nr = sample->callchain->nr;
	u64 room = (CONVERT_MAX_EVENT - rest) / sizeof(u64);

	if (nr <= room)
		return nr;
	if (!cvt->stats->cut_samples++)
		pr_warning("%s: the stitched sample at %" PRIu64 " (tid %u) has %" PRIu64
			   " callchain entries, more than a record holds: its %" PRIu64
			   " outermost user frames are left out (counted in the summary)\n",
			   cvt->opts->input, sample->time, sample->tid, nr, nr - room);
	cvt->stats->cut_frames += nr - room;
	return room;
}

static int cvt__sample(const struct perf_tool *tool, union perf_event *event,
		       struct perf_sample *sample, struct machine *machine __maybe_unused)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);
	const struct deferred_sample_info *info = sample->deferred;
	struct deferred_convert_stats *st = cvt->stats;
	struct evsel *evsel = sample->evsel;
	struct perf_sample orig;
	struct ip_callchain *chain;
	size_t chain_off;
	u64 nr;
	int err;

	st->samples++;
	if (!info)
		return cvt__write_sample(cvt, event, sample);

	if (info->status == DEFERRED_SAMPLE__UNSTITCHED) {
		pr_err("a deferred user callchain could not be stitched (see above)\n");
		return cvt__fail(cvt, -EINVAL);
	}

	/* where the callchain is in the raw event: the stitched one is not */
	perf_sample__init(&orig, /*all=*/false);
	err = evsel__parse_sample(evsel, event, &orig);
	chain = orig.callchain;
	perf_sample__exit(&orig);
	if (err || !chain)
		return cvt__fail(cvt, err ?: -EINVAL);
	chain_off = (const char *)chain - (const char *)event;
	st->deferred++;

	if (info->status == DEFERRED_SAMPLE__STITCHED) {
		nr = cvt__fit_chain(cvt, event, chain->nr, sample);
		err = cvt__rebuild(cvt, event, chain_off, chain->nr, sample->callchain->ips, nr);
		if (err)
			return cvt__fail(cvt, err);
		st->stitched++;
		return cvt__write_sample(cvt, cvt->ev, sample);
	}

	/*
	 * an orphan: ..., USER_DEFERRED, cookie -> ..., USER, its reason's
	 * frame; a malformed one's chain is its kernel part, USER_DEFERRED, 0
	 * (the session cut it before its misplaced marker)
	 */
	nr = sample->callchain->nr;
	if (info->reason <= 0 || info->reason >= st->nr_reasons || nr < 2)
		return cvt__fail(cvt, -EINVAL);
	err = cvt__write_lost_map(cvt, evsel, sample, info->reason);
	if (!err)
		err = cvt__rebuild(cvt, event, chain_off, chain->nr, sample->callchain->ips, nr);
	if (err)
		return cvt__fail(cvt, err);
	chain = (struct ip_callchain *)((char *)cvt->ev + chain_off);
	chain->ips[chain->nr - 2] = PERF_CONTEXT_USER;
	chain->ips[chain->nr - 1] = cvt__lost_addr(info->reason);
	st->orphans[info->reason]++;
	st->orphans_total++;
	return cvt__write_sample(cvt, cvt->ev, sample);
}

/* ---- other events ---- */

static int cvt__event(const struct perf_tool *tool, union perf_event *event,
		      struct perf_sample *sample, struct machine *machine __maybe_unused)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);

	switch (event->header.type) {
	case PERF_RECORD_COMM:
		if (event->header.misc & PERF_RECORD_MISC_COMM_EXEC)
			cvt__forget_maps(cvt, event->comm.pid);
		break;
	case PERF_RECORD_FORK:
		if (event->fork.pid == event->fork.tid && event->fork.pid != event->fork.ppid)
			cvt__forget_maps(cvt, event->fork.pid);
		break;
	case PERF_RECORD_EXIT:
		if (event->fork.pid == event->fork.tid)
			cvt__forget_maps(cvt, event->fork.pid);
		break;
	default:
		break;
	}
	return cvt__write(cvt, event, sample->time);
}

/* PERF_RECORD_SWITCH(_CPU_WIDE): copied; with --count=off-cpu a task's return */
static int cvt__context_switch(const struct perf_tool *tool, union perf_event *event,
			       struct perf_sample *sample, struct machine *machine)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);
	int err = cvt__event(tool, event, sample, machine);

	if (err)
		return err;
	err = cvt__offcpu_switch_event(cvt, event, sample);
	return err ? cvt__fail(cvt, err) : 0;
}

static int cvt__read(const struct perf_tool *tool, union perf_event *event,
		     struct perf_sample *sample, struct machine *machine)
{
	return cvt__event(tool, event, sample, machine);
}

/* Events of the session itself (no sample): copied as they are. */
static int cvt__copy_untimed(const struct perf_tool *tool,
			     struct perf_session *session __maybe_unused,
			     union perf_event *event)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);

	return cvt__write(cvt, event, -1);
}

/*
 * Records of perf 6.17+ that hold no samples (BPF_METADATA, SCHEDSTAT_*):
 * left out, as older readers fail on them ('perf report --stats' of the
 * input counts them by name).
 */
static int cvt__leave_out(const struct perf_tool *tool __maybe_unused,
			  struct perf_session *session __maybe_unused,
			  union perf_event *event __maybe_unused)
{
	return 0;
}

static int cvt__round(const struct perf_tool *tool, union perf_event *event,
		      struct ordered_events *oe)
{
	/* the input's rounds only pace the reading; the output has its own */
	return perf_event__process_finished_round(tool, event, oe);
}

static int cvt__id_index(const struct perf_tool *tool, struct perf_session *session,
			 union perf_event *event)
{
	int err = perf_event__process_id_index(tool, session, event);

	return err ?: cvt__copy_untimed(tool, session, event);
}

/*
 * Pipe input: the attr without the defer bits, at most our size.  Not
 * smaller: perf 6.1 copies a whole struct perf_event_attr out of the
 * record (evsel__new()), the ids after a smaller attr included.
 */
static int cvt__attr(const struct perf_tool *tool, union perf_event *event,
		     struct evlist **pevlist)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);
	struct perf_record_header_attr *in = &event->attr;
	struct perf_record_header_attr *out = &cvt->ev->attr;
	size_t in_sz = in->attr.size ?: PERF_ATTR_SIZE_VER0;
	size_t out_sz = min(in_sz, sizeof(struct perf_event_attr));
	size_t ids;
	int err;

	if (in_sz < PERF_ATTR_SIZE_VER0 ||
	    event->header.size < sizeof(event->header) + in_sz) {
		pr_err("%s: malformed PERF_RECORD_HEADER_ATTR (attr size %zu, record size %u)\n",
		       cvt->opts->input, in_sz, event->header.size);
		return -EINVAL;
	}
	err = perf_event__process_attr(tool, event, pevlist);
	if (err)
		return err;
	deferred_convert__check_attr_tail(cvt, &in->attr, in_sz,
					  evsel__name(evlist__last(*pevlist)), INT_MAX);
	if (!cvt->pipe_out) {
		/* goes into the file's header: it must fit before the data */
		if (cvt->data_started &&
		    perf_session__data_offset(cvt->session->evlist) > cvt->data_offset) {
			pr_err("%s: an event attribute (PERF_RECORD_HEADER_ATTR) after the first event: cannot be written to a file, convert to a pipe (-o -)\n",
			       cvt->opts->input);
			return -EINVAL;
		}
		return 0;
	}

	ids = event->header.size - sizeof(event->header) - in_sz;
	memset(out, 0, sizeof(*out));
	out->header = event->header;
	memcpy(&out->attr, &in->attr, out_sz);
	out->attr.size = out_sz;
	deferred_convert__clear_attr(&out->attr);
	memcpy((char *)&out->attr + out_sz, (char *)&in->attr + in_sz, ids);
	out->header.size = sizeof(event->header) + out_sz + ids;
	return cvt__write(cvt, cvt->ev, -1);
}

static int cvt__event_update(const struct perf_tool *tool, union perf_event *event,
			     struct evlist **pevlist)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);
	int err = perf_event__process_event_update(tool, event, pevlist);

	return err ?: cvt__write(cvt, event, -1);
}

/*
 * A pipe's tracing data follows its record, and the reader must consume
 * it: read here as it is (its format is not this tool's business), then
 * written behind the record to a pipe or kept for the file's
 * HEADER_TRACING_DATA.  Returns the bytes consumed.
 */
static int cvt__tracing_data(const struct perf_tool *tool, struct perf_session *session,
			     union perf_event *event)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);
	u32 size = event->tracing_data.size;
	void *data;
	int err;

	if (!cvt->pipe_in) {
		/* a file keeps it in a header feature; this one came from a pipe */
		pr_err("%s: tracing data inside the data section is not supported\n",
		       cvt->opts->input);
		return -EINVAL;
	}
	if (cvt->feat_data[HEADER_TRACING_DATA]) {
		pr_err("%s: a second PERF_RECORD_HEADER_TRACING_DATA\n", cvt->opts->input);
		return -EINVAL;
	}
	data = malloc(size ?: 1);
	if (!data)
		return -ENOMEM;
	if (readn(perf_data__fd(session->data), data, size) != (ssize_t)size) {
		pr_err("%s: the tracing data (%u bytes) is cut short\n", cvt->opts->input, size);
		free(data);
		return -EINVAL;
	}
	/* kept until the end: a pipe gets it now, a file's header at the end */
	cvt->feat_data[HEADER_TRACING_DATA] = data;
	cvt->feat_size[HEADER_TRACING_DATA] = size;
	if (!cvt->pipe_out) {
		perf_header__set_feat(&session->header, HEADER_TRACING_DATA);
		return size;
	}
	err = cvt__write(cvt, event, -1);
	if (!err)
		err = stitch_buf__write(cvt->out, data, size);
	cvt->round_bytes += size;
	return err ?: (int)size;
}

/* Pipe to file: a feature the pipe sent, for the file's header. */
static int cvt__keep_feature(struct cvt *cvt, u64 feat, const void *data, size_t size)
{
	void *copy;

	/* the end-of-features mark, or a feature this perf does not know */
	if (feat == HEADER_RESERVED || feat >= HEADER_LAST_FEATURE) {
		if (size)
			cvt->stats->features_dropped++;
		return 0;
	}
	copy = memdup(data, size ?: 1);
	if (!copy)
		return -ENOMEM;
	free(cvt->feat_data[feat]);
	cvt->feat_data[feat] = copy;
	cvt->feat_size[feat] = size;
	perf_header__set_feat(&cvt->session->header, feat);
	return 0;
}

/*
 * Pipe to pipe: a feature record as perf record writes it for a reader of
 * this perf's feature list, as the file to pipe path writes them.  A
 * perf 6.1 reader fails on a feature id above its end-of-features mark
 * ("wrong feature ID") and on HEADER_RESERVED: a feature of a newer perf
 * is left out, and its end mark (the one record without data) becomes
 * ours.  HEADER_COMPRESSED goes: the data is written uncompressed.
 */
static int cvt__pipe_feature(struct cvt *cvt, union perf_event *event, size_t data_size)
{
	struct perf_record_header_feature mark = {
		.header.type	= PERF_RECORD_HEADER_FEATURE,
		.header.size	= sizeof(mark),
		.feat_id	= HEADER_LAST_FEATURE,
	};
	u64 feat = event->feat.feat_id;

	if (feat >= HEADER_LAST_FEATURE && !data_size)
		return cvt__write(cvt, (union perf_event *)&mark, -1);
	if (feat == HEADER_COMPRESSED)
		return 0;
	if (feat == HEADER_RESERVED || feat >= HEADER_LAST_FEATURE) {
		cvt->stats->features_dropped++;
		return 0;
	}
	return cvt__write(cvt, event, -1);
}

static int cvt__feature(const struct perf_tool *tool, struct perf_session *session,
			union perf_event *event)
{
	struct cvt *cvt = container_of(tool, struct cvt, tool);
	struct perf_record_header_feature *feat = &event->feat;
	size_t size, data_size;
	int err;

	err = perf_event__process_feature(tool, session, event);
	if (err)
		return err;
	if (event->header.size < sizeof(*feat)) {
		pr_err("%s: PERF_RECORD_HEADER_FEATURE of %u bytes\n", cvt->opts->input,
		       event->header.size);
		return -EINVAL;
	}
	data_size = event->header.size - sizeof(*feat);
	/* perhaps an older perf's end mark: see cvt__drop_feature_end() */
	cvt->feat_end = !data_size && feat->feat_id < HEADER_LAST_FEATURE ? feat->feat_id : 0;
	if (feat->feat_id != HEADER_EVENT_DESC) {
		if (!cvt->pipe_out)
			return cvt__keep_feature(cvt, feat->feat_id, feat->data, data_size);
		return cvt__pipe_feature(cvt, event, data_size);
	}

	memcpy(cvt->ev, event, sizeof(*feat));
	err = deferred_convert__fix_event_desc(cvt, feat->data, data_size, cvt->ev->feat.data,
					       &size);
	if (err)
		return err;
	if (!cvt->pipe_out)
		return cvt__keep_feature(cvt, HEADER_EVENT_DESC, cvt->ev->feat.data, size);
	cvt->ev->header.size = sizeof(*feat) + PERF_ALIGN(size, sizeof(u64));
	memset(cvt->ev->feat.data + size, 0, cvt->ev->header.size - sizeof(*feat) - size);
	return cvt__write(cvt, cvt->ev, -1);
}

static s64 cvt__refuse_auxtrace(const struct perf_tool *tool __maybe_unused,
				struct perf_session *session __maybe_unused,
				union perf_event *event __maybe_unused)
{
	pr_err("AUX area tracing data is not supported\n");
	return -EINVAL;
}

static int cvt__refuse_auxtrace_info(const struct perf_tool *tool, struct perf_session *session,
				     union perf_event *event)
{
	return cvt__refuse_auxtrace(tool, session, event);
}

static void cvt__init_tool(struct perf_tool *tool)
{
	/* every callback set: the ones not assigned below are perf's defaults */
	perf_tool__init(tool, /*ordered_events=*/true);
	tool->sample		= cvt__sample;
	tool->read		= cvt__read;
	tool->mmap		= cvt__event;
	tool->mmap2		= cvt__event;
	tool->comm		= cvt__event;
	tool->namespaces	= cvt__event;
	tool->cgroup		= cvt__event;
	tool->fork		= cvt__event;
	tool->exit		= cvt__event;
	tool->lost		= cvt__event;
	tool->lost_samples	= cvt__event;
	tool->aux		= cvt__event;
	tool->itrace_start	= cvt__event;
	tool->aux_output_hw_id	= cvt__event;
	tool->context_switch	= cvt__context_switch;
	tool->throttle		= cvt__event;
	tool->unthrottle	= cvt__event;
	tool->ksymbol		= cvt__event;
	tool->bpf		= cvt__event;
	tool->text_poke		= cvt__event;
	/* callchain_deferred: the default; the records stay with the stitcher */
	tool->attr		= cvt__attr;
	tool->event_update	= cvt__event_update;
	tool->tracing_data	= cvt__tracing_data;
	tool->finished_round	= cvt__round;
	tool->build_id		= cvt__copy_untimed;
	tool->id_index		= cvt__id_index;
	tool->auxtrace_info	= cvt__refuse_auxtrace_info;
	tool->auxtrace_error	= cvt__copy_untimed;
	tool->auxtrace		= cvt__refuse_auxtrace;
	tool->time_conv		= cvt__copy_untimed;
	tool->thread_map	= cvt__copy_untimed;
	tool->cpu_map		= cvt__copy_untimed;
	tool->stat_config	= cvt__copy_untimed;
	tool->stat		= cvt__copy_untimed;
	tool->stat_round	= cvt__copy_untimed;
	tool->feature		= cvt__feature;
	tool->finished_init	= cvt__copy_untimed;
	tool->bpf_metadata	= cvt__leave_out;
	tool->schedstat_cpu	= cvt__leave_out;
	tool->schedstat_domain	= cvt__leave_out;
	/* compressed: the default decompresses and hands us the records */
	tool->ordering_requires_timestamps = true;
	/* a sample of a group read is one record: write it once */
	tool->dont_split_sample_group = true;
}

/* ---- checks ---- */

/* After the input was read: what the session skipped must not pass silently. */
static int cvt__check_session(struct cvt *cvt)
{
	struct events_stats *es = evlist__stats(cvt->session->evlist);
	struct deferred_convert_stats *st = cvt->stats;
	struct unwind_stitcher_stats ds = { .sz = sizeof(ds) };
	const char *in = cvt->opts->input;

	/* skipped (the records' samples orphaned) and counted; --strict: refused */
	st->malformed_records = es->nr_invalid_callchain_deferred;
	st->malformed_samples = es->nr_invalid_deferred_samples;
	if (es->nr_unknown_id || es->nr_unprocessable_samples) {
		pr_err("%s: %u samples of unknown events and %u without a machine to attribute them to\n",
		       in, es->nr_unknown_id, es->nr_unprocessable_samples);
		return -EINVAL;
	}
	if (deferred_stitch__check_cut(cvt->session, in, cvt->opts->force) ||
	    deferred_stitch__check_read(cvt->session, in, st->samples, cvt->opts->force,
					cvt->opts->strict))
		return -EINVAL;
	st->unknown_skipped = es->nr_unknown_events;
	st->records_removed = es->nr_events[PERF_RECORD_CALLCHAIN_DEFERRED];

	if (perf_session__deferred_stats(cvt->session, &ds) < 0)
		return -EINVAL;
	if (ds.deferred_samples != st->deferred || ds.stitched != st->stitched ||
	    ds.orphans_total != st->orphans_total) {
		pr_err("%s: %" PRIu64 " deferred samples stitched %" PRIu64 " and orphaned %" PRIu64
		       ", but %" PRIu64 " and %" PRIu64 " of %" PRIu64 " written\n", in,
		       ds.deferred_samples, ds.stitched, ds.orphans_total, st->stitched,
		       st->orphans_total, st->deferred);
		return -EPROTO;
	}
	return 0;
}

/* ---- the conversion ---- */

/*
 * Pipe to file: a pipe's features end with a record without data whose id
 * is its perf's HEADER_LAST_FEATURE.  An older perf's is the id of one of
 * this perf's features (perf 6.1's is HEADER_CPU_DOMAIN_INFO), which
 * cvt__keep_feature() kept as that feature without data: not a feature,
 * left out of the header.  A feature without data (HEADER_BRANCH_STACK,
 * HEADER_STAT) is never the last feature record: the mark follows it.
 */
static void cvt__drop_feature_end(struct cvt *cvt)
{
	int feat = cvt->feat_end;

	if (!cvt->pipe_in || !feat)
		return;
	perf_header__clear_feat(&cvt->session->header, feat);
	zfree(&cvt->feat_data[feat]);
	cvt->feat_size[feat] = 0;
}

static int cvt__write_file(struct cvt *cvt)
{
	int err = 0;

	if (!cvt->data_started)
		err = cvt__start_data(cvt);
	if (!err)
		err = stitch_buf__flush(cvt->out);
	if (err)
		return err;
	cvt__drop_feature_end(cvt);
	err = deferred_convert__write_header(cvt);
	return err ?: cvt->err;
}

static int cvt__open_input(struct cvt *cvt)
{
	const struct deferred_convert_opts *opts = cvt->opts;
	struct perf_session *session;
	int err, feat;

	cvt->data.path = opts->input;
	cvt->data.mode = PERF_DATA_MODE_READ;
	cvt->data.force = opts->force;
	/* nothing repiped: the tool writes a pipe's header and tracing data */
	session = perf_session__new(&cvt->data, &cvt->tool);
	if (IS_ERR(session)) {
		pr_err("cannot read %s\n", opts->input);
		return PTR_ERR(session) ?: -EINVAL;
	}
	cvt->session = session;
	/* a pipe stream saved to a file (perf record -o - > f) is one too */
	cvt->pipe_in = perf_data__is_pipe(session->data);
	cvt->stats->pipe_in = cvt->pipe_in;
	if (session->header.needs_swap) {
		/*
		 * perf 6.1 swaps each record as whole u64 words and fixes the
		 * u32 pairs only when parsing, and leaves PERF_SAMPLE_RAW
		 * payloads as written: the records it hands over are not in
		 * host order, so copying them would write wrong values.
		 */
		pr_err("%s: written on a host of the other byte order: perf reads its records without swapping every field (u32 pairs, PERF_SAMPLE_RAW data), so they cannot be copied; convert it on a host of its byte order\n",
		       opts->input);
		return -EINVAL;
	}
	if (zstd_init(&session->zstd_data, 0) < 0)
		pr_warning("decompression initialization failed\n");
	if (cvt->pipe_in)
		return 0;

	err = perf_header__process_sections(&session->header, perf_data__fd(session->data),
					    cvt->secs, deferred_stitch__save_section);
	if (err) {
		pr_err("%s: cannot read the header features\n", opts->input);
		return -EINVAL;
	}
	if (perf_header__has_feat(&session->header, HEADER_AUXTRACE)) {
		pr_err("%s: AUX area tracing data is not supported\n", opts->input);
		return -EINVAL;
	}
	/*
	 * A directory (perf record --threads) is read whole, its reader
	 * threads' files merged in time order: the output is one file.
	 */
	perf_header__clear_feat(&session->header, HEADER_DIR_FORMAT);
	/*
	 * A newer perf's features (ids from our HEADER_LAST_FEATURE on): this
	 * perf cannot write them, and older readers do not know them either.
	 * Left out and counted, as a pipe's are in cvt__pipe_feature().
	 */
	feat = HEADER_LAST_FEATURE;
	for_each_set_bit_from(feat, session->header.adds_features, HEADER_FEAT_BITS) {
		perf_header__clear_feat(&session->header, feat);
		cvt->stats->features_dropped++;
	}
	return 0;
}

/* The output, and what goes before the data: the pipe header or a file's gap. */
static int cvt__open_output(struct cvt *cvt)
{
	const struct deferred_convert_opts *opts = cvt->opts;
	int err;

	err = stitch_output__open(&cvt->output, opts->output, opts->input, opts->force,
				  0600);
	if (err)
		return err;
	cvt->stats->output_in_place = cvt->output.in_place;
	cvt->out->fd = cvt->output.fd;
	/* a FIFO or a terminal cannot take a file: it gets a pipe's format */
	cvt->pipe_out = !cvt->output.seekable;
	cvt->stats->pipe_out = cvt->pipe_out;
	if (!cvt->pipe_out)
		/* a pipe input has its data offset once its attrs were read */
		return cvt->pipe_in ? 0 : cvt__start_data(cvt);
	if (!cvt->pipe_in)
		return deferred_convert__write_pipe_header(cvt);
	err = perf_header__write_pipe(cvt->out->fd);
	return err < 0 ? err : 0;
}

static void cvt__delete(struct cvt *cvt)
{
	int feat;

	if (cvt->session) {
		zstd_fini(&cvt->session->zstd_data);
		perf_session__delete(cvt->session);
	}
	for (feat = 0; feat < HEADER_LAST_FEATURE; feat++)
		free(cvt->feat_data[feat]);
	intlist__delete(cvt->lost_maps);
	cvt__offcpu_exit(cvt);
	free(cvt->ev);
	free(cvt->out);
	free(cvt);
}

int deferred_convert(const struct deferred_convert_opts *opts,
		     struct deferred_convert_stats *stats)
{
	struct cvt *cvt;
	int err;

	memset(stats, 0, sizeof(*stats));
	stats->nr_reasons = DEFERRED_STITCH_REASONS_MAX;
	if (!opts->output) {
		pr_err("no output file (-o)\n");
		return -EINVAL;
	}
	if (opts->off_cpu && sched_switch__check_readable("off-cpu"))
		return -EOPNOTSUPP;

	cvt = zalloc(sizeof(*cvt));
	if (!cvt)
		return -ENOMEM;
	cvt->output.fd = -1;
	cvt->output.slot = -1;
	cvt->out = zalloc(sizeof(*cvt->out));
	cvt->ev = zalloc(CONVERT_MAX_EVENT + 1);
	cvt->lost_maps = intlist__new(NULL);
	if (!cvt->out || !cvt->ev || !cvt->lost_maps) {
		err = -ENOMEM;
		goto out;
	}
	cvt->opts = opts;
	cvt->stats = stats;
	cvt__init_tool(&cvt->tool);

	err = cvt__open_input(cvt);
	if (err)
		goto out;
	/* the session's reasons: the library's, then perf's (malformed) */
	stats->nr_reasons = DEFERRED_ORPHAN__MAX;
	err = cvt__open_output(cvt);
	if (err) {
		if (cvt->output.fd >= 0)
			pr_err("cannot write %s: %s\n", stitch_output__name(&cvt->output),
			       strerror(-err));
		goto out;
	}
	err = cvt__offcpu_start(cvt);
	if (err)
		goto out;

	/* on failure it says where and in which file */
	err = perf_session__process_events(cvt->session);
	if (err)
		goto out;
	err = cvt->err;
	if (!err)
		err = cvt__check_session(cvt);
	if (!err)
		err = cvt__offcpu_finish(cvt);
	if (err)
		goto out;

	err = cvt->pipe_out ? stitch_buf__flush(cvt->out) : cvt__write_file(cvt);
	if (err) {
		pr_err("cannot write %s: %s\n", stitch_output__name(&cvt->output), strerror(-err));
		goto out;
	}
	err = stitch_output__commit(&cvt->output);
out:
	if (err)
		stitch_output__abort(&cvt->output);
	cvt__delete(cvt);
	return err;
}

static void cvt__fprintf_offcpu(const struct deferred_convert_stats *st,
				const struct deferred_convert_opts *opts, FILE *fp)
{
	if (opts->off_cpu)
		fprintf(fp, "; --count=off-cpu: %" PRIu64 " switches weigh %" PRIu64
			" ns off-CPU as their period (%" PRIu64 " still out at the end), %" PRIu64
			" weigh 0", st->offcpu_weighed, st->offcpu_ns, st->offcpu_open,
			st->offcpu_zero);
}

void deferred_convert__fprintf_stats(const struct deferred_convert_stats *st,
				     const struct deferred_convert_opts *opts,
				     const char *cmd, FILE *fp)
{
	if (!st->deferred && !st->records_removed) {
		fprintf(fp, "%s: no deferred callchains in %s, copied %" PRIu64 " samples",
			cmd, opts->input, st->samples);
		cvt__fprintf_offcpu(st, opts, fp);
		fprintf(fp, "; wrote %s\n", opts->output);
		return;
	}
	fprintf(fp, "%s: %" PRIu64 " samples, %" PRIu64 " with deferred user callchains: %"
		PRIu64 " stitched, %" PRIu64 " orphans", cmd, st->samples, st->deferred,
		st->stitched, st->orphans_total);
	deferred_stitch__fprintf_orphans(fp, st->orphans, st->nr_reasons);
	fprintf(fp, "; %" PRIu64 " CALLCHAIN_DEFERRED records removed, %" PRIu64
		" lost-stack maps added", st->records_removed, st->lost_maps);
	deferred_stitch__fprintf_malformed(fp, ", ", st->malformed_records, st->malformed_samples);
	if (st->unknown_skipped)
		fprintf(fp, ", %" PRIu64 " records of unknown type skipped", st->unknown_skipped);
	if (st->out_of_order)
		fprintf(fp, ", %" PRIu64 " events out of time order in the input",
			st->out_of_order);
	if (st->cut_samples)
		fprintf(fp, ", %" PRIu64 " stitched samples cut to fit a record (%" PRIu64
			" user frames left out)", st->cut_samples, st->cut_frames);
	if (st->attrs_cut)
		fprintf(fp, ", %" PRIu64 " event attrs with fields unknown to this perf cut",
			st->attrs_cut);
	if (st->features_dropped)
		fprintf(fp, ", %" PRIu64 " header features unknown to this perf left out",
			st->features_dropped);
	cvt__fprintf_offcpu(st, opts, fp);
	fprintf(fp, "; wrote %s\n", !strcmp(opts->output, "-") ? "stdout" : opts->output);
}
