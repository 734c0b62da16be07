/*
 * import.c - a production history's CSV, read (import.h): the safe open, the
 * line reader, the fields, the times read digit by digit into integer
 * nanoseconds, and the lanes lockbench's own history.csv gives its sections.
 */
#include "esc.h"
#include "import.h"
#include "plumbing.h"
#include "signals.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NS_PER_S INT64_C(1000000000)

/* ---- times ---- */

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int64_t y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return m == 2 && leap(y) ? 29 : days[m - 1];
}

/* Leap years from year 1 to @y included. */
static int64_t leaps_to(int64_t y)
{
	return y / 4 - y / 100 + y / 400;
}

/* Days from 1970-01-01 to the first of January of @y (y >= 1970). */
static int64_t days_to_year(int64_t y)
{
	return 365 * (y - 1970) + leaps_to(y - 1) - leaps_to(1969);
}

static int64_t days_since_epoch(int64_t y, int m, int d)
{
	int64_t days = days_to_year(y);
	for (int k = 1; k < m; k++)
		days += month_days(y, k);
	return days + d - 1;
}

static int fail_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* @n digits at @s into *@v; false when one is not a digit. */
static bool digits(const char *s, int n, int64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

/* A fraction of a second after its point: 1 to 9 digits, into ns; how many
 * characters it took, or -1. */
static int fraction(const char *s, int64_t *ns, char *why, size_t len)
{
	int n = 0;

	*ns = 0;
	while (s[n] >= '0' && s[n] <= '9') {
		if (n == 9)
			return fail_why(why, len, "at most 9 decimals: nanoseconds");
		*ns = *ns * 10 + (s[n] - '0');
		n++;
	}
	if (n == 0)
		return fail_why(why, len, "digits after the decimal point");
	for (int k = n; k < 9; k++)
		*ns *= 10;
	return n;
}

static int parse_epoch(const char *s, int64_t *ns, char *why, size_t len)
{
	size_t n = strspn(s, "0123456789");
	int64_t sec = 0, frac = 0;

	if (n == 0 || (s[n] && s[n] != '.'))
		return fail_why(why, len, "epoch seconds (digits, a point, up to 9 decimals) or an "
				"RFC 3339 date (2026-11-25T12:00:00.5Z)");
	if (n > 10 || !digits(s, (int)n, &sec) || sec > LB_IMPORT_MAX_EPOCH_S)
		return fail_why(why, len, "epoch seconds up to %lld (the year 2255)%s",
				(long long)LB_IMPORT_MAX_EPOCH_S, n >= 12 && n <= 16 ?
				"; this looks like milli- or microseconds: write seconds with decimals" : "");
	if (s[n] == '.') {
		int k = fraction(s + n + 1, &frac, why, len);
		if (k < 0)
			return -1;
		if (s[n + 1 + (size_t)k])
			return fail_why(why, len, "nothing after the decimals");
	}
	*ns = sec * NS_PER_S + frac;
	return 0;
}

/* The time zone of an RFC 3339 time at @s: Z, or +HH:MM / -HH:MM, into
 * seconds east of UTC. */
static int zone(const char *s, int64_t *east, char *why, size_t len)
{
	int64_t h, m;

	*east = 0;
	if ((s[0] == 'Z' || s[0] == 'z') && !s[1])
		return 0;
	if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':' || !digits(s + 1, 2, &h) ||
	    !digits(s + 4, 2, &m) || h > 23 || m > 59)
		return fail_why(why, len, "a time zone after the time: Z or +HH:MM or -HH:MM");
	*east = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
	return 0;
}

