// SPDX-License-Identifier: GPL-2.0
/*
 * perf stitch -F pprof: the aggregated samples as a pprof profile, the
 * Profile message of github.com/google/pprof's proto/profile.proto,
 * gzip-compressed: what pprof, Pyroscope and Parca take in.
 *
 *  - sample_type: samples/count, then the event's period, cpu/nanoseconds
 *    when every sample weighs a cpu-clock or task-clock period,
 *    offcpu-time/nanoseconds with --count=off-cpu, wall/nanoseconds with
 *    --count=wall, else events/count;
 *    default_sample_type the latter (samples with --count=samples);
 *  - one Sample per (stack, thread, comm, stitch status), its locations
 *    leaf first, values (samples, weight), string labels comm (at the
 *    sample, as perf script and folded stacks show it), pid, tid and
 *    stitch ("stitched", "orphan: <reason>", "not deferred", "not
 *    stitched");
 *  - one Location and one Function per frame, the function named as perf
 *    script names the frame (the symbol, "[<dso file>]", "[unknown]", the
 *    "[user stack lost: <reason>]" pseudo-frame); the location at the
 *    first address seen for it, in the Mapping of its dso (the map it was
 *    first found in: start, limit, file offset, file name, build id) when
 *    it has one.  A function inlined at an address is a frame, and so a
 *    Location, of its own, as perf script prints it: a Location stands
 *    for a frame, not for an address, so its Lines cannot hold the
 *    inlined functions of one address;
 *  - duration_nanos: first to last sample exported.
 *
 * The message is built in memory (its size grows with the distinct
 * stacks, not with the samples) and deflated to the output in one go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#ifdef HAVE_ZLIB_SUPPORT
#include <zlib.h>
#endif

#include "debug.h"
#include "hashmap.h"
#include "deferred-export.h"
#include "deferred-export-stacks.h"

/* field numbers of profile.proto */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
	PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE, PROFILE_PERIOD, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL,
	LABEL_KEY = 1, LABEL_STR,
	MAPPING_ID = 1, MAPPING_START, MAPPING_LIMIT, MAPPING_OFFSET, MAPPING_FILENAME,
	MAPPING_BUILD_ID, MAPPING_HAS_FUNCTIONS,
	LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* A growing buffer of protobuf; the first failure sticks. */
struct pb {
	unsigned char	*buf;
	size_t		len, alloc;
	int		err;
};

static void pb__bytes(struct pb *pb, const void *p, size_t n)
{
	if (pb->err)
		return;
	if (pb->len + n > pb->alloc) {
		size_t alloc = max(pb->alloc * 2, pb->len + n + 256);
		void *buf = realloc(pb->buf, alloc);

		if (!buf) {
			pb->err = -ENOMEM;
			return;
		}
		pb->buf = buf;
		pb->alloc = alloc;
	}
	memcpy(pb->buf + pb->len, p, n);
	pb->len += n;
}

