"""The transcript tag, written and read in one place.

A formatted transcript starts each message, and each tool call of an assistant message, with a
tag at the start of a line: ``[USER]:``, ``[ASSISTANT #43]:`` (message ids shown),
``[TOOL:terminal #44]:``, a call's ``[ASSISTANT #43 → write_file(path="a.py")]:``.
:func:`tag` is the only writer of that form (and :func:`after_tag` of what follows it before
the text); :data:`TAG` the only pattern that reads it (a Document made elsewhere parsed into
blocks, the CLI's styling, the recap checks).

Example:
    >>> m = TAG.search("text\\n" + tag("TOOL:terminal", 44) + " ok")
    >>> m.group("label"), m.group("role"), m.group("id"), m.group("call")
    ('TOOL:terminal', 'TOOL', '44', None)
"""

from __future__ import annotations

import re

__all__ = ["INDENTED_TAG", "ROLE_LABELS", "TAG", "after_tag", "tag"]

ROLE_LABELS = ("USER", "ASSISTANT", "SYSTEM", "TOOL")
"""The roles a tag names (a tool message's label adds its tool: ``TOOL:terminal``)."""


def tag(label: str, message_id: int | None = None, call: str = "") -> str:
    """The tag of a message or tool call: ``label``, its id when shown, a call's part.

    ``call`` is a tool call's part of the tag (`` → write_file(path="a.py")``); the call's long
    arguments follow on the lines below it.

    Example:
        >>> tag("USER"), tag("TOOL:terminal", 44), tag("ASSISTANT", 43, ' → ls(path=".")')
        ('[USER]:', '[TOOL:terminal #44]:', '[ASSISTANT #43 → ls(path=".")]:')
    """
    ident = f" #{message_id}" if message_id is not None else ""
    return f"[{label}{ident}{call}]:"


def after_tag(call: str = "", more: bool = True) -> str:
    """What follows a tag before the text: a space; after a tool call's tag, a line break
    before its arguments (nothing when ``more`` is False: the call has none below its tag).

    Example:
        >>> after_tag(), after_tag(' → ls(path=".")'), after_tag(' → ls()', more=False)
        (' ', '\\n', '')
    """
    if not call:
        return " "
    return "\n" if more else ""


_FORM = (
    r"^{indent}\[(?P<label>(?P<role>{roles})(?::[^\]#\n]+?)?)"
    r"(?: #(?P<id>\d+))?(?P<call> → [^\n]*)?\]:"
)
TAG = re.compile(_FORM.format(indent="", roles="|".join(ROLE_LABELS)), re.MULTILINE)
"""A tag at the start of a line, as :func:`tag` writes it. Groups: ``label``
(``TOOL:terminal``), ``role`` (``TOOL``), ``id`` (``None`` when not shown), ``call``."""
INDENTED_TAG = re.compile(_FORM.format(indent=r"[ \t]*", roles="|".join(ROLE_LABELS)), re.MULTILINE)
""":data:`TAG`, also after spaces or tabs: how a model writing transcript lines may indent them."""
