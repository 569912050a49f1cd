"""`verify`'s checks of the links between rows, the same on both back ends."""

from __future__ import annotations

import json

from tests.conftest import rewrite


def findings(cli) -> tuple[int, dict[str, list[str]]]:
    result = cli("--format", "json", "verify")
    found: dict[str, list[str]] = {}
    for finding in json.loads(result.stdout)["findings"]:
        found.setdefault(finding["kind"], []).append(finding["where"])
    return result.exit_code, found


def test_broken_supersede_chains_and_missing_episodes_are_found(cli, store):
    first = cli.json("remember", "deploys on Friday", "--subject", "team", "--predicate", "day")
    later = cli.json("remember", "deploys on Monday", "--subject", "team", "--predicate", "day")
    assert findings(cli) == (0, {})
    rewrite(store, "UPDATE memories SET superseded_by = ? WHERE id = ?", first["id"], later["id"])
    code, found = findings(cli)
    assert code == 9
    assert sorted(found["supersede-cycle"]) == sorted(f"memory {m['id']}" for m in (first, later))
    rewrite(store, "UPDATE memories SET superseded_by = 'gone' WHERE id = ?", later["id"])
    rewrite(store, "UPDATE memories SET source_episode_id = 'ep-gone' WHERE id = ?", first["id"])
    code, found = findings(cli)
    assert found["dangling-supersede"] == [f"memory {later['id']}"]
    assert found["dangling-episode"] == [f"memory {first['id']}"]
