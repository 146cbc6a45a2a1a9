"""Per-index fusion calibration: which fusion rule serves this index best, learnt from its
own chunks (docs/evaluation.md, *Calibration*)."""
