"""Event models of the course's session service, compatible with google-adk 2.10.

``Event``, ``EventActions`` mirror ``google.adk.events``; ``Content``, ``Part`` and every kind
of part (``Blob``, ``FileData``, ``FunctionCall``, ``FunctionResponse``, ``ExecutableCode``...)
mirror ``google.genai.types``. The JSON they produce is what ADK stores.
"""

from ._base import Record
from .content import (
    Blob,
    CodeExecutionResult,
    Content,
    ExecutableCode,
    FileData,
    FunctionCall,
    FunctionResponse,
    FunctionResponseBlob,
    FunctionResponseFileData,
    FunctionResponsePart,
    Part,
    PartialArg,
    PartMediaResolution,
    SpeechMetadata,
    ToolCall,
    ToolResponse,
    Transcription,
    VideoMetadata,
    WordInfo,
)
from .event import Event
from .event_actions import EventActions, EventCompaction, ToolConfirmation
from .metadata import (
    GenerateContentResponseUsageMetadata,
    GroundingMetadata,
    ModalityTokenCount,
    SearchEntryPoint,
    UiWidget,
)
from .node_info import NodeInfo

__all__ = [
    "Blob",
    "CodeExecutionResult",
    "Content",
    "Event",
    "EventActions",
    "EventCompaction",
    "ExecutableCode",
    "FileData",
    "FunctionCall",
    "FunctionResponse",
    "FunctionResponseBlob",
    "FunctionResponseFileData",
    "FunctionResponsePart",
    "GenerateContentResponseUsageMetadata",
    "GroundingMetadata",
    "ModalityTokenCount",
    "NodeInfo",
    "Part",
    "PartMediaResolution",
    "PartialArg",
    "Record",
    "SearchEntryPoint",
    "SpeechMetadata",
    "ToolCall",
    "ToolConfirmation",
    "ToolResponse",
    "Transcription",
    "UiWidget",
    "VideoMetadata",
    "WordInfo",
]