static int parse_rfc3339(const char *s, int64_t *ns, char *why, size_t len)
{
	int64_t y, mo, d, h, mi, sec, frac = 0, east;
	const char *p = s + 19;

	if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || !strchr("Tt ", s[10]) ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &sec))
		return fail_why(why, len, "an RFC 3339 time: YYYY-MM-DDTHH:MM:SS, decimals, then Z or "
				"+HH:MM");
	if (y < 1970 || y > 2255)
		return fail_why(why, len, "a year from 1970 to 2255");
	if (mo < 1 || mo > 12)
		return fail_why(why, len, "a month from 01 to 12");
	if (d < 1 || d > month_days(y, (int)mo))
		return fail_why(why, len, "a day from 01 to %d in that month", month_days(y, (int)mo));
	if (h > 23 || mi > 59 || sec > 59)
		return fail_why(why, len, "an hour to 23, a minute and a second to 59 (a leap second "
				"cannot be placed)");
	if (*p == '.') {
		int k = fraction(p + 1, &frac, why, len);
		if (k < 0)
			return -1;
		p += 1 + k;
	}
	if (zone(p, &east, why, len) < 0)
		return -1;
	int64_t t = days_since_epoch(y, (int)mo, (int)d) * 86400 + h * 3600 + mi * 60 + sec - east;
	if (t < 0 || t > LB_IMPORT_MAX_EPOCH_S)
		return fail_why(why, len, "a time from 1970 to 2255 in UTC");
	*ns = t * NS_PER_S + frac;
	return 0;
}

int lb_import_parse_time(const char *s, int64_t *ns, char *why, size_t len)
{
	if (strlen(s) > 4 && s[4] == '-' && s[0] >= '0' && s[0] <= '9')
		return parse_rfc3339(s, ns, why, len);
	if (s[0] == '-')
		return fail_why(why, len, "a time after 1970: not negative");
	return parse_epoch(s, ns, why, len);
}

int lb_import_parse_ms(const char *s, int64_t max_ms, int64_t *ns, char *why, size_t len)
{
	size_t n = strspn(s, "0123456789");
	int64_t ms = 0, frac = 0;
	int k = 0;

	if (n == 0 || n > 10 || (s[n] && s[n] != '.'))
		return fail_why(why, len, "milliseconds from 0 to %lld, up to 6 decimals", (long long)max_ms);
	digits(s, (int)n, &ms);
	if (s[n] == '.') {
		while (s[n + 1 + (size_t)k] >= '0' && s[n + 1 + (size_t)k] <= '9') {
			if (k == 6)
				return fail_why(why, len, "at most 6 decimals of a millisecond: nanoseconds");
			frac = frac * 10 + (s[n + 1 + (size_t)k] - '0');
			k++;
		}
		if (k == 0 || s[n + 1 + (size_t)k])
			return fail_why(why, len, "milliseconds from 0 to %lld, up to 6 decimals",
					(long long)max_ms);
	}
	for (int i = k; i < 6; i++)
		frac *= 10;
	if (ms > max_ms || (ms == max_ms && frac))
		return fail_why(why, len, "milliseconds from 0 to %lld", (long long)max_ms);
	*ns = ms * LB_NS_PER_MS + frac;
	return 0;
}

void lb_import_utc(int64_t ns, char *buf, size_t len)
{
	int64_t sec = ns / NS_PER_S, frac = ns % NS_PER_S;
	int64_t days = sec / 86400, rest = sec % 86400, y = 1970 + days / 366;
	int m = 1;

	if (ns < 0) {
		snprintf(buf, len, "(before 1970)");
		return;
	}
	while (days_to_year(y + 1) <= days)
		y++;
	days -= days_to_year(y);
	while (days >= month_days(y, m))
		days -= month_days(y, m++);
	snprintf(buf, len, "%04lld-%02d-%02lldT%02lld:%02lld:%02lld.%09lldZ", (long long)y, m,
		 (long long)days + 1, (long long)(rest / 3600), (long long)(rest / 60 % 60),
		 (long long)(rest % 60), (long long)frac);
}

void lb_import_ms(int64_t ns, char *buf, size_t len)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000),
		 (unsigned long long)(a % 1000000));
}

/* ---- names ---- */

