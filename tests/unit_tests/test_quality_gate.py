"""The recap quality gate (``summarize/quality.py``) on real recordings and on a fuzz of bad
answers built from the real transcripts.

Corpus: ``tests/data/recaps/`` (real answers of SmolLM2-135M-Instruct and Gemma 3 270M served by
llama.cpp, labelled by hand; hand-written reference recaps). Every bad recording must be
rejected for one of the defects it was labelled with; every good one accepted.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from langchain_session_recall.summarize.language import detect_language, languages_present
from langchain_session_recall.summarize.prompts import SUMMARY_SYSTEM_PROMPT
from langchain_session_recall.summarize.quality import (
    REASONS,
    RecapThresholds,
    assess_recap,
    is_length_stop,
)
from tests.recap_corpus import Recap, assess, recordings, references, transcripts

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

BAD = [r for r in recordings() if r.label == "bad"]
GOOD = [r for r in recordings() if r.label == "good"] + list(references())
ENGLISH = [r for r in references() if detect_language(r.text) == "en"]


# -- the corpus ---------------------------------------------------------------------------------


def test_the_corpus_is_what_it_says() -> None:
    assert {r.model for r in recordings()} == {"smollm2-135m", "gemma-3-270m", "qwen2.5-coder-1.5b"}
    assert all(r.label in {"good", "bad"} and r.why for r in recordings())
    assert all(set(r.expected_reasons) <= set(REASONS) for r in recordings())
    assert all(r.expected_reasons for r in BAD)
    assert all(r.provenance == "hand-written reference" for r in references())
    assert all(r.transcript_id in transcripts() for r in (*recordings(), *references()))
    # Low max_tokens truncate: the corpus holds answers cut by the limit.
    assert any(r.finish_reason == "length" for r in recordings())
    assert len(references()) >= 20


@pytest.mark.parametrize("recap", BAD, ids=[r.id for r in BAD])
def test_every_bad_recording_is_rejected_for_a_defect_it_has(recap: Recap) -> None:
    verdict = assess(recap)
    assert not verdict.ok, recap.why
    assert set(verdict.reasons) & set(recap.expected_reasons), (verdict.details, recap.why)


@pytest.mark.parametrize("recap", GOOD, ids=[r.id for r in GOOD])
def test_every_good_recap_is_accepted(recap: Recap) -> None:
    verdict = assess(recap)
    assert verdict.ok, verdict.details
    assert verdict.reasons == ()


# -- single checks --------------------------------------------------------------------------------

CORS = transcripts()["20261103_091512_a1b2c3+ids"]


def check(recap: str, finish_reason: str | None = None, **kwargs: object) -> tuple[str, ...]:
    return assess_recap(
        recap, transcript=CORS.text, prompt=CORS.prompt(), finish_reason=finish_reason, **kwargs
    ).reasons  # type: ignore[arg-type]


GOOD_CORS = (
    "The browser blocked calls from app.example.dev because nginx passed the OPTIONS preflight "
    "to the app, which replied 405 without CORS headers [#45, #46]. The fix answers preflights "
    "in nginx with 204 and sets `Access-Control-Allow-Origin` from a `map` allow-list [#50, #53]."
)
COPIED_CONCLUSION = (  # the session's closing message, nearly verbatim
    "Root cause: the preflight OPTIONS request went to the app (405, no headers). nginx now "
    "answers it with 204 and `add_header Access-Control-Allow-Origin $cors_origin always;` using "
    "a `map` allow-list."
)


def test_citations_and_transcript_tags_do_not_confuse_the_gate() -> None:
    assert check(GOOD_CORS) == ()
    cited = re.sub(
        r"\.", " [#43] [#44, #45] (#46) [USER #43] (ASSISTANT #44, TOOL #45).", GOOD_CORS
    )
    assert check(cited) == ()
    # Citations alone are no recap.
    assert check("[#43] [#44, #45] (#46)") == ("empty",)


@pytest.mark.parametrize("token", ["<<SYS>>", "[INST]", "<start_of_turn>", "<|im_start|>",
                                   "<|eot_id|>", "</s>", "<end_of_turn>", "<|endoftext|>"])  # fmt: skip
def test_template_tokens(token: str) -> None:
    assert "template_tokens" in check(f"{token}{GOOD_CORS}")
    # A token the transcript itself talks about is not a leak.
    transcript = CORS.text + f"\n\n[USER #54]: why does the log show {token}?"
    assert assess_recap(f"The log showed {token}. " + GOOD_CORS, transcript=transcript).ok


def test_a_copy_of_the_closing_message_is_an_echo() -> None:
    # Known cost: a recap that is mostly the session's own conclusion, copied, is rejected.
    assert check(COPIED_CONCLUSION) == ("echo",)


def test_transcript_format() -> None:
    answer = "[USER #43]: The frontend can't call the API.\n[ASSISTANT #44]: Let me look at nginx."
    assert "transcript_format" in check(answer)


def test_truncation_uses_the_finish_reason_and_the_last_line() -> None:
    assert check(GOOD_CORS, "length") == ()  # hit the limit at a sentence end: usable
    cut = GOOD_CORS[: GOOD_CORS.index(" with 204")]
    assert cut.endswith("in nginx")
    assert check(cut, "length") == ("truncated",)
    assert check(cut, "MAX_TOKENS") == ("truncated",)
    assert check(cut, "stop") == ()
    assert check(cut + " and the", "stop") == ("truncated",)  # dangling word, any finish reason
    assert check(GOOD_CORS + "\n```nginx\nmap $http_origin", "stop") == ("truncated",)
    assert is_length_stop("length") and not is_length_stop(None)


def test_languages() -> None:
    german = (
        "Der Benutzer hatte einen CORS-Fehler; die Preflight-Anfrage ging an die App, die mit "
        "405 antwortete. Nginx beantwortet sie jetzt mit 204 und `add_header` aus einer Liste."
    )
    assert "language" in check(german)
    chinese = "预检请求被转发到应用，返回405。现在由nginx直接返回204，并通过map白名单添加CORS头。"
    assert "language" in check(chinese)
    zh = transcripts()["20261118_153009_c4e5f6+ids"]
    recap = "端口从8080改为9000，数据库迁移用 alembic stamp 标记到 7b9d4e。"
    assert assess_recap(recap, transcript=zh.text, prompt=zh.prompt()).ok
    # English is the prompt's language: an English recap of a Chinese session is allowed.
    recap = "The port moved from 8080 to 9000 and the migration was stamped to 7b9d4e with alembic."
    assert assess_recap(recap, transcript=zh.text, prompt=zh.prompt()).ok
    # ... but not without that prompt.
    assert "language" in assess_recap(recap, transcript=zh.text).reasons
    assert languages_present(zh.text) == {"zh", "latin"}


def test_invented_content_and_numbers() -> None:
    story = (
        "The team migrated the billing service to Kubernetes, tuned the garbage collector and "
        "rewrote the invoice templates in Rust before the quarterly audit."
    )
    assert "invented" in check(story)
    assert "405" in GOOD_CORS
    altered = GOOD_CORS.replace("405", "502")
    assert "invented" in check(altered)  # one wrong number is one too many in a recall


def test_vague_restates_the_topic() -> None:
    vague = "The user asked how to fix the CORS error between the app and the API behind nginx."
    assert "vague" in check(vague)
    short_transcript = "[USER #1]: hi\n\n[ASSISTANT #2]: hello"
    assert assess_recap("The user said hi.", transcript=short_transcript).ok


def test_thresholds_are_configurable() -> None:
    looping = " ".join(["nginx answers the preflight with 204."] * 3)
    assert "loop" in check(looping)
    lenient = RecapThresholds(loop=1.01, loop_lines=99, loop_sentence_words=999)
    assert "loop" not in check(looping, thresholds=lenient)


def test_scores_are_reported() -> None:
    verdict = assess_recap(GOOD_CORS, transcript=CORS.text, prompt=CORS.prompt())
    scores = verdict.scores()
    assert scores["language"] == "en" and scores["invented_specifics"] == 0
    assert scores["copied"] == 0.0 and scores["new_specifics"] >= 3  # type: ignore[operator]


# -- fuzz: bad answers built from the real transcripts are rejected -----------------------------

TRANSCRIPT_IDS = sorted(transcripts())
ENGLISH_TRANSCRIPTS = [
    i for i in TRANSCRIPT_IDS if "en" in languages_present(transcripts()[i].text)
]
TAG = re.compile(r"^\[[A-Z]+(?::[^\]#\n]+)?(?: #\d+)?\]: ?", re.MULTILINE)

OTHER_LANGUAGES = [
    "Der Benutzer wollte das Problem lösen. Die Konfiguration wurde geändert und der Dienst "
    "wurde neu gestartet, aber es ist noch nicht klar, ob das reicht.",
    "L'utilisateur voulait corriger le problème. La configuration a été modifiée et le service "
    "a été redémarré, mais il reste une question sur les sauvegardes.",
    "El usuario quería resolver el problema. La configuración fue cambiada y el servicio se "
    "reinició, pero todavía falta revisar los registros del sistema.",
    "用户想解决这个问题。配置已经修改，服务也重新启动了，但是还需要检查系统日志和备份。",
    "Пользователь хотел решить проблему. Конфигурация была изменена, сервис перезапущен, но "
    "журналы системы ещё нужно проверить.",
    "Gebruiker wilde het probleem oplossen. De configuratie werd aangepast en de dienst is "
    "opnieuw gestart, maar de logbestanden moeten nog worden bekeken.",
]
UNRELATED_WORDS = [
    *("sourdough", "oven", "garden", "tomatoes", "harvest", "bicycle", "marathon", "violin"),
    *("orchestra", "museum", "painting", "volcano", "glacier", "penguin", "festival", "lantern"),
    *("pottery", "cathedral", "meadow", "orchard", "saffron"),
]
TEMPLATE_TOKENS = ["<<SYS>>", "<</SYS>>", "[INST]", "[/INST]", "<start_of_turn>model",
                   "<end_of_turn>", "<|im_start|>assistant", "<|im_end|>", "<|eot_id|>",
                   "<|start_header_id|>", "</s>", "<|endoftext|>"]  # fmt: skip


def words_of(text: str) -> list[str]:
    return TAG.sub("", text).split()


@st.composite
def transcript_chunk(draw: st.DrawFn, min_words: int = 30) -> tuple[str, str]:
    tid = draw(st.sampled_from(ENGLISH_TRANSCRIPTS))
    words = words_of(transcripts()[tid].text)
    size = draw(st.integers(min_words, max(min_words, min(len(words), 120))))
    start = draw(st.integers(0, max(0, len(words) - size)))
    return tid, " ".join(words[start : start + size])


def verdict_for(tid: str, text: str, finish_reason: str | None = "stop") -> tuple[str, ...]:
    t = transcripts()[tid]
    return assess_recap(
        text, transcript=t.text, prompt=t.prompt(), finish_reason=finish_reason
    ).reasons


@FUZZ
@given(
    st.sampled_from(TRANSCRIPT_IDS),
    st.lists(
        st.sampled_from([*UNRELATED_WORDS, "the", "and", "nginx", "was"]), min_size=3, max_size=12
    ),
    st.integers(3, 8),
    st.sampled_from([" ", "\n", ". ", ", "]),
)
def test_fuzz_loops_are_rejected(tid: str, phrase: list[str], times: int, sep: str) -> None:
    text = sep.join([" ".join(phrase)] * times)
    assert "loop" in verdict_for(tid, text)


@FUZZ
@given(st.sampled_from(list(references())), st.integers(2, 4))
def test_fuzz_a_good_recap_repeated_is_a_loop(recap: Recap, times: int) -> None:
    assert "loop" in assess(recap, "\n".join([recap.text] * times)).reasons


@FUZZ
@given(transcript_chunk(), st.booleans())
def test_fuzz_echoes_of_the_transcript_are_rejected(
    chunk: tuple[str, str], keep_tags: bool
) -> None:
    tid, text = chunk
    if keep_tags:  # the same stretch with its transcript tags, as models echo it
        t = transcripts()[tid].text
        lines = [ln for ln in t.splitlines() if ln.strip()]
        text = "\n".join(lines[: max(2, len(lines) // 2)])
        reasons = verdict_for(tid, text)
        assert {"echo", "transcript_format"} & set(reasons)
        return
    assert "echo" in verdict_for(tid, text)


@FUZZ
@given(st.sampled_from(TRANSCRIPT_IDS), st.integers(0, 40), st.integers(15, 60))
def test_fuzz_echoes_of_the_prompt_are_rejected(tid: str, start: int, size: int) -> None:
    words = SUMMARY_SYSTEM_PROMPT.replace("{citation_instruction}", "").split()
    text = " ".join(words[start : start + size])
    assume(len(text.split()) >= 12)
    assert "echo" in verdict_for(tid, text)


@FUZZ
@given(st.sampled_from(list(references())), st.sampled_from(TEMPLATE_TOKENS), st.data())
def test_fuzz_template_tokens_are_rejected(recap: Recap, token: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(recap.text)))
    assert "template_tokens" in assess(recap, recap.text[:at] + token + recap.text[at:]).reasons


@FUZZ
@given(st.sampled_from(list(references())), st.data())
def test_fuzz_truncated_answers_are_rejected(recap: Recap, data: st.DataObject) -> None:
    # Cut after a word inside a sentence, as a token limit does.
    cuts = [m.end() for m in re.finditer(r"[A-Za-z]{2,}(?= [a-z])", recap.text)]
    assume(cuts)
    at = data.draw(st.sampled_from(cuts))
    assert "truncated" in assess(recap, recap.text[:at], finish_reason="length").reasons


@FUZZ
@given(
    st.sampled_from(TRANSCRIPT_IDS),
    st.sampled_from(["", " ", "\n\n", "[#43]", "[#3] [#4, #5]", "<|im_end|>", "<<SYS>>\n", "**"]),
)
def test_fuzz_empty_answers_are_rejected(tid: str, text: str) -> None:
    assert "empty" in verdict_for(tid, text)


@FUZZ
@given(st.sampled_from(ENGLISH_TRANSCRIPTS), st.sampled_from(OTHER_LANGUAGES))
def test_fuzz_other_languages_are_rejected(tid: str, text: str) -> None:
    assume("zh" not in languages_present(transcripts()[tid].text) or "用户" not in text)
    assert "language" in verdict_for(tid, text)


@FUZZ
@given(
    st.sampled_from(TRANSCRIPT_IDS),
    st.lists(st.sampled_from(UNRELATED_WORDS), min_size=6, max_size=20, unique=True),
    st.lists(st.integers(10, 99999), min_size=0, max_size=3),
)
def test_fuzz_invented_content_is_rejected(tid: str, words: list[str], numbers: list[int]) -> None:
    story = "The user " + ", ".join(words) + "".join(f" {n}" for n in numbers) + "."
    assert "invented" in verdict_for(tid, story)


# -- fuzz: the good references, lightly perturbed, stay accepted --------------------------------

CITATIONS = re.compile(r"\s*[\[(]#\d+(?:, #\d+)*[\])]")
# A numbered item's marker ("2.") starts its sentence, never ends the one before it: reordering
# must not leave a recap ending on an empty item ("... 204.\n5."), which the gate rightly rejects.
SENTENCE = re.compile(r"(?<=[.!?。])(?<!\b\d\.)(?<!\b\d\d\.)\s+(?=[A-Z`~(]|\d{1,2}\.\s)")


@FUZZ
@given(st.sampled_from(list(references())), st.data())
def test_fuzz_perturbed_good_recaps_are_accepted(recap: Recap, data: st.DataObject) -> None:
    text = recap.text
    if data.draw(st.booleans(), label="drop citations"):
        text = CITATIONS.sub("", text)
    sentences = SENTENCE.split(text)
    if len(sentences) >= 3 and data.draw(st.booleans(), label="drop a sentence"):
        del sentences[data.draw(st.integers(1, len(sentences) - 1))]
    if len(sentences) >= 2 and data.draw(st.booleans(), label="reorder"):
        sentences = data.draw(st.permutations(sentences))
    if "\n" not in text and data.draw(st.booleans(), label="as bullets"):
        text = "\n".join(f"- {s}" for s in sentences)
    else:
        text = " ".join(sentences)
    if data.draw(st.booleans(), label="whitespace"):
        text = f"\n {text}\n\n"
    finish = data.draw(st.sampled_from(["stop", None, "end_turn"]))
    verdict = assess(recap, text, finish_reason=finish)
    assert verdict.ok, (verdict.details, text)


@FUZZ
@given(st.sampled_from(ENGLISH), st.sampled_from(["Summary: ", "Recap: ", "Here is the recap:\n"]))
def test_fuzz_a_short_preamble_is_accepted(recap: Recap, preamble: str) -> None:
    assert assess(recap, preamble + recap.text).ok


def test_extension_b_is_read_as_cjk_like_the_rest_of_han() -> None:
    """The gate reads CJK by the one table (``core/cjk.py``): a character of CJK Extension B
    (U+20000-U+2A6DF, e.g. the 𠮷 of 𠮷野家) is a word of its own and copies of it are echoes,
    as for any other ideograph."""
    common = "用户想解决这个问题配置已经修改服务也重新启动"
    extension_b = "".join(chr(0x20000 + 7 * i) for i in range(len(common)))
    for recap in (common, extension_b):
        own = assess_recap(recap, transcript="[USER #1]: hello")
        echo = assess_recap(recap, transcript=f"[USER #1]: {recap}")
        assert (own.words, echo.copied) == (len(common), 1.0), recap
        assert "echo" in echo.reasons
