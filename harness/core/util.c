#include "esc.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

const char *lb_strerror(int status)
{
	switch (status) {
	case LB_OK: return "ok";
	case LB_EBUSY: return "lock is held by another client";
	case LB_ELOST: return "lock was no longer ours at release";
	case LB_EFOREIGN: return "release deleted another client's lock";
	case LB_EREDIS: return "redis error or dead connection";
	case LB_ETIMEOUT: return "deadline passed";
	case LB_EVALIDITY: return "quorum reached but validity time spent";
	case LB_ENOMEM: return "out of memory";
	case LB_EINVAL: return "invalid argument";
	case LB_ESYS: return "system call failed";
	case LB_ENOTSUP: return "operation not supported by this strategy";
	case LB_ECANCELED: return "canceled: the run is stopping";
	case LB_ESTALE: return "fence refused: the resource accepted a higher one";
	case LB_ENOREPLICA: return "no replica acknowledged the lock in time";
	case LB_EPROTO: return "the adapter broke the protocol";
	case LB_EDIED: return "the adapter's process died";
	case LB_ENOTHERE: return "a server it needs cannot be reached or refused it";
	}
	return "unknown status";
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * LB_NS_PER_S + ts.tv_nsec;
}

int64_t lb_now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
int64_t lb_wall_ms(void) { return clock_ns(CLOCK_REALTIME) / LB_NS_PER_MS; }

void lb_sleep_until_ns(int64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = deadline_ns / LB_NS_PER_S,
		.tv_nsec = deadline_ns % LB_NS_PER_S,
	};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void lb_sleep_ns(int64_t ns)
{
	if (ns > 0)
		lb_sleep_until_ns(lb_now_ns() + ns);
}

static char *capture;
static size_t capture_len;

void lb_errorf_capture(char *buf, size_t len)
{
	capture = buf && len ? buf : NULL;
	capture_len = capture ? len : 0;
}

void lb_errorf(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	/* a name in a message is data: a newline or an escape sequence in it
	 * is shown as \xNN, never acted on by the terminal */
	int n = snprintf(msg, sizeof(msg), "lockbench: ");
	n += lb_esc_vsnprintf(msg + n, sizeof(msg) - (size_t)n - 1, LB_LANG_TERM, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n > sizeof(msg) - 2)
		n = (int)strlen(msg);
	if (capture) {
		size_t have = strlen(capture);
		snprintf(capture + have, capture_len - have, "%s%s", have ? "; " : "",
			 msg + strlen("lockbench: "));
		return;
	}
	msg[n++] = '\n';
	/* one write: the clients of a run report at the same moment, and their
	 * lines must not interleave */
	fflush(stderr);
	for (ssize_t done = 0, w; done < n; done += w)
		if ((w = write(STDERR_FILENO, msg + done, (size_t)(n - done))) <= 0)
			break;
}

bool lb_dir_arg_ok(const char *what, const char *dir)
{
	size_t n = strlen(dir);
	if (!n) { /* never taken for "not given" (the default directory) */
		lb_errorf("%s '': an empty name; expected a directory", what);
		return false;
	}
	if (n <= LB_DIR_MAX)
		return true;
	lb_errorf("%s: a directory path of %zu bytes; lockbench takes at most %d (docs/running.md, "
		  "Limits): %.80s...", what, n, LB_DIR_MAX, dir);
	return false;
}

bool lb_file_arg_ok(const char *what, const char *path)
{
	char dir[LB_DIR_MAX + 1];
	struct stat st;

	if (!lb_dir_arg_ok(what, path))
		return false;
	if (!*path || path[strlen(path) - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
		lb_errorf("%s '%s': expected a file to write, not a directory", what, path);
		return false;
	}
	/* written whole through a temporary renamed over it: what is there must be
	 * a plain file (a link, a device such as /dev/stdout, would be replaced) */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		lb_errorf("%s '%s': exists and is not a plain file (a link or a device is never "
			  "written over): name a file", what, path);
		return false;
	}
	const char *base = strrchr(path, '/');
	if (strlen(base ? base + 1 : path) > 200) {
		lb_errorf("%s: a file name of %zu bytes; lockbench writes at most 200", what,
			  strlen(base ? base + 1 : path));
		return false;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK) != 0) {
		lb_errorf("%s '%s': cannot write in %s: %s", what, path, dir, strerror(errno));
		return false;
	}
	return true;
}

bool lb_exe_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	char *slash;

	if (n <= 0)
		return false;
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

bool lb_find_installed(const char *name, const char *kind, char *out, size_t len)
{
	char exe[PATH_MAX - 300];
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (!lb_exe_dir(exe, sizeof(exe)))
		return false;
	/* the build tree: build/lockbench beside build/NAME, below the source's NAME */
	snprintf(out, len, "%s/%s", exe, name);
	if (access(out, F_OK) == 0)
		return true;
	snprintf(out, len, "%s/../%s", exe, name);
	if (access(out, F_OK) == 0)
		return true;
	snprintf(out, len, "%s/../../%s", exe, name); /* build/san/lockbench */
	if (access(out, F_OK) == 0)
		return true;
	/* make install: PREFIX/bin/lockbench, PREFIX/KIND/lockbench/BASE */
	snprintf(out, len, "%s/../%s/lockbench/%s", exe, kind, base);
	return access(out, F_OK) == 0;
}

bool lb_plain_number(const char *s)
{
	if (!s)
		return false;
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
		return false;
	return s[strspn(s, "0123456789.eE+-")] == '\0';
}

