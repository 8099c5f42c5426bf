// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred records of a seekable perf.data file, indexed before the
 * session reads it (see deferred-index.h).
 *
 * Read in time order, a deferred sample waits for its record, and so does
 * everything after it: a task blocked for a minute holds a minute of the
 * whole machine's samples.  The file is all there, though: one pass over
 * its record headers finds where each record is, and the sample leaves at
 * once with its user part read from there (unwind_stitcher__add_sample_ahead()).
 * The engine still gets the record in its place, so what it counts is
 * what it counts without the index.
 *
 * Kept per record: its time and place (16 bytes; its ids and stack are
 * read back from the file), in runs of its task's records in time order;
 * per task its execs and exits; per process its new code mappings, when
 * and where.  A task's samples come in time order too, so each finds its
 * record from where the task's previous one did: a few entries on, in a
 * run the cache already holds, where a search of one sorted array of all
 * records (100 MB and more on a multi-GB file) misses at every step.
 *
 * perf record -z writes the records in one zstd stream, flushed but never
 * ended, that no offset in the file reaches: the pass decompresses it
 * once and copies the deferred records it indexes, and only those, into
 * an unnamed temporary file, which their places then name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bits.h>
#include <linux/err.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <perf/event.h>

#include "compress.h"
#include "data.h"
#include "debug.h"
#include "deferred-callchain.h"
#include "deferred-index.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "hashmap.h"
#include "header.h"
#include "sample.h"
#include "session.h"

/* read in chunks of this size, whole records at a time */
#define INDEX_CHUNK	(4U << 20)

/*
 * Records are read back through a few blocks of the file kept here: a CPU's
 * samples come in time order and so do its records, close together in its
 * buffer's part of each round (or in its file of a --threads directory),
 * so most reads find their block instead of costing system calls.  Each
 * CPU reads on in a block of its own at once: 4-way sets, the least
 * recently used block of a set read over, keep 64 CPUs' blocks where one
 * block a hash picks had two of them read over each other in turn (a
 * pread() a sample on a 64-CPU --threads directory).  A record is at
 * most 64 KiB (its size is a u16); one across two blocks is read whole.
 */
#define INDEX_BLOCK_BITS	14
#define INDEX_BLOCK		BIT(INDEX_BLOCK_BITS)
#define INDEX_CACHE_SET_BITS	6
#define INDEX_CACHE_WAYS	4

struct index_block {
	u64	pos;	/* where it starts, as a record's pos */
	u64	used;	/* when it was last read from */
	u32	len;	/* 0: nothing read */
	u64	*data;
};

/* A record: when it was written and where it is (file << 48 | offset) */
struct index_record {
	u64	time;
	u64	pos;
};

/* As the pass finds it, before the records are grouped by task */
struct index_found {
	u64	time;
	u64	pos;
	u32	tid;
} __packed;

/* A task's run of records: [first, end) of the index's, @next where it left off */
struct index_task {
	size_t	first;
	size_t	end;
	size_t	next;
};

#define INDEX_OFFSET_BITS	48
struct index_event {
	u64	time;
	u32	id;
};

/* A process' new code mapping: when, whose, where in the file */
struct index_mapping {
	u64	time;
	u64	pos;
	u32	pid;
};

struct index_array {
	void	*entries;
	size_t	nr;
	size_t	cap;
	size_t	size;
};

struct deferred_index {
	struct perf_session	*session;
	struct index_array	records;	/* struct index_found, then index_record */
	struct index_array	tasks;		/* struct index_task */
	struct hashmap		*task_of;	/* tid -> its index in tasks */
	struct index_array	bounds;		/* execs and exits, by tid */
	struct index_array	maps;		/* struct index_mapping, by pid */
	int			*fds;		/* per file: the header file, then a directory's */
	int			nr_fds;
	struct index_block	cache[INDEX_CACHE_WAYS << INDEX_CACHE_SET_BITS];
	u64			cache_clock;
	u64			*buf;		/* a record across two blocks or misaligned */
	size_t			buf_size;
	u64			refused[DEFERRED_INDEX__NR_REFUSALS];
	/* perf record -z: the stream decompressed, its deferred records copied */
	struct zstd_data	zstd;
	bool			compressed;
	u64			*zbuf;		/* decompressed, an event cut by its end first */
	size_t			zbuf_len;
	size_t			zbuf_size;
	int			spill_fd;	/* the copies' file, -1: none yet */
	u32			spill_file;	/* its number in fds */
	u64			spill_pos;	/* its size, with what spill_buf holds */
	char			*spill_buf;
	size_t			spill_len;
};

