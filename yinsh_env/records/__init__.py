"""Game records: a game as a file and back, in every format the project reads.

* :mod:`yinsh_env.records.game_record`: :class:`~yinsh_env.records.game_record.GameRecord`, a game's
  moves, players and result;
* :mod:`yinsh_env.records.formats`: ``load_record``/``save_record`` by file suffix,
  and the format registry;
* :mod:`yinsh_env.records.record_text`: the project's own text format (``.yinsh``);
* :mod:`yinsh_env.records.sgf` (over :mod:`yinsh_env.records.sgf_syntax`): Smart Game Format;
* :mod:`yinsh_env.records.bga`: Board Game Arena's JSON replays (read only).
"""
