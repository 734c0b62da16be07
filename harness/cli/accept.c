/*
 * accept.c - the failures an audit accepts, from --accept and from a file
 * (accept.h).
 */
#include "accept.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "strategy.h"
#include "util.h"

#define LINE_MAX_BYTES 1024
#define FILE_MAX_BYTES (64 * 1024)

/* Is @s a scenario's name as scenarios/ spell them (letters, digits, - and
 * _, at most 63 bytes)? */
static bool scenario_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			return false;
	return true;
}

/* The claim @s names, a letter of MDFOL or its name: its index, or -1. */
static int claim_of(const char *s)
{
	static const char letters[] = "MDFOL";

	if (strlen(s) == 1 && strchr(letters, s[0]))
		return (int)(strchr(letters, s[0]) - letters);
	for (unsigned c = 0; c < LB_CLAIM_COUNT; c++)
		if (!strcmp(s, lb_claim_name(c)))
			return (int)c;
	return -1;
}

/* CLAIM:SCENARIO (@key) into @l, with @reason and @where; 0, or LB_EINVAL
 * with what was expected in @why. */
static int add(struct lb_accept_list *l, const char *key, const char *reason, const char *where,
	       char *why, size_t len)
{
	char claim[64];
	const char *colon = strchr(key, ':');

	if (!colon || (size_t)(colon - key) >= sizeof(claim)) {
		snprintf(why, len, "expected CLAIM:SCENARIO (e.g. M:holder-pause), "
				"got '%.80s'", key);
		return LB_EINVAL;
	}
	memcpy(claim, key, (size_t)(colon - key));
	claim[colon - key] = '\0';
	int c = claim_of(claim);
	if (c < 0) {
		snprintf(why, len, "expected a claim, a letter of MDFOL or mutex, "
				"deadlock-free, fault-tolerant, owner-release, no-lapse, got '%.40s'",
				claim);
		return LB_EINVAL;
	}
	if (!scenario_name(colon + 1)) {
		snprintf(why, len, "expected a scenario's name after '%s:' "
				"(letters, digits, - and _), got '%.80s'", claim, colon + 1);
		return LB_EINVAL;
	}
	for (int i = 0; i < l->n; i++)
		if (l->a[i].claim == (unsigned)c && !strcmp(l->a[i].scenario, colon + 1)) {
			snprintf(why, len, "%c:%s is accepted twice (first at %s)",
					"MDFOL"[c], colon + 1, l->a[i].where);
			return LB_EINVAL;
		}
	if (l->n == LB_ACCEPT_MAX) {
		snprintf(why, len, "at most %d accepted failures", LB_ACCEPT_MAX);
		return LB_EINVAL;
	}
	struct lb_accept *a = &l->a[l->n++];
	a->claim = (unsigned)c;
	snprintf(a->scenario, sizeof(a->scenario), "%s", colon + 1);
	snprintf(a->reason, sizeof(a->reason), "%s", reason);
	snprintf(a->where, sizeof(a->where), "%s", where);
	return 0;
}

int lb_accept_arg(struct lb_accept_list *l, const char *arg)
{
	char copy[1024], why[400];

	if (strlen(arg) >= sizeof(copy)) {
		lb_errorf("--accept: at most %zu bytes", sizeof(copy) - 1);
		return LB_EINVAL;
	}
	snprintf(copy, sizeof(copy), "%s", arg);
	char *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (add(l, t, "", "--accept", why, sizeof(why)) < 0) {
			lb_errorf("--accept '%s': %s", arg, why);
			return LB_EINVAL;
		}
	if (!strchr(arg, ':')) {
		lb_errorf("--accept '%s': expected CLAIM:SCENARIO[,...] (e.g. M:holder-pause)", arg);
		return LB_EINVAL;
	}
	return 0;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	for (size_t n = strlen(s); n > 0 && strchr(" \t\r", s[n - 1]); n--)
		s[n - 1] = '\0';
	return s;
}

