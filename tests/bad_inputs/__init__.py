"""The bad-input corpus: cases generated on the fly by :mod:`bad_inputs.cases`."""
