"""Pure helpers under storage and search: the query AST, CJK segmentation, session headers,
lineage and the automation rule. No I/O; nothing here imports a store or the search pipeline."""
