"""Turns and episodes that state what a later correction replaced.

When a memory is superseded ("the project uses Python 3.10" by "… moved to 3.12"),
the turns where the old value was said stay in the log, and they match a question
about it as well as the correction does. Recall must not give them back as the
answer: such an item is *stale* when it was said before the correction, holds every
word the old memory had and the new one dropped (the old value: ``3.10``), and at
least half of the old memory's words. Recall ranks it below the memory that
superseded it and the turns that memory was said in ranking right after it (directly
below the last of them when it would stand above, at its own place otherwise: the item
may also state what the correction left alone) and says so in its ``superseded_by``.

Only a supersede that replaced a value counts: the new memory says something the old
one did not (``3.12``), and the old one stated a value. An ERROR memory records what a
tool did: a later failure of the same tool replaces it as the tool's last error, yet
the earlier failure happened, and the turns that show it are not stale. Dedup also
supersedes, merging a memory into its restatement ("John: Maria, your support means a
lot" into "Your support means a lot, Maria"); the words the restatement dropped are no
old value, and the turns holding them are not stale.

An item that only restates the old memory is stale as well, whoever said it: every
word it has, an acknowledgement aside, is the old memory's, two at least, one of them
a word the new one dropped. The assistant's "Noted — Dana Whitlock is the PM contact."
after "Our PM contact at Lantern Forge is Dana Whitlock, questions go to her" holds too
few of the old memory's words for the rule above, yet says nothing else.

A correction may name the old value itself when what it corrects never became a
memory ("The studio is dropping .po, everything moves to XLIFF 2.0" after "Strings
come as .po files" said in passing): an item said before that memory, holding the value
and another of its words, is stale too (:func:`named_stale`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from datetime import datetime

from soloqueue_mem.errors import NotFound
from soloqueue_mem.memory.model import Memory, recallable
from soloqueue_mem.memory.working import ACKNOWLEDGEMENTS
from soloqueue_mem.text.cue import is_correction
from soloqueue_mem.text.fts import word_holders
from soloqueue_mem.text.handover import aliases
from soloqueue_mem.text.lexicon import Lexicon
from soloqueue_mem.text.query import weigh_texts
from soloqueue_mem.text.replaced import replaced_value
from soloqueue_mem.tuples import NamedTuple

MIN_OLD_SHARE = 0.5  # of the old memory's words a stale item holds
MIN_SHARED = 0.5  # of the shorter one's words two memories restating one thing share
MIN_SHARED_WORDS = 2
MAX_CHAIN = 20  # supersede links followed to the active memory
_ACKNOWLEDGING = frozenset(word for said in ACKNOWLEDGEMENTS for word in said.split())


class Correction(NamedTuple):
    old: Memory  # superseded
    # The memory at the end of its supersede chain: the value that holds now, also
    # once decay archived it or it expired (then kept: see memory.store.expired).
    new: Memory


def corrections(
    get: Callable[[str], Memory], found: Sequence[tuple[Memory, float]]
) -> list[Correction]:
    """The superseded memories among ``found`` (a search widened to inactive
    memories), each with the memory that replaced it (``get`` reads a memory by id, on
    whichever back end). A replacement that fades out of recall does not bring the old
    value back."""
    fixed = []
    for memory, _ in found:
        if memory.superseded_by is None or memory.type == "ERROR":
            continue
        new = _last_successor(get, memory)
        if new is not None:
            fixed.append(Correction(memory, new))
    return fixed


def naming(
    active: Sequence[Memory],
    found: Sequence[tuple[Memory, float]],
    fixes: Sequence[Correction],
    now: datetime,
) -> list[Memory]:
    """The memories that may name a value they replace (:func:`named_stale`): the
    ``active`` ones the query found; those of ``found`` (a search widened to inactive
    memories) that left recall without being replaced, expired or archived (then kept:
    see memory.store.expired); and the current end of each correction of ``fixes``
    (found through the memory it replaced). A correction naming ".po" as dropped still
    says, after its 30 days, that the turns stating ".po" are outdated; "48 小时太早了，
    改成提前 24 小时" says it of the turns stating 48 小时 also when the question names
    only what the memory it replaced said ("appointment reminders": 预约). One that was
    superseded leaves it to its successor: "Actually we're keeping Redis" after "We're
    dropping Redis" is what holds."""
    retired = [
        memory
        for memory, _ in found
        if memory.superseded_by is None and not recallable(memory, now)
    ]
    current = [fix.new for fix in fixes]
    return [*active, *(m for m in [*retired, *current] if replaced_value(m.content))]


