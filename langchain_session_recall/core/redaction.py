"""Redaction of obvious secrets before text leaves the process (pure, no I/O).

Transcripts of agent sessions routinely hold pasted API keys, ``export`` lines and ``.env`` dumps.
Every text that leaves goes through :func:`redact_secrets`: the retriever's Documents (content,
title, preview), the agent tool's and the MCP server's replies, the CLI's output, the
summarizer's prompts and its log lines. A hosted model (and any cassette recorded from it)
never sees them. Redaction is idempotent: redacted text comes out unchanged.

The rules are written here, one per kind, each anchored on the token's published prefix or on
a key word. detect-secrets' plugins were measured against them (``benchmarks/secrets.py``,
``docs/reliability.md``): they are detectors for code review (one line at a time, entropy
guesses, several kinds only inside a config file's syntax) and caught fewer of the kinds
transcripts hold.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "DEFAULT_SECRET_PATTERNS",
    "SecretPattern",
    "SecretRedactor",
    "describe_error",
    "match_shown_id",
    "redact_secrets",
]


class SecretPattern(NamedTuple):
    """One kind of secret: a compiled regex and its replacement (``re.sub`` syntax, or a
    function of the match, as ``re.sub`` takes).

    ``hints``: the rule runs only where one of these occurs (a hint with an upper-case letter
    is looked for as written, an all-lower-case one in any case), and only on the lines that
    hold one unless ``whole_text``; no hints: on the whole text, always. Which rules have a hint
    is found in one pass over the text for all of them (a regex of every hint), and most texts
    hold none.
    """

    name: str
    pattern: re.Pattern[str]
    replacement: str | Callable[[re.Match[str]], str]
    hints: tuple[str, ...] = ()
    whole_text: bool = False


# Text every match of a regex holds (one of these strings, case as written): on a line holding
# none of them the regex cannot match, so it is not run there. Keyed by the regex (its source
# and flags): a property of the regex, so a user's rule with the same regex shares it.
_NEEDS: dict[tuple[str, int], tuple[str, ...]] = {}


def _p(
    name: str,
    regex: str,
    replacement: str | Callable[[re.Match[str]], str] | None = None,
    flags: int = 0,
    *,
    hints: tuple[str, ...] = (),
    whole_text: bool = False,
    needs: tuple[str, ...] = (),
) -> SecretPattern:
    replace = replacement or f"[REDACTED:{name}]"
    compiled = re.compile(regex, flags)
    if needs:
        _NEEDS[compiled.pattern, compiled.flags] = needs
    return SecretPattern(name, compiled, replace, hints, whole_text)


def _base64_headers() -> str:
    """Base64 of ``-----BEGIN ... PRIVATE KEY`` (a PEM key wrapped once more, as in a
    Kubernetes secret or a CI variable), to the last whole 3-byte group."""
    labels = ("", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", "PGP ")
    heads = [f"-----BEGIN {label}PRIVATE KEY".encode() for label in labels]
    return "|".join(base64.b64encode(h[: len(h) // 3 * 3]).decode() for h in heads)


# Every rule runs in time linear in its input (issue 32 item 3). A regex is tried at every
# position of a line, so a repetition that may run to the end of the line from each of many
# starts costs the square of the line ("mysql " * n, "TOKEN" * n): each repetition before a
# test that may fail is bounded ({0,40}), may not pass the next start (a tempered token,
# "(?:(?!mysql)[^\n])*?"), or starts only where a run of its characters starts (a lookbehind
# on the same class). An unbounded repetition is left only at the end of a regex, where it
# cannot fail. ``benchmarks/redaction_worst.py`` times the worst input found per rule.

# An ANSI colour code (a terminal capture: "\x1b[32mOPENAI_API_KEY\x1b[0m=..."): allowed
# around a key name.
_ANSI = r"(?:\x1b\[[0-9;]{0,16}m)"
# `=` and `:` and their full-width forms (U+FF1D, U+FF1A: Chinese and Japanese input)
_SEP = "[=:\uff1d\uff1a]"
_SEP_NEEDS = ("=", ":", "\uff1d", "\uff1a")

# Lower-case key words in `key=value` / `"key": "value"` forms. Plurals ("secrets:", "tokens")
# and compounds like "id-token: write" or "max_tokens=500" are prose or config, not secrets.
# The rules start at the key word (a name before it, "db_password", stays as it is): a regex
# that starts with a word boundary is tried at every word of the text, ten times slower.
# "My API key: ...", "Secret Key: ...": a space inside the key word.
_SECRET_WORDS = (
    r"(?:password|passwd|passphrase|secret(?!s)(?:[ ](?:access[ ])?key)?|api[_\- ]?key|"
    r"access[_\- ]?key|auth[_\- ]?token|access[_\- ]?token|refresh[_\- ]?token|"
    r"private[_\- ]?token|client[_\- ]?secret|(?<![\w-])token(?!s))"
)
# After the key word: the rest of its name (bounded), a closing quote, markdown emphasis or
# code (`**Password**:`), colour codes.
_KEY_TAIL = rf"[a-z0-9_\-]{{0,40}}{_ANSI}{{0,3}}[*_`]{{0,3}}[\"']?"
# A value character: not a quote or separator, nor a JSON escape's backslash (`\n` in a
# JSON-escaped `.env` dump ends the value; another backslash is part of it).
_VCHAR = r"(?:[^\s\"',;&\\]|\\(?![nrt\"]))"
# The value: not already redacted (within its first 64 characters), at least 3 characters.
_VALUE = rf"(?!{_VCHAR}{{0,64}}\[REDACTED)({_VCHAR}{{3,}})"
_WORD_HINTS = (
    "pass",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "api key",
    "accesskey",
    "access_key",
    "access-key",
    "access key",
    "token",
)
_B64 = r"[A-Za-z0-9+/]"
# Upper-case names of secrets (env_assignment).
_ENV_WORDS = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
)
# Where a name starts: not after a word character, or after a JSON escape (`\nGH_TOKEN=`).
_NAME_START = r"(?:(?<![\w\\])|(?<=\\[nrt]))"
# A URL's host after its credentials' "@": host characters, then the end of the authority.
_HOST_AFTER = r"(?=[A-Za-z0-9._\-\[\]%]{1,256}(?:[:/?#\s\"'<>),;]|$))"
# Cookie attributes (Set-Cookie): not values of a session.
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"}
)


def _cookie_values(match: re.Match[str]) -> str:
    """A ``Cookie:`` / ``Set-Cookie:`` header with every cookie's value redacted (its name
    kept; attributes such as ``Path=/`` and values already redacted left as they are)."""
    parts = match.group(2).split(";")
    for i, part in enumerate(parts):
        name, eq, value = part.partition("=")
        if not eq or not value.strip() or value.lstrip().startswith("[REDACTED"):
            continue
        if name.strip().lower() in _COOKIE_ATTRIBUTES:
            continue
        parts[i] = f"{name}=[REDACTED]"
    return match.group(1) + ";".join(parts)


# Order matters: whole blocks and structured forms first, so a key inside a PEM block or a
# bearer header is replaced once, by the most specific rule.
DEFAULT_SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]{0,40}"
        r"PRIVATE KEY(?: BLOCK)?-----|\Z)",
        flags=re.DOTALL,
        hints=("PRIVATE KEY",),
        whole_text=True,
    ),
    _p(
        "putty_key",
        r"PuTTY-User-Key-File-\d{1,4}:.*?(?:Private-MAC: {0,8}[0-9a-fA-F]+|\Z)",
        flags=re.DOTALL,
        hints=("PuTTY-User-Key-File-",),
        whole_text=True,
    ),
    _p(
        "private_key_base64",
        rf"(?:{_base64_headers()})(?:{_B64}|=|\\n|\s)*",
        hints=("LS0tLS1CRUdJTi",),
        whole_text=True,
    ),
    _p(
        "bearer_token",
        r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*",
        r"\1 [REDACTED:bearer_token]",
        hints=("bearer",),
    ),
    _p(
        "basic_auth",
        r"(?i)\b(basic)\s+[A-Za-z0-9+/]{12,}={0,2}",
        r"\1 [REDACTED:basic_auth]",
        hints=("basic",),
    ),
    _p(
        # Authorization: Token ..., ApiKey ..., a bare key: any scheme but Bearer and Basic
        # (their rules ran: the value is a marker now)
        "authorization_header",
        r"(?i)((?<![\w-])authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?!bearer\b|basic\b)(?=((?:[a-z][a-z0-9_\-]{0,30}[ \t]+)?))\2)" + _VALUE,
        r"\1[REDACTED]",
        hints=("authorization",),
    ),
    _p(
        # scheme://user:password@host; the password may hold "/" and "@" (the last "@"
        # before a host); a port ("host:8080/a@b") is not a password
        "url_credentials",
        r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]{0,30}://(?!\[REDACTED)[^\s:/@]{1,256}):"
        r"(?!\d{1,5}(?:[/?#\s]|$))(?!\[REDACTED\]@)[^\s]{1,256}?@" + _HOST_AFTER,
        r"\1:[REDACTED]@",
        hints=("://",),
    ),
    _p("openai_key", r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}", hints=("sk-",)),
    _p(
        "aws_access_key",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
        hints=("AKIA", "ASIA", "AGPA", "AIDA", "AROA"),
    ),
    _p(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _p(
        "gitlab_token",
        r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,}",
        hints=(
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
        ),
    ),
    _p("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", hints=("npm_",)),
    _p("pypi_token", r"\bpypi-Ag[A-Za-z0-9_\-]{50,}", hints=("pypi-Ag",)),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", hints=("xox",)),
    _p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", hints=("AIza",)),
    _p("google_oauth_token", r"\bya29\.[0-9A-Za-z_\-]{20,}", hints=("ya29.",)),
    _p("google_client_secret", r"\bGOCSPX-[0-9A-Za-z_\-]{20,}", hints=("GOCSPX-",)),
    _p(
        "telegram_bot_token",
        r"(?<!\d)\d{5,16}:A[A-Za-z0-9_\-]{34}(?![A-Za-z0-9_\-])",  # also in .../bot<token>/
        hints=(":A",),
    ),
    _p("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", hints=("hvs.", "hvb.", "hvr.")),
    _p("stripe_webhook_secret", r"\bwhsec_[A-Za-z0-9+/]{24,}", hints=("whsec_",)),
    _p("twilio_api_key", r"\bSK[0-9a-fA-F]{32}\b", hints=("SK",)),
    _p(
        "jwt",
        # header and payload are base64url JSON: '{"' (eyJ), '{ ' (eyA), '{' and a newline,
        # tab or return (ewo, ewk, ew0); a part starts where a run of its characters does
        r"(?<![A-Za-z0-9_\-])e(?:yJ|yA|wo|wk|w0)[A-Za-z0-9_\-]{8,}\.e(?:yJ|yA|wo|wk|w0)"
        r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        hints=("eyJ", "eyA", "ewo", "ewk", "ew0"),
    ),
    _p(
        "url_signature",
        # signed URLs: Azure SAS sig=, S3 X-Amz-Signature= and X-Amz-Security-Token=, GCS
        # X-Goog-Signature=
        r"(?i)([?&;](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)=)"
        r"[^\s&\"'#<>]{8,}",
        r"\1[REDACTED]",
        hints=("sig=", "signature=", "security-token="),
    ),
    _p(
        "aws_secret_key",
        # a 40-character key (mixed case and digits) on a line that names an AWS secret, in
        # prose too ("the aws secret key is ...", "my secret AWS key: ..."); the words up to
        # the first "secret" (or "aws") after the other one
        r"(?i)((?:\baws\b(?:(?!\bsecret\b|\baws\b)[^\n]){0,60}\bsecret\b|"
        r"\bsecret\b(?:(?!\baws\b|\bsecret\b)[^\n]){0,30}\baws\b)[^\n]{0,80}?)"
        r"(?<![A-Za-z0-9/+=])(?-i:(?=[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))"
        r"(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}\d)"
        r"[A-Za-z0-9/+]{40})",
        r"\1[REDACTED:aws_secret_key]",
        hints=("aws",),
    ),
    _p(
        "env_assignment",
        # GH_TOKEN=..., AWS_SECRET_ACCESS_KEY: ..., DB_PASSWORD="...": upper-case names (the
        # key word within the name's first 80 characters, the name at most 120)
        rf"({_NAME_START}{_ANSI}?(?=[A-Z0-9_]{{0,80}}?(?:{'|'.join(_ENV_WORDS)}))"
        rf"[A-Z][A-Z0-9_]{{0,120}}{_ANSI}{{0,3}}[\"']?[ \t]*{_SEP}[ \t]*[\"']?)" + _VALUE,
        r"\1[REDACTED]",
        hints=_ENV_WORDS,
        needs=_SEP_NEEDS,
    ),
    _p(
        # {"name": "OPENAI_API_KEY", "value": "..."}, name="DB_PASSWORD", value="...": a
        # secret's name and its value in two fields (a tool call's arguments as text)
        "name_value",
        r"(?i)((?<![\w-])[\"']?(?:name|key|variable|env)[\"']?[ \t]*[:=][ \t]*[\"']"
        r"(?=[^\"'\n]{0,80}?(?:token|secret|password|passwd|passphrase|api[_\-]?key|"
        r"access[_\-]?key|private[_\-]?key))[^\"'\n]{1,100}[\"'][ \t]*,[ \t]*[\"']?value[\"']?"
        r"[ \t]*[:=][ \t]*[\"']?)" + _VALUE,
        r"\1[REDACTED]",
        hints=("value",),
    ),
    _p(
        "quoted_assignment",
        # password: "correct horse battery staple": the whole quoted value, spaces and all
        rf"(?i)({_SECRET_WORDS}{_KEY_TAIL}[ \t]*{_SEP}[ \t]*)([\"'])"
        r"(?!\[REDACTED)(?=[^\"'\n]*?\s)([^\"'\n]*)\2",
        r"\1\2[REDACTED]\2",
        hints=_WORD_HINTS,
        needs=_SEP_NEEDS,  # the separator after the key word (none has another case)
    ),
    _p(
        "assignment",
        # password=..., "api_key": "...", **Password**: ...: keep the name so the summary can
        # still say *that* a password was set.
        rf"(?i)({_ANSI}?{_SECRET_WORDS}{_KEY_TAIL}[ \t]*{_SEP}[ \t]*[\"'`]?)" + _VALUE,
        r"\1[REDACTED]",
        hints=_WORD_HINTS,
        needs=_SEP_NEEDS,
    ),
    _p(
        # | password | hunter2 |: a two-column markdown table row whose first cell names a
        # secret (a third column is a field's description: "| password | string | ... |")
        "table_cell",
        rf"(?i)(^[ \t]*\|[ \t]*[*_`]{{0,3}}{_SECRET_WORDS}{_KEY_TAIL}[ \t]*\|[ \t]*`?)"
        + _VALUE
        + r"(?=`?[ \t]*(?:\|[ \t]*)?$)",
        r"\1[REDACTED]",
        flags=re.MULTILINE,
        hints=_WORD_HINTS,
        needs=("|",),
    ),
    _p(
        # Pwd=... (ODBC, ADO.NET), "pwd": "..."; a path is the shell's working directory, and
        # "bash: pwd: command not found" is not a password either
        "pwd_assignment",
        r"(?i)((?<![\w-])pwd(?:[ \t]*[=\uff1d]|[\"'][ \t]*[:\uff1a])[ \t]*[\"']?)(?![/~$.])"
        + _VALUE,
        r"\1[REDACTED]",
        hints=("pwd",),
        needs=_SEP_NEEDS,
    ),
    _p(
        # openssl ... -pass pass:..., -passin pass:..., -passout pass:...
        "openssl_pass",
        r"(?i)((?<![\w-])-pass(?:in|out)?[ \t]+pass:)" + _VALUE,
        r"\1[REDACTED]",
        hints=("pass:",),
    ),
    _p(
        # pass=... (a query string, a config), --pass ..., -pass ...
        "pass_assignment",
        r"(?i)((?<![\w-])(?:--?pass(?:[ \t]+|=)|pass=))(?!-)" + _VALUE,
        r"\1[REDACTED]",
        hints=("pass",),
    ),
    _p(
        # .netrc: machine HOST login USER password PASSWORD, on one line or several
        "netrc_password",
        r"(?i)(\b(?:machine|default|login)\b(?:[ \t]+\S{1,256})?(?:\s+(?:login|account|port|"
        r"protocol)[ \t]+\S{1,256}){0,3}\s+password[ \t]+)" + _VALUE,
        r"\1[REDACTED]",
        hints=("password",),
        whole_text=True,
    ),
    _p(
        "stripe_key",
        r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}",
        hints=("sk_live", "sk_test", "rk_live", "rk_test", "pk_live", "pk_test"),
    ),
    _p("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", hints=("hf_",)),
    _p("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", hints=("SG.",)),
    _p("docker_pat", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", hints=("dckr_pat_",)),
    _p(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}",
        hints=("hooks.slack.com",),
    ),
    # redis://:password@host (no user name before the colon)
    _p(
        "url_password",
        r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]{0,30}://):(?!\[REDACTED\]@)[^\s]{1,256}?@"
        + _HOST_AFTER,
        r"\1:[REDACTED]@",
        hints=("://",),
    ),
    _p(
        "cookie",
        # Cookie: a=1; sessionid=...; Set-Cookie: sessionid=...; HttpOnly: every value
        r"(?i)((?<![\w-])(?:set-)?cookie[\"']?[ \t]*[:=][ \t]*[\"']?)([^\n\"']+)",
        _cookie_values,
        hints=("cookie",),
    ),
    _p(
        "curl_user",
        r"((?<![\w-])(?:-u|--user)\s+[^\s:]{1,256}:)\S+",
        r"\1[REDACTED]",
        hints=("-u",),
    ),
    _p(
        "mysql_password",
        # the -p after the last "mysql" of a line (the words between may not hold another:
        # each start scans to the next one only)
        r"(\bmysql\w{0,20}\b(?:(?!mysql)[^\n]){0,1024}?\s-p)(?!\s)\S+",
        r"\1[REDACTED]",
        hints=("mysql",),
        needs=("-p",),
    ),
    _p(
        "login_password",
        r"(\blogin\b(?:(?!login)[^\n]){0,1024}?\s-p\s+)\S+",
        r"\1[REDACTED]",
        hints=("login",),
        needs=("-p",),
    ),
    _p(
        "sshpass",
        r"(\bsshpass\b(?:(?!sshpass)[^\n]){0,256}?\s-p[ \t]*)(?!-)\S+",
        r"\1[REDACTED]",
        hints=("sshpass",),
        needs=("-p",),
    ),
    _p(
        # htpasswd -b[c] FILE USER PASSWORD, htpasswd -nb USER PASSWORD
        "htpasswd",
        r"(\bhtpasswd\b(?=[^\n]{0,64}?\s-[A-Za-z]{0,8}b)(?:[ \t]+-[A-Za-z]{1,8}){1,5}"
        r"(?:[ \t]+(?!-)\S{1,512})?[ \t]+(?!-)\S{1,512}[ \t]+)(?!-)\S+",
        r"\1[REDACTED]",
        hints=("htpasswd",),
    ),
    _p(
        "connection_string_key",
        r"(?i)\b((?:Account|SharedAccess)Key\s*=\s*)[A-Za-z0-9+/%]{20,}={0,2}",
        r"\1[REDACTED]",
        hints=("accountkey", "sharedaccesskey"),
    ),
    _p(
        "cli_flag",
        r"(?i)((?<![\w-])--?[a-z\-]{0,40}?(?:password|passwd|passphrase|secret|api-?key|"
        r"access-?key|token)[a-z\-]{0,40}\s+)(?!-)" + _VALUE,
        r"\1[REDACTED]",
        hints=_WORD_HINTS,
        needs=("-",),  # the flag's dash
    ),
)


class _HintScan:
    """Which rules of a pattern tuple have a hint in a text, found in one regex pass per case
    (the hints with an upper-case letter in the text as written, the others in its lower-case
    form) instead of one ``str.find`` per rule and hint.

    A hint found is a hint :func:`_apply` would find (``str.find`` of the same literal), so a
    rule left out would have returned the text unchanged. The scan resumes one character after
    each hit, so overlapping hints are seen, and the longest of the hints starting at a position
    is tried first: the shorter ones are its prefixes and are marked with it.
    """

    def __init__(self, rules: tuple[SecretPattern, ...]) -> None:
        self.all_hinted = all(rule.hints for rule in rules)
        as_written: dict[str, set[int]] = {}
        lower: dict[str, set[int]] = {}
        always: set[int] = set()
        for index, rule in enumerate(rules):
            for hint in rule.hints:
                if not hint:
                    always.add(index)  # "" is found in any text
                else:
                    (lower if hint.islower() else as_written).setdefault(hint, set()).add(index)
        self.always = frozenset(always)
        self.scans = [_literal_scan(as_written), _literal_scan(lower)]
        self.needs = tuple(_NEEDS.get((r.pattern.pattern, r.pattern.flags), ()) for r in rules)

    def present(self, text: str, lowered: str) -> frozenset[int]:
        """The indices of the rules with a hint in ``text`` (``lowered``: ``text.lower()``,
        as long as ``text``)."""
        (written, written_rules), (lower, lower_rules) = self.scans
        written_hit = written.search(text) if written is not None else None
        lower_hit = lower.search(lowered) if lower is not None else None
        if written_hit is None and lower_hit is None:
            return self.always  # most texts: no hint, nothing more to build
        found = set(self.always)
        for regex, rules_of, hay, hit in (
            (written, written_rules, text, written_hit),
            (lower, lower_rules, lowered, lower_hit),
        ):
            while regex is not None and hit is not None:
                found |= rules_of[hit.group()]
                hit = regex.search(hay, hit.start() + 1)
        return frozenset(found)


def _literal_scan(
    hints: dict[str, set[int]],
) -> tuple[re.Pattern[str] | None, dict[str, frozenset[int]]]:
    """A regex matching the longest of ``hints`` that starts at a position and, for each hint,
    the rules of it and of every hint that is a prefix of it (found at the same position)."""
    if not hints:
        return None, {}
    rules_of = {
        hint: frozenset(i for other in hints if hint.startswith(other) for i in hints[other])
        for hint in hints
    }
    return re.compile(_trie_regex(sorted(hints))), rules_of


def _trie_regex(words: list[str]) -> str:
    """One alternation of ``words`` factored by their common prefixes (``a(?:ws|pi_key)``):
    the regex engine tries one branch per character instead of every word; a word that is a
    prefix of another matches only when the longer one does not (greedy ``?``)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict[str, Any]) -> str:
        alternatives = [re.escape(char) + branch(node[char]) for char in sorted(node) if char]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
        return f"(?:{body})?" if "" in node else body

    return branch(trie)


