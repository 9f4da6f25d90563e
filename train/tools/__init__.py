"""Tools for finished runs: curves, archives, averaged and distilled networks, the shipped one.

* :mod:`train.tools.curve`: a run's strength on the fixed scale, iteration by iteration;
* :mod:`train.tools.plot`: learning curves from ``metrics.jsonl``;
* :mod:`train.tools.scalars`: a library run's TensorBoard curves as a small CSV;
* :mod:`train.tools.run_archive`: a run's text and chosen checkpoints, saved for git
  and restored with their hashes checked;
* :mod:`train.tools.average`: the weight average of a run's last checkpoints;
* :mod:`train.tools.distill`: a student network fitted to a teacher's searches;
* :mod:`train.tools.ship_network`: a checkpoint exported as a shipped network, and what
  a shipped file says about itself.

Each is a command, ``python -m train.tools.NAME --help``.
"""
