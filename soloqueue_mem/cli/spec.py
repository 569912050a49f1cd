"""How the options of the commands with a Typer-free fast path are spelled, once.

Both parsers come from here: :mod:`soloqueue_mem.cli.fast` builds its tables from these
tuples, and the Typer commands declare each of these options with
:func:`soloqueue_mem.cli.options.option`, which takes its spellings and environment
variable from the same :class:`Opt`. Help texts, types and defaults stay with the Typer
commands (the fast path never prints help). No imports: ``log`` pays nothing for it.
"""

VALUE, FLAG, LIST = "value", "flag", "list"


class Opt:
    """One option: the key it is parsed into, its spellings, whether it takes a value
    (``VALUE``), none (``FLAG``) or is repeated into a list (``LIST``), and the
    environment variable that stands in when it is not given."""

    __slots__ = ("envvar", "key", "kind", "names")

    def __init__(self, key: str, *names: str, kind: str = VALUE, envvar: str | None = None):
        self.key = key
        self.names = names
        self.kind = kind
        self.envvar = envvar


ROOT = Opt("root", "--root")
FORMAT = Opt("fmt", "--format", "-f")
QUIET = Opt("quiet", "--quiet", "-q", kind=FLAG)
# Which fields a listing prints (json, jsonl, csv, tsv, table): "id,content".
FIELDS = Opt("fields", "--fields")
GROUP = Opt("group", "--group", "-g", envvar="SOLOQUEUE_GROUP")
AGENT = Opt("agent", "--agent", "-a", envvar="SOLOQUEUE_AGENT")
SESSION = Opt("session", "--session", "-s", envvar="SOLOQUEUE_SESSION")
# trace and graph remember take a session only when given, never from $SOLOQUEUE_SESSION
SESSION_GIVEN = Opt("session", "--session", "-s")
ROLE = Opt("role", "--role", "-r")
SINCE = Opt("since", "--since")
LIMIT = Opt("limit", "--limit", "-n")
TYPE = Opt("type", "--type")
# Where and how a command prints: every fast command takes them after its name too.
WHERE = (FORMAT, ROOT)

# Before the command (the app's callback; --version aside); --quiet and --fields are
# moved there when given after it.
GLOBAL = (ROOT, FORMAT, QUIET, FIELDS)
LOG = (
    ROLE,
    Opt("batch", "--batch", kind=FLAG),
    Opt("event_id", "--event-id"),
    Opt("metadata", "--metadata"),
    Opt("offload", "--offload", kind=FLAG),
    Opt("echo", "--echo", kind=FLAG),
    GROUP,
    AGENT,
    SESSION,
    *WHERE,
)
SAVE = (
    Opt("title", "--title"),
    Opt("tag", "--tag", "-t", kind=LIST),
    GROUP,
    Opt("author", "--author"),
    Opt("mime", "--mime"),
    *WHERE,
)
TRACE = (GROUP, AGENT, SESSION_GIVEN, ROLE, SINCE, LIMIT, *WHERE)
RECALL = (
    TYPE,
    LIMIT,
    Opt("max_tokens", "--max-tokens"),
    SINCE,
    GROUP,
    AGENT,
    Opt("channels", "--channels"),
    Opt("traces", "--traces", kind=FLAG),
    Opt("explain", "--explain", kind=FLAG),
    Opt("recent", "--recent"),
    SESSION,
    Opt("persona", "--persona"),
    *WHERE,
)
GRAPH_REMEMBER = (SESSION_GIVEN, Opt("sync", "--sync", kind=FLAG), GROUP, AGENT, *WHERE)
GRAPH_RECALL = (
    Opt("keywords", "--keywords", kind=LIST),
    Opt("relation", "--relation", kind=LIST),
    Opt("depth", "--depth"),
    LIMIT,
    GROUP,
    AGENT,
    *WHERE,
)
HOOK = (GROUP, AGENT, ROOT)
# Each fast command's words and its options, as the Typer app names them.
COMMANDS = {
    ("log",): LOG,
    ("artifact", "save"): SAVE,
    ("trace",): TRACE,
    ("recall",): RECALL,
    ("graph", "remember"): GRAPH_REMEMBER,
    ("graph", "recall"): GRAPH_RECALL,
    ("hook", "claude"): HOOK,
}


def find(opts: "tuple[Opt, ...]", key: str) -> Opt:
    """The option of ``opts`` parsed into ``key``."""
    return next(opt for opt in opts if opt.key == key)
