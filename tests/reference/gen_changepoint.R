#!/usr/bin/Rscript
# gen_changepoint.R - reference values for tests/test_changepoint.c from R.
#
#     Rscript tests/reference/gen_changepoint.R > tests/reference/changepoint_fixtures.h
#
# Needs Debian's r-base-core and r-cran-energy; the test suite itself only
# includes the generated header.  Every expected value is computed here
# without stats/changepoint.c's method (revision-pair sums and 2-D prefix
# sums):
#
#   Q(X, Y)       energy::edist(method = "cluster"), Szekely & Rizzo's
#                 e-distance n m / (n + m) (2 M_xy - M_xx - M_yy) with the
#                 within means over all n^2 ordered pairs (V-statistics),
#                 turned into Matteson & James's U-statistics: M_xx^U =
#                 M_xx n / (n - 1), M_xx taken from R's dist() over X.
#                 Checked against Q written out from the definition.
#   best split    every (tau, kappa) of a range of revisions, each Q from
#                 the definition (block means of R's distance matrix), the
#                 first maximum in (tau, kappa) order.
#   p             the permutation test written out in R: the revisions of
#                 each segment shuffled with sample() (R's Mersenne-Twister,
#                 a stream of its own), the best split found again by brute
#                 force (vectorised: 2-D cumulative sums of the runs'
#                 distances, checked against the plain search on every
#                 segment tested), p = (1 + #{q* >= q}) / (R + 1), ties within 1e-9
#                 relative counted; R = 4999.  Compared with stats/ within
#                 a Monte-Carlo tolerance (both estimate the same exact p).
#   change points E-divisive written out in R with those tests (sig 0.05).
suppressPackageStartupMessages(library(energy))

out <- character(0)
emit <- function(...) out <<- c(out, paste0(...))
fmt <- function(v) {
	if (is.na(v)) return("NAN")
	sprintf("%.17g", v)
}
arr <- function(name, xs, type = "double") {
	emit(sprintf("static const %s %s[%d] = {", type, name, length(xs)))
	f <- if (type == "double") fmt else function(v) sprintf("%d", as.integer(v))
	for (i in seq(1, length(xs), by = 4))
		emit("\t", paste(sapply(xs[i:min(i + 3, length(xs))], f), collapse = ", "), ",")
	emit("};")
}

# ---- the statistic ----
# Runs of revisions [lo, hi) (0-based, hi exclusive) of a series.
rev_runs <- function(s, lo, hi) {
	off <- c(0, cumsum(s$len))
	if (hi <= lo) return(integer(0))
	(off[lo + 1] + 1):off[hi + 1]
}

# Q from the definition, on the distance matrix D (already ^alpha).
q_def <- function(D, ix, iy) {
	n <- length(ix); m <- length(iy)
	sxy <- sum(D[ix, iy])
	sx <- sum(D[ix, ix]) / 2
	sy <- sum(D[iy, iy]) / 2
	n * m / (n + m) * (2 * sxy / (n * m) - sx / choose(n, 2) - sy / choose(m, 2))
}

# Q from energy::edist, V-statistics turned into U-statistics.
q_energy <- function(x, alpha) {
	function(ix, iy) {
		n <- length(ix); m <- length(iy)
		e <- as.numeric(edist(x[c(ix, iy)], sizes = c(n, m), alpha = alpha))
		mxx <- mean(as.matrix(dist(x[ix]))^alpha)
		myy <- mean(as.matrix(dist(x[iy]))^alpha)
		# e = w (2 Mxy - mxx - myy); Q = w (2 Mxy - mxx n/(n-1) - myy m/(m-1))
		e - n * m / (n + m) * (mxx / (n - 1) + myy / (m - 1))
	}
}

# The best split of revisions [lo, hi) in the order ord (revision numbers).
best_split <- function(s, D, ord, min_seg) {
	best <- list(q = NA, tau = 0, kappa = 0)
	L <- length(ord)
	if (L < 2 * min_seg) return(best)
	runs_of <- lapply(ord, function(g) rev_runs(s, g, g + 1))
	for (t in min_seg:(L - min_seg)) {
		ix <- unlist(runs_of[1:t])
		if (length(ix) < 2) next
		for (k in (t + min_seg):L) {
			iy <- unlist(runs_of[(t + 1):k])
			if (length(iy) < 2) next
			q <- q_def(D, ix, iy)
			if (is.na(best$q) || q > best$q) best <- list(q = q, tau = t, kappa = k)
		}
	}
	best
}

