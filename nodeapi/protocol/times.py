"""Wire times: UTC ``YYYY-MM-DDTHH:MM:SS`` (docs/wire-contract.rst section 7).

graphene's ``fc::time_point_sec`` is an unsigned 32-bit second count; its
JSON form has no zone and no fraction.  :func:`parse_time` also accepts a
trailing ``Z`` and a fraction (``.000``, ignored), which fc's
``from_iso_string`` tolerates too.
"""

import datetime

from nodeapi.protocol.errors import InvalidTime

#: fc::time_point_sec::maximum() in its wire form.
MAX_WIRE_TIME = "2106-02-07T06:28:15"
#: fc::time_point_sec() (the epoch) in its wire form.
EPOCH_WIRE_TIME = "1970-01-01T00:00:00"
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_FROM_ISO = datetime.datetime.fromisoformat


def _bad(text) -> InvalidTime:
    return InvalidTime(f"Invalid time {text!r}: expected UTC YYYY-MM-DDTHH:MM:SS")


def parse_time(text: str) -> int:
    """``"2015-10-13T14:12:24"`` -> seconds since 1970-01-01 UTC (may be
    negative for earlier dates).  Raises :class:`InvalidTime`.

    The canonical form (what fc writes) is read by ``datetime``'s C parser
    and accepted when its separators are fc's (``-``, ``-``, ``T``, ``:``,
    ``:`` at offsets 4, 7, 10, 13 and 16: with 19 characters the parser
    then read exactly ``YYYY-MM-DDTHH:MM:SS`` of ASCII digits, what writing
    it back would give); anything else goes through the checks below."""
    if type(text) is str and len(text) == 19 and text[4:17:3] == "--T::":
        try:
            when = _FROM_ISO(text)
        except ValueError:
            when = None
        if when is not None and when.tzinfo is None:
            return ((when.toordinal() - _EPOCH_ORDINAL) * 86400 + when.hour * 3600
                    + when.minute * 60 + when.second)
    if not isinstance(text, str):
        raise _bad(text)
    n = len(text)
    if n != 19:
        if n > 19 and text.endswith("Z"):
            text = text[:-1]
            n -= 1
        if n > 20 and text[19] == "." and text[20:].isdigit():
            text = text[:19]
            n = 19
        if n != 19:
            raise _bad(text)
    if (text[4] != "-" or text[7] != "-" or text[10] != "T" or text[13] != ":"
            or text[16] != ":"):
        raise _bad(text)
    digits = text[0:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    if not (digits.isascii() and digits.isdigit()):
        raise _bad(text)
    try:
        year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        days = datetime.date(year, month, day).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        raise _bad(text) from None
    if hour > 23 or minute > 59 or second > 59:
        raise _bad(text)
    return days * 86400 + hour * 3600 + minute * 60 + second


def format_time(seconds: int) -> str:
    """Seconds since the epoch -> ``"YYYY-MM-DDTHH:MM:SS"`` (UTC)."""
    days, rest = divmod(int(seconds), 86400)
    d = datetime.date.fromordinal(days + _EPOCH_ORDINAL)
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