@functools.lru_cache(maxsize=32)
def _hint_scan(rules: tuple[SecretPattern, ...]) -> _HintScan:
    return _HintScan(rules)


_DEFAULT_SCAN = _HintScan(DEFAULT_SECRET_PATTERNS)


def redact_secrets(text: str, patterns: Sequence[SecretPattern] | None = None) -> str:
    """Return ``text`` with every match of ``patterns`` replaced by a ``[REDACTED...]`` marker.

    Args:
        text: Any text (a transcript, a query, an error message).
        patterns: The rules to apply, in order. ``None`` means :data:`DEFAULT_SECRET_PATTERNS`;
            extend them with ``(*DEFAULT_SECRET_PATTERNS, SecretPattern(...))``.

    Example:
        >>> redact_secrets("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx")
        'export OPENAI_API_KEY=[REDACTED:openai_key]'
        >>> redact_secrets("mysql -u root --password hunter22")
        'mysql -u root --password [REDACTED]'
    """
    return _redact(text, patterns, None)


def _redact(text: str, patterns: Sequence[SecretPattern] | None, tally: list[int] | None) -> str:
    """:func:`redact_secrets`; with ``tally``, ``tally[0]`` grows by the secrets replaced."""
    if patterns is None or patterns is DEFAULT_SECRET_PATTERNS:
        rules, scan = DEFAULT_SECRET_PATTERNS, _DEFAULT_SCAN
    else:
        rules = tuple(patterns)
        scan = _hint_scan(rules)
    lowered: str | None = None
    present: frozenset[int] | None = None  # the rules with a hint in `text` (None: all run)
    for index, rule in enumerate(rules):
        if rule.hints:
            if lowered is None:
                lowered = text.lower()
                present = scan.present(text, lowered) if len(lowered) == len(text) else None
                if not present and scan.all_hinted and present is not None:
                    return text  # no rule has a hint here: nothing to do
            if present is not None and index not in present:
                continue  # no hint of this rule in the text: _apply would change nothing
        redacted = _apply(rule, text, lowered, scan.needs[index], tally)
        if redacted is not text:
            text, lowered = redacted, None
    return text