static uint64_t name_hash(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

/* Put every name in a table of @slots slots (a power of two). */
static int names_rehash(struct lb_inames *t, size_t slots)
{
	int *slot = calloc(slots, sizeof(*slot));

	if (!slot)
		return LB_ENOMEM;
	for (int i = 0; i < t->n; i++) {
		size_t h = (size_t)name_hash(t->name[i]) & (slots - 1);
		while (slot[h])
			h = (h + 1) & (slots - 1);
		slot[h] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->slots = slots;
	return 0;
}

/* The index of @s, added at the end when new; LB_ENOMEM. */
static int names_add(struct lb_inames *t, const char *s)
{
	if ((size_t)t->n * 2 + 2 > t->slots && names_rehash(t, t->slots ? 2 * t->slots : 64) < 0)
		return LB_ENOMEM;
	size_t h = (size_t)name_hash(s) & (t->slots - 1);
	for (; t->slot[h]; h = (h + 1) & (t->slots - 1))
		if (!strcmp(t->name[t->slot[h] - 1], s))
			return t->slot[h] - 1;
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		char **v = realloc(t->name, (size_t)cap * sizeof(*v));
		if (!v)
			return LB_ENOMEM;
		t->name = v;
		t->cap = cap;
	}
	if (!(t->name[t->n] = strdup(s)))
		return LB_ENOMEM;
	t->slot[h] = t->n + 1;
	return t->n++;
}

static void names_free(struct lb_inames *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->name[i]);
	free(t->name);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

/* ---- lines and fields ---- */

enum col { C_CLIENT, C_ENTER, C_EXIT, C_KEY, C_TOKEN, C_FENCE, C_SERVER, C_UNC, C_COUNT };
static const char *const col_name[C_COUNT] = { "client", "enter", "exit", "key", "token", "fence",
					       "server", "clock_uncertainty_ms" };
#define MAX_COLS C_COUNT

struct ird {
	FILE *f;
	const char *path;
	size_t line, len;
	char buf[LB_IMPORT_MAX_LINE + 2];
	/* the fields of the line, unquoted, each ended by a NUL of its own */
	char out[LB_IMPORT_MAX_LINE + MAX_COLS + 2];
	char *field[MAX_COLS];
	size_t flen[MAX_COLS];
	size_t nf;                 /* fields found (more than MAX_COLS: counted, not kept) */
	int cols[MAX_COLS];        /* the header: the column of each field */
	size_t ncols, header_line;
};

static int ird_fail(const struct ird *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int ird_fail(const struct ird *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->line)
		lb_errorf("%s:%zu: %s", r->path, r->line, msg);
	else
		lb_errorf("%s: %s", r->path, msg);
	return LB_EINVAL;
}

/* @len bytes of @s for a message: at most 60, control bytes (a NUL, a CR)
 * as \xNN, "..." when cut; the terminal escaping of lb_errorf does the rest. */
static void shown(const char *s, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len && i < 60 && o + 5 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (len > 60 && o + 4 < cap)
		o += (size_t)snprintf(out + o, cap - o, "...");
	out[o < cap ? o : cap - 1] = '\0';
}

/* The next line into r->buf (its end, \n or \r\n, taken off): 1, 0 at the
 * end, or an error. A lone CR stays in the line, for its field to refuse. */
static int ird_next(struct ird *r)
{
	int c;

	r->line++;
	r->len = 0;
	if ((r->line & 4095) == 0 && lb_stop_work())
		return LB_ECANCELED; /* Ctrl-C: said by the command, not here */
	while ((c = getc(r->f)) != EOF && c != '\n') {
		if (r->len >= LB_IMPORT_MAX_LINE)
			return ird_fail(r, "expected a line of at most %d bytes, got a longer one",
					LB_IMPORT_MAX_LINE);
		r->buf[r->len++] = (char)c;
	}
	if (ferror(r->f)) {
		lb_errorf("%s:%zu: cannot read: %s", r->path, r->line, strerror(errno));
		return LB_ESYS;
	}
	if (c == EOF && r->len == 0)
		return 0;
	if (r->len && r->buf[r->len - 1] == '\r')
		r->len--;
	if (r->line == 1 && r->len >= 3 && !memcmp(r->buf, "\xef\xbb\xbf", 3)) {
		/* a UTF-8 byte order mark (a spreadsheet's "CSV UTF-8") is not data */
		memmove(r->buf, r->buf + 3, r->len - 3);
		r->len -= 3;
	}
	r->buf[r->len] = '\0';
	return 1;
}

/* The name of field @k of the line: its column, or its place. */
static const char *field_name(const struct ird *r, size_t k, char *tmp, size_t len)
{
	if (r->ncols && k < r->ncols)
		return col_name[r->cols[k]];
	snprintf(tmp, len, "%s%zu", r->ncols ? "" : "column ", k + 1);
	return tmp;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One quoted field from r->buf at *pos (on its opening quote) into @o. */
static int quoted(struct ird *r, size_t *pos, size_t k, char *o, size_t *olen)
{
	char tmp[32];
	size_t p = *pos + 1, n = 0;

	for (;; p++) {
		if (p >= r->len)
			return ird_fail(r, "field %s: expected a closing quote (\"), got the end of the "
					"line", field_name(r, k, tmp, sizeof(tmp)));
		if (r->buf[p] == '"' && p + 1 < r->len && r->buf[p + 1] == '"')
			o[n++] = r->buf[++p];
		else if (r->buf[p] == '"')
			break;
		else
			o[n++] = r->buf[p];
	}
	for (p++; p < r->len && blank(r->buf[p]); p++)
		;
	if (p < r->len && r->buf[p] != ',')
		return ird_fail(r, "field %s: expected a comma after the closing quote, got '%c'",
				field_name(r, k, tmp, sizeof(tmp)), r->buf[p]);
	*pos = p;
	*olen = n;
	return 0;
}

/* Split r->buf into its fields (RFC 4180 quotes; blanks around a field
 * taken off), each checked: no control byte, at most LB_IMPORT_MAX_FIELD. */
static int ird_split(struct ird *r)
{
	size_t pos = 0, used = 0;
	char tmp[32], show[300];
	int rc;

	r->nf = 0;
	for (;;) {
		size_t k = r->nf++, n = 0;
		char *o = r->out + used;
		while (pos < r->len && blank(r->buf[pos]))
			pos++;
		if (pos < r->len && r->buf[pos] == '"') {
			if ((rc = quoted(r, &pos, k, o, &n)) < 0)
				return rc;
		} else {
			size_t start = pos;
			while (pos < r->len && r->buf[pos] != ',')
				pos++;
			size_t end = pos;
			while (end > start && blank(r->buf[end - 1]))
				end--;
			memcpy(o, r->buf + start, end - start);
			n = end - start;
		}
		o[n] = '\0';
		used += n + 1;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)o[i] < 0x20 || o[i] == 0x7f) {
				shown(o, n, show, sizeof(show));
				return ird_fail(r, "field %s: expected text without control characters (a "
						"NUL, a CR: line ends are \\n or \\r\\n), got '%s'",
						field_name(r, k, tmp, sizeof(tmp)), show);
			}
		if (n > LB_IMPORT_MAX_FIELD) {
			shown(o, n, show, sizeof(show));
			return ird_fail(r, "field %s: expected at most %d bytes, got %zu: '%s'",
					field_name(r, k, tmp, sizeof(tmp)), LB_IMPORT_MAX_FIELD, n, show);
		}
		if (k < MAX_COLS) {
			r->field[k] = o;
			r->flen[k] = n;
		} else {
			used -= n + 1; /* counted, not kept */
		}
		if (pos >= r->len)
			return 0;
		pos++; /* the comma */
	}
}

