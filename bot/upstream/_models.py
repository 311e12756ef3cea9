"""Typed inputs and outputs of every tool the bot calls, and their validation.

Inputs forbid unknown fields (a typo is our bug); outputs ignore unknown fields (servers add
fields) but insist on the ones we use, so a changed server shows up as one ProtocolError at
the edge instead of an AttributeError three layers up.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.errors import ErrorFacts, ProtocolError, Reason, ServerKey
from bot.names import MAX_NAMES_PER_CALL


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def arguments(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class SearchDocumentsInput(_Input):
    query: str = Field(min_length=1)


class AnswerQueryInput(_Input):
    query: str = Field(min_length=1)


class GetDocumentsInput(_Input):
    names: list[str] = Field(min_length=1, max_length=MAX_NAMES_PER_CALL)


class GetDocumentInput(_Input):
    name: str = Field(min_length=1)


class SearchDocumentationInput(_Input):
    """Pay's search; `languageCode` is an IETF BCP-47 tag such as `it-IT`."""

    userQuery: str = Field(min_length=1)
    languageCode: str | None = None


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
