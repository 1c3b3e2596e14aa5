"""What loops over solves: parameter paths (:mod:`.paths`), the saddle-point check of the
C-tuning QCQP (:mod:`.saddle`). Built on :mod:`svm_models.api`; nothing below imports it."""
