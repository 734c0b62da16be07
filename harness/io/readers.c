#include "esc.h"
#include "failpoint.h"
#include "figures.h"
#include "readers.h"
#include "signals.h"
#include "run.h"

#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A line reader that never overruns: a line longer than @max, or holding a
 * NUL or a control character, is an error, not a silent split. */
struct rd {
	FILE *f;
	const char *path;
	size_t line;
	size_t max;
	char *buf;
};

static int rd_fail(const struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rd_fail(const struct rd *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lb_errorf("%s:%zu: %s", r->path, r->line, msg);
	return LB_EINVAL;
}

/* The next line into r->buf, without its end: 1, 0 at the end, or LB_EINVAL. */
static int rd_next(struct rd *r)
{
	size_t n = 0;
	int c;

	r->line++;
	if ((r->line & 4095) == 0 && lb_stop_work())
		return LB_ECANCELED; /* Ctrl-C: said by the command, not here */
	while ((c = getc(r->f)) != EOF && c != '\n') {
		if (n + 1 >= r->max)
			return rd_fail(r, "line longer than %zu characters", r->max - 1);
		if (c == '\0' || (c < ' ' && c != '\t' && c != '\r'))
			return rd_fail(r, "a control character (byte %d) in a text file", c);
		r->buf[n++] = (char)c;
	}
	if (ferror(r->f))
		return rd_fail(r, "read error: %s", strerror(errno));
	if (c == EOF && n == 0)
		return 0;
	if (n && r->buf[n - 1] == '\r')
		n--;
	r->buf[n] = '\0';
	return 1;
}

/* Split in place on commas: exactly @want fields, or an error naming them. */
static int rd_fields(const struct rd *r, char *line, char **f, size_t want, const char *header)
{
	size_t n = 0;

	for (size_t i = 0; i < want; i++) /* every field defined on every path */
		f[i] = NULL;
	for (char *p = line;;) {
		if (n == want)
			return rd_fail(r, "more than %zu fields; expected %s", want, header);
		f[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (n != want)
		return rd_fail(r, "%zu field%s; expected %zu: %s", n, n == 1 ? "" : "s", want, header);
	return 0;
}

/* A field as an integer in [min, max] (@empty_ok: "" is -1). */
static int rd_int(const struct rd *r, const char *name, const char *v, bool empty_ok,
		  long long min, long long max, long long *out)
{
	char *end;

	if (!*v) {
		if (empty_ok) {
			*out = -1;
			return 0;
		}
		return rd_fail(r, "field %s: empty; expected an integer from %lld to %lld", name, min, max);
	}
	errno = 0;
	*out = strtoll(v, &end, 10);
	if (*end || end == v || !lb_written_number(v)) /* no ' 1', '+1', '01', '-0' */
		return rd_fail(r, "field %s: expected an integer%s, got '%.40s'%s", name,
			       empty_ok ? " or nothing" : "", v, *end || end == v ? "" :
			       " (lockbench writes no sign, blank or leading zero)");
	if (errno == ERANGE || *out < min || *out > max)
		return rd_fail(r, "field %s: expected an integer from %lld to %lld, got '%.40s'", name,
			       min, max, v);
	return 0;
}

static void rd_init(struct rd *r, FILE *f, const char *path, char *buf, size_t max)
{
	*r = (struct rd){ .f = f, .path = path, .max = max, .buf = buf };
}

/* Open @path (a regular file only: a FIFO or a device put there cannot hang
 * the reader); ENOENT is reported only when @required. */
static FILE *open_in(const char *path, bool required, int *rc)
{
	const char *kind;
	char why[96];
	FILE *f = lb_open_regular(path, rc, &kind);

	if (f || (!required && !kind && errno == ENOENT)) {
		*rc = 0;
		return f;
	}
	lb_errorf("cannot read %s: %s", path, lb_open_why(kind, why, sizeof(why)));
	return NULL;
}

/* ---- summary.csv ---- */

int lb_summary_read_file(FILE *f, const char *path, struct lb_summary *s)
{
	char head[LB_READ_MAX_SUMMARY], row[LB_READ_MAX_SUMMARY];
	char *names[LB_SUMMARY_MAX_FIELDS + 1], *values[LB_SUMMARY_MAX_FIELDS + 1];
	struct rd r;
	size_t nn = 0, nv = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	rd_init(&r, f, path, head, sizeof(head));
	if ((rc = rd_next(&r)) <= 0)
		return rc < 0 ? rc : rd_fail(&r, "empty; expected a header line and one row");
	r.buf = row;
	if ((rc = rd_next(&r)) <= 0)
		return rc < 0 ? rc : rd_fail(&r, "no row after the header; expected one row");
	for (char *p = head; nn <= LB_SUMMARY_MAX_FIELDS;) {
		names[nn++] = p;
		if (!(p = strchr(p, ',')))
			break;
		*p++ = '\0';
	}
	/* the row: CSV fields (RFC 4180), quoted where a value holds a comma or
	 * a quote; each unquoted into its own piece of @unq */
	static char unq[LB_READ_MAX_SUMMARY];
	size_t pos = 0, used = 0;
	bool bad = false;
	while (nv <= LB_SUMMARY_MAX_FIELDS && used < sizeof(unq)) {
		size_t before = pos;
		values[nv++] = unq + used;
		if (lb_csv_field(row, &pos, unq + used, sizeof(unq) - used) < 0) {
			bad = true;
			break;
		}
		used += strlen(unq + used) + 1;
		if (pos == before || row[pos - 1] != ',')
			break; /* no comma after it: the last field */
	}
	if (!bad && row[pos])
		bad = true; /* text after the last field */
	r.line = 1;
	if (nn > LB_SUMMARY_MAX_FIELDS)
		return rd_fail(&r, "more than %d columns", LB_SUMMARY_MAX_FIELDS);
	for (size_t i = 0; i < nn; i++) {
		size_t len = strlen(names[i]);
		if (!len || len >= sizeof(s->name[0]) || strspn(names[i], "abcdefghijklmnopqrstuvwxyz"
								   "0123456789_") != len)
			return rd_fail(&r, "column %zu: expected a name of a-z, 0-9 and _ (at most %zu), "
				       "got '%.40s'", i + 1, sizeof(s->name[0]) - 1, names[i]);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				return rd_fail(&r, "column %s appears twice", names[i]);
	}
	r.line = 2;
	if (bad)
		return rd_fail(&r, "field %zu: a quote not closed, or text after a closing quote",
				nv);
	if (nv != nn)
		return rd_fail(&r, "%zu values for %zu columns", nv, nn);
	for (size_t i = 0; i < nn; i++) {
		if (strlen(values[i]) >= sizeof(s->value[0]))
			return rd_fail(&r, "field %s: longer than %zu characters", names[i],
				       sizeof(s->value[0]) - 1);
		snprintf(s->name[i], sizeof(s->name[0]), "%s", names[i]);
		snprintf(s->value[i], sizeof(s->value[0]), "%s", values[i]);
	}
	s->n = nn;
	/* a figure's value as lockbench writes it, or n/a: '+0', ' 94', '-0' or
	 * '0684' is damage, not a number to compare (its range is check's) */
	for (size_t i = 0; i < nn; i++) {
		const struct lb_figdef *fd = lb_figdef_find(names[i]);
		if (fd && fd->kind != LB_FD_TEXT && strcmp(values[i], "n/a") &&
		    !(fd->inf && !strcmp(values[i], "inf")) && !lb_written_number(values[i]))
			return rd_fail(&r, "field %s: expected a number as lockbench writes it (no "
				       "sign, blank or leading zero)%s or n/a, got '%.40s'", names[i],
				       fd->inf ? ", inf" : "", values[i]);
	}
	rd_init(&r, f, path, head, sizeof(head));
	r.line = 2;
	if ((rc = rd_next(&r)) != 0)
		return rc < 0 ? rc : rd_fail(&r, "a third line; expected a header and one row");
	return 0;
}

int lb_summary_read(const char *path, struct lb_summary *s)
{
	int rc;
	FILE *f = open_in(path, true, &rc);

	memset(s, 0, sizeof(*s));
	if (!f)
		return rc;
	rc = lb_summary_read_file(f, path, s);
	fclose(f);
	return rc;
}

int lb_summary_int(const struct lb_summary *s, const char *path, const char *name,
		   long long min, long long max, long long *out)
{
	struct rd r = { .path = path, .line = 2 };
	const char *v = lb_summary_get(s, name);

	if (!v)
		return rd_fail(&r, "no column %s", name);
	return rd_int(&r, name, v, false, min, max, out);
}

int lb_summary_double(const struct lb_summary *s, const char *path, const char *name,
		      double min, double max, double *out)
{
	struct rd r = { .path = path, .line = 2 };
	const char *v = lb_summary_get(s, name);

	if (!v)
		return rd_fail(&r, "no column %s", name);
	if (!lb_written_number(v) || !lb_parse_double(v, out) || *out < min || *out > max)
		return rd_fail(&r, "field %s: expected a number from %g to %g, got '%.40s'", name, min,
			       max, v);
	return 0;
}

int lb_summary_shape(const struct lb_summary *s, const char *path, struct lb_run_shape *shape)
{
	long long clients, keys, ttl = 0;
	const char *len = lb_summary_get(s, "elapsed_s") ? "elapsed_s" : "duration_s";
	int rc;

	if ((rc = lb_summary_int(s, path, "clients", 1, LB_MAX_CLIENTS, &clients)) < 0 ||
	    (rc = lb_summary_int(s, path, "keys", 1, LB_MAX_KEYS, &keys)) < 0 ||
	    (rc = lb_summary_double(s, path, len, 0, 86400 * 2, &shape->elapsed_s)) < 0 ||
	    (lb_summary_get(s, "ttl_ms") &&
	     (rc = lb_summary_int(s, path, "ttl_ms", 1, 86400000, &ttl)) < 0))
		return rc;
	shape->clients = (int)clients;
	shape->keys = (int)keys;
	shape->ttl_ms = ttl;
	return 0;
}

/* ---- history.csv ---- */

static int by_client_seq(const void *pa, const void *pb)
{
	const struct lb_section *a = pa, *b = pb;
	if (a->client != b->client)
		return a->client < b->client ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_enter(const void *pa, const void *pb)
{
	const struct lb_section *a = pa, *b = pb;
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	return by_client_seq(pa, pb);
}

/* A token's hash (lb_token_hash): 1 to 16 hex digits, not 0; "" is 0 (none). */
static int rd_hash(const struct rd *r, const char *name, const char *v, uint64_t *out)
{
	size_t len = strlen(v);

	*out = 0;
	if (!len)
		return 0;
	if (len > 16 || strspn(v, "0123456789abcdef") != len || !(*out = strtoull(v, NULL, 16)))
		return rd_fail(r, "field %s: expected 1 to 16 hex digits (a-f, not all 0) or nothing, "
			       "got '%.40s'", name, v);
	return 0;
}

/* One row of a history with @cols columns (8, 9 or 11): every field
 * checked, and the row against itself. */
static int history_row(struct rd *r, int clients, int keys, size_t cols, struct lb_section *s)
{
	static const long long T = INT64_MAX / 4; /* times: far beyond any run */
	const char *header = cols == 8 ? LB_HISTORY_HEADER_8 : cols == 9 ? LB_HISTORY_HEADER_9 :
			     LB_HISTORY_HEADER;
	bool with_nodes = cols >= 9;
	char *f[11];
	long long x[8];
	int rc, outcome;
	uint32_t nodes = 0;
	uint64_t token = 0;

	if ((rc = rd_fields(r, r->buf, f, cols, header)) < 0)
		return rc;
	if (cols == 11 && (rc = rd_hash(r, "token", f[10], &token)) < 0)
		return rc;
	/* nodes: empty, or node indexes joined by '+', each once, ascending */
	for (const char *p = with_nodes ? f[8] : ""; *p;) {
		char *end;
		long b = strtol(p, &end, 10);
		if (*p < '0' || *p > '9' || end == p || (*p == '0' && end - p > 1) || b < 0 ||
		    b >= LB_MAX_NODES || (nodes >> b) || (*end && *end != '+') ||
		    (*end == '+' && !end[1]))
			return rd_fail(r, "field nodes: expected node indexes from 0 to %d joined by '+' "
				       "in ascending order (0+1+2), or nothing, got '%.40s'",
				       LB_MAX_NODES - 1, f[8]);
		nodes |= UINT32_C(1) << b;
		p = *end ? end + 1 : end;
	}
	if ((rc = rd_int(r, "client", f[0], false, 0, clients - 1, &x[0])) < 0 ||
	    (rc = rd_int(r, "seq", f[1], false, 0, UINT32_MAX, &x[1])) < 0 ||
	    (rc = rd_int(r, "acquire_start_ns", f[2], false, 0, T, &x[2])) < 0 ||
	    (rc = rd_int(r, "enter_ns", f[3], false, 0, T, &x[3])) < 0 ||
	    (rc = rd_int(r, "exit_ns", f[4], false, 0, T, &x[4])) < 0 ||
	    (rc = rd_int(r, "release_ns", f[5], true, 0, T, &x[5])) < 0)
		return rc;
	if ((outcome = lb_outcome_parse(f[6])) < 0)
		return rd_fail(r, "field outcome: expected released, lost, foreign, error, killed or "
			       "cut, got '%.40s'", f[6]);
	if ((rc = rd_int(r, "fence", f[7], true, 0, T, &x[6])) < 0)
		return rc;
	/* lease_end_ns: a time, never (no TTL), or empty (not known) */
	x[7] = LB_LEASE_UNKNOWN;
	if (cols == 11 && !strcmp(f[9], "never"))
		x[7] = LB_LEASE_NEVER;
	else if (cols == 11 && (rc = rd_int(r, "lease_end_ns", f[9], true, 0, T, &x[7])) < 0)
		return rc;
	if (x[3] < x[2])
		return rd_fail(r, "field enter_ns: %lld is before acquire_start_ns %lld", x[3], x[2]);
	if (x[4] < x[3])
		return rd_fail(r, "field exit_ns: %lld is before enter_ns %lld", x[4], x[3]);
	if (x[5] >= 0 && x[5] < x[4])
		return rd_fail(r, "field release_ns: %lld is before exit_ns %lld", x[5], x[4]);
	bool ended = outcome == LB_OUT_KILLED || outcome == LB_OUT_CUT;
	if (ended != (x[5] < 0))
		return rd_fail(r, "field release_ns: %s with outcome %s", ended ? "a release time" :
			       "no release time", f[6]);
	*s = (struct lb_section){
		.client = (int)x[0], .key = (int)(x[0] % keys), .seq = (uint32_t)x[1],
		.acquire_start_ns = x[2], .enter_ns = x[3], .exit_ns = x[4], .release_ns = x[5],
		.outcome = (enum lb_outcome)outcome, .fence = x[6], .nodes = nodes, .token = token,
		.lease_end_ns = x[7],
	};
	return 0;
}

int lb_history_read_file(FILE *f, const char *path, int clients, int keys,
			 struct lb_section **out, size_t *n)
{
	char buf[LB_READ_MAX_LINE];
	struct lb_section *v = NULL;
	size_t cap = 0, k = 0;
	struct rd r;
	int rc;

	*out = NULL;
	*n = 0;
	if (clients < 1 || clients > LB_MAX_CLIENTS || keys < 1 || keys > LB_MAX_KEYS) {
		lb_errorf("%s: a run of %d clients on %d keys is not one lockbench makes", path, clients,
			  keys);
		return LB_EINVAL;
	}
	rd_init(&r, f, path, buf, sizeof(buf));
	if ((rc = rd_next(&r)) <= 0 ||
	    (strcmp(buf, LB_HISTORY_HEADER) && strcmp(buf, LB_HISTORY_HEADER_9) &&
	     strcmp(buf, LB_HISTORY_HEADER_8))) {
		if (rc < 0)
			return rc;
		return rd_fail(&r, "expected the header %s", LB_HISTORY_HEADER);
	}
	size_t cols = !strcmp(buf, LB_HISTORY_HEADER) ? 11 : !strcmp(buf, LB_HISTORY_HEADER_9) ? 9 : 8;
	while ((rc = rd_next(&r)) > 0) {
		if (k == cap) {
			struct lb_section *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));
			if (!nv) {
				free(v);
				lb_errorf("out of memory reading %s", path);
				return LB_ENOMEM;
			}
			v = nv;
		}
		if ((rc = history_row(&r, clients, keys, cols, &v[k])) < 0)
			break;
		k++;
	}
	if (rc < 0) {
		free(v);
		return rc;
	}
	/* a client's sections are numbered 0, 1, 2...: a duplicate is a corrupt file
	 * (qsort is given no null array: a history of no sections has none) */
	if (k > 1)
		qsort(v, k, sizeof(*v), by_client_seq);
	for (size_t i = 1; i < k; i++)
		if (v[i].client == v[i - 1].client && v[i].seq == v[i - 1].seq) {
			lb_errorf("%s: client %d has two sections numbered %u", path, v[i].client, v[i].seq);
			free(v);
			return LB_EINVAL;
		}
	if (k > 1)
		qsort(v, k, sizeof(*v), by_enter);
	*out = v ? v : calloc(1, sizeof(*v));
	*n = k;
	return *out ? 0 : LB_ENOMEM;
}

int lb_history_read(const char *path, int clients, int keys, struct lb_section **out, size_t *n)
{
	int rc;
	FILE *f = open_in(path, true, &rc);

	*out = NULL;
	*n = 0;
	if (!f)
		return rc;
	rc = lb_history_read_file(f, path, clients, keys, out, n);
	fclose(f);
	return rc;
}

/* ---- waiters.csv ---- */

int lb_waiters_read_file(FILE *f, const char *path, int clients, int keys,
			 struct lb_waiter **out, size_t *n)
{
	static const long long T = INT64_MAX / 4;
	char buf[LB_READ_MAX_LINE];
	struct lb_waiter *v;
	size_t k = 0;
	struct rd r;
	int rc;

	*out = NULL;
	*n = 0;
	if (clients < 1 || clients > LB_MAX_CLIENTS || keys < 1 || keys > LB_MAX_KEYS) {
		lb_errorf("%s: a run of %d clients on %d keys is not one lockbench makes", path, clients,
			  keys);
		return LB_EINVAL;
	}
	rd_init(&r, f, path, buf, sizeof(buf));
	if ((rc = rd_next(&r)) <= 0 || strcmp(buf, LB_WAITERS_HEADER)) {
		if (rc < 0)
			return rc;
		return rd_fail(&r, "expected the header %s", LB_WAITERS_HEADER);
	}
	if (!(v = calloc((size_t)clients, sizeof(*v)))) /* one a client at most */
		return LB_ENOMEM;
	while ((rc = rd_next(&r)) > 0) {
		char *fl[6];
		long long c, calls, start, tried, end;
		int ended;
		if ((rc = rd_fields(&r, buf, fl, 6, LB_WAITERS_HEADER)) < 0 ||
		    (rc = rd_int(&r, "client", fl[0], false, 0, clients - 1, &c)) < 0 ||
		    (rc = rd_int(&r, "calls", fl[1], false, 1, UINT32_MAX, &calls)) < 0 ||
		    (rc = rd_int(&r, "start_ns", fl[2], false, 0, T, &start)) < 0 ||
		    (rc = rd_int(&r, "last_try_ns", fl[3], true, 0, T, &tried)) < 0 ||
		    (rc = rd_int(&r, "end_ns", fl[4], false, 0, T, &end)) < 0)
			break;
		if ((ended = lb_wait_end_parse(fl[5])) < 0) {
			rc = rd_fail(&r, "field ended: expected gave-up, cut or killed, got '%.40s'", fl[5]);
			break;
		}
		if (end < start) {
			rc = rd_fail(&r, "field end_ns: %lld is before start_ns %lld", end, start);
			break;
		}
		if (tried >= 0 && (tried < start || tried > end)) {
			rc = rd_fail(&r, "field last_try_ns: %lld is outside start_ns..end_ns (%lld..%lld)",
				     tried, start, end);
			break;
		}
		bool twice = false;
		for (size_t i = 0; i < k; i++)
			twice |= v[i].client == (int)c;
		if (twice) {
			rc = rd_fail(&r, "field client: client %lld has a waiter already", c);
			break;
		}
		v[k++] = (struct lb_waiter){ .client = (int)c, .key = (int)(c % keys),
					     .calls = (uint32_t)calls, .start_ns = start,
					     .last_try_ns = tried, .end_ns = end,
					     .ended = (enum lb_wait_end)ended };
	}
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = k;
	return 0;
}

int lb_waiters_read(const char *path, int clients, int keys, struct lb_waiter **out, size_t *n)
{
	int rc;
	FILE *f = open_in(path, false, &rc);

	*out = NULL;
	*n = 0;
	if (!f) /* absent: none recorded (rc 0), or unreadable */
		return rc;
	rc = lb_waiters_read_file(f, path, clients, keys, out, n);
	fclose(f);
	return rc;
}

/* ---- attempts.csv ---- */

int lb_attempts_read(const char *path, int clients, struct lb_try **out, size_t *n)
{
	static const long long T = INT64_MAX / 4;
	char buf[LB_READ_MAX_LINE];
	struct lb_try *v = NULL;
	size_t k = 0, cap = 0;
	struct rd r;
	int rc;
	FILE *f = open_in(path, false, &rc);

	*out = NULL;
	*n = 0;
	if (!f) /* absent: an older run (rc 0), or unreadable */
		return rc;
	rd_init(&r, f, path, buf, sizeof(buf));
	if ((rc = rd_next(&r)) <= 0 || strcmp(buf, LB_ATTEMPTS_HEADER)) {
		if (rc == 0)
			rc = rd_fail(&r, "expected the header %s", LB_ATTEMPTS_HEADER);
		else if (rc > 0)
			rc = rd_fail(&r, "expected the header %s", LB_ATTEMPTS_HEADER);
		fclose(f);
		return rc;
	}
	while ((rc = rd_next(&r)) > 0) {
		char *fl[4];
		long long c, start, end;
		int result;
		if ((rc = rd_fields(&r, buf, fl, 4, LB_ATTEMPTS_HEADER)) < 0 ||
		    (rc = rd_int(&r, "client", fl[0], false, 0, clients - 1, &c)) < 0 ||
		    (rc = rd_int(&r, "start_ns", fl[1], false, -T, T, &start)) < 0 ||
		    (rc = rd_int(&r, "end_ns", fl[2], false, -T, T, &end)) < 0)
			break;
		if ((result = lb_try_result_parse(fl[3])) < 0) {
			rc = rd_fail(&r, "field result: expected acquired, busy, error, refused, "
				     "unknown or indeterminate, got '%.40s'", fl[3]);
			break;
		}
		if (end < start) {
			rc = rd_fail(&r, "field end_ns: %lld is before start_ns %lld", end, start);
			break;
		}
		if (k == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct lb_try *nv = realloc(v, ncap * sizeof(*nv));
			if (!nv) {
				rc = LB_ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		v[k++] = (struct lb_try){ (int)c, start, end, (enum lb_try_result)result };
	}
	fclose(f);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = k;
	return 0;
}

/* ---- events.csv ---- */

static int event_kind(const char *name)
{
	for (int k = 0; k < LB_EV_COUNT; k++)
		if (!strcmp(name, lb_event_name(k)))
			return k;
	return -1;
}

/* The values an event's meaning allows (docs/scenarios.md): a failpoint's
 * number on a crash or a wake, minus it on a kill standing in for one, 0 or
 * 1 (read, write) on a refusal, which is a client's. */
static int event_value_ok(struct rd *r, int kind, const char *client, const char *node,
			  long long v)
{
	if ((kind == LB_EV_CRASH || kind == LB_EV_WAKE) &&
	    (v < 0 || v > 64 || (v && !lb_failpoint_name((int)v))))
		return rd_fail(r, "field value: a failpoint's number (0 to 4) on %s, got %lld",
			       lb_event_name(kind), v);
	if (kind == LB_EV_CRASH || kind == LB_EV_WAKE)
		return 0;
	if (kind == LB_EV_KILL && (v < -64 || v > 0 || (v && !lb_failpoint_name((int)-v))))
		return rd_fail(r, "field value: 0, or minus a failpoint's number (-4 to -1), on "
			       "kill, got %lld", v);
	if (kind == LB_EV_LOST_NOTICE && (v != 0 || !client[0] || node[0]))
		return rd_fail(r, "a lost-notice event is a client's (no node), value 0, got "
			       "client '%.20s', node '%.20s', value %lld", client, node, v);
	if (kind == LB_EV_REFUSED && (v < 0 || v > 1 || !client[0] || node[0]))
		return rd_fail(r, "a refused event is a client's (no node), value 0 (a read) or 1 "
			       "(a write), got client '%.20s', node '%.20s', value %lld", client, node, v);
	return 0;
}

int lb_events_read_file(FILE *f, const char *path, int clients, struct lb_event **out, size_t *n)
{
	static const char header[] = "t_ns,event,client,node,value";
	char buf[LB_READ_MAX_LINE];
	struct lb_event *v = NULL;
	size_t cap = 0, k = 0;
	struct rd r;
	int rc;

	*out = NULL;
	*n = 0;
	rd_init(&r, f, path, buf, sizeof(buf));
	if ((rc = rd_next(&r)) <= 0 || strcmp(buf, header)) {
		if (rc < 0)
			return rc;
		return rd_fail(&r, "expected the header %s", header);
	}
	while ((rc = rd_next(&r)) > 0) {
		char *fl[5];
		long long t, c, nd, val;
		int kind;
		if ((rc = rd_fields(&r, buf, fl, 5, header)) < 0 ||
		    (rc = rd_int(&r, "t_ns", fl[0], false, 0, INT64_MAX / 4, &t)) < 0)
			break;
		if ((kind = event_kind(fl[1])) < 0) {
			rc = rd_fail(&r, "field event: unknown event '%.40s'", fl[1]);
			break;
		}
		if ((rc = rd_int(&r, "client", fl[2], true, 0, clients - 1, &c)) < 0 ||
		    (rc = rd_int(&r, "node", fl[3], true, 0, LB_MAX_NODES - 1, &nd)) < 0 ||
		    (rc = rd_int(&r, "value", fl[4], false, INT64_MIN / 4, INT64_MAX / 4, &val)) < 0 ||
		    (rc = event_value_ok(&r, kind, fl[2], fl[3], val)) < 0)
			break;
		if (k == cap) {
			struct lb_event *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));
			if (!nv) {
				rc = LB_ENOMEM;
				break;
			}
			v = nv;
		}
		v[k++] = (struct lb_event){ .t_ns = t, .kind = kind, .client = (int32_t)c,
					    .node = (int32_t)nd, .value = val };
	}
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v ? v : calloc(1, sizeof(*v));
	*n = k;
	return *out ? 0 : LB_ENOMEM;
}

int lb_events_read(const char *path, int clients, struct lb_event **out, size_t *n)
{
	int rc;
	FILE *f = open_in(path, false, &rc);

	*out = NULL;
	*n = 0;
	if (!f) { /* absent: no events */
		if (rc < 0)
			return rc;
		*out = calloc(1, sizeof(**out));
		return *out ? 0 : LB_ENOMEM;
	}
	rc = lb_events_read_file(f, path, clients, out, n);
	fclose(f);
	return rc;
}

/* ---- keyevents.csv ---- */

/* The file before the TTL was read (no ttl_ms column): still read, its TTLs unknown. */
#define KEY_EVENTS_HEADER_V1 "t_ns,server,port,node,key,event,value"

int lb_key_events_read_file(FILE *f, const char *path, int keys, struct lb_key_event **out,
			    size_t *n)
{
	char buf[LB_READ_MAX_LINE];
	struct lb_key_event *v = NULL;
	size_t cap = 0, k = 0;
	struct rd r;
	int rc;

	*out = NULL;
	*n = 0;
	rd_init(&r, f, path, buf, sizeof(buf));
	if ((rc = rd_next(&r)) <= 0 ||
	    (strcmp(buf, LB_KEY_EVENTS_HEADER) && strcmp(buf, KEY_EVENTS_HEADER_V1))) {
		if (rc < 0)
			return rc;
		return rd_fail(&r, "expected the header %s", LB_KEY_EVENTS_HEADER);
	}
	size_t cols = strcmp(buf, LB_KEY_EVENTS_HEADER) ? 7 : 8;
	const char *header = cols == 8 ? LB_KEY_EVENTS_HEADER : KEY_EVENTS_HEADER_V1;
	while ((rc = rd_next(&r)) > 0) {
		char *fl[8];
		long long t, server, port, node, key, ttl = LB_KEY_TTL_UNKNOWN;
		uint64_t value = 0;
		int kind;
		if ((rc = rd_fields(&r, buf, fl, cols, header)) < 0 ||
		    (rc = rd_int(&r, "t_ns", fl[0], false, 0, INT64_MAX / 4, &t)) < 0 ||
		    (rc = rd_int(&r, "server", fl[1], false, 0, LB_KEYWATCH_MAX_SERVERS - 1, &server)) < 0 ||
		    (rc = rd_int(&r, "port", fl[2], false, 0, 65535, &port)) < 0 ||
		    (rc = rd_int(&r, "node", fl[3], false, 0, LB_MAX_NODES - 1, &node)) < 0)
			break;
		if ((kind = lb_key_kind_parse(fl[5])) < 0) {
			rc = rd_fail(&r, "field event: expected set, del, expired, expire, found, watch "
				     "or unwatch, got '%.40s'", fl[5]);
			break;
		}
		bool whole = kind == LB_KEY_WATCH || kind == LB_KEY_UNWATCH; /* the server, no key */
		if ((rc = rd_int(&r, "key", fl[4], whole, 0, keys - 1, &key)) < 0)
			break;
		if (whole && *fl[4]) {
			rc = rd_fail(&r, "field key: %s is about the whole server: expected nothing, got "
				     "'%.40s'", fl[5], fl[4]);
			break;
		}
		if (kind != LB_KEY_SET && kind != LB_KEY_FOUND && *fl[6]) {
			rc = rd_fail(&r, "field value: only a set or a found has one, got '%.40s'",
				     fl[6]);
			break;
		}
		if ((rc = rd_hash(&r, "value", fl[6], &value)) < 0)
			break;
		bool timed = kind == LB_KEY_SET || kind == LB_KEY_EXPIRE || kind == LB_KEY_FOUND;
		if (cols == 8 && !timed && *fl[7]) {
			rc = rd_fail(&r, "field ttl_ms: only a set, an expire or a found has one, got "
				     "'%.40s'", fl[7]);
			break;
		}
		/* -2, no key: what a found may say */
		if (cols == 8 && *fl[7] && (rc = rd_int(&r, "ttl_ms", fl[7], false,
						      kind == LB_KEY_FOUND ? -2 : -1, INT32_MAX,
						      &ttl)) < 0)
			break;
		if (k == cap) {
			struct lb_key_event *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));
			if (!nv) {
				rc = LB_ENOMEM;
				break;
			}
			v = nv;
		}
		v[k++] = (struct lb_key_event){ .t_ns = t, .value = value, .key = (int32_t)key,
						.port = (int32_t)port, .ttl_ms = (int32_t)ttl,
						.server = (uint8_t)server, .node = (uint8_t)node,
						.kind = (uint8_t)kind };
	}
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v ? v : calloc(1, sizeof(*v));
	*n = k;
	return *out ? 0 : LB_ENOMEM;
}

