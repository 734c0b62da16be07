/*
 * threshold.c - FIGURE OP N on a summary column (threshold.h).
 */
#include "threshold.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "util.h"

static int refuse(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return LB_EINVAL;
}

static const char *const cmp_text[] = { "<", "<=", ">", ">=", "==", "!=" };

const char *lb_cmp_text(enum lb_cmp op)
{
	return cmp_text[op];
}

/* The units a column may be named in by its suffix: 10^exp seconds. */
static const struct { const char *suffix, *unit; int exp; } units[] = {
	{ "_us", "us", -6 }, { "_ms", "ms", -3 }, { "_s", "s", 0 },
};

/* Which of units[] ends @name, or -1. */
static int unit_of(const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < 3; i++) {
		size_t k = strlen(units[i].suffix);
		if (n > k && !strcmp(name + n - k, units[i].suffix))
			return i;
	}
	return -1;
}

/* @name (@t->figure with _ for -) to its numeric column, directly or
 * through another unit. */
static bool find_column(struct lb_threshold *t, const char *name)
{
	const struct lb_figdef *f = lb_figdef_find(name);
	int u = unit_of(name);

	if (f && f->kind != LB_FD_TEXT) {
		snprintf(t->column, sizeof(t->column), "%s", f->name);
		snprintf(t->unit, sizeof(t->unit), "%s", f->unit);
		t->shift = 0;
		return true;
	}
	if (f || u < 0)
		return false;
	size_t stem = strlen(name) - strlen(units[u].suffix);
	for (int i = 0; i < 3; i++) {
		char other[64];
		snprintf(other, sizeof(other), "%.*s%s", (int)stem, name, units[i].suffix);
		f = lb_figdef_find(other);
		if (i != u && f && f->kind != LB_FD_TEXT && !strcmp(f->unit, units[i].unit)) {
			snprintf(t->column, sizeof(t->column), "%s", f->name);
			snprintf(t->unit, sizeof(t->unit), "%s", units[u].unit);
			t->shift = units[i].exp - units[u].exp; /* a power of ten: exact */
			return true;
		}
	}
	return false;
}

/* Does figure @fig hold the words of @name (its unit suffix left out) one
 * after another, whole? "p99" is in acquire_p99_us. */
static bool holds_words(const char *fig, const char *name)
{
	int u = unit_of(name);
	size_t n = strlen(name) - (u >= 0 ? strlen(units[u].suffix) : 0);

	for (const char *p = fig; n && *p; p++)
		if ((p == fig || p[-1] == '_') && !strncmp(p, name, n) && (p[n] == '_' || !p[n]))
			return true;
	return false;
}

/* The numeric columns @name may mean, for a message: those that hold its
 * words (true), else those sharing its first word (false). */
static bool nearest(const char *name, char *buf, size_t len)
{
	size_t n, used = 0, word = strcspn(name, "_");
	const struct lb_figdef *t = lb_figdefs(&n);
	int pass;

	buf[0] = '\0';
	for (pass = 0; pass < 2 && !buf[0]; pass++)
		for (size_t i = 0; i < n && used + 40 < len; i++)
			if (t[i].kind != LB_FD_TEXT &&
			    (pass == 0 ? holds_words(t[i].name, name) :
			     !strncmp(t[i].name, name, word) &&
			     (t[i].name[word] == '_' || t[i].name[word] == '\0')))
				used += (size_t)snprintf(buf + used, len - used, "%s%s",
							 used ? ", " : "", t[i].name);
	return pass == 1 && buf[0];
}

