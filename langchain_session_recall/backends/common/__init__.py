"""What both backends share, one job a module.

:class:`~langchain_session_recall.backends.base.SessionBackend` joins them: ``core`` (the
hooks a backend supplies, opening, closing, transactions), ``reads``, ``lineage``, ``recent``,
``writes`` (with ``validation``), ``ledger``, ``summary_cache``, ``forgetting`` and ``stats``;
``rows`` decodes what they read.
"""
