"""Optional dense recall: passage windows embedded at write time, blended with the lexical
ranking at search time (``docs/hybrid.md``)."""
