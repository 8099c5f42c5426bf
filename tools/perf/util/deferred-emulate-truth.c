// SPDX-License-Identifier: GPL-2.0
/*
 * Emulation of deferred user callchains: the ground truth (--truth).  Per
 * sample, the cookie, the entry, how it returned, the faults that hit its
 * record and whether a stitcher is expected to stitch it or leave it an
 * orphan (and why); per record, where it was written and its faults.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unwind-cookie/callchain.h>
#include <unwind-cookie/kmodel.h>

#include "evsel.h"
#include "deferred-emulate.h"
#include "deferred-emulate-internal.h"

static const char * const emu_return_names[] = {
	[EMU_RET_NONE]		= "none",
	[EMU_RET_USER]		= "user",
	[EMU_RET_SYS_EXIT]	= "sys_exit",
	[EMU_RET_FALLBACK]	= "fallback",
	[EMU_RET_EXIT]		= "exit",
};

/* The user entries a stitcher can use from @rec's record, as written. */
static size_t emu__record_usable(struct emu *emu, const struct emu_record *rec)
{
	const struct unwind_kmodel_event *log = &unwind_kmodel__events(emu->km, NULL)[rec->log_idx];
	size_t nr = unwind_callchain__sanitize(log->ips, log->nr, NULL);

	if (rec->bogus_at != EMU_NONE && (size_t)rec->bogus_at < nr)
		nr = rec->bogus_at;
	return nr;
}

static void emu__truth_faults(FILE *fp, const char *late, const struct emu_record *rec)
{
	const char *sep = "";

	fprintf(fp, "\"faults\":[");
	if (late) {
		fprintf(fp, "\"%s\"", late);
		sep = ",";
	}
	if (rec && !rec->copies) {
		fprintf(fp, "%s\"drop\"", sep);
		sep = ",";
	}
	if (rec && rec->copies > 1) {
		fprintf(fp, "%s\"duplicate\"", sep);
		sep = ",";
	}
	if (rec && rec->bogus_at != EMU_NONE)
		fprintf(fp, "%s\"bogus-ip\"", sep);
	fprintf(fp, "]");
}

static void emu__truth_sample(struct emu *emu, FILE *fp, const struct emu_event *e, u64 n)
{
	const struct unwind_kmodel_event *log = NULL;
	const struct emu_record *rec = NULL;
	const struct emu_entry *entry;
	const char *expect, *why = "";
	size_t usable = 0;
	u32 nr_user = 0;

	if (e->model_idx != EMU_NONE)
		log = &unwind_kmodel__events(emu->km, NULL)[e->model_idx];
	fprintf(fp, "{\"sample\":%" PRIu64 ",\"time\":%" PRIu64, n, e->time);
	fprintf(fp, ",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"event\":\"%s\",", (int)e->pid,
		(int)e->tid, (int)e->cpu, e->evsel ? evsel__name(e->evsel) : "");
	if (!log || !log->cookie) {
		fprintf(fp, "\"cookie\":null,\"expect\":\"not-deferred\"}\n");
		return;
	}
	entry = &emu->entries[e->entry];
	if (entry->record != EMU_NONE)
		rec = &emu->records[entry->record];
	emu_event__user(e, &nr_user);

	if (!rec) {
		expect = "orphan";
		why = "no-record";
	} else if (!rec->copies) {
		expect = "orphan";
		why = "drop";
	} else if (!log->truth_known) {
		expect = "orphan";
		why = "exec";
	} else {
		usable = emu__record_usable(emu, rec);
		expect = usable ? "stitched" : "orphan";
		why = usable ? "" : "empty";
	}
	fprintf(fp, "\"cookie\":\"%#" PRIx64 "\",\"entry\":%d,\"return\":\"%s\",\"late\":%s,",
		log->cookie, e->entry, emu_return_names[entry->how], log->late ? "true" : "false");
	if (rec)
		fprintf(fp, "\"record_time\":%" PRIu64 ",\"record_cpu\":%u,", rec->time, rec->cpu);
	emu__truth_faults(fp, log->late ? "late" : NULL, rec);
	fprintf(fp, ",\"nr_user\":%u,\"nr_user_usable\":%zu,\"expect\":\"%s\"", nr_user,
		usable, expect);
	if (*why)
		fprintf(fp, ",\"orphan\":\"%s\"", why);
	fprintf(fp, "}\n");
}

int deferred_emulate__write_truth(struct emu *emu, FILE *fp)
{
	const struct deferred_emulate_opts *o = emu->opts;
	const struct unwind_kmodel_event *log = unwind_kmodel__events(emu->km, NULL);
	size_t i;
	u64 n = 0;

	fprintf(fp, "{\"truth\":\"perf stitch --emulate\",\"version\":1");
	fprintf(fp, ",\"seed\":%" PRIu64 ",\"drop\":%g,\"duplicate\":%g,\"late\":%g", o->seed,
		o->drop, o->duplicate, o->late);
	fprintf(fp, ",\"bogus_ip\":%g,\"exit_records\":%s", o->bogus_ip,
		o->exit_records ? "true" : "false");
	fprintf(fp, ",\"samples\":%" PRIu64 ",\"deferred\":%" PRIu64 ",\"entries\":%" PRIu64,
		emu->stats->samples, emu->stats->deferred, emu->stats->entries);
	fprintf(fp, ",\"records\":%zu}\n", emu->nr_records);
	for (i = 0; i < emu->nr_ev; i++)
		if (emu->ev[i].kind == EMU_K_SAMPLE)
			emu__truth_sample(emu, fp, &emu->ev[i], n++);
	for (i = 0; i < emu->nr_records; i++) {
		const struct emu_record *rec = &emu->records[i];
		const struct unwind_kmodel_event *l = &log[rec->log_idx];

		fprintf(fp, "{\"record\":%zu,\"entry\":%d,\"pid\":%d,\"tid\":%d,\"time\":%" PRIu64
			",\"cpu\":%u,\"cookie\":\"%#" PRIx64 "\",\"nr\":%zu,\"copies\":%u,",
			i, rec->entry, (int)l->pid, (int)l->tid, rec->time, rec->cpu, l->cookie,
			l->nr, rec->copies);
		emu__truth_faults(fp, NULL, rec);
		if (rec->bogus_at != EMU_NONE)
			fprintf(fp, ",\"bogus_at\":%ld,\"bogus_ip\":\"%#" PRIx64 "\"",
				rec->bogus_at, rec->bogus_ip);
		fprintf(fp, "}\n");
	}
	return ferror(fp) ? -EIO : 0;
}
