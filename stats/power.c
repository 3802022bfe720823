/* power.c - the power of a two-sided test, for sample sizes; see stats.h */
#include "stats.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

double stats_power_z(double alpha, double power)
{
	if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
		return NAN;
	return gsl_cdf_ugaussian_Pinv(1 - alpha / 2) + gsl_cdf_ugaussian_Pinv(power);
}
