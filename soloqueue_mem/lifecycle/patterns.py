"""The quick rules' statement patterns (English, then Chinese), first match wins.

Each pattern names its parts: ``value`` (what is stated), ``attr`` (the attribute
phrase: "editor", "staging database", "Node 版本"), ``thing`` (a named part: the
API, 后端), ``old`` (the value switched from), ``role``. ``predicate`` says how the
key is found (see :func:`soloqueue_mem.lifecycle.extract` and ``vocabulary``):

- ``""``: a list (likes, rules, "uses"), never superseded;
- ``attr``: the attribute phrase, canonicalised ("时区" -> "timezone");
- ``switch``: the attribute if named, else the one the new (or old) value names;
- ``use``: the attribute a known single-valued value names ("we use Slack" -> team chat);
- ``built``: what a part is built with names the attribute (Go: language, Next.js:
  framework); an unknown value, none;
- any other text: that canonical predicate.

``check`` names what the captured parts must pass (see ``extract._acceptable``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from soloqueue_mem.lifecycle.when import SCOPE_EN, SCOPE_ZH


class Pattern(NamedTuple):
    regex: re.Pattern[str]
    type: str
    predicate: str = ""
    duration: str | None = None  # rules: decided by the clause (task or behaviour)
    check: str = ""


def make(
    pattern: str,
    type_: str,
    predicate: str = "",
    duration: str | None = None,
    check: str = "",
    flags: int = re.IGNORECASE,
) -> Pattern:
    return Pattern(re.compile(pattern, flags), type_, predicate, duration, check)


def keyed(pattern: str, check: str) -> Pattern:
    """A fact keyed by its attribute phrase (``attr``), read only if it passes ``check``."""
    return make(pattern, "FACT", "attr", check=check)


OBJ = r"(?P<value>.{2,120}?)"
_DET = r"(?:the |our |my )?"
_THING = r"(?P<thing>[\w.\-]{2,30}(?: [\w.\-]{2,30}){0,2})"
_ZH_THING = r"(?P<thing>(?:我们的?|咱们的?)?[^，。我你他她它这那把帮请给]{1,20}?)"
_ZH_ATTR = r"(?P<attr>[^，。我你他她它这那把帮请给]{1,12}?)"
_ZH_SWITCH = (
    r"(?:换成了?|改成了?|改为|换为|换到|切换到|切换成|切到|迁移到|迁到|改用|换用|升级到|改到)"
)
# A prohibition under a recurring time scope said first ("周五不要上线", "周末不安排提柜",
# "On Fridays, never deploy", "Fridays are no-deploy days") or, in English, opening
# with "no"/"never" ("No deploys on Fridays"): a standing rule, as when the scope comes
# after ("永远不要周五发布"). 不 before a copula or an adverb (不是, 不在, 不太, 不用) says
# what is, not what must not be done.
_ZH_SCOPED_RULE = (
    r"^(?:请)?(?:我们|咱们|大家)?(?:" + SCOPE_ZH + r")(?:的时候)?\s*(?:我们|咱们|大家)?"
    r"(?:都|也|一律|一概|还是)?(?:永远|绝对|从来|从)?"
    r"(?:不要|不准|不许|不能|不得|禁止|别|不(?![是在太会用行错好对够]))" + OBJ + r"$"
)
_EN_SCOPED_RULE = (
    r"^(?=(?:(?:on|during|over|in the) )?(?:" + SCOPE_EN + r")\b"
    r"|(?:no|never)\b.*\b(?:" + SCOPE_EN + r")\b)"
    r"(?=.*\b(?:no|never|not|don't|do not|can't|cannot|off[- ]limits)\b)"
    r"(?P<value>.{2,120}?)$"
)
_ZH_FAMILY = (
    r"女儿|儿子|老婆|老公|妻子|丈夫|太太|孩子|宝宝|猫咪|狗狗|小猫|小狗|猫|狗|宠物|兔子"
    r"|鹦鹉|仓鼠|男朋友|女朋友|对象"
)


def _english() -> list[Pattern]:
    return [
        # rules first (they often contain "I")
        make(
            r"^(?:please\s+|you\s+)?(?:always|never|don't ever|do not ever|don't|do not"
            r"|must(?: always)?)\s+" + OBJ + r"$",
            "RULE",
            check="rule",
        ),
        make(_EN_SCOPED_RULE, "RULE", check="rule"),
        make(
            r"^my (?:favou?rite|preferred) (?P<attr>[\w' ]{2,30}?) (?:is|are) " + OBJ + r"$",
            "PREFERENCE",
            "favorite",
        ),
        # likes and dislikes: "I really like X", "I'm not a big fan of X", "I can't stand X",
        # "I'd prefer X", "I would like posts to use British spelling" (not "I'd like a
        # summary": a request)
        make(
            r"^i(?: (?:really |also |absolutely )?(?:prefer|like|love|enjoy)"
            r"|(?:'d| would)(?: really)? (?:prefer|(?:like|love)"
            r"(?=(?: (?!(?:you|me|to)\b)[\w'-]+){1,4} to \w))"
            r"| (?:really |also )?(?:hate|dislike|don't like|do not like|don't really like"
            r"|do not really like|can't stand|cannot stand)"
            r"|(?:'m| am) (?:also |not (?:really )?)?(?:a )?(?:big |huge )?fan of) " + OBJ + r"$",
            "PREFERENCE",
            check="object",
        ),
        # switches: "I switched from Vim to Helix", "we moved the CI to CircleCI"
        make(
            r"^(?:i|we|the team|our team)(?:'ve| have)? (?:recently |just |finally |now |already )?"
            r"(?:switched|moved|migrated|changed|upgraded)(?: over)?"
            r"(?: (?:the |our |my )?(?P<attr>[\w' ]{2,30}?))??(?: from (?P<old>.{1,60}?))?"
            r" to " + OBJ + r"$",
            "FACT",
            "switch",
            check="switch",
        ),
        # "we ended up going with Looker for the exec reports", "we settled on Postgres"
        make(
            r"^(?:i|we|the team|our team)(?: ended up| finally| eventually)?"
            r" (?:going with|went with|go with|settled on|chose|picked|decided on) " + OBJ + r"$",
            "FACT",
            "switch",
            check="switch",
        ),
        make(
            r"^" + _DET + r"(?P<attr>[\w' ]{2,30}?) (?:has |have )?(?:changed|moved|switched)"
            r" (?:over )?to " + OBJ + r"$",
            "FACT",
            "switch",
            check="known",
        ),
        make(
            r"^my name is " + OBJ + r"$",
            "FACT",
            "name",
            check="value",
        ),
        keyed(
            r"^my (?P<attr>[\w' ]{2,30}?) (?:is|are) " + OBJ + r"$",
            "attribute",
        ),
        keyed(
            r"^our (?P<attr>[\w' ]{2,30}?) (?:is|are) " + OBJ + r"$",
            "attribute",
        ),
        make(
            r"^" + _DET + _THING + r" (?:runs|is running|listens|is listening|is|sits|serves"
            r"|is served) on port (?P<value>\d{2,5})\b.*$",
            "FACT",
            "port",
            check="thing",
        ),
        make(
            r"^" + _DET + _THING + r" uses port (?P<value>\d{2,5})$",
            "FACT",
            "port",
            check="thing",
        ),
        make(
            r"^"
            + _DET
            + _THING
            + r" (?:is|are|was|gets|get) (?:deployed|hosted) (?:on|to|at|in) "
            + OBJ
            + r"$",
            "FACT",
            "deploy",
            check="thing",
        ),
        make(
            r"^(?:we|i) (?:deploy|host)(?: (?:the |our |my )?"
            + _THING
            + r")? (?:on|to|at) "
            + OBJ
            + r"$",
            "FACT",
            "deploy",
            check="object",
        ),
        make(
            r"^" + _DET + _THING + r" runs on " + OBJ + r"$",
            "FACT",
            "runs",
            check="thing",
        ),
        make(
            r"^" + _DET + _THING + r" (?:is|was|are|were) (?:written|built|implemented|developed)"
            r" (?:in|with) " + OBJ + r"$",
            "FACT",
            "built",
            check="thing",
        ),
        keyed(
            r"^the (?P<attr>[\w' ]{2,30}?) (?:is|are) (?:now )?" + OBJ + r"$",
            "known",
        ),
        make(
            r"^(?i:i'm|i am) (?P<value>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"
            r"(?:,? (?i:the|a|an|your) (?P<role>[\w' -]{2,90}))?$",
            "FACT",
            "name",
            check="person",
            flags=0,
        ),
        make(r"^i(?:'m| am) (?:a|an) " + OBJ + r"$", "FACT", "job", check="role"),
        make(r"^i work as (?P<value>an? .{2,80}?)$", "FACT", "job"),
        make(
            r"^(?:i|we) (?:have|own|got) (?P<count>a|an|one|two|three|four|\d+)"
            r" (?P<attr>[\w' ]{2,30}?) (?:named|called) " + OBJ + r"$",
            "FACT",
        ),
        # also at the end of a longer introduction: "I do localization engineering for
        # game studios, freelance, based in Chengdu"
        make(
            r"^i(?: live|'m based| am based|\b.{2,160}?,\s*based) in " + OBJ + r"$",
            "FACT",
            "city",
        ),
        make(r"^i work (?:at|for) " + OBJ + r"$", "FACT", "employer"),
        make(
            r"^(?:we|our team|the team|my team|(?:this|our|the) (?:project|repo|codebase|app))"
            r"(?: mostly| mainly| all| also| now| still)?"
            r" (?:use|uses|are using|'re using|rely on|relies on) " + OBJ + r"$",
            "FACT",
            "use",
            check="object",
        ),
        make(r"^i(?:'m| am) using " + OBJ + r"$", "FACT", "use", check="object"),
        # "on" is a busy word (on a call, on vacation, on it): only a name-like object
        make(r"^i(?:'m| am) on " + OBJ + r"$", "FACT", "use", check="name"),
        make(
            r"^i (?:mostly |mainly |usually |normally |still |also |now )?use " + OBJ + r"$",
            "FACT",
            "use",
            check="object",
        ),
    ]


def _chinese() -> list[Pattern]:
    return [
        make(_ZH_SCOPED_RULE, "RULE", check="rule"),
        make(
            r"^(?:请)?(?:永远不要|绝对不要|禁止|不准|不许)" + OBJ + r"$",
            "RULE",
            check="rule",
        ),
        make(
            r"^(?:请)?(?:总是|始终|一定要|务必|必须)" + OBJ + r"$",
            "RULE",
            check="rule",
        ),
        make(r"^(?:请)?(?:先)?(?:不要|别)" + OBJ + r"$", "RULE", check="rule"),
        # a rule about a topic: 提交信息必须用英文
        make(
            r"^(?P<attr>[^我他她它]{1,20}?)\s*(?:都|也)?(?:必须|务必|一律|一定要)" + OBJ + r"$",
            "RULE",
        ),
        make(
            r"^(?P<attr>[^我他她它]{1,20}?)\s*(?:都|也)?(?:禁止|不准|不许)" + OBJ + r"$",
            "RULE",
        ),
        make(
            r"^我(?:最)?喜欢的(?P<attr>.{1,10}?)是" + OBJ + r"$",
            "PREFERENCE",
            "favorite",
        ),
        make(
            r"^我(?:也|很|非常|比较|更|一直|特别)?"
            r"(?:喜欢|偏好|爱用|习惯用|讨厌|不喜欢|不太喜欢|受不了)" + OBJ + r"$",
            "PREFERENCE",
            check="object",
        ),
        # switches: 我已经换成 Helix 了, 端口改成 8443 了, 我从 VS Code 换成了 Cursor
        make(
            r"^(?:(?:我们|我|咱们|团队)的?)?(?P<attr>[^，。我你他她它这那把帮请给从]{0,20}?)\s*"
            r"(?:我们|咱们)?(?:已经|现在|都|也|早就)?(?:从(?P<old>.{1,30}?))?"
            + _ZH_SWITCH
            + r"\s*(?P<value>.{1,60}?)(?:了|啦)?$",
            "FACT",
            "switch",
            check="switch",
        ),
        make(r"^我是(?:一名|一位|一个)" + OBJ + r"$", "FACT", "job"),
        make(r"^我是" + OBJ + r"$", "FACT", "job", check="role"),
        make(r"^我叫" + OBJ + r"$", "FACT", "name", check="value"),
        make(
            r"^我(?:家)?(?:有|养了?)(?P<count>[一两三四几\d])?(?:只|条|个|位)(?P<attr>[^，]{1,6}?)"
            r"(?:叫|名叫|名字叫)(?P<value>.{1,20})$",
            "FACT",
            "pet",
        ),
        make(
            r"^我(?:家|的|家的)?(?P<attr>" + _ZH_FAMILY + r")(?:的名字)?叫(?P<value>.{1,20})$",
            "FACT",
        ),
        # 我的电脑不是 Mac says what the value is not
        keyed(
            r"^我的(?P<attr>[^，。]{1,10}?)(?<![不没])是" + OBJ + r"$",
            "attribute",
        ),
        keyed(
            r"^(?:我们|咱们|我们团队|我们组)的\s*(?P<attr>[^，。]{1,20}?)(?<![不没])(?:是|用的是|使用的是)"
            + OBJ
            + r"$",
            "attribute",
        ),
        # 我们前端框架用 React: a known attribute right after 我们, then 用 or 是
        keyed(
            r"^(?:我们|咱们)"
            + _ZH_ATTR
            + r"(?<![不没])(?:用的是|使用的是|用|是)(?!不是)"
            + OBJ
            + r"$",
            "known",
        ),
        make(
            r"^" + _ZH_THING + r"(?:是)?(?:用|使用|基于)(?P<value>[^，。]{1,30}?)"
            r"(?:写|开发|实现|编写|做)(?:成)?的?$",
            "FACT",
            "built",
            check="thing",
        ),
        make(
            r"^" + _ZH_THING + r"(?:跑在|运行在|监听|开在|用|在)\s*(?:端口)?\s*(?P<value>\d{2,5})"
            r"\s*(?:号)?端口(?:上)?$",
            "FACT",
            "port",
            check="thing",
        ),
        make(
            r"^"
            + _ZH_THING
            + r"(?:部署在|部署到|托管在|跑在|运行在)(?P<value>.{1,40}?)(?:上|里)?$",
            "FACT",
            "deploy",
            check="thing",
        ),
        keyed(
            r"^" + _ZH_ATTR + r"(?<![不没])(?:是|用的是|使用的是)(?!不是|用)" + OBJ + r"$",
            "known",
        ),
        make(
            r"^我(?:现在|目前)?(?:住在|在)(?P<value>.{1,30}?)(?:工作|上班)$",
            "FACT",
            "employer",
        ),
        make(r"^我住在" + OBJ + r"$", "FACT", "city"),
        make(
            r"^(?:我们|咱们|团队|我们团队|我们公司|公司|(?:我们的?|这个|本)?项目(?:里)?)"
            r"(?:平时|一般|主要|现在|都|也|一直)?"
            r"(?:在用|用的是|使用|用(?![了过来于着的]))" + OBJ + r"$",
            "FACT",
            "use",
            check="object",
        ),
        make(
            r"^我(?:平时|一般|主要|日常|现在|一直|也)?(?:在用|正在用|使用|用的是|用(?![了过来于着的]))"
            + OBJ
            + r"$",
            "FACT",
            "use",
            check="object",
        ),
    ]


@cache
def patterns() -> tuple[Pattern, ...]:
    """Every pattern in the order they are tried: everyday code-switched speech first
    (``patterns_mixed``), then the plainer English and Chinese ones, then bare
    attributes ("batch size is 192 now")."""
    from soloqueue_mem.lifecycle import patterns_mixed  # it builds on this module

    return (*patterns_mixed.patterns(), *_english(), *_chinese(), *patterns_mixed.late())
