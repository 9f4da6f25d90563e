"""The AlphaZero-style self-play trainer: tree search plus a PyTorch network.

One job per module, in the order data flows through a run
(``yinsh-train``, :mod:`train.cli` -> :func:`train.trainer.run`):

* :mod:`train.config`: every hyper-parameter, from YAML and overrides;
* :mod:`train.network`: the residual policy-value network;
* :mod:`train.mcts`: the search core (:mod:`agents.search`) configured as PUCT or Gumbel;
* :mod:`train.inference`: batched network evaluation of search leaves;
* :mod:`train.selfplay`: many games in flight, one network batch per step;
* :mod:`train.executor`: what every self-play backend shares;
* :mod:`train.workers`: where self-play runs (in process, worker processes; Ray in
  :mod:`train.ray_backend`);
* :mod:`train.replay`: the replay window and symmetry-augmented batches;
* :mod:`train.learner`: losses, AdamW, the learning-rate schedule;
* :mod:`train.checkpoint`: atomic checkpoints, exact resume;
* :mod:`train.evaluate`: arena matches, Elo across checkpoints, the best one;
* :mod:`train.agent`: the ``net:path=...`` agent;
* :mod:`train.plot`: learning curves from ``metrics.jsonl``.

Library examples beside it: :mod:`train.sb3_maskable_ppo` (sb3-contrib's
MaskablePPO) and :mod:`train.rllib_example` (RLlib's PPO), whose saved
policies play as agents ``sb3:path=MODEL.zip`` (:mod:`train.sb3_agent`) and
``rllib:path=DIR`` (:mod:`train.rllib_agent`).

Modules are imported on use: ``import train`` loads nothing heavy.
"""
