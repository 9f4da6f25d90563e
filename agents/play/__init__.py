"""Playing a game as a person: ``yinsh-play`` and the terminal board.

* :mod:`agents.play.play_cli`: ``yinsh-play``, a match between any two agents or a person
  (the terminal, or ``--web`` for the browser app of :mod:`agents.web`);
* :mod:`agents.play.terminal`: the terminal player: the board, typed moves, ``undo``, hints.
"""
