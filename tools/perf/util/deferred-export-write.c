// SPDX-License-Identifier: GPL-2.0
/*
 * perf stitch -F folded|speedscope: the writers of what
 * util/deferred-export.c aggregated.
 *
 * Folded stacks follow stackcollapse-perf.pl (FlameGraph) on perf script's
 * output, so that either can feed flamegraph.pl and compare:
 *
 *  - one line per distinct stack, "root;caller;...;leaf count", sorted
 *    byte-wise like the script's output;
 *  - the root frame is the comm, spaces made '_' ("comm-PID",
 *    "comm-PID/TID" with --pid, --tid);
 *  - a frame without a symbol is its dso's file name in brackets
 *    ("[libc.so.6]"), or "[unknown]" without a map; an unresolved kernel
 *    address in the kernel map is "[[kernel.kallsyms]]";
 *  - names are tidied as the script does: ';' becomes ':', everything from
 *    the first '(' on is dropped (argument lists of demangled names; not in
 *    Go method names like "net/http.(*Client).Do", nor for
 *    "(anonymous namespace)"), quotes are removed, and a Java signature's
 *    leading 'L' goes in the java process;
 *  - --kernel-suffix appends "_[k]" to the kernel frames that have a map
 *    (the script's --kernel), but not to inlined functions, whose dso
 *    perf script prints as "(inlined)"; --separator puts a "-" frame
 *    between the user and the kernel part (flamegraph.pl draws it grey).
 *
 * Where the script guesses from the text perf script prints, perf knows:
 * a frame is a kernel frame when it comes from the kernel part of the
 * callchain (the script looks at the dso name, and so also marks [vdso]
 * and the "[user stack lost: ...]" pseudo-frame); a name that starts with
 * '(' is kept (the script drops the frame) and "->" in a name does not
 * split it (the script's rule for an old perf script format of inlined
 * frames).
 *
 * Speedscope (https://www.speedscope.app/file-format-schema.json): the
 * frames in shared.frames (name; file: the dso, when there is a map), one
 * "sampled" profile per thread named "comm tid" (its last comm: see
 * export_stacks__name_threads()), in pid, tid order: each run of
 * consecutive samples with the same stack one entry, its frames root
 * first, weighed as folded weighs them (the sum of the periods, or of the
 * samples with --count=samples); unit "nanoseconds" when every weight is a
 * cpu-clock or task-clock period, else "none"; startValue 0, endValue the
 * thread's total weight.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/zalloc.h>

#include "deferred-export.h"
#include "deferred-export-stacks.h"

/* ---- folded ---- */

/* "net/http.(*Client).Do": a '(' after a '.' and a ")." later */
static bool folded__go_method(const char *name)
{
	const char *open = strstr(name, ".(");

	return open && strstr(open + 2, ").");
}

char *export_frame__name(const struct export_frame *f)
{
	const char *file;
	size_t len;
	char *name;

	if (f->name || !f->dso_name)
		return strdup(f->name ?: "[unknown]");
	file = strrchr(f->dso_name, '/');
	file = file ? file + 1 : f->dso_name;
	len = strlen(file) + 3;
	name = malloc(len);
	if (name)
		snprintf(name, len, "[%s]", file);
	return name;
}

/* The frame's name in folded stacks; NULL: no memory. */
static char *folded__name(const struct export_frame *f, bool java)
{
	char *name = export_frame__name(f), *p, *q;

	if (!name)
		return NULL;

	for (p = name; *p; p++) {
		if (*p == ';')
			*p = ':';
	}
	if (!folded__go_method(name)) {
		for (p = name; (p = strchr(p, '(')); p++) {
			if (strncmp(p + 1, "anonymous namespace)", 20)) {
				*p = '\0';
				break;
			}
		}
	}
	for (p = q = name; *p; p++) {
		if (*p != '"' && *p != '\'')
			*q++ = *p;
	}
	*q = '\0';
	if (java && name[0] == 'L' && strchr(name, '/'))
		memmove(name, name + 1, strlen(name));
	return name;
}

