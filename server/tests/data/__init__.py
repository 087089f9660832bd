"""The content-fidelity corpus and its generator (see make_corpus.py)."""
