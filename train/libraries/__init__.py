"""Training with RL libraries: examples that train policies the learned agents play.

* :mod:`train.libraries.sb3_maskable_ppo`: sb3-contrib's MaskablePPO against baselines,
  a league or itself (``--save MODEL.zip``);
* :mod:`train.libraries.sb3_arguments`: its command line, each option checked as read;
* :mod:`train.libraries.sb3_selfplay`: its opponents: frozen snapshots, pools,
  curricula, and the callbacks that keep them;
* :mod:`train.libraries.sb3_callbacks`: its time budgets and progress callbacks;
* :mod:`train.libraries.sb3_fast`: its rollout buffer with bool masks and its fused Adam;
* :mod:`train.libraries.snapshot_batch`: its snapshots deciding together, one grouped pass;
* :mod:`train.libraries.rllib_example`: RLlib's PPO on the multi-agent environment
  (``--save DIR``);
* :mod:`train.libraries.rllib_arguments`: its command line (PPO's settings, the network,
  shaping, the league), read without Ray;
* :mod:`train.libraries.rllib_league`: its league of snapshots and fixed opponents;
* :mod:`train.libraries.rllib_vector`: its PPO on the vector environment (``--env vector``,
  the recipe's), the opponents inside the environment;
* :mod:`train.libraries.rllib_learner`: its learner, RLlib's PPO learner with the
  single-file PPO's Adam and advantage standardisation, training on decisions alone;
* :mod:`train.libraries.ppo`: a single-file PPO in plain PyTorch, read top to bottom;
* :mod:`train.libraries.ppo_games`: its games' openings, opponents, results, checks;
* :mod:`train.libraries.ppo_report`: its progress lines, TensorBoard scalars, saved policies;
* :mod:`train.libraries.dataclass_args`: its command line, made from its dataclass;
* :mod:`train.libraries.recipe`: ``--recipe FILE``, each script's settings from a YAML
  file in ``configs/`` (``ppo.yaml``, ``torchrl.yaml``, ``sb3.yaml``, ``rllib.yaml``),
  or a shipped one by name (``--recipe sb3``);
* :mod:`train.libraries.torchrl_ppo`: the same recipe from TorchRL's parts (its
  ``GymWrapper``, ``MaskedCategorical``, ``ClipPPOLoss``, ``GAE`` and collector;
  ``--save POLICY.pt``, played as ``torchrl:path=POLICY.pt``);
* :mod:`train.libraries.progress`: a library run's progress (a line every 30 s,
  TensorBoard scalars, a bar on a terminal);
* :mod:`train.libraries.match_results`: a trained policy's results, the SB3 and RLlib
  examples' closing line.

All four pick their opponents with :mod:`yinsh_env.envs.matchmaking`.

The networks they train, and the agents that play them, are :mod:`agents.learned`.
"""
