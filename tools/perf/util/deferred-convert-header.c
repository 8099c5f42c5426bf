// SPDX-License-Identifier: GPL-2.0
/*
 * perf stitch (convert mode): the header of the output, from the input's.
 *
 * A file's header is written after its data (perf_session__inject_header()),
 * its features copied from the input's sections, or from the records a
 * pipe input sent.  A pipe output made from a file starts with the records
 * perf record writes to a pipe, made from the file's header.  Either way
 * the attrs lose their defer bits, in HEADER_EVENT_DESC too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <perf/event.h>
#include <internal/lib.h>

#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "session.h"
#include "synthetic-events.h"
#include "deferred-convert-internal.h"
#include "deferred-stitch.h"

void deferred_convert__clear_attr(struct perf_event_attr *attr)
{
	attr->defer_callchain = 0;
	attr->defer_output = 0;
}

/*
 * The attr sizes perf has known, smallest first.  perf before 5.13 refuses
 * a file whose attrs are larger than its own struct (read_attr()), so a
 * file gets the smallest that holds every non-zero field.
 */
static const u32 attr_sizes[] = {
	PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER1, PERF_ATTR_SIZE_VER2, PERF_ATTR_SIZE_VER3,
	PERF_ATTR_SIZE_VER4, PERF_ATTR_SIZE_VER5, PERF_ATTR_SIZE_VER6, PERF_ATTR_SIZE_VER7,
	PERF_ATTR_SIZE_VER8, PERF_ATTR_SIZE_VER9,
};

u32 deferred_convert__attr_size(const struct perf_event_attr *attr)
{
	const unsigned char *p = (const unsigned char *)attr;
	size_t end = sizeof(*attr), i;

	while (end > PERF_ATTR_SIZE_VER0 && !p[end - 1])
		end--;
	for (i = 0; i < ARRAY_SIZE(attr_sizes); i++) {
		if (end <= attr_sizes[i])
			return attr_sizes[i];
	}
	return sizeof(*attr);
}

void deferred_convert__check_attr_tail(struct cvt *cvt, const void *attr, size_t size,
				       const char *name, int name_len)
{
	const unsigned char *p = attr;
	size_t i;

	for (i = sizeof(struct perf_event_attr); i < size; i++) {
		if (p[i])
			break;
	}
	if (i >= size)
		return;
	cvt->stats->attrs_cut++;
	pr_warning("%s: event %.*s: its attr has non-zero fields beyond the %zu bytes this perf knows (at byte %zu of %zu), left out\n",
		   cvt->opts->input, name_len, name, sizeof(struct perf_event_attr), i, size);
}

/* ---- header features: copied from the input, event descriptions patched ---- */

/*
 * HEADER_EVENT_DESC: u32 nr, u32 attr size, then per event: the attr, u32
 * nr_ids, the name (u32 len + len bytes), u64 ids[nr_ids].  Written with
 * the defer bits cleared, the attrs at the smallest size that holds them
 * all; @out has @size bytes.  A pass checks the events and finds that
 * size, a second one writes them.
 */
int deferred_convert__fix_event_desc(struct cvt *cvt, const char *in, size_t size,
				     char *out, size_t *out_size)
{
	u32 out_attr_size = PERF_ATTR_SIZE_VER0;
	struct event_desc_entry e;
	struct event_desc_iter it;
	char *q = out;
	int pass, err;

	for (pass = 0; pass < 2; pass++) {
		err = event_desc__begin(&it, (char *)in, size);
		if (err)
			goto bad;
		if (pass) {
			memcpy(q, &it.nr, sizeof(u32));
			memcpy(q + sizeof(u32), &out_attr_size, sizeof(u32));
			q += 2 * sizeof(u32);
		}
		while ((err = event_desc__next(&it, &e)) > 0) {
			struct perf_event_attr attr;
			size_t rest = e.size - it.attr_size;

			memset(&attr, 0, sizeof(attr));
			memcpy(&attr, e.attr, min_t(u32, it.attr_size, sizeof(attr)));
			deferred_convert__clear_attr(&attr);
			if (!pass) {
				out_attr_size = max(out_attr_size,
						    deferred_convert__attr_size(&attr));
				/* a pipe's attrs were checked as they came */
				if (!cvt->pipe_in)
					deferred_convert__check_attr_tail(cvt, e.attr, it.attr_size,
									  e.name,
									  strnlen(e.name,
										  e.name_len));
			} else {
				attr.size = out_attr_size;
				memcpy(q, &attr, out_attr_size);
				q += out_attr_size;
				memcpy(q, e.attr + it.attr_size, rest);
				q += rest;
			}
		}
		if (err)
			goto bad;
		/* never larger than the input's: @out has its size */
		out_attr_size = min(out_attr_size, it.attr_size);
	}
	*out_size = q - out;
	return 0;
bad:
	pr_err("%s: malformed event descriptions (HEADER_EVENT_DESC)\n", cvt->opts->input);
	return -EINVAL;
}