@dataclass(frozen=True)
class SecretRedactor:
    """:func:`redact_secrets` with its rules bound: a ``str -> str`` callable that can also
    count what it replaces (:meth:`counted`) and names its rules (:attr:`rules_id`).

    The retriever redacts its results with one and records ``rules_id`` and the count in
    the result's data, so the summarizer, given a result of the same rules whose text is
    as built, sends it as it is instead of redacting it again (it redacts any other text).

    Example:
        >>> redact = SecretRedactor()
        >>> redact.counted("token=hunter22hunter22 and OPENAI_API_KEY=[REDACTED:openai_key]")
        ('token=[REDACTED] and OPENAI_API_KEY=[REDACTED:openai_key]', 1)
        >>> redact.rules_id == SecretRedactor(DEFAULT_SECRET_PATTERNS).rules_id
        True
    """

    patterns: tuple[SecretPattern, ...] = DEFAULT_SECRET_PATTERNS
    rules_id: str = field(init=False, repr=False, compare=False)
    """A digest of the rules (regexes, flags, replacements, hints): equal ids redact alike."""

    def __init__(self, patterns: Sequence[SecretPattern] | None = None) -> None:
        rules = DEFAULT_SECRET_PATTERNS if patterns is None else tuple(patterns)
        object.__setattr__(self, "patterns", rules)
        object.__setattr__(self, "rules_id", _rules_id(rules))

    def __call__(self, text: str) -> str:
        return _redact(text, self.patterns, None)

    def counted(self, text: str) -> tuple[str, int]:
        """``text`` redacted, and how many secrets were replaced (a match its rule leaves as
        it was, as in text already redacted, is not one)."""
        tally = [0]
        return _redact(text, self.patterns, tally), tally[0]


