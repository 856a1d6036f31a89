"""The data of fine-tuning: example types and file readers, BIO tags, and the built-in datasets
made from SemCor and WordNet."""
