// SPDX-License-Identifier: GPL-2.0
/*
 * Emulation of deferred user callchains: writing the output.
 *
 * The records the kernel model wrote get their faults (--drop, --duplicate,
 * --bogus-ip) and their place among the input's events; the data is then
 * written with the samples' user parts replaced by the cookie, and the
 * header features are copied from the input with the event descriptions
 * patched.
 *
 * File order.  perf record copies the per-CPU buffers pass by pass and
 * separates passes with PERF_RECORD_FINISHED_ROUND.  A record written at time
 * t on CPU c goes into the first round whose events reach t (a pass copies
 * what was written before it ran), into CPU c's stretch of that round, after
 * the events of CPU c not later than t.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <perf/event.h>
#include <internal/lib.h>
#include <unwind-cookie/kmodel.h>

#include "data.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "sample.h"
#include "session.h"
#include "synthetic-events.h"
#include "deferred-emulate.h"
#include "deferred-callchain.h"
#include "deferred-emulate-internal.h"
#include "deferred-stitch.h"
#include "stitch-output.h"

/* ---- the records ---- */

/* The first round whose events reach @time: perf record had copied it by then. */
static u32 emu__record_round(const u64 *round_max, u32 nr_rounds, u64 time)
{
	u32 lo = 0, hi = nr_rounds;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (round_max[mid] >= time)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < nr_rounds ? lo : nr_rounds - 1;
}

static int emu__cmp_record(const void *a, const void *b)
{
	const struct emu_record *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->log_idx < y->log_idx ? -1 : x->log_idx > y->log_idx;
}

/* The timed events, by round, CPU and time: where records go. */
struct emu_key {
	u32	round;
	u32	cpu;
	u64	time;
	size_t	idx;
};

