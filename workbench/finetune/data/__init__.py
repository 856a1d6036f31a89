"""The data of fine-tuning: example types and file readers, BIO tags, the splits of one run, and
the built-in datasets made from SemCor and WordNet, and from WordNet's usage examples alone
(offline)."""
