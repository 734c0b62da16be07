/*
 * esc.h - the one escaping layer: every output language lockbench writes
 * has a printf whose %s arguments are data, escaped for that language by the
 * formatter itself, so that no call site can forget (SQLite's printf does
 * the same with %q and %Q). The format string is the only code: a name,
 * a path or an adapter's words reach a gnuplot script, a CSV file, a page or
 * the terminal as data, whatever bytes they hold.
 *
 * Every conversion of printf is supported with its flags, width, precision
 * and length modifiers; only %s changes:
 *   LB_LANG_CSV      a whole field per RFC 4180: quoted ("...", a " doubled)
 *                    when it holds a comma, a quote, CR or LF or starts or
 *                    ends with a space; as it is otherwise
 *   LB_LANG_GNUPLOT  a whole single-quoted string literal ('...'; gnuplot runs
 *                    no command and expands nothing inside single quotes); a '
 *                    inside is written ’ (gnuplot 5.4 misreads two doubled
 *                    quotes in a row), control bytes become spaces
 *   LB_LANG_HTML     text or a quoted attribute value: & < > " ' as entities
 *   LB_LANG_MD       Markdown text, a table cell included: \ ` * _ [ ] < > | #
 *                    and & escaped, line breaks as spaces
 *   LB_LANG_TERM     the terminal: control bytes (ESC included), C1 controls,
 *                    invalid UTF-8 and bidirectional controls (U+202E...) as \xNN
 *   LB_LANG_SH       one shell word, for a command line a user may paste: as
 *                    it is when made of letters, digits and _-./=:,@%+ only;
 *                    else '...' (a ' as '\''), or bash's $'...' with \xNN
 *                    when it holds a control byte (a newline stays one line)
 *   LB_LANG_JSON     a whole JSON string ("..." included, RFC 8259): " and \
 *                    escaped, control bytes and < > & as \u00XX (so that no
 *                    text can close a page's script element), each byte of
 *                    invalid UTF-8 as \ufffd: the output is always valid JSON
 *   LB_LANG_XML      XML 1.0 text or a quoted attribute value: as HTML, and
 *                    what XML does not allow even as an entity (control
 *                    bytes but tab and line breaks, invalid UTF-8, U+FFFE,
 *                    U+FFFF) as U+FFFD, so that a strict parser reads it
 *   LB_LANG_RAW      as printf (text lockbench made itself)
 * Precision (%.20s) cuts the data before escaping, never an escape in two.
 */
#ifndef LB_ESC_H
#define LB_ESC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum lb_lang { LB_LANG_RAW, LB_LANG_CSV, LB_LANG_GNUPLOT, LB_LANG_HTML, LB_LANG_MD, LB_LANG_TERM,
	       LB_LANG_SH, LB_LANG_JSON, LB_LANG_XML };

/* fprintf to @f with %s escaped for @lang; the count written, or -1. */
int lb_esc_fprintf(FILE *f, enum lb_lang lang, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int lb_esc_vfprintf(FILE *f, enum lb_lang lang, const char *fmt, va_list ap);
/* snprintf into @buf: the length it would have, as snprintf. */
int lb_esc_snprintf(char *buf, size_t len, enum lb_lang lang, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int lb_esc_vsnprintf(char *buf, size_t len, enum lb_lang lang, const char *fmt, va_list ap);

/* A command line a user may paste: @first, then each of @argv as one shell
 * word (LB_LANG_SH), into @buf; cut with "..." when it does not fit. */
void lb_sh_cmdline(char *buf, size_t len, const char *first, int argc, char *const argv[]);

/* @s as a Markdown code span (CommonMark): fenced by one backtick more than
 * its longest run of them, so no backtick in it ends the span; control
 * bytes as spaces. 0 | -1. */
int lb_md_code(FILE *f, const char *s);

/* One CSV record (RFC 4180) from @f into *@buf (getline's contract): a line,
 * and the lines after it while a quoted field is open (a line break inside
 * quotes is data), without the final line break. Its length, or -1 at the
 * end or on failure. */
ssize_t lb_csv_record(char **buf, size_t *cap, FILE *f);
/* lb_csv_record, counting lines: *@line is the line the record starts on,
 * moved past it (to the line the next one starts on), for messages that name
 * the line of a bad record. */
ssize_t lb_csv_record_at(char **buf, size_t *cap, FILE *f, int *line);

/* A CSV field as lb_esc_fprintf writes it, read back (RFC 4180): @in is one
 * line, @pos where the field starts; the field into @out (cut to fit @len,
 * never past the line), *pos after it and its comma. 0 | -1 malformed (a
 * quote not closed, or text after a closing quote). */
int lb_csv_field(const char *in, size_t *pos, char *out, size_t len);

#endif
