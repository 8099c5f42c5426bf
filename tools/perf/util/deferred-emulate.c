// SPDX-License-Identifier: GPL-2.0
/*
 * Emulation of Linux 6.19 deferred user callchains.
 *
 * A frame-pointer recording (perf record -g) made on any kernel is rewritten
 * into the file a 6.19 kernel with attr.defer_callchain would have produced:
 * each sample's user part replaced by PERF_CONTEXT_USER_DEFERRED and a
 * cookie, and one PERF_RECORD_CALLCHAIN_DEFERRED per kernel entry carrying
 * the user stack, written when the task returned to user space, on the CPU
 * it returned on.  libunwind-cookie's kernel model (unwind_kmodel) assigns
 * the cookies and writes the records; deferred-emulate-model.c decides,
 * from what the recording shows, when each task entered and left the
 * kernel.
 *
 * The pieces (deferred-emulate-internal.h lists them): reading the input,
 * the kernel entries, writing the output, the ground truth.  This file
 * runs them, counts what they did for the summary, writes the outputs
 * (util/stitch-output.h), and hooks the emulation into perf record
 * --call-graph deferred,emulate.
 *
 * The whole input is held in memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <unwind-cookie/kmodel.h>

#include "cap.h"
#include "compress.h"
#include "deferred-callchain.h"
#include "data.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "header.h"
#include "intlist.h"
#include "parse-events.h"
#include "perf_api_probe.h"
#include "record.h"
#include "session.h"
#include "target.h"
#include "tracepoint.h"
#include "util.h"
#include "deferred-emulate.h"
#include "deferred-emulate-internal.h"
#include "deferred-stitch.h"
#include "stitch-output.h"

/* ---- the emulation ---- */

static int emu__check_opts(const struct deferred_emulate_opts *opts)
{
	const double *f[] = { &opts->drop, &opts->duplicate, &opts->late, &opts->bogus_ip };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (!(*f[i] >= 0.0 && *f[i] <= 1.0)) {
			pr_err("fault fractions must be between 0 and 1\n");
			return -EINVAL;
		}
	}
	if (!opts->output) {
		pr_err("no output file (-o)\n");
		return -EINVAL;
	}
	if (!strcmp(opts->input, "-") != !strcmp(opts->output, "-")) {
		pr_err("pipe mode needs both input and output to be pipes (-i - -o -)\n");
		return -EINVAL;
	}
	return 0;
}

/* Before reading the input: a refusal comes before the work. */
static int emu__open_outputs(const struct deferred_emulate_opts *opts,
			     struct stitch_output *output, struct stitch_output *truth)
{
	int err;

	err = stitch_output__open(output, opts->output, opts->input, opts->force, 0600);
	if (err)
		return err;
	if (strcmp(opts->input, "-") && !output->seekable) {
		pr_err("%s: cannot seek in it to write a perf.data file; the pipe format is written from a pipe input (-i - -o -)\n",
		       opts->output);
		return -EINVAL;
	}
	if (!opts->truth)
		return 0;
	return stitch_output__open(truth, opts->truth, opts->input, opts->force, 0666);
}

static void emu__free(struct emu *emu)
{
	struct int_node *node;
	size_t i;

	for (i = 0; i < emu->nr_ev; i++)
		free(emu->ev[i].event);
	free(emu->ev);
	if (emu->tasks) {
		intlist__for_each_entry(node, emu->tasks)
			free(node->priv);
		intlist__delete(emu->tasks);
	}
	unwind_kmodel__delete(emu->km);
	free(emu->entries);
	free(emu->records);
	free(emu->track_id);
}

/* The summary's counts, from the model's log, the entries and the records. */
static void emu__count(struct emu *emu)
{
	struct deferred_emulate_stats *st = emu->stats;
	size_t i;

	st->samples = emu->nr_samples;
	st->entries = emu->nr_entries;
	for (i = 0; i < emu->nr_ev; i++) {
		const struct emu_event *e = &emu->ev[i];

		if (e->model_idx == EMU_NONE ||
		    !unwind_kmodel__events(emu->km, NULL)[e->model_idx].cookie)
			continue;
		st->deferred++;
		if (e->flags & EMU_F_USER)
			st->user_mode++;
		if (unwind_kmodel__events(emu->km, NULL)[e->model_idx].late)
			st->late++;
	}
	for (i = 0; i < emu->nr_entries; i++) {
		const struct emu_entry *entry = &emu->entries[i];

		if (entry->how == EMU_RET_SYS_EXIT)
			st->ret_sys_exit++;
		else if (entry->how == EMU_RET_FALLBACK)
			st->ret_fallback++;
		else if (entry->how == EMU_RET_EXIT)
			st->ret_exit++;
		if (entry->record != EMU_NONE &&
		    emu->records[entry->record].cpu != entry->first_cpu)
			st->migrated++;
	}
	for (i = 0; i < emu->nr_records; i++) {
		st->records += emu->records[i].copies;
		st->dropped += !emu->records[i].copies;
		st->duplicated += emu->records[i].copies > 1;
		st->bogus += emu->records[i].bogus_at != EMU_NONE;
	}
}

