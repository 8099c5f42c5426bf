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
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
	u64			seq;	/* never reused, unlike the addresses */
};

void deferred_maps__init(struct deferred_maps *dm)
{
	memset(dm, 0, sizeof(*dm));
	INIT_LIST_HEAD(&dm->held);
}

static void deferred_maps__forget_last(struct deferred_maps *dm)
{
	thread__zput(dm->last.thread);
	thread__zput(dm->last.copy);
}

void deferred_maps__set_index(struct deferred_maps *dm, struct deferred_index *index)
{
	deferred_maps__forget_last(dm);
	dm->index = index;
}

void deferred_maps__exit(struct deferred_maps *dm)
{
	struct deferred_map_event *me, *tmp;

	deferred_maps__forget_last(dm);

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
	me->seq = dm->next_seq++;
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

/*
 * A thread of @thread's ids with a copy of its maps, and its machine as
 * perf knows it: thread__insert_map() would read it again from the ELF
 * files, for each copy, where perf keeps the first it found, an exec
 * later or not.
 */
static struct thread *thread__copy_maps(struct thread *thread, struct machine *machine)
{
	struct thread *copy = NULL;
	struct maps *maps;
	u32 e_flags = 0;
	bool big_endian = false;
	u16 e_machine;

	if (!thread__maps(thread))
		return NULL;
	copy = thread__new(thread__pid(thread), thread__tid(thread));
	maps = maps__new(machine);
	if (!copy || !maps)
		goto out_err;
	e_machine = thread__e_machine_endian(thread, machine, &e_flags, &big_endian);
	if (e_machine != EM_NONE) {
		thread__set_e_machine(copy, e_machine);
		thread__set_e_flags(copy, e_flags);
		thread__set_e_is_big_endian(copy, big_endian);
	}
	thread__set_maps(copy, maps);
	maps = NULL;
	if (maps__copy_from(thread__maps(copy), thread__maps(thread)))
		goto out_err;
	return copy;
out_err:
	maps__put(maps);
	thread__put(copy);
	return NULL;
}

/* Made by @sample's process after it and up to @record_time */
static bool deferred_map_event__in_window(const struct deferred_map_event *me,
					  const struct perf_sample *sample, u64 record_time)
{
	return me->time >= sample->time && me->time <= record_time &&
	       event__mapping_pid(me->event) == sample->pid;
}

/*
 * Which of the mappings @sample's process made up to @record_time are not
 * in perf's maps yet, in @w.  The same window of the
 * same thread and record means the same maps: a mapping delivered between
 * two samples would be in the first's window only.
 */
static void deferred_maps__window(struct deferred_maps *dm, const struct perf_sample *sample,
				  u64 record_time, struct deferred_maps_window *w)
{
	struct deferred_map_event *me;

	w->record_time = record_time;
	w->nr = 0;
	if (dm->index) {
		size_t first;

		w->nr = deferred_index__count_mappings(dm->index, sample->pid, sample->time,
						       record_time, &first);
		w->first = first;
		w->last = first + w->nr;
		return;
	}
	list_for_each_entry(me, &dm->held, node) {
		if (!deferred_map_event__in_window(me, sample, record_time))
			continue;
		if (!w->nr++)
			w->first = me->seq;
		w->last = me->seq;
	}
}

struct thread_at {
	struct machine	*machine;
	struct thread	*copy;
};

/* @event's mapping added to the copy */
static int thread_at__add(union perf_event *event, void *arg)
{
	struct thread_at *at = arg;

	return thread__add_mapping(at->copy, at->machine, event);
}

struct thread *deferred_maps__thread_at(struct deferred_maps *dm, struct machine *machine,
					const struct perf_sample *sample, u64 record_time)
{
	struct thread_at at = { .machine = machine };
	struct deferred_map_event *me;
	struct deferred_maps_window w;
	struct thread *thread;
	int err = 0;

	deferred_maps__window(dm, sample, record_time, &w);
	if (!w.nr)
		return NULL;
	thread = machine__find_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return NULL;
	if (thread == dm->last.thread && w.record_time == dm->last.record_time &&
	    w.nr == dm->last.nr && w.first == dm->last.first && w.last == dm->last.last) {
		thread__put(thread);
		return thread__get(dm->last.copy);
	}
	at.copy = thread__copy_maps(thread, machine);
	if (!at.copy)
		goto out;
	if (dm->index) {
		err = deferred_index__read_mappings(dm->index, sample->pid, sample->time,
						    record_time, thread_at__add, &at);
		goto out;
	}
	list_for_each_entry(me, &dm->held, node) {
		if (!deferred_map_event__in_window(me, sample, record_time))
			continue;
		err = thread_at__add(me->event, &at);
		if (err)
			break;
	}
out:
	if (err || !at.copy) {
		thread__zput(at.copy);
		thread__put(thread);
		return NULL;
	}
	deferred_maps__forget_last(dm);
	w.thread = thread;	/* the reference found */
	w.copy = thread__get(at.copy);
	dm->last = w;
	return at.copy;
}
