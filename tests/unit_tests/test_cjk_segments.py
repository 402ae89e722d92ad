"""CJK text for the bigram index and query segmentation (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.core.cjk import CJK_RUN, bigram_text, has_cjk
from langchain_session_recall.core.query import query_segments


def test_bigram_text_separates_latin_glued_to_cjk() -> None:
    assert bigram_text("修改youer服务端").split() == ["修改", "youer", "服务", "务端"]


def test_a_single_cjk_character_stays_a_token() -> None:
    assert bigram_text("a 的 b").split() == ["a", "的", "b"]


@pytest.mark.parametrize(
    ("token", "segments"),
    [
        ("youer服务端", ["youer", "服务端"]),
        ("上次修改的部署脚本", ["上次修改", "部署脚本"]),
        ("Dockerのキャッシュが効かない", ["Docker", "キャッシュ", "効"]),
        ("ずれる", ["ずれる"]),  # a hiragana-only word is kept
        ("서버를재시작", ["서버를재시작"]),
    ],
)
def test_query_segments(token: str, segments: list[str]) -> None:
    assert query_segments(token) == segments


@given(st.text(alphabet=st.sampled_from("服务端部署的了がのキャッシュabc12"), max_size=20))
def test_segments_are_non_empty_pieces_of_the_token(token: str) -> None:
    for segment in query_segments(token):
        assert segment and segment in token


@given(st.text(max_size=30))
def test_bigram_text_keeps_every_cjk_character(text: str) -> None:
    out = bigram_text(text)
    for run in CJK_RUN.findall(text):
        assert set(run) <= set(out)
    assert has_cjk(out) == has_cjk(text)
