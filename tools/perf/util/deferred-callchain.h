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
 * trailer the attrs ask for.  A malformed record is reported (with its file
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
