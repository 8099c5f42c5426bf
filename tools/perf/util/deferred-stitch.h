/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the perf stitch modes (convert, emulate, export, stats) share:
 * copying the input's header, and refusing to make a result of what
 * could not be read.
 */
#ifndef __PERF_DEFERRED_STITCH_H
#define __PERF_DEFERRED_STITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct perf_file_section;
struct perf_header;
struct perf_session;
struct perf_tool;

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
 * A mode that writes a file makes no result of a recording cut short (the
 * reader said where): -EINVAL naming @path, or with @force a warning and 0.
 */
int deferred_stitch__check_cut(struct perf_session *session, const char *path, bool force);
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
/* For a mode's summary: what was skipped as malformed, each part after @sep */
void deferred_stitch__fprintf_malformed(FILE *fp, const char *sep, u64 records, u64 samples);

/*
 * perf stitch reads every input through a session.  A pipe sends its
 * attrs, features and tracing data as records: give @tool the callbacks
 * that read them, so that every mode reads every pipe (a compressed one:
 * HEADER_COMPRESSED sizes the buffer).  Call it after perf_tool__init(),
 * before setting the mode's own callbacks.
 */
void deferred_stitch__tool_read_header(struct perf_tool *tool);

#endif /* __PERF_DEFERRED_STITCH_H */