/* A line with nothing on it, or a comment. */
static bool ird_skip(const struct ird *r)
{
	size_t p = 0;
	while (p < r->len && blank(r->buf[p]))
		p++;
	return p == r->len || r->buf[p] == '#';
}

/* ---- the header ---- */

static int read_header(struct ird *r, struct lb_import *imp)
{
	char show[300], tmp[32];
	bool seen[C_COUNT] = { false };
	int rc;

	while ((rc = ird_next(r)) > 0 && ird_skip(r))
		;
	if (rc < 0)
		return rc;
	if (rc == 0)
		return ird_fail(r, "header: expected a line naming the columns (client,enter,exit "
				"and any of key, token, fence, server, clock_uncertainty_ms), got the end "
				"of the file");
	if ((rc = ird_split(r)) < 0)
		return rc;
	if (r->nf > MAX_COLS)
		return ird_fail(r, "header: expected at most %d columns (client, enter, exit, key, token, "
				"fence, server, clock_uncertainty_ms), got %zu", MAX_COLS, r->nf);
	for (size_t k = 0; k < r->nf; k++) {
		int c = 0;
		while (c < C_COUNT && strcmp(r->field[k], col_name[c]))
			c++;
		shown(r->field[k], r->flen[k], show, sizeof(show));
		if (c == C_COUNT)
			return ird_fail(r, "field %s: expected a column name: client, enter, exit, key, "
					"token, fence, server or clock_uncertainty_ms, got '%s'",
					field_name(r, k, tmp, sizeof(tmp)), show);
		if (seen[c])
			return ird_fail(r, "field %s: expected each column once, got '%s' again",
					field_name(r, k, tmp, sizeof(tmp)), show);
		seen[c] = true;
		r->cols[k] = c;
	}
	for (int c = C_CLIENT; c <= C_EXIT; c++)
		if (!seen[c])
			return ird_fail(r, "header: expected a column %s (client, enter and exit are "
					"required), got '%.200s'", col_name[c], r->buf);
	r->ncols = r->nf;
	r->header_line = r->line;
	imp->has_key = seen[C_KEY];
	imp->has_token = seen[C_TOKEN];
	imp->has_fence = seen[C_FENCE];
	imp->has_server = seen[C_SERVER];
	imp->has_unc = seen[C_UNC];
	return 0;
}