static const char *folded__frame(struct export_frame *f, bool java)
{
	char **cached = java ? &f->folded_java : &f->folded;

	if (!*cached)
		*cached = folded__name(f, java);
	return *cached;
}

struct folded_line {
	char	*stack;
	u64	count;
};

static int folded_line__cmp(const void *a, const void *b)
{
	const struct folded_line *la = a, *lb = b;

	return strcmp(la->stack, lb->stack);
}

/* Number of leaf-side kernel frames when a user part follows, else 0. */
static u32 folded__kernel_part(const struct export_stacks *es, const u32 *frames, u32 len)
{
	u32 k = 0;

	while (k < len && es->frames[frames[k]].kernel)
		k++;
	return k < len ? k : 0;
}

/* root;frames root first, with the separator and the suffixes asked for */
static char *folded__stack(struct export_stacks *es, const struct export_count *c)
{
	const struct export_stack *s = &es->stacks[c->stack];
	const u32 *frames = es->stack_frames + s->off;
	const char *root = es->roots[c->root];
	bool java = !strcmp(root, "java");
	u32 kpart = es->opts->separator ? folded__kernel_part(es, frames, s->len) : 0;
	size_t len = strlen(root) + 1, pos;
	char *line;
	u32 i;

	for (i = 0; i < s->len; i++) {
		const char *name = folded__frame(&es->frames[frames[i]], java);

		if (!name)
			return NULL;
		len += strlen(name) + 6;	/* ';', "_[k]", and room for ";-" */
	}
	line = malloc(len + 2);
	if (!line)
		return NULL;
	pos = snprintf(line, len, "%s", root);
	for (i = s->len; i-- > 0;) {
		const struct export_frame *f = &es->frames[frames[i]];
		bool suffix = es->opts->kernel_suffix && f->kernel && f->dso_name && !f->inlined;

		if (kpart && i == kpart - 1)
			pos += snprintf(line + pos, len + 2 - pos, ";-");
		pos += snprintf(line + pos, len + 2 - pos, ";%s%s",
				java ? f->folded_java : f->folded, suffix ? "_[k]" : "");
	}
	return line;
}

int export_stacks__write_folded(struct export_stacks *es, FILE *fp,
				struct deferred_export_stats *stats)
{
	struct folded_line *lines;
	u32 i, n = 0;
	int err = 0;

	lines = calloc(es->nr_counts ?: 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < es->nr_counts; i++) {
		lines[i].stack = folded__stack(es, &es->counts[i]);
		lines[i].count = es->counts[i].count;
		if (!lines[i].stack) {
			err = -ENOMEM;
			goto out;
		}
	}
	qsort(lines, es->nr_counts, sizeof(*lines), folded_line__cmp);

	/* different frames may fold to one name: their lines merge */
	for (i = 0; i < es->nr_counts; i++) {
		if (n && !strcmp(lines[n - 1].stack, lines[i].stack)) {
			lines[n - 1].count += lines[i].count;
			zfree(&lines[i].stack);
			continue;
		}
		lines[n++] = lines[i];
		if (n - 1 != i)
			lines[i].stack = NULL;
	}
	for (i = 0; i < n; i++) {
		if (fprintf(fp, "%s %" PRIu64 "\n", lines[i].stack, lines[i].count) < 0) {
			err = -EIO;
			break;
		}
	}
	stats->lines = n;
out:
	for (i = 0; i < es->nr_counts; i++)
		free(lines[i].stack);
	free(lines);
	return err;
}

/* ---- speedscope ---- */

