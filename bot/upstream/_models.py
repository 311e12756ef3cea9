"""The outputs of the tools the bot calls: unknown fields are ignored (servers add some), the
ones we use are required, so a changed server is one ProtocolError at the edge."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.errors import ErrorFacts, ProtocolError, Reason, ServerKey


class _Output(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Chunk(_Output):
    parent: str
    id: str = ""
    content: str = ""


class SearchDocumentsOutput(_Output):
    results: list[Chunk] = []


class DocumentOutput(_Output):
    name: str
    uri: str = ""
    title: str = ""
    description: str = ""
    content: str = ""


class GetDocumentsOutput(_Output):
    documents: list[DocumentOutput]


class AnswerQueryOutput(_Output):
    answerText: str
    references: list[str] = []


class PayResult(_Output):
    uri: str
    title: str = ""
    content: str = ""


class SearchDocumentationOutput(_Output):
    results: list[PayResult] = []


class ToolInfo(_Output):
    name: str
    description: str = ""


class ListToolsOutput(_Output):
    tools: list[ToolInfo]
    nextCursor: str | None = None


_M = TypeVar("_M", bound=_Output)


def parse_output(model: type[_M], data: object, *, server: ServerKey, tool: str) -> _M:
    """`data` as `model`, or ProtocolError naming the first field that is wrong."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "result"
        detail = f"{where}: {first['msg']}"
        facts = ErrorFacts(Reason.UNREADABLE_RESULT, server=server, tool=tool, detail=detail)
        raise ProtocolError(facts=facts) from None


def parse_document(data: object, *, server: ServerKey, tool: str) -> DocumentOutput:
    """get_document answers with the document itself or wrapped as {"document": …}."""
    if isinstance(data, dict) and isinstance(data.get("document"), dict):
        data = data["document"]
    return parse_output(DocumentOutput, data, server=server, tool=tool)