/* One line of the file (number @no, without its newline); *@section: seen
 * [accept]. 0, or LB_EINVAL with what was expected in @why. */
static int line_of(struct lb_accept_list *l, const char *path, int no, char *s, bool *section,
		   char *why, size_t len)
{
	char where[300];

	s = trim(s);
	if (!*s || *s == ';' || *s == '#')
		return 0;
	if (*s == '[') {
		if (strcmp(s, "[accept]")) {
			snprintf(why, len, "expected the section [accept], got "
					"'%.60s'", s);
			return LB_EINVAL;
		}
		if (*section) {
			snprintf(why, len, "section [accept] again: each section once");
			return LB_EINVAL;
		}
		*section = true;
		return 0;
	}
	char *eq = strchr(s, '=');
	if (!*section) {
		snprintf(why, len, "a key before the section: expected [accept] first");
		return LB_EINVAL;
	}
	if (!eq) {
		snprintf(why, len, "expected CLAIM:SCENARIO = REASON, got "
				"'%.80s'", s);
		return LB_EINVAL;
	}
	*eq = '\0';
	char *key = trim(s), *reason = trim(eq + 1);
	size_t kn = strlen(key);
	if (kn >= 2 && key[0] == '"' && key[kn - 1] == '"') { /* "M:holder-pause", as INI keys */
		key[kn - 1] = '\0';
		key++;
	}
	if (!*reason) {
		snprintf(why, len, "field %.80s: expected the reason it is "
				"accepted after '=', got nothing", key);
		return LB_EINVAL;
	}
	if (strlen(reason) >= sizeof(l->a[0].reason)) {
		snprintf(why, len, "field %.80s: a reason of at most %zu bytes",
				key, sizeof(l->a[0].reason) - 1);
		return LB_EINVAL;
	}
	snprintf(where, sizeof(where), "%.280s:%d", path, no);
	char inner[400];
	if (add(l, key, reason, where, inner, sizeof(inner)) < 0) {
		snprintf(why, len, "field %.80s: %s", key, inner);
		return LB_EINVAL;
	}
	return 0;
}

int lb_accept_file(struct lb_accept_list *l, const char *path)
{
	const char *kind;
	char buf[LINE_MAX_BYTES + 2], why[600], kw[96];
	int rc = 0, no = 0;
	size_t total = 0;
	bool section = false;
	FILE *f = lb_open_regular(path, &rc, &kind);

	if (!f) {
		lb_errorf("--accept-file: cannot read %s: %s", path, lb_open_why(kind, kw, sizeof(kw)));
		return rc;
	}
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		size_t n = strlen(buf);
		no++;
		total += n;
		if (total > FILE_MAX_BYTES) {
			snprintf(why, sizeof(why), "larger than %d bytes", FILE_MAX_BYTES);
			rc = LB_EINVAL;
		} else if (n > LINE_MAX_BYTES && buf[n - 1] != '\n') {
			snprintf(why, sizeof(why), "a line longer than %d bytes", LINE_MAX_BYTES);
			rc = LB_EINVAL;
		} else {
			buf[strcspn(buf, "\n")] = '\0';
			bool bom = no == 1 && !strncmp(buf, "\xef\xbb\xbf", 3); /* a UTF-8 BOM */
			rc = line_of(l, path, no, buf + (bom ? 3 : 0), &section, why, sizeof(why));
		}
	}
	if (rc == 0 && ferror(f)) {
		lb_errorf("--accept-file: cannot read %s: %s", path, strerror(errno));
		fclose(f);
		return LB_ESYS;
	}
	fclose(f);
	if (rc == 0 && !section) {
		no = no ? 1 : 0;
		snprintf(why, sizeof(why), "no [accept] section: expected [accept], then "
			 "CLAIM:SCENARIO = REASON a line");
		rc = LB_EINVAL;
	}
	if (rc < 0)
		lb_errorf("%s:%d: %s", path, no, why);
	return rc;
}
