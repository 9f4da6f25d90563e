"""The AlphaZero-style self-play trainer: tree search plus a PyTorch network.

One job per module, in the order data flows through a run
(``yinsh-train``, :mod:`train.train_cli` -> :func:`train.trainer.run`):

* :mod:`train.train_cli`: the ``yinsh-train`` command;
* :mod:`train.config`: a run's config, from YAML and overrides, errors naming the key;
* :mod:`train.config_schema`: every hyper-parameter, its default and constraint;
* :mod:`train.bounded_yaml`: YAML read with bounded work (configs, overrides);
* :mod:`train.config_files`: the shipped configs by name (``--config quick``);
* :mod:`train.preflight`: what the run needs of this machine, checked before any work;
* :mod:`train.trainer`: the loop: prepare (fresh, resume, start weights), play, learn,
  checkpoint, evaluate;
* :mod:`train.init_weights`: a new run's network from an earlier one's weights;
* :mod:`train.grow`: a network grown wider or deeper, computing the same function;
* :mod:`train.selfplay`: many games in flight, one network batch per step;
* :mod:`train.executor`: what every self-play backend shares;
* :mod:`train.selfplay_workers`: where self-play runs (in process, worker processes);
* :mod:`train.ray_backend`: self-play on Ray actors;
* :mod:`train.replay`: the replay window and symmetry-augmented batches;
* :mod:`train.learner`: losses, AdamW, the learning-rate schedule;
* :mod:`train.run_checkpoint`: atomic checkpoints, exact resume;
* :mod:`train.cpu_clock`: the CPU seconds a run spends;
* :mod:`train.evaluate`: arena matches, Elo across checkpoints, the best one.

The network, its search and its inference are the player's (:mod:`agents.network`):
the trainer builds on them.  Sub-packages: :mod:`train.libraries` (training with
SB3 and RLlib) and :mod:`train.tools` (curves, archives, averaging, distillation,
exporting the shipped network: for finished runs).

Modules are imported on use: ``import train`` loads nothing heavy.
"""
