"""Installed into the schemathesis venv (test/schemathesis/venv.ts).

Some CPython 3.11 releases (Debian's and this machine's among them) raise
SystemError "AST constructor recursion depth mismatch" from ast.parse after
the recursion limit changed (CPython gh-106905), and Hypothesis changes it.
Hypothesis parses source files only to describe lambdas in reprs and
treats a SyntaxError there as "unknown", so the error is turned into one
instead of ending the run.
"""
import sys

if sys.version_info[:2] == (3, 11):
    import ast

    _parse = ast.parse

    def _parse_or_syntax_error(*args, **kwargs):
        try:
            return _parse(*args, **kwargs)
        except SystemError as e:
            raise SyntaxError(str(e)) from e

    ast.parse = _parse_or_syntax_error
