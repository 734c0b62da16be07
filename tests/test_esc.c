/*
 * test_esc.c - the escaping layer: hostile names through every output
 * language, and CSV fields read back as they were written.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "esc.h"
#include "util.h"

static const char *const hostile[] = {
	"plain", "a,b", "say \"hi\"", "it's", "x\"; system(\"touch PWNED\"); set title \"y",
	"q'; system('touch PWNED'); '", "line\nbreak", "cr\rlf", " lead", "trail ", "$(touch PWNED)",
	"`touch PWNED`", "<script>alert(1)</script>", "a|b", "caf\xc3\xa9 \xe2\x9c\x94", "\x1b[31mred",
	"tab\there", "", "\"", ",", "''", "\"\"",
};

/* Every hostile name written as a CSV field comes back as it was. */
FX_SUITE(esc, 60);

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
	cr_assert_str_eq(out, "'it\xe2\x80\x99'");
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

/* A shell word: bash reads each hostile name back as it was, one argument,
 * nothing run. */
Test(esc, shell_words_round_trip_through_bash)
{
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char word[600], cmd[700], back[300] = "";
		lb_esc_snprintf(word, sizeof(word), LB_LANG_SH, "%s", hostile[i]);
		cr_assert_null(strchr(word, '\n'), "a word is one line: [%s]", word);
		/* bash reads the word from a script: $'...' is bash's, not sh's */
		char script[] = "/tmp/lbtest-esc-XXXXXX";
		int fd = mkstemp(script);
		cr_assert_geq(fd, 0);
		FILE *sf = fdopen(fd, "w");
		fprintf(sf, "cd /tmp\nset -- %s\nprintf '%%s|%%s' \"$#\" \"$1\"\n", word);
		fclose(sf);
		snprintf(cmd, sizeof(cmd), "bash %s", script);
		FILE *p = popen(cmd, "r");
		cr_assert_not_null(p);
		size_t n = fread(back, 1, sizeof(back) - 1, p);
		back[n] = '\0';
		cr_assert_eq(pclose(p), 0, "[%s]", word);
		unlink(script);
		char want[300];
		snprintf(want, sizeof(want), "1|%s", hostile[i]);
		cr_assert_str_eq(back, want, "word [%s]", word);
	}
	cr_assert_neq(access("/tmp/PWNED", F_OK), 0, "a word ran a command");
	char plain[64];
	lb_esc_snprintf(plain, sizeof(plain), LB_LANG_SH, "%s", "exec:/tmp/my-lock.sh");
	cr_assert_str_eq(plain, "exec:/tmp/my-lock.sh", "a plain word stays as it is");
}

/* A command line made of words, cut with "..." when it does not fit. */
Test(esc, command_lines)
{
	char buf[64];
	char *argv[] = { "run", "--strategy", "exec:/tmp/a b", "--scenario", "it's" };
	lb_sh_cmdline(buf, sizeof(buf), "lockbench", 5, argv);
	cr_assert_str_eq(buf, "lockbench run --strategy 'exec:/tmp/a b' --scenario 'it'\\''s'");
	char small[24];
	lb_sh_cmdline(small, sizeof(small), "lockbench", 5, argv);
	cr_assert_eq(strlen(small), sizeof(small) - 1);
	cr_assert_str_eq(small + strlen(small) - 3, "...");
}

/* A Markdown code span no backtick in the text can end. */
Test(esc, markdown_code_spans)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "`plain`" }, { "a`b", "``a`b``" }, { "``x", "``` ``x ```" },
		{ "line\nbreak", "`line break`" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64] = "";
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		cr_assert_eq(lb_md_code(f, cases[i].in), 0);
		fclose(f);
		cr_assert_str_eq(buf, cases[i].out);
	}
}

/* A CSV record whose quoted field holds line breaks is one record. */
Test(esc, csv_records_span_quoted_line_breaks)
{
	char text[] = "h1,h2\n\"a\nb\",1\r\nplain,2\n\"never closed\n";
	FILE *f = fmemopen(text, strlen(text), "r");
	char *line = NULL, field[32];
	size_t cap = 0, pos = 0;
	cr_assert_eq(lb_csv_record(&line, &cap, f), 5);
	cr_assert_str_eq(line, "h1,h2");
	cr_assert_gt(lb_csv_record(&line, &cap, f), 0);
	cr_assert_eq(lb_csv_field(line, &pos, field, sizeof(field)), 0);
	cr_assert_str_eq(field, "a\nb");
	cr_assert_eq(lb_csv_field(line, &pos, field, sizeof(field)), 0);
	cr_assert_str_eq(field, "1");
	cr_assert_gt(lb_csv_record(&line, &cap, f), 0);
	cr_assert_str_eq(line, "plain,2");
	cr_assert_gt(lb_csv_record(&line, &cap, f), 0);
	pos = 0;
	cr_assert_eq(lb_csv_field(line, &pos, field, sizeof(field)), -1, "an open quote is malformed");
	cr_assert_eq(lb_csv_record(&line, &cap, f), -1);
	free(line);
	fclose(f);
}

/* gnuplot itself reads every hostile name as one string: a title and a tic
 * label, each on a line of its own after which a plot still runs. */
