/*
 * test_palette.c - the charts' colours (harness/core/palette.h) stay apart for
 * colour-blind viewers: every pair a viewer must tell apart, seen with
 * normal vision and through Machado et al.'s (2009) deuteranopia and
 * protanopia simulations, differs by at least a CIEDE2000 threshold; the
 * sources of the charts draw with those colours and no others; the
 * simulation and the difference are checked against published values.
 *
 * The thresholds. A ΔE00 of about 1 is a just-noticeable difference between
 * two large patches side by side (Sharma et al. 2005); marks on a chart,
 * smaller and apart, need several times that to be told apart at all
 * (Stone, Szafir and Setlur 2014, "An Engineering Model for Color
 * Difference as a Function of Size"; Szafir 2017, "Modeling Color
 * Difference for Visualization Design"), and a class on a projector reads
 * them washed out, from across a room. The classroom reported matrix.png's
 * orange and red (#ee7733, #cc3311) hard to tell apart: their ΔE00 is 18.3
 * to normal vision and 14.4 to a deuteranope. So:
 * - SHAPE (15): a pair that differs in shape or place too (a triangle on a
 *   bar, a thin bar under a thick one, a matrix cell whose class is written
 *   in it) must be above the deuteranope's reading of that pair;
 * - ALONE (20): a pair told apart by colour alone (the timeline's "inside"
 *   and "two or more inside" bars, client 0 and "inside", matrix.png's
 *   overlap and foreign-release) must be above what the classroom could not
 *   tell apart with normal vision.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "palette.h"

FX_SUITE(palette, 120);

#define SHAPE 15.0
#define ALONE 20.0

static const char *const vision[] = { "normal vision", "deuteranopia", "protanopia" };

struct pair {
	const char *what, *a, *b;
	double min;
};

static void apart(const struct pair *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int v = LB_VISION_NORMAL; v <= LB_VISION_PROTAN; v++) {
			double d = lb_colour_delta(p[i].a, p[i].b, (enum lb_vision)v);
			cr_expect_geq(d, p[i].min, "%s (%s, %s): ΔE00 %.1f with %s, under %.0f", p[i].what,
				      p[i].a, p[i].b, d, vision[v], p[i].min);
		}
}

/* Sharma, Wu and Dalal (2005), Table 1: pairs 1, 7, 13, 17, 25 and 34 */
Test(palette, ciede2000_gives_the_published_differences)
{
	static const double t[][7] = {
		{ 50.0000, 2.6772, -79.7751, 50.0000, 0.0000, -82.7485, 2.0425 },
		{ 50.0000, 0.0000, 0.0000, 50.0000, -1.0000, 2.0000, 2.3669 },
		{ 50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0011, 7.2195 },
		{ 50.0000, 2.5000, 0.0000, 73.0000, 25.0000, -18.0000, 27.1492 },
		{ 60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644 },
		{ 2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		double d = lb_ciede2000(t[i], t[i] + 3);
		cr_expect(d > t[i][6] - 0.0001 && d < t[i][6] + 0.0001, "pair %zu: %.4f, expected %.4f",
			  i, d, t[i][6]);
	}
}

/* sRGB to CIELAB and the simulation: white stays white for every viewer
 * (Machado's rows sum to 1), pure red is seen dark and yellowish by a
 * protanope, and what is no colour is refused. */
Test(palette, the_simulation_keeps_white_and_darkens_a_protanopes_red)
{
	double lab[3], red[3];
	for (int v = LB_VISION_NORMAL; v <= LB_VISION_PROTAN; v++) {
		cr_assert(lb_colour_lab("#ffffff", (enum lb_vision)v, lab));
		cr_expect(fabs(lab[0] - 100) < 0.05 && fabs(lab[1]) < 0.3 && fabs(lab[2]) < 0.3,
			  "white under %s: %.2f %.2f %.2f", vision[v], lab[0], lab[1], lab[2]);
	}
	cr_assert(lb_colour_lab("#ff0000", LB_VISION_NORMAL, red));
	cr_expect(fabs(red[0] - 53.24) < 0.05 && fabs(red[1] - 80.09) < 0.05, "%.2f %.2f", red[0],
		  red[1]);
	cr_assert(lb_colour_lab("#ff0000", LB_VISION_PROTAN, lab));
	cr_expect_lt(lab[0], red[0] - 10, "a protanope's red is darker: L %.1f", lab[0]);
	cr_expect_gt(lab[2], 20, "and yellowish: b %.1f", lab[2]);
	cr_expect_lt(lb_colour_delta("#ff0000", "#00ff00", LB_VISION_DEUTAN),
		     lb_colour_delta("#ff0000", "#00ff00", LB_VISION_NORMAL) - 20,
		     "red and green come together for a deuteranope");
	cr_expect_eq(lb_colour_delta("red", "#000000", LB_VISION_NORMAL), -1);
	cr_expect_eq(lb_colour_delta("#12345g", "#000000", LB_VISION_NORMAL), -1);
}

/* the timeline (timeline.png/svg, report.html): its bars and marks, and
 * the clients' colours (Redis holds, Redlock's nodes) against them */
Test(palette, the_timelines_colours_stay_apart_for_colour_blind_viewers)
{
	const struct pair p[] = {
		{ "inside vs two or more inside", LB_COL_INSIDE, LB_COL_OVERLAP, ALONE },
		{ "inside vs releasing (a thinner bar)", LB_COL_INSIDE, LB_COL_RELEASING, SHAPE },
		{ "two or more inside vs a foreign release's triangle on it", LB_COL_OVERLAP,
		  LB_COL_FOREIGN, SHAPE },
		{ "two or more inside vs the killed dot on it", LB_COL_OVERLAP, LB_COL_KILLED, SHAPE },
		{ "inside vs the killed dot on it", LB_COL_INSIDE, LB_COL_KILLED, SHAPE },
		{ "inside vs a foreign release's triangle", LB_COL_INSIDE, LB_COL_FOREIGN, SHAPE },
		{ "a foreign release vs killed", LB_COL_FOREIGN, LB_COL_KILLED, SHAPE },
		{ "client 0 vs inside", LB_COL_CLIENT0, LB_COL_INSIDE, ALONE },
	};
	apart(p, sizeof(p) / sizeof(p[0]));
	const char *meaning[][2] = { { "inside", LB_COL_INSIDE }, { "two or more inside", LB_COL_OVERLAP },
				     { "a foreign release", LB_COL_FOREIGN },
				     { "a value no client entered with", LB_COL_NO_OWNER } };
	for (int c = 0; c < LB_CLIENT_COLOURS; c++) {
		for (size_t m = 0; m < sizeof(meaning) / sizeof(meaning[0]); m++) {
			char what[80];
			snprintf(what, sizeof(what), "client %d vs %s", c, meaning[m][0]);
			/* the Redis lane writes its owner ("c1") on a span where it fits */
			apart(&(struct pair){ what, lb_client_colour(c), meaning[m][1], SHAPE }, 1);
		}
		/* the three clients of the lessons, side by side in the Redis lane */
		for (int o = 0; o < c && c < 3; o++) {
			char what[40];
			snprintf(what, sizeof(what), "client %d vs client %d", o, c);
			apart(&(struct pair){ what, lb_client_colour(o), lb_client_colour(c), SHAPE }, 1);
		}
	}
}

/* matrix.png: every observed class against every other */
Test(palette, the_matrix_classes_stay_apart_for_colour_blind_viewers)
{
	const char *cls[][2] = {
		{ "safe", LB_COL_SAFE }, { "overlap", LB_COL_M_OVERLAP },
		{ "foreign-release", LB_COL_M_FOREIGN }, { "deadlock", LB_COL_DEADLOCK },
		{ "unavailable", LB_COL_UNAVAILABLE }, { "contained", LB_COL_CONTAINED },
		{ "inconclusive", LB_COL_INCONCLUSIVE }, { "interrupted", LB_COL_INTERRUPTED },
	};
	for (size_t i = 0; i < 8; i++)
		for (size_t j = i + 1; j < 8; j++) {
			char what[80];
			snprintf(what, sizeof(what), "matrix %s vs %s", cls[i][0], cls[j][0]);
			apart(&(struct pair){ what, cls[i][1], cls[j][1],
					      i == 1 && j == 2 ? ALONE : SHAPE }, 1);
		}
}

/* Every "#rrggbb" in @text: in @allowed, or a grey (for lines, grids, text). */
static void only_palette(const char *file, const char *text, const char *const *allowed)
{
	for (const char *p = strchr(text, '#'); p; p = strchr(p + 1, '#')) {
		size_t n = strspn(p + 1, "0123456789abcdefABCDEF");
		if (n != 6 || isalnum((unsigned char)p[7]))
			continue;
		char hex[8];
		snprintf(hex, sizeof(hex), "%.7s", p);
		for (char *h = hex; *h; h++)
			*h = (char)tolower((unsigned char)*h);
		bool grey = !strncmp(hex + 1, hex + 3, 2) && !strncmp(hex + 3, hex + 5, 2);
		bool ok = grey;
		for (size_t i = 0; !ok && allowed[i]; i++)
			ok = !strcmp(allowed[i], hex);
		cr_expect(ok, "%s draws with %s, a colour palette.h does not hold (its pairs are "
			  "tested here: add it there)", file, hex);
	}
}

/* The charts' sources draw with palette.h's colours (tested above) and
 * greys: a colour put straight into a script would escape this test. */
Test(palette, the_charts_draw_only_with_the_palette)
{
	static const char *const timeline[] = {
		LB_COL_INSIDE, LB_COL_OVERLAP, LB_COL_RELEASING, LB_COL_FOREIGN, LB_COL_KILLED,
		/* the Sentinel strip (which server a client took for the primary), the
		 * step cursor of report.html */
		"#aa3377", "#009988", "#e0b000", NULL
	};
	static const char *const none[] = { NULL };
	only_palette("harness/report/charts.c",
		     fx_slurp(fx_root(), "harness/report/charts.c"), timeline);
	only_palette("harness/report/report.js",
		     fx_slurp(fx_root(), "harness/report/report.js"), timeline);
	only_palette("harness/report/report_matrix.c",
		     fx_slurp(fx_root(), "harness/report/report_matrix.c"), none);
}
