"""How the parsers' errors and warnings name what they are about: messages
cut to a bounded length, and lists of names or lines that stop after a few
and say how many there are (a file of many thousand links must not make a
message of megabytes)."""

import itertools
import os


# Longest message (characters); names and values beyond it are cut.
_MESSAGE_CHARS = 1500


def _quoted(text, keep=60):
    """``repr(text)``, cut after ``keep`` characters with the length said."""
    return repr(text) if len(text) <= keep else f"{text[:keep]!r}… ({len(text)} characters)"


def _clip(message):
    """``message`` cut to about ``_MESSAGE_CHARS`` characters, the length said."""
    if len(message) <= _MESSAGE_CHARS:
        return message
    return f"{message[:_MESSAGE_CHARS]}… (message cut: {len(message)} characters)"


_INDENT = "    "


def _file_name(label):
    """How a warning names the URDF: the file's base name, ``"<string>"`` for
    XML text (errors give the whole path)."""
    return label if label == "<string>" else os.path.basename(label)


# A message lists at most this many names or lines, then says how many there
# are: a file of many thousand links must not make a message of megabytes.
_SHOWN = 8
_LISTED = 20


def _some(names, count=None):
    """The first ``_SHOWN`` of ``names``, quoted and comma-separated, then
    the count when there are more. ``count``: how many ``names`` holds, when
    it is an iterator that should not be run to its end."""
    names = list(names) if count is None else list(itertools.islice(names, _SHOWN + 1))
    count = len(names) if count is None else count
    shown = ", ".join(map(repr, names[:_SHOWN]))
    return shown if count <= _SHOWN else f"{shown}, … ({count} in all)"


def _listing(issue, items, hints=(), indent=_INDENT):
    """``issue:`` then each of ``items`` (a joint or link, with its values) on
    a line of its own, indented (the first ``_LISTED``, then how many more),
    then the ``hints``, each on a line."""
    items = [_clip(it) for it in items]
    more = len(items) - _LISTED
    if more > 0:
        items = items[:_LISTED] + [f"… and {more} more"]
    return (f"{_clip(issue)}:" + "".join(f"\n{indent}{it}" for it in items)
            + "".join(f"\n  {h}" for h in hints))
