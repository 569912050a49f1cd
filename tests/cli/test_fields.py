"""`--fields a,b,c` and `--format csv|tsv` on listings, as `gh --json` and
`sqlite-utils --csv` users pipe them."""

from __future__ import annotations

import csv
import io
import json

from tests.conftest import run_process


def _remembered(cli) -> None:
    cli.ok("remember", "Deploys use helm, not kubectl", "--tag", "ops")
    cli.ok("remember", 'The "fast" lane\tis\nlane 2', "--type", "RULE")


def test_fields_pick_and_order_what_every_format_prints(cli):
    _remembered(cli)
    rows = cli.json("memory", "list", "--fields", "type,content")
    assert sorted(rows, key=lambda r: r["type"]) == [
        {"type": "FACT", "content": "Deploys use helm, not kubectl"},
        {"type": "RULE", "content": 'The "fast" lane\tis\nlane 2'},
    ]
    out = cli.ok("--fields", "content,tags", "--format", "csv", "memory", "list").stdout
    header, *lines = csv.reader(io.StringIO(out))
    assert header == ["content", "tags"]
    assert sorted(lines) == [
        ["Deploys use helm, not kubectl", '["ops"]'],
        ['The "fast" lane\tis\nlane 2', "[]"],
    ]
    tsv = cli.ok("memory", "list", "--type", "RULE", "--format", "tsv", "--fields", "type").stdout
    assert tsv == "type\nRULE\n"
    lines = cli.ok("session", "list", "-f", "jsonl", "--fields", "session").stdout
    assert lines == ""  # nothing logged: no lines, no header


def test_an_unknown_field_is_one_error_line_and_no_output(cli):
    _remembered(cli)
    result = cli("memory", "list", "--fields", "id,colour", "-f", "csv")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: --fields: no field 'colour' (known: id, group")


def test_the_fast_recall_takes_fields_and_csv_too(home):
    done = run_process("remember", "Deploys use helm, not kubectl")
    assert done.returncode == 0, done.stderr
    done = run_process("recall", "helm deploys", "--fields", "kind,content", "-f", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout.decode())))
    assert rows[:2] == [["kind", "content"], ["memory", "Deploys use helm, not kubectl"]]
    assert json.loads(run_process("recall", "helm", "--fields", "kind", "-f", "json").stdout) == [
        {"kind": "memory"}
    ]
