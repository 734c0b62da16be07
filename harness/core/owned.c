/*
 * owned.c - the directories lockbench owns, and the one way it deletes
 * (owned.h).
 */
#include "owned.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 64 /* deeper than anything lockbench makes: left */

/* Who made a directory: what its marker says, or this process. */
struct maker {
	long pid;
	unsigned long uid;
	unsigned long long pidns, start; /* 0: not known */
	char boot[40];                   /* "": not known */
	bool tmp;                        /* "role=tmp": a temporary directory, which a
					    sweep may remove once its maker is gone;
					    otherwise a result (an --out), never swept */
};

/* This process's marker text, made once per process (a fork remakes it):
 * the signal-safe path writes it again without formatting anything. */
static char self_text[256];
static size_t self_len;
static pid_t self_pid;

/* The start time (clock ticks after boot, /proc/PID/stat field 22) of @pid, or 0. */
static unsigned long long start_of(long pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the command may hold anything */
	if (!p || sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %*s %*s %llu", &start) != 1)
		return 0;
	return start;
}

static void self_maker(struct maker *m)
{
	struct stat st;

	memset(m, 0, sizeof(*m));
	m->pid = (long)getpid();
	m->uid = (unsigned long)geteuid();
	if (stat("/proc/self/ns/pid", &st) == 0)
		m->pidns = (unsigned long long)st.st_ino;
	m->start = start_of(m->pid);
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, m->boot, sizeof(m->boot) - 1);
		m->boot[n > 0 ? n : 0] = '\0';
		m->boot[strcspn(m->boot, "\n")] = '\0';
		close(fd);
	}
}

static void self_refresh(void)
{
	struct maker m;

	if (self_len && self_pid == getpid())
		return;
	self_maker(&m);
	int n = snprintf(self_text, sizeof(self_text), "lockbench-owned\npid=%ld\nuid=%lu\n"
			 "pidns=%llu\nstart=%llu\nboot=%s\n", m.pid, m.uid, m.pidns, m.start,
			 m.boot);
	self_len = n > 0 && (size_t)n < sizeof(self_text) ? (size_t)n : 0;
	self_pid = getpid();
}

/* Write this process's marker into the directory @dfd, saying "role=tmp"
 * when @tmp: 0, or LB_ESYS with errno (EEXIST: it has one). */
static int mark_at(int dfd, bool tmp)
{
	static const char role[] = "role=tmp\n";

	self_refresh();
	int fd = openat(dfd, LB_OWNED_MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644);
	if (fd < 0)
		return LB_ESYS;
	ssize_t w = write(fd, self_text, self_len), wr = tmp ? write(fd, role, sizeof(role) - 1) : 0;
	int err = w == (ssize_t)self_len && wr == (tmp ? (ssize_t)sizeof(role) - 1 : 0) ? 0 :
		  w < 0 || wr < 0 ? errno : EIO;
	if (close(fd) < 0 && !err)
		err = errno;
	if (err) {
		unlinkat(dfd, LB_OWNED_MARKER, 0);
		errno = err;
		return LB_ESYS;
	}
	return 0;
}

/* The marker of the directory @dfd, when it is a plain file of this user
 * saying lockbench-owned: true, @m filled. */
static bool read_marker(int dfd, struct maker *m)
{
	char buf[512];
	struct stat st;

	memset(m, 0, sizeof(*m));
	int fd = openat(dfd, LB_OWNED_MARKER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() ?
		read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (strncmp(buf, "lockbench-owned\n", 16))
		return false;
	m->pid = -1;
	for (char *save = NULL, *l = strtok_r(buf + 16, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "pid=", 4))
			m->pid = strtol(l + 4, NULL, 10);
		else if (!strncmp(l, "uid=", 4))
			m->uid = strtoul(l + 4, NULL, 10);
		else if (!strncmp(l, "pidns=", 6))
			m->pidns = strtoull(l + 6, NULL, 10);
		else if (!strncmp(l, "start=", 6))
			m->start = strtoull(l + 6, NULL, 10);
		else if (!strncmp(l, "boot=", 5))
			snprintf(m->boot, sizeof(m->boot), "%.39s", l + 5);
		else if (!strcmp(l, "role=tmp"))
			m->tmp = true;
	}
	return m->pid > 0 && m->uid == (unsigned long)geteuid();
}

static bool is_self(const struct maker *m)
{
	struct maker me;

	self_maker(&me);
	return m->pid == me.pid && m->start == me.start && !strcmp(m->boot, me.boot);
}

