/*
 * util.h - what every lockbench module shares: the one status enum, clocks,
 * sleeping, and error messages.
 *
 * Convention (Linux coding-style §16): actions return 0 or a negative
 * enum lb_status; predicates return bool; constructors return NULL on failure.
 */
#ifndef LB_UTIL_H
#define LB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum lb_status {
	LB_OK = 0,
	LB_EBUSY = -1,     /* the lock is held by someone else */
	LB_ELOST = -2,     /* release found the lock no longer ours (gone or taken) */
	LB_EFOREIGN = -3,  /* release deleted a lock holding another client's value */
	LB_EREDIS = -4,    /* a server answered with an error or the connection died */
	LB_ETIMEOUT = -5,  /* a deadline passed */
	LB_EVALIDITY = -6, /* Redlock: quorum reached but the validity time was spent */
	LB_ENOMEM = -7,
	LB_EINVAL = -8,    /* bad argument or malformed input */
	LB_ESYS = -9,      /* a system call failed; errno says why */
	LB_ENOTSUP = -10,  /* the strategy does not offer this operation */
	LB_ECANCELED = -11, /* the run is stopping */
	LB_ESTALE = -12,   /* the resource has accepted a higher fence */
	LB_ENOREPLICA = -13, /* no replica acknowledged the write in time */
	LB_EPROTO = -14,   /* an external strategy broke the adapter protocol */
	LB_EDIED = -15,    /* an external strategy's process died under its client */
	LB_ENOTHERE = -16, /* a server the run needs cannot be reached, or refused it */
};

/* A static string describing @status; never NULL. */
const char *lb_strerror(int status);

/* CLOCK_MONOTONIC in nanoseconds: the one order of events on this host. */
int64_t lb_now_ns(void);
/* Wait until @fd is ready for @ev (poll's events) or @deadline (lb_now_ns):
 * 0 ready, LB_ETIMEOUT, or LB_ESYS; a signal does not end the wait. */
int lb_wait_fd(int fd, short ev, int64_t deadline);
/* CLOCK_REALTIME in milliseconds. */
int64_t lb_wall_ms(void);
/* Sleep @ns nanoseconds (restarting after signals); no-op when <= 0. */
void lb_sleep_ns(int64_t ns);
/* Sleep until CLOCK_MONOTONIC reaches @deadline_ns. */
void lb_sleep_until_ns(int64_t deadline_ns);

/* The largest run: clients (processes), lock nodes, keys. */
#define LB_MAX_CLIENTS 4096
#define LB_MAX_NODES 9
#define LB_MAX_KEYS 1024

#define LB_NS_PER_MS INT64_C(1000000)
#define LB_NS_PER_S INT64_C(1000000000)

#define LOCKBENCH_VERSION "0.1.0"

/* The directory holding the running binary (no trailing slash); false if
 * /proc/self/exe cannot be read. Files lockbench ships beside or above its
 * binary (the clock shim, scenarios/, the redis-py peer) are found from it. */
bool lb_exe_dir(char *out, size_t len);

/* A file lockbench ships (the clock shim, scenarios/, adapters/): @name as
 * it lies in the build tree, beside the binary (build/NAME) or one level up
 * (the source's NAME, e.g. "scenarios"), else where `make install` puts it,
 * PREFIX/@kind/lockbench/<basename of NAME> ("lib" or "share"). The first
 * that exists goes to @out; false when none does. */
bool lb_find_installed(const char *name, const char *kind, char *out, size_t len);
/* @name as one path component of a results directory (at least 64 bytes
 * in @out): as it is when it is plain (letters, digits, . _ @ + = -, not
 * starting with a dot, at most 60 bytes); otherwise its plain characters,
 * '_' for the rest, cut to 50, and a hash of the whole name, so that two
 * names never share a directory and none nests or climbs
 * ("exec:/tmp/my lock.sh" -> "exec__tmp_my_lock.sh-5c1f0e2a"). */
