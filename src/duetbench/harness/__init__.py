"""Turning harness outputs into iterations: parsers, the hook iteration log, and merging the two.

Pure parsing: nothing here launches a process or computes a statistic.
"""
from .iteration_log import IterationLog, read_iteration_log
from .merge import attach_log
from .model import Iteration, LogLine, ParseResult, ParserInput
from .registry import Parser, get_parser, parse, parser_names, validate_parser_options

__all__ = [
    "Iteration", "IterationLog", "LogLine", "ParseResult", "Parser", "ParserInput", "attach_log", "get_parser",
    "parse", "parser_names", "read_iteration_log", "validate_parser_options",
]