/* ---- a row ---- */

static int row_time(const struct ird *r, size_t k, int64_t *ns)
{
	char why[200], show[300];

	if (lb_import_parse_time(r->field[k], ns, why, sizeof(why)) == 0)
		return 0;
	shown(r->field[k], r->flen[k], show, sizeof(show));
	return ird_fail(r, "field %s: expected a time, %s, got '%s'", col_name[r->cols[k]], why, show);
}

static int row_name(const struct ird *r, size_t k, struct lb_inames *t, int *out)
{
	if (!r->flen[k])
		return ird_fail(r, "field %s: expected a name (at most %d bytes), got nothing",
				col_name[r->cols[k]], LB_IMPORT_MAX_FIELD);
	if ((*out = names_add(t, r->field[k])) < 0) {
		lb_errorf("%s:%zu: out of memory", r->path, r->line);
		return LB_ENOMEM;
	}
	return 0;
}

static int row_fence(const struct ird *r, size_t k, int64_t *fence)
{
	char show[300];
	size_t n = r->flen[k];

	*fence = -1;
	if (!n)
		return 0;
	if (n > 19 || strspn(r->field[k], "0123456789") != n ||
	    !lb_parse_i64(r->field[k], 0, INT64_MAX / 4, fence)) {
		shown(r->field[k], n, show, sizeof(show));
		return ird_fail(r, "field fence: expected an integer from 0 to %lld, or nothing, got '%s'",
				(long long)(INT64_MAX / 4), show);
	}
	return 0;
}

/* The fields of one row into @s. */
static int row_fields(struct ird *r, struct lb_import *imp, struct lb_isec *s)
{
	char why[200], show[300];
	int rc = 0;

	*s = (struct lb_isec){ .line = r->line, .server = -1, .fence = -1, .lane = -1,
			       .unc_ns = imp->default_unc_ns };
	for (size_t k = 0; k < r->ncols && rc == 0; k++) {
		const char *v = r->field[k];
		switch (r->cols[k]) {
		case C_CLIENT: rc = row_name(r, k, &imp->clients, &s->client); break;
		case C_ENTER: rc = row_time(r, k, &s->enter_ns); break;
		case C_EXIT: rc = row_time(r, k, &s->exit_ns); break;
		case C_KEY: rc = row_name(r, k, &imp->keys, &s->key); break;
		case C_TOKEN: s->token = lb_token_hash(v, r->flen[k]); break;
		case C_FENCE: rc = row_fence(r, k, &s->fence); break;
		case C_SERVER:
			if (r->flen[k])
				rc = row_name(r, k, &imp->servers, &s->server);
			break;
		case C_UNC:
			if (!r->flen[k])
				break;
			if (lb_import_parse_ms(v, LB_IMPORT_MAX_UNC_MS, &s->unc_ns, why, sizeof(why)) < 0) {
				shown(v, r->flen[k], show, sizeof(show));
				rc = ird_fail(r, "field clock_uncertainty_ms: expected %s, got '%s'", why, show);
			}
			s->unc_given = true;
			break;
		}
	}
	return rc;
}

