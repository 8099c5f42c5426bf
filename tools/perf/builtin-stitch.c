// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-stitch.c
 *
 * perf stitch: files with deferred user callchains (Linux 6.19), whose
 * samples end in PERF_CONTEXT_USER_DEFERRED + cookie and whose user stacks
 * come in PERF_RECORD_CALLCHAIN_DEFERRED records.
 *
 * One mode per run:
 *
 *   --emulate            turn a frame-pointer recording into that format,
 *                        on any kernel (util/deferred-emulate.c)
 *   (no mode option)     convert: join each sample to its record and write
 *                        standard callchains every perf reads
 *                        (util/deferred-convert.c)
 *   --stats[=json]       only say how the samples stitch: the stitch
 *                        engine's counters (util/deferred-callchain.c)
 *   -F folded|speedscope|pprof
 *                        export the stitched stacks as folded stacks, a
 *                        speedscope profile or a pprof profile
 *                        (util/deferred-export.c)
 */
#include "builtin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/stringify.h>
#include <subcmd/parse-options.h>
#include <unwind-cookie/stitcher.h>

#include "util/compress.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/deferred-callchain.h"
#include "util/deferred-convert.h"
#include "util/deferred-emulate.h"
#include "util/deferred-export.h"
#include "util/deferred-stitch.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/session.h"
#include "util/symbol.h"
#include "util/tool.h"

enum stitch_mode {
	STITCH_CONVERT,
	STITCH_EMULATE,
	STITCH_STATS,
	STITCH_EXPORT,
};

struct perf_stitch {
	/* The convert, stats and export modes read the input through it. */
	struct perf_tool		tool;
	const char			*input_name;
	const char			*output_name;
	bool				force;
	bool				strict;
	/* mode selectors */
	bool				emulate;
	const char			*stats;		/* "text" or "json" */
	const char			*format;	/* "folded", "speedscope", "pprof" */
	/* --emulate */
	struct deferred_emulate_opts	emu;
	bool				emu_opts_set;
	/* -F */
	struct deferred_export_opts	exp;
	const char			*count;		/* -F --count */
	/* --stats: samples delivered */
	u64				samples_read;
};

static int stitch__emulate(struct perf_stitch *stitch)
{
	struct deferred_emulate_stats stats;
	int err;

	stitch->emu.input = stitch->input_name;
	stitch->emu.output = stitch->output_name;
	if (!stitch->emu.output && !strcmp(stitch->emu.input, "-"))
		stitch->emu.output = "-";
	if (!stitch->emu.output) {
		pr_err("perf stitch --emulate: no output file (-o)\n");
		return -EINVAL;
	}
	stitch->emu.force = stitch->force;

	err = deferred_emulate(&stitch->emu, &stats);
	if (err) {
		pr_err("perf stitch --emulate: failed, no output written\n");
		return err;
	}
	if (!quiet)
		deferred_emulate__fprintf_stats(&stats, "perf stitch");
	return 0;
}

static int stitch__convert(struct perf_stitch *stitch)
{
	struct deferred_convert_opts opts = {
		.input	= stitch->input_name,
		.output	= stitch->output_name,
		.force	= stitch->force,
		.strict	= stitch->strict,
		/* main() let only "off-cpu" through */
		.off_cpu = stitch->count != NULL,
	};
	struct deferred_convert_stats stats;
	int err;

	if (!opts.output && !strcmp(opts.input, "-"))
		opts.output = "-";
	if (!opts.output) {
		pr_err("perf stitch: no output file (-o)\n");
		return -EINVAL;
	}
	err = deferred_convert(&opts, &stats);
	if (err) {
		if (stats.output_in_place)
			pr_err("perf stitch: failed, what was written to %s is not usable\n",
			       strcmp(opts.output, "-") ? opts.output : "stdout");
		else
			pr_err("perf stitch: failed, no output written\n");
		return err;
	}
	if (!quiet)
		deferred_convert__fprintf_stats(&stats, &opts, "perf stitch", stderr);
	return 0;
}

/* --stats: the session stitches; the tool only counts what it got */
static int stitch__stats_sample(const struct perf_tool *tool,
				union perf_event *event __maybe_unused,
				struct perf_sample *sample __maybe_unused,
				struct machine *machine __maybe_unused)
{
	struct perf_stitch *stitch = container_of(tool, struct perf_stitch, tool);

	stitch->samples_read++;
	return 0;
}

static double stitch__pct(u64 n, u64 of)
{
	return of ? 100.0 * n / of : 0.0;
}

