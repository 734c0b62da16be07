/*
 * palette.c - the charts' client colours, and how far apart two colours are
 * as a viewer with normal vision, deuteranopia or protanopia sees them.
 *
 * Simulation: G. M. Machado, M. M. Oliveira, L. A. F. Fernandes, "A
 * Physiologically-based Model for Simulation of Color Vision Deficiency",
 * IEEE TVCG 15(6), 2009, 1291-1298: its matrices for severity 1.0, applied
 * to linear RGB (sRGB with its transfer function removed), the result
 * clipped to the gamut.
 * Difference: CIEDE2000 (CIE 142-2001), as written out in G. Sharma, W. Wu,
 * E. N. Dalal, "The CIEDE2000 Color-Difference Formula: Implementation
 * Notes, Supplementary Test Data, and Mathematical Observations", Color
 * Research and Application 30(1), 2005 (whose test pairs test_palette.c
 * checks), on CIELAB under D65 from the sRGB primaries (IEC 61966-2-1).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "palette.h"

static const char *const clients[LB_CLIENT_COLOURS] = {
	LB_COL_CLIENT0, LB_COL_CLIENT1, LB_COL_CLIENT2, LB_COL_CLIENT3,
	LB_COL_CLIENT4, LB_COL_CLIENT5, LB_COL_CLIENT6, LB_COL_CLIENT7,
};

const char *lb_client_colour(int c)
{
	return clients[(c < 0 ? -c : c) % LB_CLIENT_COLOURS];
}

unsigned lb_client_rgb(int c)
{
	unsigned v = 0;
	sscanf(lb_client_colour(c) + 1, "%6x", &v);
	return v;
}

/* Machado et al. 2009, Table 1, severity 1.0 */
static const double sim[3][3][3] = {
	[LB_VISION_NORMAL] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } },
	[LB_VISION_DEUTAN] = { { 0.367322, 0.860646, -0.227968 },
			       { 0.280085, 0.672501, 0.047413 },
			       { -0.011820, 0.042940, 0.968881 } },
	[LB_VISION_PROTAN] = { { 0.152286, 1.052583, -0.204868 },
			       { 0.114503, 0.786281, 0.099216 },
			       { -0.003882, -0.048116, 1.051998 } },
};

static double linear(unsigned v)
{
	double c = v / 255.0;
	return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double lab_f(double t)
{
	return t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116;
}

bool lb_colour_lab(const char *hex, enum lb_vision v, double lab[3])
{
	unsigned r, g, b;
	double in[3], rgb[3];

	if (!hex || strlen(hex) != 7 || hex[0] != '#' || strspn(hex + 1, "0123456789abcdefABCDEF") != 6 ||
	    sscanf(hex + 1, "%2x%2x%2x", &r, &g, &b) != 3 || v < LB_VISION_NORMAL || v > LB_VISION_PROTAN)
		return false;
	in[0] = linear(r);
	in[1] = linear(g);
	in[2] = linear(b);
	for (int i = 0; i < 3; i++) {
		double s = sim[v][i][0] * in[0] + sim[v][i][1] * in[1] + sim[v][i][2] * in[2];
		rgb[i] = s < 0 ? 0 : s > 1 ? 1 : s;
	}
	/* sRGB primaries to XYZ, over the D65 white */
	double x = (0.4124564 * rgb[0] + 0.3575761 * rgb[1] + 0.1804375 * rgb[2]) / 0.95047;
	double y = 0.2126729 * rgb[0] + 0.7151522 * rgb[1] + 0.0721750 * rgb[2];
	double z = (0.0193339 * rgb[0] + 0.1191920 * rgb[1] + 0.9503041 * rgb[2]) / 1.08883;
	lab[0] = 116 * lab_f(y) - 16;
	lab[1] = 500 * (lab_f(x) - lab_f(y));
	lab[2] = 200 * (lab_f(y) - lab_f(z));
	return true;
}

static double deg(double r)
{
	return r * 180 / M_PI;
}

static double rad(double d)
{
	return d * M_PI / 180;
}

/* hue angle in degrees, 0 to 360 (0 for a grey) */
static double hue(double b, double a)
{
	if (a == 0 && b == 0)
		return 0;
	double h = deg(atan2(b, a));
	return h < 0 ? h + 360 : h;
}

double lb_ciede2000(const double c1[3], const double c2[3])
{
	double cab = (hypot(c1[1], c1[2]) + hypot(c2[1], c2[2])) / 2, p7 = pow(25, 7);
	double g = 0.5 * (1 - sqrt(pow(cab, 7) / (pow(cab, 7) + p7)));
	double a1 = (1 + g) * c1[1], a2 = (1 + g) * c2[1];
	double k1 = hypot(a1, c1[2]), k2 = hypot(a2, c2[2]); /* C' */
	double h1 = hue(c1[2], a1), h2 = hue(c2[2], a2);
	double dl = c2[0] - c1[0], dc = k2 - k1, dh = 0;

	if (k1 * k2 != 0) {
		dh = h2 - h1;
		dh = dh > 180 ? dh - 360 : dh < -180 ? dh + 360 : dh;
	}
	double dhh = 2 * sqrt(k1 * k2) * sin(rad(dh / 2));
	double lm = (c1[0] + c2[0]) / 2, cm = (k1 + k2) / 2, hm = h1 + h2;
	if (k1 * k2 != 0)
		hm = fabs(h1 - h2) <= 180 ? (h1 + h2) / 2 : h1 + h2 < 360 ? (h1 + h2 + 360) / 2 :
		     (h1 + h2 - 360) / 2;
	double t = 1 - 0.17 * cos(rad(hm - 30)) + 0.24 * cos(rad(2 * hm)) +
		   0.32 * cos(rad(3 * hm + 6)) - 0.20 * cos(rad(4 * hm - 63));
	double dth = 30 * exp(-pow((hm - 275) / 25, 2));
	double rc = 2 * sqrt(pow(cm, 7) / (pow(cm, 7) + p7));
	double sl = 1 + 0.015 * pow(lm - 50, 2) / sqrt(20 + pow(lm - 50, 2));
	double sc = 1 + 0.045 * cm, sh = 1 + 0.015 * cm * t;
	double rt = -sin(rad(2 * dth)) * rc;
	return sqrt(pow(dl / sl, 2) + pow(dc / sc, 2) + pow(dhh / sh, 2) + rt * (dc / sc) * (dhh / sh));
}

double lb_colour_delta(const char *a, const char *b, enum lb_vision v)
{
	double la[3], lb[3];

	if (!lb_colour_lab(a, v, la) || !lb_colour_lab(b, v, lb))
		return -1;
	return lb_ciede2000(la, lb);
}
