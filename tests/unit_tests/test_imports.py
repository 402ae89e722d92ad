import langchain_session_recall

EXPECTED_ALL = [
    "EmptyQueryError",
    "InvalidMessageError",
    "LineageCycleError",
    "MessageHit",
    "NotASessionDatabaseError",
    "ParsedQuery",
    "ReadOnlyStoreError",
    "RecentSession",
    "SecretPattern",
    "Session",
    "SessionNotFoundError",
    "SessionRecallError",
    "SessionRecallRetriever",
    "SessionRecorder",
    "SessionSearchTool",
    "SessionStore",
    "SessionSummarizer",
    "StoredMessage",
    "create_session_recall_chain",
    "create_session_search_tool",
    "parse_query",
    "redact_secrets",
    "to_fts5",
]


def test_all_imports() -> None:
    assert sorted(langchain_session_recall.__all__) == sorted(EXPECTED_ALL)
    for name in EXPECTED_ALL:
        assert getattr(langchain_session_recall, name) is not None
