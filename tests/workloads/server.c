// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * server SECONDS [WORKERS [DEPTH]]: a server's threads, blocking briefly
 * and often, for the side-by-side of perf's BPF --off-cpu and the
 * deferred one (tests/vm/offcpu-bpf.sh):
 *
 *   WORKERS threads (16) in rings of four pass a request on: each waits
 *   in block_request() (FUTEX_WAIT on a word of its own) until the one
 *   before it hands it the request, handles it (a little compute) and
 *   hands it to the next.  Each wait is a switch out and in, a few
 *   microseconds to a millisecond: the requests handled per second are
 *   the throughput a recording costs.  Each worker blocks DEPTH (40)
 *   frames of serve_nested() below its thread's start, deeper than the
 *   32 entries a BPF stack keeps.
 *
 *   one thread waits for SIGUSR1, then blocks in block_long() (a pipe
 *   read) to the end: sent by the command of a perf record attached to
 *   the server (-p PID -- sh -c 'kill -USR1 PID; sleep 1.5'), it blocks
 *   from inside that recording to past its end.
 *
 * SECONDS 0: until SIGINT or SIGTERM (then as at the end of SECONDS).
 *
 * At the end it prints, as offcpu does (offcpu.h: each call's wall time
 * minus its thread's CPU time):
 *
 *   offcpu block_request NANOSECONDS CALLS
 *   offcpu block_long NANOSECONDS 1
 *   requests N SECONDS                  handled in SECONDS of wall time
 */
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "offcpu.h"

#define RING		4
#define MAX_WORKERS	256

struct worker {
	uint32_t		turn;	/* 1: a request waits for this worker */
	struct worker		*next;
	struct offcpu_total	total;
	uint64_t		requests;
	int			depth;
};

static struct worker workers[MAX_WORKERS];
static volatile int done;
static volatile sig_atomic_t stop;
static int long_fds[2];

static void hand_on(struct worker *w)
{
	__atomic_store_n(&w->turn, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &w->turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static NOINLINE int block_request(struct worker *w)
{
	while (!__atomic_load_n(&w->turn, __ATOMIC_ACQUIRE) && !done)
		call_futex_wait(&w->turn, 0);
	sink++;
	return 0;
}

static NOINLINE void serve(struct worker *w)
{
	while (!done) {
		sink += TIMED(&w->total, block_request(w));
		if (done)
			break;
		w->turn = 0;
		compute(2000);
		w->requests++;
		hand_on(w->next);
	}
}

/* depth frames of its own between the thread's start and serve() */
static NOINLINE int serve_nested(struct worker *w, int depth)
{
	if (depth > 0)
		return serve_nested(w, depth - 1) + 1;
	serve(w);
	return 0;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	uint64_t start = thread_start(&w->total);

	sink += serve_nested(w, w->depth);
	thread_end(&w->total, start);
	return NULL;
}

static NOINLINE int block_long(void)
{
	char byte;
	int ret = (int)call_read(long_fds[0], &byte, 1);

	sink++;
	return ret;
}

static void *long_thread(void *arg)
{
	struct offcpu_total *t = arg;
	uint64_t start = thread_start(t);
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigwait(&usr1, &sig);
	sink += TIMED(t, block_long());
	thread_end(t, start);
	return NULL;
}

static void on_stop(int sig)
{
	stop = sig;
}

int main(int argc, char **argv)
{
	int nworkers = argc > 2 ? atoi(argv[2]) : 16;
	int depth = argc > 3 ? atoi(argv[3]) : 40;
	struct offcpu_total long_total = { .name = "block_long" };
	struct offcpu_total request_total = { .name = "block_request" };
	pthread_t tids[MAX_WORKERS], long_tid;
	uint64_t requests = 0;
	double start, seconds;
	sigset_t usr1;
	int i;

	if (argc < 2 || nworkers < RING || nworkers > MAX_WORKERS || nworkers % RING ||
	    depth < 0) {
		fprintf(stderr, "usage: server SECONDS [WORKERS (a multiple of %d, at most %d) [DEPTH]]\n",
			RING, MAX_WORKERS);
		return 2;
	}
	if (pipe(long_fds))
		return 1;
	/* SIGUSR1 for the long thread's sigwait() alone */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	pthread_create(&long_tid, NULL, long_thread, &long_total);
	start = now_s();
	for (i = 0; i < nworkers; i++) {
		workers[i].next = &workers[i / RING * RING + (i + 1) % RING];
		workers[i].depth = depth;
		workers[i].total.name = "block_request";
	}
	for (i = 0; i < nworkers; i++)
		pthread_create(&tids[i], NULL, worker_thread, &workers[i]);
	/* one request in each ring */
	for (i = 0; i < nworkers; i += RING)
		hand_on(&workers[i]);
	seconds = atof(argv[1]);
	while (!stop && (seconds <= 0 || now_s() - start < seconds))
		usleep(10000);
	/* done: every worker is handed a turn to see it */
	done = 1;
	seconds = now_s() - start;
	for (i = 0; i < nworkers; i++)
		hand_on(&workers[i]);
	for (i = 0; i < nworkers; i++)
		pthread_join(tids[i], NULL);
	for (i = 0; i < nworkers; i++) {
		request_total.ns += workers[i].total.ns;
		request_total.calls += workers[i].total.calls;
		requests += workers[i].requests;
	}
	/* the long thread's wait ends here, if no SIGUSR1 came before */
	pthread_kill(long_tid, SIGUSR1);
	if (write(long_fds[1], "x", 1) != 1)
		return 1;
	pthread_join(long_tid, NULL);
	printf("offcpu %s %llu %llu\n", request_total.name,
	       (unsigned long long)request_total.ns, (unsigned long long)request_total.calls);
	printf("offcpu %s %llu %llu\n", long_total.name, (unsigned long long)long_total.ns,
	       (unsigned long long)long_total.calls);
	printf("requests %llu %.3f\n", (unsigned long long)requests, seconds);
	return 0;
}
