// SPDX-License-Identifier: GPL-2.0
/*
 * What the perf stitch modes share: see deferred-stitch.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <linux/compiler.h>
#include <perf/event.h>
#include "debug.h"
#include "event.h"
#include "events_stats.h"
#include "evlist.h"
#include "header.h"
#include "session.h"
#include "tool.h"
#include "deferred-stitch.h"

int deferred_stitch__save_section(struct perf_file_section *section,
				  struct perf_header *ph __maybe_unused, int feat,
				  int fd __maybe_unused, void *data)
{
	struct perf_file_section *secs = data;

	secs[feat] = *section;
	return 0;
}

int event_desc__begin(struct event_desc_iter *it, void *buf, size_t size)
{
	it->p = buf;
	it->end = it->p + size;
	it->i = 0;
	if (size < 2 * sizeof(u32))
		return -EINVAL;
	memcpy(&it->nr, it->p, sizeof(u32));
	memcpy(&it->attr_size, it->p + sizeof(u32), sizeof(u32));
	it->p += 2 * sizeof(u32);
	return it->attr_size < PERF_ATTR_SIZE_VER0 ? -EINVAL : 0;
}

int event_desc__next(struct event_desc_iter *it, struct event_desc_entry *e)
{
	size_t left = it->end - it->p, fixed = (size_t)it->attr_size + 2 * sizeof(u32);

	if (it->i == it->nr)
		return 0;
	if (left < fixed)
		return -EINVAL;
	e->attr = it->p;
	memcpy(&e->nr_ids, it->p + it->attr_size, sizeof(u32));
	memcpy(&e->name_len, it->p + it->attr_size + sizeof(u32), sizeof(u32));
	if (left - fixed < e->name_len ||
	    (u64)(left - fixed - e->name_len) < (u64)e->nr_ids * sizeof(u64))
		return -EINVAL;
	e->name = it->p + fixed;
	e->ids = e->name + e->name_len;
	e->size = fixed + e->name_len + (size_t)e->nr_ids * sizeof(u64);
	it->p += e->size;
	it->i++;
	return 1;
}

int deferred_stitch__check_cut(struct perf_session *session, const char *path, bool force)
{
	if (!evlist__stats(session->evlist)->nr_cut_short_records)
		return 0;
	pr_err("%s: the data is cut short (where: above), %s\n", path,
	       force ? "going on with what there is (-f)" :
		       "refused; -f to go on with what there is");
	return force ? 0 : -EINVAL;
}

int deferred_stitch__check_read(struct perf_session *session, const char *path,
				u64 delivered, bool force, bool strict)
{
	struct events_stats *es = evlist__stats(session->evlist);
	u64 samples = es->nr_events[PERF_RECORD_SAMPLE];
	const char *what = force ? "warning" : "error";

	if (strict && (es->nr_invalid_callchain_deferred || es->nr_invalid_deferred_samples)) {
		pr_err("%s: error: %u malformed PERF_RECORD_CALLCHAIN_DEFERRED records and %u samples with a malformed deferred callchain (offsets above), --strict\n",
		       path, es->nr_invalid_callchain_deferred, es->nr_invalid_deferred_samples);
		return -EINVAL;
	}
	if (es->nr_unknown_events) {
		pr_err("%s: %s: %u records of types this perf does not know were skipped (the first: type %u at %#" PRIx64 ")%s\n",
		       path, what, es->nr_unknown_events, es->first_unknown_type,
		       es->first_unknown_offset, force ? "" : "; -f to go on without them");
		if (!force)
			return -EINVAL;
	}
	if (samples && !delivered) {
		pr_err("%s: %s: %" PRIu64 " samples in the data, none could be read%s\n", path,
		       what, samples, force ? "" : "; -f to go on");
		if (!force)
			return -EINVAL;
	}
	return 0;
}

void deferred_stitch__fprintf_malformed(FILE *fp, const char *sep, u64 records, u64 samples)
{
	if (records)
		fprintf(fp, "%s%" PRIu64 " malformed CALLCHAIN_DEFERRED records skipped", sep, records);
	if (samples)
		fprintf(fp, "%s%" PRIu64 " samples with a malformed deferred callchain kept without their user part",
			sep, samples);
}

void deferred_stitch__tool_read_header(struct perf_tool *tool)
{
	tool->attr = perf_event__process_attr;
	tool->event_update = perf_event__process_event_update;
	tool->feature = perf_event__process_feature;
#ifdef HAVE_LIBTRACEEVENT
	tool->tracing_data = perf_event__process_tracing_data;
#endif
	tool->build_id = perf_event__process_build_id;
	tool->id_index = perf_event__process_id_index;
}