int lb_threshold_parse(const char *text, struct lb_threshold *t, char *why, size_t why_len)
{
	const char *p = text;
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	while (isspace((unsigned char)*p))
		p++;
	while ((isalnum((unsigned char)*p) || *p == '_' || *p == '-') && n + 1 < sizeof(t->figure))
		t->figure[n++] = (char)tolower((unsigned char)*p), p++;
	while (isspace((unsigned char)*p))
		p++;
	int op = -1;
	for (int i = 0; i < 6; i++) /* the two-character ones first: <= before < */
		if (!strncmp(p, cmp_text[i], strlen(cmp_text[i])) &&
		    (op < 0 || strlen(cmp_text[i]) > strlen(cmp_text[op])))
			op = i;
	if (!n || op < 0)
		return refuse(why, why_len, "'%.60s': expected FIGURE OP N, e.g. "
				       "acquire_p99_ms<50 (OP one of < <= > >= == !=)", text);
	p += strlen(cmp_text[op]);
	while (isspace((unsigned char)*p))
		p++;
	/* the number, blanks around it allowed (they are the expression's), but
	 * written plainly: no '+', hex, inf or nan (util.h) */
	char num[64] = "";
	size_t k = strlen(p);
	while (k && isspace((unsigned char)p[k - 1]))
		k--;
	if (k < sizeof(num)) {
		memcpy(num, p, k);
		num[k] = '\0';
	}
	double v;
	if (k >= sizeof(num) || !lb_parse_double(num, &v))
		return refuse(why, why_len, "'%.60s': after %s, expected a number, got '%.30s'",
				       text, cmp_text[op], p);
	t->op = (enum lb_cmp)op;
	t->bound = v;
	snprintf(t->bound_text, sizeof(t->bound_text), "%s", num);
	char name[sizeof(t->figure)];
	for (size_t i = 0; i <= n; i++)
		name[i] = t->figure[i] == '-' ? '_' : t->figure[i];
	if (!find_column(t, name)) {
		char near[300];
		const struct lb_figdef *f = lb_figdef_find(name);
		if (f)
			return refuse(why, why_len, "'%.60s': %s is a column of summary.csv that holds "
				      "text, not a number%s", text, name, !strcmp(name, "observed") ?
				      " (the class: --expect CLASS)" : "");
		bool means = nearest(name, near, sizeof(near));
		bool timed = unit_of(name) < 0 && (strstr(near, "_us") || strstr(near, "_ms"));
		return refuse(why, why_len, "'%.60s': %s is not a figure of summary.csv%s%s%s%s",
			      text, name, !near[0] ? " (docs/running.md lists its columns" :
			      means ? " (it may mean: " : " (near: ", near, means && timed ?
			      "; a figure in us may be named in ms or s" : "", ")");
	}
	snprintf(t->text, sizeof(t->text), "%s %s %.15g", t->figure, cmp_text[op], v);
	return 0;
}


/* A number as the decimal it is written in: sign x 0.DIGITS x 10^exp
 * (digits without leading or trailing zeros), or an infinity. */
struct dec {
	int sign;           /* -1, 0 (zero), 1 */
	bool inf;
	char digits[72];
	long exp;
};

/* @s, a number written plainly (lb_parse_double took it), or "inf". */
static bool dec_parse(const char *s, struct dec *d)
{
	size_t n = 0;
	long point = -1, lead = 0;
	double ignored;

	memset(d, 0, sizeof(*d));
	if (!strcmp(s, "inf")) {
		d->sign = 1;
		d->inf = true;
		return true;
	}
	if (!lb_parse_double(s, &ignored))
		return false;
	int sign = *s == '-' ? -1 : 1;
	const char *p = s + (*s == '-');
	long before = 0; /* digits kept before the point */
	for (; isdigit((unsigned char)*p) || *p == '.'; p++) {
		if (*p == '.') {
			point = 0;
			continue;
		}
		if (*p == '0' && n == 0) { /* a leading zero: after the point it scales */
			lead += point >= 0;
			continue;
		}
		if (n + 1 >= sizeof(d->digits))
			return false;
		d->digits[n++] = *p;
		before += point < 0;
	}
	long e = 0;
	if (*p == 'e' || *p == 'E') {
		int64_t x;
		if (!lb_parse_i64(p + 1 + (p[1] == '+'), -100000, 100000, &x))
			return false;
		e = (long)x;
	}
	while (n && d->digits[n - 1] == '0')
		n--;
	d->digits[n] = '\0';
	d->sign = n ? sign : 0;
	d->exp = before - lead + e;
	return true;
}

/* -1, 0, 1 as @a is below, at or above @b. */
static int dec_cmp(const struct dec *a, const struct dec *b)
{
	if (a->sign != b->sign)
		return a->sign < b->sign ? -1 : 1;
	if (a->inf || b->inf)
		return a->inf == b->inf ? 0 : a->inf ? a->sign : -b->sign;
	if (!a->sign)
		return 0;
	int m = a->exp != b->exp ? (a->exp < b->exp ? -1 : 1) : 0;
	for (size_t i = 0; !m && (a->digits[i] || b->digits[i]); i++) {
		char x = a->digits[i] ? a->digits[i] : '0', y = b->digits[i] ? b->digits[i] : '0';
		m = x < y ? -1 : x > y;
	}
	return a->sign * m;
}

/* @d as a plain decimal (a far exponent written as one). */
static void dec_text(const struct dec *d, char *buf, size_t len)
{
	long n = (long)strlen(d->digits), e = d->exp;
	char out[200];
	size_t k = 0;

	if (d->inf || !d->sign || e > 40 || e < -40) {
		if (d->inf || !d->sign)
			snprintf(buf, len, "%s", d->inf ? "inf" : "0");
		else
			snprintf(buf, len, "%s0.%se%ld", d->sign < 0 ? "-" : "", d->digits, e);
		return;
	}
	if (d->sign < 0)
		out[k++] = '-';
	if (e <= 0) {
		out[k++] = '0';
		out[k++] = '.';
		for (long i = 0; i < -e; i++)
			out[k++] = '0';
	}
	for (long i = 0; i < n || i < e; i++) {
		if (i == e && e > 0)
			out[k++] = '.';
		out[k++] = i < n ? d->digits[i] : '0';
	}
	out[k] = '\0';
	snprintf(buf, len, "%s", out);
}