Test(esc, gnuplot_parses_every_literal)
{
	char script[] = "/tmp/lbtest-gp-XXXXXX";
	int fd = mkstemp(script);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "set term dumb\nset output '/dev/null'\n");
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		lb_esc_fprintf(f, LB_LANG_GNUPLOT, "set title %s\nset xtics (%s 1)\nplot x\n", hostile[i],
			       hostile[i]);
	lb_esc_fprintf(f, LB_LANG_GNUPLOT, "set title %s\nplot x\n", "y''x '''' z");
	fclose(f);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "cd /tmp && gnuplot %s 2>&1", script);
	FILE *p = popen(cmd, "r");
	char out[4096] = "";
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int rc = pclose(p);
	unlink(script);
	cr_assert_eq(rc, 0, "gnuplot refused a literal: %s", out);
	cr_assert_eq(n, 0, "gnuplot said: %s", out);
	cr_assert_neq(access("/tmp/PWNED", F_OK), 0, "a literal ran a command");
}

/* A JSON string is valid JSON whatever the bytes, and reads back as they
 * were (Python's json module, a reader the writer does not share); invalid
 * UTF-8 reads back as U+FFFD, and no text can close a script element. */
Test(esc, json_strings_read_back_through_python)
{
	static const char *const broken[] = { "cut \xe2\x9c", "stray \x80 byte", "\xff\xfe", "\xf8\x80\x80",
					      "surrogate \xed\xa0\x80" };
	size_t nh = sizeof(hostile) / sizeof(hostile[0]), nb = sizeof(broken) / sizeof(broken[0]);
	char path[] = "/tmp/lbtest-esc-json-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputc('[', f);
	for (size_t i = 0; i < nh + nb; i++) {
		const char *s = i < nh ? hostile[i] : broken[i - nh];
		char one[600];
		lb_esc_snprintf(one, sizeof(one), LB_LANG_JSON, "%s", s);
		cr_assert_null(strpbrk(one, "<>\n"), "[%s]", one);
		fprintf(f, "%s%s", i ? "," : "", one);
	}
	fputs("]\n", f);
	fclose(f);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys\n"
		 "for s in json.load(open(sys.argv[1], encoding=\"utf-8\")): print(s.encode().hex())' %s",
		 path);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char line[1300];
	for (size_t i = 0; i < nh + nb; i++) {
		cr_assert_not_null(fgets(line, sizeof(line), p), "entry %zu not read back", i);
		line[strcspn(line, "\n")] = '\0';
		if (i < nh) {
			char want[1300] = "";
			for (const unsigned char *q = (const unsigned char *)hostile[i]; *q; q++)
				sprintf(want + strlen(want), "%02x", *q);
			cr_assert_str_eq(line, want, "[%s] read back otherwise", hostile[i]);
		} else {
			cr_assert_not_null(strstr(line, "efbfbd"), "[%s]: no U+FFFD in %s", broken[i - nh],
					   line);
		}
	}
	cr_assert_eq(pclose(p), 0, "python3 could not read the JSON");
	unlink(path);
}

/* XML text and attribute values: every hostile name, and bytes no XML
 * document may hold, parse (Python's xml module, a strict parser) and read
 * back: as they were, or with U+FFFD where XML allows nothing. */
Test(esc, xml_text_and_attributes_parse_through_python)
{
	static const char *const broken[] = { "bell \x07 byte", "stray \x80", "nul-less \x1b[31m",
					      "\xef\xbf\xbf nonchar" };
	size_t nh = sizeof(hostile) / sizeof(hostile[0]), nb = sizeof(broken) / sizeof(broken[0]);
	char path[] = "/tmp/lbtest-esc-xml-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<r>", f);
	for (size_t i = 0; i < nh + nb; i++) {
		const char *s = i < nh ? hostile[i] : broken[i - nh];
		lb_esc_fprintf(f, LB_LANG_XML, "<c a=\"%s\">%s</c>", s, s);
	}
	fputs("</r>\n", f);
	fclose(f);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.etree.ElementTree as E\n"
		 "for c in E.parse(sys.argv[1]).getroot(): print(c.get(\"a\").encode().hex(), "
		 "(c.text or \"\").encode().hex())' %s", path);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char line[2600];
	for (size_t i = 0; i < nh + nb; i++) {
		cr_assert_not_null(fgets(line, sizeof(line), p), "entry %zu not read back", i);
		line[strcspn(line, "\n")] = '\0';
		char *text = strchr(line, ' ');
		cr_assert_not_null(text);
		*text++ = '\0';
		if (i < nh) {
			char want[1300] = "";
			for (const unsigned char *q = (const unsigned char *)hostile[i]; *q; q++)
				if (*q < 0x20 && *q != '\t' && *q != '\n' && *q != '\r')
					strcat(want, "efbfbd"); /* no XML holds it */
				else
					sprintf(want + strlen(want), "%02x", *q == '\r' ? ' ' : *q);
			cr_assert_str_eq(text, want, "[%s] read back otherwise", hostile[i]);
		} else {
			cr_assert_not_null(strstr(text, "efbfbd"), "[%s]: no U+FFFD in %s",
					   broken[i - nh], text);
		}
	}
	cr_assert_eq(pclose(p), 0, "python3 could not parse the XML");
	unlink(path);
}