int deferred_emulate(const struct deferred_emulate_opts *opts,
		     struct deferred_emulate_stats *stats)
{
	struct perf_data data = {
		.path	= opts->input,
		.mode	= PERF_DATA_MODE_READ,
		.force	= opts->force,
	};
	struct stitch_output output = { .fd = -1, .slot = -1 };
	struct stitch_output truth = { .fd = -1, .slot = -1 };
	struct emu *emu;
	struct stitch_buf *out = NULL;
	FILE *truth_fp;
	int err;

	memset(stats, 0, sizeof(*stats));
	err = emu__check_opts(opts);
	if (err)
		return err;
	emu = zalloc(sizeof(*emu));
	out = zalloc(sizeof(*out));
	if (!emu || !out) {
		free(emu);
		free(out);
		return -ENOMEM;
	}
	emu->opts = opts;
	emu->stats = stats;
	emu_rng__init(&emu->rng_drop, opts->seed, 1);
	emu_rng__init(&emu->rng_dup, opts->seed, 2);
	emu_rng__init(&emu->rng_late, opts->seed, 3);
	emu_rng__init(&emu->rng_bogus, opts->seed, 4);
	deferred_emulate__init_tool(&emu->tool);

	err = emu__open_outputs(opts, &output, &truth);
	if (err)
		goto out;
	out->fd = output.fd;

	emu->session = perf_session__new(&data, &emu->tool);
	if (IS_ERR(emu->session)) {
		err = PTR_ERR(emu->session);
		emu->session = NULL;
		pr_err("cannot read %s\n", opts->input);
		goto out;
	}
	/* a pipe stream saved to a file (perf record -o - > f) is one too */
	emu->pipe = perf_data__is_pipe(emu->session->data);
	if (emu->session->header.needs_swap) {
		pr_err("%s: a file of the other byte order is not supported\n", opts->input);
		err = -EINVAL;
		goto out;
	}
	if (zstd_init(&emu->session->zstd_data, 0) < 0)
		pr_warning("decompression initialization failed\n");

	if (!emu->pipe) {
		err = perf_header__process_sections(&emu->session->header,
						    perf_data__fd(emu->session->data),
						    emu->secs, deferred_stitch__save_section);
		if (err)
			goto out;
		if (perf_header__has_feat(&emu->session->header, HEADER_AUXTRACE)) {
			pr_err("AUX area tracing data is not supported\n");
			err = -EINVAL;
			goto out;
		}
		/* refuse early what cannot be emulated */
		deferred_emulate__find_events(emu, emu->session->evlist);
		err = deferred_emulate__check_evlist(emu, emu->session->evlist);
		if (err)
			goto out;
	}

	err = perf_session__process_events(emu->session);
	if (!err)
		err = emu->err;
	if (!err)
		err = deferred_stitch__check_cut(emu->session, opts->input, opts->force);
	if (!err)
		err = deferred_stitch__check_read(emu->session, opts->input, emu->nr_samples,
						  opts->force, false);
	if (!err)
		err = deferred_emulate__prepare_events(emu);
	if (err)
		goto out;

	err = deferred_emulate__run_model(emu);
	if (!err)
		err = deferred_emulate__place_records(emu);
	if (err)
		goto out;
	emu__count(emu);

	if (emu->pipe) {
		err = perf_header__write_pipe(out->fd);
		if (!err)
			err = deferred_emulate__write_data(emu, out);
	} else {
		err = deferred_emulate__write_file(emu, out);
	}
	if (err) {
		pr_err("cannot write %s: %s\n", stitch_output__name(&output), strerror(-err));
		goto out;
	}

	if (opts->truth) {
		truth_fp = stitch_output__fdopen(&truth);
		err = truth_fp ? deferred_emulate__write_truth(emu, truth_fp) : -ENOMEM;
		if (err) {
			pr_err("cannot write %s\n", opts->truth);
			goto out;
		}
	}
	/* the recording is complete once its ground truth is */
	if (opts->truth)
		err = stitch_output__commit(&truth);
	if (!err)
		err = stitch_output__commit(&output);
out:
	if (err) {
		stitch_output__abort(&output);
		stitch_output__abort(&truth);
	}
	if (emu->session) {
		zstd_fini(&emu->session->zstd_data);
		perf_session__delete(emu->session);
	}
	emu__free(emu);
	free(emu);
	free(out);
	return err;
}

