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
    "Session",
    "SessionNotFoundError",
    "SessionRecallError",
    "SessionRecallRetriever",
    "SessionStore",
    "StoredMessage",
    "parse_query",
    "to_fts5",
]


def test_all_imports() -> None:
    assert sorted(langchain_session_recall.__all__) == sorted(EXPECTED_ALL)
    for name in EXPECTED_ALL:
        assert getattr(langchain_session_recall, name) is not None
