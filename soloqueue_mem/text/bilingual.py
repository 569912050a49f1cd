"""Words a question may use in one language for what the user said in the other.

A user of two languages states a fact in one ("下个月我结婚，11 月 15 号") and asks
about it in the other ("When's my wedding?"). The two share no word, so a lexical
search cannot meet them, and extraction's canonical predicates only bridge the
attributes it keys. This table pairs the English and Chinese words of whole categories
of what people tell an agent about themselves and their team — places, family, diet and
allergies, language rules, the kinds of tools a team uses, schedule, ownership,
workplaces, the things of everyday work (reports, formats, rules, plans, software), pets,
freight and trade, units of measure, events, travel and weather — so recall can look
for a query word's twin in the other language (:func:`translations`), bounded and
weighed below the query's own words.

Each row is one concept: its English words (single words; a word the table lists
matched as written, another by its Porter stem, so "allergies" finds the row of
"allergy") and its Chinese words (two characters or more: a lone character is inside
too many words; but for 猫 and 狗, see :data:`PETS`). Only whole categories belong
here, never a word because one sentence needs it, nor a word whose commonest sense in an
agent's turns is another (a git "branch", a "host" name, a docker "container", a network
"port", "show me", "in order to").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from functools import cache
from itertools import zip_longest

from soloqueue_mem.text.porter import stem
from soloqueue_mem.text.query import QueryTerm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from soloqueue_mem.text.dictionary import Dictionary

Row = tuple[tuple[str, ...], tuple[str, ...]]

PLACE_WORDS: tuple[Row, ...] = (
    (("city", "cities"), ("城市",)),
    (("hometown",), ("老家", "家乡")),
    (("country",), ("国家",)),
    (("address",), ("地址", "住址")),
    (("office",), ("办公室",)),
)

# the cities users most often name: China's largest and the world's best known
CITIES: tuple[Row, ...] = (
    (("beijing",), ("北京",)),
    (("shanghai",), ("上海",)),
    (("guangzhou",), ("广州",)),
    (("shenzhen",), ("深圳",)),
    (("chengdu",), ("成都",)),
    (("chongqing",), ("重庆",)),
    (("hangzhou",), ("杭州",)),
    (("nanjing",), ("南京",)),
    (("suzhou",), ("苏州",)),
    (("wuhan",), ("武汉",)),
    (("xian", "xi'an"), ("西安",)),
    (("tianjin",), ("天津",)),
    (("qingdao",), ("青岛",)),
    (("xiamen",), ("厦门",)),
    (("changsha",), ("长沙",)),
    (("kunming",), ("昆明",)),
    (("dalian",), ("大连",)),
    (("shenyang",), ("沈阳",)),
    (("harbin",), ("哈尔滨",)),
    (("zhengzhou",), ("郑州",)),
    (("jinan",), ("济南",)),
    (("hefei",), ("合肥",)),
    (("fuzhou",), ("福州",)),
    (("ningbo",), ("宁波",)),
    (("wuxi",), ("无锡",)),
    (("nanning",), ("南宁",)),
    (("guiyang",), ("贵阳",)),
    (("lanzhou",), ("兰州",)),
    (("urumqi",), ("乌鲁木齐",)),
    (("lhasa",), ("拉萨",)),
    (("hongkong",), ("香港",)),
    (("macau", "macao"), ("澳门",)),
    (("taipei",), ("台北",)),
    (("singapore",), ("新加坡",)),
    (("tokyo",), ("东京",)),
    (("osaka",), ("大阪",)),
    (("kyoto",), ("京都",)),
    (("seoul",), ("首尔",)),
    (("bangkok",), ("曼谷",)),
    (("sydney",), ("悉尼",)),
    (("melbourne",), ("墨尔本",)),
    (("london",), ("伦敦",)),
    (("paris",), ("巴黎",)),
    (("berlin",), ("柏林",)),
    (("munich",), ("慕尼黑",)),
    (("amsterdam",), ("阿姆斯特丹",)),
    (("madrid",), ("马德里",)),
    (("barcelona",), ("巴塞罗那",)),
    (("rome",), ("罗马",)),
    (("lisbon",), ("里斯本",)),
    (("dublin",), ("都柏林",)),
    (("edinburgh",), ("爱丁堡",)),
    (("zurich",), ("苏黎世",)),
    (("vienna",), ("维也纳",)),
    (("stockholm",), ("斯德哥尔摩",)),
    (("moscow",), ("莫斯科",)),
    (("dubai",), ("迪拜",)),
    (("toronto",), ("多伦多",)),
    (("vancouver",), ("温哥华",)),
    (("seattle",), ("西雅图",)),
    (("boston",), ("波士顿",)),
    (("chicago",), ("芝加哥",)),
    (("york",), ("纽约",)),
    (("francisco",), ("旧金山",)),
    (("angeles",), ("洛杉矶",)),
)

COUNTRIES: tuple[Row, ...] = (
    (("china",), ("中国",)),
    (("japan",), ("日本",)),
    (("korea",), ("韩国",)),
    (("india",), ("印度",)),
    (("germany",), ("德国",)),
    (("france",), ("法国",)),
    (("britain", "uk", "england"), ("英国",)),
    (("america", "usa"), ("美国",)),
    (("canada",), ("加拿大",)),
    (("australia",), ("澳大利亚", "澳洲")),
    (("spain",), ("西班牙",)),
    (("italy",), ("意大利",)),
    (("portugal",), ("葡萄牙",)),
    (("netherlands",), ("荷兰",)),
)

FAMILY: tuple[Row, ...] = (
    (("family",), ("家人", "家里")),
    (("wife",), ("老婆", "妻子", "太太")),
    (("husband",), ("老公", "丈夫")),
    (("partner", "spouse"), ("伴侣", "爱人", "对象")),
    (("girlfriend",), ("女朋友", "女友")),
    (("boyfriend",), ("男朋友", "男友")),
    (("wedding", "married", "marry"), ("结婚", "婚礼")),
    (("anniversary",), ("纪念日",)),
    (("son",), ("儿子",)),
    (("daughter",), ("女儿",)),
    (("child", "children", "kid", "kids"), ("孩子", "小孩")),
    (("baby",), ("宝宝", "婴儿")),
    (("mother", "mom", "mum"), ("妈妈", "母亲")),
    (("father", "dad"), ("爸爸", "父亲")),
    (("parents",), ("父母", "爸妈")),
    (("brother",), ("哥哥", "弟弟", "兄弟")),
    (("sister",), ("姐姐", "妹妹", "姐妹")),
    (("grandmother", "grandma"), ("奶奶", "外婆", "姥姥")),
    (("grandfather", "grandpa"), ("爷爷", "外公", "姥爷")),
    (("birthday",), ("生日",)),
)

DIET: tuple[Row, ...] = (
    (("allergy", "allergic", "allergies"), ("过敏",)),
    (("diet", "dietary"), ("饮食", "忌口")),
    (("vegetarian",), ("素食", "吃素")),
    (("vegan",), ("纯素",)),
    (("food",), ("食物", "吃的")),
    (("peanut", "peanuts"), ("花生",)),
    (("nut", "nuts"), ("坚果",)),
    (("shellfish",), ("贝类", "甲壳类")),
    (("seafood",), ("海鲜",)),
    (("shrimp",), ("虾仁", "大虾")),
    (("fish",), ("鱼肉",)),
    (("milk", "dairy"), ("牛奶", "乳制品")),
    (("lactose",), ("乳糖",)),
    (("gluten",), ("麸质",)),
    (("wheat",), ("小麦",)),
    (("egg", "eggs"), ("鸡蛋",)),
    (("soy",), ("大豆", "黄豆")),
    (("meat",), ("肉类",)),
    (("pork",), ("猪肉",)),
    (("beef",), ("牛肉",)),
    (("chicken",), ("鸡肉",)),
    (("spicy",), ("辣的", "吃辣")),
    (("alcohol",), ("喝酒", "酒精")),
    (("sugar",), ("糖分",)),
)

LANGUAGE_RULES: tuple[Row, ...] = (
    (("chinese", "mandarin"), ("中文", "汉语", "普通话")),
    (("english",), ("英文", "英语")),
    (("japanese",), ("日语", "日文")),
    (("korean",), ("韩语", "韩文")),
    (("german",), ("德语",)),
    (("french",), ("法语",)),
    (("spanish",), ("西班牙语",)),
    (("answer", "answers", "reply", "replies", "respond", "response"), ("回答", "回复")),
    (("comment", "comments"), ("注释",)),
    (("translate", "translation", "translated"), ("翻译",)),
    (("language",), ("语言",)),
    (("short", "brief", "concise"), ("简短", "简洁")),
    (("detailed",), ("详细",)),
    (("formal",), ("正式",)),
    (("tone",), ("语气",)),
    (("explain", "explanation"), ("解释",)),
    (("summary", "summarize"), ("总结", "摘要")),
)

TOOL_KINDS: tuple[Row, ...] = (
    (("payment", "payments"), ("支付", "收款", "付款")),
    (("monitoring",), ("监控",)),
    (("alert", "alerts", "alerting"), ("告警", "报警")),
    (("dashboard", "dashboards"), ("看板", "仪表盘")),
    (("chart", "charts"), ("图表",)),
    (("log", "logs", "logging"), ("日志",)),
    (("backup", "backups"), ("备份",)),
    (("storage",), ("存储",)),
    (("search",), ("搜索",)),
    (("analytics",), ("分析",)),
    (("repository", "repo"), ("仓库",)),
    (("ticket", "tickets"), ("工单",)),
    (("document", "documents", "docs"), ("文档",)),
    (("spreadsheet",), ("表格",)),
    (("notes",), ("笔记",)),
    (("chat", "messaging"), ("聊天",)),
    (("email",), ("邮件", "邮箱")),
    (("calendar",), ("日历",)),
    (("framework",), ("框架",)),
    (("server", "servers"), ("服务器",)),
    (("cloud",), ("云服务",)),
    (("deploy", "deployment"), ("部署",)),
    (("release", "releases"), ("发布", "上线")),
    (("build",), ("构建",)),
    (("test", "tests", "testing"), ("测试",)),
    (("export",), ("导出",)),
    (("vendor", "provider", "supplier"), ("供应商", "服务商")),
)

SCHEDULE: tuple[Row, ...] = (
    (("monday",), ("周一", "星期一", "礼拜一")),
    (("tuesday",), ("周二", "星期二", "礼拜二")),
    (("wednesday",), ("周三", "星期三", "礼拜三")),
    (("thursday",), ("周四", "星期四", "礼拜四")),
    (("friday",), ("周五", "星期五", "礼拜五")),
    (("saturday",), ("周六", "星期六", "礼拜六")),
    (("sunday",), ("周日", "星期日", "星期天", "礼拜天")),
    (("weekend", "weekends"), ("周末",)),
    (("morning", "mornings"), ("早上", "上午")),
    (("noon", "lunchtime"), ("中午",)),
    (("afternoon", "afternoons"), ("下午",)),
    (("evening", "evenings", "tonight"), ("晚上", "傍晚")),
    (("weekly",), ("每周", "每星期")),
    (("daily",), ("每天",)),
    (("monthly",), ("每月",)),
    (("meeting", "meetings"), ("开会", "会议")),
    (("standup",), ("站会",)),
    (("deadline",), ("截止", "期限")),
    (("schedule",), ("日程", "安排")),
    (("vacation", "holiday"), ("休假", "请假", "假期")),
    (("appointment",), ("预约",)),
    (("lesson", "lessons"), ("上课", "课程")),
)

OWNERS: tuple[Row, ...] = (
    (("owner", "owns", "responsible"), ("负责", "负责人")),
    (("on-call", "oncall"), ("值班",)),
    (("maintain", "maintains", "maintainer"), ("维护",)),
    (("review", "reviews", "reviewer"), ("评审", "审核")),
    (("approve", "approval", "approves"), ("审批", "批准")),
    (("manager",), ("经理",)),
    (("team",), ("团队",)),
    (("colleague", "colleagues", "coworker"), ("同事",)),
    (("boss",), ("老板", "领导")),
    (("client", "customer"), ("客户",)),
)

# where people work and what they run: the places a team names
WORKPLACES: tuple[Row, ...] = (
    (("company", "companies"), ("公司",)),
    (("factory", "factories"), ("工厂", "厂房")),
    (("shop", "shops", "store", "stores"), ("门店", "店铺", "商店")),
    (("restaurant", "restaurants"), ("餐厅", "饭店", "餐馆")),
    (("warehouse", "storeroom"), ("仓库", "库房")),
    (("studio", "studios"), ("工作室", "录音棚")),
    (("clinic",), ("诊所",)),
    (("hospital",), ("医院",)),
    (("school",), ("学校",)),
    (("headquarters",), ("总部",)),
    (("lab", "laboratory"), ("实验室",)),
    (("hotel",), ("酒店",)),
    (("airport",), ("机场",)),
)

# the things of everyday work: what is written, agreed, shipped and used to do it
WORK_THINGS: tuple[Row, ...] = (
    (("report", "reports"), ("报告", "报表", "汇报")),
    (("format", "formats"), ("格式",)),
    (("style",), ("风格",)),
    (("template", "templates"), ("模板",)),
    (("plan", "plans"), ("计划",)),
    (("rule", "rules"), ("规则", "规矩", "规定")),
    (("policy",), ("政策", "制度")),
    (("notice", "notification", "notifications"), ("通知",)),
    (("contract",), ("合同",)),
    (("invoice", "invoices"), ("发票",)),
    (("price", "pricing"), ("价格", "报价")),
    (("budget",), ("预算",)),
    (("salary",), ("工资", "薪水")),
    (("delivery", "deliveries"), ("配送", "送货")),
    (("shipping", "shipment"), ("发货", "物流")),
    (("courier",), ("快递",)),
    (("training",), ("培训", "训练")),
    (("interview",), ("面试",)),
    (("project", "projects"), ("项目",)),
    (("product", "products"), ("产品",)),
    (("progress",), ("进度",)),
    (("software",), ("软件",)),
    (("platform", "platforms"), ("平台",)),
    (("system",), ("系统",)),
    (("website",), ("网站", "官网")),
    (("hosting", "hosted"), ("托管",)),
    (("account", "accounts"), ("账号", "账户")),
    (("password",), ("密码",)),
    (("database",), ("数据库",)),
    (("script", "scripts"), ("脚本",)),
    (("game", "games"), ("游戏",)),
    (("music",), ("音乐",)),
    (("podcast",), ("播客",)),
    (("video", "videos"), ("视频",)),
    (("photo", "photos"), ("照片",)),
)

# the animals people keep, with the commonest breeds: a pet is often named by its breed
# ("我家柯基", "my corgi"). 猫 and 狗 are the only one-character words of the table:
# Chinese names a cat or a dog by them alone ("我家猫", "三花猫"), and few other words
# hold them
PETS: tuple[Row, ...] = (
    (("pet", "pets"), ("宠物",)),
    (
        ("dog", "dogs", "puppy", "corgi", "husky", "retriever", "poodle", "shiba"),
        ("狗", "柯基", "金毛", "哈士奇", "泰迪", "柴犬", "边牧", "拉布拉多"),
    ),
    (
        ("cat", "cats", "kitten", "ragdoll", "siamese", "calico", "tabby"),
        ("猫", "布偶", "暹罗", "三花", "狸花"),
    ),
    (("parrot",), ("鹦鹉",)),
    (("rabbit", "bunny"), ("兔子",)),
    (("hamster",), ("仓鼠",)),
    (("turtle", "tortoise"), ("乌龟",)),
    (("vet", "veterinarian"), ("兽医", "宠物医院")),
)

# moving goods: who carries them, how, and through which checks
FREIGHT: tuple[Row, ...] = (
    (("freight", "cargo"), ("货运", "货物")),
    (("forwarder", "forwarders", "forwarding"), ("货代",)),
    (("truck", "trucks", "trucking", "lorry", "haulage"), ("拖车", "卡车", "货车")),
    (("customs",), ("海关", "报关", "清关")),
    (("tariff", "tariffs"), ("关税",)),
    (("logistics",), ("物流",)),
    (("overseas", "abroad"), ("海外", "国外")),
    (("inventory", "stock"), ("库存",)),
    (("parcel", "parcels"), ("包裹",)),
)

# units a quantity is said in (those of two characters: 米, 吨 and 块 are inside too
# many words)
UNITS: tuple[Row, ...] = (
    (("hectare", "hectares"), ("公顷",)),
    (("acre", "acres"), ("英亩",)),
    (("kilogram", "kilograms", "kilo", "kilos", "kg"), ("公斤", "千克")),
    (("kilometer", "kilometers", "kilometre", "kilometres", "km"), ("公里",)),
    (("seat", "seats"), ("席位", "座位")),
    (("fee", "fees"), ("费用", "费率")),
)

# what an event is made of: where, for whom, with whose money and what on stage
EVENTS: tuple[Row, ...] = (
    (("venue", "venues"), ("场地", "会场")),
    (("ticket", "tickets"), ("门票", "票价")),
    (("lighting",), ("灯光", "照明")),
    (("volunteer", "volunteers"), ("志愿者",)),
    (("sponsor", "sponsors", "sponsorship"), ("赞助", "赞助商")),
    (("guest", "guests"), ("嘉宾", "客人")),
    (("audience",), ("观众",)),
    (("exhibition", "expo"), ("展会", "展览")),
    (("rehearsal",), ("彩排",)),
    (("festival",), ("艺术节", "音乐节")),
)

# going somewhere and what it takes (not "landing", a web page, nor "train", a model)
TRAVEL: tuple[Row, ...] = (
    (("flight", "flights"), ("航班", "飞行")),
    (("takeoff",), ("起飞",)),
    (("trip", "trips", "travel", "travels"), ("出差", "旅行", "旅游")),
    (("passport",), ("护照",)),
    (("luggage", "baggage"), ("行李",)),
    (("boarding",), ("登机",)),
    (("commute",), ("通勤",)),
)

WEATHER: tuple[Row, ...] = (
    (("weather",), ("天气",)),
    (("rain", "rainy", "raining"), ("下雨", "雨天")),
    (("snow", "snowy"), ("下雪",)),
    (("temperature",), ("气温", "温度")),
    (("wind", "windy"), ("风速", "大风")),
    (("heat", "heatwave"), ("高温", "炎热")),
    (("typhoon",), ("台风",)),
)

CATEGORIES: tuple[tuple[Row, ...], ...] = (
    PLACE_WORDS,
    CITIES,
    COUNTRIES,
    FAMILY,
    DIET,
    LANGUAGE_RULES,
    TOOL_KINDS,
    SCHEDULE,
    OWNERS,
    WORKPLACES,
    WORK_THINGS,
    PETS,
    FREIGHT,
    UNITS,
    EVENTS,
    TRAVEL,
    WEATHER,
)


def translations(word: str) -> tuple[str, ...]:
    """The other language's words for ``word`` (a query term: an English word or a
    Chinese word), or () when the table has no row for it. An English word the table
    lists is looked up as written, another by its stem: two rows' words may share a
    stem and not a sense ("customer", "customs"; "response", "responsible"), and a
    listed word takes only its own row's twins."""
    if not word.isascii():
        return _table().get(word, ())
    word = word.casefold()
    return _written().get(word) or _table().get(stem(word), ())


