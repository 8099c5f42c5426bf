// SPDX-License-Identifier: GPL-2.0
/*
 * The output of every perf stitch mode: see stitch-output.h.
 *
 * A file is first written unnamed (O_TMPFILE) in the directory of the
 * output: if the process dies, SIGKILL and crashes included, the kernel
 * frees it and nothing is left behind.  When complete it is linked under a
 * temporary name, renamed over the output at once.  Where the filesystem
 * has no O_TMPFILE (or /proc, to link it by), it is a named temporary file
 * from the start.
 *
 * The temporary names in use are kept in a small static table, which
 * handlers of the signals that end a process (SIGHUP, SIGINT, SIGQUIT,
 * SIGTERM) remove before the process gets the signal as it would have
 * without them: the handlers are installed while an output is pending and
 * the previous ones put back when the last one is done.  A signal ignored
 * (nohup, a background job) stays ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <internal/lib.h>	/* writen() */

#include "debug.h"
#include "stitch-output.h"

/* --emulate writes two files at once: the recording and its ground truth */
#define STITCH_OUTPUT_PENDING	4

struct pending_file {
	char			tmp[PATH_MAX];
	char			target[PATH_MAX];	/* what the rename replaces */
	/*
	 * Read by the signal handler, which C lets see a store of the
	 * interrupted code only in a volatile sig_atomic_t: set before
	 * the temporary name is created, cleared once it is renamed or gone.
	 */
	volatile sig_atomic_t	used;
	bool			taken;		/* the slot is an output's */
	bool			unnamed;	/* O_TMPFILE: no name until committed */
};

static struct pending_file pending[STITCH_OUTPUT_PENDING];
static int nr_pending;

/* The signals whose default action ends the process, and their previous actions. */
static const int cleanup_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
static struct sigaction old_actions[ARRAY_SIZE(cleanup_signals)];
/* Only a signal this file handles: one that was ignored stays ignored. */
static bool handled[ARRAY_SIZE(cleanup_signals)];

static void pending__sig_cleanup(int sig)
{
	size_t i;

	for (i = 0; i < STITCH_OUTPUT_PENDING; i++) {
		if (pending[i].used)
			unlink(pending[i].tmp);
	}
	/*
	 * The previous action gets the signal once this handler returns
	 * (it is blocked until then): the default one ends the process.
	 */
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++) {
		if (cleanup_signals[i] == sig)
			sigaction(sig, &old_actions[i], NULL);
	}
	raise(sig);
}

static void pending__install_handlers(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pending__sig_cleanup;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++) {
		handled[i] = false;
		if (sigaction(cleanup_signals[i], NULL, &old_actions[i]) ||
		    old_actions[i].sa_handler == SIG_IGN)
			continue;
		handled[i] = !sigaction(cleanup_signals[i], &sa, NULL);
	}
}

static void pending__restore_handlers(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++) {
		if (handled[i])
			sigaction(cleanup_signals[i], &old_actions[i], NULL);
		handled[i] = false;
	}
}

static int pending__get(void)
{
	int i;

	for (i = 0; i < STITCH_OUTPUT_PENDING; i++) {
		if (!pending[i].taken)
			break;
	}
	if (i == STITCH_OUTPUT_PENDING)
		return -EMFILE;
	pending[i].taken = true;
	if (!nr_pending++)
		pending__install_handlers();
	return i;
}

/* After the file was renamed or removed. */
static void pending__put(int slot)
{
	pending[slot].used = 0;
	pending[slot].tmp[0] = '\0';
	pending[slot].taken = false;
	pending[slot].unnamed = false;
	if (!--nr_pending)
		pending__restore_handlers();
}

static bool same_file(const char *input, const struct stat *out)
{
	struct stat in;

	return input && strcmp(input, "-") && !stat(input, &in) &&
	       in.st_dev == out->st_dev && in.st_ino == out->st_ino;
}

/*
 * An unnamed file in @target's directory, for stitch_output__link(); -1
 * where the filesystem has no O_TMPFILE or there is no /proc to link it by.
 */
