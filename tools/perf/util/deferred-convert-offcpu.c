// SPDX-License-Identifier: GPL-2.0
/*
 * perf stitch -o --count=off-cpu: the converted file's sched:sched_switch
 * samples carry, as their period, the nanoseconds their task stays
 * switched out (util/deferred-export-offcpu.h says how that is measured),
 * so that perf report, perf script and every tool that weighs samples by
 * their period show time off CPU.  A switch's period is known when its
 * task comes back, after the sample was written: it is patched in place,
 * in the write buffer or in the file, so the output must be a file; and
 * so must the input, whose tracepoint formats give sched_switch's fields.
 */
#include <errno.h>
#include <linux/bitops.h>
#include <linux/kernel.h>

#include "debug.h"
#include "deferred-convert-internal.h"
#include "deferred-export-offcpu.h"
#include "evlist.h"
#include "evsel.h"
#include "sample.h"

int cvt__offcpu_start(struct cvt *cvt)
{
	if (!cvt->opts->off_cpu)
		return 0;
	if (cvt->pipe_out) {
		pr_err("--count=off-cpu writes each switch's period when its task comes back: it needs a file output, not a pipe\n");
		return -EINVAL;
	}
	/* the convert copies a pipe's tracing data without parsing its formats */
	if (cvt->pipe_in) {
		pr_err("--count=off-cpu with -o reads sched_switch's fields from a file, not a pipe: perf stitch -i - -o FILE first (-F --count=off-cpu reads a pipe)\n");
		return -EINVAL;
	}
	return offcpu_switches__init(&cvt->offcpu);
}

void cvt__offcpu_exit(struct cvt *cvt)
{
	offcpu_switches__exit(&cvt->offcpu);
}

/* Where in a sample of @evsel its period is: the fields before it, 8 bytes each */
static int cvt__find_period(struct cvt *cvt, struct evsel *evsel)
{
	const u64 before = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;
	u64 type = evsel->core.attr.sample_type;

	if (!(type & PERF_SAMPLE_PERIOD)) {
		pr_err("%s: --count=off-cpu: the samples of %s have no period to write the time in\n",
		       cvt->opts->input, evsel__name(evsel));
		return -EINVAL;
	}
	cvt->offcpu_evsel = evsel;
	cvt->period_off = sizeof(struct perf_event_header) + 8 * hweight64(type & before);
	return 0;
}

/* @ns as the period of the sample written at @pos */
static int cvt__set_period(struct cvt *cvt, u64 pos, u64 ns)
{
	return stitch_buf__patch(cvt->out, pos, cvt->data_offset + (pos - cvt->data_written),
				 &ns, sizeof(ns));
}

static int cvt__offcpu_weigh(struct cvt *cvt, const struct offcpu_switch *sw, u64 ns, bool open)
{
	cvt->stats->offcpu_weighed++;
	cvt->stats->offcpu_open += open;
	cvt->stats->offcpu_ns += ns;
	return cvt__set_period(cvt, sw->period_pos, ns);
}

int cvt__offcpu_sample(struct cvt *cvt, struct perf_sample *sample, u64 pos)
{
	struct offcpu_switch sw = { .time = sample->time }, other;
	struct sched_switch_fields f;
	int err;

	if (sample->time > cvt->end_time)
		cvt->end_time = sample->time;
	if (!cvt->offcpu_evsel) {
		if (!evsel__is_sched_switch(sample->evsel))
			return 0;
		err = cvt__find_period(cvt, sample->evsel);
		if (err)
			return err;
	}
	if (sample->evsel != cvt->offcpu_evsel)
		return 0;
	sched_switch__fields(sample, &f);
	if (offcpu_switches__in(&cvt->offcpu, f.next_pid, &other)) {
		err = cvt__offcpu_weigh(cvt, &other, sample->time - other.time, /*open=*/false);
		if (err)
			return err;
	}
	sw.period_pos = pos + cvt->period_off;
	/* the idle task, an exiting one: not off CPU */
	if (sched_switch__out(&f) != SCHED_SWITCH_OUT__WAITS) {
		cvt->stats->offcpu_zero++;
		return cvt__set_period(cvt, sw.period_pos, 0);
	}
	err = offcpu_switches__out(&cvt->offcpu, f.prev_pid, &sw, &other);
	if (err > 0) {
		/* switched out again before a recorded switch-in: unknown */
		cvt->stats->offcpu_zero++;
		err = cvt__set_period(cvt, other.period_pos, 0);
	}
	return err;
}

int cvt__offcpu_switch_event(struct cvt *cvt, union perf_event *event,
			     struct perf_sample *sample)
{
	struct offcpu_switch back;

	if (!cvt->opts->off_cpu)
		return 0;
	if (sample->time != (u64)-1 && sample->time > cvt->end_time)
		cvt->end_time = sample->time;
	if (event->header.misc & PERF_RECORD_MISC_SWITCH_OUT) {
		offcpu_switches__switched_out(&cvt->offcpu, sample->tid, sample->time);
		return 0;
	}
	if (!offcpu_switches__in(&cvt->offcpu, sample->tid, &back))
		return 0;
	return cvt__offcpu_weigh(cvt, &back, sample->time - back.time, /*open=*/false);
}

static int cvt__offcpu_open(void *ctx, const struct offcpu_switch *sw)
{
	struct cvt *cvt = ctx;

	return cvt__offcpu_weigh(cvt, sw, cvt->end_time - sw->time, /*open=*/true);
}

int cvt__offcpu_finish(struct cvt *cvt)
{
	if (!cvt->opts->off_cpu)
		return 0;
	if (!cvt->offcpu_evsel) {
		pr_err("%s: --count=off-cpu weighs the samples of sched:sched_switch, and it has none (perf record -e sched:sched_switch --call-graph=deferred)\n",
		       cvt->opts->input);
		return -EINVAL;
	}
	/* still out at the end: out until the last event */
	return offcpu_switches__drain(&cvt->offcpu, cvt__offcpu_open, cvt);
}