int lb_tmpdir_absolute(void)
{
	const char *tmp = getenv("TMPDIR");
	char real[PATH_MAX];
	struct stat st;

	if (!tmp || !*tmp)
		return 0;
	if (tmp[0] == '/') {
		bool there = stat(tmp, &st) == 0;
		if (!there || !S_ISDIR(st.st_mode)) {
			lb_errorf("TMPDIR '%.200s' names no directory (%s): set TMPDIR to a directory, "
				  "or unset it for /tmp", tmp, there ? "not a directory" : strerror(errno));
			return LB_EINVAL;
		}
		snprintf(real, sizeof(real), "%s", tmp);
	} else {
		bool found = realpath(tmp, real) != NULL;
		if (!found || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
			lb_errorf("TMPDIR '%.200s' is a relative path that names no directory here (%s): "
				  "set TMPDIR to an absolute directory, or unset it for /tmp", tmp,
				  found ? "not a directory" : strerror(errno));
			return LB_EINVAL;
		}
	}
	/* the servers' directories are TMPDIR/lockbench-KIND-PID-XXXXXX, their
	 * sockets and logs below: a longer one was cut short, silently */
	if (strlen(real) > LB_TMPDIR_MAX) {
		lb_errorf("TMPDIR '%.60s...' is %zu bytes long: at most %d (the servers' directories, "
			  "sockets and logs go below it): set a shorter one, or unset it for /tmp",
			  real, strlen(real), LB_TMPDIR_MAX);
		return LB_EINVAL;
	}
	return tmp[0] == '/' || setenv("TMPDIR", real, 1) == 0 ? 0 : LB_ESYS;
}

/* What @st is, for a message. */
static const char *file_kind(const struct stat *st)
{
	return S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a FIFO (a named pipe)" :
	       S_ISCHR(st->st_mode) ? "a character device" : S_ISBLK(st->st_mode) ? "a block device" :
	       S_ISSOCK(st->st_mode) ? "a socket" : "not a regular file";
}

FILE *lb_open_regular(const char *path, int *rc, const char **kind)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	FILE *f = NULL;

	*rc = LB_ESYS;
	*kind = NULL;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		*kind = file_kind(&st);
		*rc = LB_EINVAL;
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "r"))) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	*rc = 0;
	return f;
}

const char *lb_open_why(const char *kind, char *buf, size_t len)
{
	if (!kind)
		return strerror(errno);
	if (!strcmp(kind, "not a regular file"))
		return kind;
	snprintf(buf, len, "is %s, not a regular file", kind);
	return buf;
}

bool lb_written_number(const char *s)
{
	const char *p = s;
	bool zero;

	if (!lb_plain_number(s))
		return false;
	p += *p == '-';
	if (!isdigit((unsigned char)*p) || (*p == '0' && isdigit((unsigned char)p[1])))
		return false; /* ".5", "0240143" */
	zero = p[strspn(p, "0.")] == '\0' || p[strspn(p, "0.")] == 'e';
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.' && !isdigit((unsigned char)*++p))
		return false; /* "5." */
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == 'e' && (p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2]))
		for (p += 2; isdigit((unsigned char)*p);)
			p++;
	return *p == '\0' && !(*s == '-' && zero); /* "-0", "-0.000" */
}

bool lb_parse_double(const char *s, double *out)
{
	char *end;

	if (!lb_plain_number(s))
		return false;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

bool lb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (!lb_plain_number(s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

void lb_path_word(const char *name, char *out, size_t len)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@+=-";
	size_t n = strlen(name), o = 0;
	bool changed = n == 0 || n > 60 || name[0] == '.';
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h = (h ^ (unsigned char)name[i]) * 16777619u;
		changed |= !strchr(plain, name[i]);
	}
	for (size_t i = 0; i < n && o < (changed ? 50 : 60) && o + 1 < len; i++)
		out[o++] = strchr(plain, name[i]) && !(i == 0 && name[i] == '.') ? name[i] : '_';
	if (changed && o + 10 < len)
		o += (size_t)snprintf(out + o, len - o, "-%08x", h);
	if (len)
		out[o < len ? o : len - 1] = '\0';
}

int lb_split_words(const char *s, char *buf, size_t len, char **argv, int max, char *why,
		   size_t wlen)
{
	size_t o = 0;
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (n + 1 >= max) {
			snprintf(why, wlen, "more than %d words", max - 1);
			return -1;
		}
		argv[n++] = buf + o;
		char quote = 0;
		for (; *s && (quote || (*s != ' ' && *s != '\t')); s++) {
			char c = *s;
			if (!quote && (c == '\'' || c == '"')) {
				quote = c;
				continue;
			}
			if (quote && c == quote) {
				quote = 0;
				continue;
			}
			if (c == '\\' && quote != '\'' && s[1] &&
			    (!quote || s[1] == '"' || s[1] == '\\'))
				c = *++s;
			if ((unsigned char)c < 0x20 && c != '\t') {
				snprintf(why, wlen, "a control character in the command");
				return -1;
			}
			if (o + 2 >= len) {
				snprintf(why, wlen, "longer than %zu bytes", len - 2);
				return -1;
			}
			buf[o++] = c;
		}
		if (quote) {
			snprintf(why, wlen, "an open %c quote", quote);
			return -1;
		}
		buf[o++] = '\0';
	}
	argv[n] = NULL;
	if (!n)
		snprintf(why, wlen, "no command");
	return n ? n : -1;
}

int lb_wait_fd(int fd, short ev, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };

	for (;;) {
		int64_t left = (deadline - lb_now_ns()) / LB_NS_PER_MS;
		if (left <= 0)
			return LB_ETIMEOUT;
		int n = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return LB_ESYS;
	}
}