struct cvt_feat_copier {
	struct feat_copier	fc;
	struct cvt		*cvt;
};

/*
 * The input's header feature @feat, as it is written: read from the
 * file's section (HEADER_EVENT_DESC fixed), or as a pipe input sent it.
 * *@data is to be freed.
 */
static int cvt__read_feat(struct cvt *cvt, int feat, void **data, size_t *size)
{
	struct perf_file_section *sec = &cvt->secs[feat];
	int fd = perf_data__fd(cvt->session->data);
	char *buf, *fixed;
	struct stat st;
	int err;

	*data = NULL;
	if (cvt->pipe_in) {
		/* only what the pipe sent has its bit set */
		*data = memdup(cvt->feat_data[feat], cvt->feat_size[feat] ?: 1);
		*size = cvt->feat_size[feat];
		return *data ? 0 : -ENOMEM;
	}
	if (!sec->offset) {
		/* every feature written is one of the input's */
		pr_err("%s: header feature %d has no section\n", cvt->opts->input, feat);
		return -EINVAL;
	}
	/* a section past the end of the file: corrupt, not a size to allocate */
	if (fstat(fd, &st) || sec->offset > (u64)st.st_size ||
	    sec->size > (u64)st.st_size - sec->offset) {
		pr_err("%s: header feature %d: its section (at %#" PRIx64 ", %" PRIu64 " bytes) ends past the end of the file\n",
		       cvt->opts->input, feat, (u64)sec->offset, (u64)sec->size);
		return -EINVAL;
	}
	*size = sec->size;
	buf = malloc(sec->size ?: 1);
	if (!buf)
		return -ENOMEM;
	if (preadn(fd, buf, sec->size, sec->offset) != (ssize_t)sec->size) {
		pr_err("%s: cannot read header feature %d at %#" PRIx64 "\n", cvt->opts->input,
		       feat, (u64)sec->offset);
		free(buf);
		return -EIO;
	}
	if (feat != HEADER_EVENT_DESC) {
		*data = buf;
		return 0;
	}
	fixed = malloc(sec->size ?: 1);
	err = -ENOMEM;
	if (fixed)
		err = deferred_convert__fix_event_desc(cvt, buf, sec->size, fixed, size);
	free(buf);
	if (err)
		free(fixed);
	else
		*data = fixed;
	return err;
}

static int cvt__copy_feat(struct feat_copier *fc, int feat, struct feat_writer *fw)
{
	struct cvt *cvt = container_of(fc, struct cvt_feat_copier, fc)->cvt;
	size_t size;
	void *data;
	int err;

	err = cvt__read_feat(cvt, feat, &data, &size);
	if (!err)
		err = fw->write(fw, data, size);
	free(data);
	if (err)
		return cvt__fail(cvt, err < 0 ? err : -EIO);
	return 1;
}

/* ---- file to pipe: the header records, from the input's header ---- */

static int cvt__synth_write(const struct perf_tool *tool, union perf_event *event,
			    struct perf_sample *sample __maybe_unused,
			    struct machine *machine __maybe_unused)
{
	return cvt__write(container_of(tool, struct cvt, tool), event, -1);
}

/* The attrs as every output has them: no defer bits, this perf's size. */
void deferred_convert__clear_attrs(struct evlist *evlist)
{
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		deferred_convert__clear_attr(&evsel->core.attr);
		evsel->core.attr.size = sizeof(evsel->core.attr);
	}
}

