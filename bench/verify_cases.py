"""The verified-answers eval set (tests/data/verify/): cited pages in the Markdown shape
get_documents returns, and answers with what each of their snippets should come out as.

A case file is a small header, `---`, then the answer's Markdown:

    pages: run-deploy gke-deploy          (files in pages/, without .md)
    expect: verbatim found                (one line per snippet, in reading order)
    expect: misspelled_flag partly --service-acount

The first word is the kind of change the answer made to what the pages show; the second the
result the check should give; a third, for planted errors, the word the mark must name. A
page file starts with `<!-- its URL -->`; its title is its first `# ` heading.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.models import Document, SnippetCheck

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "verify"
#: kinds of change that keep a command correct; every other kind is a planted error
CORRECT_KINDS = frozenset(
    {"verbatim", "placeholders", "reordered_flags", "joined_lines", "split_lines",
     "subset_flags", "combined_flags", "inline", "renamed_argument"}
)  # fmt: skip


@dataclass(frozen=True)
class Expected:
    change: str
    result: str
    named: str = ""

    @property
    def planted(self) -> bool:
        return self.change not in CORRECT_KINDS

    def met_by(self, got: SnippetCheck) -> bool:
        """The target's view: a correct command found or partly; a planted error not found,
        or partly with the planted word named."""
        if not self.planted:
            return got.result in ("found", "partly")
        if got.result == "not_found":
            return True
        return got.result == "partly" and any(self.named in m for m in got.missing)


@dataclass(frozen=True)
class Case:
    name: str
    pages: tuple[Document, ...]
    answer: str
    expected: tuple[Expected, ...]


def load_page(name: str) -> Document:
    text = (DATA / "pages" / f"{name}.md").read_text(encoding="utf-8")
    first, _, content = text.partition("\n")
    uri = first.removeprefix("<!--").removesuffix("-->").strip()
    title = next((ln[2:].strip() for ln in content.splitlines() if ln.startswith("# ")), "")
    return Document(
        name="documents/" + uri.removeprefix("https://"), uri=uri, title=title, content=content
    )


def load_case(path: Path) -> Case:
    head, _, answer = path.read_text(encoding="utf-8").partition("\n---\n")
    pages: tuple[Document, ...] = ()
    expected: list[Expected] = []
    for line in head.splitlines():
        key, _, value = line.partition(":")
        if key == "pages":
            pages = tuple(load_page(p) for p in value.split())
        elif key == "expect":
            change, result, *named = value.split()
            expected.append(Expected(change, result, named[0] if named else ""))
    return Case(path.stem, pages, answer, tuple(expected))


def load_cases() -> list[Case]:
    return [load_case(p) for p in sorted((DATA / "cases").glob("*.md"))]


def all_pages() -> list[Document]:
    return [load_page(p.stem) for p in sorted((DATA / "pages").glob("*.md"))]
