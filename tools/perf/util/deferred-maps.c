// SPDX-License-Identifier: GPL-2.0
/*
 * The maps a stitched user callchain resolves against.
 *
 * The session hands a deferred sample on in time order, when perf's maps
 * are those of the sample's time.  Its user part is the kernel's unwind at
 * the task's return to user space, up to the record's time: when the task
 * mapped code in between (execve(): the new program, its ld.so), the user
 * frames lie in mappings perf reads only after the sample.  Those
 * mappings are in the file, held behind the sample; a copy of the
 * thread's maps with them added resolves the user part as the kernel saw
 * it, and the sample still leaves in its place.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <perf/event.h>
#include "build-id.h"
#include "deferred-index.h"
#include "deferred-maps.h"
#include "dso.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "sample.h"
#include "thread.h"

struct deferred_map_event {
	struct list_head	node;
	union perf_event	*event;	/* in the held item: alive until released */
	u64			time;
};

void deferred_maps__init(struct deferred_maps *dm)
{
	INIT_LIST_HEAD(&dm->held);
}

void deferred_maps__exit(struct deferred_maps *dm)
{
	struct deferred_map_event *me, *tmp;

	list_for_each_entry_safe(me, tmp, &dm->held, node) {
		list_del(&me->node);
		free(me);
	}
}

/* A mapping of a process' user space (kernel and guest ones are not waited for) */
static bool event__user_mapping(const union perf_event *event)
{
	if (event->header.type != PERF_RECORD_MMAP && event->header.type != PERF_RECORD_MMAP2)
		return false;
	return (event->header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
}

int deferred_maps__hold(struct deferred_maps *dm, union perf_event *event, u64 time)
{
	struct deferred_map_event *me;

	if (!event__user_mapping(event))
		return 0;
	me = malloc(sizeof(*me));
	if (!me)
		return -ENOMEM;
	me->event = event;
	me->time = time;
	list_add_tail(&me->node, &dm->held);
	return 0;
}

void deferred_maps__release(struct deferred_maps *dm, union perf_event *event)
{
	struct deferred_map_event *me;

	if (!event__user_mapping(event))
		return;
	/* the session delivers in the order held: the first, but look on */
	list_for_each_entry(me, &dm->held, node) {
		if (me->event == event) {
			list_del(&me->node);
			free(me);
			return;
		}
	}
}

static u32 event__mapping_pid(const union perf_event *event)
{
	return event->header.type == PERF_RECORD_MMAP2 ? event->mmap2.pid : event->mmap.pid;
}

/*
 * What machine__process_mmap2_event() and machine__process_mmap_event()
 * add for a user mapping, added to @thread's maps.
 */
static int thread__add_mapping(struct thread *thread, struct machine *machine,
			       union perf_event *event)
{
	struct dso_id id = dso_id_empty;
	struct map *map;
	int err;

	if (event->header.type == PERF_RECORD_MMAP2) {
		struct perf_record_mmap2 *m = &event->mmap2;

		if (event->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			build_id__init(&id.build_id, m->build_id, m->build_id_size);
		} else {
			id.maj = m->maj;
			id.min = m->min;
			id.ino = m->ino;
			id.ino_generation = m->ino_generation;
			id.mmap2_valid = true;
			id.mmap2_ino_generation_valid = true;
		}
		map = map__new(machine, m->start, m->len, m->pgoff, &id, m->prot, m->flags,
			       m->filename, thread);
	} else {
		struct perf_record_mmap *m = &event->mmap;
		u32 prot = event->header.misc & PERF_RECORD_MISC_MMAP_DATA ? 0 : PROT_EXEC;

		map = map__new(machine, m->start, m->len, m->pgoff, &id, prot, /*flags=*/0,
			       m->filename, thread);
	}
	if (!map)
		return -ENOMEM;
	err = thread__insert_map(thread, map);
	map__put(map);
	return err;
}

/* A thread of @sample's ids, out of @machine, with a copy of its maps */
static struct thread *thread__copy_maps(struct machine *machine, const struct perf_sample *sample)
{
	struct thread *thread = machine__find_thread(machine, sample->pid, sample->tid);
	struct thread *copy = NULL;
	struct maps *maps;

	if (!thread || !thread__maps(thread))
		goto out;
	copy = thread__new(sample->pid, sample->tid);
	maps = maps__new(machine);
	if (!copy || !maps)
		goto out_err;
	thread__set_maps(copy, maps);
	maps = NULL;
	if (maps__copy_from(thread__maps(copy), thread__maps(thread)))
		goto out_err;
out:
	thread__put(thread);
	return copy;
out_err:
	maps__put(maps);
	thread__zput(copy);
	goto out;
}

struct thread_at {
	struct machine			*machine;
	const struct perf_sample	*sample;
	struct thread			*copy;
};

/* @event's mapping added to the copy of the sample's thread, made at the first */
static int thread_at__add(union perf_event *event, void *arg)
{
	struct thread_at *at = arg;

	if (!at->copy)
		at->copy = thread__copy_maps(at->machine, at->sample);
	if (!at->copy)
		return -ENOMEM;
	return thread__add_mapping(at->copy, at->machine, event);
}

struct thread *deferred_maps__thread_at(struct deferred_maps *dm, struct machine *machine,
					const struct perf_sample *sample, u64 record_time)
{
	struct thread_at at = { .machine = machine, .sample = sample };
	struct deferred_map_event *me;
	int err = 0;

	if (dm->index) {
		err = deferred_index__read_mappings(dm->index, sample->pid, sample->time,
						    record_time, thread_at__add, &at);
		goto out;
	}
	list_for_each_entry(me, &dm->held, node) {
		if (me->time < sample->time || me->time > record_time ||
		    event__mapping_pid(me->event) != sample->pid)
			continue;
		err = thread_at__add(me->event, &at);
		if (err)
			break;
	}
out:
	if (err)
		thread__zput(at.copy);
	return at.copy;
}
