"""The automation rule, in one place: which sessions are unattended runs, and what a job is.

Unattended runs (a nightly cron job, a kanban worker) say the same thing again and again:
search gives their hits a budget of their own
(:func:`~langchain_session_recall.backends.hits.budget_automation`), ranking demotes them by
their source weight and each further run of one job, and browsing lists each job once
(:func:`collapse_repeated_runs`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from langchain_session_recall.models import RecentSession

__all__ = ["AUTOMATION_SOURCES", "AUTOMATION_WEIGHTS", "collapse_repeated_runs", "job_of"]

AUTOMATION_WEIGHTS: Mapping[str, float] = {"cron": 0.35, "kanban": 0.6}
"""Session sources of unattended runs, with the weight ranking gives their matches."""
AUTOMATION_SOURCES: tuple[str, ...] = tuple(AUTOMATION_WEIGHTS)
"""Session sources of unattended runs (matched with a budget of their own, demoted by
ranking, listed once per job when browsing)."""


def job_of(session: RecentSession) -> tuple[str, str, str]:
    """The job a run belongs to: its source and title (an untitled run: its first message)."""
    return (session.source, session.title or "", "" if session.title else session.preview)


def collapse_repeated_runs(
    sessions: Iterable[RecentSession],
    sources: Collection[str],
    seen: set[tuple[str, str, str]] | None = None,
) -> list[RecentSession]:
    """Keep the first (newest) run of each automation job, in order (pure).

    A job is a source of ``sources`` and a title (an untitled run: its first user message):
    thirty nightly "disk usage check" runs browse as their newest one, as search demotes
    their repeats. Other sessions pass through. ``seen`` carries the jobs met across pages.

    Example:
        >>> def r(i, source, title):
        ...     return RecentSession(i, source, 0.0, title, None, 1, "df -h")
        >>> runs = [r("c3", "cron", "Disk"), r("a", "cli", "Disk"), r("c2", "cron", "Disk")]
        >>> [s.id for s in collapse_repeated_runs(runs, {"cron"})]
        ['c3', 'a']
    """
    seen = set() if seen is None else seen
    kept = []
    for session in sessions:
        if session.source in sources:
            job = job_of(session)
            if job in seen:
                continue
            seen.add(job)
        kept.append(session)
    return kept
