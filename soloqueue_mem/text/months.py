"""English month names as the text readers match them: a module of its own, so the
``log`` path, which reads what a statement replaced (:mod:`.replaced`), does not import
the time-expression reader (:mod:`.when`) with it."""

# an English month's name, whole or cut short ("June", "Sept"), read case-folded
MONTH_NAME_EN = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
)
