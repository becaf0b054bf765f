# Run the GM package's gm() (BioAlgs/GM, unmodified) on one draw and record what it does inside.
# Not in the DAG: a diagnostic (the package against our mirror on the same draws), driven by
# `python -m repro.papers.groupfdr.reference_check`.
#
# usage: Rscript gm_reference.R DIR SEED
# DIR holds dims.txt ("n p"), X.f64 (n x p, column-major float64) and y.f64 (n float64).
# gm() runs with its defaults (q = 0.1, family "gaussian", ncores = 1) after set.seed(SEED). Two exit
# tracers, installed as gm() sees the functions, record cv.glmnet's result (lambda grid, CV error,
# lambda.min, the full-data coefficients at lambda.min) and every rnorm() call (its sd is the
# package's c_j = sqrt(sigmaz_vec[j]); the draw divided by it is the standard normal Z_j). The CV folds
# are recovered by replaying the RNG (cv.glmnet draws foldid first) and checked by refitting the CV on
# them: the CV error must agree. Writes M.f64, Z.f64 (n x p), c.f64, coef.f64, cvm.f64, lambda.f64
# (the grid), foldid.txt, selected.txt (1-based), summary.txt (lambda.min, its grid index, refit check).
suppressMessages({
  library(GM)
  library(glmnet)
})
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
seed <- as.integer(args[2])
dims <- scan(file.path(dir, "dims.txt"), quiet = TRUE)
n <- dims[1]
p <- dims[2]
x <- matrix(readBin(file.path(dir, "X.f64"), "double", n * p), n, p)
y <- readBin(file.path(dir, "y.f64"), "double", n)

rec <- new.env()
rec$sd <- c()
rec$z <- list()
invisible(capture.output({
  trace("cv.glmnet", exit = quote(assign("cv", returnValue(), envir = rec)), print = FALSE, where = GM::gm)
  trace("rnorm", exit = quote({
    rec$sd <- c(rec$sd, sd)
    rec$z[[length(rec$z) + 1]] <- returnValue()
  }), print = FALSE, where = GM::gm)
}))
set.seed(seed)
invisible(capture.output(fit <- gm(y, x)))
invisible(capture.output(untrace("rnorm", where = GM::gm)))
stopifnot(length(rec$sd) == p)

set.seed(seed)
foldid <- sample(rep(seq(10), length = n))
cv <- rec$cv
refit <- cv.glmnet(scale(x), y, lambda = cv$lambda, foldid = foldid)
cv_gap <- max(abs(refit$cvm - cv$cvm))

z <- do.call(cbind, rec$z)
coef_min <- as.numeric(coef(cv, s = "lambda.min"))[-1]
writeBin(as.double(fit$gm_statistics), file.path(dir, "M.f64"))
writeBin(as.double(sweep(z, 2, rec$sd, "/")), file.path(dir, "Z.f64"))
writeBin(as.double(rec$sd), file.path(dir, "c.f64"))
writeBin(as.double(coef_min), file.path(dir, "coef.f64"))
writeBin(as.double(cv$cvm), file.path(dir, "cvm.f64"))
writeBin(as.double(cv$lambda), file.path(dir, "lambda.f64"))
writeLines(as.character(foldid), file.path(dir, "foldid.txt"))
writeLines(as.character(sort(fit$gm_selected)), file.path(dir, "selected.txt"))
writeLines(c(sprintf("lambda_min %.17g", cv$lambda.min),
             sprintf("lambda_index %d", which(cv$lambda == cv$lambda.min)),
             sprintf("cv_refit_gap %.3g", cv_gap)), file.path(dir, "summary.txt"))
