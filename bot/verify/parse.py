"""Text to checkable pieces (fences, inline spans, shell commands, code tokens) and the
placeholder rules both sides are compared with. Regexes, no per-character loops: a check
reads up to 20 whole pages."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

#: first words that make a line (or an inline span) a command
KNOWN_CLIS = frozenset(
    {"gcloud", "gsutil", "bq", "cbt", "kubectl", "helm", "skaffold", "firebase", "terraform",
     "npm", "npx", "yarn", "pnpm", "pip", "pip3", "python", "python3", "node", "curl", "wget",
     "adb", "flutter", "dart", "go", "docker", "gradle", "gradlew", "mvn", "gemini", "genkit",
     "git", "sdkmanager", "bazel", "protoc", "firebase-tools", "flutterfire", "gsutil.py",
     "deno", "bun", "pod", "xcodebuild", "emulator"}
)  # fmt: skip
#: fence info words whose blocks hold shell commands (and an empty info string)
SHELL_LANGS = frozenset(
    {"", "sh", "bash", "shell", "console", "zsh", "terminal", "shell-session", "cmd", "ps",
     "powershell", "bat", "fish", "text", "none", "sh-session"}
)  # fmt: skip
#: fence info words whose blocks are checked line by line as code
CODE_LANGS = frozenset(
    {"python", "py", "python3", "javascript", "js", "jsx", "typescript", "ts", "tsx", "go",
     "golang", "java", "kotlin", "kt", "dart", "swift", "hcl", "terraform", "tf", "c", "cpp",
     "c++", "csharp", "cs", "ruby", "rb", "php", "rust", "rs", "node", "mjs", "groovy"}
)  # fmt: skip

# Every pattern is linear in a line (tests/test_verify_parse.py times the worst cases).
#: a fence line, found from the newline before it (the engine then skips from newline to
#: newline); the lookahead reads once that no backtick follows before the info is read
_FENCE_RE = re.compile(r"\n[ \t]*(`{3,}|~{3,})(?=[^`\n]*(?:\n|$))[ \t]*([^`\s]*)[^`\n]*")
INLINE_RE = re.compile(r"`([^`\n]+)`")
_PROMPT_RE = re.compile(r"^(?:\([\w.-]+\)\s*)?(?:[\w.@~:/-]*[$%>❯]|PS>|PS [^>]*>)\s+")
#: starts only where a blank run starts (`(?<!\s)`): else quadratic in a long blank run
_TRAILING_COMMENT_RE = re.compile(r"(?<!\s)\s+#\s.*$")
# a shell word (quoted parts kept together) or a control operator
_SHELL_TOKEN_RE = re.compile(r"&&|\|\||[|;]|(?:[^\s\"'|;&]|\"(?:[^\"\\]|\\.)*\"?|'[^']*'?|&(?!&))+")
_ASSIGNMENT_RE = re.compile(r"^[A-Za-z_]\w*=")
_FLAG_RE = re.compile(r"^--?[A-Za-z][\w.-]*")
_CODE_TOKEN_RE = re.compile(
    r"\"(?:[^\"\\]|\\.)*\"?|'(?:[^'\\]|\\.)*'?|`[^`]*`?|[A-Za-z_$][\w$]*|\d[\w.]*|\S"
)
IDENT_RE = re.compile(r"^[A-Za-z_$][\w$]*$")

_WRAPPED_RE = re.compile(
    r"^(?:<[^<>]+>|\{\{?[^{}]+\}?\}|\[[A-Z_ -]+\]|\$\{?[A-Za-z_]\w*\}?|%\w+%)$"
)
_CAPS_RE = re.compile(r"^[A-Z][A-Z0-9_-]*[A-Z0-9]$")
_IN_WORD_PLACEHOLDER_RE = re.compile(
    r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|<[^<>]+>|\{[^{}]+\}|\$\{?[A-Za-z_]\w*|\b[A-Z]{4,}\b"
)
_EXAMPLE_RE = re.compile(r"^(?:my|your|example|sample|test|demo|hello)[-_]|example", re.I)
_REGION_RE = re.compile(
    r"^(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-[a-z]+\d+(?:-[a-z])?$"
)
_SEGMENT_SPLIT_RE = re.compile(r"[/?&=]")


def is_placeholder(token: str) -> bool:
    """A value to replace (`PROJECT_ID`, `<name>`, `${REGION}`) or made up (`my-project`)."""
    return bool(
        _WRAPPED_RE.match(token)
        or (_CAPS_RE.match(token) and not token.startswith("-"))
        or _EXAMPLE_RE.search(token)
        or _REGION_RE.match(token)
    )


def _part_ok(a: str, d: str) -> bool:
    if a == d or is_placeholder(a) or is_placeholder(d):
        return True
    return bool(_IN_WORD_PLACEHOLDER_RE.search(d) or _IN_WORD_PLACEHOLDER_RE.search(a))


def _is_path(token: str) -> bool:
    return "/" in token or "?" in token


def value_ok(a: str, d: str) -> bool:
    """Whether the answer's `a` can stand for a page's `d`: paths segment by segment
    (`gs://my-bucket/x` for `gs://BUCKET_NAME/OBJECT`, not `…/regions/…` for `…/locations/…`)."""
    if a == d:
        return True
    if _is_path(a) or _is_path(d):
        if is_placeholder(a) or is_placeholder(d):
            return True
        sa, sd = _SEGMENT_SPLIT_RE.split(a), _SEGMENT_SPLIT_RE.split(d)
        return len(sa) == len(sd) and all(_part_ok(x, y) for x, y in zip(sa, sd, strict=True))
    return _part_ok(a, d)


@dataclass(frozen=True, slots=True)
class Fence:
    lang: str
    lines: tuple[str, ...]
    start: int
    end: int


def _fence(text: str, opened: re.Match[str], end: int) -> Fence:
    lang = opened.group(2).lower().strip("{}.")
    return Fence(lang, tuple(text[opened.end() : end].split("\n")[1:]), opened.start(), end)


def fences(text: str) -> list[Fence]:
    """`text`'s blocks (it starts with a newline); an unclosed one runs to the end."""
    out: list[Fence] = []
    opened: re.Match[str] | None = None
    for match in _FENCE_RE.finditer(text):
        if opened is None:
            opened = match
        elif match.group(1).startswith(opened.group(1)) and not match.group(2):
            out.append(_fence(text, opened, match.start()))
            opened = None
    if opened is not None:
        out.append(_fence(text, opened, len(text)))
    return out