@cache
def _written() -> dict[str, tuple[str, ...]]:
    """Each English word of the table as written -> its rows' Chinese words."""
    table: dict[str, dict[str, None]] = {}
    for rows in CATEGORIES:
        for english, chinese in rows:
            for word in english:
                table.setdefault(word, {}).update(dict.fromkeys(chinese))
    return {word: tuple(twins) for word, twins in table.items()}


@cache
def _table() -> dict[str, tuple[str, ...]]:
    """English stems -> the row's Chinese words; Chinese words -> the row's English
    words (as written: the index stems them itself)."""
    table: dict[str, dict[str, None]] = {}
    for rows in CATEGORIES:
        for english, chinese in rows:
            for word in english:
                table.setdefault(stem(word), {}).update(dict.fromkeys(chinese))
            one_per_stem = {stem(word): word for word in reversed(english)}
            for word in chinese:
                table.setdefault(word, {}).update(dict.fromkeys(reversed(one_per_stem.values())))
    return {word: tuple(twins) for word, twins in table.items()}


def twins_present(english: str, chinese: str) -> bool:
    """Whether each word of ``english`` the table knows has a twin in ``chinese``:
    "no pickups on weekends" and "周末不安排提柜" (weekends, 周末) may say one thing;
    "I'm allergic to shellfish" and "我对花生过敏" (shellfish, not 花生) do not."""
    for word in re.findall(r"[A-Za-z][\w'-]*", english):
        twins = translations(word)
        if twins and not any(twin in chinese for twin in twins):
            return False
    return True


