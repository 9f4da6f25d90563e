"""The network as a player: everything ``net:`` and ``pretrained`` need to play.

* :mod:`agents.network.agent`: the ``net:path=...`` agent, a checkpoint with its search;
* :mod:`agents.network.pretrained`: the ``pretrained`` agent, the shipped networks by name
  (their files in ``weights/``);
* :mod:`agents.network.graphs`: the shipped networks' ONNX graphs, played in ONNX Runtime
  without torch; :mod:`agents.network.export_onnx` makes them from the checkpoints;
* :mod:`agents.network.network`: the residual policy-value network (PyTorch);
* :mod:`agents.network.policy_map`: where each action's logit sits in the policy planes
  (numpy: the graphs need it without torch);
* :mod:`agents.network.play_config`: the network's shape and search settings a checkpoint
  holds (the trainer's config builds on them);
* :mod:`agents.network.checkpoint`: reading a checkpoint, refused in one line when unusable;
* :mod:`agents.network.search_rules`: the search core (:mod:`agents.search`) configured as PUCT
  or Gumbel from those settings;
* :mod:`agents.network.inference`: batched evaluation of search leaves in PyTorch, and
  the device checks;
* :mod:`agents.network.onnx_inference`: the same evaluation in ONNX Runtime (faster on
  a CPU), the graph exported from the PyTorch network;
* :mod:`agents.network.quantize`: int8 convolutions for that graph, calibrated on
  positions of play.

The trainer (:mod:`train`) builds on these; nothing here imports it.
Modules are imported on use: ``import agents.network`` loads nothing heavy.  Playing a
checkpoint file needs torch (the ``train`` extra); the shipped networks need only ONNX
Runtime (``pip install yinsh``).
"""
