"""Policies trained with RL libraries as players: ``sb3:``, ``rllib:``, ``ppo:``, ``torchrl:``.

* :mod:`agents.learned.library_agent`: what both loaders share (greedy or
  sampled play over the legal actions, the variant saved beside a model);
* :mod:`agents.learned.sb3_agent`: the ``sb3:`` agent, a MaskablePPO zip (sb3-contrib);
* :mod:`agents.learned.sb3_models`: the networks a MaskablePPO zip names (the planes
  CNN and its policy, the warm start from the shipped network);
* :mod:`agents.learned.precision`: bf16 where the CPU multiplies it natively, float32
  elsewhere (the MaskablePPO policy's training precision);
* :mod:`agents.learned.rllib_agent`: the ``rllib:`` agent, an RLlib module checkpoint;
* :mod:`agents.learned.rllib_models`: the masked policy module an RLlib checkpoint holds;
* :mod:`agents.learned.sb3_masking`: MaskablePPO's masked distribution in as few
  passes over the logits as can be;
* :mod:`agents.learned.ppo_agent`: the ``ppo:`` agent, a policy of the single-file PPO;
* :mod:`agents.learned.ppo_policy`: that PPO's network, its saved-policy file, batched play;
* :mod:`agents.learned.torchrl_agent`: the ``torchrl:`` agent, a policy of the TorchRL
  recipe (that network, saved as plain weights: it plays without TorchRL);
* :mod:`agents.learned.small_cnn`: the conv trunk both libraries' networks share;
* :mod:`agents.learned.renamed`: files saved under the classes' old module paths
  (``train.sb3_maskable_ppo``) keep loading.

* :mod:`agents.learned.sb3_safe`, :mod:`agents.learned.pickle_check`: model files
  are pickles, and unpickling runs code: the loaders never unpickle anything but
  the classes a YINSH policy holds (:data:`MODEL_FILES_NOTE`).

The training scripts are :mod:`train.libraries`; a saved policy plays without them.
Each loader needs its library's extra (``sb3``, ``rllib``).
"""

#: What the command lines' help says of model files (``--help``).
MODEL_FILES_NOTE = (
    "Model files can hold code: sb3:/rllib: files are pickles, which run code when "
    "unpickled, so these loaders never unpickle anything but the classes a YINSH policy "
    "holds and refuse other files; py: and engine: agents run code by design."
)
