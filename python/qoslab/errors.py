"""Errors a person can act on.

Bad input (a scenario file, a stack string, a command-line value) raises
:class:`InputError`. The CLI prints its message and exits with code 2, never a
traceback. The message names where (file, line, column), what (the key path or the
offending token), what was expected and what was found, and a hint where one helps.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Problem:
    """One thing wrong with the input.

    Parameters
    ----------
    message:
        What is wrong, in words, without the location.
    key:
        Dotted key path (``node.ws1.address``, ``link[2].ends``) or the offending token.
    expected, found:
        What would fit there, and what is there.
    line, column:
        1-based position in ``source`` where known.
    hint:
        A suggestion where one helps (``did you mean 'ethernet'?``).
    """

    message: str
    key: str | None = None
    expected: str | None = None
    found: str | None = None
    line: int | None = None
    column: int | None = None
    hint: str | None = None

    def render(self, source: str | None) -> str:
        where = source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: "
        if self.key:
            text += f"{self.key}: "
        text += self.message
        if self.expected is not None:
            text += f"\n    expected: {self.expected}"
        if self.found is not None:
            text += f"\n    found:    {self.found}"
        if self.hint:
            text += f"\n    hint:     {self.hint}"
        return text


@dataclass
class InputError(Exception):
    """Bad input: one or more problems found in one source (a file or a string).

    >>> err = InputError("demo.toml", [Problem("unknown node", key="link[0].ends", expected="a node name", found="'ws9'", line=3, column=8)])
    >>> print(err)
    demo.toml:3:8: link[0].ends: unknown node
        expected: a node name
        found:    'ws9'
    """

    source: str | None
    problems: list[Problem] = field(default_factory=list)
    context: str | None = None  # e.g. the offending line with a caret under the column

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        text = "\n".join(p.render(self.source) for p in self.problems)
        if self.context:
            text += "\n    " + self.context
        return text

    def with_context(self, context: str) -> InputError:
        """The same error, showing ``context`` (such as the input with a caret) after it."""
        self.context = context
        self.args = (str(self),)
        return self


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str | None:
    """A hint naming the closest of ``choices`` to ``word``, if any is close.

    >>> did_you_mean("ethrnet", ["ethernet", "wifi", "serial"])
    "did you mean 'ethernet'?"
    """
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None