/* Does @op hold of a value @c (dec_cmp of the value and N)? */
static bool op_holds(enum lb_cmp op, int c)
{
	return op == LB_CMP_LT ? c < 0 : op == LB_CMP_LE ? c <= 0 : op == LB_CMP_GT ? c > 0 :
	       op == LB_CMP_GE ? c >= 0 : op == LB_CMP_EQ ? c == 0 : c != 0;
}

/*
 * Over every value of [@lo, @hi]: does @op hold of all of them (LB_HELD),
 * of none (LB_NOT_HELD), or of some (LB_UNDECIDED)? A value and N are
 * compared at the interval's ends; == and != hold of all or none only when
 * the interval is one value, or does not reach N.
 */
static enum lb_held over(enum lb_cmp op, const struct dec *lo, const struct dec *hi,
			 const struct dec *n)
{
	int a = dec_cmp(lo, n), b = dec_cmp(hi, n);

	if (op == LB_CMP_EQ || op == LB_CMP_NE) {
		bool outside = a > 0 || b < 0, point = a == 0 && b == 0;
		if (outside || point)
			return (op == LB_CMP_EQ) == point ? LB_HELD : LB_NOT_HELD;
		return LB_UNDECIDED;
	}
	bool first = op_holds(op, a), last = op_holds(op, b);
	return first && last ? LB_HELD : !first && !last ? LB_NOT_HELD : LB_UNDECIDED;
}

/* What the figure's absence holds: every such event's bound from above
 * (there was none at or above N) and !=; nothing from below, nor ==. */
static enum lb_held absent_holds(enum lb_cmp op)
{
	return op == LB_CMP_LT || op == LB_CMP_LE || op == LB_CMP_NE ? LB_HELD : LB_NOT_HELD;
}

/* @text, a value of the column, in @t's unit: false if it is not a number. */
static bool value_of(const struct lb_threshold *t, const char *text, struct dec *d)
{
	if (!dec_parse(text, d))
		return false;
	d->exp += t->shift;
	return true;
}

enum lb_held lb_threshold_judge(const struct lb_threshold *t, const char *value, char *line,
				size_t len)
{
	const char *unit = t->unit[0] ? " " : "";
	struct dec lo, hi, n;

	if (!value || !strcmp(value, "n/a")) {
		snprintf(line, len, "%s: n/a, not measured (what was not measured is neither "
			 "held nor broken)", t->text);
		return LB_UNDECIDED;
	}
	if (!strcmp(value, "none")) {
		const struct lb_figdef *f = lb_figdef_find(t->column);
		snprintf(line, len, "%s: none (%s)", t->text, f && f->absent ? f->absent :
			 "the event never happened");
		return absent_holds(t->op);
	}
	char a[64] = "", b[64] = "";
	bool lower = !strncmp(value, ">=", 2), range = value[0] == '[';
	size_t comma = strcspn(value, ",");
	if (range && value[comma] && value[strlen(value) - 1] == ']' && comma < sizeof(a) &&
	    strlen(value) - comma < sizeof(b)) {
		snprintf(a, sizeof(a), "%.*s", (int)comma - 1, value + 1);
		snprintf(b, sizeof(b), "%.*s", (int)(strlen(value) - comma - 2), value + comma + 1);
	} else if (!range) {
		snprintf(a, sizeof(a), "%s", value + (lower ? 2 : 0));
		snprintf(b, sizeof(b), "%s", lower ? "inf" : a);
	}
	dec_parse(t->bound_text, &n);
	if (!value_of(t, a, &lo) || !value_of(t, b, &hi) || dec_cmp(&lo, &hi) > 0) {
		snprintf(line, len, "%s: '%.40s' is not a number", t->text, value);
		return LB_NOT_HELD;
	}
	enum lb_held held = over(t->op, &lo, &hi, &n);
	char x[80], y[80];
	dec_text(&lo, x, sizeof(x));
	dec_text(&hi, y, sizeof(y));
	if (!dec_cmp(&lo, &hi))
		snprintf(line, len, "%s: %s%s%s", t->text, x, unit, t->unit);
	else if (hi.inf)
		snprintf(line, len, "%s: >= %s%s%s (a wait cut off by the run's end is at this rank: "
			 "the figure has no upper bound%s)", t->text, x, unit, t->unit,
			 held == LB_UNDECIDED ? "; --drain S lets such waits finish" : "");
	else
		snprintf(line, len, "%s: [%s, %s]%s%s (a wait cut off by the run's end lies somewhere "
			 "at or above its length%s)", t->text, x, y, unit, t->unit,
			 held == LB_UNDECIDED ? "; --drain S lets such waits finish" : "");
	return held;
}
