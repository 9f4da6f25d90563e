"""The README and the documentation pages stay true: their links resolve, their
commands name real programs, CI runs the README's test command, the README links
to every page of the guide and the studies, its Python examples run, it stays a
landing page, and the protocol page's transcript is what the engine answers."""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path
from typing import Any

from agents import make_agent
from agents.protocol.line_protocol import serve

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The hand-written pages of the documentation site (api/_generated/ is generated).
PAGES = sorted(
    path
    for folder in ("", "guide", "studies", "api")
    for path in (ROOT / "docs" / folder).glob("*.md")
)
TEXTS = {ROOT / "README.md": README} | {p: p.read_text(encoding="utf-8") for p in PAGES}
#: The line of the README that gives the test command.
TEST_COMMAND_LINE = re.compile(r"^(python3 -m pytest[^#\n]*?)\s+# the test suite$", re.MULTILINE)


def relative_links(text: str) -> list[str]:
    """Targets of Markdown links and images that point into the repository."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [t.split("#")[0] for t in targets if not t.startswith(("http:", "https:", "#"))]


def test_every_relative_link_resolves() -> None:
    links = [(path, link) for path, text in TEXTS.items() for link in relative_links(text)]
    assert len(links) > 20  # pictures, pages and files the README and the guide point to
    missing = [f"{p.name}: {link}" for p, link in links if not (p.parent / link).exists()]
    assert not missing, f"links to missing files: {missing}"


def test_a_missing_link_is_caught() -> None:
    assert relative_links("see [`x`](no/such.py) and [y](https://e.org) and [z](#anchor)") == [
        "no/such.py"
    ]


def test_the_readme_links_to_every_guide_page_and_study() -> None:
    guide = sorted((ROOT / "docs" / "guide").glob("*.md"))
    studies = sorted((ROOT / "docs" / "studies").glob("*.md"))
    assert len(guide) >= 10 and len(studies) >= 4
    linked = {(ROOT / link).resolve() for link in relative_links(README)}
    assert not [p.name for p in guide + studies if p.resolve() not in linked]


def test_the_readme_is_a_landing_page() -> None:
    lines = README.splitlines()
    assert len(lines) <= 130, f"the README has {len(lines)} lines: results belong in docs/studies"
    long = [n for n, line in enumerate(lines, 1) if len(line) > 200]
    assert not long, f"README lines over 200 characters: {long}"


def python_blocks(text: str) -> list[str]:
    """The bodies of a Markdown text's fenced ``python`` code blocks."""
    return re.findall(r"^```python\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)


def test_python_blocks_are_found() -> None:
    text = "x\n```python\na = 1\n```\n```bash\nls\n```\n```python\nb = 2\nc = 3\n```\n"
    assert python_blocks(text) == ["a = 1\n", "b = 2\nc = 3\n"]


def test_the_readme_python_examples_play_a_game_to_its_end() -> None:
    pettingzoo, gymnasium, vector = python_blocks(README)  # AEC, Gymnasium, many games
    scope: dict[str, Any] = {}
    exec(compile(pettingzoo, "README.md (PettingZoo)", "exec"), scope)
    assert scope["game"].agents == [], "the AEC loop ends when every agent has left"
    assert scope["game"].unwrapped.game.is_terminal
    scope = {}
    exec(compile(gymnasium, "README.md (Gymnasium)", "exec"), scope)
    assert scope["terminated"] or scope["truncated"]
    assert scope["env"].unwrapped.game.is_terminal
    # The vector block reads on from the Gymnasium one (``gym`` imported there).
    exec(compile(vector, "README.md (vector)", "exec"), scope)
    from yinsh_env.vector import YinshVectorEnv

    assert isinstance(scope["envs"], YinshVectorEnv) and scope["envs"].num_envs == 256
    assert scope["obs"]["action_mask"].any(axis=1).all(), "every game has a legal action"


def test_module_roles_name_modules_that_exist() -> None:
    modules = {m for text in TEXTS.values() for m in re.findall(r"\{mod\}`[^`]*?<([\w.]+)>`", text)}
    assert len(modules) > 20
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    assert not missing, f"pages name modules that do not exist: {missing}"


def test_ci_runs_the_readme_test_command() -> None:
    found = TEST_COMMAND_LINE.findall(README)
    assert len(found) == 1, "the install section gives one test command"
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert found[0] in [line.strip() for line in ci_lines]


def test_console_scripts_and_modules_in_commands_exist() -> None:
    text = "\n".join(TEXTS.values())
    scripts_block = (ROOT / "pyproject.toml").read_text().split("[project.scripts]")[1]
    scripts = set(re.findall(r"^([\w-]+) = ", scripts_block.split("\n[")[0], re.MULTILINE))
    used = set(re.findall(r"(?<![\w-])(yinsh-[a-z]+)(?![\w-])", text))
    assert used and used <= scripts, f"unknown console scripts: {used - scripts}"
    modules = set(re.findall(r"python3? -m ((?:agents|train|benchmarks|yinsh_env)[\w.]*)", text))
    assert len(modules) > 10
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    assert not missing, f"pages run modules that do not exist: {missing}"


def protocol_transcript() -> tuple[str, list[str], list[str]]:
    """The protocol page's ``printf ... | yinsh-engine SPEC`` example: spec, commands, replies."""
    page = (ROOT / "docs" / "guide" / "protocol.md").read_text(encoding="utf-8")
    match = re.search(r"^\$ printf '([^']*)' \| yinsh-engine (\S+)\n(.*?)^```", page, re.S | re.M)
    assert match, "the protocol page shows an engine session"
    commands = match.group(1).split("\\n")
    return match.group(2), [c for c in commands if c], match.group(3).splitlines()


def test_the_protocol_transcript_is_what_the_engine_answers() -> None:
    spec, commands, replies = protocol_transcript()
    out = io.BytesIO()
    agent = make_agent(spec, seed=0)  # yinsh-engine's default seed
    serve(agent, io.BytesIO("".join(f"{c}\n" for c in commands).encode()), out)
    assert out.getvalue().decode().splitlines() == replies
