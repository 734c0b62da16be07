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
		t->scale = 1;
		t->divide = false;
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
			/* a power of ten, exact: multiply by it, or divide by its inverse */
			int e = units[i].exp - units[u].exp;
			t->scale = 1;
			for (int k = 0; k < (e < 0 ? -e : e); k++)
				t->scale *= 10;
			t->divide = e < 0;
			return true;
		}
	}
	return false;
}

/* The numeric columns nearest @name (sharing its first word), for a message. */
static void nearest(const char *name, char *buf, size_t len)
{
	size_t n, used = 0, word = strcspn(name, "_");
	const struct lb_figdef *t = lb_figdefs(&n);

	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 40 < len; i++)
		if (t[i].kind != LB_FD_TEXT && !strncmp(t[i].name, name, word) &&
		    (t[i].name[word] == '_' || t[i].name[word] == '\0'))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 t[i].name);
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
		nearest(name, near, sizeof(near));
		return refuse(why, why_len, "'%.60s': %s is not a figure of summary.csv%s%s%s",
				       text, name, near[0] ? " (near: " : " (docs/running.md lists "
				       "its columns", near, ")");
	}
	snprintf(t->text, sizeof(t->text), "%s %s %.15g", t->figure, cmp_text[op], v);
	return 0;
}

int lb_threshold_judge(const struct lb_threshold *t, const char *value, char *line, size_t len)
{
	char *end;

	if (!value || !strcmp(value, "n/a")) {
		snprintf(line, len, "%s: n/a, not measured (what was not measured cannot pass)",
			 t->text);
		return 0;
	}
	bool lower = !strncmp(value, ">=", 2); /* the true figure is this or more */
	errno = 0;
	double v = strtod(value + (lower ? 2 : 0), &end);
	if (end == value + (lower ? 2 : 0) || *end || errno || !isfinite(v)) {
		snprintf(line, len, "%s: '%.40s' is not a number", t->text, value);
		return 0;
	}
	v = t->divide ? v / t->scale : v * t->scale;
	bool held = t->op == LB_CMP_LT ? v < t->bound : t->op == LB_CMP_LE ? v <= t->bound :
		    t->op == LB_CMP_GT ? v > t->bound : t->op == LB_CMP_GE ? v >= t->bound :
		    t->op == LB_CMP_EQ ? v == t->bound : v != t->bound;
	/* a lower bound holds only what every larger value would hold: > and >= */
	if (lower && t->op != LB_CMP_GT && t->op != LB_CMP_GE)
		held = false;
	snprintf(line, len, "%s: %s%.15g%s%s%s", t->text, lower ? ">= " : "", v, t->unit[0] ? " " : "",
		 t->unit, lower && !held ? " (a lower bound: a wait that never entered is in it, so "
		 "the true figure may be larger)" : "");
	return held;
}