/* what the session skipped as malformed (offsets reported as it read them) */
struct stitch_malformed {
	u64	records;	/* CALLCHAIN_DEFERRED */
	u64	samples;	/* deferred callchain */
};

/* the engine's counters; without it (@stitching false) only the first ones */
struct stitch_stats {
	struct unwind_stitcher_stats	engine;
	u64				samples;	/* every sample read, of any event */
	bool				stitching;
	bool				cpu_known;	/* cross_cpu_records is known */
	struct stitch_malformed		bad;
};

/* the samples kept as malformed orphans: counted in the totals when stitching */
static u64 stitch__malformed_orphans(const struct stitch_stats *ss)
{
	return ss->stitching ? ss->bad.samples : 0;
}

static void stitch__stats_text(const struct stitch_stats *ss, FILE *fp)
{
	const struct unwind_stitcher_stats *st = &ss->engine;
	const struct stitch_malformed *bad = &ss->bad;
	int r;

	fprintf(fp, "%-22s %" PRIu64 "\n", "samples:", ss->samples);
	fprintf(fp, "%-22s %" PRIu64 "\n", "deferred samples:", st->deferred_samples);
	if (!ss->stitching && st->deferred_samples + st->records)
		fprintf(fp, "%-22s not stitched (no sample times)\n", "stitched:");
	else
		fprintf(fp, "%-22s %" PRIu64 " (%.1f%%)\n", "stitched:", st->stitched,
			stitch__pct(st->stitched, st->deferred_samples));
	fprintf(fp, "%-22s %" PRIu64 " (%.1f%%)\n", "orphans:", st->orphans_total,
		stitch__pct(st->orphans_total, st->deferred_samples));
	for (r = 1; r < UNWIND_ORPHAN__MAX; r++)
		fprintf(fp, "  %-20s %" PRIu64 "\n", deferred_stitch__reason_name(r),
			st->orphans[r]);
	fprintf(fp, "  %-20s %" PRIu64 "\n",
		deferred_stitch__reason_name(DEFERRED_ORPHAN_MALFORMED),
		stitch__malformed_orphans(ss));
	fprintf(fp, "%-22s %" PRIu64 "\n", "records:", st->records);
	fprintf(fp, "%-22s %" PRIu64 " (%" PRIu64 " conflicting)\n", "duplicate records:",
		st->duplicates + st->duplicates_conflicting, st->duplicates_conflicting);
	fprintf(fp, "%-22s %" PRIu64 "\n", "late samples:", st->late_samples);
	if (ss->cpu_known)
		fprintf(fp, "%-22s %" PRIu64 "\n", "cross-CPU records:", st->cross_cpu_records);
	else
		fprintf(fp, "%-22s unknown (no PERF_SAMPLE_CPU)\n", "cross-CPU records:");
	fprintf(fp, "%-22s %" PRIu64 " truncated, %" PRIu64 " empty, %" PRIu64 " unclaimed\n",
		"records cut/unused:", st->truncated_records, st->empty_records,
		st->unclaimed_records);
	fprintf(fp, "%-22s %" PRIu64 "\n", "lost notices:", st->lost_notices);
	fprintf(fp, "%-22s %" PRIu64 " samples, %" PRIu64 " bytes\n", "peak pending:",
		st->peak_pending_samples, st->peak_pending_bytes);
	fprintf(fp, "%-22s min %" PRId64 ", median %" PRId64 ", p99 %" PRId64 ", max %" PRId64
		" (%" PRIu64 " samples)\n", "latency (ns):", st->latency.min, st->latency.median,
		st->latency.p99, st->latency.max, st->latency.count);
	fprintf(fp, "%-22s %" PRIu64 " records (skipped), %" PRIu64
		" samples (kept, user part lost)\n", "malformed:", bad->records, bad->samples);
}

