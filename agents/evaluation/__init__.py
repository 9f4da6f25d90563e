"""Evaluation as engine developers do it: matches, ratings that compare, tests that stop.

* :mod:`~agents.evaluation.arena` plays matches and round robins
  (``yinsh-eval``, :mod:`~agents.evaluation.eval_cli`), each game one
  :mod:`~agents.evaluation.match` loop over the PettingZoo env, game pairs
  from seeded openings (:mod:`~agents.evaluation.games`), on this machine or
  on Ray (:mod:`~agents.evaluation.runners`, :mod:`~agents.evaluation.match_worker`,
  :mod:`~agents.evaluation.ray_runner`), your own agents included once they
  can travel (:mod:`~agents.evaluation.travel`, :mod:`agents.byo`; in
  ``yinsh-play``, in a process of their own: :mod:`~agents.evaluation.isolated`), all
  played as one :class:`~agents.evaluation.settings.MatchSettings` says, each
  agent shown by its spec or a short name (:mod:`~agents.evaluation.names`);
* :mod:`~agents.evaluation.elo` fits Bradley-Terry ratings;
  :mod:`~agents.evaluation.scale` holds the fixed rating scale (frozen
  anchors, ``random`` = 0) every printed Elo is on when its anchors take part,
  calibrated by :mod:`~agents.evaluation.calibrate`; ``--rate``
  (:mod:`~agents.evaluation.rate`) places one agent on it;
* :mod:`~agents.evaluation.sprt`: the sequential test on game pairs
  (``--sprt``);
* :mod:`~agents.evaluation.results_db`: every finished game in SQLite
  (``--db``), rated by ``yinsh-ratings`` (:mod:`~agents.evaluation.ratings_cli`),
  each game with the code's version (:mod:`~agents.evaluation.version`).
"""