def outside(blocks: list[Fence], starts: list[int], at: int) -> bool:
    i = bisect_right(starts, at) - 1
    return i < 0 or at >= blocks[i].end


def inline_spans(text: str, blocks: list[Fence]) -> Iterator[tuple[int, str]]:
    """The inline code spans outside the blocks: where each starts, its text ("$ " dropped)."""
    starts = [b.start for b in blocks]
    for span in INLINE_RE.finditer(text):
        if outside(blocks, starts, span.start()):
            yield span.start(), span.group(1).strip().removeprefix("$ ")


@dataclass(frozen=True, slots=True)
class Command:
    """A shell command as compared: program, positional words (flag values taken by their
    flags: `path`; or not: `loose`), and flag names (`--no-x` counted as `--x`)."""

    text: str
    program: str
    path: tuple[str, ...]
    loose: tuple[str, ...]
    flags: tuple[str, ...]


def logical_lines(lines: tuple[str, ...] | list[str]) -> Iterator[str]:
    """Shell lines with `\\` continuations joined, prompts and comments dropped."""
    held = ""
    for raw in lines:
        line = raw.strip()
        if held:
            line = held + " " + line
            held = ""
        if line.endswith("\\") or (line.endswith("`") and line.count("`") % 2):
            held = line[:-1].rstrip()
            continue
        line = _PROMPT_RE.sub("", line, count=1)
        if not line or line.startswith(("#", "//")):
            continue
        yield _TRAILING_COMMENT_RE.sub("", line)
    if held:
        yield _PROMPT_RE.sub("", held, count=1)


def _unquote(word: str) -> str:
    return word.replace('"', "").replace("'", "")


def flag_name(token: str) -> str:
    name = token.split("=", 1)[0]
    return "--" + name[5:] if name.startswith("--no-") else name