def _last_successor(get: Callable[[str], Memory], memory: Memory) -> Memory | None:
    current = memory
    for _ in range(MAX_CHAIN):
        if current.superseded_by is None:
            return current
        try:
            current = get(current.superseded_by)
        except NotFound:
            return None
    return None


class Replacement(NamedTuple):
    """A correction that replaced a value: the old memory's words, and the value."""

    fix: Correction
    old: list[str]  # the old memory's words
    dropped: list[str]  # those the new memory no longer says: the old value


def replacements(fixes: Sequence[Correction], lexicon: Callable[[], Lexicon]) -> list[Replacement]:
    """The corrections of ``fixes`` that replaced a value. One that dropped nothing, or
    said nothing new (a restatement a merge kept), replaced none."""
    found = []
    said = weigh_texts([m.content for fix in fixes for m in (fix.old, fix.new)], lexicon)
    for fix, was, now in zip(fixes, said[::2], said[1::2], strict=True):
        old = [term.text for term in was.terms]
        kept = {term.text for term in now.terms}
        dropped = [word for word in old if word not in kept]
        if dropped and not kept.issubset(old):
            found.append(Replacement(fix, old, dropped))
    return found


def current_values(replaced: Sequence[Replacement], asked: list[str]) -> dict[str, str]:
    """For each memory at the current end of a correction that replaced a value, when
    the question is about the thing that changed, the id of the older memory it
    replaced. The question is about it when it holds a word both memories hold (as the
    index matches words: stems, CJK words): the topic they share ("backup retention"),
    not a word only one of them says. A supersede link between two statements of
    different things (a user's introduction replaced by an incident report) shares no
    topic the question names, or none at all."""
    fixes = [fix for fix, _, _ in replaced]
    held = word_holders([m.content for fix in fixes for m in (fix.old, fix.new)], asked)
    current: dict[str, str] = {}
    for n, fix in enumerate(fixes):
        if any({2 * n, 2 * n + 1} <= where for where in held):
            current.setdefault(fix.new.id, fix.old.id)
    return current


def stale_items(
    texts: dict[str, tuple[str, str]],
    replaced: Sequence[Replacement],
    lexicon: Callable[[], Lexicon],
) -> dict[str, Memory]:
    """For each item key of ``texts`` ({key: (text, timestamp)}) that states what a
    correction replaced (:func:`replacements`), the memory that replaced it."""
    keys = list(texts)
    bodies = [texts[key][0] for key in keys]
    own = _own_words(bodies, lexicon)
    stale: dict[str, Memory] = {}
    for fix, old, dropped in replaced if keys else []:
        held = word_holders(bodies, old)
        for n, key in enumerate(keys):
            said_before = texts[key][1] < fix.new.created_at
            holds = {word for word, where in zip(old, held, strict=True) if n in where}
            if not said_before or key in stale:
                continue
            states = holds.issuperset(dropped) and len(holds) >= MIN_OLD_SHARE * len(old)
            if states or (_may_restate(holds, dropped) and _restates_only(own(n), old, dropped)):
                stale[key] = fix.new
    return stale


def _own_words(
    bodies: list[str], lexicon: Callable[[], Lexicon]
) -> Callable[[int], frozenset[str]]:
    """The words of the body at a position of ``bodies``, acknowledgements aside,
    weighed when first asked for: only the few items holding an old value are."""
    found: dict[int, frozenset[str]] = {}

    def own(n: int) -> frozenset[str]:
        if n not in found:
            (said,) = weigh_texts([bodies[n]], lexicon)
            found[n] = frozenset(t.text for t in said.terms) - _ACKNOWLEDGING
        return found[n]

    return own