static int cvt__pipe_feature(struct cvt *cvt, int feat)
{
	struct perf_record_header_feature *fe = &cvt->ev->feat;
	size_t size, max = CONVERT_MAX_EVENT - sizeof(*fe);
	void *data;
	int err;

	err = cvt__read_feat(cvt, feat, &data, &size);
	if (err)
		return err;
	if (PERF_ALIGN(size, sizeof(u64)) > max) {
		/* perf_event__synthesize_features() leaves those out too */
		pr_warning("%s: header feature %s (%zu bytes) does not fit in a pipe record, left out\n",
			   cvt->opts->input, feat_ops[feat].name, size);
		free(data);
		return 0;
	}
	memset(fe, 0, sizeof(*fe) + PERF_ALIGN(size, sizeof(u64)));
	fe->header.type = PERF_RECORD_HEADER_FEATURE;
	fe->header.size = sizeof(*fe) + PERF_ALIGN(size, sizeof(u64));
	fe->feat_id = feat;
	memcpy(fe->data, data, size);
	free(data);
	return cvt__write(cvt, cvt->ev, -1);
}

/* The tracing data follows its record, padded to 8 bytes. */
static int cvt__pipe_tracing_data(struct cvt *cvt)
{
	struct perf_record_header_tracing_data td = {
		.header.type	= PERF_RECORD_HEADER_TRACING_DATA,
		.header.size	= sizeof(td),
	};
	static const u64 zero;
	size_t size;
	void *data;
	int err;

	err = cvt__read_feat(cvt, HEADER_TRACING_DATA, &data, &size);
	if (err)
		return err;
	td.size = PERF_ALIGN(size, sizeof(u64));
	err = cvt__write(cvt, (union perf_event *)&td, -1);
	if (!err)
		err = stitch_buf__write(cvt->out, data, size);
	if (!err)
		err = stitch_buf__write(cvt->out, &zero, td.size - size);
	cvt->round_bytes += td.size;
	free(data);
	return err;
}

/* HEADER_BUILD_ID holds PERF_RECORD_HEADER_BUILD_ID records, but for their type. */
/*
 * A HEADER_BUILD_ID entry as a pipe record: its file name padded with zeros
 * to a multiple of 8 bytes (the section packs them 4 bytes past one), as
 * perf 7.2 refuses a record of its type of any other size.
 */
static int cvt__write_build_id(struct cvt *cvt, const struct perf_record_header_build_id *bid)
{
	union perf_event *ev = cvt->ev;
	size_t size = PERF_ALIGN(bid->header.size, sizeof(u64));

	if (size > CONVERT_MAX_EVENT)
		return -EINVAL;
	memset(ev, 0, size);
	memcpy(ev, bid, bid->header.size);
	ev->header.size = size;
	return cvt__write(cvt, ev, -1);
}

static int cvt__pipe_build_ids(struct cvt *cvt)
{
	struct perf_record_header_build_id *bid;
	size_t size, pos;
	void *data;
	int err;

	err = cvt__read_feat(cvt, HEADER_BUILD_ID, &data, &size);
	for (pos = 0; !err && pos < size; pos += bid->header.size) {
		bid = data + pos;
		if (size - pos < sizeof(*bid) || bid->header.size < sizeof(*bid) ||
		    bid->header.size > size - pos) {
			pr_err("%s: malformed build id at %#zx of the HEADER_BUILD_ID section\n",
			       cvt->opts->input, pos);
			err = -EINVAL;
			break;
		}
		bid->header.type = PERF_RECORD_HEADER_BUILD_ID;
		err = cvt__write_build_id(cvt, bid);
	}
	free(data);
	return err;
}

/*
 * What perf record writes to a pipe before the data (see
 * perf_event__synthesize_for_pipe()), from the input's header rather than
 * the host converting: the attrs, the features pipe readers take, the
 * end-of-features mark, the tracing data, the build ids.
 */
int deferred_convert__write_pipe_header(struct cvt *cvt)
{
	struct perf_session *session = cvt->session;
	struct perf_header *header = &session->header;
	struct perf_record_header_feature mark = {
		.header.type	= PERF_RECORD_HEADER_FEATURE,
		.header.size	= sizeof(mark),
		.feat_id	= HEADER_LAST_FEATURE,
	};
	struct evsel *evsel;
	int feat, err;

	err = perf_header__write_pipe(cvt->out->fd);
	if (err < 0)
		return err;
	deferred_convert__clear_attrs(session->evlist);
	evlist__for_each_entry(session->evlist, evsel) {
		err = perf_event__synthesize_attr(&cvt->tool, &evsel->core.attr, evsel->core.ids,
						  evsel->core.id, cvt__synth_write);
		if (err)
			return err;
	}
	for (feat = HEADER_FIRST_FEATURE; feat < HEADER_LAST_FEATURE; feat++) {
		/* the data is written uncompressed */
		if (!feat_ops[feat].synthesize || feat == HEADER_COMPRESSED ||
		    !perf_header__has_feat(header, feat))
			continue;
		err = cvt__pipe_feature(cvt, feat);
		if (err)
			return err;
	}
	err = cvt__write(cvt, (union perf_event *)&mark, -1);
	if (!err && perf_header__has_feat(header, HEADER_TRACING_DATA))
		err = cvt__pipe_tracing_data(cvt);
	if (!err && perf_header__has_feat(header, HEADER_BUILD_ID))
		err = cvt__pipe_build_ids(cvt);
	return err;
}

