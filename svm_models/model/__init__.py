"""What every builder shares: lazy Pyomo members, the record (pure data) and its proof,
quadratic forms and cones, the standard form solvers are fed with, the general reader,
and the shared modelling pieces. Imports only :mod:`svm_models.data`, ``kernels``,
``errors`` and ``tolerances`` from the package."""