/* Is the maker @m known to be gone? Unknown is alive: its directory stays. */
static bool maker_gone(const struct maker *m)
{
	struct maker me;

	self_maker(&me);
	if (m->boot[0] && me.boot[0] && strcmp(m->boot, me.boot))
		return true; /* made before the last boot */
	if (!m->pidns || !me.pidns || m->pidns != me.pidns)
		return false; /* its pid means nothing here */
	if (kill((pid_t)m->pid, 0) < 0 && errno == ESRCH)
		return true;
	/* the pid runs: the maker's process, unless it started at another time */
	unsigned long long now = start_of(m->pid);
	return m->start && now && now != m->start;
}

static int remove_at(int pfd, const char *name, dev_t dev, int depth);

/* Remove what the directory @dfd holds, its marker last when @marker: 0,
 * or the worst status of its entries (what is not ours is left). */
static int remove_contents(int dfd, dev_t dev, int depth, bool marker)
{
	int rc = 0;

	for (int pass = 0; pass < 2; pass++) { /* entries removed while read may hide others */
		int fd = dup(dfd);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d) {
			if (fd >= 0)
				close(fd);
			return LB_ESYS;
		}
		rewinddir(d);
		bool left = false;
		rc = 0;
		for (struct dirent *e; (e = readdir(d));) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    (marker && !strcmp(e->d_name, LB_OWNED_MARKER)))
				continue;
			int r = remove_at(dfd, e->d_name, dev, depth + 1);
			if (r < 0) {
				left = true;
				rc = rc == LB_ESYS ? rc : r;
			}
		}
		closedir(d);
		if (!left)
			break;
	}
	if (rc == 0 && marker && unlinkat(dfd, LB_OWNED_MARKER, 0) < 0 && errno != ENOENT)
		rc = LB_ESYS;
	return rc;
}

/* Remove the entry @name of @pfd: a file (or symlink) of this user, or a
 * directory of this user on the file system @dev with all it holds. */
static int remove_at(int pfd, const char *name, dev_t dev, int depth)
{
	struct stat st;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : LB_ESYS;
	if (st.st_uid != geteuid() || st.st_dev != dev)
		return LB_EINVAL; /* another user's, or a mount: left */
	if (!S_ISDIR(st.st_mode))
		return unlinkat(pfd, name, 0) < 0 && errno != ENOENT ? LB_ESYS : 0;
	if (depth > MAX_DEPTH)
		return LB_EINVAL;
	int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) /* swapped since: a symlink now, or gone */
		return errno == ENOENT ? 0 : LB_EINVAL;
	struct stat now;
	int rc = fstat(fd, &now) < 0 ? LB_ESYS : now.st_ino != st.st_ino || now.st_dev != dev ?
		LB_EINVAL : remove_contents(fd, dev, depth, false);
	close(fd);
	if (rc == 0 && unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = LB_ESYS;
	return rc;
}

/* @path split into its parent, opened, and its last component in @base. */
static int open_parent(const char *path, char *base, size_t len)
{
	char parent[LB_DIR_MAX + 256];
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0 || n >= sizeof(parent)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(parent, sizeof(parent), "%.*s", (int)n, path);
	char *slash = strrchr(parent, '/');
	const char *b = slash ? slash + 1 : parent;
	if (!*b || !strcmp(b, ".") || !strcmp(b, "..") || strlen(b) >= len) {
		errno = EINVAL;
		return -1;
	}
	snprintf(base, len, "%s", b);
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	return open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The tree @name of @pfd when it is ours (and, when @gone, a temporary
 * directory whose maker is gone: never a result): removed, marker last. */
static int rmtree_at(int pfd, const char *name, bool gone)
{
	struct stat st;
	struct maker m;

	int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : LB_EINVAL; /* a symlink, or not a directory */
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || !read_marker(fd, &m) ||
	    (gone && (!m.tmp || !maker_gone(&m)))) {
		close(fd);
		return LB_EINVAL;
	}
	int rc = remove_contents(fd, st.st_dev, 0, true);
	close(fd);
	if (rc == 0 && unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = LB_ESYS;
	return rc;
}

int lb_owned_rmtree(const char *path)
{
	char base[256];
	int pfd = open_parent(path, base, sizeof(base));

	if (pfd < 0)
		return errno == ENOENT ? 0 : LB_ESYS;
	int rc = rmtree_at(pfd, base, false);
	close(pfd);
	return rc;
}

int lb_owned_unlink(const char *path)
{
	char base[256];
	struct stat st;
	int pfd = open_parent(path, base, sizeof(base)), rc = 0;

	if (pfd < 0)
		return errno == ENOENT ? 0 : LB_ESYS;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = errno == ENOENT ? 0 : LB_ESYS;
	else if (S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		rc = LB_EINVAL;
	else if (unlinkat(pfd, base, 0) < 0 && errno != ENOENT)
		rc = LB_ESYS;
	close(pfd);
	return rc;
}

int lb_owned_mkdtemp(char *tmpl)
{
	if (!mkdtemp(tmpl))
		return LB_ESYS;
	int fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && mark_at(fd, true) == 0) {
		close(fd);
		return 0;
	}
	int err = errno;
	if (fd >= 0)
		close(fd);
	rmdir(tmpl); /* just made, empty: nothing of anyone's */
	errno = err;
	return LB_ESYS;
}

void lb_owned_rmdir_signal_safe(const char *dir, const char *const *files)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	for (const char *const *f = files; *f; f++)
		unlinkat(fd, *f, 0);
	unlinkat(fd, LB_OWNED_MARKER, 0);
	if (rmdir(dir) < 0 && self_len && self_pid == getpid()) {
		/* something else is left: marked again, the janitor's to remove */
		int m = openat(fd, LB_OWNED_MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			       O_CLOEXEC, 0644);
		if (m >= 0) {
			ssize_t w = write(m, self_text, self_len);
			(void)w;
			close(m);
		}
	}
	close(fd);
}

