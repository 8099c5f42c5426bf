/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_DEFERRED_INDEX_H
#define __PERF_DEFERRED_INDEX_H

#include <linux/types.h>

struct perf_session;
struct perf_sample;
union perf_event;

/*
 * The PERF_RECORD_CALLCHAIN_DEFERRED records of a perf.data file (or of
 * the files of a perf record --threads directory), indexed in a first pass
 * over the record headers before the session reads the file: a deferred
 * sample is then stitched when it comes, its record read ahead from the
 * file, instead of holding every later event until the record comes in
 * time order, however long its task blocked.  The pass also notes what
 * would make reading ahead give another answer than waiting: the task's
 * exec and exit, its process' new code mappings (its user part resolves
 * against the maps of the record's time).
 */
struct deferred_index;

/* A record read ahead: valid until the next call for the same index. */
struct deferred_index_record {
	u32		pid;
	u32		tid;
	u32		cpu;
	u64		time;
	u64		cookie;
	const u64	*ips;
	u64		nr;
};

/*
 * The index of @session's input, or NULL when there is none to make: a
 * pipe, a compressed (-z) or byte-swapped file, a file whose records cannot
 * be walked (damaged: read as without the index), or no memory.
 * @records: the number of records indexed, for the caller's statistics.
 */
/*
 * Why deferred_index__find() left a sample to wait for its record in the
 * stream (-ENOENT): counted, for perf script -v
 */
enum deferred_index_refusal {
	DEFERRED_INDEX__NOT_YET,	/* the task's later records: an exit or exec first */
	DEFERRED_INDEX__OTHER_ENTRY,	/* the task's next record is another entry's */
	DEFERRED_INDEX__BOUNDS,		/* an exit or exec of the task before its record */
	DEFERRED_INDEX__UNREADABLE,	/* the record could not be read back */
	DEFERRED_INDEX__NR_REFUSALS,
};

struct deferred_index *deferred_index__new(struct perf_session *session, u64 *records);
void deferred_index__delete(struct deferred_index *idx);

/*
 * @sample's record (with @cookie), if it was written after the sample and
 * nothing between the two changes the answer (the same pid, no exec or
 * exit of the task; the mappings its process made in between are read
 * back by deferred_index__read_mappings()): read from the file
 * into @rec.  0; -ENODATA when the rest of the file has no record for it,
 * nor a later one of its task, nor its exit or exec (its task blocked
 * until the recording ended: an orphan now, as at the end); -ENOENT to let
 * the sample wait for its record; -ENOMEM.
 */
int deferred_index__find(struct deferred_index *idx, const struct perf_sample *sample,
			 u64 cookie, struct deferred_index_record *rec);
/* Handed a mapping read back (valid during the call): 0 to go on */
typedef int (*deferred_index_mapping_fn)(union perf_event *event, void *arg);

/*
 * The code mappings (PERF_RECORD_MMAP, MMAP2) @pid made in [@from, @to],
 * in time order, read back from the file and each handed to @fn: 0,
 * -errno or what @fn returned, not 0.
 */
int deferred_index__read_mappings(struct deferred_index *idx, u32 pid, u64 from, u64 to,
				  deferred_index_mapping_fn fn, void *arg);
/*
 * How many code mappings @pid made in [@from, @to]: the first's place in
 * the index in @first, the same for the same mappings (what
 * deferred_index__read_mappings() would read back, without reading).
 */
size_t deferred_index__count_mappings(const struct deferred_index *idx, u32 pid, u64 from,
				      u64 to, size_t *first);
/* How many samples deferred_index__find() refused, by reason */
u64 deferred_index__refused(const struct deferred_index *idx, enum deferred_index_refusal why);

#endif /* __PERF_DEFERRED_INDEX_H */
