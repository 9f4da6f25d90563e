"""The rules engine: one game of YINSH, its notation and its refusals.

* :mod:`yinsh_env.engine.state`: :class:`~yinsh_env.engine.state.State`, the complete rules;
  :mod:`yinsh_env.engine.movegen` and :mod:`yinsh_env.engine.rows` its move and row generation,
  :mod:`yinsh_env.engine.game_end` how a game ends (winner, result, returns);
* :mod:`yinsh_env.engine.geometry`: the 85 points, lines and symmetries;
* :mod:`yinsh_env.engine.zobrist`: hashing;
* :mod:`yinsh_env.engine.actions`: the 2,142 flat actions and their notation;
* :mod:`yinsh_env.engine.action_input`: what a person types, read;
* :mod:`yinsh_env.engine.vocabulary`: players, phases, results;
* :mod:`yinsh_env.engine.errors`: the refusals;
* :mod:`yinsh_env.engine.position_text`: a position as text and back.

Imports nothing from the environments or records: engine-only users (search,
protocol engines) load neither Gymnasium nor PettingZoo.
"""