void lb_path_word(const char *name, char *out, size_t len);

/* The longest directory a user may name (--out, report DIR, check DIR):
 * what lockbench adds below it (a matrix cell, a file) always fits, so no
 * path it builds is ever cut. */
#define LB_DIR_MAX 2048
/* Is @dir, given as @what ("--out", "report"), at most LB_DIR_MAX bytes?
 * If not, says so (its length and the limit) and returns false. */
bool lb_dir_arg_ok(const char *what, const char *dir);
/* A file a command will write at its end (--junit FILE): not empty, not a
 * directory, in a directory that exists and may be written, so that no run
 * is made for a report that cannot be written; else say why (@what names
 * the option). */
bool lb_file_arg_ok(const char *what, const char *path);

/* Open @path to read only when it is a regular file: opened without
 * blocking (O_NONBLOCK, so that a FIFO with no writer cannot hang the
 * reader), then fstat, so that a FIFO, a device or a directory is refused at
 * once, before a byte is read. Every reader of a file from outside (a
 * scenario, a history, a run's files, an adapter manifest) opens with it.
 * NULL with *@rc LB_EINVAL and *@kind what it is ("a FIFO (a named pipe)",
 * "a directory", "a character device"...), or LB_ESYS with errno kept and
 * *@kind NULL. */
FILE *lb_open_regular(const char *path, int *rc, const char **kind);
/* Why lb_open_regular failed, for "cannot read PATH: <why>": "is a FIFO (a
 * named pipe), not a regular file", or errno's text. */
const char *lb_open_why(const char *kind, char *buf, size_t len);

/* TMPDIR as an absolute path, for this process and everything it starts (a
 * server runs in its own directory, where a relative TMPDIR names another
 * place, or none): a relative TMPDIR that is a directory here is replaced by
 * its real path; one that is not is refused with why (LB_EINVAL). An absolute
 * one that is no directory, or either longer than LB_TMPDIR_MAX bytes, is
 * refused too; an empty TMPDIR is left as it is. */
#define LB_TMPDIR_MAX 200
int lb_tmpdir_absolute(void);

/* "lockbench: <message>\n" on stderr. */
void lb_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* From now on (@buf not NULL) every lb_errorf message of this process goes
 * into @buf (@len bytes, "" to begin), after what it holds ("; " between),
 * instead of stderr; NULL: stderr again. For a command that shows what went
 * wrong as evidence (adapter-test), said once, in its place. */
void lb_errorf_capture(char *buf, size_t len);

/* A number written plainly: digits with at most a '-' in front, a point and
 * an exponent; not the blanks, the '+' in front, the hex, inf and nan that
 * strtoll and strtod also take (" 5" and "+3" are typos, not 5 and 3). */
bool lb_plain_number(const char *s);
/* A number as lockbench writes one in its own files (printf's %d, %.Nf and
 * %g): -?(0|[1-9][0-9]*)(.[0-9]+)?(e[+-][0-9]+)?, and no minus on a zero.
 * Stricter than lb_plain_number, which a person's input passes: there "007"
 * is 7 (decimal, never octal) and "-0" is 0; in a file lockbench wrote,
 * a leading zero, a "-0", a ".5" or a "5." is damage (docs/running.md). */
bool lb_written_number(const char *s);
/* Parse a decimal integer in [min, max] that fills the whole of @s, written
 * plainly. */
bool lb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
/* Parse a finite number that fills the whole of @s, written plainly. */
bool lb_parse_double(const char *s, double *out);

/* Split @s into words as a shell would, expanding nothing: blanks separate;
 * '...' keeps all; "..." keeps all but \" and \\; \ escapes one character
 * outside quotes. The words into @buf (@len bytes), pointers into @argv (at
 * most @max - 1 of them, then NULL). How many, or -1 with why in @why (an
 * open quote, no word, too many or too long, a control character). */
int lb_split_words(const char *s, char *buf, size_t len, char **argv, int max, char *why,
		   size_t wlen);

#endif
