"""The baselines: players without a network, from one-ply greedy to tree search.

* :mod:`agents.baselines.heuristics`: the hand-made evaluation they share;
* :mod:`agents.baselines.greedy`: one ply on the evaluation;
* :mod:`agents.baselines.greedy_batch`: the same for many games at once (``act_batch``,
  on the batched engine's public API);
* :mod:`agents.baselines.alphabeta`: alpha-beta with iterative deepening;
* :mod:`agents.baselines.mcts`: UCT with random rollouts, on the search core (:mod:`agents.search`);
* :mod:`agents.baselines.openspiel_mcts`: OpenSpiel's MCTS as an agent (optional).
"""
