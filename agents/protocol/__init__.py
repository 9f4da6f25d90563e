"""The engine protocol: any program that speaks it plays in the arena, and any agent serves it.

* :mod:`agents.protocol.line_protocol`: the line protocol between a controller and an engine;
* :mod:`agents.protocol.engine_cli`: ``yinsh-engine``, an agent served over it;
* :mod:`agents.protocol.external_engine`: an engine program as an agent (``engine:cmd=...``).
"""
