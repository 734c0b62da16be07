/*
 * fakeclock.c - lockbench's LD_PRELOAD shim: it moves a process's wall clock,
 * and it makes a library's connections come from a client's own address.
 *
 * The clock:
 * It adds an offset in milliseconds, read from the file named by
 * $LOCKBENCH_CLOCK_FILE (clockfile.h), to CLOCK_REALTIME in clock_gettime(),
 * gettimeofday() and time(); a strobing offset (strobe = MS) is on and off in
 * turn, computed here at every read. Monotonic clocks are untouched. It calls the kernel through syscall() and never
 * allocates or calls dlsym, which is why it works where libfaketime hangs
 * Debian's jemalloc-linked redis-server (libfaketime issue #130).
 * Key expiry in Redis follows the wall clock, so a jump forward expires keys
 * early: the `redlock-clock-jump` scenario. Adapters get it too, so that a
 * client clock fault reaches the library.
 *
 * The address: with $LOCKBENCH_SOURCE_ADDR set (an IPv4 address on loopback),
 * every TCP connect() to 127.0.0.0/8 from a socket not yet bound is bound to
 * that address first (port 0: the kernel picks one). On the Sentinel topology
 * the relay tells a client's connections from another's by the address they
 * come from; lockbench's own clients bind it (hiredis's source address), and
 * a library whose public API has no such setting (redis-py 4.3.4, ioredis) gets
 * it here, without a change to the library's code. Anything else passes
 * through untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clockfile.h"

static const struct lb_clockfile *clock_file;
static struct in_addr source; /* 0: connect() untouched */

/* The value of @key ("NAME=") in the environment, or NULL; no allocation. */
static const char *env_value(const char *key)
{
	extern char **environ;
	const char *found = NULL;

	for (char **e = environ; e && *e; e++) {
		const char *p = *e, *q = key;
		while (*q && *p == *q)
			p++, q++;
		if (!*q)
			found = p;
	}
	return found;
}

__attribute__((constructor)) static void fakeclock_init(void)
{
	const char *addr = env_value("LOCKBENCH_SOURCE_ADDR=");
	if (addr && (inet_pton(AF_INET, addr, &source) != 1 || (ntohl(source.s_addr) >> 24) != 127))
		source.s_addr = 0; /* only ever a loopback address */

	const char *path = env_value("LOCKBENCH_CLOCK_FILE=");
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

/* The offset now: steady, or on and off in a strobe's periods (clockfile.h),
 * on CLOCK_MONOTONIC, read only when the file strobes. */
static int64_t offset_ms(void)
{
	struct lb_clockset set;
	struct timespec mono = { 0 };

	lb_clockfile_read(clock_file, &set);
	if (set.strobe_ms <= 0)
		return set.offset_ms;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &mono);
	return lb_clockset_at(&set, (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec);
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

int connect(int fd, const struct sockaddr *to, socklen_t len)
{
	if (source.s_addr && to && to->sa_family == AF_INET && len >= sizeof(struct sockaddr_in) &&
	    (ntohl(((const struct sockaddr_in *)(const void *)to)->sin_addr.s_addr) >> 24) == 127) {
		int type = 0, saved = errno;
		socklen_t tl = sizeof(type);
		struct sockaddr_in self = { 0 };
		socklen_t sl = sizeof(self);
		if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
		    type == SOCK_STREAM && syscall(SYS_getsockname, fd, &self, &sl) == 0 &&
		    self.sin_family == AF_INET && self.sin_port == 0 && self.sin_addr.s_addr == 0) {
			struct sockaddr_in from = { .sin_family = AF_INET, .sin_addr = source };
			/* a connection from the default address would belong to no
			 * party and escape every partition: fail it instead */
			if (syscall(SYS_bind, fd, &from, sizeof(from)) != 0)
				return -1; /* errno: bind's */
		}
		errno = saved;
	}
	return (int)syscall(SYS_connect, fd, to, len);
}
