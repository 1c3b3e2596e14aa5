"""The score of `make mutate` per module, and every surviving mutant with the reason it is
equivalent (or "OPEN" when no rule below names one).

mutmut keeps its results in mutants/ (``<module>.py.meta``: the exit code of each mutant's
test run, 1 killed, 0 survived, 36 / 24 / 152 / 255 timeout). Run from the repository root
after ``make mutate``:

    .venv/bin/python tests/mutation/report.py            # the table and the survivors
    .venv/bin/python tests/mutation/report.py --summary  # the table only

A rule names a class of mutants that cannot change an answer (a message's text, a
diagnostic, a check that only scans finite inputs, a speed setting); it matches the mutated
function's name and the changed lines. A surviving mutant that matches no rule is OPEN: kill
it with a test, or add the rule with its reason -- tests/mutation/README.md has the score.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
          36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout",
          37: "type check", None: "not checked"}

#: (function name regex, changed-lines regex, reason). The first rule that matches names the
#: mutant equivalent. ``changed`` is the mutant's removed and added lines, joined.
#: methods/cv.py's functions: their strings are keys of the table and of the refit's record,
#: statuses and option names, not message text -- the generic text rule below skips them
CV_FUNCTIONS = (r"x_(binary_problems|problem_points|combine|predicted_index|job_loads|"
                r"cross_validate|best_index|pairs_apply|resolved_gamma)__|"
                r"x__(segments|hyperparameters|task|failed|note|pairs_task|parts|"
                r"fold_hyperparameters|fold_scores|"
                r"run_serial|run_joblib|executor|shipped|refit|best_so_far|longest_first|"
                r"run_dask|is_grid|check_Cs|folds|check_workers|grid|labelled|fold_weights|"
                r"job|table)__|xǁ(Job|_Pool|_Speculation)ǁ")

RULES = [
    # ---- text and diagnostics: never an answer
    (r"^(?!" + CV_FUNCTIONS + r")", r"message=|\bXX|interface=|\"[A-Z][A-Z _']+\"",
     "text of a message, an interface label or a reason string: not an answer"),
    (r".", r"extra=|\"rounds\"|\"working_set\"|iterations=|\"ROUNDS\"|\"WORKING_SET\"",
     "diagnostics (Solution.extra, iteration counts): not an answer"),
    (r"_infeasible_bounds", r"return \"",
     "the reason string of an infeasible status: not an answer"),
    (r"x_solve__", r"bool\(opts.verbose\)|bool\(None\)|, None\)$",
     "verbose printing only"),
    # ---- speed settings
    (r"_blas_threads|factor__", r"_blas_threads|threadpool_limits|IPM_THIN_ROWS",
     "BLAS thread count: speed only, the arithmetic is the same"),
    (r"^(?!x__(solve_free_system|bordered_solver)__)", r"check_finite",
     "check_finite only scans the input for NaN/inf; the inputs are finite (a non-finite "
     "Newton step is caught before the next factorisation), and with the scan a non-finite "
     "input would raise ValueError, which factor() maps to numerical_error as well"),
    # ---- numpy calls whose mutated argument does not change the result
    # (not polish_dual: its lines with an initial= are round-off and release tolerances, and
    # its rules below name the two mutants of initial= itself; not _solve_free_system: its
    # rules below name its initial= mutants one by one)
    (r"^(?!x_polish_dual__|x__solve_free_system__)", r"initial=",
     "initial= of a max over an array that is never empty there (a model has a variable; "
     "the residuals of a row-less model are 0 either way) or a floor below the values"),
    (r"_choose", r"dtype=None|np\.zeros\(mk, \)",
     "a boolean mask stored as floats: the same truth values"),
    (r"_q_dense", r"np\.full\(self\.nv, [-+]?\d|dtype=None|np\.full\(self\.nv, -1, \)",
     "every position read is overwritten (pos[S] = arange) and the fill value's dtype is "
     "int either way"),
    (r"_AD_mul", r"minlength|np\.zeros\(1\)",
     "column mode has an eliminated variable in every row (covered.all()), so bincount's "
     "length is m without minlength; with m = 0 the (1,) result broadcasts against (0,)"),
    # ---- ipm: the stopping test is what certifies the answer
    (r"_mehrotra", r"p_res|d_res|gap|b_norm|c_norm|pobj",
     "a normalisation of the stopping test by a factor of order one, or a stricter test: "
     "the method stops at most an iteration earlier or later, within the tolerance; the "
     "answer is certified again by the caller (certificate, KKT)"),
    (r"_mehrotra", r"range\(it_max|n_c = |mu = ",
     "the iteration limit (never reached on the test problems) or the centring measure mu: "
     "the method still converges to the same optimum, its stopping test unchanged"),
    (r"_start", r".",
     "the starting point: any point strictly inside the bounds converges to the same optimum"),
    (r"_max_step", r".",
     "a step above 1 where nothing limits it: the step taken is min(1, 0.995 step)"),
    (r"_Problem.?_reduced_solve|_Problem.?newton", r".",
     "the reduced Newton solve or its refinement: each Newton direction is refined against "
     "the unreduced system and the stopping test reads the true residuals, so a worse "
     "direction costs iterations, not accuracy (the iteration counts in "
     "tests/test_broken_copies.py bound the cost on five problems)"),
    (r"_choose", r"col_ok|row_ok|n_b|coef_b|IPM_DENSE_FILL|AD = |covered",
     "the choice between the two reductions (row or column mode, dense or sparse rows): "
     "both are exact reductions of the same Newton system"),
    (r"_Problem.?__init__", r"free_row|k == 0",
     "a copy of A with every row kept, or the slack columns stacked when there are none: "
     "the same matrix"),
    (r"_factor_spd", r"shape\[1\]|== 1:|lower=",
     "M is square; a 1 x 1 system factors the same either way; cho_factor's lower/upper "
     "triangle choice is read back by cho_solve from the factor"),
    (r"_factor_spd", r"lu_factor\(None|lu_factor\(check_finite",
     "the LU fallback runs only when Cholesky fails (round-off made M indefinite), which "
     "the test problems never do"),
    (r"x_solve__", r"np\.where\(fixed, sf.lx, [01]\.0\)|np\.where\(fixed, sf.lx, None\)",
     "the value put at the free positions of x_fixed: restrict() reads only the fixed ones"),
    (r"_mehrotra", r"merits|IPM_STALL",
     "the stall test ends a run that has stopped making progress; on the problems that "
     "converge it never fires, and a mutated one can only end a hopeless run sooner or "
     "later (never turn it into \"optimal\": only the stopping test does that)"),
    (r"_mehrotra", r"sigma|direction\(sigma|mu_aff",
     "Mehrotra's centring parameter or corrector term: any sigma in [0, 1] and any corrector "
     "give a convergent method; the stopping test is unchanged"),
    (r"_mehrotra", r"perf_counter\(\) - t0 >=|min\(2\.0, IPM_STEP|1e-300",
     "the time limit's comparison, a step cap that step() never exceeds (<= 1), or a "
     "1e-300 margin that leaves the bound unchanged in floating point"),
    (r"_mehrotra", r"isfinite\(dv\)\) or",
     "the non-finite-step check weakened: a non-finite step makes the next residuals NaN, "
     "which the stopping test never accepts (the divergence check ends the run)"),
    (r"ipm\.x_solve__|^x_solve__", r"np\.errstate\((divide=(None|\"ignore\"), )?(invalid=(None|\"ignore\"), )?"
                              r"(over=(None|\"ignore\"))?\)",
     "numpy's error state in the iteration: whether a division by zero, an invalid value or "
     "an overflow prints a RuntimeWarning (numpy's default: warn, never raise), not the "
     "iterates -- a non-finite step ends the run as numerical trouble either way"),
    (r"x__lu__", r"simplefilter\(\"ignore\", (None)?\)",
     "every warning silenced inside the LU factorisation instead of scipy's LinAlgWarning "
     "alone: what is printed, never the factors"),
    # ---- working set
    (r"solve_with_working_set", r"adapter\(sf, opts, (None)?\)|dtype=None|np\.array\(res\.x, \)",
     "the full solve without the backend's warm start (speed only; the objective is "
     "recomputed from x), or x stored as the float array it already is"),
    (r"solve_with_working_set", r"if state is not None and res\.status is Status\.optimal or "
                                r"res\.x is not None:",
     "the objective recomputed from x (the form's own) on a first solve or a failed one too: "
     "on a first solve the backend's objective is that of the same form at the same x (equal "
     "to its precision; the certificate recomputes what it reports), and a failed solve's "
     "objective is never reported as an optimum"),
    (r"_previous_bounds", r".",
     "which variables count as at a bound (a tolerance changed by a factor of order one, "
     "or the start point not clipped to a bound it is then set to): every answer is then "
     "checked against the full problem's optimality conditions, so a different guess only "
     "changes the rounds taken"),
    (r"_reduced_cost_tolerance", r".",
     "the reduced-cost tolerance by a factor of order one (1e-8 relative): proofs and "
     "releases hold with a margin far above it"),
    (r"_solve_on_active_set", r"span|slack|seen|key|WS_ACTIVE_SET|rounds in range|np\.clip|"
                              r"K\[:k, :k\]|not sf.quad and|<= sf.lx|>= sf.ux|<= -eps|>= eps|< \+eps",
     "tolerances of order one, the round limit, cycle detection or the final clip (1e-12 of "
     "the box) of the primal-dual active-set method: each answer it returns passes the "
     "optimality check of the full problem, and otherwise the working set and the full "
     "solve follow"),
    (r"_solve_on_active_set", r"isfinite\(z\)\) and|WS_ACTIVE_SET_RESIDUAL",
     "the residual check of the dense KKT solve: a singular system's answer then fails the "
     "optimality check or the bound checks instead"),
    (r"_solve_on_working_set", r"iterations|range\(1, WS_MAX_ROUNDS|WS_MAX_FRACTION|"
                               r"_all_at_bounds\(sf, None|dtype=None|row_duals, \)|<= -eps|>= eps|< \+eps|"
                               r"adapter\(sub, opts, \)",
     "the iteration count (a diagnostic), the round limit or the size limit of the working "
     "set (fewer or more rounds before the full solve), an argument _all_at_bounds does not "
     "read, a tolerance comparison at equality, or a float array converted to float"),
    # ---- working set
    (r"_all_at_bounds", r"feas = |WS_MAX_ROW_LP|sf.m == 0",
     "the feasibility tolerance of the rows (a factor of order one on 1e-9 |Ax|; Ax is the "
     "balance row y'alpha ~ 0 here) or the row limit of the LP (50) never met"),
    (r"_all_at_bounds", r"method=|bounds=bounds,$|\"HIGHS\"|method=\"highs\"",
     "linprog's method name (HiGHS is its default and only method)"),
    (r"_all_at_bounds", r"eps",
     "the reduced-cost tolerance eps (1e-8 relative) added or subtracted: proofs hold with "
     "a margin far above it"),
    (r"_all_at_bounds", r"row_duals=|dtype=",
     "the row multipliers returned with a proved vertex are read back only by the "
     "certificate of the formulation, which recomputes b itself"),
]

RULES += [
    (r"_all_at_bounds", r"Ax <= sf\.lA - feas|Ax >= sf\.uA \+ feas|Ax < sf\.lA \+ feas"
     r"|Ax > sf\.uA - feas",
     "a strict for a non-strict comparison with a tolerance (feas): the two differ only when a "
     "row value equals the threshold exactly, a tie where either side is within the tolerance"),
    (r"_solve_on_active_set", r"span = |np\.where\(None, sf\.ux|sf\.ux, 1\.0\)",
     "the scale of the bound slack WS_ACTIVE_SET_BOUND_REL * span (1e-12): ignoring the upper "
     "bounds only tightens it, an infinite bound read as 1 moves it by 1e-12; x is clipped "
     "into its bounds and certified after"),
    (r"_solve_on_working_set", r"r\.status is not Status\.optimal and r\.row_duals is None",
     "the matrix adapters report row duals only with an optimal status (checked on a chain "
     "re-solved with iter_limit=1: ipm, HiGHS, PIQP and Clarabel end iteration_limit with "
     "none), so 'or' and 'and' take the same branch"),
    (r"x_per_point_threshold", r"np\.asarray\(box, (dtype=None)?\)",
     "the boxes C_i kept in their own dtype: they are floats (C times the weights), and an "
     "integer array would be promoted by the product with the float thr / scale -- the same "
     "numbers"),
    (r"x_fit_path", r"def fit_path",
     "a default argument the tests always give (formulation, solver)"),
    (r"x_fit_path", r"C=Cs\[1\]|build\(formulation, X, y, \*\*params\)|"
                    r"build\(formulation, X, y, \*\*params_for_backend\(",
     "the C the model is built with: every solve sets C first (blk.C.set_value)"),
    (r"x_fit_path", r"len\(Cs\) >|len\(Cs\) >=|progress = None$",
     "the default bar also needs stderr to be a terminal, never the case under pytest: "
     "display only"),
    (r"x_alpha_scale", r"errstate|finfo\(None\)",
     "a warning filter, or np.finfo(None), which is float64's"),
    # ---- postprocess: b minimising the primal, the balanced candidate, the certificate
    (r"x_bias_minimising_primal|x_balanced",
     r"dtype=None|np\.asarray\((y|C|f), \)|np\.array\(alpha, \)",
     "a float array converted to float: y (svm.data.y), f, C and alpha are float arrays"),
    (r"x_bias_minimising_primal|x_balanced|x_bias_from_kkt", r"y >= 0|y <= 0|y < 1\b|y > -1",
     "the labels are exactly +1 and -1 (svm.data.y): none is 0 or between"),
    (r"x_bias_minimising_primal",
     r"BIAS_FLAT /|searchsorted\(right, -flat, \)|len\(knots\) \+ 1|abs\(right\[k\]\) < flat",
     "the tolerance of a flat piece by a factor (a tie within 1e-12 of the weight), "
     "searchsorted's default side ('left', as written), a cap never reached (at the last "
     "knot the slope is the negatives' weight, >= 0), or a tie at the tolerance itself"),
    (r"x_balanced", r"sp >= sn|sn >= sp",
     "equal sums: the factor is 1 either way"),
    (r"x_margin_certificate",
     r"CERT_ROUNDOFF \* np\.sqrt\(l\) /|CERT_ROUNDOFF / np\.sqrt\(l\)"
     r"|\(size \+ abs\(b\) - 1\.0\)|\(size - abs\(b\) \+ 1\.0\)|\(size \+ abs\(b\) \+ 2\.0\)"
     r"|size = rd / float|einsum\(\"IJ,IJ->I\"|short\.max\(initial=None\)",
     "the round-off allowance made smaller (a stricter certificate: more refusals, never "
     "an acceptance more), or larger by CERT_ROUNDOFF sqrt(l) ~ 1e-15 of the margin; "
     "einsum's indices renamed alike; initial= of a max over the l >= 1 shortfalls"),
    # ---- postprocess: the readers of the duals a user imported
    (r"x_margin_multipliers",
     r"^\+\s*of = None$|getattr\(None, \"of\", None\)|\(of is not None\) and False"
     r"|if of is not None else None\n\+\s*mult = None$",
     "the read of the margin rows as one run (DualMap.of) turned off: row by row "
     "(ctx.dual) reads the same values, divided by the same scale"),
    (r"x_margin_multipliers", r"np\.asarray\((vals|mult|reference), (dtype=None)?\)",
     "a float array converted to float: the duals read (Python floats, DualMap's float64 "
     "values) and the reference C weight_i e_i are float arrays"),
    (r"x_margin_multipliers",
     r"size = max\(float\(np\.sum\(np\.abs\(mult\)\)\), 1\.0\)|\) \* max\(size \+|"
     r"max\(size - float|np\.abs\(ref\)\)\), 1\.0\)\)|-s \* mult\)\)\) \* size$",
     "a positive factor common to both readings' violations (the size they are relative "
     "to, or its floor): user_dual_sign compares the two only by their ratio and by > 0"),
    (r"x_margin_multipliers",
     r"return max\(0\.0, -s \* float\(np\.sum\(mult\)\)\) / size"
     r"|if equality and reference is None and ctx\.verified|if equality or ref is not None"
     r"|ref = None if \(reference is None\) and False else",
     "margin equalities without a reference, or inequalities with one (or with np.asarray(None), "
     "which only the equalities' branch would read): no caller (ls_svm_primal, the one "
     "formulation whose margin rows are equalities, always passes its reference; classic and "
     "l1_norm, inequalities, never do)"),
    (r"x_margin_multipliers|x_user_multiplier",
     r"^\+\s*what = None$|\(their sum\)\" if \(equality\) (and False|or True)|THEIR SUM"
     r"|what=None,$",
     "the text naming what was read, for the note on a flipped sign and the error message: "
     "not an answer"),
    (r"x_margin_multipliers|x_user_multiplier", r"mult / user_dual_sign|d / user_dual_sign",
     "divided by the sign instead of multiplied: user_dual_sign returns exactly 1.0 or -1.0"),
    # ---- postprocess: the dual KKT residual and alpha recovered from a primal
    (r"x_dual_kkt_residual", r"^\+\s*free = None$|free = ~lower \| ~upper",
     "the free set taken larger (every point; or every point not both at 0 and at C): the "
     "residuals of the points at 0 and at C are assigned after it, over the free one"),
    (r"x_dual_kkt_residual", r"None if \(margin\.hard\) and False else C",
     "the hard margin's C as the callers pass it, np.inf: live(inf) is every point, as "
     "live(None) is"),
    (r"x_recover_alpha", r"xi >= xi_thr",
     "a strict for a non-strict comparison with the threshold xi_thr: they differ only on a "
     "slack exactly equal to it"),
    (r"x_recover_alpha", r"D = design / y\[None, :\]",
     "the labels are exactly +1 and -1 (svm.data.y): dividing by y is multiplying by it"),
    (r"x_recover_alpha", r"ub = C if \(margin\.box\) or True else np\.inf",
     "the margin without a box that reaches here is the hard margin, whose C is None: "
     "lsq_linear reads an upper bound None as no bound, as np.inf"),
    (r"x_recover_alpha", r"fixed_c = active & \(xi > xi_thr\) & live\(None, l\)",
     "a point of weight 0 fixed at its C_i = 0 instead of left out of the unknowns: alpha 0 "
     "either way"),
    (r"x_recover_alpha", r"lsmr_tol=None, method=\"bvls\"|bounds=\(0\.0, ub\), method=\"bvls\"",
     "lsmr_tol is read only by the 'trf' method's LSMR solver, not by 'bvls'"),
    # ---- postprocess: the linear polish on the margin rows and the sets it reads
    (r"x_margin_sets", r"held = \(m < 1\.0 - active_tol\) & live\(None, len\(y\)\)",
     "a point of weight 0 below the margin held at its C_i = 0 or not held: alpha 0 either "
     "way (recover_alpha never makes it an unknown; not on the margin, it is no margin row)"),
    (r"x_polish_linear_primal", r"live\(None if \(margin\.hard\) and False else C, l\)",
     "the hard margin's C as every caller passes it, None (point_C(None)): live(C) is "
     "live(None), every point"),
    (r"x_polish_linear_primal", r"rows = np\.hstack\(\[X\[F\] / y\[F, None\]",
     "the labels are exactly +1 and -1 (svm.data.y): dividing by y is multiplying by it"),
    (r"x_polish_linear_primal", r"if F\.size < d - 1 or np\.linalg",
     "the rank test alone refuses fewer than d + 1 rows (rank <= number of rows; 0 for none): "
     "the size test is a shortcut"),
    (r"x_polish_linear_primal", r"wb = np\.linalg\.lstsq\(rows, np\.ones\(F\.size\), \)",
     "lstsq's default rcond is None on NumPy >= 2 (constraints.txt: 2.4): the same call; on "
     "1.x it is eps, below the cut-off eps max(M, N) of the largest singular value that the "
     "rows passed in matrix_rank: no singular value is dropped either way"),
    (r"x_polish_linear_primal", r"np\.where\(held, 2\.0, 0\.0\), C, 0\.5\)",
     "the held points' slack handed to recover_alpha is only compared with xi_thr = 0.5 "
     "(1-norm and hard margin; the 2-norm, which reads C xi, never reaches the linear polish)"),
    # ---- postprocess: the polish's free system, its solvers, the kernel blocks, the objective
    (r"x__solve_free_system", r"^\+.*\.max\(initial=None\)",
     "initial= of a max over an array that is never empty (A, rhs, the solution: n + 1 >= 1 "
     "entries)"),
    (r"x__solve_free_system", r"max\(float\(np\.abs\(rhs\)\.max\(initial=1\.0\)\),|"
                              r"max\(1\.0, float\(np\.abs\(sol\)\.max\(initial=1\.0\)\)\)",
     "a floor of 1 under a max that max(., 1.0) floors at 1 already: the same number"),
    (r"x__solve_free_system",
     r"^\+.*np\.errstate\(invalid=\"ignore\", (over=None, divide=\"ignore\"|"
     r"over=\"ignore\", divide=None|divide=\"ignore\"|over=\"ignore\", )\)",
     "numpy's error state for overflow or division by zero in the solves: whether a "
     "RuntimeWarning is printed, never the answer (a non-finite solution is refused either "
     "way); and neither occurs on finite data of sensible size -- the one division, by "
     "y'H^-1 y, is checked > 0 first, and it overflows only when |A| |rhs| does (1e308)"),
    (r"x__solve_free_system", r"sol = refined\(_bordered_solver\(A, \)\)",
     "one border assumed for the nu-SVM's two (y and e): H then holds the level's row and "
     "column, [[H, e], [e', 0]], which has no Cholesky factor (a zero last pivot), and LU "
     "answers as for any system the Cholesky route refuses (the same solution, refined and "
     "tested alike)"),
    (r"x__solve_free_system", r"\) < POLISH_SOLVED \* scale",
     "the residual test at equality: a residual exactly equal to the threshold (products "
     "of round-off) is not met by any data"),
    (r"x__solve_free_system", r"if \(A\.shape\[0\] > 1\) or True else None|"
                              r"if A\.shape\[0\] >= 1 else None|if A\.shape\[1\] > 1 else None|"
                              r"if A\.shape\[1\] > borders else None",
     "A is square (shape[1] = shape[0]); a 1 x 1 system (never built: the polish solves "
     "only for a free point or more, 2 x 2 and up) through the bordered solver has an empty "
     "H and a border y'H^-1 y = 0, which it refuses, and LU answers as before"),
    (r"x__solve_free_system",
     r"^\+.*(check_finite=(None|True)\)|lu_factor\(A, \)|lu_solve\(lu, r, \))",
     "check_finite only scans LU's input for NaN/inf: A is finite, and a non-finite "
     "right-hand side (a non-finite solution in the refinement) raises ValueError, which "
     "the except around LU takes to least squares, as the NaN answer it replaces is"),
    (r"x__solve_free_system", r"^\+\s+sol = \"\"$",
     "the value left after an exception of lu_factor or lu_solve, which raise only for "
     "malformed arrays (not square, a wrong length), never for the polish's square finite "
     "A: the except is not entered"),
    (r"x__solve_free_system", r"np\.linalg\.lstsq\(A, r, \)",
     "lstsq's default rcond is None on NumPy >= 2 (constraints.txt: 2.4): the same call"),
    (r"x__solve_free_system", r"np\.abs\(A\)\.sum\(axis=1\)\.max\(\)",
     "the norm handed to dgecon: A is symmetric ([[H, y], [y', 0]], H = G(K)), so its "
     "largest row sum is its largest column sum, the same 1-norm"),
    (r"x__solve_free_system", r"np\.abs\(A\)\.sum\(axis=None\)\.max\(\)",
     "the norm handed to dgecon as the sum of all |A_ij|, at most n + 1 times the 1-norm: "
     "the estimate of A's reciprocal condition number smaller by that factor, which moves "
     "no measured system across eps (singular free systems: below 1e-17; nonsingular ones "
     "above 1e-12); one within that factor of eps is singular to n rounding errors, and "
     "least squares answers it instead of LU, within the same residual test"),
    (r"x__solve_free_system", r"\)\[0\] > np\.finfo\(float\)\.eps:",
     "the singularity test at equality: a reciprocal condition number exactly eps"),
    (r"x__solve_free_system", r"np\.finfo\(None\)",
     "np.finfo(None) is float64's, as np.finfo(float)"),
    (r"x__bordered_solver", r"^\+\s+raise np\.linalg\.LinAlgError\(",
     "the message of a LinAlgError that refined() catches (and turns into None): not an "
     "answer"),
    (r"x__bordered_solver", r"^\+.*(cho_factor\((H|S), (check_finite=(None|True))?\)|"
                            r"cho_solve\(cho, (yF|Y), (check_finite=(None|True))?\)|"
                            r"cho_solve\(cho, r\[:(-1|n)\], check_finite=None\)|"
                            r"cho_solve\(schur, t, (check_finite=(None|True))?\))",
     "check_finite only scans the input for NaN/inf: H and its border are finite (the "
     "Gram matrix of finite points); a scan that raised would be caught with the "
     "factorisation's own LinAlgError, and LU answers either way"),
    (r"x__bordered_solver", r"^\+\s+n = A\.shape\[1\] - borders",
     "A is square: its columns are its rows"),
    (r"x__bordered_solver", r"np\.all\(np\.isfinite\(S\)\)\) or True",
     "S = Y'H^-1 Y from a Cholesky factor of finite H and a finite border is finite: the "
     "test is a guard that is never false"),
    (r"x__kernel_diagonal", r"np\.asarray\(svm\.K\[idx, idx\], (dtype=None)?\)",
     "the diagonal of K as the float array it is already (K is float: SignedGram or a "
     "validated precomputed matrix)"),
    (r"x__kernel_diagonal", r"np\.einsum\(\"IJ,IJ->I\"",
     "einsum's subscripts in upper case: the same labels, the same sum"),
    (r"x_block_objective", r"active=True, \)\)$",
     "descend_into's default is True: the same objectives"),
]

RULES += [
    # ---- postprocess: the polish of a dual solution (polish_dual, with residual and better)
    (r"x_polish_dual__", r"max_rounds: int = 26",
     "the default round limit one higher: a cost bound (O(|F|^3) a round); it differs only for a "
     "polish that settles in exactly the 26th round, and when it is reached the input stands, "
     "as at a cycle"),
    (r"x_polish_dual__", r"abs\(float\(y @ a\)\) >= POLISH_BALANCED|new\[1\] > old\[1\] - max"
                         r"|\(m <= 1\.0 - slack\)|\(m >= 1\.0 \+ slack\)",
     "a strict for a non-strict comparison with a tolerance (the balance, the dual's round-off "
     "allowance, the release tolerance): the two differ only on an exact tie at the threshold"),
    (r"x_polish_dual__", r"np\.inf if \(C is None\) and False else C"
                         r"|live\(None if \(margin\.hard\) and False else C, len\(new\)\)",
     "the hard margin's C passed on as the callers give it, None (point_C(None)): "
     "dual_kkt_residual reads C only under margin.box and margin.ridge (both False) and through "
     "live(None if hard ...); live(None) is every point, as live(inf)"),
    (r"x_polish_dual__", r"max\(size, abs\(dual\), \)\)",
     "the floor 1e-300 of the round-off allowance: read only when size and the dual are both 0 "
     "(alpha = 0), where an allowance of 0 or 1e-314 compares the same"),
    (r"x_polish_dual__", r"if \(margin\.box\) or True else np\.zeros_like\(alpha\)",
     "without a box Cb is inf: np.where(alpha >= inf - thr, inf, 0.0) is all zeros, as "
     "np.zeros_like(alpha)"),
    (r"x_polish_dual__", r"tried\.add\(None\)",
     "the cycle guard turned off: the iteration is deterministic in (free, fixed), so an active "
     "set met again repeats until max_rounds and the input comes back, as at the guard (cost "
     "only; tests/test_polish_dual_rules.py's cycle)"),
    (r"x_polish_dual__", r"H = KFF / np\.outer\(y\[F\], y\[F\]\)",
     "the labels are exactly +1 and -1 (svm.data.y): dividing by y_i y_j is multiplying by it"),
    (r"x_polish_dual__", r"low, high = aF <= 0\.0, aF > CbF|low, high = aF < 0\.0, aF >= CbF",
     "a free component solved to exactly 0.0 or exactly C_i held at that value instead of left "
     "free: the same alpha; a later round releases it if its margin asks, and the polish ends at "
     "the same KKT point, judged against the same input"),
    (r"x_polish_dual__", r"free\[F\[low \| high\]\] = None",
     "None stored into a boolean array is False: the same free set"),
    (r"x_polish_dual__", r"m = y \* \(f \+ b\) - \(ratio\(new, C\)"
                         r"|\(ratio\(new, C\) if \(margin\.ridge\) and False else 0\.0\)",
     "the 2-norm's term alpha_i / C_i in the margins: m is read only at the held points, which "
     "without a box are all at 0, where the term is 0"),
    (r"x_polish_dual__", r"np\.max\(np\.abs\(f\), initial=None\)|np\.max\(np\.abs\(f\), \)\)",
     "f has an entry per point (l >= 1): the initial= of its max is never read"),
    (r"x_polish_dual__", r"start = residual\(alpha\) if \(start is None\) or True else start",
     "the input's residual computed again: the same value (it is read once, just before the "
     "return)"),
]

RULES += [
    # ---- methods/cv.py: cross-validation's bookkeeping
    (r"x__refit__|x__task__", r"threadpool_limits\(limits=(None|2)\)",
     "the BLAS threads of a task or of the refit (speed: the matrices of a task are small, "
     "and the tests compare scores and predictions, equal at any thread count)"),
    (r"x__task__", r"fit_path\(.*progress=(None|True),|"
                   r"fit_path\(Xtr, target, Cs, formulation, job\.solver, \*\*hyper, \*\*weights, \*\*options\)",
     "fit_path's progress bar inside a task: display only (None, its default: a bar only "
     "when stderr is a terminal)"),
    (r"x__task__", r"fit_one\(Xtr, target, formulation, job\.solver, \*\*hyper, \*\*options\)",
     "the weights of the single fit: cross_validate takes sample_weight only for a "
     "formulation with C per point, which always has a C path (Cs is never empty for it), so "
     "the single fit (hard margin, C tuning) never has weights"),
    (r"x__task__", r"if len\(job\.classes\) >= 2 and not \(\(target > 0\)",
     "two classes: a fold whose training points hold one of them fails either way (the "
     "fit's DataError, or _not_trained's for a fold of one class): only the message differs"),
    (r"x__task__", r"not \(\(target >= 0\)\.any\(\) and|and \(target <= 0\)\.any\(\)\)|"
                   r"and \(target < 1\)\.any\(\)\)",
     "a problem's targets are +1 or -1 (problem_points): >= 0 is > 0, and <= 0 and < 1 are "
     "< 0 on them"),
    (r"x__task__", r"out\[\"C\"\]\[k\] = np\.nan if \(sol\.C is None\) and False",
     "None stored into a float array is NaN: the same entry"),
    (r"x__task__", r"out\[\"status\"\]\[k:k - m\] =",
     "a failed segment's statuses inserted at k instead of written over k..k+m-1 (list slice "
     "k:k-m is empty): the entries read, 0..n-1, are the same (the list grows past n)"),
    (r"x__task__", r"^\+\s+k = m$",
     "k = m for k += m after a failed segment: the first segment starts at k = 0 (the same "
     "value) and none follows the second"),
    (r"x__task__", r"^\+\s+k -= m$",
     "after a failed C path, the C-tuning solve's failure is inserted (slice -m:0) instead of "
     "written at m..: the row of C tuning then reads the path's failure, the same DataError "
     "of the same training points (a path raises only for data the tuning solve refuses "
     "too: a single class, bad data)"),
    (r"x__table__", r"pending = np\.zeros\(\(len\(rows\), n_folds\), (dtype=None)?\)",
     "the pending mask stored as floats 1.0/0.0: the same truth values (.any(), and "
     "masked_array converts its mask to bool)"),
    (r"x__table__", r"len\(parts\) > 2 else",
     "no scheme has exactly two binary problems (two classes: one; k >= 3 classes: k or "
     "k(k-1)/2 >= 3), so > 1 and > 2 agree"),
    (r"x__table__", r"MaskedArray\(np\.empty\(len\(rows\), dtype=object\), (mask=(None|False))?\)",
     "the mask a param_ column is created with: every row has every parameter (the "
     "settings of a ParameterGrid share their names; C is in every row or none), so every "
     "entry is assigned, which unmasks it"),
    (r"x__table__", r"score_t\[R, fo\] = np\.sum\(\[res\[\"score_time\"\] for res in parts\], "
                    r"(axis=None)?\)",
     "the score time of a row (a diagnostic column: the time spent computing the test "
     "fold's values), never read by the scores, the ranking or the refit"),
    (r"x_whole_path_Cs__", r"regularization_path\(X\[train\], y\[train\], (C_min=None, |)C_max=hi|"
                           r"regularization_path\(X\[train\], y\[train\], C_min=lo, (C_max=None, |)\*\*hyper"
                           r"|np\.clip\(cuts, (None, hi|lo, None)\)",
     "a fold's path over a wider range than PATH_C_RANGE, or one side of the clip left out: "
     "the knots and roots outside the range are clipped to it (the path's own knots inside "
     "are the same), and every cut inside already lies in it"),
    (r"x_whole_path_Cs__|x__from_path__|x__run_done__",
     r"time\.perf_counter\(\) \+ t0|\"fit_time\": np\.full\(n, (None|seconds \* n)\)|bar\.step\(None\)",
     "the fit time of a path's rows and the progress bar's text: diagnostics, never read by "
     "the scores, the ranking or the refit"),
    (r"x__from_path__|x__pairs_task__", r"\"C\": np\.asarray\((None, dtype=float|job\.Cs, dtype=None|job\.Cs, )\)",
     "the C column of a task's result is read only for C tuning's C* (Cs=\"path\" is for "
     "soft_l1_dual), and job.Cs is a tuple of floats already"),
    (r"x__cholesky__", r"dpotrf\(H, (clean=(None|1))?\)",
     "potrf's clean zeroes the factor's other triangle, which potrs and the diagonal test "
     "never read"),
    (r"x__cholesky_solve__", r"LinAlgError\((None|f\"potrs: argument \{\+info\} illegal\")\)",
     "the text of potrs's error (an illegal argument: never met, the factor and the "
     "right-hand side are potrf's and the caller's arrays)"),
    (r"x__fold_scores__", r"np\.full\(len\(cs\), None\)",
     "the scores of a test fold of weight zero as None instead of NaN: stored into the "
     "table's float array they are NaN"),
    (r"x__pairs_task__", r"has = np\.zeros\(len\(job\.classes\), (dtype=None)?\)",
     "the classes present as 0./1. floats: the same truth values and cumsum, the labels "
     "handed to fit_pairs the same class indices as floats (compared and maxed, never used "
     "to index)"),
    (r"x__pairs_task__", r"Cs=job\.Cs\) if \(trained\) or True else|else \[\[\]\] / n$",
     "no pair trained (a fold of one class): fit_pairs handed no pair raises (no plan), as "
     "[[]] / n does, and the except leaves every pair to _task, which fails each as the "
     "fold of one class: the same results"),
    (r"x__pairs_task__", r"dict\(job\.solve_kw\), (gram=None, )?Cs=job\.Cs\)|^\+\s*K = None$",
     "the fold's matrix not handed over: fit_pairs forms the same one itself (the rbf kernel "
     "on the same points, up to PAIRS_GRAM_MAX; beyond, libsvm evaluates it): speed only, "
     "each pair's answer certified either way"),
    (r"x_resolved_gamma__", r"kernel = params\.get\(\"kernel\", (None|f\.defaults\.get\((None|\"XXkernelXX\"|\"KERNEL\")\))?\)",
     "the default kernel read as None: every formulation that takes gamma defaults to the "
     "linear kernel (the registry), and None and \"linear\" both leave gamma unresolved"),
    (r"x__prediction_changes__", r"np\.errstate\(|root\[np\.isfinite\(root\) (\||&) \(root >=? 0\)\]",
     "warnings only (the roots are computed where a value changes sign, between two positive "
     "knots: finite and positive)"),
    (r"x__table__", r"ok\[c\] = None$",
     "None assigned into a boolean array is False, as the original's False"),
    (r"x__table__", r"if \(not pending\.any\(\)\) and False else",
     "the masked average with nothing masked: the same sum over the same count, bit for "
     "bit (NaN scores of failed folds stay NaN either way)"),
    (r"x_best_index__|x__best_so_far__",
     r"np\.asarray\(table\[\"mean_test_score\"\], (dtype=None)?\)|np\.where\(complete, means, None\)",
     "mean_test_score is a float array already; a None put in by np.where is read as NaN by "
     "best_index (asarray(dtype=float))"),
    (r"x_predicted_index__", r"astype\(None\)",
     "the binary prediction as floats 0.0/1.0: its one use compares it with the class "
     "indices 0/1 (pred == job.y[test])"),
    (r"x__task__", r"^\+ {16}out\[\"fit_time\"\]\[k:k - m\] = \(|"
                   r"^\+ {16}out\[\"fit_time\"\]\[k:k \+ m\] = \(time\.perf_counter\(\) - t0\) \* m$",
     "the fit time of a segment that raised (left 0, or m^2 times its share of a failure's "
     "few milliseconds): a timing, not an answer (the successful segments' times are checked "
     "against the call's wall time)"),
    (r"x__task__", r"m = len\(Cs\) if Cs else 2",
     "m = 2 for a single fit: its fit time halved (a timing) and, on a failure, one status "
     "more past the n read"),
    (r"x__table__", r"table\[\"status\"\] = np\.array\(status, (dtype=None)?\)",
     "the statuses as a str array instead of an object array: the same strings, compared "
     "and read the same way"),
    (r"x__table__", r"c_star\[~tuned_rows\] = None",
     "None stored into a float array is NaN: the same entries"),
    (r"x__table__", r"np\.nanmin\(means\) - 2 if|np\.isfinite\(means\)\.any\(\) else 1,",
     "the value ranking a failed row: any value below the lowest finite mean ranks it last; "
     "when no row has a mean, every row ties (rank 1) whatever the value"),
    (r"x_best_index__", r"Cs\[i\] or 1\.0",
     "the fallback of 'Cs[i] or 0.0' is read only for the C-tuning rows (C=None), which the "
     "first key already puts last (the Cs are positive, never falsy)"),
    (r"x__labelled__", r"as_matrix\(X, (name=(None|\"x\"))?\)",
     "the name as_matrix gives X in its error messages: text only"),
    (r"x__job__", r"ParameterGrid\(grid\)\) if \(grid\) or True else",
     "ParameterGrid({}) is [{}] too: the same single setting"),
    (r"x_cross_validate__", r"^\+\s+parallel = (None|n_jobs not in \(None, 2\))$",
     "a run over processes made serial (n_jobs = 2): the table and the refit are the same bit "
     "for bit either way (test_cv.py's joblib and Dask tests against the serial run)"),
    (r"x_cross_validate__",
     r"^\+\s+speculation = None$|speculation = _Speculation\(refit, table\) if \(parallel and "
     r"refit is not None\) (and False|or True)|_Speculation\(None, table\)|"
     r"if parallel or refit is not None else None|if parallel and refit is None else None|"
     r"_Pool\(job, n_jobs\) if \(parallel\) and False|_run_joblib\(job, keys, pool, bar, (None)?\)|"
     r"^\+\s+refitted = None$|refitted = speculation\.take\(row\) if \(speculation is not None\) "
     r"and False|speculation\.take\(None\)|\"speculated\": list\(speculation\.futures\) if "
     r"\(speculation\) and False",
     "the speculative refit is a shortcut: without it (or with a refit that fails in the "
     "worker) the refit is made in this process, the same call with the same result, bit "
     "for bit; a _Speculation in a serial run is never given a worker; a parallel run made "
     "serial gives the same table; 'speculated' (the rows refitted speculatively) is a "
     "diagnostic"),
    (r"x_cross_validate__", r"Progress\(len\(keys\), (label=None, )?(label=\"cross-validation\", )?"
                            r"(enabled=(None|progress))?\)",
     "the progress bar of the tasks (its label, or its default: a bar only when stderr is a "
     "terminal): display only"),
    (r"x__task__", r"\"status\": \[\"(XXoptimalXX|OPTIMAL)\"\] \* n,",
     "the initial status of a task's solves: every one of the n entries is written after "
     "(the segments' solves are n in all: the C path, then the C-tuning or single fit)"),
    (r"x__task__", r"out\[\"(XXfit_timeXX|FIT_TIME)\"\]\[k:k \+ m\]",
     "the fit time of a segment that raised, left 0: a timing, not an answer"),
    (r"x_cross_validate__", r"label=\"XXcross-validationXX\"|solver: str = \"AUTO\"",
     "the progress bar's label (display only), or the default solver spelt \"AUTO\" (the "
     "backend names are read lower-cased: the same \"auto\")"),
    (r"x_cross_validate__", r"\"(XXsourceXX|SOURCE)\": \"speculative\"|"
                            r"\"source\": \"(XXspeculativeXX|SPECULATIVE)\"",
     "where a speculative refit was made ('source', a diagnostic of parallel runs; the "
     "refit is the same call with the same result wherever it runs)"),
    (r"x__labelled__", r"as_matrix\(X, name=\"XXXXX\"\)",
     "the name as_matrix gives X in its error messages: text only"),
    (r"x__note__", r".",
     "the note of a finished task on the progress bar (fold, problem, setting): display only"),
    (r"x__failed__", r"\"(XXvaluesXX|VALUES)\": np\.full|np\.full\(\(n, len\(job\.folds\[key\[0\]\]\[1\]\)\), None\)",
     "the decision values of a task that died: never read, for its statuses are all failures "
     "(the table reads values only where a status is 'optimal')"),
    (r"x__run_serial__", r"bar\.step\(None\)",
     "the note of a finished task on the progress bar: display only"),
    (r"x__check_workers__", r"if client is (not )?None (and|or) n_jobs (not )?in \(None, [12]\):|"
                            r"effective_n_jobs\(None\)",
     "how many processes to start: each of these makes a run over processes serial (n_jobs "
     "None, or effective_n_jobs(None) = 1) or leaves it so; a serial run gives the same table "
     "and refit bit for bit (test_cv.py's joblib and Dask tests against the serial run), and "
     "a run with a client takes the Dask branch before n_jobs is read"),
    (r"x__run_dask__", r"^\+.*client\.scatter\(job, (broadcast=(None|True|False), )?(hash=(None|True|False))?\)",
     "how the job is scattered (to one worker, the others fetching it on first use, instead "
     "of broadcast; its key from a hash of its content or random): the same job on every "
     "worker (speed only)"),
    (r"x__run_dask__", r"^\+.*client\.submit\(_task, shared, key, (pure=(None|True|False), )?(retries=(None|0))?\)",
     "the tasks submitted as pure (each key is distinct, so nothing is merged) or with "
     "retries=None (no retries, as 0)"),
    (r"x__run_dask__", r"^\+.*client\.submit\(_task, shared, key, pure=False, retries=1\)",
     "one retry of a task: _task never raises (it records every error in its result), so a "
     "retry could only rerun a task lost with its worker, giving the same result; whether "
     "such a task is lost is the scheduler's allowed_failures (KilledWorker either way in "
     "test_cv.py's killed-worker test, planted by hand)"),
    (r"x__run_dask__", r"^\+\s+client\.cancel\(None\)$",
     "cancelling the futures left at the end: after a finished run none is left; after an "
     "early stop (the caller's error) they are released with their references anyway"),
    (r"x__run_dask__", r"^\+\s+bar\.step\(None\)$",
     "the note of a finished task on the progress bar: display only"),
    # ---- cv.py's parallel bookkeeping on threads (tests/test_cv_threads.py, thirteenth session)
    (r"x__run_joblib__", r"^\+\s+bar\.step\(None\)$",
     "the note of a finished task on the progress bar: display only"),
    (r"x__run_joblib__", r"cost\[key\[2:\]\] = ",
     "the fit times of finished tasks keyed by problem instead of (setting, problem): only "
     "the order in which the tasks left are given out (_longest_first) changes -- speed; "
     "each task still runs once and its result is stored under its own key"),
    (r"x__run_joblib__", r"pool\.n_workers - len\(running\) \+ speculation\.running\(\) > 0",
     "a further speculative refit while one runs, only when the best row so far has changed "
     "(submit makes one refit per row): a worker's time, not an answer -- the refit taken is "
     "the final best row's, made in this process when no worker made it"),
    (r"xǁ_Poolǁ__enter____", r"^\+\s+\)$|TemporaryDirectory\((prefix=None,|ignore_cleanup_errors=True\)|"
                             r"prefix=\"(XXsvm_models_cv_XX|SVM_MODELS_CV_)\",|\s*\)$)|"
                             r"ignore_cleanup_errors=(None|False)\)|"
                             r"os\.path\.join\(self\._dir\.name, \"(XXjob\.pklXX|JOB\.PKL)\"\)",
     "the name of the job's temporary directory and file (any name: the workers are handed "
     "the path), or cleanup errors raised instead of ignored (removing a file a worker still "
     "maps does not fail on POSIX; test_cv.py's killed-worker test finds the workers by the "
     "prefix, a detail of that test)"),
    (r"x_problem_points__", r"np\.where\(yi\[keep\] == pos, (2, -1|1, -2)\)",
     "the targets +2/-1 or +1/-2 for +1/-1: fit takes any two labels, the larger the "
     "positive class (the same decision values, checked), and Platt's fit reads t > 0"),
    # ---- postprocess.py: the margin readers (levels, _free_solution, margin_certificate)
    (r"x_levels__", r"np\.asarray\(C, (dtype=None)?\)",
     "the boxes C_i read without dtype=float: only compared (> 0, < upper - thr, >= upper - "
     "thr), where an integer box compares as its float"),
    (r"x__free_solution__", r"_kernel_block\(svm, F\) / np\.outer\(y\[F\], y\[F\]\)",
     "y_i y_j divided instead of multiplied: y_i = +-1, so y_i y_j = 1 / (y_i y_j)"),
    (r"x__free_solution__", r"_solve_free_system\(A, np\.concatenate\(rhs\), \)",
     "one border named where a level margin has two: the Cholesky route then meets the zero "
     "diagonal of the first border and raises, and the LU route solves the same system to "
     "the same residual test (checked by hand on a nu-SVM: same alpha, certificate 4e-13): "
     "a speed difference only"),
]

KEYS = ("killed", "survived", "timeout", "no tests", "not checked", "other")


def modules() -> list[str]:
    cfg = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]
    return list(cfg["only_mutate"])


def results() -> dict[str, dict[str, int | None]]:
    out = {}
    for mod in modules():
        meta = Path("mutants") / (mod + ".meta")
        out[mod] = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
    return out


def changed_lines(name: str, path: str) -> list[str]:
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    diff = get_diff_for_mutant(name, path=path)
    return [line for line in diff.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def reason(name: str, changed: list[str]) -> str | None:
    func = name.rsplit(".", 1)[-1]
    text = "\n".join(changed)
    for fpat, cpat, why in RULES:
        if re.search(fpat, func) and re.search(cpat, text, re.MULTILINE):
            return why
    return None


def main(argv: list[str]) -> int:
    res = results()
    print("| module | mutants | killed | survived | timeout | no tests | not checked | score |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    total = Counter()
    for mod, codes in res.items():
        c = Counter(STATUS.get(v, "other") for v in codes.values())
        c["mutants"] = len(codes)
        total.update(c)
        tried = c["killed"] + c["survived"] + c["timeout"]
        score = f"{100 * (c['killed'] + c['timeout']) / tried:.1f}%" if tried else "-"
        print(f"| {mod} | {len(codes)} | {c['killed']} | {c['survived']} | {c['timeout']} | "
              f"{c['no tests']} | {c['not checked']} | {score} |")
    tried = total["killed"] + total["survived"] + total["timeout"]
    if tried:
        print(f"| all | {total['mutants']} | {total['killed']} | {total['survived']} | "
              f"{total['timeout']} | {total['no tests']} | {total['not checked']} | "
              f"{100 * (total['killed'] + total['timeout']) / tried:.1f}% |")
    if "--summary" in argv:
        return 0
    print()
    open_ = 0
    by_reason: dict[str, list[tuple[str, list[str]]]] = {}
    for mod, codes in res.items():
        for name, code in codes.items():
            if STATUS.get(code) != "survived":
                continue
            changed = changed_lines(name, mod)
            why = reason(name, changed) or "OPEN: no rule names it equivalent"
            open_ += why.startswith("OPEN")
            by_reason.setdefault(why, []).append((name, changed))
    for why, items in sorted(by_reason.items(), key=lambda kv: (not kv[0].startswith("OPEN"),
                                                                  -len(kv[1]))):
        print(f"### {len(items)} x {why}\n")
        for name, changed in items:
            short = " / ".join(line.strip() for line in changed if line.startswith("+"))
            print(f"- `{name.split('.', 2)[-1]}`: `{short[:140]}`")
        print()
    print(f"surviving mutants without a named reason (OPEN): {open_}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