int lb_owned_sweep(const char *parent, bool (*match)(const char *name, const void *arg),
		   const void *arg)
{
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
	DIR *d = pfd >= 0 ? fdopendir(dup(pfd)) : NULL;

	if (!d) {
		if (pfd >= 0)
			close(pfd);
		return 0;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && match(e->d_name, arg) &&
		    rmtree_at(pfd, e->d_name, true) == 0)
			n++;
	closedir(d);
	close(pfd);
	return n;
}

/* ---- claiming an output directory ---- */

/* A path that cannot be made because of what it names (a file on the way, a
 * name too long, a loop of links) is the user's mistake, a usage error (2);
 * one the system refuses (no room, no permission) is a failure (1). */
static int path_error(int err)
{
	return err == ENOTDIR || err == ENAMETOOLONG || err == ELOOP || err == ENOENT ? LB_EINVAL :
	       LB_ESYS;
}

/* The parents of @dir made (none when @dry); a component a ".." follows
 * must exist already. */
static int make_parents(const char *what, const char *dir, bool dry)
{
	char path[LB_DIR_MAX + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		const char *next = p + 1 + strspn(p + 1, "/");
		if (!*next)
			break; /* trailing slashes: the last component is @dir's own */
		*p = '\0';
		bool climbed = !strncmp(next, "..", 2) && (next[2] == '/' || !next[2]);
		if (climbed && (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))) {
			lb_errorf("%s '%s': '%s' is not a directory, and lockbench makes none only to "
				  "climb out of it with '..': name the directory without it", what, dir,
				  path);
			return LB_EINVAL;
		}
		if (!climbed && !dry && mkdir(path, 0755) < 0 && errno != EEXIST) {
			lb_errorf("%s '%s': cannot make %s: %s", what, dir, path, strerror(errno));
			return path_error(errno);
		}
		*p = '/';
	}
	return 0;
}

/* The first entry of @dfd but its marker, into @name; how many there are. */
static int others(int dfd, char *name, size_t len)
{
	int fd = dup(dfd), n = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, LB_OWNED_MARKER) && n++ == 0)
			snprintf(name, len, "%s", e->d_name);
	closedir(d);
	return n;
}

static void not_empty(const char *what, const char *dir, const char *first, int n)
{
	lb_errorf("%s '%s': not empty (it holds '%s'%s): lockbench writes only into a new or "
		  "empty directory, so that it replaces nothing of yours and leaves no other run's "
		  "file beside its own (docs/running.md): name a new one", what, dir, first,
		  n > 1 ? " and more" : "");
}

/* Is @dir, its trailing slashes taken off, a symbolic link? ("link/" makes
 * lstat and open follow it.) */
