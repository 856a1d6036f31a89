"""WSD evaluation reports a paper can cite: intervals, splits, errors in words, comparisons."""