# The same from 2-D cumulative sums of the runs' distances (R's cumsum, in
# the order of the runs), vectorised over kappa: the permutations' search,
# checked against best_split() on every series.
best_split_fast <- function(s, D, ord, min_seg) {
	best <- list(q = NA, tau = 0, kappa = 0)
	L <- length(ord)
	if (L < 2 * min_seg) return(best)
	idx <- unlist(lapply(ord, function(g) rev_runs(s, g, g + 1)))
	C <- matrix(0, length(idx) + 1, length(idx) + 1)
	C[-1, -1] <- t(apply(apply(D[idx, idx], 2, cumsum), 1, cumsum))
	cum <- c(0, cumsum(s$len[ord + 1]))
	for (t in min_seg:(L - min_seg)) {
		n <- cum[t + 1]
		if (n < 2) next
		k <- (t + min_seg):L
		m <- cum[k + 1] - n
		k <- k[m >= 2]; m <- m[m >= 2]
		if (!length(k)) next
		e <- n + m
		sx <- C[n + 1, n + 1]
		sxy <- C[n + 1, e + 1] - sx
		sy <- C[cbind(e + 1, e + 1)] - 2 * C[n + 1, e + 1] + sx
		q <- n * m / e * (2 * sxy / (n * m) - sx / (n * (n - 1)) - sy / (m * (m - 1)))
		i <- which.max(q)
		if (is.na(best$q) || q[i] > best$q) best <- list(q = q[i], tau = t, kappa = k[i])
	}
	best
}

# E-divisive with permutation tests: change points (0-based revision
# indices) in the order found and their p.
edivisive <- function(s, alpha, min_seg, R, sig) {
	x <- s$x
	D <- as.matrix(dist(x))^alpha
	G <- length(s$len)
	cuts <- c(0, G)
	found <- integer(0); ps <- numeric(0); first_q <- NA
	repeat {
		segs <- lapply(seq_len(length(cuts) - 1), function(i) c(cuts[i], cuts[i + 1]))
		bests <- lapply(segs, function(sg) best_split(s, D, sg[1]:(sg[2] - 1), min_seg))
		for (i in seq_along(segs)) {
			f <- best_split_fast(s, D, segs[[i]][1]:(segs[[i]][2] - 1), min_seg)
			stopifnot(identical(is.na(f$q), is.na(bests[[i]]$q)),
				  is.na(f$q) || (abs(f$q - bests[[i]]$q) < 1e-9 * max(1, abs(f$q)) &&
						 f$tau == bests[[i]]$tau && f$kappa == bests[[i]]$kappa))
		}
		qs <- sapply(bests, function(b) b$q)
		if (all(is.na(qs))) break
		i <- which.max(qs)
		q <- qs[i]
		b <- 0
		for (r in 1:R) {
			qmax <- -Inf
			for (sg in segs) {
				L <- sg[2] - sg[1]
				if (L < 2 * min_seg) next
				ord <- (sg[1]:(sg[2] - 1))[sample.int(L)]
				bq <- best_split_fast(s, D, ord, min_seg)$q
				if (!is.na(bq) && bq > qmax) qmax <- bq
			}
			if (qmax >= q - 1e-9 * abs(q)) b <- b + 1
		}
		p <- (1 + b) / (R + 1)
		if (is.na(first_q)) first_q <- q
		ps <- c(ps, p)
		if (p > sig) break
		cp <- segs[[i]][1] + bests[[i]]$tau
		found <- c(found, cp)
		cuts <- sort(c(cuts, cp))
	}
	list(cps = found, p = ps, q1 = first_q)
}

set.seed(20260601)
# Series: name, runs per revision, values (revisions in order).
series <- list()
mk <- function(name, len, f, alpha = 1, min_seg = 2) {
	x <- unlist(lapply(seq_along(len), function(g) f(g - 1, len[g])))
	series[[name]] <<- list(name = name, len = len, x = x, alpha = alpha, min_seg = min_seg)
}
mk("unit", rep(1, 24), function(g, n) rnorm(n, if (g >= 12) 1 else 0, 1))
mk("groups", sample(1:4, 20, replace = TRUE),
   function(g, n) 100 * exp(rnorm(n, if (g >= 9) 0.03 else 0, 0.02)))
mk("groups_a05", sample(1:3, 18, replace = TRUE),
   function(g, n) 10 + rnorm(n, if (g >= 7) 0.5 else 0, 0.4), alpha = 0.5)
mk("spread_a15", rep(3, 16),
   function(g, n) rnorm(n, 5, if (g >= 8) 2 else 0.5), alpha = 1.5, min_seg = 3)
mk("flat", rep(3, 18), function(g, n) 50 + rnorm(n, 0, 1))
mk("weak", rep(2, 24), function(g, n) 50 + rnorm(n, if (g >= 12) 0.5 else 0, 1))
mk("two", rep(2, 36), function(g, n) 50 + rnorm(n, c(0, 3, 1)[1 + (g >= 12) + (g >= 24)], 0.7))

