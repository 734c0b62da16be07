/*
 * esc.c - printf with %s escaped for an output language (esc.h).
 */
#include "esc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Where the formatter writes: a stream, or a buffer that counts what did
 * not fit (snprintf's contract). */
struct sink {
	FILE *f;
	char *buf;
	size_t len, used;
	size_t total;
	bool failed;
};

static void put(struct sink *k, const char *s, size_t n)
{
	k->total += n;
	if (k->f) {
		if (n && fwrite(s, 1, n, k->f) != n)
			k->failed = true;
		return;
	}
	if (k->used + 1 < k->len) {
		size_t room = k->len - 1 - k->used;
		memcpy(k->buf + k->used, s, n < room ? n : room);
		k->used += n < room ? n : room;
	}
}

/* Each language's escaping of [p, end) into o (room for 6 bytes a byte and
 * 3 more); where the output ends. */

static char *esc_csv(char *o, const unsigned char *p, const unsigned char *end)
{
	size_t n = (size_t)(end - p);
	bool quote = n && (p[0] == ' ' || p[n - 1] == ' ');

	for (size_t i = 0; i < n && !quote; i++)
		quote = strchr(",\"\r\n", p[i]) != NULL;
	if (quote)
		*o++ = '"';
	for (; p < end; p++) {
		if (*p == '"')
			*o++ = '"';
		*o++ = (char)*p;
	}
	if (quote)
		*o++ = '"';
	return o;
}

/* A ' inside becomes ’ (U+2019): gnuplot's '' for one quote fails when two
 * of them follow each other (5.4: 'y''''x' is "unexpected or unrecognized
 * token"), and a label needs no exact quote. */
static char *esc_gnuplot(char *o, const unsigned char *p, const unsigned char *end)
{
	*o++ = '\'';
	for (; p < end; p++) {
		if (*p == '\'') {
			memcpy(o, "\xe2\x80\x99", 3);
			o += 3;
			continue;
		}
		*o++ = *p < 0x20 || *p == 0x7f ? ' ' : (char)*p;
	}
	*o++ = '\'';
	return o;
}

static char *esc_html(char *o, const unsigned char *p, const unsigned char *end)
{
	for (; p < end; p++) {
		const char *ent = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" :
				  *p == '"' ? "&quot;" : *p == '\'' ? "&#39;" : NULL;
		if (ent) {
			memcpy(o, ent, strlen(ent));
			o += strlen(ent);
		} else {
			*o++ = *p < 0x20 && *p != '\n' && *p != '\t' ? ' ' : (char)*p;
		}
	}
	return o;
}

static char *esc_md(char *o, const unsigned char *p, const unsigned char *end)
{
	for (; p < end; p++) {
		if (*p == '&') {
			memcpy(o, "&amp;", 5);
			o += 5;
			continue;
		}
		if (strchr("\\`*_[]<>|#", *p) && *p)
			*o++ = '\\';
		*o++ = *p < 0x20 || *p == 0x7f ? ' ' : (char)*p;
	}
	return o;
}

/* The length of the whole UTF-8 sequence at @p, its code point in *@cp; 0
 * when it is not one (a stray byte, a cut sequence, an overlong form, a
 * surrogate). */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
	size_t len = *p < 0x80 ? 1 : *p >= 0xf0 && *p < 0xf5 ? 4 : *p >= 0xe0 && *p < 0xf0 ? 3 :
		     *p >= 0xc2 && *p < 0xe0 ? 2 : 0;
	uint32_t c = len == 1 ? *p : len == 2 ? *p & 0x1f : len == 3 ? *p & 0x0f : *p & 0x07;

	if (!len || (size_t)(end - p) < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c < 0xe000))
		return 0;
	*cp = c;
	return len;
}

/* How many bytes the terminal may show as they are at @p (a whole UTF-8
 * sequence of a printable code point), or 0. */
static size_t term_printable(const unsigned char *p, const unsigned char *end)
{
	uint32_t cp = 0;
	size_t len = utf8_seq(p, end, &cp);

	if (!len || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
		return 0; /* C0 and C1 controls */
	if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
	    cp == 0x200f || cp == 0x061c)
		return 0; /* bidirectional controls: they reorder what follows */
	return len;
}

static char *esc_term(char *o, const unsigned char *p, const unsigned char *end)
{
	while (p < end) {
		size_t len = term_printable(p, end);
		if (len) {
			memcpy(o, p, len);
			o += len;
			p += len;
		} else {
			o += sprintf(o, "\\x%02x", *p);
			p++;
		}
	}
	return o;
}