/* ---- a file's header, at the end ---- */

/* An entry of a file's attrs section: util/header.c's struct perf_file_attr. */
struct cvt_file_attr {
	struct perf_event_attr		attr;
	struct perf_file_section	ids;
};

static int cvt__write_at(int fd, const void *buf, size_t size, off_t offset)
{
	if (lseek(fd, offset, SEEK_SET) == (off_t)-1 || writen(fd, buf, size) != (ssize_t)size)
		return -1;
	return 0;
}

/*
 * perf_session__inject_header() writes the attrs section at this perf's
 * attr size: written again over it at @attr_size, each attr followed by
 * the section of its ids as before, zeros up to the old end, and the file
 * header's attr_size and attrs fields.  perf reads the attrs one after the
 * other, each as large as its size field says, then its ids section.
 * Nothing is read back: a device written in place is write only.
 */
static int cvt__shrink_attrs(struct cvt *cvt, u32 attr_size)
{
	struct evlist *evlist = cvt->session->evlist;
	size_t entry = attr_size + sizeof(struct perf_file_section);
	size_t len = evlist__nr_entries(evlist) * sizeof(struct cvt_file_attr);
	u64 attrs[3];	/* perf_file_header: attr_size, attrs.offset, attrs.size */
	off_t offset = sizeof(struct perf_file_header);
	struct perf_file_section ids;
	struct perf_event_attr attr;
	struct evsel *evsel;
	char *buf, *to;
	int err;

	if (attr_size == sizeof(attr))
		return 0;
	buf = zalloc(len ?: 1);
	if (!buf)
		return -ENOMEM;
	to = buf;
	evlist__for_each_entry(evlist, evsel) {
		offset += evsel->core.ids * sizeof(u64);
		attr = evsel->core.attr;
		attr.size = attr_size;
		ids.offset = evsel->id_offset;
		ids.size = evsel->core.ids * sizeof(u64);
		memcpy(to, &attr, attr_size);
		memcpy(to + attr_size, &ids, sizeof(ids));
		to += entry;
	}
	err = cvt__write_at(cvt->out->fd, buf, len, offset);
	free(buf);
	if (err)
		return -EIO;
	attrs[0] = entry;
	attrs[1] = offset;
	attrs[2] = evlist__nr_entries(evlist) * entry;
	BUILD_BUG_ON(offsetof(struct perf_file_header, attrs) !=
		     offsetof(struct perf_file_header, attr_size) + sizeof(u64));
	return cvt__write_at(cvt->out->fd, attrs, sizeof(attrs),
			     offsetof(struct perf_file_header, attr_size)) ? -EIO : 0;
}

int deferred_convert__write_header(struct cvt *cvt)
{
	struct perf_session *session = cvt->session;
	struct perf_header *header = &session->header;
	struct cvt_feat_copier fc = { .fc.copy = cvt__copy_feat, .cvt = cvt };
	u32 attr_size = PERF_ATTR_SIZE_VER0;
	struct evsel *evsel;
	int err;

	deferred_convert__clear_attrs(session->evlist);
	evlist__for_each_entry(session->evlist, evsel)
		attr_size = max(attr_size, deferred_convert__attr_size(&evsel->core.attr));
	/* the data is written uncompressed */
	perf_header__clear_feat(header, HEADER_COMPRESSED);
	header->data_offset = cvt->data_offset;
	header->data_size = cvt->out->written;
	/* ids, attrs, data, features: the attrs where cvt__shrink_attrs() expects them */
	err = perf_session__inject_header(session, session->evlist, cvt->out->fd, &fc.fc,
					  /*write_attrs_after_data=*/false);
	return err ?: cvt__shrink_attrs(cvt, attr_size);
}
