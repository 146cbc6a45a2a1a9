-- How this index fuses its two signals by default, learnt from its own chunks
-- (query/calibration): a JSON record with the rule and the evidence behind it. NULL until the
-- index is calibrated; queries then use the adaptive rule.
ALTER TABLE meta ADD COLUMN fusion_calibration TEXT;
