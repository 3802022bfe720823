/*
 * markers_site.c - the same marker site (markers_site.h) compiled once per
 * flavour, selected the way a user selects it: PERTURB_MARKER_FLAVOUR.
 * markers_site_FLAVOUR(i) runs the site named "site_FLAVOUR" with the
 * arguments i and 2 i: one function the tests call, from several threads
 * while its code is patched.
 */
#include "instrumentation/markers.h"

#undef PERTURB_MARKER_FLAVOUR
#define PERTURB_MARKER_FLAVOUR NONE
#define SITE_FLAVOUR none
#include "markers_site.h"

#undef PERTURB_MARKER_FLAVOUR
#undef SITE_FLAVOUR
#define PERTURB_MARKER_FLAVOUR NOP
#define SITE_FLAVOUR nop
#include "markers_site.h"

#undef PERTURB_MARKER_FLAVOUR
#undef SITE_FLAVOUR
#define PERTURB_MARKER_FLAVOUR JUMP_GENERIC
#define SITE_FLAVOUR jump_generic
#include "markers_site.h"

#undef PERTURB_MARKER_FLAVOUR
#undef SITE_FLAVOUR
#define PERTURB_MARKER_FLAVOUR JUMP_OPTIMIZED
#define SITE_FLAVOUR jump_optimized
#include "markers_site.h"

#undef PERTURB_MARKER_FLAVOUR
#undef SITE_FLAVOUR
#define PERTURB_MARKER_FLAVOUR STATIC_KEY
#define SITE_FLAVOUR static_key
#include "markers_site.h"