int lb_key_events_read(const char *path, int keys, struct lb_key_event **out, size_t *n)
{
	int rc;
	FILE *f = open_in(path, true, &rc);

	*out = NULL;
	*n = 0;
	if (!f)
		return rc;
	rc = lb_key_events_read_file(f, path, keys, out, n);
	fclose(f);
	return rc;
}

/* ---- latency.csv ---- */

int lb_latency_read_file(FILE *f, const char *path, struct lb_hist *h)
{
	static const char header[] = "bucket_low_us,bucket_high_us,count";
	char buf[LB_READ_MAX_LINE];
	struct rd r;
	int rc;

	memset(h, 0, sizeof(*h));
	rd_init(&r, f, path, buf, sizeof(buf));
	if ((rc = rd_next(&r)) <= 0 || strcmp(buf, header)) {
		if (rc < 0)
			return rc;
		return rd_fail(&r, "expected the header %s", header);
	}
	while ((rc = rd_next(&r)) > 0) {
		char *fl[3];
		long long lo, hi, count;
		size_t i;
		uint64_t l = 0, hh = 0;
		if ((rc = rd_fields(&r, buf, fl, 3, header)) < 0 ||
		    (rc = rd_int(&r, "bucket_low_us", fl[0], false, 0, INT64_MAX / 4, &lo)) < 0 ||
		    (rc = rd_int(&r, "bucket_high_us", fl[1], false, 0, INT64_MAX / 4, &hi)) < 0 ||
		    (rc = rd_int(&r, "count", fl[2], false, 0, INT64_MAX / 4, &count)) < 0)
			return rc;
		for (i = 0; i < LB_HIST_BUCKETS; i++) {
			lb_hist_bucket_range(i, &l, &hh);
			if (l == (uint64_t)lo && hh == (uint64_t)hi)
				break;
		}
		if (i == LB_HIST_BUCKETS)
			return rd_fail(&r, "field bucket_low_us: %lld..%lld is not a bucket of lockbench's "
				       "histogram", lo, hi);
		if (h->n + (uint64_t)count < h->n)
			return rd_fail(&r, "field count: the counts overflow");
		h->counts[i] += (uint64_t)count;
		h->n += (uint64_t)count;
		if (hh * 1000 > h->max_ns)
			h->max_ns = hh * 1000;
	}
	return rc;
}

int lb_latency_read(const char *path, struct lb_hist *h)
{
	int rc;
	FILE *f = open_in(path, false, &rc);

	memset(h, 0, sizeof(*h));
	if (!f)
		return rc;
	rc = lb_latency_read_file(f, path, h);
	fclose(f);
	return rc;
}