/* A word of only these needs no quotes; otherwise '...' with a ' as '\''
 * or, when it holds a control byte, bash's $'...' with every byte outside
 * printable ASCII as \xNN. */
static char *esc_sh(char *o, const unsigned char *p, const unsigned char *end)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-./=:,@%+";
	size_t n = (size_t)(end - p);
	bool ctl = false, bare = n > 0;

	for (size_t i = 0; i < n; i++) {
		ctl |= p[i] < 0x20 || p[i] == 0x7f;
		bare &= p[i] && strchr(plain, p[i]) != NULL;
	}
	if (bare) {
		memcpy(o, p, n);
		return o + n;
	}
	if (ctl)
		*o++ = '$';
	*o++ = '\'';
	for (; p < end; p++) {
		if (!ctl && *p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else if (ctl && (*p == '\'' || *p == '\\')) {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (ctl && (*p < 0x20 || *p >= 0x7f)) {
			o += sprintf(o, "\\x%02x", *p);
		} else {
			*o++ = (char)*p;
		}
	}
	*o++ = '\'';
	return o;
}

/* A JSON string: at most 6 bytes a byte (\u00XX, \ufffd), and the quotes. */
static char *esc_json(char *o, const unsigned char *p, const unsigned char *end)
{
	*o++ = '"';
	while (p < end) {
		uint32_t cp = 0;
		size_t len = utf8_seq(p, end, &cp);
		if (!len) {
			o += sprintf(o, "\\ufffd");
			p++;
		} else if (len > 1) {
			memcpy(o, p, len);
			o += len;
			p += len;
		} else if (*p == '"' || *p == '\\') {
			*o++ = '\\';
			*o++ = (char)*p++;
		} else if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '&') {
			o += sprintf(o, "\\u%04x", *p++);
		} else {
			*o++ = (char)*p++;
		}
	}
	*o++ = '"';
	return o;
}

/* XML 1.0: the HTML entities; U+FFFD for what no XML document may hold. */
static char *esc_xml(char *o, const unsigned char *p, const unsigned char *end)
{
	static const char bad[] = "\xef\xbf\xbd"; /* U+FFFD */

	while (p < end) {
		uint32_t cp = 0;
		size_t len = utf8_seq(p, end, &cp);
		if (!len || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe ||
		    cp == 0xffff) {
			memcpy(o, bad, 3);
			o += 3;
			p += len ? len : 1;
		} else if (len == 1) {
			o = esc_html(o, p, p + 1);
			p++;
		} else {
			memcpy(o, p, len);
			o += len;
			p += len;
		}
	}
	return o;
}

/* Escaped text of @s[0..n) for @lang into a new string (freed by the caller). */
static char *escape(enum lb_lang lang, const char *s, size_t n)
{
	char *out = malloc(6 * n + 3), *o = out;
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	if (!out)
		return NULL;
	switch (lang) {
	case LB_LANG_CSV: o = esc_csv(o, p, end); break;
	case LB_LANG_GNUPLOT: o = esc_gnuplot(o, p, end); break;
	case LB_LANG_HTML: o = esc_html(o, p, end); break;
	case LB_LANG_MD: o = esc_md(o, p, end); break;
	case LB_LANG_TERM: o = esc_term(o, p, end); break;
	case LB_LANG_SH: o = esc_sh(o, p, end); break;
	case LB_LANG_JSON: o = esc_json(o, p, end); break;
	case LB_LANG_XML: o = esc_xml(o, p, end); break;
	case LB_LANG_RAW:
		memcpy(o, s, n);
		o += n;
		break;
	}
	*o = '\0';
	return out;
}

/* One conversion other than %s, by the host's printf, into @k. */
static void put_printf(struct sink *k, const char *spec, ...) __attribute__((format(printf, 2, 3)));
static void put_printf(struct sink *k, const char *spec, ...)
{
	char small[128];
	va_list ap, aq;

	va_start(ap, spec);
	va_copy(aq, ap);
	int n = vsnprintf(small, sizeof(small), spec, ap);
	va_end(ap);
	if (n < 0) {
		k->failed = true;
	} else if ((size_t)n < sizeof(small)) {
		put(k, small, (size_t)n);
	} else {
		char *big = malloc((size_t)n + 1);
		if (big && vsnprintf(big, (size_t)n + 1, spec, aq) == n)
			put(k, big, (size_t)n);
		else
			k->failed = true;
		free(big);
	}
	va_end(aq);
}

