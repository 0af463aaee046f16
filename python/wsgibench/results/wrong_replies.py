"""Wrong replies quoted: the engine's first wrong reply of each error class per request kind (its
status, head, first body bytes and the check's reason), read back bounded, the first of a cell's
repeats, and the same text made safe for a terminal (every control character escaped)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# What the engine keeps of a wrong reply (engine/src/wrong.rs); a document that says more is cut
# here, so the store never holds more than this per class and kind.
HEAD_KEEP = 2048
BODY_KEEP = 512
REASON_KEEP = 1024
# The classes that have a reply to quote, in the engine's order.
QUOTED_CLASSES = ("bad_status", "bad_body", "protocol_error")


@dataclass(frozen=True)
class WrongReply:
    """One wrong reply of a request kind, as the engine quoted it: `head` and `body` are the app's
    bytes as text (None: not kept, e.g. on HTTP/2), never markup or commands."""

    kind: str
    error: str  # its error class: bad_status, bad_body or protocol_error
    status: int  # 0: no status was read
    reason: str  # what was wrong: "json items.4.id: got 7, expected 8"
    head: str | None
    body: str | None
    head_cut: bool = False
    body_cut: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "error": self.error,
            "status": self.status,
            "reason": self.reason,
            "head": self.head,
            "head_cut": self.head_cut,
            "body": self.body,
            "body_cut": self.body_cut,
        }

    def summary(self) -> str:
        """One line: the kind, the class and the reason (not escaped: see `escaped`)."""
        return f"{self.kind}: {self.error}: {self.reason}"


def _text(value: Any, keep: int) -> tuple[str | None, bool]:
    if not isinstance(value, str):
        return None, False
    return value[:keep], len(value) > keep


def _entry(value: Mapping[str, Any]) -> dict[str, Any]:
    """One entry of a document's `wrong_replies`, each part cut to its bound."""
    head, head_over = _text(value.get("head"), HEAD_KEEP)
    body, body_over = _text(value.get("body"), BODY_KEEP)
    status = value.get("status")
    return {
        "error": str(value.get("error", ""))[:40],
        "status": status if isinstance(status, int) and 0 <= status < 1000 else 0,
        "reason": (_text(value.get("reason"), REASON_KEEP)[0] or ""),
        "head": head,
        "head_cut": bool(value.get("head_cut")) or head_over,
        "body": body,
        "body_cut": bool(value.get("body_cut")) or body_over,
    }


def bounded(value: Any) -> list[dict[str, Any]]:
    """A kind's `wrong_replies` as stored: one entry per class at most, each part bounded; what
    is not an entry is left out."""
    out: list[dict[str, Any]] = []
    for item in value if isinstance(value, list) else ():
        if isinstance(item, Mapping) and not any(o["error"] == item.get("error") for o in out):
            out.append(_entry(item))
    return out[: len(QUOTED_CLASSES)]


def bounded_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A result document with each kind's `wrong_replies` bounded (the rest as it was)."""
    out = dict(doc)
    kinds = doc.get("kinds")
    if isinstance(kinds, list):
        out["kinds"] = [
            {**k, "wrong_replies": bounded(k["wrong_replies"])}
            if isinstance(k, Mapping) and "wrong_replies" in k
            else k
            for k in kinds
        ]
    return out


def read(kind: str, value: Any) -> tuple[WrongReply, ...]:
    """A kind's `wrong_replies`, bounded and typed (none in results of engines before them)."""
    return tuple(WrongReply(kind=kind, **e) for e in bounded(value))


def stored(extra: Mapping[str, Any]) -> tuple[WrongReply, ...]:
    """A repeat's wrong replies as its extra_json keeps them (each entry with its kind)."""
    found = extra.get("wrong_replies")
    out: list[WrongReply] = []
    for item in found if isinstance(found, list) else ():
        if isinstance(item, Mapping):
            out += read(str(item.get("kind", "")), [item])
    return tuple(out)


def first_of_each(parts: Sequence[Any]) -> list[dict[str, Any]]:
    """Several results' `wrong_replies` of one kind as one: the first of each class, in order."""
    found: list[dict[str, Any]] = []
    for part in parts:
        for entry in bounded(part):
            if not any(f["error"] == entry["error"] for f in found):
                found.append(entry)
    return sorted(found, key=lambda e: _order(e["error"]))


def _order(error: str) -> int:
    return QUOTED_CLASSES.index(error) if error in QUOTED_CLASSES else len(QUOTED_CLASSES)


def first_of_cell(per_repeat: Iterable[Iterable[WrongReply]]) -> list[WrongReply]:
    """A cell's wrong replies: of each kind and class, the first repeat's."""
    found: dict[tuple[str, str], WrongReply] = {}
    for replies in per_repeat:
        for w in replies:
            found.setdefault((w.kind, w.error), w)
    return list(found.values())


def escaped(text: str) -> str:
    """`text` with every control, format or unassigned character (an ESC that would move the
    cursor, a bidirectional override) written as an escape, and the backslash doubled, so that
    what the app sent is shown as text and cannot act on a terminal."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif unicodedata.category(ch)[0] == "C":
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def terminal_lines(w: WrongReply) -> list[str]:
    """A wrong reply as lines for a terminal, every part escaped: the summary, the head line by
    line, and the body quoted."""
    lines = [escaped(w.summary())]
    if w.head is not None:
        head = w.head.split("\r\n")
        while head and not head[-1]:
            head.pop()
        lines += [f"  < {escaped(line)}" for line in head]
        if w.head_cut:
            lines.append("  < … (head cut at 2,048 bytes)")
    if w.body is not None:
        cut = f" … (cut at {BODY_KEEP} bytes)" if w.body_cut else ""
        lines.append(f'  body: "{escaped(w.body)}"{cut}')
    return lines
