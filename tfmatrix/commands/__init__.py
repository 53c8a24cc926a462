"""The commands, one module per verb (asv's ``commands/``): arguments in, the pipeline's stages called."""
