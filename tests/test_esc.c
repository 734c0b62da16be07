/*
 * test_esc.c - the escaping layer: hostile names through every output
 * language, and CSV fields read back as they were written.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "esc.h"
#include "util.h"

static const char *const hostile[] = {
	"plain", "a,b", "say \"hi\"", "it's", "x\"; system(\"touch PWNED\"); set title \"y",
	"q'; system('touch PWNED'); '", "line\nbreak", "cr\rlf", " lead", "trail ", "$(touch PWNED)",
	"`touch PWNED`", "<script>alert(1)</script>", "a|b", "caf\xc3\xa9 \xe2\x9c\x94", "\x1b[31mred",
	"tab\there", "", "\"", ",", "''", "\"\"",
};

/* Every hostile name written as a CSV field comes back as it was. */
Test(esc, csv_fields_round_trip)
{
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char line[512], back[256], tail[64];
		lb_esc_snprintf(line, sizeof(line), LB_LANG_CSV, "%s,%d,%s", hostile[i], 42, "end");
		size_t pos = 0;
		cr_assert_eq(lb_csv_field(line, &pos, back, sizeof(back)), 0, "[%s]", line);
		cr_assert_str_eq(back, hostile[i], "[%s]", line);
		cr_assert_eq(lb_csv_field(line, &pos, tail, sizeof(tail)), 0);
		cr_assert_str_eq(tail, "42");
		cr_assert_eq(lb_csv_field(line, &pos, tail, sizeof(tail)), 0);
		cr_assert_str_eq(tail, "end");
		cr_assert_eq(line[pos], '\0');
	}
}

Test(esc, csv_reader_refuses_malformed_fields)
{
	static const char *const bad[] = { "\"open", "\"closed\"x", "mid\"quote", "\"a\"\"" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char out[64];
		size_t pos = 0;
		cr_assert_eq(lb_csv_field(bad[i], &pos, out, sizeof(out)), -1, "accepted [%s]", bad[i]);
	}
}

/* A gnuplot string literal: single quotes (no command, no expansion inside),
 * a quote doubled, no line break that would end the command. */
Test(esc, gnuplot_literals_cannot_end_early)
{
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char out[512];
		lb_esc_snprintf(out, sizeof(out), LB_LANG_GNUPLOT, "set title %s\n", hostile[i]);
		const char *lit = out + strlen("set title ");
		cr_assert_eq(lit[0], '\'', "%s", out);
		/* walk the literal: it ends at the last quote before the newline */
		size_t j = 1;
		for (; lit[j] && lit[j] != '\n'; j++)
			if (lit[j] == '\'') {
				if (lit[j + 1] == '\'')
					j++;
				else
					break;
			}
		cr_assert_eq(lit[j], '\'', "unterminated: %s", out);
		cr_assert_str_eq(lit + j + 1, "\n", "text after the literal: %s", out);
		cr_assert(!strchr(lit, '\r') && strchr(lit, '\n') == lit + j + 1, "%s", out);
	}
}

Test(esc, html_and_markdown_and_terminal)
{
	char out[256];
	lb_esc_snprintf(out, sizeof(out), LB_LANG_HTML, "<td title=\"%s\">%s</td>", "a\"b", "<i>&'");
	cr_assert_str_eq(out, "<td title=\"a&quot;b\">&lt;i&gt;&amp;&#39;</td>");
	lb_esc_snprintf(out, sizeof(out), LB_LANG_MD, "| %s |", "a|b_c*\nd<br>");
	cr_assert_str_eq(out, "| a\\|b\\_c\\* d\\<br\\> |");
	lb_esc_snprintf(out, sizeof(out), LB_LANG_TERM, "%s", "\x1b[31mred\x07 caf\xc3\xa9 \xc2\x9b \xff");
	cr_assert_str_eq(out, "\\x1b[31mred\\x07 caf\xc3\xa9 \\xc2\\x9b \\xff");
}

/* The other conversions are printf's, flags, widths and modifiers included. */
Test(esc, other_conversions_are_printf)
{
	char out[256], want[256];
	long long big = -1234567890123LL;
	size_t z = 77;
	snprintf(want, sizeof(want), "%5d|%-4u|%08.3f|%lld|%zu|%x|%c|%%|%.2e|%*d|%-*s|", 42, 7u, 3.14159,
		 big, z, 255u, 'q', 1e-9, 6, -3, 5, "ab");
	lb_esc_snprintf(out, sizeof(out), LB_LANG_CSV, "%5d|%-4u|%08.3f|%lld|%zu|%x|%c|%%|%.2e|%*d|%-*s|",
			42, 7u, 3.14159, big, z, 255u, 'q', 1e-9, 6, -3, 5, "ab");
	cr_assert_str_eq(out, want);
	/* precision cuts the data, then it is escaped whole */
	lb_esc_snprintf(out, sizeof(out), LB_LANG_GNUPLOT, "%.3s", "it's");
	cr_assert_str_eq(out, "'it'''");
	/* snprintf's contract: the length it would have, the buffer cut */
	cr_assert_eq(lb_esc_snprintf(out, 4, LB_LANG_RAW, "%s", "abcdef"), 6);
	cr_assert_str_eq(out, "abc");
}

/* A name as a directory: plain names as they are; others can neither nest,
 * climb nor collide. */
Test(esc, path_words)
{
	char out[72], other[72];
	lb_path_word("redis-semaphore-redlock@5.8.0", out, sizeof(out));
	cr_assert_str_eq(out, "redis-semaphore-redlock@5.8.0");
	lb_path_word("clients=8", out, sizeof(out));
	cr_assert_str_eq(out, "clients=8");
	static const char *const odd[] = { "exec:/tmp/x/lock.sh", "..", ".hidden", "a b", "", "a\nb",
					   "x\"; system(\"touch PWNED\")" };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		lb_path_word(odd[i], out, sizeof(out));
		cr_assert(out[0] && out[0] != '.' && !strpbrk(out, "/ \n\";:"), "'%s' -> '%s'", odd[i], out);
	}
	lb_path_word("exec:/tmp/a/lock.sh", out, sizeof(out));
	lb_path_word("exec:/tmp/a_lock.sh", other, sizeof(other));
	cr_assert_str_neq(out, other, "two names share a directory");
	char longname[200];
	memset(longname, 'a', 150);
	longname[150] = '\0';
	lb_path_word(longname, out, sizeof(out));
	cr_assert_leq(strlen(out), 60);
}