static int open_unnamed(const char *target, mode_t mode)
{
	char dir[PATH_MAX];
	char *slash;

	if (access("/proc/self/fd", X_OK))
		return -1;
	snprintf(dir, sizeof(dir), "%s", target);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0';	/* "/x": "/" */
	return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
}

/* A temporary file next to @target (the path, its symlink resolved). */
static int stitch_output__open_tmp(struct stitch_output *out, const char *target, mode_t mode)
{
	struct pending_file *pf;
	mode_t mask;
	int slot, fd;

	slot = pending__get();
	if (slot < 0) {
		pr_err("%s: too many output files at once\n", out->path);
		return slot;
	}
	pf = &pending[slot];
	if (snprintf(pf->target, sizeof(pf->target), "%s", target) >= (int)sizeof(pf->target) ||
	    snprintf(pf->tmp, sizeof(pf->tmp), "%s.tmp-XXXXXX", target) >= (int)sizeof(pf->tmp)) {
		pr_err("%s: the path is too long\n", out->path);
		pending__put(slot);
		return -ENAMETOOLONG;
	}
	fd = open_unnamed(target, mode);
	if (fd >= 0) {
		pf->unnamed = true;
		goto opened;
	}
	/* the signal handler may unlink it from the moment it exists */
	pf->used = 1;
	fd = mkstemp(pf->tmp);
	if (fd < 0) {
		int err = -errno;

		pr_err("cannot create %s: %s\n", out->path, strerror(errno));
		pending__put(slot);
		return err;
	}
	/* mkstemp() makes it 0600: give it the mode of any new file */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, mode & ~mask))
		pr_debug("cannot chmod %s: %s\n", pf->tmp, strerror(errno));
opened:
	out->fd = fd;
	out->slot = slot;
	out->seekable = true;
	return 0;
}

int stitch_output__open(struct stitch_output *out, const char *path, const char *input,
			bool force, mode_t mode)
{
	char target[PATH_MAX];
	struct stat st;
	int err;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->slot = -1;
	out->path = path ?: "-";
	if (!strcmp(out->path, "-")) {
		/* "-" is pipe mode, whatever standard output is */
		out->fd = STDOUT_FILENO;
		out->in_place = true;
		return 0;
	}
	if (stat(path, &st)) {
		if (errno != ENOENT) {
			err = -errno;
			pr_err("cannot create %s: %s\n", path, strerror(errno));
			return err;
		}
		return stitch_output__open_tmp(out, path, mode);
	}
	if (same_file(input, &st)) {
		pr_err("%s: the output would replace the input\n", path);
		return -EINVAL;
	}
	if (S_ISDIR(st.st_mode)) {
		pr_err("%s is a directory\n", path);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		/* a device or a FIFO: written, never replaced */
		out->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (out->fd < 0) {
			err = -errno;
			pr_err("cannot open %s: %s\n", path, strerror(errno));
			return err;
		}
		out->in_place = true;
		out->seekable = lseek(out->fd, 0, SEEK_CUR) != (off_t)-1;
		return 0;
	}
	if (!force) {
		pr_err("%s exists, not overwriting it (-f to overwrite)\n", path);
		return -EEXIST;
	}
	/* a symlink stays one: its target is replaced */
	if (!realpath(path, target)) {
		err = -errno;
		pr_err("cannot resolve %s: %s\n", path, strerror(errno));
		return err;
	}
	return stitch_output__open_tmp(out, target, mode);
}

FILE *stitch_output__fdopen(struct stitch_output *out)
{
	if (!out->fp)
		out->fp = out->fd == STDOUT_FILENO ? stdout : fdopen(out->fd, "w");
	return out->fp;
}

const char *stitch_output__name(const struct stitch_output *out)
{
	return out->fd == STDOUT_FILENO ? "stdout" : out->path;
}

/*
 * The unnamed file written to @fd gets @pf's target name: linkat() cannot
 * replace a file, so a temporary name first (the only moment one exists),
 * renamed over the target.
 */
