// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for testing perf record --call-graph deferred on kernels
 * that do not know attr.defer_callchain and attr.defer_output (before
 * Linux 6.19).
 *
 * Wraps glibc's syscall() for __NR_perf_event_open: logs the attr of every
 * call, then either
 *
 *   FAKE_DEFER_MODE=accept (default): clears the two bits in a copy of the
 *	attr and opens that, like a 6.19 kernel that accepts them (it does
 *	not defer anything, the samples keep in-place callchains);
 *   FAKE_DEFER_MODE=reject: fails with EINVAL when either bit is set, like
 *	every kernel before 6.19, and opens the attr unchanged otherwise.
 *
 * perf keeps its own copy of the attr (the one written to perf.data), which
 * the shim does not touch.
 *
 * FAKE_DEFER_LOG=<file>: one line per call, appended:
 *	type=1 config=0x0 sample_type=0x1a7 defer_callchain=1 defer_output=1 pid=-1 cpu=0 ret=5
 *
 * Build: gcc -shared -fPIC -O2 -o fake-defer-kernel.so fake-defer-kernel.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the u64 of flag bits at attr offset 40 (disabled:1, inherit:1, ...) */
#define ATTR_FLAGS_OFFSET	40
#define ATTR_DEFER_CALLCHAIN	(1ULL << 38)
#define ATTR_DEFER_OUTPUT	(1ULL << 39)
/* PERF_ATTR_SIZE_VER0: what a size of 0 means */
#define ATTR_SIZE_VER0		64
#define ATTR_SIZE_MAX		4096

typedef long (*syscall_fn)(long, ...);

static syscall_fn real_syscall(void)
{
	static syscall_fn real;

	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	return real;
}

static void log_open(const unsigned char *attr, uint64_t flags, long pid,
		     long cpu, long ret)
{
	const char *path = getenv("FAKE_DEFER_LOG");
	uint64_t config, sample_type;
	uint32_t type;
	char line[256];
	int fd, len;

	if (!path)
		return;
	memcpy(&type, attr, sizeof(type));
	memcpy(&config, attr + 8, sizeof(config));
	memcpy(&sample_type, attr + 24, sizeof(sample_type));
	len = snprintf(line, sizeof(line),
		       "type=%u config=%#llx sample_type=%#llx defer_callchain=%d defer_output=%d pid=%ld cpu=%ld ret=%ld\n",
		       type, (unsigned long long)config,
		       (unsigned long long)sample_type,
		       !!(flags & ATTR_DEFER_CALLCHAIN),
		       !!(flags & ATTR_DEFER_OUTPUT), pid, cpu, ret);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, len) != len)
		len = 0;
	close(fd);
}

static long fake_perf_event_open(const void *uattr, long pid, long cpu,
				 long group_fd, long flags)
{
	const char *mode = getenv("FAKE_DEFER_MODE");
	bool reject = mode && !strcmp(mode, "reject");
	union {
		uint64_t align;
		unsigned char bytes[ATTR_SIZE_MAX];
	} copy;
	uint64_t attr_flags;
	uint32_t size;
	long ret;
	int saved;

	memcpy(&size, (const unsigned char *)uattr + 4, sizeof(size));
	if (!size)
		size = ATTR_SIZE_VER0;
	if (size < ATTR_FLAGS_OFFSET + sizeof(attr_flags) || size > ATTR_SIZE_MAX)
		return real_syscall()(__NR_perf_event_open, uattr, pid, cpu,
				      group_fd, flags);

	memcpy(copy.bytes, uattr, size);
	memcpy(&attr_flags, copy.bytes + ATTR_FLAGS_OFFSET, sizeof(attr_flags));

	if (reject && (attr_flags & (ATTR_DEFER_CALLCHAIN | ATTR_DEFER_OUTPUT))) {
		log_open(copy.bytes, attr_flags, pid, cpu, -EINVAL);
		errno = EINVAL;
		return -1;
	}

	if (!reject) {
		uint64_t cleared = attr_flags & ~(ATTR_DEFER_CALLCHAIN | ATTR_DEFER_OUTPUT);

		memcpy(copy.bytes + ATTR_FLAGS_OFFSET, &cleared, sizeof(cleared));
	}

	ret = real_syscall()(__NR_perf_event_open, copy.bytes, pid, cpu,
			     group_fd, flags);
	saved = errno;
	log_open(copy.bytes, attr_flags, pid, cpu, ret < 0 ? -saved : ret);
	errno = saved;
	return ret;
}

long syscall(long number, ...)
{
	long a[6];
	va_list ap;
	int i;

	/* like glibc's syscall(): always six arguments, whatever was passed */
	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	/* perf_event_open(attr, pid_t pid, int cpu, int group_fd, unsigned long) */
	if (number == __NR_perf_event_open && a[0])
		return fake_perf_event_open((const void *)a[0], (int)a[1],
					    (int)a[2], (int)a[3], a[4]);

	return real_syscall()(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