/* the copies are written a megabyte at a time */
#define INDEX_SPILL_BUF		(1U << 20)

static void *index_array__add(struct index_array *a)
{
	if (a->nr == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		void *entries = realloc(a->entries, cap * a->size);

		if (!entries)
			return NULL;
		a->entries = entries;
		a->cap = cap;
	}
	return (char *)a->entries + a->nr++ * a->size;
}

static void index_array__sort(struct index_array *a, int (*cmp)(const void *, const void *))
{
	if (a->nr)	/* qsort() may not be given a NULL array, even empty */
		qsort(a->entries, a->nr, a->size, cmp);
}

static size_t tid__hash(long key, void *ctx __maybe_unused)
{
	return hash_64(key, 64);
}

static bool tid__equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

static int index_event__cmp(const void *va, const void *vb)
{
	const struct index_event *a = va, *b = vb;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return 0;
}

static int index_mapping__cmp(const void *va, const void *vb)
{
	const struct index_mapping *a = va, *b = vb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return 0;
}

static int index_mapping__add(struct index_array *a, const union perf_event *event, u64 time,
			      u64 pos)
{
	struct index_mapping *m = index_array__add(a);

	if (!m)
		return -ENOMEM;
	m->time = time;
	m->pos = pos;
	m->pid = event->header.type == PERF_RECORD_MMAP2 ? event->mmap2.pid : event->mmap.pid;
	return 0;
}

static int index_event__add(struct index_array *a, u32 id, u64 time)
{
	struct index_event *e = index_array__add(a);

	if (!e)
		return -ENOMEM;
	e->id = id;
	e->time = time;
	return 0;
}