def _may_restate(words: Set[str], dropped: list[str]) -> bool:
    """Whether ``words`` of the old memory's, two at least, name a value the new one
    ``dropped``: asked first of the words the index matched in an item (only then are
    its own words weighed), then of those own words."""
    return len(words) >= MIN_SHARED_WORDS and not words.isdisjoint(dropped)


def _restates_only(words: frozenset[str], old: list[str], dropped: list[str]) -> bool:
    """Whether an item of ``words`` says only what the old memory said (its words
    ``old``), and names a value the new memory ``dropped`` (:func:`_may_restate`)."""
    return words.issubset(old) and _may_restate(words, dropped)


class Named(NamedTuple):
    """What a correction says it replaced ("dropping .po": ``po``) and its other words;
    ``aliases``: the words of each other name of a person it names as replaced
    ("陈杰（阿杰）": 阿杰 is 陈杰, :func:`soloqueue_mem.text.handover.aliases`)."""

    value: frozenset[str]
    others: frozenset[str]
    aliases: tuple[frozenset[str], ...] = ()


def _named(texts: list[str], said: list[str], lexicon: Callable[[], Lexicon]) -> list[Named | None]:
    """For each of ``texts``, the value it names as replaced and its other words
    (:func:`soloqueue_mem.text.replaced.replaced_value`), with the other names ``said``
    gives that value, or None when it names none."""
    values = [replaced_value(text) for text in texts]
    wanted = [n for n, value in enumerate(values) if value]
    if not wanted:
        return [None] * len(texts)
    named = [sorted(aliases(values[n], said)) for n in wanted]
    weighed = weigh_texts(
        [values[n] for n in wanted] + [texts[n] for n in wanted] + [a for a_ in named for a in a_],
        lexicon,
    )
    words_of = [frozenset(term.text for term in w.terms) for w in weighed]
    other_names = iter(words_of[2 * len(wanted) :])
    found: list[Named | None] = [None] * len(texts)
    for n, value, whole, names in zip(
        wanted, words_of[: len(wanted)], words_of[len(wanted) : 2 * len(wanted)], named, strict=True
    ):
        others = tuple(w for w in (next(other_names) for _ in names) if w)
        if value:
            found[n] = Named(value, whole - value, others)
    return found


def _states_named(body: int, held: dict[str, set[int]], replaced: Named) -> bool:
    """Whether text ``body`` (a position in what ``held`` maps each word to) states the
    value ``replaced`` names, by it or another name of it, on its topic: it holds every
    word of the value and another word of the correction."""
    return any(
        all(body in held[w] for w in value) for value in (replaced.value, *replaced.aliases)
    ) and any(body in held[w] for w in replaced.others)


def named_stale(
    texts: dict[str, tuple[str, str]], memories: Sequence[Memory], lexicon: Callable[[], Lexicon]
) -> dict[str, Memory]:
    """For each item key of ``texts`` ({key: (text, timestamp)}) said before one of
    ``memories`` (:func:`naming`) that names the value it replaces ("The studio is
    dropping .po, everything moves to XLIFF 2.0"), and stating that value on its topic
    (:func:`_states_named`), that memory. The statement corrected need never have
    become a memory itself ("Strings come as .po files"). An item naming a replaced
    value itself is the correction as said, not what it replaced."""
    said = _named([m.content for m in memories], [text for text, _ in texts.values()], lexicon)
    fixes = [(m, r) for m, r in zip(memories, said, strict=True) if r]
    if not fixes or not texts:
        return {}
    keys = [key for key in texts if not replaced_value(texts[key][0])]  # not its own turn
    held = _held_by([texts[key][0] for key in keys], fixes)
    stale: dict[str, Memory] = {}
    for memory, replaced in fixes:
        for n, key in enumerate(keys):
            said_before = texts[key][1] < memory.created_at
            if key not in stale and said_before and _states_named(n, held, replaced):
                stale[key] = memory
    return stale


def _held_by(bodies: list[str], fixes: Sequence[tuple[object, Named]]) -> dict[str, set[int]]:
    """Which of ``bodies`` hold each word of the corrections' values and topics."""
    words = sorted({w for _, r in fixes for w in r.value.union(r.others, *r.aliases)})
    found = word_holders(bodies, words)
    return dict(zip(words, found, strict=True))


