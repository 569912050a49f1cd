"""Shared helpers for the benchmark scripts: timing, tables, deterministic text.

Standard library only (plus the installed project where a script needs it). Each
script imports this module from its own folder.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NotRequired, TypedDict

if TYPE_CHECKING:  # the project is imported at run time only after import_project()
    import http.client
    import sqlite3
    from datetime import datetime

    from soloqueue_mem.config import Config
    from soloqueue_mem.home import Home
    from soloqueue_mem.memory.model import Memory
    from soloqueue_mem.memory.recall import Request, Result
    from soloqueue_mem.sessions.turns import Turn
    from soloqueue_mem.storage.sqlite.backend import SqliteBackend
    from soloqueue_mem.text.lexicon import Lexicon

REPO = Path(__file__).resolve().parent.parent
BENCH_DATA = Path(os.environ.get("SOLOQUEUE_BENCH_DATA", REPO.parent / "shared" / "bench-data"))
CACHE = Path(os.environ.get("SOLOQUEUE_BENCH_CACHE", "/tmp/soloqueue-bench"))


class Ablation(TypedDict, total=False):
    """Config fields an ablation sets (``Config._replace(**ablation)``)."""

    recall_weight_recency: float
    recall_weight_importance: float


# Each bounded adjustment of recall's score toggled from its default in turn
# (``--ablate`` of the quality benchmarks, on the same stores): Config fields and values.
ABLATIONS: dict[str, Ablation] = {
    "recall, recency on (0.15, the former default)": {"recall_weight_recency": 0.15},
    "recall, no importance (relevance only)": {"recall_weight_importance": 0.0},
}


def import_project() -> None:
    """Make ``soloqueue_mem`` importable: the installed copy, else this checkout."""
    if importlib.util.find_spec("soloqueue_mem") is None:
        sys.path.insert(0, str(REPO))


# --- processes and timing ---------------------------------------------------------


def neutral_cwd() -> str:
    """A working directory for child processes: never the checkout, whose
    ``soloqueue_mem/`` would shadow the installed package for ``-c`` and ``-m``."""
    CACHE.mkdir(parents=True, exist_ok=True)
    return str(CACHE)


def timing_env(**extra: str) -> dict[str, str]:
    """The environment for timed processes: bytecode caching on (``.pyc`` are used)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env.pop("SOLOQUEUE_HOME", None)
    env.update(extra)
    return env


def cli_argv(python: str) -> list[str]:
    """How to start the CLI of ``python``'s environment: its ``soloqueue-mem`` script
    when it sits beside the interpreter (a venv), else ``python -m soloqueue_mem``."""
    script = Path(python).parent / "soloqueue-mem"
    if script.exists():
        return [str(script)]
    return [python, "-m", "soloqueue_mem"]


def serve_connection(
    url: str, timeout: float = 60
) -> tuple[http.client.HTTPConnection, dict[str, str]]:
    """An ``http.client`` connection to the ``serve`` that printed ``url``
    (``http://HOST:PORT/?token=TOKEN``) and the headers a JSON call to it sends."""
    import http.client
    import urllib.parse

    address = urllib.parse.urlsplit(url)
    if address.hostname is None:
        raise ValueError(f"no host in {url!r}")
    conn = http.client.HTTPConnection(address.hostname, address.port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    token = urllib.parse.parse_qs(address.query).get("token")
    if token:
        headers["Authorization"] = f"Bearer {token[0]}"
    return conn, headers


class Timed(TypedDict):
    """One command of :func:`interleaved`: keyword arguments of :func:`run_timed`."""

    argv: Sequence[str]
    env: dict[str, str]
    stdin: NotRequired[bytes | Path | None]


def run_timed(
    argv: Sequence[str],
    env: dict[str, str],
    stdin: bytes | Path | None = None,
    check: bool = True,
    capture: bool = False,
) -> tuple[float, bytes]:
    """Run ``argv`` once; return (wall seconds, stdout if captured)."""
    stdin_file = open(stdin, "rb") if isinstance(stdin, Path) else None  # noqa: SIM115
    try:
        start = time.perf_counter()
        proc = subprocess.run(
            argv,
            env=env,
            cwd=neutral_cwd(),
            input=stdin if isinstance(stdin, bytes) else None,
            stdin=stdin_file
            if stdin_file is not None
            else (None if isinstance(stdin, bytes) else subprocess.DEVNULL),
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        elapsed = time.perf_counter() - start
    finally:
        if stdin_file is not None:
            stdin_file.close()
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, argv))[:200]} exited {proc.returncode}: "
            f"{proc.stderr.decode(errors='replace')[-2000:]}"
        )
    return elapsed, proc.stdout or b""