static void format(struct sink *k, enum lb_lang lang, const char *fmt, va_list ap)
{
	while (*fmt) {
		const char *pct = strchr(fmt, '%');
		if (!pct) {
			put(k, fmt, strlen(fmt));
			return;
		}
		put(k, fmt, (size_t)(pct - fmt));
		const char *p = pct + 1;
		char spec[64];
		size_t sl = 0;
		spec[sl++] = '%';
		bool left = false;
		while (*p && strchr("-+ #0'", *p)) {
			left |= *p == '-';
			if (sl < 20)
				spec[sl++] = *p;
			p++;
		}
		int width = -1, prec = -1;
		if (*p == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				left = true;
				width = -width;
			}
			p++;
		} else {
			for (width = 0; *p >= '0' && *p <= '9'; p++)
				width = width * 10 + (*p - '0');
			width = width ? width : -1;
		}
		if (*p == '.') {
			p++;
			if (*p == '*') {
				prec = va_arg(ap, int);
				p++;
			} else {
				for (prec = 0; *p >= '0' && *p <= '9'; p++)
					prec = prec * 10 + (*p - '0');
			}
		}
		char mod[3] = "";
		if ((p[0] == 'h' && p[1] == 'h') || (p[0] == 'l' && p[1] == 'l')) {
			mod[0] = p[0], mod[1] = p[1];
			p += 2;
		} else if (*p && strchr("hlLzjt", *p)) {
			mod[0] = *p++;
		}
		char conv = *p ? *p++ : '\0';
		if (width >= 0)
			sl += (size_t)snprintf(spec + sl, sizeof(spec) - sl, "%d", width);
		if (prec >= 0)
			sl += (size_t)snprintf(spec + sl, sizeof(spec) - sl, ".%d", prec);
		sl += (size_t)snprintf(spec + sl, sizeof(spec) - sl, "%s%c", mod, conv);
		spec[sl < sizeof(spec) ? sl : sizeof(spec) - 1] = '\0';
		switch (conv) {
		case '%':
			put(k, "%", 1);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			size_t n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
			char *e = escape(lang, s, n);
			if (!e) {
				k->failed = true;
				break;
			}
			size_t el = strlen(e), pad = width > 0 && (size_t)width > el ? (size_t)width - el : 0;
			for (size_t i = 0; !left && i < pad; i++)
				put(k, " ", 1);
			put(k, e, el);
			for (size_t i = 0; left && i < pad; i++)
				put(k, " ", 1);
			free(e);
			break;
		}
		case 'd': case 'i':
			if (!strcmp(mod, "ll")) put_printf(k, spec, va_arg(ap, long long));
			else if (!strcmp(mod, "l")) put_printf(k, spec, va_arg(ap, long));
			else if (!strcmp(mod, "z")) put_printf(k, spec, va_arg(ap, ssize_t));
			else if (!strcmp(mod, "j")) put_printf(k, spec, va_arg(ap, intmax_t));
			else if (!strcmp(mod, "t")) put_printf(k, spec, va_arg(ap, ptrdiff_t));
			else put_printf(k, spec, va_arg(ap, int));
			break;
		case 'u': case 'o': case 'x': case 'X':
			if (!strcmp(mod, "ll")) put_printf(k, spec, va_arg(ap, unsigned long long));
			else if (!strcmp(mod, "l")) put_printf(k, spec, va_arg(ap, unsigned long));
			else if (!strcmp(mod, "z")) put_printf(k, spec, va_arg(ap, size_t));
			else if (!strcmp(mod, "j")) put_printf(k, spec, va_arg(ap, uintmax_t));
			else if (!strcmp(mod, "t")) put_printf(k, spec, va_arg(ap, ptrdiff_t));
			else put_printf(k, spec, va_arg(ap, unsigned int));
			break;
		case 'c':
			put_printf(k, spec, va_arg(ap, int));
			break;
		case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
			if (!strcmp(mod, "L"))
				put_printf(k, spec, va_arg(ap, long double));
			else
				put_printf(k, spec, va_arg(ap, double));
			break;
		case 'p':
			put_printf(k, spec, va_arg(ap, void *));
			break;
		default: /* %n, or a format cut short: written as it stands */
			put(k, pct, (size_t)(p - pct));
			k->failed = true;
			break;
		}
		fmt = p;
	}
}

