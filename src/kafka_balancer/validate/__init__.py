"""Validation layers, one per input kind: pure functions returning typed values or raising InputError that
names the flag, file or field and the value (docs/errors.md).

- :mod:`.values`: command-line values (bootstrap lists, durations, timeouts, seeds, sizes, broker ids, ...);
- :mod:`.resources`: memory estimates checked before a user-sized allocation.
"""