static void pb__varint(struct pb *pb, u64 v)
{
	unsigned char b[10];
	size_t n = 0;

	do {
		b[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb__bytes(pb, b, n);
}

static void pb__key(struct pb *pb, u32 field, u32 wire)
{
	pb__varint(pb, (u64)field << 3 | wire);
}

/* A scalar; 0, the default of proto3, is not written. */
static void pb__u64(struct pb *pb, u32 field, u64 v)
{
	if (!v)
		return;
	pb__key(pb, field, WIRE_VARINT);
	pb__varint(pb, v);
}

static void pb__len(struct pb *pb, u32 field, const void *p, size_t n)
{
	pb__key(pb, field, WIRE_LEN);
	pb__varint(pb, n);
	pb__bytes(pb, p, n);
}

/* @sub, a finished message or packed field, as field @field of @pb; @sub is emptied */
static void pb__sub(struct pb *pb, u32 field, struct pb *sub)
{
	if (sub->err && !pb->err)
		pb->err = sub->err;
	pb__len(pb, field, sub->buf, sub->len);
	sub->len = 0;
}

/* The string table: index 0 is "" */
struct pprof_strings {
	struct hashmap	*ids;		/* string -> index + 1 */
	struct pb	table;		/* the string_table fields */
	size_t		nr;
};

static size_t str__hash(long key, void *ctx __maybe_unused)
{
	return str_hash((const char *)key);
}

static bool str__equal(long a, long b, void *ctx __maybe_unused)
{
	return !strcmp((const char *)a, (const char *)b);
}

static u64 pprof__string(struct pprof_strings *st, const char *s)
{
	long id;
	char *key;

	if (!*s)
		return 0;
	if (hashmap__find(st->ids, s, &id))
		return id - 1;
	key = strdup(s);
	if (!key || hashmap__add(st->ids, key, st->nr + 1)) {
		free(key);
		st->table.err = -ENOMEM;
		return 0;
	}
	pb__len(&st->table, PROFILE_STRING_TABLE, s, strlen(s));
	return st->nr++;
}

static void pprof__value_type(struct pb *pb, u32 field, struct pprof_strings *st,
			      const char *type, const char *unit, struct pb *sub)
{
	pb__u64(sub, VALUE_TYPE_TYPE, pprof__string(st, type));
	pb__u64(sub, VALUE_TYPE_UNIT, pprof__string(st, unit));
	pb__sub(pb, field, sub);
}

static void pprof__label(struct pb *sample, struct pprof_strings *st, const char *key,
			 const char *value, struct pb *sub)
{
	pb__u64(sub, LABEL_KEY, pprof__string(st, key));
	pb__u64(sub, LABEL_STR, pprof__string(st, value));
	pb__sub(sample, SAMPLE_LABEL, sub);
}

/* reader__status() made a reason it does not know 0: "unknown", not the name of 0 */
static void pprof__orphan_status(char *buf, size_t size, int reason)
{
	const char *name = reason ? deferred_stitch__reason_name(reason) : NULL;

	snprintf(buf, size, "orphan: %s", name ?: "unknown");
}

static void pprof__samples(struct pb *pb, struct export_stacks *es, struct pprof_strings *st)
{
	struct pb sub = { 0 }, packed = { 0 }, label = { 0 };
	char num[32], status[96];
	u32 i, f;

	for (i = 0; i < es->nr_pprof && !pb->err; i++) {
		const struct export_pprof_sample *s = &es->pprof[i];
		const struct export_stack *stack = &es->stacks[s->stack];
		const struct export_thread *t = &es->threads[s->thread];

		for (f = 0; f < stack->len; f++)	/* leaf first, as pprof wants */
			pb__varint(&packed, es->stack_frames[stack->off + f] + 1);
		pb__sub(&sub, SAMPLE_LOCATION_ID, &packed);
		pb__varint(&packed, s->samples);
		pb__varint(&packed, s->weight);
		pb__sub(&sub, SAMPLE_VALUE, &packed);
		pprof__label(&sub, st, "comm", es->roots[s->comm], &label);
		snprintf(num, sizeof(num), "%d", t->pid);
		pprof__label(&sub, st, "pid", num, &label);
		snprintf(num, sizeof(num), "%d", t->tid);
		pprof__label(&sub, st, "tid", num, &label);
		if (s->status == EXPORT_STATUS__NOT_DEFERRED)
			snprintf(status, sizeof(status), "not deferred");
		else if (s->status == EXPORT_STATUS__STITCHED)
			snprintf(status, sizeof(status), "stitched");
		else if (s->status == EXPORT_STATUS__UNSTITCHED)
			snprintf(status, sizeof(status), "not stitched");
		else
			pprof__orphan_status(status, sizeof(status),
					     s->status - EXPORT_STATUS__ORPHAN);
		pprof__label(&sub, st, "stitch", status, &label);
		pb__sub(pb, PROFILE_SAMPLE, &sub);
	}
	free(sub.buf);
	free(packed.buf);
	free(label.buf);
}

/* One mapping per dso, numbered in the order of the frames; *@ids: per frame, 0: none */
static int pprof__mappings(struct pb *pb, struct export_stacks *es, struct pprof_strings *st,
			   u32 **ids)
{
	struct pb sub = { 0 };
	u32 i, j, nr = 0;

	*ids = calloc(es->nr_frames ?: 1, sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	for (i = 0; i < es->nr_frames; i++) {
		const struct export_frame *f = &es->frames[i];

		if (!f->dso_key)
			continue;
		/* the first frame of its dso has the mapping: few dsos, a short walk */
		for (j = 0; j < i && es->frames[j].dso_key != f->dso_key; j++)
			;
		if (j < i) {
			(*ids)[i] = (*ids)[j];
			continue;
		}
		(*ids)[i] = ++nr;
		pb__u64(&sub, MAPPING_ID, nr);
		pb__u64(&sub, MAPPING_START, f->map_start);
		pb__u64(&sub, MAPPING_LIMIT, f->map_end);
		pb__u64(&sub, MAPPING_OFFSET, f->map_pgoff);
		pb__u64(&sub, MAPPING_FILENAME, pprof__string(st, f->dso_name));
		pb__u64(&sub, MAPPING_BUILD_ID, pprof__string(st, f->build_id ?: ""));
		pb__u64(&sub, MAPPING_HAS_FUNCTIONS, 1);
		pb__sub(pb, PROFILE_MAPPING, &sub);
	}
	free(sub.buf);
	return 0;
}

static int pprof__locations(struct pb *pb, struct export_stacks *es, struct pprof_strings *st)
{
	struct pb sub = { 0 }, line = { 0 };
	u32 *mapping, i;
	int err;

	err = pprof__mappings(pb, es, st, &mapping);
	if (err)
		return err;
	for (i = 0; i < es->nr_frames && !pb->err; i++) {
		char *name = export_frame__name(&es->frames[i]);
		u64 name_id;

		if (!name) {
			err = -ENOMEM;
			break;
		}
		name_id = pprof__string(st, name);
		free(name);
		pb__u64(&sub, FUNCTION_ID, i + 1);
		pb__u64(&sub, FUNCTION_NAME, name_id);
		pb__u64(&sub, FUNCTION_SYSTEM_NAME, name_id);
		pb__sub(pb, PROFILE_FUNCTION, &sub);

		pb__u64(&sub, LOCATION_ID, i + 1);
		pb__u64(&sub, LOCATION_MAPPING_ID, mapping[i]);
		pb__u64(&sub, LOCATION_ADDRESS, es->frames[i].addr);
		pb__u64(&line, LINE_FUNCTION_ID, i + 1);
		pb__sub(&sub, LOCATION_LINE, &line);
		pb__sub(pb, PROFILE_LOCATION, &sub);
	}
	free(mapping);
	free(sub.buf);
	free(line.buf);
	return err;
}

#ifdef HAVE_ZLIB_SUPPORT
static int pprof__gzip(FILE *fp, const struct pb *pb)
{
	unsigned char out[65536];
	z_stream zs = { 0 };
	int ret;

	/* windowBits 15 + 16: a gzip header and trailer */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = pb->buf;
	zs.avail_in = pb->len;
	do {
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		ret = deflate(&zs, Z_FINISH);
		if (fwrite(out, 1, sizeof(out) - zs.avail_out, fp) != sizeof(out) - zs.avail_out) {
			ret = Z_ERRNO;
			break;
		}
	} while (ret == Z_OK);
	deflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -EIO;
}
#else
static int pprof__gzip(FILE *fp __maybe_unused, const struct pb *pb __maybe_unused)
{
	pr_err("perf stitch -F pprof: this perf was built without zlib\n");
	return -ENOTSUP;
}
#endif

int export_stacks__write_pprof(struct export_stacks *es, FILE *fp,
			       struct deferred_export_stats *stats)
{
	bool ns = es->weighed && es->weighed_ns == es->weighed;
	/* perf record --off-cpu's event is offcpu-time */
	const char *type = es->opts->wall ? "wall" : es->opts->off_cpu ? "offcpu-time" :
			   ns ? "cpu" : "events";
	struct pprof_strings st = { .nr = 1 };
	struct pb pb = { 0 }, sub = { 0 };
	struct hashmap_entry *cur;
	size_t bkt;
	int err;

	st.ids = hashmap__new(str__hash, str__equal, NULL);
	if (IS_ERR_OR_NULL(st.ids))
		return -ENOMEM;
	pb__len(&st.table, PROFILE_STRING_TABLE, "", 0);

	pprof__value_type(&pb, PROFILE_SAMPLE_TYPE, &st, "samples", "count", &sub);
	pprof__value_type(&pb, PROFILE_SAMPLE_TYPE, &st, type, ns ? "nanoseconds" : "count", &sub);
	pprof__samples(&pb, es, &st);
	err = pprof__locations(&pb, es, &st);
	pb__u64(&pb, PROFILE_DURATION_NANOS, es->last_time - es->first_time);
	pprof__value_type(&pb, PROFILE_PERIOD_TYPE, &st, type, ns ? "nanoseconds" : "count", &sub);
	pb__u64(&pb, PROFILE_DEFAULT_SAMPLE_TYPE,
		pprof__string(&st, es->opts->count_samples ? "samples" : type));
	/* the strings last: every one is known now */
	pb__bytes(&pb, st.table.buf, st.table.len);
	err = err ?: pb.err ?: st.table.err ?: sub.err;
	if (!err)
		err = pprof__gzip(fp, &pb);

	hashmap__for_each_entry(st.ids, cur, bkt)
		free((void *)cur->pkey);
	hashmap__free(st.ids);
	free(st.table.buf);
	free(pb.buf);
	free(sub.buf);
	stats->lines = es->nr_pprof;	/* the Sample messages */
	return err ?: ferror(fp) ? -EIO : 0;
}