static bool slash_link(const char *dir)
{
	char path[LB_DIR_MAX + 64];
	struct stat st;
	size_t n = strlen(dir);

	if (n < 2 || dir[n - 1] != '/' || n >= sizeof(path))
		return false;
	memcpy(path, dir, n + 1);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* @st: what lstat says @dir is. A directory: 0; else refused (said). */
static int is_directory(const char *what, const char *dir, const struct stat *st)
{
	if (S_ISLNK(st->st_mode) || slash_link(dir)) {
		lb_errorf("%s '%s': a symbolic link; lockbench neither follows nor replaces one "
			  "(docs/running.md): name the directory it leads to", what, dir);
		return LB_EINVAL;
	}
	if (!S_ISDIR(st->st_mode)) {
		lb_errorf("%s '%s': exists and is not a directory", what, dir);
		return LB_EINVAL;
	}
	return 0;
}

/* @dir exists as a directory (made now, or there): 0, or refused (said). */
static int claim_there(const char *what, const char *dir)
{
	struct stat st;

	for (int tries = 0;; tries++) {
		if (lstat(dir, &st) == 0)
			break;
		if (errno != ENOENT || tries > 0 || (mkdir(dir, 0755) < 0 && errno != EEXIST)) {
			lb_errorf("%s '%s': cannot make the directory: %s", what, dir, strerror(errno));
			return path_error(errno);
		}
	}
	return is_directory(what, dir, &st);
}

static int name_ok(const char *what, const char *dir)
{
	if (!*dir) {
		lb_errorf("%s '': an empty name; expected a directory", what);
		return LB_EINVAL;
	}
	return lb_dir_arg_ok(what, dir) ? 0 : LB_EINVAL;
}

int lb_owned_fresh(const char *what, const char *dir)
{
	char first[256];
	struct stat st;
	int rc = name_ok(what, dir);

	if (rc == 0)
		rc = make_parents(what, dir, true);
	if (rc < 0)
		return rc;
	if (lstat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		lb_errorf("%s '%s': cannot make the directory: %s", what, dir, strerror(errno));
		return path_error(errno);
	}
	if ((rc = is_directory(what, dir, &st)) < 0)
		return rc;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int n = dfd >= 0 ? others(dfd, first, sizeof(first)) : -1;
	if (dfd >= 0)
		close(dfd);
	struct maker m;
	if (n == 0 && dfd >= 0) { /* a marker alone: another lockbench's claim */
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd >= 0 && read_marker(dfd, &m) && !maker_gone(&m)) /* gone: nothing written */
			snprintf(first, sizeof(first), "%s", LB_OWNED_MARKER), n = 1;
		if (dfd >= 0)
			close(dfd);
	}
	if (n > 0)
		not_empty(what, dir, first, n);
	else if (n < 0)
		lb_errorf("%s '%s': cannot read it: %s", what, dir, strerror(errno));
	return n > 0 ? LB_EINVAL : n < 0 ? LB_ESYS : 0;
}

int lb_owned_parents(const char *what, const char *dir)
{
	return make_parents(what, dir, false);
}

int lb_owned_claim(const char *what, const char *dir)
{
	char first[256];
	struct maker m;

	int rc = name_ok(what, dir);
	if (rc == 0)
		rc = make_parents(what, dir, false);
	if (rc == 0)
		rc = claim_there(what, dir);
	if (rc < 0)
		return rc;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool marked = dfd >= 0 && mark_at(dfd, false) == 0, there = !marked && dfd >= 0 && errno == EEXIST;
	if (!marked && !there) {
		lb_errorf("cannot write to output directory %s: %s", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return LB_ESYS;
	}
	bool known = there && read_marker(dfd, &m);
	if (known && is_self(&m)) {
		close(dfd); /* this process's own, claimed before */
		return 0;
	}
	errno = 0;
	if (known && maker_gone(&m) && others(dfd, first, sizeof(first)) == 0) {
		/* the marker alone, of a lockbench that is gone: a run that wrote
		 * nothing (it could not happen, a usage error after the claim):
		 * the directory is empty in all but name, and is taken again */
		if (unlinkat(dfd, LB_OWNED_MARKER, 0) == 0 && mark_at(dfd, false) == 0) {
			close(dfd);
			return 0;
		}
	}
	if (there) {
		close(dfd);
		lb_errorf("%s '%s': holds what lockbench wrote before (%s is there): a run is "
			  "written only into a new or empty directory, never beside another's files "
			  "(docs/running.md): name a new one, or remove this one", what, dir,
			  LB_OWNED_MARKER);
		return LB_EINVAL;
	}
	errno = 0;
	int n = others(dfd, first, sizeof(first));
	if (n != 0) {
		if (n > 0)
			not_empty(what, dir, first, n);
		else
			lb_errorf("cannot read output directory %s: %s", dir, strerror(errno));
		unlinkat(dfd, LB_OWNED_MARKER, 0);
		close(dfd);
		return n > 0 ? LB_EINVAL : LB_ESYS;
	}
	close(dfd);
	return 0;
}

int lb_owned_unclaim(const char *dir, bool made)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct maker m;
	char first[8];

	if (fd < 0)
		return 0;
	if (!read_marker(fd, &m) || !is_self(&m) || others(fd, first, sizeof(first)) != 0) {
		close(fd);
		return 0;
	}
	unlinkat(fd, LB_OWNED_MARKER, 0);
	close(fd);
	return made && rmdir(dir) == 0 ? 1 : 0;
}

int lb_owned_keep(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct maker m;

	if (fd < 0)
		return LB_ESYS;
	int rc = read_marker(fd, &m) && is_self(&m) ? 0 : LB_EINVAL;
	if (rc == 0 && m.tmp && (unlinkat(fd, LB_OWNED_MARKER, 0) < 0 || mark_at(fd, false) < 0))
		rc = LB_ESYS;
	close(fd);
	return rc;
}