TRANSLATION_WEIGHT = 0.5  # a twin weighs half its word: the query's own words come first
MAX_TRANSLATIONS = 8  # at most this many twins join a query


def translated(
    terms: list[QueryTerm], dictionary: Dictionary | None = None, asked: Collection[str] = ()
) -> list[QueryTerm]:
    """The other language's twins of ``terms`` that the query does not hold, each in
    its word's group (a text holding the word or its twin covers that word once) at
    ``TRANSLATION_WEIGHT`` of its weight, at most ``MAX_TRANSLATIONS``: each word's
    first twin (the heaviest words' first), then each one's second, and so on, so that
    a word with many twins (store: 门店, 店铺, 商店) never takes the places of other
    words' only twin. The table's twins come first; the words of ``asked`` (some of
    :func:`untranslated_words`) are then looked up in ``dictionary``
    (:mod:`.dictionary`), when there is one, to fill the places left: a dictionary's
    many senses never crowd out the table's."""
    have = {term.text.casefold() for term in terms}
    twins: dict[str, QueryTerm] = {}
    heaviest_first = sorted(terms, key=lambda t: -t.weight)
    passes: list[tuple[list[QueryTerm], Callable[[str], tuple[str, ...]]]]
    passes = [(heaviest_first, translations)]
    if dictionary is not None:
        words = [term for term in heaviest_first if term.text in asked]
        passes.append((words, dictionary.translations))
    for searched, lookup in passes:
        each_word = [
            [
                QueryTerm(twin, term.weight * TRANSLATION_WEIGHT, term.group)
                for twin in lookup(term.text)
                if twin.casefold() not in have
            ]
            for term in searched
        ]
        for twin in _one_from_each_in_turn(each_word):
            twins.setdefault(twin.text, twin)
    return list(twins.values())[:MAX_TRANSLATIONS]


def _one_from_each_in_turn(lists: list[list[QueryTerm]]) -> Iterator[QueryTerm]:
    """Every list's first item, then every list's second, and so on."""
    for rank in zip_longest(*lists):
        yield from (item for item in rank if item is not None)


def untranslated_words(terms: list[QueryTerm]) -> list[str]:
    """The query's own words (not their sub-words: 咖啡 in 咖啡馆) the table has no
    row for: those a dictionary may translate."""
    return [term.text for term in _query_words(terms) if not translations(term.text)]


def _query_words(terms: list[QueryTerm]) -> list[QueryTerm]:
    """The first term of each group in ``terms``: the query word (the others are its
    sub-words, which :mod:`.query` puts after it)."""
    first: dict[int, QueryTerm] = {}
    for term in terms:
        first.setdefault(term.group, term)
    return list(first.values())
