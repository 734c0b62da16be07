/*
 * fakeclock.c - an LD_PRELOAD shim that moves a redis-server's wall clock.
 *
 * It adds an offset in milliseconds, read from the file named by
 * $LOCKBENCH_CLOCK_FILE (one atomic 64-bit integer, clockfile.h), to
 * CLOCK_REALTIME in clock_gettime(), gettimeofday() and time(). Monotonic
 * clocks are untouched. It calls the kernel through syscall() and never
 * allocates or calls dlsym, which is why it works where libfaketime hangs
 * Debian's jemalloc-linked redis-server (libfaketime issue #130).
 * Key expiry in Redis follows the wall clock, so a jump forward expires keys
 * early: the `redlock-clock-jump` scenario.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clockfile.h"

static const struct lb_clockfile *clock_file;

__attribute__((constructor)) static void fakeclock_init(void)
{
	const char *path = NULL;
	extern char **environ;

	for (char **e = environ; e && *e; e++) {
		const char *k = "LOCKBENCH_CLOCK_FILE=";
		const char *p = *e, *q = k;
		while (*q && *p == *q)
			p++, q++;
		if (!*q)
			path = p;
	}
	if (!path)
		return;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	void *m = (void *)syscall(SYS_mmap, NULL, LB_CLOCKFILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	syscall(SYS_close, fd);
	if (m != MAP_FAILED)
		clock_file = m;
}

static int64_t offset_ms(void)
{
	return lb_clockfile_load(clock_file);
}

static void shift(struct timespec *ts)
{
	int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + offset_ms() * 1000000;
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int rc = (int)syscall(SYS_clock_gettime, id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		shift(ts);
	return rc;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;
	int rc = clock_gettime(CLOCK_REALTIME, &ts);
	(void)tz;
	if (rc == 0) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return rc;
}

time_t time(time_t *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (out)
		*out = ts.tv_sec;
	return ts.tv_sec;
}
