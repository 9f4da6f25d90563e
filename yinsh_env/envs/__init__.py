"""The environments over the engine: PettingZoo (AEC), Gymnasium and OpenSpiel.

* :mod:`yinsh_env.envs.aec_env`: ``env()``/``raw_env()``, one decision per step;
* :mod:`yinsh_env.envs.gym_env`: ``Yinsh-v0``, the opponent's decisions folded into each step
  (``ShapedReward`` adds dense rewards);
* :mod:`yinsh_env.envs.env_base`: what the three environments (the vector one too) share:
  seats, rewards, the observation space, option checks, dense rewards;
* :mod:`yinsh_env.envs.observation`: the observation planes and dict every environment returns;
* :mod:`yinsh_env.envs.matchmaking`: who the learner plays next (fixed mixes, pools, PFSP, leagues);
* :mod:`yinsh_env.envs.openspiel`: YINSH as an OpenSpiel game (optional).

The vector environment, many games at once, is :mod:`yinsh_env.vector`.
"""
