"""Function words a search drops from a query (unless nothing else is left).

Written for this project, not copied from a published list: the words a user's
question to their agent is made of that say nothing about *what* is asked. A stopword
matches most turns, so it barely moves BM25 but makes a search scan most of the index,
and a short turn made of such words ("我会的", "yes I will") outranks the content.

Chinese entries are whole words as the segmenter cuts them (a stopword is compared with
a segmented word, never searched inside one): pronouns, demonstratives, question words,
particles, conjunctions, prepositions, auxiliaries and modal verbs, degree and frequency
adverbs, and the verbs of talking about a memory ("告诉", "提到", "记得"). Words that
carry the question's meaning stay out even when they are common: preference verbs
(喜欢, 讨厌), plans (打算, 计划), time words (今天, 上周; see :mod:`.when`), numbers.
English entries are lower-case words as the query tokenizer splits them ("she'll" becomes
"she" and "ll"). They are the grammar only: words of time, order and frequency (after,
before, while, often, together) and verbs, however common, told LoCoMo's questions
apart from their distractors (hit@10 fell a point when they were dropped).
"""

from __future__ import annotations

ENGLISH_STOPWORDS = frozenset(
    """
    a an the
    i me my mine myself you your yours yourself yourselves he him his himself she her hers
    herself it its itself we us our ours ourselves they them their theirs themselves
    this that these those there here
    what which who whom whose when where why how
    am is are was were be do does did doing done have has had having
    will would shall should can could may might must
    and or but nor so if then than as
    of to in on at by for from with into onto
    no not
    oh ah um uh hey hmm yeah yep okay ok
    d ll m re s t ve
    """.split()
)

# One group per line: the kind of word, then the words.
CHINESE_STOPWORDS = frozenset(
    """
    我 你 您 他 她 它 我们 你们 您们 他们 她们 它们 咱 咱们 俺 俺们 自己 自个儿 大家
    人家 别人 本人 某 某个 某些 某种
    这 那 这个 那个 这些 那些 这里 那里 这儿 那儿 这边 那边 这样 那样 这么 那么 这种
    那种 这次 那次 这时 那时 此 其 其中 其他 其它 其余 该 每 每个 各 各个 各种 各位 所有
    一切 任何
    什么 怎么 怎么样 怎样 怎么办 为什么 为何 如何 多少 几 几个 谁 啥 咋 干嘛 是否 是不是
    有没有 哪 哪个 哪些 哪里 哪儿 哪种 哪位 哪次 何 何时 对不对 对吗 好吗 行吗
    的 地 得 了 着 过 之 所 们 么 吗 呢 吧 啊 呀 哦 哈 嘛 啦 呗 哇 嗯 喔 噢 诶 哎 唉
    哈哈 嘿 嗨 罢了 而已 的话 似的 等 等等 之类
    和 与 及 以及 跟 同 或 或者 或是 还是 而 而且 并 并且 但 但是 可是 不过 然而 只是
    因为 所以 因此 于是 如果 要是 假如 假设 虽然 虽 尽管 即使 就算 不管 无论 只要 只有
    除了 除非 然后 接着 否则 不然 既然 可见 总之 例如 比如 譬如 即 则 便
    在 从 向 往 朝 对 对于 关于 至于 把 被 给 让 叫 比 为 为了 由 由于 按 按照 根据 依照
    通过 经过 随着 自从 以 用 替 离 沿着 当 将
    是 有 没 没有 做 干 弄 搞 进行 成为 变成 来 去 到 上 下 起 起来 出来 下来
    会 能 能够 可以 可能 应该 应当 要 想 想要 需要 得要 必须 愿意 肯 敢
    感到 觉得 认为 以为 感觉 觉着 知道 明白 了解 记得 记住 还记得 忘了 忘记 告诉 告诉过
    说 说过 讲 讲过 问 问过 提 提到 提过 提起 提及 谈 谈到 谈过 聊 聊过 聊到 聊聊 看看
    说说 讲讲 想想 试试 分享 分享过 曾经 曾 之前 以前 先前 上次 当时 刚才 刚刚 后来
    一下 一下子 一些 一点 一点儿 有点 有点儿 有些 一个 一种 一次 一样 一起 一直 一定
    个 些 种 次 件 位 番
    都 也 还 就 才 又 再 只 仅 很 太 非常 特别 比较 更 更加 最 挺 蛮 真 真的 相当 十分
    极 极其 实在 已经 已 正在 正 刚 总是 总 老是 经常 常常 常 通常 往往 有时 有时候 偶尔
    肯定 当然 其实 确实 也许 或许 大概 好像 似乎 终于 马上 立刻 就是 不 别 不要 不是
    不会 不能 不想 到底 究竟 简直 几乎 差不多 反正 毕竟 居然 竟然 果然 还有 另外 再说
    时 时候 的时候 这时候 那时候 现在 目前 今后 事 事情 东西 方面 情况 样子
    """.split()
)

STOPWORDS = ENGLISH_STOPWORDS | CHINESE_STOPWORDS
