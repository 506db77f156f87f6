"""The post-processors a ``tokenizer.json`` can name, by ``type``."""

from __future__ import annotations

from typing import Any

from subtok.components import build, build_list
from subtok.encoding import Encoding
from subtok.postprocessors.bytelevel import ByteLevel
from subtok.postprocessors.templates import BertProcessing, RobertaProcessing, TemplateProcessing


class Sequence:
    """Post-processors applied in turn."""

    def __init__(self, processors: list) -> None:
        self.processors = processors

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Sequence:
        return cls(build_list(spec, "processors", POST_PROCESSORS, "post-processor", where))

    def added_tokens(self, is_pair: bool) -> int:
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings


POST_PROCESSORS: dict[str, type] = {
    "TemplateProcessing": TemplateProcessing, "BertProcessing": BertProcessing,
    "RobertaProcessing": RobertaProcessing, "ByteLevel": ByteLevel, "Sequence": Sequence,
}


def from_json(spec: Any, where: str) -> Any:
    """The post-processor ``spec`` describes."""
    return build(spec, POST_PROCESSORS, "post-processor", where)
