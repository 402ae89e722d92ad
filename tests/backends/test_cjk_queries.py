"""CJK questions as people type them (issue 32 §14): punctuation between the words, Latin
glued to Chinese, runs longer than a word cap. Each finds the session that says the words."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_session_recall.core.query import MAX_WORD_CHARS
from langchain_session_recall.search.pipeline import search_sessions


def _say(store: Any, sid: str, text: str) -> None:
    store.add_session(sid)
    store.add_messages(sid, [{"role": "user", "content": text, "timestamp": 1000.0}])


@pytest.fixture
def cjk_store(store: Any) -> Any:
    _say(store, "zh", "数据库迁移失败了，请检查日志")
    _say(store, "ja", "テストが失敗したのでログを確認してください")
    _say(store, "deploy", "deploy失败以后回滚了")
    _say(store, "en", "the database migration failed on a lock")
    return store


@pytest.mark.parametrize(
    ("question", "session"),
    [
        ("数据库迁移失败了，怎么办？", "zh"),
        ("数据库迁移失败了、怎么办?", "zh"),  # an ideographic comma, an ASCII question mark
        ("「数据库」迁移失败了。", "zh"),
        ("テストが失敗しました、どうすればいい？", "ja"),
        ("テスト・失敗", "ja"),  # the katakana middle dot
        ("deploy失败，怎么办", "deploy"),
        ("deploy失败,怎么办", "deploy"),
    ],
)
def test_a_punctuated_cjk_question_finds_the_session_its_words_find(
    cjk_store: Any, question: str, session: str
) -> None:
    found = [r.root_id for r in search_sessions(cjk_store, question).sessions]
    assert found and found[0] == session


def test_a_cjk_run_longer_than_the_word_cap_is_searched_by_its_words(store: Any) -> None:
    # A pasted paragraph with no punctuation: a single run of more than MAX_WORD_CHARS.
    filler = "这是一段很长的说明文字没有任何标点符号" * 8
    question = "数据库迁移失败" + filler
    assert len(question) > MAX_WORD_CHARS
    _say(store, "zh", "数据库迁移失败了，请检查日志")
    _say(store, "other", "午饭吃什么")
    assert [r.root_id for r in search_sessions(store, question).sessions][:1] == ["zh"]
