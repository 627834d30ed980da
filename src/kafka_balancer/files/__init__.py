"""Files at the CLI edge: :mod:`.outputs` writes every output safely, :mod:`.inputs` reads every input file."""