emit("/* generated by tests/reference/gen_changepoint.R (", R.version.string,
     ", energy ", as.character(packageVersion("energy")), "): do not edit */")
emit("#ifndef PERTURB_CHANGEPOINT_FIXTURES_H")
emit("#define PERTURB_CHANGEPOINT_FIXTURES_H")
emit("#include <math.h>")
emit("#include <stddef.h>")
emit("")
emit("struct fx_cp_q {\n\tsize_t lo, tau, kappa;\t/* X = revisions [lo, tau), Y = [tau, kappa) */\n\tdouble q;\n};")
emit("struct fx_cp_split {\n\tsize_t lo, hi;\t/* revisions [lo, hi) searched */\n",
     "\tsize_t tau, kappa;\t/* from lo */\n\tdouble q;\n};")
emit("struct fx_cp_series {\n\tconst char *name;\n\tsize_t groups;\n\tconst size_t *len;\n",
     "\tconst double *x;\n\tdouble alpha;\n\tsize_t min_seg;\n",
     "\tconst struct fx_cp_q *q;\n\tsize_t nq;\n\tconst struct fx_cp_split *split;\n\tsize_t nsplit;\n",
     "\tsize_t ncps;\n\tconst size_t *cps;\t/* in the order found, sig 0.05 */\n",
     "\tsize_t np;\n\tconst double *p;\t/* of each test in order, R = FX_CP_REF_R; the last > 0.05\n\t\t\t\t   when np = ncps + 1 */\n};")
R_REF <- 4999
emit(sprintf("#define FX_CP_REF_R %d", R_REF))
emit("")
for (s in series) {
	G <- length(s$len)
	D <- as.matrix(dist(s$x))^s$alpha
	qe <- q_energy(s$x, s$alpha)
	arr(paste0("fx_cp_len_", s$name), s$len, "size_t")
	arr(paste0("fx_cp_x_", s$name), s$x)
	# Q at splits spread over the series, some not from its start
	trip <- list()
	for (lo in unique(c(0, 1, floor(G / 3))))
		for (tau in unique(c(lo + 2, floor((lo + G) / 2), G - 3)))
			for (kappa in unique(c(tau + 2, G)))
				if (lo < tau && tau < kappa && kappa <= G)
					trip[[length(trip) + 1]] <- c(lo, tau, kappa)
	emit(sprintf("static const struct fx_cp_q fx_cp_q_%s[] = {", s$name))
	for (t in trip) {
		ix <- rev_runs(s, t[1], t[2]); iy <- rev_runs(s, t[2], t[3])
		if (length(ix) < 2 || length(iy) < 2) next
		q <- qe(ix, iy)
		stopifnot(abs(q - q_def(D, ix, iy)) <= 1e-9 * max(1, abs(q)))
		emit(sprintf("\t{ %d, %d, %d, %s },", t[1], t[2], t[3], fmt(q)))
	}
	emit("};")
	emit(sprintf("static const struct fx_cp_split fx_cp_split_%s[] = {", s$name))
	for (r in list(c(0, G), c(1, G), c(0, G - 2), c(floor(G / 4), floor(3 * G / 4)))) {
		b <- best_split(s, D, r[1]:(r[2] - 1), s$min_seg)
		emit(sprintf("\t{ %d, %d, %d, %d, %s },", r[1], r[2], b$tau, b$kappa, fmt(b$q)))
	}
	emit("};")
	ed <- edivisive(s, s$alpha, s$min_seg, R_REF, 0.05)
	stopifnot(abs(ed$q1 - best_split(s, D, 0:(G - 1), s$min_seg)$q) < 1e-12)
	arr(paste0("fx_cp_cps_", s$name), if (length(ed$cps)) ed$cps else 0, "size_t")
	arr(paste0("fx_cp_p_", s$name), ed$p)
	s$ncps <- length(ed$cps)
	s$np <- length(ed$p)
	series[[s$name]] <- s
}
emit("static const struct fx_cp_series fx_cp_series[] = {")
for (s in series) {
	n <- s$name
	emit(sprintf("\t{ \"%s\", %d, fx_cp_len_%s, fx_cp_x_%s, %s, %d,", n, length(s$len), n, n,
		     fmt(s$alpha), s$min_seg))
	emit(sprintf("\t  fx_cp_q_%s, sizeof(fx_cp_q_%s) / sizeof(fx_cp_q_%s[0]),", n, n, n))
	emit(sprintf("\t  fx_cp_split_%s, sizeof(fx_cp_split_%s) / sizeof(fx_cp_split_%s[0]),", n, n, n))
	emit(sprintf("\t  %d, fx_cp_cps_%s, %d, fx_cp_p_%s },", s$ncps, n, s$np, n))
}
emit("};")
emit("")
emit("#endif")
cat(out, sep = "\n")
cat("\n")
