/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The output of every perf stitch mode: a file is written unnamed in its
 * directory (O_TMPFILE; where it cannot be, under a temporary name next to
 * it) and given its name only when complete, so a failed, interrupted or
 * killed run never leaves a partial file that looks finished, nor a
 * temporary one, and an existing file is never lost to a failed run.  Standard output, devices
 * and FIFOs are written in place: renaming a temporary file over /dev/null
 * would replace the device.
 */
#ifndef __PERF_STITCH_OUTPUT_H
#define __PERF_STITCH_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

struct stitch_output {
	const char	*path;		/* as given; "-" is standard output */
	int		fd;
	FILE		*fp;		/* from stitch_output__fdopen() */
	/* perf.data can be written: lseek() works (a file, /dev/null) */
	bool		seekable;
	/* standard output, a device, a FIFO: written as it is, not renamed */
	bool		in_place;
	int		slot;		/* of the temporary file (signal cleanup), or -1 */
};

/*
 * Opens @path ("-" or NULL: standard output) for writing.  A regular file
 * that exists is replaced only with @force, and never when it is @input
 * (the same inode; @input may be NULL or "-").  A symlink is followed: its
 * target is replaced.  @mode: of a new file, before the umask.  Prints
 * why it fails, naming the path; returns 0 or a negative errno.
 */
int stitch_output__open(struct stitch_output *out, const char *path, const char *input,
			bool force, mode_t mode);

/* A stdio stream on the output (standard output itself for "-"); NULL: no memory. */
FILE *stitch_output__fdopen(struct stitch_output *out);

/*
 * Flushes and closes the output; a temporary file is renamed over the
 * path.  Prints why it fails; the temporary file is then removed.
 */
int stitch_output__commit(struct stitch_output *out);

/* Closes the output after a failure; a temporary file is removed. */
void stitch_output__abort(struct stitch_output *out);

/* For messages: "stdout" or the path. */
const char *stitch_output__name(const struct stitch_output *out);

/*
 * A perf.data stream written in 64 KiB blocks (perf 6.1 writes each event
 * with a write() of its own): convert's and emulate's output.
 */
struct stitch_buf {
	int	fd;
	u64	written;	/* bytes taken, flushed or not */
	size_t	len;
	char	buf[65536];
};

/* 0 or -errno; a write larger than the buffer goes out directly */
int stitch_buf__write(struct stitch_buf *b, const void *data, size_t sz);
int stitch_buf__flush(struct stitch_buf *b);
/*
 * Overwrites @sz bytes of what was written at @pos (a value of ->written
 * before that write), which is at @file_off in the file: in the buffer,
 * or in the file when it went out already.  Not across two writes.
 */
int stitch_buf__patch(struct stitch_buf *b, u64 pos, u64 file_off, const void *data, size_t sz);

#endif /* __PERF_STITCH_OUTPUT_H */