static void stitch__stats_json(const struct stitch_stats *ss, FILE *fp)
{
	const struct unwind_stitcher_stats *st = &ss->engine;
	const struct stitch_malformed *bad = &ss->bad;
	int r;

	fprintf(fp, "{\"stitching\": %s, \"samples\": %" PRIu64 ", \"deferred_samples\": %" PRIu64
		", \"records\": %" PRIu64 ", \"stitched\": %" PRIu64 ", \"orphans\": {",
		ss->stitching ? "true" : "false", ss->samples, st->deferred_samples,
		st->records, st->stitched);
	for (r = 1; r < UNWIND_ORPHAN__MAX; r++)
		fprintf(fp, "%s\"%s\": %" PRIu64, r > 1 ? ", " : "",
			deferred_stitch__reason_key(r), st->orphans[r]);
	fprintf(fp, ", \"%s\": %" PRIu64, deferred_stitch__reason_key(DEFERRED_ORPHAN_MALFORMED),
		stitch__malformed_orphans(ss));
	fprintf(fp, "}, \"orphans_total\": %" PRIu64 ", \"duplicates\": %" PRIu64
		", \"duplicates_conflicting\": %" PRIu64 ", \"late_samples\": %" PRIu64,
		st->orphans_total, st->duplicates, st->duplicates_conflicting, st->late_samples);
	if (ss->cpu_known)
		fprintf(fp, ", \"cross_cpu_records\": %" PRIu64, st->cross_cpu_records);
	else
		fprintf(fp, ", \"cross_cpu_records\": null");
	fprintf(fp, ", \"truncated_records\": %" PRIu64 ", \"empty_records\": %" PRIu64
		", \"unclaimed_records\": %" PRIu64 ", \"lost_notices\": %" PRIu64
		", \"peak_pending_samples\": %" PRIu64 ", \"peak_pending_bytes\": %" PRIu64
		", \"latency\": {\"count\": %" PRIu64 ", \"min\": %" PRId64 ", \"median\": %" PRId64
		", \"p99\": %" PRId64 ", \"max\": %" PRId64 "}"
		", \"malformed_records\": %" PRIu64 ", \"malformed_samples\": %" PRIu64 "}\n",
		st->truncated_records, st->empty_records, st->unclaimed_records,
		st->lost_notices, st->peak_pending_samples, st->peak_pending_bytes,
		st->latency.count, st->latency.min, st->latency.median, st->latency.p99,
		st->latency.max, bad->records, bad->samples);
}

static int stitch__stats(struct perf_stitch *stitch)
{
	struct perf_data data = {
		.path	= stitch->input_name,
		.mode	= PERF_DATA_MODE_READ,
		.force	= stitch->force,
	};
	struct stitch_stats st = { .engine.sz = sizeof(st.engine) };
	struct perf_session *session;
	bool json;
	int err;

	if (!strcmp(stitch->stats, "json")) {
		json = true;
	} else if (!strcmp(stitch->stats, "text")) {
		json = false;
	} else {
		pr_err("perf stitch --stats: unknown format '%s' (text or json)\n", stitch->stats);
		return -EINVAL;
	}
	if (stitch->output_name) {
		pr_err("perf stitch --stats: writes no file (-o); the statistics go to stdout\n");
		return -EINVAL;
	}

	/* like perf script: time order, the session stitches while delivering */
	perf_tool__init(&stitch->tool, /*ordered_events=*/true);
	deferred_stitch__tool_read_header(&stitch->tool);
	stitch->tool.sample		= stitch__stats_sample;
	stitch->tool.ordering_requires_timestamps = true;

	session = perf_session__new(&data, &stitch->tool);
	if (IS_ERR(session)) {
		/* perf_data__open() said why */
		pr_err("perf stitch --stats: cannot read %s\n", stitch->input_name);
		return PTR_ERR(session) ?: -EINVAL;
	}

	if (zstd_init(&session->zstd_data, 0) < 0)
		pr_warning("perf stitch --stats: decompression initialization failed\n");
	/* on failure it says where and in which file */
	err = perf_session__process_events(session);
	if (err)
		goto out;
	err = deferred_stitch__check_read(session, stitch->input_name, stitch->samples_read,
					  stitch->force, stitch->strict);
	if (err)
		goto out;
	err = perf_session__deferred_stats(session, &st.engine);
	if (err < 0)
		goto out;
	st.stitching = err;
	st.samples = stitch->samples_read;
	err = 0;
	st.cpu_known = perf_session__deferred_cpu_known(session);
	st.bad.records = evlist__stats(session->evlist)->nr_invalid_callchain_deferred;
	st.bad.samples = evlist__stats(session->evlist)->nr_invalid_deferred_samples;
	if (json)
		stitch__stats_json(&st, stdout);
	else
		stitch__stats_text(&st, stdout);
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("perf stitch --stats: cannot write the statistics\n");
		err = -EIO;
	}
out:
	zstd_fini(&session->zstd_data);
	perf_session__delete(session);
	return err;
}