class Said(NamedTuple):
    key: str
    text: str
    created_at: str


def newer_first(ranked: list[Said], lexicon: Callable[[], Lexicon]) -> list[str]:
    """The keys of ``ranked`` (matching memories, best first), each memory that restates
    an older one ranked above it moved to just above it. Two memories restate one thing
    when they share at least half of the shorter one's words, and two words at least;
    the newer is likelier what holds now ("staging moved to port 8443" after "8080 in
    staging") even when no supersede link says so."""
    own = [{term.text for term in w.terms} for w in weigh_texts([m.text for m in ranked], lexicon)]
    vocabulary = sorted(set().union(*own))
    held_by = word_holders([m.text for m in ranked], vocabulary)
    held = [
        own[n] | {word for word, where in zip(vocabulary, held_by, strict=True) if n in where}
        for n in range(len(ranked))
    ]
    order = list(range(len(ranked)))
    for newer in range(len(ranked)):
        for place, older in enumerate(order[: order.index(newer)]):
            if ranked[older].created_at < ranked[newer].created_at and _restates(
                own[older] & held[newer], own[newer] & held[older], own[older], own[newer]
            ):
                order.remove(newer)
                order.insert(place, newer)
                break
    return [ranked[n].key for n in order]


def corrections_first(
    ranked: list[Said],
    query_words: list[str],
    lexicon: Callable[[], Lexicon],
    linked: Set[str] = frozenset(),
) -> list[str]:
    """The keys of ``ranked`` (matching items of any kind, best first), each item that
    announces a correction moved to just above the first older item it corrects, as
    far as the question is concerned. An item with a correction cue (:func:`is_correction`:
    "更正一下：…", "no longer …") corrects one holding at least two of the query's words it
    holds too: "Update: supervisor meetings are on Thursday mornings" then ranks above
    "…we meet every Tuesday" for "when do I meet my supervisor?", though no supersede
    link joins the two (nothing was extracted from it). Words match as the index matches
    them (stems, CJK words); only the query's words count, so names and small talk two
    turns share do not. An item naming the value it replaces (:func:`replaced_value`:
    "we're dropping LinguaPro", "主图设计从阿杰交接给 Kelly") corrects one stating that
    value on its topic (:func:`_states_named`, as :func:`named_stale` reads a memory
    naming it) and sharing one word of the query with it: the value says what is
    corrected, and the shared word that the question is about it, where a short or
    other-language question gives two items one word to share at most. "以后别找老王了，
    …交给刘冬梅" corrects "灯光供应商光耀照明，安全负责人王建国（老王）" for a question about
    security, not for one about the lights. An item of ``linked`` (its supersede link
    known: ``superseded_by``) is left to the memory that replaced it, which places it
    (recall's ``_stale_below_replacements``): an episode naming the value of the same
    handover does not take its place."""
    texts = [said.text for said in ranked]
    named = _named(texts, texts, lexicon)
    cued = {n for n, said in enumerate(ranked) if is_correction(said.text)}
    movers = sorted(cued | {n for n, found in enumerate(named) if found})
    if not movers:
        return [said.key for said in ranked]
    order = list(range(len(ranked)))
    held = word_holders(texts, query_words)
    stating = _held_by(texts, [(n, found) for n, found in enumerate(named) if found])
    for newer in movers:
        fix = named[newer]
        for place, older in enumerate(order[: order.index(newer)]):
            if ranked[older].created_at >= ranked[newer].created_at:
                continue
            shared = sum(1 for where in held if newer in where and older in where)
            by_words = newer in cued and shared >= MIN_SHARED_WORDS
            by_value = (
                fix is not None
                and shared > 0
                and not named[older]
                and ranked[older].key not in linked
                and _states_named(older, stating, fix)
            )
            if by_words or by_value:
                order.remove(newer)
                order.insert(place, newer)
                break
    return [ranked[n].key for n in order]


def _restates(a_in_b: set[str], b_in_a: set[str], a: set[str], b: set[str]) -> bool:
    shared = len(a_in_b | b_in_a)
    return shared >= MIN_SHARED_WORDS and shared >= MIN_SHARED * min(len(a), len(b))
