"""Store-level commands: ``init``, ``path``, ``stats`` and ``demo``."""

from __future__ import annotations

from typing import Any

import typer

from soloqueue_mem.cli.boundary import boundary
from soloqueue_mem.cli.options import FormatOpt, command
from soloqueue_mem.cli.output import Format, emit_object, print_table, print_text_block, write
from soloqueue_mem.cli.state import AppContext, app_context
from soloqueue_mem.cli.trace_run import hit_json, render_hits
from soloqueue_mem.home import DIR_NAME, Home


@command
def init(app: AppContext) -> None:
    """Create a data directory: ./.soloqueue, or where --root / SOLOQUEUE_HOME say.

    With database_url set, it also creates or migrates the database's schema."""
    import os
    from pathlib import Path

    from soloqueue_mem.api.store import Store

    explicit = app.root_option or os.environ.get("SOLOQUEUE_HOME")
    home = app.home if explicit else Home(Path.cwd() / DIR_NAME)
    existed = home.exists()
    config = app.config if explicit else _config_for(home)
    with Store(home.dir, config=config, clock=lambda: app.now) as store:
        store.init()
    emit_object(
        {"root": str(home.root), "created": not existed},
        app.format,
        text=lambda: f"{home.root}\n",
        table=lambda: write(
            ("Initialized " if not existed else "Already initialized ") + f"{home.root}\n"
        ),
    )


def _config_for(home: Home) -> Any:
    from soloqueue_mem.config import load_config

    return load_config(home.config_file)


@command
def path(app: AppContext) -> None:
    """Print the data directory this invocation would use: a bare path, so
    `$(soloqueue-mem path)` works; `--format json` adds whether it exists."""
    home = app.home
    if app.format_option not in (Format.json, Format.jsonl):
        write(f"{home.root}\n")
    else:
        emit_object({"root": str(home.root), "exists": home.exists()}, app.format)


@command
def stats(app: AppContext) -> None:
    """Counts, sizes and schema versions of the store (creates nothing)."""
    with app.store() as store:
        report = store.stats()

    def table() -> None:
        rows = [("root", report["root"]), ("exists", report["exists"])]
        rows += [(f"{name} count", value) for name, value in report["counts"].items()]
        rows += [(f"{name} bytes", info["bytes"]) for name, info in report["databases"].items()]
        rows += [("blobs", f"{report['blobs']['files']} files, {report['blobs']['bytes']} bytes")]
        rows += [(f"last gc {name}", when) for name, when in report["gc"].items()]
        rows += [
            (
                "session logs",
                f"{report['session_logs']['files']} files, {report['session_logs']['bytes']} bytes",
            )
        ]
        hook = report["hook_group"]
        rows += [("hook group here", f"{hook['group']} ({hook['project'] or hook['mode']})")]
        print_table("soloqueue-mem stats", ["what", "value"], rows)

    emit_object(report, app.format, table=table)


@boundary
def demo(ctx: typer.Context, fmt: FormatOpt = None) -> None:
    """Log a short bilingual agent session into a throw-away store and show it back."""
    from soloqueue_mem.api.shapes import recall_hit_json
    from soloqueue_mem.config import Config
    from soloqueue_mem.memory.recall import render_text
    from soloqueue_mem.ops.demo import RECALL_QUERY, run_demo

    app = app_context(ctx, fmt)
    result = run_demo(app.now)
    if app.format in (Format.json, Format.jsonl):
        emit_object(
            {
                "root": result["root"],
                "logged": [
                    {
                        "turn_index": t.turn_index,
                        "role": t.role,
                        "content": t.content,
                        "offloaded": list(t.offloaded),
                    }
                    for t in result["logged"]
                ],
                "searches": {
                    q: [hit_json(h) for h in hits] for q, hits in result["searches"].items()
                },
                "openai": result["openai"],
                "episode": result["episode"]._asdict(),
                "memories": [m._asdict() for m in result["memories"]],
                "recall": [recall_hit_json(h, False, Config()) for h in result["recall"]],
            },
            app.format,
        )
        return
    write(f"Logged {len(result['logged'])} turns into a throw-away store ({result['root']}).\n")
    for turn in result["logged"]:
        if turn.offloaded:
            write(
                f"\nA large tool output was offloaded to artifact {turn.offloaded[0]}; "
                "its L1 view is a reference:\n"
            )
            print_text_block(turn.tool_results[0]["content"][:200] + " ...\n")
    for query, hits in result["searches"].items():
        write(f"\n$ soloqueue-mem trace {query!r}\n")
        render_hits(hits, Format.text if app.format is Format.text else Format.table)
    write(
        f"\nThe session exported as OpenAI messages has {len(result['openai'])} messages; "
        "try `soloqueue-mem session export SESSION --as openai`.\n"
    )
    episode = result["episode"]
    write(f"\n$ soloqueue-mem session end demo-session\nEpisode: {episode.summary}\n")
    for memory in result["memories"]:
        write(f"Remembered ({memory.type}): {memory.content}\n")
    write(f"\n$ soloqueue-mem recall {RECALL_QUERY!r} --format text\n")
    print_text_block(render_text(result["recall"]) + "\n")
