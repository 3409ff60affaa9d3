"""Instants: when the index received a paper, and "since when" as people write it.

An instant is a UTC time written as ISO 8601 with microseconds and a "Z"
("2026-12-06T11:52:16.123456Z"): always the same length and form, so instants compare
as strings (in SQL, in Milvus's JSON, in Python) in the order of time. Microseconds
keep two writes in one second apart, so "added since the last digest" never drops a
paper written in the second the digest ran.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from ..errors import QueryError

__all__ = ["day_in_words", "instant", "moment_in_words", "now", "parse_since", "span_in_words",
           "to_datetime"]

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_RELATIVE = re.compile(r"^\s*(\d+)\s*(d|h|w|days?|hours?|weeks?)\s*$", re.IGNORECASE)
_UNITS = {"d": "days", "h": "hours", "w": "weeks"}
# Spelled out rather than strftime's %B, which follows the locale a cron job happens to
# run in: a digest reads the same wherever it is made.
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def instant(moment: datetime) -> str:
    """`moment` as an instant (a naive datetime is taken to be UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime(_FORMAT)


def now() -> str:
    """The current instant."""
    return instant(datetime.now(timezone.utc))


def to_datetime(value: str) -> datetime:
    """The aware UTC datetime of an instant."""
    return datetime.strptime(value, _FORMAT).replace(tzinfo=timezone.utc)


def parse_since(text: str, *, current: datetime | None = None,
                parameter: str = "since") -> str:
    """The instant `text` names: a date ("2026-12-01", midnight UTC), a date and time
    ("2026-12-01T08:00", "2026-12-01 08:00:00+01:00"; UTC unless an offset is given),
    or a span back from now ("7d", "24h", "2w").

    Raises:
        QueryError: `text` is none of these, or is in the future; `parameter` names the
            argument that gave it.
    """
    current = current or datetime.now(timezone.utc)
    relative = _RELATIVE.match(text)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)[0].lower()
        return instant(current - timedelta(**{_UNITS[unit]: amount}))
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise QueryError(f"expected a date (2026-12-01), a date and time "
                         f"(2026-12-01T08:00) or a span back from now (7d, 24h), got "
                         f"'{text}'", parameter=parameter) from None
    if instant(moment) > instant(current):
        raise QueryError(f"'{text}' is in the future: nothing has been added since then",
                         parameter=parameter)
    return instant(moment)


def day_in_words(value: str) -> str:
    """The UTC day of an instant as people write it: "7 December 2026"."""
    moment = to_datetime(value)
    return f"{moment.day} {_MONTHS[moment.month - 1]} {moment.year}"


def moment_in_words(value: str) -> str:
    """An instant to the minute: "7 December 2026, 08:05 UTC"."""
    return f"{day_in_words(value)}, {to_datetime(value):%H:%M} UTC"


def span_in_words(start: str, end: str) -> str:
    """The UTC days from instant `start` to instant `end`, what they share said once:
    "7 December 2026", "1–7 December 2026", "28 November – 7 December 2026",
    "28 December 2026 – 3 January 2027"; "up to 7 December 2026" without a start."""
    last = to_datetime(end)
    if not start:
        return f"up to {day_in_words(end)}"
    first = to_datetime(start)
    if first.date() == last.date():
        return day_in_words(end)
    if (first.year, first.month) == (last.year, last.month):
        return f"{first.day}–{day_in_words(end)}"
    if first.year == last.year:
        return f"{first.day} {_MONTHS[first.month - 1]} – {day_in_words(end)}"
    return f"{day_in_words(start)} – {day_in_words(end)}"