static int read_row(struct ird *r, struct lb_import *imp)
{
	char show[300], a[48];
	struct lb_isec s;
	int rc;

	if ((rc = ird_split(r)) < 0)
		return rc;
	if (r->nf != r->ncols) {
		shown(r->buf, r->len, show, sizeof(show));
		return ird_fail(r, "fields: expected %zu, as the header on line %zu names them, got "
				"%zu: '%s'", r->ncols, r->header_line, r->nf, show);
	}
	if ((rc = row_fields(r, imp, &s)) < 0)
		return rc;
	if (s.exit_ns < s.enter_ns) {
		size_t k = 0;
		while (r->cols[k] != C_EXIT)
			k++;
		shown(r->field[k], r->flen[k], show, sizeof(show));
		lb_import_utc(s.enter_ns, a, sizeof(a));
		return ird_fail(r, "field exit: expected a time at or after enter (%s), got '%s'", a,
				show);
	}
	if (imp->n >= LB_IMPORT_MAX_SECTIONS)
		return ird_fail(r, "expected at most %d sections in one file, got more: split it (by "
				"key, or around the incident)", LB_IMPORT_MAX_SECTIONS);
	if (imp->n == imp->cap) {
		size_t cap = imp->cap ? 2 * imp->cap : 256;
		struct lb_isec *v = realloc(imp->s, cap * sizeof(*v));
		if (!v)
			return LB_ENOMEM;
		imp->s = v;
		imp->cap = cap;
	}
	imp->s[imp->n++] = s;
	return 0;
}

/* ---- lanes ---- */

static int by_key_client_enter(const void *pa, const void *pb, void *base)
{
	const struct lb_isec *s = base, *a = &s[*(const size_t *)pa], *b = &s[*(const size_t *)pb];

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->client != b->client)
		return a->client < b->client ? -1 : 1;
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* One client's sections on one key must not overlap each other (one lane
 * each in history.csv, and no pair of the judge): ix[from..to) is one
 * client's on one key, in enter order. */
static int own_overlap(const struct lb_import *imp, const char *path, const size_t *ix,
		       size_t from, size_t to)
{
	char a[48], b[48];
	size_t latest = ix[from];

	for (size_t p = from + 1; p < to; p++) {
		const struct lb_isec *s = &imp->s[ix[p]], *l = &imp->s[latest];
		if (s->enter_ns < l->exit_ns) {
			lb_import_utc(l->exit_ns, a, sizeof(a));
			lb_import_utc(s->enter_ns, b, sizeof(b));
			lb_errorf("%s:%zu: field enter: expected a time at or after %s, when this client's "
				  "section of line %zu on the same lock exited, got %s (one client's "
				  "sections on one lock cannot overlap: give each thread or process a "
				  "client name of its own)", path, s->line, a, l->line, b);
			return LB_EINVAL;
		}
		if (s->exit_ns > l->exit_ns)
			latest = ix[p];
	}
	return 0;
}

/* One client's sections on one key: ix[from..to), and where it first appears. */
struct group {
	int key, client;
	size_t first, from, to;
};

