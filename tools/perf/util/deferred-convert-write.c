// SPDX-License-Identifier: GPL-2.0
/*
 * perf stitch (convert mode): the output's data section.  Events are
 * written in time order through a stitch_buf, a
 * PERF_RECORD_FINISHED_ROUND between two events once CONVERT_ROUND_BYTES
 * were written since the last one, so that a reader flushing at a round
 * holds at most about two; a file's data starts after its attrs.  Below
 * both deferred-convert.c, which decides what to write, and
 * deferred-convert-header.c, which writes the header.
 */
#include <errno.h>
#include <unistd.h>
#include <linux/types.h>
#include <perf/event.h>

#include "event.h"
#include "header.h"
#include "session.h"
#include "deferred-convert.h"
#include "deferred-convert-internal.h"
#include "stitch-output.h"

/* A PERF_RECORD_FINISHED_ROUND after this many bytes of output. */
#define CONVERT_ROUND_BYTES	(256 * 1024)

static int cvt__write_round(struct cvt *cvt)
{
	struct perf_event_header round = {
		.type	= PERF_RECORD_FINISHED_ROUND,
		.size	= sizeof(round),
	};
	int err = stitch_buf__write(cvt->out, &round, sizeof(round));

	if (err)
		return err;
	cvt->stats->events++;
	cvt->stats->rounds++;
	cvt->round_bytes = 0;
	return 0;
}

/*
 * A file's data starts after the attrs: where that is, a pipe input says
 * only once its HEADER_ATTR records were read, at its first other event.
 */
int cvt__start_data(struct cvt *cvt)
{
	cvt->data_started = true;
	cvt->data_written = cvt->out->written;
	if (cvt->pipe_out)
		return 0;
	cvt->data_offset = perf_session__data_offset(cvt->session->evlist);
	if (lseek(cvt->out->fd, cvt->data_offset, SEEK_SET) == (off_t)-1)
		return -errno;
	return 0;
}

/*
 * Writes @event, which happened at @time (-1 or 0: no time), at *@pos if
 * @pos.  Rounds go between events only, at the first event after
 * CONVERT_ROUND_BYTES were written.
 */
int cvt__write_event(struct cvt *cvt, const union perf_event *event, u64 time, u64 *pos)
{
	int err;

	if (!cvt->data_started) {
		err = cvt__start_data(cvt);
		if (err)
			return err;
	}
	if (cvt->round_bytes >= CONVERT_ROUND_BYTES) {
		err = cvt__write_round(cvt);
		if (err)
			return err;
	}
	/* 0: synthesized without a time (perf record --tail-synthesize) */
	if (time != (u64)-1 && time) {
		if (time < cvt->last_time)
			cvt->stats->out_of_order++;
		else
			cvt->last_time = time;
	}
	if (pos)
		*pos = cvt->out->written;
	err = stitch_buf__write(cvt->out, event, event->header.size);
	if (err)
		return err;
	cvt->stats->events++;
	cvt->round_bytes += event->header.size;
	return 0;
}

int cvt__write(struct cvt *cvt, const union perf_event *event, u64 time)
{
	return cvt__write_event(cvt, event, time, NULL);
}

int cvt__fail(struct cvt *cvt, int err)
{
	if (!cvt->err)
		cvt->err = err;
	return err;
}
