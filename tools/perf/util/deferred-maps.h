/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_DEFERRED_MAPS_H
#define __PERF_DEFERRED_MAPS_H

#include <linux/list.h>
#include <linux/types.h>

struct deferred_index;
struct machine;
struct perf_sample;
struct thread;
union perf_event;

/* The mappings a sample's thread lacks up to its record, and its copy with them */
struct deferred_maps_window {
	struct thread	*thread;	/* perf's, a reference held */
	struct thread	*copy;
	u64		record_time;
	u64		first, last;	/* the mappings: held seq or index place */
	size_t		nr;
};

/*
 * The user mappings (PERF_RECORD_MMAP, MMAP2) the session holds behind a
 * deferred sample: written after it, so not yet in perf's maps when it
 * leaves, though its user part, taken at the return to user space, may
 * lie in them (an exec: the record shows the new program's ld.so, mapped
 * while the sample's execve() ran).
 */
struct deferred_maps {
	struct list_head	held;	/* struct deferred_map_event, in the order held */
	/*
	 * The file's index, once made: a sample read ahead leaves before the
	 * mappings written up to its record are read, so they are read
	 * back from the file, held or not.
	 */
	struct deferred_index	*index;
	u64			next_seq;	/* of the next mapping held */
	/*
	 * The last thread made: the samples of one kernel entry (an execve()
	 * sampled many times) share their record and the mappings up to it,
	 * and so the same maps.
	 */
	struct deferred_maps_window	last;
};

void deferred_maps__init(struct deferred_maps *dm);
void deferred_maps__exit(struct deferred_maps *dm);

/* From now on, read the mappings back through @index (NULL: none) */
void deferred_maps__set_index(struct deferred_maps *dm, struct deferred_index *index);
/* @event, a mapping of @time, waits behind a held sample: 0 or -ENOMEM */
int deferred_maps__hold(struct deferred_maps *dm, union perf_event *event, u64 time);
/* @event is delivered: perf's maps have it now */
void deferred_maps__release(struct deferred_maps *dm, union perf_event *event);

/*
 * @sample's thread with the maps of @record_time, those of perf and the
 * mappings of its process written from the sample up to then (held, or
 * read back through the index): a thread not in @machine, to be put with
 * thread__put(); NULL when no held mapping
 * changes them (or on error: the maps of the sample's time are used).
 */
struct thread *deferred_maps__thread_at(struct deferred_maps *dm, struct machine *machine,
					const struct perf_sample *sample, u64 record_time);

#endif /* __PERF_DEFERRED_MAPS_H */