static int stitch__export(struct perf_stitch *stitch)
{
	struct deferred_export_stats stats;
	int err;

	if (deferred_export__parse_format(stitch->format, &stitch->exp.format)) {
		pr_err("perf stitch: unknown format '%s' (-F folded, speedscope or pprof)\n",
		       stitch->format);
		return -EINVAL;
	}
	if (stitch->exp.format != DEFERRED_EXPORT__FOLDED &&
	    (stitch->exp.kernel_suffix || stitch->exp.separator || stitch->exp.pid ||
	     stitch->exp.tid)) {
		pr_err("perf stitch: --kernel-suffix, --separator, --pid and --tid go with -F folded\n");
		return -EINVAL;
	}
	err = deferred_export__parse_count(stitch->count, &stitch->exp);
	if (err) {
		if (err == -EINVAL)
			pr_err("perf stitch: unknown --count '%s' (period, samples, off-cpu or wall)\n",
			       stitch->count);
		return err;
	}
	stitch->exp.input = stitch->input_name;
	stitch->exp.output = stitch->output_name;
	stitch->exp.force = stitch->force;
	stitch->exp.strict = stitch->strict;

	err = deferred_export(&stitch->exp, &stats);
	if (err)
		return err;
	if (!quiet)
		deferred_export__fprintf_stats(&stats, stderr, "perf stitch");
	return 0;
}

static int (* const stitch_modes[])(struct perf_stitch *stitch) = {
	[STITCH_CONVERT] = stitch__convert,
	[STITCH_EMULATE] = stitch__emulate,
	[STITCH_STATS]	 = stitch__stats,
	[STITCH_EXPORT]	 = stitch__export,
};

/* --drop, --duplicate, --late, --bogus-ip: the option's value is its fraction */
static int parse_fraction(const struct option *opt, const char *str, int unset)
{
	double *fraction = opt->value;
	char *end;

	if (unset) {
		*fraction = 0;
		return 0;
	}
	*fraction = strtod(str, &end);
	if (end == str || *end || !(*fraction >= 0.0 && *fraction <= 1.0)) {
		pr_err("--%s: expected a fraction between 0 and 1, got '%s'\n",
		       opt->long_name, str);
		return -1;
	}
	return 0;
}

static int parse_emu_opt(const struct option *opt, const char *str, int unset)
{
	struct perf_stitch *stitch = container_of(opt->value, struct perf_stitch, emu);
	char *end;

	stitch->emu_opts_set = true;
	if (!strcmp(opt->long_name, "seed")) {
		stitch->emu.seed = unset ? 0 : strtoull(str, &end, 0);
		if (!unset && (end == str || *end)) {
			pr_err("--seed: expected a number, got '%s'\n", str);
			return -1;
		}
	} else if (!strcmp(opt->long_name, "truth")) {
		stitch->emu.truth = unset ? NULL : str;
	} else {
		stitch->emu.exit_records = !unset;
	}
	return 0;
}