static int emu__cmp_key(const void *a, const void *b)
{
	const struct emu_key *x = a, *y = b;

	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The first key after (@round, @cpu, @time). */
static size_t emu__key_after(const struct emu_key *keys, size_t nr, u32 round, u32 cpu, u64 time)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct emu_key *k = &keys[mid];

		if (k->round < round || (k->round == round && (k->cpu < cpu ||
		    (k->cpu == cpu && k->time <= time))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Where @r goes in round @round, whose events are [@begin, @end): after
 * the last event of its CPU not later than it, else before that CPU's
 * first event, else after the CPUs below it (the buffers are copied in CPU
 * order), else before those above, else before the round's end.
 */
static size_t emu__record_pos(const struct emu *emu, const struct emu_key *keys, size_t nr,
			      const struct emu_record *r, u32 round, size_t begin, size_t end)
{
	size_t at = emu__key_after(keys, nr, round, r->cpu, r->time);
	const struct emu_key *prev = at > 0 ? &keys[at - 1] : NULL;
	const struct emu_key *next = at < nr ? &keys[at] : NULL;

	if (prev && prev->round == round && prev->cpu == r->cpu)
		return prev->idx + 1;
	if (next && next->round == round && next->cpu == r->cpu)
		return next->idx;
	/* no event of this CPU in the round */
	if (prev && prev->round == round)
		return prev->idx + 1;
	if (next && next->round == round)
		return next->idx;
	if (end > begin && emu->ev[end - 1].kind == EMU_K_ROUND)
		return end - 1;
	return end;
}

int deferred_emulate__place_records(struct emu *emu)
{
	const struct unwind_kmodel_event *log;
	size_t nr_log, i, nr_keys = 0, *round_begin = NULL, *by_log = NULL;
	struct emu_key *keys = NULL;
	u32 nr_rounds = emu->round + 1, r;
	u64 *round_max = NULL, max_time = 0;
	int err = -ENOMEM;

	log = unwind_kmodel__events(emu->km, &nr_log);
	for (i = 0; i < nr_log; i++)
		if (log[i].type == UNWIND_KMODEL_RECORD)
			emu->nr_records++;
	emu->records = calloc(emu->nr_records ?: 1, sizeof(*emu->records));
	round_max = calloc(nr_rounds, sizeof(*round_max));
	round_begin = calloc(nr_rounds + 1, sizeof(*round_begin));
	if (!emu->records || !round_max || !round_begin)
		goto out;

	/* rounds: their extent, and the latest time reached so far */
	for (i = 0, r = 0; i < emu->nr_ev; i++) {
		const struct emu_event *e = &emu->ev[i];

		while (r < e->round)
			round_begin[++r] = i;
		if ((e->flags & EMU_F_TIMED) && e->time > max_time)
			max_time = e->time;
		round_max[e->round] = max_time;
	}
	while (r < nr_rounds)
		round_begin[++r] = emu->nr_ev;
	for (r = 1; r < nr_rounds; r++)
		round_max[r] = max(round_max[r], round_max[r - 1]);

	keys = calloc(emu->nr_ev ?: 1, sizeof(*keys));
	if (!keys)
		goto out;
	for (i = 0; i < emu->nr_ev; i++) {
		const struct emu_event *e = &emu->ev[i];

		if (!(e->flags & EMU_F_TIMED))
			continue;
		keys[nr_keys].round = e->round;
		keys[nr_keys].cpu = e->cpu;
		keys[nr_keys].time = e->time;
		keys[nr_keys++].idx = i;
	}
	qsort(keys, nr_keys, sizeof(*keys), emu__cmp_key);

	for (i = 0, emu->nr_records = 0; i < nr_log; i++) {
		struct emu_record *rec;
		u32 round;

		if (log[i].type != UNWIND_KMODEL_RECORD)
			continue;
		rec = &emu->records[emu->nr_records++];
		rec->log_idx = i;
		rec->entry = EMU_NONE;
		rec->time = log[i].time;
		rec->cpu = log[i].cpu;
		rec->copies = 1;
		rec->bogus_at = EMU_NONE;

		/* every draw is made, so each stream depends on its fraction only */
		if (emu_rng__chance(&emu->rng_drop, emu->opts->drop))
			rec->copies = 0;
		if (emu_rng__chance(&emu->rng_dup, emu->opts->duplicate) && rec->copies)
			rec->copies = 2;
		if (emu_rng__chance(&emu->rng_bogus, emu->opts->bogus_ip) && rec->copies)
			rec->bogus_at = 0;
		if (rec->bogus_at != EMU_NONE) {
			rec->bogus_at = emu_rng__next(&emu->rng_bogus) % (log[i].nr + 1);
			rec->bogus_ip = PERF_CONTEXT_MAX + emu_rng__next(&emu->rng_bogus) % 4095;
		} else {
			emu_rng__next(&emu->rng_bogus);
			emu_rng__next(&emu->rng_bogus);
		}

		round = emu__record_round(round_max, nr_rounds, rec->time);
		rec->pos = emu__record_pos(emu, keys, nr_keys, rec, round, round_begin[round],
					   round_begin[round + 1]);
	}

	/* the entries' records: log index -> record */
	by_log = malloc((nr_log ?: 1) * sizeof(*by_log));
	if (!by_log)
		goto out;
	for (i = 0; i < emu->nr_records; i++)
		by_log[emu->records[i].log_idx] = i;
	for (i = 0; i < emu->nr_entries; i++) {
		struct emu_entry *entry = &emu->entries[i];

		if (entry->record_idx == EMU_NONE)
			continue;
		entry->record = by_log[entry->record_idx];
		emu->records[entry->record].entry = i;
	}
	err = 0;
out:
	free(keys);
	free(by_log);
	free(round_max);
	free(round_begin);
	return err;
}

/* ---- writing ---- */

/* The tracking event's id on @cpu, for a record's sample_id. */
static u64 emu__track_id(struct emu *emu, u32 cpu)
{
	struct evsel *evsel = emu->tracking;

	if (cpu < emu->nr_cpus && emu->track_id[cpu])
		return emu->track_id[cpu];
	if (cpu < evsel->core.ids && evsel->core.ids == emu->nr_online)
		return evsel->core.id[cpu];
	return evsel->core.ids ? evsel->core.id[0] : 0;
}

static int emu__write_record(struct emu *emu, struct stitch_buf *out, const struct emu_record *rec)
{
	const struct unwind_kmodel_event *log = &unwind_kmodel__events(emu->km, NULL)[rec->log_idx];
	u64 nr = log->nr + (rec->bogus_at != EMU_NONE), i, k;
	struct perf_sample sample = {
		.pid	= log->pid,
		.tid	= log->tid,
		.time	= rec->time,
		.cpu	= rec->cpu,
	};
	struct perf_record_callchain_deferred *cd;
	size_t size, id_size;
	__u64 *array;
	u32 copy;
	int err = 0;

	sample.id = sample.stream_id = emu__track_id(emu, rec->cpu);
	size = sizeof(*cd) + nr * sizeof(u64) + 8 * sizeof(u64);
	if (size > USHRT_MAX) {
		pr_err("deferred callchain of %" PRIu64 " entries too long\n", nr);
		return -E2BIG;
	}
	cd = zalloc(size);
	if (!cd)
		return -ENOMEM;
	cd->header.type = PERF_RECORD_CALLCHAIN_DEFERRED;
	cd->header.misc = PERF_RECORD_MISC_USER;
	cd->cookie = log->cookie;
	cd->nr = nr;
	for (i = 0, k = 0; i < nr; i++) {
		if (rec->bogus_at != EMU_NONE && i == (u64)rec->bogus_at)
			cd->ips[i] = rec->bogus_ip;
		else
			cd->ips[i] = log->ips[k++];
	}
	array = &cd->ips[nr];
	id_size = perf_event__synthesize_id_sample(array, emu->tracking->core.attr.sample_type,
						   &sample);
	cd->header.size = sizeof(*cd) + nr * sizeof(u64) + id_size;
	for (copy = 0; copy < rec->copies && !err; copy++)
		err = stitch_buf__write(out, cd, cd->header.size);
	free(cd);
	return err;
}

/* A sample with its user part replaced by PERF_CONTEXT_USER_DEFERRED, cookie. */
static int emu__write_sample(struct emu *emu, struct stitch_buf *out, const struct emu_event *e)
{
	const struct unwind_kmodel_event *log;
	union perf_event *ev = e->event;
	size_t tail_off, tail_len;
	u64 nr, cookie;
	int err;

	if (e->model_idx == EMU_NONE)
		return stitch_buf__write(out, ev, ev->header.size);
	log = &unwind_kmodel__events(emu->km, NULL)[e->model_idx];
	cookie = log->cookie;
	if (!cookie)	/* the model refused to defer it */
		return stitch_buf__write(out, ev, ev->header.size);

	nr = e->user_at + 2;
	tail_off = e->chain_off + (1 + e->chain_nr) * sizeof(u64);
	tail_len = ev->header.size - tail_off;
	{
		struct perf_event_header hdr = ev->header;
		const u64 *ips = (const u64 *)((const char *)ev + e->chain_off) + 1;
		u64 marker[2] = { PERF_CONTEXT_USER_DEFERRED, cookie };

		hdr.size = ev->header.size - (e->chain_nr - nr) * sizeof(u64);
		err = stitch_buf__write(out, &hdr, sizeof(hdr));
		if (!err)
			err = stitch_buf__write(out, (const char *)ev + sizeof(hdr),
					     e->chain_off - sizeof(hdr));
		if (!err)
			err = stitch_buf__write(out, &nr, sizeof(nr));
		if (!err)
			err = stitch_buf__write(out, ips, e->user_at * sizeof(u64));
		if (!err)
			err = stitch_buf__write(out, marker, sizeof(marker));
		if (!err)
			err = stitch_buf__write(out, (const char *)ev + tail_off, tail_len);
	}
	return err;
}

static int emu__write_attr_event(struct emu *emu, struct stitch_buf *out, const struct emu_event *e)
{
	union perf_event *ev = e->event;
	struct perf_event_attr attr;
	size_t sz = min_t(size_t, ev->attr.attr.size ?: PERF_ATTR_SIZE_VER0, sizeof(attr));

	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, &ev->attr.attr, sz);
	deferred_emulate__set_attr_bits(emu, e->evsel, &attr);
	memcpy(&ev->attr.attr, &attr, sz);
	return stitch_buf__write(out, ev, ev->header.size);
}

int deferred_emulate__write_data(struct emu *emu, struct stitch_buf *out)
{
	size_t i, k = 0;
	int err = 0;

	qsort(emu->records, emu->nr_records, sizeof(*emu->records), emu__cmp_record);
	/* the entries point at records by index: redo it after sorting */
	for (i = 0; i < emu->nr_records; i++)
		if (emu->records[i].entry != EMU_NONE)
			emu->entries[emu->records[i].entry].record = i;

	for (i = 0; i <= emu->nr_ev && !err; i++) {
		for (; k < emu->nr_records && emu->records[k].pos == i && !err; k++)
			err = emu__write_record(emu, out, &emu->records[k]);
		if (err || i == emu->nr_ev)
			break;
		switch (emu->ev[i].kind) {
		case EMU_K_SAMPLE:
			err = emu__write_sample(emu, out, &emu->ev[i]);
			break;
		case EMU_K_ATTR:
			err = emu__write_attr_event(emu, out, &emu->ev[i]);
			break;
		default:
			err = stitch_buf__write(out, emu->ev[i].event,
						emu->ev[i].event->header.size);
			break;
		}
	}
	return err ?: stitch_buf__flush(out);
}

/* ---- header features: copied from the input, event descriptions patched ---- */

/*
 * HEADER_EVENT_DESC: u32 nr, u32 attr size, then per event: the attr, u32
 * nr_ids, the name (u32 len + len bytes), u64 ids[nr_ids].
 */
static int emu__patch_event_desc(struct emu *emu, void *buf, size_t size)
{
	struct evlist *evlist = emu->session->evlist;
	struct event_desc_entry e;
	struct event_desc_iter it;
	int err;

	err = event_desc__begin(&it, buf, size);
	if (err)
		return err;
	while ((err = event_desc__next(&it, &e)) > 0) {
		size_t sz = min_t(size_t, it.attr_size, sizeof(struct perf_event_attr));
		struct perf_event_attr attr;
		struct evsel *evsel;
		u64 id;

		if (e.nr_ids) {
			memcpy(&id, e.ids, sizeof(id));
			evsel = evlist__id2evsel(evlist, id);
		} else {
			evsel = evlist__find_evsel(evlist, it.i - 1);
		}
		if (!evsel)
			continue;
		memset(&attr, 0, sizeof(attr));
		memcpy(&attr, e.attr, sz);
		deferred_emulate__set_attr_bits(emu, evsel, &attr);
		memcpy(e.attr, &attr, sz);
	}
	return err;
}

struct emu_fc {
	struct feat_copier	fc;
	struct emu		*emu;
};

static int emu__copy_feat(struct feat_copier *fc, int feat, struct feat_writer *fw)
{
	struct emu *emu = container_of(fc, struct emu_fc, fc)->emu;
	struct perf_file_section *sec = &emu->secs[feat];
	int fd = perf_data__fd(emu->session->data);
	void *buf;
	int err;

	if (!sec->offset)
		return 0;	/* not in the input: perf writes it */
	buf = malloc(sec->size ?: 1);
	if (!buf)
		return -ENOMEM;
	err = preadn(fd, buf, sec->size, sec->offset) == (ssize_t)sec->size ? 0 : -EIO;
	if (!err && feat == HEADER_EVENT_DESC) {
		err = emu__patch_event_desc(emu, buf, sec->size);
		if (err)
			pr_err("cannot patch the event descriptions (HEADER_EVENT_DESC)\n");
	}
	if (!err)
		err = fw->write(fw, buf, sec->size);
	free(buf);
	return err ?: 1;
}

/* ---- the file: the data, then the header ---- */

int deferred_emulate__write_file(struct emu *emu, struct stitch_buf *out)
{
	struct perf_session *session = emu->session;
	struct perf_header *header = &session->header;
	struct emu_fc fc = { .fc.copy = emu__copy_feat, .emu = emu };
	struct evsel *evsel;
	u64 data_offset;
	int err, feat;

	evlist__for_each_entry(session->evlist, evsel)
		deferred_emulate__set_attr_bits(emu, evsel, &evsel->core.attr);
	data_offset = perf_session__data_offset(session->evlist);
	if (lseek(out->fd, data_offset, SEEK_SET) == (off_t)-1)
		return -errno;
	err = deferred_emulate__write_data(emu, out);
	if (err)
		return err;
	/* the data is written uncompressed */
	perf_header__clear_feat(header, HEADER_COMPRESSED);
	/* a newer perf's features: nothing here can write them */
	feat = HEADER_LAST_FEATURE;
	for_each_set_bit_from(feat, header->adds_features, HEADER_FEAT_BITS)
		perf_header__clear_feat(header, feat);
	header->data_offset = data_offset;
	header->data_size = out->written;
	return perf_session__inject_header(session, session->evlist, out->fd, &fc.fc,
					   /*write_attrs_after_data=*/false);
}