static int stitch_output__link(int fd, struct pending_file *pf)
{
	char proc[64];
	unsigned int n;
	int err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (n = 0; ; n++) {
		if (snprintf(pf->tmp, sizeof(pf->tmp), "%s.tmp-%d-%u", pf->target, getpid(), n) >=
		    (int)sizeof(pf->tmp))
			return -ENAMETOOLONG;
		pf->used = 1;
		if (!linkat(AT_FDCWD, proc, AT_FDCWD, pf->tmp, AT_SYMLINK_FOLLOW))
			break;
		err = -errno;
		pf->used = 0;
		if (err != -EEXIST || n == 100)
			return err;
	}
	if (rename(pf->tmp, pf->target)) {
		err = -errno;
		unlink(pf->tmp);
		pf->used = 0;
		return err;
	}
	pf->used = 0;
	return 0;
}

/* Flushes (an unnamed file linked in place, when @pf) and closes; 0 or -errno. */
static int stitch_output__close(struct stitch_output *out, struct pending_file *pf)
{
	int err = 0;

	if (out->fp) {
		if (fflush(out->fp) || ferror(out->fp))
			err = -(errno ?: EIO);
	}
	if (!err && pf && pf->unnamed) {
		err = stitch_output__link(out->fd, pf);
		if (err)
			pr_err("cannot link %s in place: %s\n", pf->target, strerror(-err));
	}
	if (out->fp) {
		if (out->fp != stdout && fclose(out->fp) && !err)
			err = -(errno ?: EIO);
		if (out->fp != stdout)
			out->fd = -1;
		out->fp = NULL;
	}
	if (out->fd >= 0 && out->fd != STDOUT_FILENO && close(out->fd) && !err)
		err = -errno;
	out->fd = -1;
	return err;
}

int stitch_output__commit(struct stitch_output *out)
{
	struct pending_file *pf = out->slot >= 0 ? &pending[out->slot] : NULL;
	int err = stitch_output__close(out, pf);

	if (err) {
		pr_err("cannot write %s: %s\n", stitch_output__name(out), strerror(-err));
	} else if (pf && !pf->unnamed && rename(pf->tmp, pf->target)) {
		err = -errno;
		pr_err("cannot rename %s to %s: %s\n", pf->tmp, pf->target, strerror(errno));
	}
	if (err) {
		stitch_output__abort(out);
		return err;
	}
	if (pf)
		pending__put(out->slot);
	out->slot = -1;
	return 0;
}

void stitch_output__abort(struct stitch_output *out)
{
	stitch_output__close(out, NULL);
	if (out->slot >= 0) {
		if (!pending[out->slot].unnamed)
			unlink(pending[out->slot].tmp);
		pending__put(out->slot);
		out->slot = -1;
	}
}

int stitch_buf__flush(struct stitch_buf *b)
{
	if (b->len && writen(b->fd, b->buf, b->len) != (ssize_t)b->len)
		return -errno ?: -EIO;
	b->len = 0;
	return 0;
}

int stitch_buf__patch(struct stitch_buf *b, u64 pos, u64 file_off, const void *data, size_t sz)
{
	u64 start = b->written - b->len;	/* the buffer's first byte */

	if (pos >= start) {
		memcpy(b->buf + (pos - start), data, sz);
		return 0;
	}
	return pwrite(b->fd, data, sz, file_off) == (ssize_t)sz ? 0 : (-errno ?: -EIO);
}

int stitch_buf__write(struct stitch_buf *b, const void *data, size_t sz)
{
	int err;

	b->written += sz;
	if (b->len + sz > sizeof(b->buf)) {
		err = stitch_buf__flush(b);
		if (err)
			return err;
		if (sz > sizeof(b->buf))
			return writen(b->fd, data, sz) == (ssize_t)sz ? 0 : (-errno ?: -EIO);
	}
	memcpy(b->buf + b->len, data, sz);
	b->len += sz;
	return 0;
}