def parse_command(words: list[str], text: str) -> Command | None:
    """A command, or None for words with no known CLI first and no `--flag`."""
    while words and (words[0] in ("sudo", "time", "exec") or _ASSIGNMENT_RE.match(words[0])):
        words = words[1:]
    if not words:
        return None
    program = words[0].removeprefix("./")
    if program not in KNOWN_CLIS:
        has_flags = any(w.startswith("--") and len(w) > 2 for w in words[1:])
        if not has_flags or not IDENT_RE.match(program.replace("-", "_")):
            return None
    path: list[str] = []
    loose: list[str] = []
    flags: list[str] = []
    i, n = 1, len(words)
    while i < n:
        word = words[i]
        if _FLAG_RE.match(word):
            flags.append(flag_name(word))
            if "=" not in word and i + 1 < n and not words[i + 1].startswith("-"):
                loose.append(_unquote(words[i + 1]))
                i += 1
        elif word != "--":
            value = _unquote(word)
            path.append(value)
            loose.append(value)
        i += 1
    return Command(text, program, tuple(path), tuple(loose), tuple(dict.fromkeys(flags)))


def shell_commands(line: str) -> Iterator[Command]:
    """The commands of one logical shell line (`a && b | c`: each part on its own)."""
    words: list[str] = []
    start = 0
    for match in _SHELL_TOKEN_RE.finditer(line + " ;"):
        token = match.group()
        if token in ("&&", "||", "|", ";"):
            if words:
                command = parse_command(words, line[start : match.start()].strip())
                if command is not None:
                    yield command
            words, start = [], match.end()
        else:
            words.append(token)


def looks_like_command(text: str) -> bool:
    """An inline span worth checking: a known CLI and something after it, or a `--flag`."""
    first = text.split(None, 1)
    if not first:
        return False
    if first[0].removeprefix("$") in KNOWN_CLIS:
        return len(first) > 1
    return " --" in f" {text}" and bool(_FLAG_RE.search(text))


_COMMENT_STARTS = ("#", "//", "/*", "*", "--", "<!--")


def code_tokens(line: str) -> tuple[str, ...] | None:
    """A code line's tokens, or None for a line too slight to check (a brace, a comment)."""
    stripped = line.strip()
    if not stripped or stripped.startswith(_COMMENT_STARTS):
        return None
    tokens = _CODE_TOKEN_RE.findall(stripped)
    for i, tok in enumerate(tokens):
        if tok == "#" or (tok == "/" and i + 1 < len(tokens) and tokens[i + 1] == "/"):
            tokens = tokens[:i]
            break
    if len(tokens) < 3 or sum(1 for t in tokens if IDENT_RE.match(t)) < 1:
        return None
    return tuple(tokens)


def _string_ok(a: str, d: str) -> bool:
    a, d = a[1:-1], d[1:-1]
    if a == d or is_placeholder(a) or is_placeholder(d) or not a or not d:
        return True
    if _is_path(a) or _is_path(d):
        return value_ok(a, d)
    structured = ("_", ".", ":")
    if any(c in a for c in structured) or any(c in d for c in structured):
        return _part_ok(a, d)
    return True  # a name or a sentence the example chose: any other does as well


def code_token_ok(a: str, d: str) -> bool:
    if a == d:
        return True
    a0, d0 = a[:1], d[:1]
    if a0 in "\"'`" and d0 in "\"'`" and len(a) > 1 and len(d) > 1:
        return _string_ok(a, d)
    if a0.isdigit() and d0.isdigit():
        return True
    # PROJECT_ID as a bare name in the page, a value in the answer
    return bool(_CAPS_RE.match(d) and "_" in d and (IDENT_RE.match(a) or a0 in "\"'"))


def identifiers(tokens: tuple[str, ...]) -> list[str]:
    """The names a code line uses (calls and attributes first, as a reader looks for)."""
    names = [t for t in tokens if IDENT_RE.match(t) and not _CAPS_RE.match(t)]
    calls = [t for i, t in enumerate(tokens[:-1]) if tokens[i + 1] == "(" and t in names]
    return list(dict.fromkeys([*calls, *names]))


def has_word(text: str, word: str) -> bool:
    """`word` whole in `text` (not in `gs://a-word` or `x.word`; `--x` also as `--no-x`)."""
    flag = word.startswith("--")
    probe = word[2:].removeprefix("no-") if flag else word
    if probe not in text:
        return False  # the usual case for a word no page has: one substring search
    body = "--(?:no-)?" + re.escape(probe) if flag else re.escape(word)
    for match in re.finditer(body + r"(?![\w-]|\.\w)", text):
        before = text[match.start() - 1] if match.start() else " "
        if not (before.isalnum() or before in "_.-"):
            return True
    return False
