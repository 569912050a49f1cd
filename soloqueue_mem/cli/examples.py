"""Example calls shown at the end of each command's ``--help`` (and in the generated
command reference). Keyed by the command's path; every command has at least one
(``tests/cli/test_help.py`` checks it)."""

EXAMPLES: dict[str, tuple[str, ...]] = {
    "log": (
        'soloqueue-mem log --session task-42 --role user "why does the DB connection time out?"',
        "soloqueue-mem log --batch < transcript.jsonl",
    ),
    "trace": (
        'soloqueue-mem trace "数据库 超时" --format text',
        "soloqueue-mem trace timeout --session task-42 --since 7d",
    ),
    "remember": (
        'soloqueue-mem remember "User prefers vim" --type preference --subject user '
        "--predicate editor",
        "soloqueue-mem remember --batch < memories.jsonl",
    ),
    "recall": (
        'soloqueue-mem recall "which editor does the user like?"',
        'soloqueue-mem recall "数据库 超时" --format text --max-tokens 300',
    ),
    "attach": ('soloqueue-mem attach cat.jpg --description "the cat photo the user sent"',),
    "gc": ("soloqueue-mem gc --dry-run", "soloqueue-mem gc --deep"),
    "consolidate": ("soloqueue-mem consolidate --dry-run", "soloqueue-mem consolidate --idle 2h"),
    "index": ("soloqueue-mem index --estimate", "soloqueue-mem index --turns --time-budget 10m"),
    "promote": ("soloqueue-mem promote notes.md --group project-x",),
    "query": ('soloqueue-mem query "deploy checklist" --group project-x',),
    "init": ("soloqueue-mem init", "soloqueue-mem --root ~/agent-memory init"),
    "path": ("soloqueue-mem path",),
    "stats": ("soloqueue-mem stats", "soloqueue-mem stats --format json | jq .memories"),
    "verify": ("soloqueue-mem verify", "soloqueue-mem verify --full"),
    "export": (
        "soloqueue-mem export > backup.jsonl",
        "soloqueue-mem export --with-blobs --output backup.jsonl",
    ),
    "import": (
        "soloqueue-mem import backup.jsonl",
        "soloqueue-mem import claude-code ~/.claude/projects/my-project/",
    ),
    "migrate": ("soloqueue-mem migrate --to postgresql://localhost/memory",),
    "demo": ("soloqueue-mem demo",),
    "completion": ("soloqueue-mem completion zsh > ~/.zfunc/_soloqueue-mem",),
    "mcp": ("soloqueue-mem mcp --group project-x",),
    "serve": ("soloqueue-mem serve", "soloqueue-mem serve --port 0 --no-auth"),
    "session": ("soloqueue-mem session list", "soloqueue-mem session export task-42 --as openai"),
    "session list": ("soloqueue-mem session list --limit 5",),
    "session show": ("soloqueue-mem session show task-42",),
    "session export": (
        "soloqueue-mem session export task-42 --as openai",
        "soloqueue-mem session export task-42 --as md --full",
    ),
    "session end": ("soloqueue-mem session end task-42",),
    "session set": (
        'soloqueue-mem session set task-42 current_task "fix the login timeout"',
        "soloqueue-mem session set task-42 retries 3 --json",
    ),
    "session get": ("soloqueue-mem session get task-42 current_task",),
    "session unset": ("soloqueue-mem session unset task-42 current_task",),
    "memory": ("soloqueue-mem memory list --type preference", "soloqueue-mem memory history 12"),
    "memory list": (
        "soloqueue-mem memory list --type preference",
        "soloqueue-mem memory list --all",
    ),
    "memory show": ("soloqueue-mem memory show 12",),
    "memory edit": ('soloqueue-mem memory edit 12 --content "User prefers neovim"',),
    "memory forget": ("soloqueue-mem memory forget 12 13",),
    "memory history": ("soloqueue-mem memory history 12",),
    "memory restore": ("soloqueue-mem memory restore 12",),
    "episode": ("soloqueue-mem episode list", 'soloqueue-mem episode search "deploy"'),
    "episode list": ("soloqueue-mem episode list --session task-42",),
    "episode show": ("soloqueue-mem episode show 3",),
    "episode search": ('soloqueue-mem episode search "数据库 迁移" --limit 5',),
    "graph": (
        "soloqueue-mem graph remember --session task-42",
        "soloqueue-mem graph recall --keywords redis",
    ),
    "graph remember": (
        "soloqueue-mem graph remember --session task-42",
        "soloqueue-mem session export task-42 --as openai | soloqueue-mem graph remember --sync",
    ),
    "graph work": ("soloqueue-mem graph work --time-budget 30",),
    "graph recall": ("soloqueue-mem graph recall --keywords redis --depth 2",),
    "graph focus": ("soloqueue-mem graph focus",),
    "graph show": ("soloqueue-mem graph show 7",),
    "graph stats": ("soloqueue-mem graph stats",),
    "graph compress": ("soloqueue-mem graph compress --time-budget 10",),
    "graph export": ("soloqueue-mem graph export --format dot > graph.dot",),
    "scratchpad": ("soloqueue-mem scratchpad show", "soloqueue-mem scratchpad edit"),
    "scratchpad show": ("soloqueue-mem scratchpad show --format text",),
    "scratchpad set": ("soloqueue-mem scratchpad set - < notes.md",),
    "scratchpad edit": ("soloqueue-mem scratchpad edit --agent coder",),
    "context": (
        "soloqueue-mem context build --session task-42 --model gpt-4o",
        "soloqueue-mem context compress --session task-42 --keep 10",
    ),
    "context build": (
        "soloqueue-mem context build --session task-42 --model gpt-4o",
        'soloqueue-mem context build --session task-42 --with-memory --query "deploy"',
    ),
    "context compress": ("soloqueue-mem context compress --session task-42 --keep 10",),
    "identity": ("soloqueue-mem identity show", "soloqueue-mem identity edit soul"),
    "identity show": ("soloqueue-mem identity show --format text",),
    "identity compile": ("soloqueue-mem identity compile --force",),
    "identity edit": ("soloqueue-mem identity edit AGENT.md",),
    "artifact": ("soloqueue-mem artifact save report.pdf --tag q3", "soloqueue-mem artifact list"),
    "artifact save": ('soloqueue-mem artifact save report.pdf --title "Q3 report" --tag q3',),
    "artifact read": ("soloqueue-mem artifact read 12 > report.pdf",),
    "artifact show": ("soloqueue-mem artifact show 12",),
    "artifact list": ("soloqueue-mem artifact list --tag q3 --limit 5",),
    "artifact tag": (
        "soloqueue-mem artifact tag 12 user:persistent",
        "soloqueue-mem artifact tag 12 q3 --remove",
    ),
    "artifact rm": ("soloqueue-mem artifact rm 12",),
    "attachment": ("soloqueue-mem attachment list", "soloqueue-mem attachment show 4"),
    "attachment list": ("soloqueue-mem attachment list --session task-42",),
    "attachment show": ("soloqueue-mem attachment show 4",),
    "attachment rm": ("soloqueue-mem attachment rm 4",),
    "kv": ("soloqueue-mem kv set theme '\"dark\"'", "soloqueue-mem kv list"),
    "kv set": (
        "soloqueue-mem kv set theme '\"dark\"'",
        "soloqueue-mem kv set motto --text 'ship it'",
    ),
    "kv get": ("soloqueue-mem kv get theme --format text",),
    "kv list": ("soloqueue-mem kv list --agent coder",),
    "kv rm": ("soloqueue-mem kv rm theme",),
    "working": (
        'soloqueue-mem working add "deploy finished, 3 pods healthy"',
        "soloqueue-mem working list",
    ),
    "working add": ('soloqueue-mem working add "deploy finished, 3 pods healthy" --group ops',),
    "working list": ("soloqueue-mem working list --group ops --limit 5",),
    "working clear": ("soloqueue-mem working clear --group ops",),
    "hook": ("soloqueue-mem hook claude SessionStart < payload.json",),
    "hook claude": (
        "soloqueue-mem hook claude SessionStart < payload.json",
        "soloqueue-mem hook claude UserPromptSubmit --group my-project < payload.json",
    ),
}


def epilog(path: str) -> str | None:
    """The ``--help`` epilog of the command at ``path``: its examples, kept unwrapped."""
    calls = EXAMPLES.get(path)
    if not calls:
        return None
    return "\b\nExamples:\n" + "\n".join(f"  {call}" for call in calls)