/* The length of the valid UTF-8 sequence at @s, 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_string(FILE *fp, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', fp);
	while (*s) {
		size_t n = utf8_len(s);

		if (*s == '"' || *s == '\\') {
			fprintf(fp, "\\%c", *s);
		} else if (*s < 0x20) {
			fprintf(fp, "\\u%04x", *s);
		} else if (!n) {
			fputs("\\ufffd", fp);
			n = 1;
		} else {
			fwrite(s, 1, n, fp);
		}
		s += n ?: 1;
	}
	fputc('"', fp);
}

static int thread__cmp(const void *a, const void *b)
{
	const struct export_thread *ta = *(const struct export_thread * const *)a;
	const struct export_thread *tb = *(const struct export_thread * const *)b;

	if (ta->pid != tb->pid)
		return ta->pid < tb->pid ? -1 : 1;
	if (ta->tid != tb->tid)
		return ta->tid < tb->tid ? -1 : 1;
	return 0;
}

static int speedscope__frame(FILE *fp, const struct export_frame *f)
{
	char *name = export_frame__name(f);

	if (!name)
		return -ENOMEM;
	fputs("{\"name\":", fp);
	json_string(fp, name);
	free(name);
	if (f->dso_name) {
		fputs(",\"file\":", fp);
		json_string(fp, f->dso_name);
	}
	fputc('}', fp);
	return 0;
}

static int speedscope__profile(FILE *fp, const struct export_stacks *es,
			       const struct export_thread *t)
{
	const char *unit = !es->opts->count_samples && es->weighed &&
			   es->weighed_ns == es->weighed ? "nanoseconds" : "none";
	size_t len = strlen(t->comm) + 16;
	u32 r, i;
	char *name;

	name = malloc(len);
	if (!name)
		return -ENOMEM;
	snprintf(name, len, "%s %d", t->comm, t->tid);
	fputs("{\"type\":\"sampled\",\"name\":", fp);
	json_string(fp, name);
	free(name);
	fprintf(fp, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
		unit, t->weight);
	for (r = 0; r < t->nr_runs; r++) {
		const struct export_stack *s = &es->stacks[t->runs[r].stack];
		const u32 *frames = es->stack_frames + s->off;

		fputs(r ? ",[" : "[", fp);
		for (i = s->len; i-- > 0;)
			fprintf(fp, "%s%u", i == s->len - 1 ? "" : ",", frames[i]);
		fputc(']', fp);
	}
	fputs("],\"weights\":[", fp);
	for (r = 0; r < t->nr_runs; r++)
		fprintf(fp, "%s%" PRIu64, r ? "," : "", t->runs[r].weight);
	fputs("]}", fp);
	return 0;
}

int export_stacks__write_speedscope(struct export_stacks *es, FILE *fp, const char *name,
				    struct deferred_export_stats *stats)
{
	struct export_thread **threads;
	u32 i, active = 0;
	u64 runs = 0;
	int err = 0;

	threads = calloc(es->nr_threads ?: 1, sizeof(*threads));
	if (!threads)
		return -ENOMEM;
	for (i = 0; i < es->nr_threads; i++)
		threads[i] = &es->threads[i];
	qsort(threads, es->nr_threads, sizeof(*threads), thread__cmp);
	for (i = 0; i < es->nr_threads; i++) {
		if (threads[i]->weight > threads[active]->weight)
			active = i;
		runs += threads[i]->nr_runs;
	}

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", fp);
	fputs("\"exporter\":\"perf stitch\",\"name\":", fp);
	json_string(fp, name);
	fprintf(fp, ",\"activeProfileIndex\":%u,\"shared\":{\"frames\":[", active);
	for (i = 0; i < es->nr_frames && !err; i++) {
		if (i)
			fputc(',', fp);
		err = speedscope__frame(fp, &es->frames[i]);
	}
	fputs("]},\"profiles\":[", fp);
	for (i = 0; i < es->nr_threads && !err; i++) {
		fputs(i ? ",\n" : "\n", fp);
		err = speedscope__profile(fp, es, threads[i]);
	}
	fputs("]}\n", fp);
	free(threads);
	stats->threads = es->nr_threads;
	stats->runs = runs;
	return err ?: ferror(fp) ? -EIO : 0;
}