def probe(argv: Sequence[str], env: dict[str, str]) -> tuple[int, bytes, str]:
    """Run once untimed: (exit code, stdout, last line of stderr)."""
    proc = subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, cwd=neutral_cwd()
    )
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    return proc.returncode, proc.stdout, lines[-1][:300] if lines else ""


def interleaved(commands: dict[str, Timed], runs: int, warmup: int = 2) -> dict[str, list[float]]:
    """Time each command ``runs`` times, round-robin so drift hits all alike.

    ``commands`` maps a label to keyword arguments of :func:`run_timed`.
    """
    for _ in range(warmup):
        for kwargs in commands.values():
            run_timed(**kwargs)
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, kwargs in commands.items():
            times[label].append(run_timed(**kwargs)[0])
    return times


# --- a warm serve and recall forwarded to it ---------------------------------------


@contextlib.contextmanager
def serving(env: dict[str, str], python: str) -> Iterator[str]:
    """A ``serve`` process on ``env``'s data directory (and its ``serve.sock``): its URL."""
    server = subprocess.Popen(
        [*cli_argv(python), "serve", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline().decode()
        if not line.startswith("serving on http://"):
            raise SystemExit(f"serve did not start: {line}{server.stderr.read().decode()}")
        yield line.split()[-1]
    finally:
        server.terminate()
        server.wait(timeout=60)


FORWARD_FLOOR = """
import http.client, socket, sys
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(sys.argv[1])
conn = Unix("localhost")
headers = {"Content-Type": "application/json", "X-Soloqueue-Fingerprint": sys.argv[2]}
conn.request("POST", "/api/v1/recall", sys.argv[3].encode(), headers)
response = conn.getresponse()
assert response.status == 200, response.read()
sys.stdout.buffer.write(response.read())
"""


def fingerprint_at(root: Path, url: str | None, now: str) -> str:
    """The fingerprint a ``serve`` on ``root`` expects (``FORWARD_FLOOR``'s second
    argument), computed with ``SOLOQUEUE_NOW`` pinned to ``now`` as the serve and the
    recall processes have it."""
    from soloqueue_mem.api.local_socket import fingerprint
    from soloqueue_mem.config import load_config
    from soloqueue_mem.home import Home

    pinned = os.environ.get("SOLOQUEUE_NOW")
    os.environ["SOLOQUEUE_NOW"] = now
    try:
        return fingerprint(load_config(Home(root).config_file), url)
    finally:
        os.environ.pop("SOLOQUEUE_NOW")
        if pinned is not None:
            os.environ["SOLOQUEUE_NOW"] = pinned


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def p90(values: Sequence[float]) -> float:
    """Nearest-rank 90th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def pct(value: float) -> str:
    return f"{100 * value:.1f}"


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


# --- output -----------------------------------------------------------------------


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines)


def out(text: str = "") -> None:
    print(text, flush=True)


def note(text: str) -> None:
    """Progress on stderr, so stdout stays the report."""
    print(text, file=sys.stderr, flush=True)


def machine_line(python: str) -> str:
    import platform
    import sqlite3

    return (
        f"machine: {platform.machine()}, {os.cpu_count()} cores; timed interpreter: {python}; "
        f"Python {platform.python_version()}; SQLite {sqlite3.sqlite_version}; "
        f"{project_version(python)}; load average at start {os.getloadavg()[0]:.2f}"
    )


def project_version(python: str) -> str:
    """Where ``python`` imports soloqueue_mem from, and a hash of its source files."""
    import hashlib

    proc = subprocess.run(
        [python, "-c", "import os, soloqueue_mem; print(os.path.dirname(soloqueue_mem.__file__))"],
        capture_output=True,
        text=True,
        env=timing_env(),
        cwd=neutral_cwd(),
    )
    folder = Path(proc.stdout.strip())
    if proc.returncode != 0 or not folder.is_dir():
        return "soloqueue_mem: not importable"
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return f"soloqueue_mem from {folder} (sources sha256 {digest.hexdigest()[:12]})"


# --- deterministic mixed Chinese/English text --------------------------------------

ENGLISH = """
time day week year morning evening night today tomorrow yesterday people friend family
mother father sister brother child children work job office meeting project deadline
team manager email message phone call book movie music song game sport football
basketball tennis swimming running walk park garden tree flower rain snow weather sun
coffee tea breakfast lunch dinner restaurant kitchen recipe chicken rice noodle soup
cake bread apple orange fruit vegetable market shop store money price bank account
travel trip flight airport hotel beach mountain river lake city country village road
car bus train bike ticket map plan idea question answer problem solution reason
story history science math physics chemistry biology computer software code bug test
database server network cloud memory search index query result error log file folder
document report paper research study school class teacher student exam homework
lesson language english chinese word sentence letter note list picture photo camera
painting drawing art museum gallery concert theater show festival holiday birthday party
gift wedding dog cat bird fish pet animal doctor hospital medicine health exercise gym
sleep dream feeling happy sad tired busy quiet loud warm cold hot new old big small
long short early late fast slow easy hard good bad great nice beautiful interesting
important simple strange special favorite different same open close start finish
learn teach read write speak listen watch play cook eat drink buy sell pay send
receive remember forget think know believe hope want need like love help try use
make build fix change move stay leave arrive return visit meet share tell ask show
find lose keep give take bring carry wait plant grow clean wash paint sing dance
""".split()

ENGLISH_STOP = "the a an and of to in is it that for on with was as at by this be are".split()


@cache
def chinese_words(count: int = 3000) -> list[str]:
    """The ``count`` most frequent 2–4 character Han words of jieba's dictionary.

    Read from the installed jieba package's ``dict.txt`` (pinned by the project), so
    the vocabulary is fixed without importing jieba.
    """
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("jieba is not installed: run the benchmarks with the project's venv")
    path = Path(list(spec.submodule_search_locations)[0]) / "dict.txt"
    entries = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            word, freq = line.split(" ")[:2]
            if 2 <= len(word) <= 4 and all("\u4e00" <= ch <= "\u9fa5" for ch in word):
                entries.append((-int(freq), word))
    entries.sort()
    return [word for _, word in entries[:count]]


def _zipf_cum(n: int, s: float = 1.0) -> list[float]:
    total = 0.0
    cum = []
    for rank in range(1, n + 1):
        total += 1.0 / rank**s
        cum.append(total)
    return cum


class TextGen:
    """Seeded generator of ~200-character turns: Chinese, English or mixed.

    Words are drawn with Zipf weights, so the top words occur in most turns of their
    language (common query terms with 100k+ hits in a large store) and the tail in few.
    """

    def __init__(self, seed: int = 42) -> None:
        self.rng = random.Random(seed)
        self.zh = chinese_words()
        self.en = ENGLISH
        self.zh_cum = _zipf_cum(len(self.zh))
        self.en_cum = _zipf_cum(len(self.en))

    def _zh_sentence(self) -> str:
        n = self.rng.randint(5, 14)
        words = self.rng.choices(self.zh, cum_weights=self.zh_cum, k=n)
        return "".join(words) + self.rng.choice("。。，！？")

    def _en_sentence(self) -> str:
        rng = self.rng
        n = rng.randint(5, 12)
        words = rng.choices(self.en, cum_weights=self.en_cum, k=n)
        for i in range(0, n, 3):
            words.insert(i, rng.choice(ENGLISH_STOP))
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice("..?!") + " "

    def turn(self) -> str:
        rng = self.rng
        kind = rng.random()
        target = rng.randint(160, 240)
        parts: list[str] = []
        length = 0
        while length < target:
            if kind < 0.4 or (kind >= 0.8 and rng.random() < 0.5):
                part = self._zh_sentence()
            else:
                part = self._en_sentence()
            parts.append(part)
            length += len(part)
        return "".join(parts).strip()[:target]


def unsourced(memory_db: Path) -> tuple[int, list[tuple[str, str]]]:
    """The rules memories of a store checked against the turns they came from (their
    episode's): how many were checked, and (content, first turn) of each whose text is
    not in any of those turns by the documented substitutions (``own_words.maps_back``).
    An ERROR memory ("pytest failed: E AssertionError: …") is checked without its
    "name failed: " head against the turns' tool results, where a tool's output is; a
    lesson (SKILL, ``lifecycle.lessons``) the same way, and its answer against the
    turns' text."""
    import sqlite3

    from soloqueue_mem.lifecycle.lessons import ANSWER
    from soloqueue_mem.lifecycle.own_words import maps_back

    conn = sqlite3.connect(f"file:{memory_db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT m.id, m.type, m.content, t.content, t.tool_results FROM memories AS m"
            " JOIN conversation_turns AS t ON t.episode_id = m.source_episode_id"
            " WHERE m.source = 'rules' ORDER BY m.id"
        ).fetchall()
    finally:
        conn.close()
    # memory -> its content, and each part of it with the texts it must map back to
    said: dict[str, tuple[str, dict[str, list[str]]]] = {}
    for memory, kind, content, turn, results in rows:
        outputs = [str(result.get("content") or "") for result in json.loads(results or "[]")]
        failure = content.partition(" failed: ")[2]
        if kind == "SKILL":
            failure, _, answer = failure.rpartition(ANSWER)
            parts = {failure: outputs, answer: [turn or ""]}
        else:
            parts = {failure: outputs} if kind == "ERROR" else {content: [turn or ""]}
        texts = said.setdefault(memory, (content, {}))[1]
        for part, found in parts.items():
            texts.setdefault(part, []).extend(found)
    bad = [
        (content, next((text for texts in parts.values() for text in texts), ""))
        for content, parts in said.values()
        if not all(any(maps_back(part, text) for text in texts) for part, texts in parts.items())
    ]
    return len(said), bad


def created(conn: sqlite3.Connection | None) -> sqlite3.Connection:
    """What an opener of ``storage.sqlite.stores`` returns with ``create=True`` (its
    default): a connection, never None."""
    assert conn is not None
    return conn


def logged(turn: Turn | None, key: str) -> Any:
    """The ``key`` of the metadata a benchmark logged ``turn`` with (each of its turns
    has some), for a hit of ``trace`` or of recall's ``traces`` channel (a turn)."""
    assert turn is not None and turn.metadata is not None
    return turn.metadata[key]


def said_in(conn: sqlite3.Connection, memory: Memory, key: str) -> Any:
    """The ``key`` of the metadata of the first turn of its episode a rules memory was
    said in (its text maps back to the turn's by the documented substitutions,
    ``own_words.maps_back``), or None. Recall shows one statement said by a turn and
    kept as a memory once, as the memory: counted as that turn, it is not a miss of
    the turn it stands for."""
    from soloqueue_mem.lifecycle.own_words import maps_back

    if memory.source != "rules" or memory.source_episode_id is None:
        return None
    rows = conn.execute(
        "SELECT content, metadata_json FROM conversation_turns WHERE episode_id = ? ORDER BY id",
        (memory.source_episode_id,),
    )
    for content, metadata in rows:
        if maps_back(memory.content, content):
            return json.loads(metadata or "{}").get(key)
    return None


class Answers(NamedTuple):
    """What ``recall -n 10`` and ``recall -n 20`` returned (ids, each script's own):
    hit@5 and hit@10 are read in the first, hit@20 in the second. The first ten of
    -n 20 are -n 10's only when both rank alike, which their pools do not promise, so
    hit@20 read after -n 10's places could barely exceed hit@10."""

    ten: list
    twenty: list


def first(ids: Sequence[Any] | Answers, k: int) -> list:
    """The first ``k`` ids a method returned: of its one ranking, or of the recall
    answer that asked for at least ``k``."""
    if isinstance(ids, Answers):
        return (ids.ten if k <= 10 else ids.twenty)[:k]
    return list(ids[:k])


def changes(report: dict[str, Any]) -> int:
    """What a ``consolidate`` report says it changed: sessions digested into episodes
    and memories, memories superseded, archived or demoted, items expired."""
    counts = [
        report["sessions"]["episodes"],
        report["sessions"]["memories"],
        report["dedup"]["superseded"],
        *report["decay"].values(),
        *report["expire"].values(),
    ]
    return sum(counts)


_SOURCES: dict[tuple[str, str], SqliteBackend] = {}


def recall_in(
    home: Home,
    request: Request,
    config: Config,
    now: datetime,
    lexicon: Callable[[], Lexicon],
) -> Result:
    """``recall`` over the store at ``home`` through its SQLite back end configured as
    ``config`` (one back end per store and config, kept open for the process)."""
    from soloqueue_mem.memory.recall import recall
    from soloqueue_mem.storage.sqlite.backend import SqliteBackend

    key = (str(home.root), repr(config))
    if key not in _SOURCES:
        _SOURCES[key] = SqliteBackend(home, config)
    return recall(request, config, now, lexicon, source=_SOURCES[key])
