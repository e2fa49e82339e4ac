"""The commands of the ``contextfold`` CLI, one module per family; :mod:`contextfold.cli`
registers them."""