int cmd_stitch(int argc, const char **argv)
{
	struct perf_stitch stitch = {
		.input_name	= "perf.data",
		.emu		= {
			.exit_records = true,
		},
		.exp		= {
			.max_stack = PERF_MAX_STACK_DEPTH,
		},
	};
	enum stitch_mode mode = STITCH_CONVERT;
	int nr_modes;
	struct option options[] = {
		OPT_STRING('i', "input", &stitch.input_name, "file",
			   "input file name (- for a pipe)"),
		OPT_STRING('o', "output", &stitch.output_name, "file",
			   "output file name (- for a pipe)"),
		OPT_BOOLEAN('f', "force", &stitch.force, "don't complain, do it"),
		OPT_BOOLEAN(0, "strict", &stitch.strict,
			    "fail on a malformed CALLCHAIN_DEFERRED record or deferred sample (default: the record skipped, the sample kept without its user part, counted)"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_BOOLEAN('q', "quiet", &quiet, "do not print the summary"),
		OPT_BOOLEAN(0, "emulate", &stitch.emulate,
			    "turn a frame-pointer recording into the deferred callchains a 6.19 kernel writes"),
		OPT_CALLBACK_SET(0, "drop", &stitch.emu.drop, &stitch.emu_opts_set,
				 "fraction", "--emulate: leave out this fraction of the deferred records",
				 parse_fraction),
		OPT_CALLBACK_SET(0, "duplicate", &stitch.emu.duplicate, &stitch.emu_opts_set,
				 "fraction", "--emulate: write this fraction of the records twice",
				 parse_fraction),
		OPT_CALLBACK_SET(0, "late", &stitch.emu.late, &stitch.emu_opts_set,
				 "fraction",
				 "--emulate: in this fraction of the kernel entries, take the last sample after the record",
				 parse_fraction),
		OPT_CALLBACK_SET(0, "bogus-ip", &stitch.emu.bogus_ip, &stitch.emu_opts_set,
				 "fraction",
				 "--emulate: insert an ip >= PERF_CONTEXT_MAX into this fraction of the records",
				 parse_fraction),
		OPT_CALLBACK(0, "seed", &stitch.emu, "n",
			     "--emulate: seed of the fault injection (default 0)", parse_emu_opt),
		OPT_CALLBACK(0, "truth", &stitch.emu, "file",
			     "--emulate: write the ground truth (JSON lines) to this file",
			     parse_emu_opt),
		OPT_CALLBACK_NOOPT(0, "exit-records", &stitch.emu, NULL,
				   "--emulate: a task exiting inside the kernel writes its record (default; --no-exit-records: it does not)",
				   parse_emu_opt),
		OPT_STRING_OPTARG(0, "stats", &stitch.stats, "json",
				  "only report how the samples stitch (text, or json)", "text"),
		OPT_STRING('F', "format", &stitch.format, "folded|speedscope|pprof",
			   "export the stitched stacks as folded stacks, a speedscope or a pprof profile"),
		OPT_STRING(0, "event", &stitch.exp.event, "name",
			   "-F: export this event's samples only (default: as stackcollapse-perf.pl)"),
		OPT_STRING(0, "count", &stitch.count, "period|samples|off-cpu|wall",
			   "-F: weigh by the period (default), 1, the time off-CPU or on and off"),
		OPT_BOOLEAN(0, "kernel-suffix", &stitch.exp.kernel_suffix,
			    "-F folded: append _[k] to kernel frames"),
		OPT_BOOLEAN(0, "separator", &stitch.exp.separator,
			    "-F folded: a '-' frame between the user and the kernel frames"),
		OPT_BOOLEAN(0, "pid", &stitch.exp.pid, "-F folded: root frame comm-PID"),
		OPT_BOOLEAN(0, "tid", &stitch.exp.tid, "-F folded: root frame comm-PID/TID"),
		OPT_BOOLEAN(0, "inline", &symbol_conf.inline_name,
			    "-F: a frame per inlined function, as perf script (default)"),
		OPT_UINTEGER(0, "max-stack", &stitch.exp.max_stack,
			     "-F: at most this many callchain addresses per sample (default "
			     __stringify(PERF_MAX_STACK_DEPTH) ", as perf script)"),
		OPT_STRING('k', "vmlinux", &symbol_conf.vmlinux_name, "file", "vmlinux pathname"),
		OPT_STRING(0, "kallsyms", &symbol_conf.kallsyms_name, "file", "kallsyms pathname"),
		OPT_END()
	};
	const char * const stitch_usage[] = {
		"perf stitch [-f] -i <deferred.data> -o <stitched.data>   (- for pipes)",
		"perf stitch --emulate [<options>] -i <fp.data> -o <deferred.data>",
		"perf stitch --stats[=json] [-i <deferred.data>]",
		"perf stitch -F folded [<options>] [-i <deferred.data>] [-o <stacks.folded>]",
		"perf stitch -F speedscope [<options>] [-i <deferred.data>] [-o <profile.json>]",
		"perf stitch -F pprof [<options>] [-i <deferred.data>] [-o <profile.pb.gz>]",
		NULL
	};

	argc = parse_options(argc, argv, options, stitch_usage, 0);
	if (argc)
		usage_with_options(stitch_usage, options);
	/*
	 * -q hides the summary only: not perf_quiet_option(), which silences
	 * pr_err() too, and an error must never pass unsaid.
	 */

	nr_modes = stitch.emulate + !!stitch.stats + !!stitch.format;
	if (nr_modes > 1) {
		pr_err("perf stitch: --emulate, --stats and -F are exclusive\n");
		return -EINVAL;
	}
	if (stitch.emulate)
		mode = STITCH_EMULATE;
	else if (stitch.stats)
		mode = STITCH_STATS;
	else if (stitch.format)
		mode = STITCH_EXPORT;

	if (mode != STITCH_EMULATE && stitch.emu_opts_set) {
		pr_err("perf stitch: --drop, --duplicate, --late, --bogus-ip, --seed, --truth and --exit-records go with --emulate\n");
		return -EINVAL;
	}

	if (mode != STITCH_EXPORT &&
	    (stitch.exp.event || stitch.exp.kernel_suffix || stitch.exp.separator ||
	     stitch.exp.pid || stitch.exp.tid ||
	     (stitch.count && (mode != STITCH_CONVERT || strcmp(stitch.count, "off-cpu"))) ||
	     stitch.exp.max_stack != PERF_MAX_STACK_DEPTH || !symbol_conf.inline_name)) {
		pr_err("perf stitch: --event, --count, --kernel-suffix, --separator, --pid, --tid, --max-stack and --no-inline go with -F (and --count=off-cpu with -o)\n");
		return -EINVAL;
	}

	return stitch_modes[mode](&stitch);
}