void deferred_emulate__fprintf_stats(const struct deferred_emulate_stats *st, const char *cmd)
{
	fprintf(stderr, "%s: %" PRIu64 " of %" PRIu64 " samples deferred (%" PRIu64
		" in user mode, %" PRIu64 " late), %" PRIu64 " kernel entries, %" PRIu64
		" records written (%" PRIu64 " dropped, %" PRIu64 " duplicated, %" PRIu64
		" with a bogus ip); entries ended at sys_exit %" PRIu64 ", at exit %" PRIu64
		", by fallback %" PRIu64 "; %" PRIu64 " returned on another CPU\n",
		cmd, st->deferred, st->samples, st->user_mode, st->late, st->entries, st->records,
		st->dropped, st->duplicated, st->bogus, st->ret_sys_exit, st->ret_exit,
		st->ret_fallback, st->migrated);
	if (!st->have_cpu)
		fprintf(stderr, "%s: the samples do not say on which CPU they were taken (record with --sample-cpu): every cookie and record is on CPU 0\n",
			cmd);
	if (!st->have_sys_exit)
		fprintf(stderr, "%s: no %s samples (record with -e %s): system call returns are estimated\n",
			cmd, DEFERRED_EMULATE_RETURN_EVENT, DEFERRED_EMULATE_RETURN_EVENT);
	if (!st->have_switch)
		fprintf(stderr, "%s: no context switch records (record with --switch-events): a task that sleeps in the kernel returns on the CPU it fell asleep on\n",
			cmd);
}

/* ---- perf record --call-graph deferred,emulate ---- */

int deferred_emulate__record_prepare(struct record_opts *opts, const char *output,
				     bool is_dir, bool switch_output, char **tmp_path)
{
	struct stat st;
	char *tmp;
	int fd;

	*tmp_path = NULL;
	if ((output && !strcmp(output, "-")) ||
	    (!output && !fstat(STDOUT_FILENO, &st) && S_ISFIFO(st.st_mode))) {
		pr_err("--call-graph deferred,emulate cannot write to a pipe\n");
		return -EINVAL;
	}
	if (is_dir || switch_output) {
		pr_err("--call-graph deferred,emulate writes a single perf.data file: not with --switch-output, --threads or --kcore\n");
		return -EINVAL;
	}
	/* what the emulation needs to place the records */
	opts->sample_cpu = true;
	if (perf_can_record_switch_events())
		opts->record_switch_events = true;

	if (asprintf(&tmp, "%s.fp-XXXXXX", output ?: "perf.data") < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		pr_err("cannot create a file next to %s: %s\n", output ?: "perf.data",
		       strerror(errno));
		free(tmp);
		return -errno;
	}
	close(fd);
	*tmp_path = tmp;
	return 0;
}

void deferred_emulate__record_add_events(struct evlist *evlist, struct record_opts *opts)
{
	struct parse_events_error err;
	bool allowed;

	if (!is_valid_tracepoint(DEFERRED_EMULATE_RETURN_EVENT)) {
		pr_debug("%s not available: system call returns will be estimated\n",
			 DEFERRED_EMULATE_RETURN_EVENT);
		return;
	}
	/* per task, the syscall tracepoints are open to everyone (TRACE_EVENT_FL_CAP_ANY) */
	allowed = !target__has_cpu(&opts->target) || !geteuid() ||
		  perf_cap__capable(CAP_PERFMON) || perf_event_paranoid() <= -1;
	if (!allowed) {
		pr_debug("%s not permitted system wide: system call returns will be estimated\n",
			 DEFERRED_EMULATE_RETURN_EVENT);
		return;
	}
	parse_events_error__init(&err);
	if (parse_events(evlist, DEFERRED_EMULATE_RETURN_EVENT "/call-graph=no/", &err))
		pr_debug("cannot add %s: system call returns will be estimated\n",
			 DEFERRED_EMULATE_RETURN_EVENT);
	parse_events_error__exit(&err);
}

int deferred_emulate__record_finish(const char *tmp_path, const char *output, bool silent)
{
	struct deferred_emulate_opts opts = {
		.input		= tmp_path,
		.output		= output ?: "perf.data",
		.exit_records	= true,
		/* perf record replaces its output (kept as .old if not empty) */
		.force		= true,
	};
	struct deferred_emulate_stats stats;
	struct stat st;
	char *old;
	int err;

	/* as perf record does with its output */
	if (!stat(opts.output, &st) && st.st_size && asprintf(&old, "%s.old", opts.output) >= 0) {
		if (rename(opts.output, old))
			pr_warning("cannot rename %s to %s: %s\n", opts.output, old,
				   strerror(errno));
		free(old);
	}
	err = deferred_emulate(&opts, &stats);
	if (err) {
		pr_err("perf record: emulating deferred callchains failed; the frame-pointer recording is in %s\n",
		       tmp_path);
		return err;
	}
	unlink(tmp_path);
	if (!silent) {
		fprintf(stderr, "[ perf record: the kernel did not defer user callchains: emulated (perf stitch --emulate), wrote %s with %" PRIu64 " deferred samples and %" PRIu64 " CALLCHAIN_DEFERRED records ]\n",
			opts.output, stats.deferred, stats.records);
		if (verbose > 0)
			deferred_emulate__fprintf_stats(&stats, "perf record");
	}
	return 0;
}