static int group_cmp(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* Lanes: the j-th client of key k (order of first appearance on it) is lane
 * j * keys + k; a lane's sections are numbered in enter order. */
static int assign_lanes(struct lb_import *imp, const char *path, size_t *ix)
{
	int keys = imp->keys.n, most = 0, rc = 0;
	int *count = calloc((size_t)(keys ? keys : 1), sizeof(*count));
	struct group *g = malloc(sizeof(*g) * (imp->n ? imp->n : 1));
	size_t ng = 0;

	if (!count || !g) {
		rc = LB_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < imp->n; i++)
		ix[i] = i;
	qsort_r(ix, imp->n, sizeof(*ix), by_key_client_enter, imp->s);
	for (size_t from = 0, to; from < imp->n && rc == 0; from = to) {
		const struct lb_isec *f = &imp->s[ix[from]];
		struct group *x = &g[ng++];
		*x = (struct group){ f->key, f->client, ix[from], from, from };
		for (to = from; to < imp->n && imp->s[ix[to]].key == f->key &&
				imp->s[ix[to]].client == f->client; to++)
			if (ix[to] < x->first)
				x->first = ix[to];
		x->to = to;
		rc = own_overlap(imp, path, ix, from, to);
		if (++count[f->key] > most)
			most = count[f->key];
	}
	int64_t lanes = (int64_t)keys * most;
	imp->lanes = lanes > LB_MAX_CLIENTS ? LB_MAX_CLIENTS + 1 : (int)lanes;
	if (rc < 0 || lanes > LB_MAX_CLIENTS || lanes == 0)
		goto out; /* too many for a history.csv: no lanes (--out refuses it) */
	if (!(imp->lane_client = malloc(sizeof(*imp->lane_client) * (size_t)lanes))) {
		rc = LB_ENOMEM;
		goto out;
	}
	for (int64_t l = 0; l < lanes; l++)
		imp->lane_client[l] = -1;
	qsort(g, ng, sizeof(*g), group_cmp);
	memset(count, 0, sizeof(*count) * (size_t)keys);
	for (size_t k = 0; k < ng; k++) {
		int lane = count[g[k].key]++ * keys + g[k].key;
		imp->lane_client[lane] = g[k].client;
		for (size_t p = g[k].from; p < g[k].to; p++) {
			imp->s[ix[p]].lane = lane;
			imp->s[ix[p]].seq = (uint32_t)(p - g[k].from);
		}
	}
out:
	free(g);
	free(count);
	return rc;
}

int lb_import_read_file(FILE *f, const char *path, int64_t default_unc_ns, struct lb_import *imp)
{
	struct ird *r = calloc(1, sizeof(*r));
	int rc;

	memset(imp, 0, sizeof(*imp));
	imp->default_unc_ns = default_unc_ns;
	if (!r)
		return LB_ENOMEM;
	r->f = f;
	r->path = path;
	if ((rc = read_header(r, imp)) < 0)
		goto out;
	while ((rc = ird_next(r)) > 0)
		if (!ird_skip(r) && (rc = read_row(r, imp)) < 0)
			break;
	if (rc < 0)
		goto out;
	if (!imp->n) { /* a header alone is no history: nothing to judge is no verdict */
		r->line = 0;
		rc = ird_fail(r, "expected at least one critical section after the header on line "
			      "%zu, got none (only blank or # lines follow it)", r->header_line);
		goto out;
	}
	if (!imp->has_key && names_add(&imp->keys, "") < 0) {
		rc = LB_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < imp->n; i++) {
		if (i == 0 || imp->s[i].enter_ns < imp->first_ns)
			imp->first_ns = imp->s[i].enter_ns;
		if (i == 0 || imp->s[i].exit_ns > imp->last_ns)
			imp->last_ns = imp->s[i].exit_ns;
	}
	size_t *ix = lb_stop_work() ? NULL : malloc(sizeof(*ix) * (imp->n ? imp->n : 1));
	rc = lb_stop_work() ? LB_ECANCELED : ix ? assign_lanes(imp, path, ix) : LB_ENOMEM;
	if (rc == 0 && lb_stop_work())
		rc = LB_ECANCELED; /* Ctrl-C: said by the command */
	free(ix);
out:
	free(r);
	if (rc < 0)
		lb_import_free(imp);
	return rc;
}

FILE *lb_import_open(const char *path, int *rc)
{
	const char *kind;
	/* what it is before a byte is read: a FIFO or a device could block forever */
	FILE *f = lb_open_regular(path, rc, &kind);

	if (!f && kind)
		lb_errorf("%s: expected a regular file of critical sections (CSV), got %s", path, kind);
	else if (!f)
		lb_errorf("cannot read %s: %s", path, strerror(errno));
	return f;
}

int lb_import_read(const char *path, const char *name, int64_t default_unc_ns,
		   struct lb_import *imp)
{
	int rc;
	FILE *f = lb_import_open(path, &rc);

	memset(imp, 0, sizeof(*imp));
	if (!f)
		return rc;
	rc = lb_import_read_file(f, name ? name : path, default_unc_ns, imp);
	fclose(f);
	return rc;
}

void lb_import_free(struct lb_import *imp)
{
	if (!imp)
		return;
	free(imp->s);
	free(imp->lane_client);
	names_free(&imp->clients);
	names_free(&imp->keys);
	names_free(&imp->servers);
	memset(imp, 0, sizeof(*imp));
}
