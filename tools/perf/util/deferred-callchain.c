// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_RECORD_CALLCHAIN_DEFERRED (Linux 6.19): validation and printing.
 *
 *	struct {
 *		struct perf_event_header	header;
 *		u64				cookie;
 *		u64				nr;
 *		u64				ips[nr];
 *		struct sample_id		sample_id;	// with sample_id_all
 *	};
 *
 * The sample_id trailer is found from the end of the record (see
 * perf_evsel__parse_id_sample()), so nr is the only field that says where
 * things are inside it, and it is checked against header.size before
 * anything else reads the record.
 */
#include <inttypes.h>
#include <linux/compiler.h>
#include <perf/event.h>
#include "debug.h"
#include "events_stats.h"
#include "evlist.h"
#include "deferred-callchain.h"

/* malformed records reported one by one; the rest are only counted */
#define CALLCHAIN_DEFERRED_REPORT_MAX	10

bool perf_event__callchain_deferred_valid(union perf_event *event,
					  struct evlist *evlist,
					  u64 file_offset)
{
	const struct perf_record_callchain_deferred *cd = &event->callchain_deferred;
	struct events_stats *stats = &evlist->stats;
	size_t size = event->header.size;
	size_t need = sizeof(*cd) + evlist__id_hdr_size(evlist);
	u64 room = 0;

	if (size >= need && size % sizeof(u64) == 0) {
		room = (size - need) / sizeof(u64);
		if (cd->nr <= room)
			return true;
	}

	if (stats->nr_invalid_callchain_deferred++ >= CALLCHAIN_DEFERRED_REPORT_MAX)
		return false;

	if (size < need || size % sizeof(u64)) {
		pr_err("%#" PRIx64 " [%#zx]: malformed PERF_RECORD_CALLCHAIN_DEFERRED: "
		       "size %zu, expected a multiple of 8 and at least %zu, skipping it\n",
		       file_offset, size, size, need);
	} else {
		pr_err("%#" PRIx64 " [%#zx]: malformed PERF_RECORD_CALLCHAIN_DEFERRED: "
		       "nr %" PRIu64 " but room for %" PRIu64 " entries, skipping it\n",
		       file_offset, size, (u64)cd->nr, room);
	}
	if (stats->nr_invalid_callchain_deferred == CALLCHAIN_DEFERRED_REPORT_MAX)
		pr_err("further malformed PERF_RECORD_CALLCHAIN_DEFERRED records are only counted\n");
	return false;
}

int perf_event__process_callchain_deferred(struct perf_tool *tool __maybe_unused,
					   union perf_event *event __maybe_unused,
					   struct perf_sample *sample __maybe_unused,
					   struct machine *machine __maybe_unused)
{
	return 0;
}

size_t perf_event__fprintf_callchain_deferred(union perf_event *event, FILE *fp)
{
	const struct perf_record_callchain_deferred *cd = &event->callchain_deferred;
	size_t size = event->header.size;
	u64 i, nr, room;
	size_t ret;

	if (size < sizeof(*cd))
		return fprintf(fp, " (truncated)\n");

	/* never print past the record, whatever nr says */
	room = (size - sizeof(*cd)) / sizeof(u64);
	nr = cd->nr < room ? cd->nr : room;

	ret = fprintf(fp, " cookie: %#" PRIx64 " nr: %" PRIu64 "\n",
		      (u64)cd->cookie, (u64)cd->nr);
	for (i = 0; i < nr; i++)
		ret += fprintf(fp, "..... %2" PRIu64 ": %016" PRIx64 "\n", i, (u64)cd->ips[i]);
	return ret;
}

void evlist__config_callchain_deferred(struct evlist *evlist)
{
	struct evsel *evsel;
	bool defer = false;

	evlist__for_each_entry(evlist, evsel) {
		evsel->core.attr.defer_output = 0;
		if (evsel->core.attr.defer_callchain)
			defer = true;
	}

	if (defer)
		evlist__get_tracking_event(evlist)->core.attr.defer_output = 1;
}

void callchain_deferred__warn_fallback(const char *cmd)
{
	pr_warning("%s: this kernel cannot defer user callchains (needs Linux 6.19+ with CONFIG_UNWIND_USER); recording plain frame-pointer callchains instead\n",
		   cmd);
}
