"""A recalled session as data: what every surface reads of a search result."""

from langchain_session_recall.recall.metadata import (
    RecentMetadata,
    ResultMetadata,
    SearchMetadata,
    TimeHintMetadata,
    metadata_of,
)

__all__ = [
    "RecentMetadata",
    "ResultMetadata",
    "SearchMetadata",
    "TimeHintMetadata",
    "metadata_of",
]
