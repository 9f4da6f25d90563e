"""Small utilities every package uses: files written whole, file hashes, strict numbers.

Below the engine: importing them loads nothing else of the project, so the
agents and the trainer reach them without going through the environments.

* :mod:`yinsh_env.util.atomic_write`: files written whole or not at all, never through a link;
* :mod:`yinsh_env.util.file_hash`: a regular file's SHA-256;
* :mod:`yinsh_env.util.numeric_text`: numbers read strictly from text (no ``nan``, no ``1e999``).
"""
