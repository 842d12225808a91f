"""YAML to plain data, remembering where in the file every key and value was written.

PyYAML's ``safe_load`` forgets positions and silently keeps the last of two equal keys, so the campaign
loader composes the node tree itself and converts it here. Mapping keys are always kept as the text the
user wrote (``on:`` stays ``"on"``, ``1:`` stays ``"1"``): keys are names, never numbers or booleans.
"""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

DataPath = tuple[str | int, ...]

_MERGE_TAG = "tag:yaml.org,2002:merge"
#: Values a campaign file may expand to, aliases included. A real campaign has a few hundred; nested
#: aliases ("billion laughs") reach billions from a dozen lines, so expansion stops here, in time and memory.
MAX_VALUES = 100_000
#: Aliases (``*name``) a file may use: a real campaign shares a few defaults, a bomb uses thousands.
MAX_ALIASES = 1_000


@dataclass(frozen=True, order=True)
class Mark:
    """A 1-based line and column in the file."""

    line: int
    column: int


@dataclass(frozen=True)
class YamlProblem:
    path: DataPath
    mark: Mark
    message: str
    hint: str = ""


class YamlSyntaxError(Exception):
    """The text is not YAML at all; nothing can be validated after this."""

    def __init__(self, mark: Mark, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message


class YamlTooLarge(YamlSyntaxError):
    """The document is YAML, but holds (or its aliases expand to) more than a campaign can need."""

    def __init__(self, mark: Mark, message: str, hint: str) -> None:
        super().__init__(mark, message)
        self.hint = hint


@dataclass
class Located:
    """Plain data (dicts, lists, scalars) plus the position of each piece, keyed by its path from the root."""

    data: Any
    key_marks: dict[DataPath, Mark] = field(default_factory=dict)
    value_marks: dict[DataPath, Mark] = field(default_factory=dict)
    plain_text: dict[DataPath, str] = field(default_factory=dict)
    """Source text of every scalar value, for fields that want what was written rather than YAML's reading
    of it (an environment value ``1.10`` must stay ``"1.10"``, not become the float 1.1)."""
    problems: list[YamlProblem] = field(default_factory=list)
    unreadable: set[DataPath] = field(default_factory=set)
    """Values reported in ``problems`` as unreadable; whatever else is wrong with them is a consequence."""
    last_line: Mark = Mark(1, 1)
    """The last line that has text, and the column just after its end."""

    def value_mark(self, path: DataPath) -> Mark:
        """Where the value at ``path`` is written; the nearest enclosing value when ``path`` does not exist."""
        while path not in self.value_marks:
            path = path[:-1]
        return self.value_marks[path]

    def key_mark(self, path: DataPath) -> Mark:
        """Where the key naming ``path`` is written; for the root (no key), where the document starts."""
        while path and path not in self.key_marks:
            path = path[:-1]
        return self.key_marks[path] if path else self.value_marks[()]


def _mark(node: Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


def _offset_to_mark(text: str, offset: int) -> Mark:
    before = text[:offset]
    return Mark(before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1)


def last_line(text: str) -> Mark:
    """Counted the way PyYAML counts lines, so that its marks and this agree."""
    lines = re.split(r"\r\n|[\n\r\x85\u2028\u2029]", text)
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    return Mark(len(lines), len(lines[-1]) + 1)


_ALIAS_HINT = "write the values out, or share them with a few '<<: *defaults'"


class _CountingLoader(yaml.SafeLoader):
    """SafeLoader that refuses a document with more than MAX_ALIASES aliases while composing it."""

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases_seen = getattr(self, "aliases_seen", 0) + 1
            if self.aliases_seen > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise YamlTooLarge(Mark(mark.line + 1, mark.column + 1),
                                   f"more than {MAX_ALIASES} aliases (*name); a campaign file needs far fewer",
                                   _ALIAS_HINT)
        return super().compose_node(parent, index)


def compose(text: str) -> Node | None:
    """The node tree of a single YAML document; None for an empty document."""
    try:
        node: Node | None = yaml.compose(text, Loader=_CountingLoader)
        return node
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Mark(mark.line + 1, mark.column + 1) if mark else Mark(1, 1)
        message = exc.problem or exc.context or "not valid YAML"
        if exc.context and exc.problem and exc.context_mark is not None:
            message += f" ({exc.context} at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1})"
        raise YamlSyntaxError(where, message) from None
    except yaml.reader.ReaderError as exc:
        raise YamlSyntaxError(_offset_to_mark(text, exc.position),
                              f"character #x{exc.character:04x} is not allowed in YAML ({exc.reason})") from None
    except yaml.YAMLError as exc:  # any other reader/scanner failure still names the file, never a traceback
        raise YamlSyntaxError(Mark(1, 1), str(exc).splitlines()[0]) from None
    except RecursionError:
        raise YamlSyntaxError(Mark(1, 1), "lists or mappings are nested too deeply") from None


def locate(text: str) -> Located | None:
    """Plain data and positions of a YAML document; None when the document is empty.

    Raises YamlSyntaxError when the text cannot be parsed. Duplicate keys, recursive aliases and unknown
    tags are collected in ``problems`` instead, so that validation can go on and report everything at once.
    """
    root = compose(text)
    if root is None or (isinstance(root, ScalarNode) and root.tag == "tag:yaml.org,2002:null"):
        return None  # no document at all, or only "---" or "~"
    located = Located(data=None, last_line=last_line(text))
    try:
        located.data = _Converter(located).convert(root, ())
    except RecursionError:
        raise YamlSyntaxError(Mark(1, 1), "lists or mappings are nested too deeply") from None
    return located


_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(text: str) -> str:
    """A YAML "\\ud800" escape yields a lone surrogate, which no file name, terminal or database can encode."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class _Converter:
    def __init__(self, located: Located) -> None:
        self.located = located
        self.constructor = yaml.SafeLoader("")  # only its scalar constructors and merge-key handling are used
        self.on_path: set[int] = set()
        self.values = 0
        self.converted: set[int] = set()
        """The nodes converted so far: the values beyond them are copies that aliases (*name) made."""

    def problem(self, path: DataPath, node: Node, message: str, hint: str = "") -> None:
        self.located.problems.append(YamlProblem(path, _mark(node), message, hint))

    def convert(self, node: Node, path: DataPath) -> Any:
        self.values += 1
        self.converted.add(id(node))
        if self.values > MAX_VALUES:
            if self.values - len(self.converted) > len(self.converted):
                raise YamlTooLarge(_mark(node), f"the file expands to more than {MAX_VALUES} values "
                                                "(aliases nested inside aliases?)", _ALIAS_HINT)
            # mostly values written out: the file itself is this large, and writing them out would not help
            raise YamlTooLarge(_mark(node), f"the file holds more than {MAX_VALUES} values (settings, lists and "
                                            "mappings), the most a campaign file may have",
                               "split its benchmarks into several campaign files")
        self.located.value_marks[path] = _mark(node)
        if id(node) in self.on_path:
            self.problem(path, node, "an alias refers to a mapping or list that contains it",
                         "campaign files cannot be recursive; copy the settings instead")
            self.located.unreadable.add(path)
            return None
        if isinstance(node, ScalarNode):
            self.located.plain_text[path] = node.value
            return self.scalar(node, path)
        self.on_path.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.convert(item, path + (i,)) for i, item in enumerate(node.value)]
            if isinstance(node, MappingNode):
                return self.mapping(node, path)
            return None
        finally:
            self.on_path.discard(id(node))

    def scalar(self, node: ScalarNode, path: DataPath) -> Any:
        try:
            value = self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            self.problem(path, node, f"cannot read this value: {problem}",
                         "remove the YAML tag (the word starting with '!') or quote the value")
            self.located.unreadable.add(path)
            return node.value
        if isinstance(value, (datetime.date, bytes)):
            return node.value  # nothing in a campaign is a date or binary; keep what the user wrote
        if isinstance(value, str) and _SURROGATE.search(value):
            self.problem(path, node, f"{_without_surrogates(value)[:40]!r} holds a lone surrogate "
                                     "(a \\ud800-\\udfff escape), which is not text",
                         "write the character itself, or a pair of escapes that forms one")
            self.located.unreadable.add(path)
            return _without_surrogates(value)
        return value

    def mapping(self, node: MappingNode, path: DataPath) -> dict[str, Any]:
        seen: dict[str, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, ScalarNode):
                continue
            first = seen.setdefault(key_node.value, key_node)
            if first is not key_node:
                self.problem(path + (key_node.value,), key_node,
                             f"duplicate key '{key_node.value}' (first at line {_mark(first).line})",
                             "YAML would silently keep only the last one; remove or rename one of them")
        try:
            self.constructor.flatten_mapping(node)  # resolves '<<: *anchor' merge keys in place
        except yaml.YAMLError as exc:
            self.problem(path, node, f"bad merge key '<<': {getattr(exc, 'problem', exc)}",
                         "'<<' takes an alias of a mapping, e.g. <<: *defaults")
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue  # only left here when flattening failed, which was reported above
            if not isinstance(key_node, ScalarNode):
                self.problem(path, key_node, "a key must be a plain name, not a list or mapping",
                             "write keys as simple words")
                continue
            key = key_node.value
            if _SURROGATE.search(key):
                key = _without_surrogates(key)
                self.problem(path + (key,), key_node, f"key {key[:40]!r} holds a lone surrogate "
                                                      "(a \\ud800-\\udfff escape), which is not text",
                             "write the character itself")
            child = path + (key,)
            self.located.key_marks[child] = _mark(key_node)
            result[key] = self.convert(value_node, child)
        return result
