"""A handover: someone leaves a role and someone else takes it over.

What was said names someone leaving ("Dana moved to their marketing team", "老周调去做网关
了", "阿杰下周去漳州那边开新项目了") and someone taking over ("Felix took over as PM",
"以后找小林", "交给蔡雨婷"). Both halves are needed: "Dana moved to the London team" alone
may say nothing of a role, and "Standup moved to 10:15" is no handover. The one who left
is the value the handover replaces (:func:`soloqueue_mem.text.replaced.replaced_value`),
and a memory naming them is what it corrects (:mod:`soloqueue_mem.memory.correction`).
Plain text rules, with no store behind them.
"""

from __future__ import annotations

import re
from functools import cache


@cache
def handover_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Someone leaving a role, the name before the verb: "Dana moved to their marketing
    team", "Dana left the team", "老周调去做网关了", "小王离职了", or going elsewhere from
    a time on ("阿杰下周去漳州那边开新项目了": 去 and a place or task, 了 ending the
    clause), the time before the verb too ("阿杰下周调去做新品线了"), or off to other
    work or away for a while ("阿杰去专心做视频", "Ciarán's gone on secondment", "Leo 下周
    开始休陪产假"); and
    someone taking it over: "took over", "replaces", "goes to Felix", "Niamh is
    supervising Heron", "以后找小林", "以后 OTA 的事找小林", "下周起报关找郑子健",
    "交给小林", "交接给 Kelly", "接手", "改由陈默带"."""
    name = r"(?P<name>[A-Z][\w.-]+(?: [A-Z][\w.-]+)?|[\u4e00-\u9fff]{2,3})"
    english = (
        r"(?:has |had |'s |’s )?(?:left(?: (?:the|our|their) (?:team|company|project))?\b"
        r"|moved (?:over )?to (?:the |their |our |another |a )?[\w -]{0,30}?\bteam\b"
        r"|stepped down|is leaving\b|handed (?:\w+ )?over\b"
        # off to other work or away for a while: 去专心做视频, 借调 in English
        r"|(?:is |will be )?(?:mov(?:es|ed|ing)|switch(?:es|ed|ing)|gone)"
        r" (?:over )?to (?:work on|focus on)\b"
        r"|(?:is |will be )?(?:going|gone|went|off) on (?:secondment|sabbatical|leave)\b)"
    )
    when = "(?:下周|下个月|明天|月底|已经|马上)"
    going = f"{when}去[\u4e00-\u9fff]{{2,12}}了(?=[，,。；;！!]|$)"
    # off to other work: "阿杰去专心做视频", "阿杰转做视频", "老周下个月借调去总部"; never
    # after a character that is no part of a name ("老周调去做网关了" names 老周)
    other_work = "(?<![调也就又再要会先想])(?:转去|去|转|改)(?:专心|专门|全职)?(?:做|负责|管)|借调"
    # away for a while: 休产假, 休年假, 请病假 ("Leo 下周开始休陪产假"), "off on leave"
    away = "(?:开始)?(?:休[\u4e00-\u9fff]{0,3}假|请[\u4e00-\u9fff]{0,2}假)"
    chinese = f"(?:{when}|也)?(?:调去|调走|离职|转岗|不再负责|{other_work}|{away})|{going}"
    start = r"(?:^|(?<=[，,。；;:：.!?！？\s]))(?:然后|另外|还有|而且|对了)?"
    left = re.compile(f"{start}{name}\\s?(?:{english}|{chinese})")
    taking = re.compile(
        r"\b(?:took|takes|taking|taken) over\b|\breplac(?:ed|es|ing) [A-Z]"
        # someone now doing the role, the English of 由小林负责: "Niamh is supervising Heron"
        r"|\b(?:is|will be) (?:now )?(?:supervising|leading|running|handling|covering)\b"
        r"|\bgoes to [A-Z]|交(?:接)?给|接手|接替|[归由][\u4e00-\u9fff]{1,3}(?:负责|管|带)"
        # from now, or from a time on, a task goes to someone: 以后找, "下周起报关找郑子健"
        r"|(?:以后|现在|改|起|开始)[\u4e00-\u9fff\w ]{0,8}?找"
    )
    return left, taking


def leaving(text: str) -> re.Match[str] | None:
    """Where ``text`` hands a role over: someone leaving it, when someone takes it over
    too."""
    left, taking = handover_patterns()
    found = left.search(text)
    return found if found is not None and taking.search(text) is not None else None


def handed_over(text: str) -> str:
    """The name of the one who left a role ``text`` hands over to someone else, or ""."""
    found = leaving(text)
    return "" if found is None else found.group("name")


def handover_hints(said: str, contents: list[str]) -> list[str]:
    """What each statement of ``contents`` (drafts of the handover ``said``) corrects:
    its own words with the clause naming who left when another clause of ``said`` holds
    it; "" when ``said`` hands nothing over or the statement does not name the taking
    over. ``said`` is read once, whatever the number of statements."""
    found = leaving(said)
    if found is None:
        return ["" for _ in contents]
    gone = found.group(0).strip()
    taking = handover_patterns()[1]

    def hint(content: str) -> str:
        if taking.search(content) is None:
            return ""
        return content if gone in content else f"{content}；{gone}"

    return [hint(content) for content in contents]


def aliases(name: str, texts: list[str]) -> set[str]:
    """The other names ``texts`` give the person called ``name``: a name and its alias in
    parentheses are one person ("陈杰（阿杰）", "Robert (Bob)"), whichever of the two is
    ``name``. A handover naming the one who left by either name replaces what was said
    of them by the other. Before the parenthesis, a Chinese name is the two characters
    next to it (the given name of a longer one: the text runs on without a break, "负责人
    是陈杰（阿杰）"); inside it, the whole alias."""
    value = re.escape(name)
    latin = r"[A-Z][\w.-]+(?: [A-Z][\w.-]+)?"
    before = re.compile(f"(?P<other>{latin}|[\u4e00-\u9fff]{{2}})\\s?[（(]\\s?{value}\\s?[)）]")
    after = re.compile(f"{value}\\s?[（(]\\s?(?P<other>{latin}|[\u4e00-\u9fff]{{2,4}})\\s?[)）]")
    return {
        found.group("other")
        for text in texts
        for pattern in (before, after)
        for found in pattern.finditer(text)
    }