static bool event__user_mapping(const union perf_event *event)
{
	u32 type = event->header.type;

	return (type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2) &&
	       (event->header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER &&
	       !(event->header.misc & PERF_RECORD_MISC_MMAP_DATA);
}

/* One event of the file at @offset: indexed if it is one of those that matter. */
static int index__event(struct deferred_index *idx, union perf_event *event, u32 file,
			u64 offset)
{
	struct perf_sample sample;
	struct index_found *rec;
	size_t need;
	u64 room;
	int err = 0;

	switch (event->header.type) {
	case PERF_RECORD_CALLCHAIN_DEFERRED:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		break;
	case PERF_RECORD_COMPRESSED:
	case PERF_RECORD_COMPRESSED2:
		/* its records are not where the file says: no index */
		return -EINVAL;
	default:
		return 0;
	}
	if (event->header.type == PERF_RECORD_COMM &&
	    !(event->header.misc & PERF_RECORD_MISC_COMM_EXEC))
		return 0;
	if ((event->header.type == PERF_RECORD_MMAP || event->header.type == PERF_RECORD_MMAP2) &&
	    !event__user_mapping(event))
		return 0;

	/* one the session skips as malformed (it reports it) is not indexed */
	if (event->header.type == PERF_RECORD_CALLCHAIN_DEFERRED &&
	    perf_event__callchain_deferred_check(event, idx->session->evlist, &need, &room))
		return 0;
	perf_sample__init(&sample, /*all=*/false);
	/* nor one perf cannot parse */
	if (evlist__parse_sample(idx->session->evlist, event, &sample))
		goto out;
	if (offset >> INDEX_OFFSET_BITS || file >> (64 - INDEX_OFFSET_BITS)) {
		err = -EFBIG;
		goto out;
	}
	switch (event->header.type) {
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		if (!event->callchain_deferred.cookie)
			break;
		rec = index_array__add(&idx->records);
		if (!rec) {
			err = -ENOMEM;
			break;
		}
		rec->pos = (u64)file << INDEX_OFFSET_BITS | offset;
		rec->time = sample.time;
		rec->tid = sample.tid;
		break;
	case PERF_RECORD_EXIT:
		err = index_event__add(&idx->bounds, event->fork.tid, sample.time);
		break;
	case PERF_RECORD_COMM:
		err = index_event__add(&idx->bounds, event->comm.tid, sample.time);
		break;
	default:
		err = index_mapping__add(&idx->maps, event, sample.time,
					 (u64)file << INDEX_OFFSET_BITS | offset);
		break;
	}
out:
	perf_sample__exit(&sample);
	return err;
}

/* The copies written out: 0 or -errno */
static int index__spill_flush(struct deferred_index *idx)
{
	size_t done = 0;

	while (done < idx->spill_len) {
		ssize_t n = write(idx->spill_fd, idx->spill_buf + done, idx->spill_len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += n;
	}
	idx->spill_len = 0;
	return 0;
}

/* The temporary file of the copies, unnamed ($TMPDIR, else /tmp): 0 or -errno */
static int index__spill_open(struct deferred_index *idx)
{
	const char *dir = getenv("TMPDIR") ?: "/tmp";
	char path[PATH_MAX];
	int fd, len;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* a file system without O_TMPFILE: named, and unlinked at once */
		len = snprintf(path, sizeof(path), "%s/perf-deferred-XXXXXX", dir);
		if (len >= (int)sizeof(path))
			return -ENAMETOOLONG;
		fd = mkostemp(path, O_CLOEXEC);
		if (fd < 0)
			return -errno;
		unlink(path);
	}
	idx->spill_buf = malloc(INDEX_SPILL_BUF);
	if (!idx->spill_buf) {
		close(fd);
		return -ENOMEM;
	}
	idx->spill_fd = fd;
	idx->spill_file = idx->nr_fds;
	idx->fds[idx->nr_fds++] = fd;
	return 0;
}

/* A decompressed event: indexed, and copied if it is one the index reads back */
static int index__decompressed_event(struct deferred_index *idx, union perf_event *event)
{
	size_t nr = idx->records.nr + idx->maps.nr;
	int err;

	if (event->header.type != PERF_RECORD_CALLCHAIN_DEFERRED &&
	    !event__user_mapping(event))
		return index__event(idx, event, 0, 0);
	if (idx->spill_fd < 0) {
		err = index__spill_open(idx);
		if (err)
			return err;
	}
	err = index__event(idx, event, idx->spill_file, idx->spill_pos);
	if (err || idx->records.nr + idx->maps.nr == nr)
		return err;
	if (idx->spill_len + event->header.size > INDEX_SPILL_BUF) {
		err = index__spill_flush(idx);
		if (err)
			return err;
	}
	memcpy(idx->spill_buf + idx->spill_len, event, event->header.size);
	idx->spill_len += event->header.size;
	idx->spill_pos += event->header.size;
	return 0;
}

/*
 * A PERF_RECORD_COMPRESSED(2): its part of the stream decompressed after
 * what the last one left of an event it cut, as the session does
 * (perf_session__process_compressed_event()), and its whole events indexed
 */
static int index__decompress(struct deferred_index *idx, union perf_event *event)
{
	size_t cap = perf_session__env(idx->session)->comp_mmap_len, off = 0;
	size_t src_size;
	ssize_t got;
	void *src;

	if (event->header.type == PERF_RECORD_COMPRESSED2) {
		if (event->header.size < sizeof(event->pack2))
			return -EINVAL;
		src = (char *)event + sizeof(event->pack2);
		src_size = event->pack2.data_size;
		if (src_size > event->header.size - sizeof(event->pack2))
			return -EINVAL;
	} else {
		src = (char *)event + sizeof(event->pack);
		src_size = event->header.size - sizeof(event->pack);
	}
	if (!cap)
		return -EINVAL;
	if (idx->zbuf_size < idx->zbuf_len + cap) {
		u64 *zbuf = realloc(idx->zbuf, idx->zbuf_len + cap);

		if (!zbuf)
			return -ENOMEM;
		idx->zbuf = zbuf;
		idx->zbuf_size = idx->zbuf_len + cap;
	}
	got = zstd_decompress_stream(&idx->zstd, src, src_size, (char *)idx->zbuf + idx->zbuf_len,
				     idx->zbuf_size - idx->zbuf_len);
	if (got < 0)
		return -EINVAL;
	idx->zbuf_len += got;
	while (off + sizeof(struct perf_event_header) <= idx->zbuf_len) {
		union perf_event *ev = (void *)((char *)idx->zbuf + off);
		int err;

		/* the session stops at such a record too */
		if (ev->header.size < sizeof(struct perf_event_header) ||
		    ev->header.size % sizeof(u64))
			return -EINVAL;
		if (off + ev->header.size > idx->zbuf_len)
			break;
		err = index__decompressed_event(idx, ev);
		if (err)
			return err;
		off += ev->header.size;
	}
	memmove(idx->zbuf, (char *)idx->zbuf + off, idx->zbuf_len - off);
	idx->zbuf_len -= off;
	return 0;
}

/* An event of file @file at @offset */
static int index__file_event(struct deferred_index *idx, union perf_event *event, u32 file,
			     u64 offset)
{
	if (idx->compressed && (event->header.type == PERF_RECORD_COMPRESSED ||
				event->header.type == PERF_RECORD_COMPRESSED2))
		return index__decompress(idx, event);
	return index__event(idx, event, file, offset);
}

/* The records of [@start, @end) of file @file, read a chunk at a time. */

static int index__file(struct deferred_index *idx, u32 file, u64 start, u64 end)
{
	u64 *chunk = malloc(INDEX_CHUNK);
	u64 pos = start;
	int err = 0;

	if (!chunk)
		return -ENOMEM;
	/* each file of a --threads directory is a stream of its own */
	if (idx->compressed) {
		zstd_fini(&idx->zstd);
		zstd_init(&idx->zstd, 0);
		idx->zbuf_len = 0;
	}
	while (!err && pos + sizeof(struct perf_event_header) <= end) {
		size_t want = min_t(u64, INDEX_CHUNK, end - pos), off = 0;
		ssize_t got = pread(idx->fds[file], chunk, want, pos);

		if (got < (ssize_t)sizeof(struct perf_event_header)) {
			err = -EIO;
			break;
		}
		while (off + sizeof(struct perf_event_header) <= (size_t)got) {
			union perf_event *event = (void *)((char *)chunk + off);
			struct perf_event_header header;

			/* a damaged size may leave the next header unaligned */
			memcpy(&header, event, sizeof(header));
			if (header.size < sizeof(struct perf_event_header)) {
				err = -EINVAL;
				break;
			}
			if (off + header.size > (size_t)got)
				break;
			/* only an aligned record is parsed: one that is not is damaged */
			if (!(off % sizeof(u64)))
				err = index__file_event(idx, event, file, pos + off);
			if (err)
				break;
			off += header.size;
		}
		if (!off)	/* a record bigger than a chunk, or cut by the end */
			break;
		pos += off;
	}
	free(chunk);
	return err;
}

static u64 fd__size(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (u64)st.st_size;
}

static int index__walk(struct deferred_index *idx)
{
	struct perf_session *session = idx->session;
	struct perf_data *data = session->data;
	u64 end = session->header.data_offset + session->header.data_size;
	int i, err;

	idx->nr_fds = 1 + (perf_data__is_dir(data) ? data->dir.nr : 0);
	/* and the copies' of a compressed file */
	idx->fds = calloc(idx->nr_fds + 1, sizeof(*idx->fds));
	if (!idx->fds)
		return -ENOMEM;
	idx->fds[0] = perf_data__fd(data);
	/* a file cut short is read up to the cut (the session says so) */
	err = index__file(idx, 0, session->header.data_offset,
			  min(end, fd__size(idx->fds[0])));
	for (i = 1; !err && i <= (perf_data__is_dir(data) ? data->dir.nr : 0); i++) {
		idx->fds[i] = data->dir.files[i - 1].fd;
		err = index__file(idx, i, 0, fd__size(idx->fds[i]));
	}
	if (!err && idx->spill_fd >= 0)
		err = index__spill_flush(idx);
	return err;
}

static int index_record__cmp(const void *va, const void *vb)
{
	const struct index_record *a = va, *b = vb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return 0;
}

/*
 * A task's records into time order.  They come from the file nearly so
 * (out of order only across CPUs within a round): an insertion sort moves
 * each a step or two, where a sort of all records costs more than the
 * pass that found them; one that would move them much sorts them instead.
 */
static void index_task__sort(struct index_record *r, size_t nr)
{
	size_t i, j, moves = 0;

	for (i = 1; i < nr; i++) {
		struct index_record x = r[i];

		for (j = i; j && index_record__cmp(&r[j - 1], &x) > 0; j--)
			r[j] = r[j - 1];
		r[j] = x;
		moves += i - j;
		if (moves > 16 * nr) {
			qsort(r, nr, sizeof(*r), index_record__cmp);
			return;
		}
	}
}

/* The task with @tid, added if new; NULL: no memory */
static struct index_task *index__task(struct deferred_index *idx, u32 tid)
{
	struct index_task *task;
	long i;

	if (hashmap__find(idx->task_of, tid, &i))
		return (struct index_task *)idx->tasks.entries + i;
	task = index_array__add(&idx->tasks);
	if (!task || hashmap__add(idx->task_of, tid, idx->tasks.nr - 1))
		return NULL;
	memset(task, 0, sizeof(*task));
	return task;
}

/* The records found, grouped by task, each task's in time order */
static int index__group_by_task(struct deferred_index *idx)
{
	const struct index_found *found = idx->records.entries;
	size_t i, nr = idx->records.nr, first = 0;
	struct index_task *tasks, *task;
	struct index_record *rec;

	/* how many each task has */
	for (i = 0; i < nr; i++) {
		task = index__task(idx, found[i].tid);
		if (!task)
			return -ENOMEM;
		task->end++;
	}
	tasks = idx->tasks.entries;
	for (i = 0; i < idx->tasks.nr; i++) {
		task = &tasks[i];
		task->first = first;
		task->next = first;
		first += task->end;
		task->end = first;
	}
	rec = calloc(nr ?: 1, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	/* each where its task's run goes, in file order */
	for (i = 0; i < nr; i++) {
		task = index__task(idx, found[i].tid);
		rec[task->next++] = (struct index_record){
			.time = found[i].time,
			.pos = found[i].pos,
		};
	}
	for (i = 0; i < idx->tasks.nr; i++) {
		task = &tasks[i];
		task->next = task->first;
		index_task__sort(rec + task->first, task->end - task->first);
	}
	free(idx->records.entries);
	idx->records.entries = rec;
	idx->records.size = sizeof(*rec);
	return 0;
}

struct deferred_index *deferred_index__new(struct perf_session *session, u64 *records)
{
	struct deferred_index *idx;

	*records = 0;
	if (perf_data__is_pipe(session->data) || session->header.needs_swap)
		return NULL;
	idx = zalloc(sizeof(*idx));
	if (!idx)
		return NULL;
	idx->session = session;
	idx->spill_fd = -1;
	/* without zstd support the session cannot read it either */
	if (perf_header__has_feat(&session->header, HEADER_COMPRESSED)) {
		idx->compressed = true;
		if (zstd_init(&idx->zstd, 0)) {
			free(idx);
			return NULL;
		}
	}
	idx->task_of = hashmap__new(tid__hash, tid__equal, NULL);
	if (IS_ERR(idx->task_of)) {
		idx->task_of = NULL;
		deferred_index__delete(idx);
		return NULL;
	}
	idx->records.size = sizeof(struct index_found);
	idx->tasks.size = sizeof(struct index_task);
	idx->bounds.size = sizeof(struct index_event);
	idx->maps.size = sizeof(struct index_mapping);
	if (index__walk(idx) || index__group_by_task(idx)) {
		pr_debug("deferred callchains: no index of the records, samples wait for theirs\n");
		deferred_index__delete(idx);
		return NULL;
	}
	index_array__sort(&idx->bounds, index_event__cmp);
	index_array__sort(&idx->maps, index_mapping__cmp);
	*records = idx->records.nr;
	return idx;
}

void deferred_index__delete(struct deferred_index *idx)
{
	if (!idx)
		return;
	free(idx->records.entries);
	free(idx->tasks.entries);
	hashmap__free(idx->task_of);
	free(idx->bounds.entries);
	free(idx->maps.entries);
	free(idx->fds);
	for (size_t i = 0; i < ARRAY_SIZE(idx->cache); i++)
		free(idx->cache[i].data);
	free(idx->buf);
	if (idx->compressed)
		zstd_fini(&idx->zstd);
	free(idx->zbuf);
	free(idx->spill_buf);
	if (idx->spill_fd >= 0)
		close(idx->spill_fd);
	free(idx);
}

/* The first entry of sorted @a in [@lo, @hi) not before @key, @hi if none */
static size_t index_array__lower_bound_in(const struct index_array *a, const void *key,
					  int (*cmp)(const void *, const void *),
					  size_t lo, size_t hi)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp((const char *)a->entries + mid * a->size, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first entry of sorted @a not before @key */
static size_t index_array__lower_bound(const struct index_array *a, const void *key,
				       int (*cmp)(const void *, const void *))
{
	return index_array__lower_bound_in(a, key, cmp, 0, a->nr);
}

/*
 * The first record of @task written at or after @time, its run's end if
 * none.  Its samples come in time order: from where the last one stopped,
 * a step or two on; searched only for a sample earlier than the last.
 */
static size_t index_task__first_at(const struct deferred_index *idx, struct index_task *task,
				   u64 time)
{
	const struct index_record *r = idx->records.entries;
	const struct index_record key = { .time = time };
	size_t i = task->next;

	if (i > task->first && r[i - 1].time >= time)
		i = index_array__lower_bound_in(&idx->records, &key, index_record__cmp,
						task->first, i);
	while (i < task->end && r[i].time < time)
		i++;
	task->next = i;
	return i;
}

/* An event of @id in [@from, @to]? */
static bool index__event_between(const struct index_array *a, u32 id, u64 from, u64 to)
{
	const struct index_event *e = a->entries;
	struct index_event key = { .id = id, .time = from };
	size_t i = index_array__lower_bound(a, &key, index_event__cmp);

	return i < a->nr && e[i].id == id && e[i].time <= to;
}

/* The cached block of the file that holds @pos, read if it is not there */
static struct index_block *index__block(struct deferred_index *idx, u64 pos)
{
	u64 start = pos & ~(u64)(INDEX_BLOCK - 1);
	struct index_block *set = &idx->cache[hash_64(start >> INDEX_BLOCK_BITS,
						      INDEX_CACHE_SET_BITS) * INDEX_CACHE_WAYS];
	struct index_block *b = set;
	u64 offset = start & ((1ULL << INDEX_OFFSET_BITS) - 1);
	ssize_t got;

	for (int way = 0; way < INDEX_CACHE_WAYS; way++) {
		if (set[way].len && set[way].pos == start) {
			set[way].used = ++idx->cache_clock;
			return &set[way];
		}
		if (set[way].used < b->used)
			b = &set[way];
	}
	if (!b->data) {
		b->data = malloc(INDEX_BLOCK);
		if (!b->data)
			return ERR_PTR(-ENOMEM);
	}
	b->len = 0;
	got = pread(idx->fds[start >> INDEX_OFFSET_BITS], b->data, INDEX_BLOCK, offset);
	if (got <= 0)
		return ERR_PTR(-EIO);
	b->pos = start;
	b->len = got;
	b->used = ++idx->cache_clock;
	return b;
}

/* The event at @pos, whole, in the cache or in idx->buf; NULL: -EIO or -ENOMEM in @err */
static union perf_event *index__event_at(struct deferred_index *idx, u64 pos, int *err)
{
	struct index_block *b = index__block(idx, pos);
	size_t in = pos & (INDEX_BLOCK - 1);
	struct perf_event_header header;

	*err = -EIO;
	if (IS_ERR(b)) {
		*err = PTR_ERR(b);
		return NULL;
	}
	if (in + sizeof(header) > b->len)
		return NULL;
	memcpy(&header, (char *)b->data + in, sizeof(header));
	if (header.size < sizeof(header))
		return NULL;
	/* an aligned record wholly in its block is read in place */
	if (in + header.size <= b->len && !(in % sizeof(u64)))
		return (void *)((char *)b->data + in);
	if (idx->buf_size < header.size) {
		u64 *buf = realloc(idx->buf, header.size);

		if (!buf) {
			*err = -ENOMEM;
			return NULL;
		}
		idx->buf = buf;
		idx->buf_size = header.size;
	}
	if (pread(idx->fds[pos >> INDEX_OFFSET_BITS], idx->buf, header.size,
		  pos & ((1ULL << INDEX_OFFSET_BITS) - 1)) != header.size)
		return NULL;
	return (void *)idx->buf;
}

/* The record at @pos, its ids parsed into @rec; -EIO when it is not a record */
static int index__read(struct deferred_index *idx, u64 pos, struct deferred_index_record *rec)
{
	struct perf_record_callchain_deferred *cd;
	union perf_event *event;
	struct perf_sample sample;
	int err;

	event = index__event_at(idx, pos, &err);
	if (!event)
		return err;
	err = 0;
	if (event->header.type != PERF_RECORD_CALLCHAIN_DEFERRED ||
	    event->header.size < sizeof(*cd))
		return -EIO;
	cd = &event->callchain_deferred;
	if (cd->nr > (event->header.size - sizeof(*cd)) / sizeof(u64))
		return -EIO;
	perf_sample__init(&sample, /*all=*/false);
	if (evlist__parse_sample(idx->session->evlist, event, &sample))
		err = -EIO;
	*rec = (struct deferred_index_record){
		.pid	= sample.pid,
		.tid	= sample.tid,
		.cpu	= sample.cpu,
		.time	= sample.time,
		.cookie	= cd->cookie,
		.ips	= (const u64 *)cd->ips,
		.nr	= cd->nr,
	};
	perf_sample__exit(&sample);
	return err;
}

/* The sample waits for its record in the stream, counted by why: -ENOENT */
static int index__refuse(struct deferred_index *idx, enum deferred_index_refusal why)
{
	idx->refused[why]++;
	return -ENOENT;
}

int deferred_index__find(struct deferred_index *idx, const struct perf_sample *sample,
			 u64 cookie, struct deferred_index_record *rec)
{
	struct index_task *task = NULL;
	size_t i = 0;
	long nr;
	int err;

	/* the first record of the task at or after the sample is its kernel entry's */
	if (hashmap__find(idx->task_of, sample->tid, &nr)) {
		task = (struct index_task *)idx->tasks.entries + nr;
		i = index_task__first_at(idx, task, sample->time);
	}
	if (!task || i == task->end) {
		/* none in the rest of the file, and nothing that would say why */
		if (!index__event_between(&idx->bounds, sample->tid, sample->time, ULLONG_MAX))
			return -ENODATA;
		return index__refuse(idx, DEFERRED_INDEX__NOT_YET);
	}
	err = index__read(idx, ((const struct index_record *)idx->records.entries)[i].pos, rec);
	if (err == -ENOMEM)
		return err;
	if (err)
		return index__refuse(idx, DEFERRED_INDEX__UNREADABLE);
	/* another entry's (the sample's lost?), not its pid's: the record decides */
	if (rec->tid != sample->tid || rec->cookie != cookie || rec->pid != sample->pid)
		return index__refuse(idx, DEFERRED_INDEX__OTHER_ENTRY);
	if (index__event_between(&idx->bounds, sample->tid, sample->time, rec->time))
		return index__refuse(idx, DEFERRED_INDEX__BOUNDS);
	return 0;
}

size_t deferred_index__count_mappings(const struct deferred_index *idx, u32 pid, u64 from,
				      u64 to, size_t *first)
{
	const struct index_mapping *m = idx->maps.entries;
	const struct index_mapping key = { .pid = pid, .time = from };
	size_t i = index_array__lower_bound(&idx->maps, &key, index_mapping__cmp);
	size_t end = i;

	while (end < idx->maps.nr && m[end].pid == pid && m[end].time <= to)
		end++;
	*first = i;
	return end - i;
}

int deferred_index__read_mappings(struct deferred_index *idx, u32 pid, u64 from, u64 to,
				  deferred_index_mapping_fn fn, void *arg)
{
	const struct index_mapping *m = idx->maps.entries;
	size_t i, first, nr = deferred_index__count_mappings(idx, pid, from, to, &first);
	int err;

	for (i = first; i < first + nr; i++) {
		union perf_event *event = index__event_at(idx, m[i].pos, &err);

		if (!event)
			return err;
		if (!event__user_mapping(event))
			return -EIO;
		err = fn(event, arg);
		if (err)
			return err;
	}
	return 0;
}

u64 deferred_index__refused(const struct deferred_index *idx, enum deferred_index_refusal why)
{
	return idx && why < DEFERRED_INDEX__NR_REFUSALS ? idx->refused[why] : 0;
}
