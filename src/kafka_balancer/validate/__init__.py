"""Validation layers, one per input kind: pure functions returning typed values or raising InputError that
names the flag, file or field and the value (docs/errors.md).

- :mod:`.values`: command-line values (bootstrap lists, durations, timeouts, seeds, sizes, broker ids, ...);
- :mod:`.resources`: memory estimates checked before a user-sized allocation;
- :mod:`.jsondoc`: JSON files: encodings, typed fields (shared by the file kinds below);
- :mod:`.snapshot`, :mod:`.plan`, :mod:`.journal`, :mod:`.local_state`, :mod:`.consumer_input`: one per file kind;
- :mod:`.samples`: sample files (Parquet footers; JSON-lines records skipped, by reason);
- :mod:`.spark`: Spark settings, before a JVM starts.
"""