int lb_esc_vfprintf(FILE *f, enum lb_lang lang, const char *fmt, va_list ap)
{
	struct sink k = { .f = f };
	format(&k, lang, fmt, ap);
	return k.failed || ferror(f) ? -1 : (int)k.total;
}

int lb_esc_fprintf(FILE *f, enum lb_lang lang, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = lb_esc_vfprintf(f, lang, fmt, ap);
	va_end(ap);
	return n;
}

int lb_esc_vsnprintf(char *buf, size_t len, enum lb_lang lang, const char *fmt, va_list ap)
{
	struct sink k = { .buf = buf, .len = len };

	format(&k, lang, fmt, ap);
	if (len)
		buf[k.used] = '\0';
	return k.failed ? -1 : (int)k.total;
}

int lb_esc_snprintf(char *buf, size_t len, enum lb_lang lang, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = lb_esc_vsnprintf(buf, len, lang, fmt, ap);
	va_end(ap);
	return n;
}

int lb_csv_field(const char *in, size_t *pos, char *out, size_t len)
{
	const char *p = in + *pos;
	size_t o = 0;

	if (*p != '"') {
		size_t n = strcspn(p, ",\r\n");
		if (memchr(p, '"', n))
			return -1; /* a quote in a field that is not quoted */
		for (size_t i = 0; i < n; i++)
			if (o + 1 < len)
				out[o++] = p[i];
		p += n;
	} else {
		for (p++;; p++) {
			if (!*p)
				return -1; /* not closed */
			if (*p == '"') {
				if (p[1] != '"')
					break;
				p++;
			}
			if (o + 1 < len)
				out[o++] = *p;
		}
		p++;
		if (*p && *p != ',' && *p != '\r' && *p != '\n')
			return -1;
	}
	if (len)
		out[o] = '\0';
	if (*p == ',')
		p++;
	*pos = (size_t)(p - in);
	return 0;
}

void lb_sh_cmdline(char *buf, size_t len, const char *first, int argc, char *const argv[])
{
	size_t used = (size_t)snprintf(buf, len, "%s", first);

	for (int i = 0; i < argc && used < len; i++)
		used += (size_t)lb_esc_snprintf(buf + used, len - used, LB_LANG_SH, " %s", argv[i]);
	if (used >= len && len > 4)
		memcpy(buf + len - 4, "...", 4); /* cut: said, not a different command */
}

int lb_md_code(FILE *f, const char *s)
{
	size_t run = 0, longest = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	char fence[16];
	size_t k = longest + 1 < sizeof(fence) ? longest + 1 : sizeof(fence) - 1;
	memset(fence, '`', k);
	fence[k] = '\0';
	bool pad = s[0] == '`' || (s[0] && s[strlen(s) - 1] == '`');
	if (fprintf(f, "%s%s", fence, pad ? " " : "") < 0)
		return -1;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (fputc(*p < 0x20 || *p == 0x7f ? ' ' : *p, f) == EOF)
			return -1;
	return fprintf(f, "%s%s", pad ? " " : "", fence) < 0 ? -1 : 0;
}

ssize_t lb_csv_record(char **buf, size_t *cap, FILE *f)
{
	char *more = NULL;
	size_t more_cap = 0;
	ssize_t n = getline(buf, cap, f);

	if (n <= 0)
		return n;
	for (;;) {
		bool open = false; /* inside a quoted field: the line break is data */
		for (const char *p = *buf; *p; p++)
			open ^= *p == '"';
		if (!open)
			break;
		ssize_t m = getline(&more, &more_cap, f);
		if (m <= 0)
			break; /* a quote never closed: lb_csv_field says malformed */
		if ((size_t)n + (size_t)m + 1 > *cap) {
			char *grown = realloc(*buf, (size_t)n + (size_t)m + 1);
			if (!grown) {
				free(more);
				return -1;
			}
			*buf = grown;
			*cap = (size_t)n + (size_t)m + 1;
		}
		memcpy(*buf + n, more, (size_t)m + 1);
		n += m;
	}
	free(more);
	while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
		(*buf)[--n] = '\0';
	return n;
}

ssize_t lb_csv_record_at(char **buf, size_t *cap, FILE *f, int *line)
{
	ssize_t n = lb_csv_record(buf, cap, f);

	if (n >= 0) {
		for (const char *c = *buf; *c; c++)
			*line += *c == '\n';
		(*line)++;
	}
	return n;
}