@functools.lru_cache(maxsize=32)
def _rules_id(rules: tuple[SecretPattern, ...]) -> str:
    digest = hashlib.sha256()
    for rule in rules:
        replacement = rule.replacement
        if callable(replacement):
            # a function of ours is the same in every process; another's is known by identity
            # (an id that cannot match in another process only costs a second redaction)
            module = getattr(replacement, "__module__", "")
            name = f"{module}.{getattr(replacement, '__qualname__', type(replacement).__name__)}"
            replacement = name if module == __name__ else f"{name}@{id(replacement):x}"
        seen = (rule.name, rule.pattern.pattern, rule.pattern.flags, replacement, rule.hints)
        digest.update(repr((*seen, rule.whole_text)).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


def describe_error(exc: BaseException, limit: int = 500) -> str:
    """``"Type: message"`` of an error as a log line or a reply may show it: secrets redacted
    (an HTTP error can quote the request's ``Authorization`` header), at most ``limit``
    characters.

    Example:
        >>> describe_error(RuntimeError("401 for Authorization: Bearer abcdefgh12345678"))
        'RuntimeError: 401 for Authorization: Bearer [REDACTED:bearer_token]'
    """
    return redact_secrets(f"{type(exc).__name__}: {exc}"[: 4 * limit])[:limit]


def match_shown_id(
    shown: str, candidates: Iterable[str], redact: Callable[[str], str] = redact_secrets
) -> str | None:
    """The one of ``candidates`` that ``redact`` shows as ``shown``; ``None`` when none or
    several do.

    An identifier that holds a secret (a session id with a key in it) is shown redacted, and
    a lookup is given the id as shown: this finds the real one (issue 32 item 8). Only
    candidates holding every piece of ``shown`` outside its markers, in order, are redacted.

    Example:
        >>> run = "run-sk-" + "a" * 20
        >>> redact_secrets(run), match_shown_id("run-[REDACTED:openai_key]", ["run-1", run]) == run
        ('run-[REDACTED:openai_key]', True)
    """
    pieces = [p for p in _MARKER.split(shown) if p]
    found: list[str] = []
    for candidate in candidates:
        at = 0
        for piece in pieces:
            at = candidate.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        if at >= 0 and redact(candidate) == shown:
            found.append(candidate)
            if len(found) > 1:
                return None
    return found[0] if found else None


_MARKER = re.compile(r"\[REDACTED[^\]]*\]")


def _apply(
    rule: SecretPattern,
    text: str,
    lowered: str | None,
    needs: tuple[str, ...] = (),
    tally: list[int] | None = None,
) -> str:
    """One rule on ``text`` (``lowered``: ``text.lower()``): on the lines holding a hint, or on
    all of it (see :class:`SecretPattern`); ``text`` itself when no hint occurs. ``needs``:
    text every match of the rule's regex holds (see ``_NEEDS``); where none of it is, the
    regex is not run; ``tally[0]`` grows by the secrets replaced."""
    if not rule.hints or lowered is None or len(lowered) != len(text):
        # no hints, or lower() changed lengths ("İ"): offsets would not match
        return _sub(rule, text, needs, tally)
    lines: dict[int, int] = {}  # start -> end of each line holding a hint
    for hint in rule.hints:
        hay = lowered if hint.islower() else text
        found = hay.find(hint)
        while found != -1:
            start = text.rfind("\n", 0, found) + 1
            end = text.find("\n", found)
            end = len(text) if end == -1 else end
            lines[start] = end
            found = hay.find(hint, end)
    if not lines:
        return text
    if rule.whole_text:
        return _sub(rule, text, needs, tally)
    parts, done = [], 0
    for start in sorted(lines):
        end = lines[start]
        parts += [text[done:start], _sub(rule, text[start:end], needs, tally)]
        done = end
    parts.append(text[done:])
    redacted = "".join(parts)
    return text if redacted == text else redacted


def _sub(
    rule: SecretPattern, text: str, needs: tuple[str, ...], tally: list[int] | None = None
) -> str:
    """``rule.pattern.sub`` on ``text``; ``text`` itself when it holds none of ``needs`` (the
    regex could not match it). With ``tally``, ``tally[0]`` grows by the matches replaced by
    other text."""
    if needs and not any(need in text for need in needs):
        return text
    if tally is None:
        return rule.pattern.sub(rule.replacement, text)
    replacement = rule.replacement

    def counted(match: re.Match[str]) -> str:
        out = replacement(match) if callable(replacement) else match.expand(replacement)
        tally[0] += out != match.group(0)
        return out

    return rule.pattern.sub(counted, text)
