"""Evaluation: ratings that compare across runs, sequential tests, the results database.

* :mod:`~agents.evaluation.scale`: the fixed rating scale (frozen anchors,
  ``random`` = 0) that every printed Elo is on when its anchors take part;
* :mod:`~agents.evaluation.calibrate`: how the anchors' ratings were measured.
"""
