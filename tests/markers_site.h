/*
 * markers_site.h - one marker site, compiled by tests/markers_site.c once
 * per flavour: the includer defines PERTURB_MARKER_FLAVOUR and SITE_FLAVOUR
 * (the suffix of the function and of the site's name, "site_FLAVOUR").
 * No include guard on purpose.
 */
#define SITE_FN_(f) markers_site_##f
#define SITE_FN(f) SITE_FN_(f)
#define SITE_STR_(f) "site_" #f
#define SITE_STR(f) SITE_STR_(f)

void SITE_FN(SITE_FLAVOUR)(long i);
void SITE_FN(SITE_FLAVOUR)(long i)
{
	PERTURB_MARKER(SITE_STR(SITE_FLAVOUR), "i %ld i2 %ld", i, i * 2);
}

#undef SITE_FN_
#undef SITE_FN
#undef SITE_STR_
#undef SITE_STR
